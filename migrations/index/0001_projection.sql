-- The index plane: a disposable projection of the corpus (rebuildable from git alone).
-- DuckDB has no cascades, partial indexes or triggers: children are kept in step by the projection
-- code, and the active-hash uniqueness guard is a maintained nullable column with a UNIQUE index.

CREATE SEQUENCE doc_ids START 1;

CREATE TABLE files (
    doc_id          INTEGER NOT NULL UNIQUE,
    path            VARCHAR PRIMARY KEY,
    blob_sha        VARCHAR NOT NULL,
    content_hash    VARCHAR NOT NULL,
    memory_type     VARCHAR NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural',
                        'agent_insight', 'user_preference', 'error_pattern', 'verdict', 'precedent',
                        'arc', 'task')),
    title           VARCHAR NOT NULL,
    gist            VARCHAR NOT NULL,
    body_text       VARCHAR NOT NULL,
    fts_text        VARCHAR NOT NULL,
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
    active_hash     VARCHAR UNIQUE
);

-- Child rows are deduplicated by the projection; no keys here, because DuckDB's ART indexes make
-- bulk loads several times slower and these tables are only ever scanned.
CREATE TABLE file_tags (path VARCHAR NOT NULL, tag VARCHAR NOT NULL);
CREATE TABLE file_entities (path VARCHAR NOT NULL, entity_type VARCHAR NOT NULL, entity_name VARCHAR NOT NULL);
CREATE TABLE file_facets (path VARCHAR NOT NULL, name VARCHAR NOT NULL, value VARCHAR NOT NULL, numeric_value DOUBLE);
CREATE TABLE file_citations (path VARCHAR NOT NULL, text VARCHAR NOT NULL, href VARCHAR);

CREATE TABLE edges (
    src_path   VARCHAR NOT NULL,
    rel        VARCHAR NOT NULL,
    dst_path   VARCHAR NOT NULL,
    edge_class VARCHAR NOT NULL CHECK (edge_class IN ('memory', 'person', 'provenance', 'task')),
    derived    BOOLEAN NOT NULL DEFAULT false,
    CHECK (src_path <> dst_path)
);

-- Owned BM25: terms and postings written by the projection, scored in SQL.
CREATE TABLE terms (term_id INTEGER PRIMARY KEY, term VARCHAR NOT NULL UNIQUE);
CREATE TABLE postings (term_id INTEGER NOT NULL, doc_id INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL);

CREATE TABLE index_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    head_sha    VARCHAR,                          -- NULL: no complete pass yet (rebuild interrupted)
    embed_model VARCHAR,
    embed_dim   INTEGER,
    rebuilt_at  VARCHAR,
    updated_at  VARCHAR,
    dirty_paths VARCHAR[] NOT NULL DEFAULT []     -- paths last projected from the working tree
);
INSERT INTO index_state (id, head_sha) VALUES (1, NULL);
