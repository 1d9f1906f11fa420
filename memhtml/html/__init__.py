"""The memory file format: parse, validate, serialize, hash and edit memory HTML files (no I/O)."""
