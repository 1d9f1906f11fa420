-- `files` keeps its long texts and its unique keys uncompressed. Choosing a compression for them and
-- applying it is most of what a checkpoint of the table costs (FSST and dictionary analysis of every
-- text): at 10k memories, 76-98 ms with them compressed against 28-40 ms without. That checkpoint ends
-- every rebuild and every few updates (`LOG_CHECKPOINT_BYTES`).
-- The table takes 10.5 MB at 10k memories instead of 5.9 MB. Searches read the same rows as before and
-- were no slower at 10k or 100k.
-- The rows are copied, so no rebuild follows; the keys' indexes are built again from them.
CREATE TABLE files_stored_plain (
    doc_id          INTEGER NOT NULL,
    path            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    blob_sha        VARCHAR USING COMPRESSION uncompressed NOT NULL,
    content_hash    VARCHAR USING COMPRESSION uncompressed NOT NULL,
    memory_type     VARCHAR NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural',
                        'agent_insight', 'user_preference', 'error_pattern', 'verdict', 'precedent',
                        'arc', 'task')),
    title           VARCHAR USING COMPRESSION uncompressed NOT NULL,
    gist            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    body_text       VARCHAR USING COMPRESSION uncompressed NOT NULL,
    disclosure_text VARCHAR USING COMPRESSION uncompressed NOT NULL,
    -- the tokenizer's primary tokens, space-padded, for phrases
    token_text      VARCHAR USING COMPRESSION uncompressed NOT NULL,
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
    active_hash     VARCHAR USING COMPRESSION uncompressed
);
INSERT INTO files_stored_plain (doc_id, path, blob_sha, content_hash, memory_type, title, gist, body_text, disclosure_text, token_text, para, workspace, confidence, importance, archived, origin_path, word_count, doc_len, created_at, updated_at, event_at, archived_at, valid_from, valid_until, superseded_by, reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, task_status, due_at, frame_key, indexed_at, active_hash)
SELECT doc_id, path, blob_sha, content_hash, memory_type, title, gist, body_text, disclosure_text, token_text, para, workspace, confidence, importance, archived, origin_path, word_count, doc_len, created_at, updated_at, event_at, archived_at, valid_from, valid_until, superseded_by, reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, task_status, due_at, frame_key, indexed_at, active_hash FROM files;
DROP TABLE files;
ALTER TABLE files_stored_plain RENAME TO files;
CREATE UNIQUE INDEX files_path ON files (path);
CREATE UNIQUE INDEX files_doc_id ON files (doc_id);
CREATE UNIQUE INDEX files_active_hash ON files (active_hash);
