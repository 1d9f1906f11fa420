-- Vectors of the embedding lane, keyed by content: a chunk is (content_hash, ordinal), so a rename,
-- an archive move or a head-only edit never re-embeds, and a rebuild keeps every vector whose chunk
-- survives. One vector space per index, recorded in index_state.embed_model / embed_dim; a vector
-- of another space is never stored beside these (a switch re-embeds everything).
CREATE TABLE chunk_vectors (
    content_hash VARCHAR NOT NULL,
    ordinal      INTEGER NOT NULL,
    char_count   INTEGER NOT NULL,
    vector       FLOAT[] NOT NULL
);
-- No key: only chunks without a vector are ever embedded (an anti-join), and DuckDB's ART indexes make
-- bulk loads several times slower on a table that is only ever scanned.
