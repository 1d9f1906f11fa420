"""The index: a disposable DuckDB projection of the corpus and retrieval over it."""
