"""Path algebra of the corpus: normalization, the memory-path predicate, slugs, filenames and archive mapping.

A memory's repo-relative path is its only identity, so these functions are pure and total: the same
inputs always give the same path, and `original_path_for` is a left inverse of `archive_path_for`.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from memhtml.contracts.errors import UsageError
from memhtml.contracts.vocabulary import GENERATED_BASENAMES, PARA_BUCKETS

SLUG_MAX: Final[int] = 80
MAX_PATH_CHARS: Final[int] = 1024
MAX_SEGMENT_BYTES: Final[int] = 255  # what file systems accept for one name
MAX_COLLISION_ORDINAL: Final[int] = 1000
_NON_SLUG: Final = re.compile(r"[^a-z0-9]+")
_CONTROL_CHARACTER: Final = re.compile(r"[\x00-\x1f\x7f]")
# A raw string: `re` reads the escapes, since mypyc cannot compile a lone surrogate in a literal.
_LONE_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# C1 controls, zero-width and bidi-control characters, the BOM and the soft hyphen: a new name carrying
# one displays as another (`resources/\u202egnp.html` shows as `lmth.png`). Names already in a corpus
# are judged by `path_problem` and stay readable.
_HIDDEN_IN_A_NAME: Final = re.compile("[\x80-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
# A percent escape of a dot, a separator or a control character: decoded by any URL-aware reader
# (a resource URI, a published page), it would climb out of the directory it seems to sit in.
_ENCODED_STEP: Final = re.compile(r"%(?:2[eEfF]|5[cC]|[01][0-9a-fA-F]|7[fF])")
# Any year `archive_path_for` can write (it formats with `:04d`) and any rest, line breaks included, so
# `original_path_for` undoes it for every input, not only for confined paths.
_ARCHIVED: Final = re.compile(r"^archive/(\d{4,}|-\d{3,})/(.*)$", re.DOTALL)
# A path every rule of `path_problem` accepts at a glance: a bucket, then segments of ASCII letters,
# digits, `_`, `-` and `.` that neither start with a dot nor run past the segment limit, ending in
# `.html`; the shape of nearly every corpus path. Listing a large tree checks each path this way an
# order of magnitude faster than through the rules.
_PLAIN_PATH: Final = re.compile(
    rf"(?:{'|'.join(PARA_BUCKETS)})(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]{{0,{MAX_SEGMENT_BYTES - 1}}})*"
    rf"/[A-Za-z0-9_-][A-Za-z0-9_.-]{{0,{MAX_SEGMENT_BYTES - 6}}}\.html"
)
# Stems that would collide with generated artifacts (`index.html` is overwritten by publishing).
RESERVED_STEMS: Final[frozenset[str]] = frozenset({"index"})


def normalize_path(path: str) -> str:
    """Strip leading slashes, collapse `//` and drop one trailing slash, as the original does."""
    collapsed = re.sub(r"/{2,}", "/", path.strip().lstrip("/"))
    return collapsed[:-1] if collapsed.endswith("/") else collapsed


def page_cursor(cursor: str | None) -> str | None:
    """The path a page of a path-ordered listing continues after, or None for the first page.

    A cursor is a memory path, which may be written from the store root (`/areas/x.html`); an empty or
    blank cursor is the first page, so a paging loop can pass the last `nextCursor` from its first round.
    """
    path = (cursor or "").lstrip("/")
    return path if path.strip() else None


def path_problem(path: str) -> str | None:
    """Why `path` (already normalized) is not a usable memory path, or None when it is usable."""
    if not path:
        return "it is empty"
    segments = path.split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        return "it has an empty, `.` or `..` segment"
    if _CONTROL_CHARACTER.search(path):
        return "it contains a control character"
    if _LONE_SURROGATE.search(path):
        # A name that was not UTF-8 (a door decoded its bytes with surrogateescape): git and the index
        # could not store it as text.
        return "it is not valid UTF-8 text"
    # `.git` (in any case) is git's own; git silently refuses to track paths through it.
    if any(segment.startswith(".") for segment in segments):
        return "it has a hidden segment (one starting with `.`)"
    if len(path) > MAX_PATH_CHARS or any(len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES for segment in segments):
        return f"it is longer than {MAX_PATH_CHARS} characters or has a segment over {MAX_SEGMENT_BYTES} bytes"
    if segments[0] not in PARA_BUCKETS:
        return "it is not rooted in a PARA bucket (projects, areas, resources, archive)"
    if len(segments) < 2:
        return "it names a bucket, not a file inside one"
    if not path.endswith(".html"):
        return "it does not end in .html"
    if segments[-1] in GENERATED_BASENAMES:
        return f"`{segments[-1]}` is reserved for generated artifacts"
    return None


def is_memory_path(path: str) -> bool:
    """True for a repo-relative path that can hold a memory (an indexable `.html` inside a bucket)."""
    if len(path) <= MAX_PATH_CHARS and _PLAIN_PATH.fullmatch(path):
        return path.rpartition("/")[2] not in GENERATED_BASENAMES
    return path_problem(path) is None


def is_archived_path(path: str) -> bool:
    """Archived-ness is derived from the bucket, never from the status meta."""
    return path.startswith("archive/")


def archive_path_for(path: str, year: int) -> str:
    """Where `path` goes when archived in `year` (UTC year of the operation)."""
    return f"archive/{year:04d}/{normalize_path(path)}"


def original_path_for(path: str) -> str:
    """Strip exactly one `archive/<YYYY>/` prefix; paths outside the archive are returned unchanged."""
    match = _ARCHIVED.match(path)
    return match.group(2) if match else path


def slugify(text: str) -> str:
    """NFKD, drop combining marks, lowercase, non-`[a-z0-9]` runs to `-`, trimmed, at most 80 characters."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    slug = _NON_SLUG.sub("-", stripped.lower()).strip("-")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rstrip("-")
    return slug or "untitled"


def slug_with_ordinal(slug: str, ordinal: int) -> str:
    """The slug for collision `ordinal` (1 = bare); the suffix stays inside the 80-character budget."""
    if ordinal == 1:
        return slug
    suffix = f"-{ordinal}"
    cut = SLUG_MAX - len(suffix)
    head = slug[:cut].rstrip("-")
    # A slug whose tail already is the suffix (`…-12` for ordinal 12) would rebuild itself, the name of
    # ordinal 1: cut shorter until it differs.
    while head and head + suffix == slug:
        head = head[:-1].rstrip("-")
    return (head or "untitled") + suffix


def memory_filename(slug: str, ordinal: int, date_prefix: str | None) -> str:
    """`<slug>.html`, with the collision suffix and, for episodic memories, a `YYYYMMDD-` prefix."""
    stem = slug_with_ordinal(slug, ordinal)
    if ordinal == 1 and stem in RESERVED_STEMS and date_prefix is None:
        stem = slug_with_ordinal(slug, 2)
    return f"{date_prefix}-{stem}.html" if date_prefix else f"{stem}.html"


def named_path_problem(raw: str) -> str | None:
    """Why `raw`, a path a caller named, cannot name a memory; None when its normalized form can.

    Stricter than `path_problem`, which also judges the names already in a corpus: a named path may
    not carry a backslash (another system's separator), a percent-encoded dot or separator, or a
    character that hides or reorders what it shows, and a leading `/` names the store's root (as a
    memory's hrefs do), never the file system.
    """
    if "\0" in raw:
        return "it contains a NUL byte"
    if "\\" in raw:
        return "it contains a backslash; segments are separated by `/` only"
    if _HIDDEN_IN_A_NAME.search(raw):
        return (
            "it contains a C1 control, invisible or bidi-control character, which makes the name read "
            "differently from what it is"
        )
    if _ENCODED_STEP.search(raw):
        return (
            "it contains a percent-encoded dot, separator or control character (`%2e`, `%2f`, `%5c`, …); "
            "name the path as it is stored, not URL-encoded"
        )
    problem = path_problem(normalize_path(raw))
    if problem is not None and raw.strip().startswith("/") and normalize_path(raw).split("/")[0] not in PARA_BUCKETS:
        problem += (
            "; a leading `/` names the store's root, not the file system: name the memory relative to the "
            "store (`areas/inbox/<name>.html`)"
        )
    return problem


def confine_memory_path(raw: str, command: str) -> str:
    """The normalized corpus path named by `raw`, refused (exit 2) when it cannot name a memory."""
    problem = named_path_problem(raw)
    if problem is not None:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"{command}: `{printable(raw)}` is not a memory path: {problem}",
            [*_relative_hints(raw), "memhtml list", f"memhtml help {command}"],
        )
    return normalize_path(raw)


def printable(text: str) -> str:
    """`text` with control characters shown as `\\xNN` escapes, so an error message cannot carry them."""
    return _CONTROL_CHARACTER.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def _relative_hints(raw: str) -> list[str]:
    """For an absolute path that reaches into a store, `resolve` of each repo-relative reading of it
    (from each PARA bucket it passes through): a guess from the text alone, since the store's own
    location is not known here and may itself contain a bucket's name."""
    if not raw.strip().startswith("/"):
        return []
    segments = normalize_path(raw).split("/")
    candidates = ["/".join(segments[index:]) for index, segment in enumerate(segments) if segment in PARA_BUCKETS]
    return [f"memhtml resolve {candidate}" for candidate in candidates if named_path_problem(candidate) is None]
