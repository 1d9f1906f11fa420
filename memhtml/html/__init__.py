"""The memory file format: parse, validate, serialize, hash and edit memory HTML files (no I/O).

`parser` is the only door to the HTML5 parser and yields the neutral `tree`; `serialize`, `hashing`,
`extract`, `document`, `validate`, `template`/`prose` and `headedit` work on that tree or on text.
"""
