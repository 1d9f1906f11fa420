"""memhtml: an agent's long-term memory kept as a git repository of semantic HTML5 files."""

__version__ = "0.1.0"
