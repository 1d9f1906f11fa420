-- The tokenizer now also splits a word where letters meet digits (`python3` gives `python` and `3`,
-- `rtx4090` gives `rtx` and `4090`) and adds the digit groups glued to a name (`python3.11` gives
-- `3.11`, `v5.8.4` gives `5.8.4`). The postings of an index built before hold none of those terms, so
-- the index is marked as never built: the next pass rebuilds it from git (the vectors, keyed by text,
-- are kept), and until then it answers as before.
UPDATE index_state SET rebuilt_at = NULL;
