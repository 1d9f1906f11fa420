-- `files` and `terms` keep their keys as unique indexes instead of constraints, so that a rebuild loads
-- the emptied tables without them and builds each index once, from all its keys, at the end: inserting
-- keys one batch at a time cost a 10k-memory rebuild ≈0.5G instructions of DuckDB's ART code, building
-- them at the end ≈0.2G. `files` also loses `fts_text` (title, gist and body joined): its terms are in
-- the postings, and no statement read it.
-- Both tables are created empty: the next pass rebuilds the index from git (an index without a
-- watermark commit is rebuilt; the vectors, keyed by text, are kept).
DROP TABLE files;
CREATE TABLE files (
    doc_id          INTEGER NOT NULL,
    path            VARCHAR NOT NULL,
    blob_sha        VARCHAR NOT NULL,
    content_hash    VARCHAR NOT NULL,
    memory_type     VARCHAR NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural',
                        'agent_insight', 'user_preference', 'error_pattern', 'verdict', 'precedent',
                        'arc', 'task')),
    title           VARCHAR NOT NULL,
    gist            VARCHAR NOT NULL,
    body_text       VARCHAR NOT NULL,
    disclosure_text VARCHAR NOT NULL,
    token_text      VARCHAR NOT NULL,   -- the tokenizer's primary tokens, space-padded, for phrases
    para            VARCHAR NOT NULL CHECK (para IN ('projects', 'areas', 'resources', 'archive')),
    workspace       VARCHAR,
    confidence      DOUBLE CHECK (confidence BETWEEN 0 AND 1),      -- NULL: not stated
    importance      INTEGER CHECK (importance BETWEEN 1 AND 10),    -- NULL: not stated
    archived        BOOLEAN NOT NULL,   -- from the path bucket, never from memhtml-status
    origin_path     VARCHAR,
    word_count      INTEGER NOT NULL,
    doc_len         INTEGER NOT NULL,   -- token count (BM25 length)
    created_at      VARCHAR NOT NULL,
    updated_at      VARCHAR NOT NULL,
    event_at        VARCHAR,
    archived_at     VARCHAR,
    valid_from      VARCHAR,
    valid_until     VARCHAR,
    superseded_by   VARCHAR,
    reprieves       INTEGER,
    needs_revision  BOOLEAN,
    author          VARCHAR,
    session_id      VARCHAR,
    prompt_id       VARCHAR,
    turn_uuid       VARCHAR,
    task_status     VARCHAR CHECK (task_status IN ('todo', 'doing', 'blocked', 'done')),
    due_at          VARCHAR,
    frame_key       VARCHAR,
    indexed_at      VARCHAR NOT NULL,
    -- content_hash when active and not a task, else NULL: the partial unique index DuckDB lacks.
    active_hash     VARCHAR
);
CREATE UNIQUE INDEX files_path ON files (path);
CREATE UNIQUE INDEX files_doc_id ON files (doc_id);
CREATE UNIQUE INDEX files_active_hash ON files (active_hash);

DROP TABLE terms;
CREATE TABLE terms (term_id INTEGER NOT NULL, term VARCHAR NOT NULL);
CREATE UNIQUE INDEX terms_term_id ON terms (term_id);
CREATE UNIQUE INDEX terms_term ON terms (term);

DELETE FROM postings;
DELETE FROM file_tags;
DELETE FROM file_entities;
DELETE FROM file_facets;
DELETE FROM file_citations;
DELETE FROM edges;
DELETE FROM duplicate_files;
UPDATE index_state SET head_sha = NULL, dirty_paths = [];
