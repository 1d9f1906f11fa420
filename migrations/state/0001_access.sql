-- The state plane: counters git cannot rebuild (durable copy: the committed .memhtml/state/access.jsonl).

CREATE TABLE access (
    path                VARCHAR PRIMARY KEY,
    access_count        INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    reinforcement_count INTEGER NOT NULL DEFAULT 0 CHECK (reinforcement_count >= 0),
    outcome_score       DOUBLE NOT NULL DEFAULT 0 CHECK (outcome_score BETWEEN -1 AND 1),
    last_accessed_at    VARCHAR,
    last_reinforced_at  VARCHAR,
    updated_at          VARCHAR NOT NULL
);

CREATE TABLE session_links (
    path       VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    prompt_id  VARCHAR,
    turn_uuid  VARCHAR,
    link_kind  VARCHAR NOT NULL CHECK (link_kind IN ('wrote', 'read', 'corrected', 'reinforced')),
    linked_at  VARCHAR NOT NULL,
    PRIMARY KEY (path, session_id, link_kind, linked_at)
);
