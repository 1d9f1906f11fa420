"""Building a commit's tree by rewriting only the directories along the changed paths.

A commit of a few files needs a new tree for each directory above them and nothing else. Reading all
of HEAD into a private index, updating it and writing every tree back (`read-tree`, `update-index`,
`write-tree`) costs time in proportion to the whole store: in a large store, most of a write's cost.
Here the directories along the changed paths are read in one `cat-file --batch`, edited in memory and
written back deepest first with one `hash-object` each, so a write costs what its directories hold,
however large the store.

Anything unusual (a file where a directory must be, a directory where a file is written, many
directories at once) answers None, and the caller builds the tree the whole-index way instead. A
directory whose object is missing from the repository is never read as an empty one: the repository is
corrupt, and the write is refused before its commit (`CorruptRepository`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from memhtml.store.gitcmd import git_text, missing_object, run_git

# Beyond this many directories to rewrite, one `hash-object` each costs more than one whole-index pass.
MAX_SPLICED_DIRECTORIES: Final[int] = 24
TREE_MODE: Final[bytes] = b"40000"
# Segments git's index never holds; a path with one is left to `update-index` to refuse or ignore.
_REFUSED_SEGMENTS: Final[frozenset[bytes]] = frozenset({b"", b".", b"..", b".git"})
# The modes git writes; a rewritten directory holding another (an old `100664`) would be normalized
# by the whole-index way, so it is left to that way.
_CANONICAL_MODES: Final[frozenset[bytes]] = frozenset({b"100644", b"100755", b"120000", TREE_MODE, b"160000"})
# The empty tree's ids: the whole-index way drops an empty subdirectory, so one is left to it.
_EMPTY_TREES: Final[frozenset[bytes]] = frozenset(
    {b"4b825dc642cb6eb9a060e54bf8d69288fbee4904", b"6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}
)


def spliced_tree(root: Path, parent_tree: str, records: bytes) -> str | None:
    """The id of `parent_tree` with `records` (`update-index --index-info` lines, NUL-terminated)
    applied, or None when this way does not apply and the whole-index way must build it."""
    changes = _parse_records(records)
    if changes is None:
        return None
    directories = sorted({parent for _, _, path in changes for parent in _ancestors(path)}, key=_depth, reverse=True)
    if len(directories) > MAX_SPLICED_DIRECTORIES:
        return None
    trees = _read_trees(root, parent_tree, directories, len(parent_tree) // 2)
    if trees is None:
        return None
    for mode, sha, path in changes:
        directory, _, name = path.rpartition(b"/")
        entries = trees[directory]
        current = entries.get(name)
        if current is not None and current[0] == TREE_MODE:
            return None  # a file written where a directory is
        if mode == b"0":
            entries.pop(name, None)
        else:
            entries[name] = (mode, sha)
    written = ""
    for directory in directories:  # deepest first: a parent lists its children's new ids
        entries = trees[directory]
        if not directory:
            written = _make_tree(root, entries)
            break
        parent, _, name = directory.rpartition(b"/")
        current = trees[parent].get(name)
        if current is not None and current[0] != TREE_MODE:
            return None  # a submodule where a directory must be
        if entries:
            trees[parent][name] = (TREE_MODE, _make_tree(root, entries).encode())
        else:
            trees[parent].pop(name, None)  # git keeps no empty directory
    return written


def _parse_records(records: bytes) -> list[tuple[bytes, bytes, bytes]] | None:
    """The (mode, id, path) of each record; None for any path git's index would refuse or read
    differently (an empty, `.`, `..` or `.git` segment; a line break or carriage return, which
    `cat-file --batch` would strip from a directory's name) and for no record at all."""
    changes = []
    for record in records.split(b"\0"):
        if not record:
            continue
        meta, tab, path = record.partition(b"\t")
        mode, _, sha = meta.partition(b" ")
        if not tab or b"\n" in path or b"\r" in path:
            return None
        if any(segment in _REFUSED_SEGMENTS for segment in path.split(b"/")):
            return None
        changes.append((mode, sha, path))
    return changes or None


def _ancestors(path: bytes) -> list[bytes]:
    parts = path.split(b"/")[:-1]
    return [b""] + [b"/".join(parts[: count + 1]) for count in range(len(parts))]


def _depth(directory: bytes) -> int:
    return directory.count(b"/") + 1 if directory else 0


Entries = dict[bytes, tuple[bytes, bytes]]


def _read_trees(root: Path, parent_tree: str, directories: list[bytes], id_bytes: int) -> dict[bytes, Entries] | None:
    """Each directory's entries in `parent_tree` (a directory it lacks: none); None if one is not a tree.

    `cat-file --batch` answers "missing" both for a path the tree does not hold and for an object the
    repository lacks; the two are told apart by the directory above, which lists a name it holds."""
    names = [parent_tree.encode() + (b":" + directory if directory else b"") for directory in directories]
    output = run_git(root, ["cat-file", "--batch"], stdin=b"".join(name + b"\n" for name in names)).stdout
    trees: dict[bytes, Entries] = {}
    absent: list[bytes] = []
    offset = 0
    for directory in directories:
        header_end = output.index(b"\n", offset)
        header = output[offset:header_end].split(b" ")
        offset = header_end + 1
        if header[-1] == b"missing":
            trees[directory] = {}
            absent.append(directory)
            continue
        if len(header) != 3 or header[1] != b"tree":
            return None  # a file (or a link) where a directory must be
        size = int(header[2])
        entries = _tree_entries(output[offset : offset + size], id_bytes)
        if any(mode not in _CANONICAL_MODES or sha in _EMPTY_TREES for mode, sha in entries.values()):
            return None
        trees[directory] = entries
        offset += size + 1
    for directory in absent:
        above, _, name = directory.rpartition(b"/")
        if not directory or name in trees.get(above, {}):
            shown = directory.decode("utf-8", "replace") or "the root directory"
            raise missing_object(root, f"the tree of {shown} in HEAD")
    return trees


def _tree_entries(raw: bytes, id_bytes: int) -> Entries:
    entries: Entries = {}
    position = 0
    while position < len(raw):
        space = raw.index(b" ", position)
        nul = raw.index(b"\0", space)
        mode, name = raw[position:space], raw[space + 1 : nul]
        entries[name] = (mode, raw[nul + 1 : nul + 1 + id_bytes].hex().encode())
        position = nul + 1 + id_bytes
    return entries


def _make_tree(root: Path, entries: Entries) -> str:
    """Store the tree object of `entries` and return its id. The object is serialized here and handed
    to `hash-object`, which refuses one that does not parse as a tree; `mktree` parsed and sorted a
    text listing, several times slower for a large directory."""
    # Git orders a tree's entries by name bytes, a directory's name as if it ended in "/".
    ordered = sorted(entries.items(), key=lambda entry: entry[0] + b"/" if entry[1][0] == TREE_MODE else entry[0])
    body = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(sha.decode("ascii")) for name, (mode, sha) in ordered)
    return git_text(root, ["hash-object", "-w", "-t", "tree", "--stdin"], stdin=body)
