"""The bytes `init` lays down: ignore rules, merge attributes and the memory-shaped README.

They match what the original writes, plus the ignore lines of our own database files, so a store
made by either implementation looks the same to the other.
"""

from __future__ import annotations

from typing import Final

GITKEEP_DIRECTORIES: Final[tuple[str, ...]] = (
    "projects",
    "areas",
    "resources",
    "archive",
    "areas/arcs",
    "resources/people",
    "areas/inbox",
    ".memhtml/state",
    ".memhtml/sleep",
)

GITIGNORE: Final[str] = (
    ".memhtml/index.db\n"
    ".memhtml/state.db\n"
    ".memhtml/index.db-*\n"
    ".memhtml/state.db-*\n"
    ".memhtml/index.duckdb\n"
    ".memhtml/state.duckdb\n"
    ".memhtml/index.duckdb.*\n"
    ".memhtml/state.duckdb.*\n"
)

GITATTRIBUTES: Final[str] = "index.html merge=ours\nsitemap.xml merge=ours\n*.html diff=html\n"

README_HTML: Final[str] = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Memory</title>
</head>
<body>
<article>
<p><mark>This repository is one agent's memory: one fact per file, as semantic HTML5.</mark>
Directories follow PARA — <code>projects/</code>, <code>areas/</code>, <code>resources/</code>,
<code>archive/</code>. Nothing is ever deleted; eviction moves a file to
<code>archive/&lt;YYYY&gt;/</code> with its original path mirrored beneath, so
<code>git log --follow</code> reads straight through.</p>
<p>The index under <code>.memhtml/</code> is derived and gitignored. This tree is the system of
record.</p>
</article>
</body>
</html>
"""
