"""Hostile records for the fuzz suite: path-like strings and edge slugs, secret-shaped text, and JSONL
`apply` streams (wrong types, unknown keys, huge and non-finite numbers, deep nesting, invalid UTF-8).
"""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import strategies as st

from memhtml.contracts.paths import slugify
from memhtml.contracts.vocabulary import MEMORY_TYPES, PARA_BUCKETS, TASK_STATUSES
from memhtml.operations.batchinput import OP_FIELDS
from tests.fuzz.markup_strategies import HOSTILE_VALUES, hostile_fragment, tag_soup
from tests.fuzz.strategies import ANY_CHARACTER, NASTY_CHARACTERS, any_text, decoded_bytes, nasty_text

# ---------------------------------------------------------------- paths

PATH_SEGMENTS: Final[tuple[str, ...]] = (
    *PARA_BUCKETS,
    "inbox",
    "db",
    "2026",
    "..",
    ".",
    "",
    ".git",
    ".GIT",
    ".hidden",
    "...",
    "index.html",
    "sitemap.xml",
    "x.html",
    "a b.html",
    "x.HTML",
    ".html",
    "x.html.",
    "%2e%2e",
    "%2F",
    "..\\x",
    "x\\..",
    "\x00",
    "\x1f",
    "\x7f",
    "\x85",
    "\u202e",
    "\u200b",
    "\ud800",
    "\udcff",
    "\uff0e\uff0e",
    "\u2215",
    " ",
    "\u3000",
    "a" * 256,
    "\u00e9" * 128,
    "~",
    "*",
    "?",
    "#",
    ":",
)
path_segment = st.one_of(
    st.sampled_from(PATH_SEGMENTS), st.text(ANY_CHARACTER, max_size=10), st.text("abc-./\\%2eE ", max_size=8)
)


@st.composite
def raw_paths(draw: st.DrawFn) -> str:
    """Path-like strings: bucket-rooted segment lists with stray slashes, whitespace and hostile segments."""
    segments = draw(st.lists(path_segment, max_size=6))
    if draw(st.booleans()):
        segments.insert(0, draw(st.sampled_from(PARA_BUCKETS)))
    if draw(st.booleans()) and segments:
        segments[-1] = segments[-1] + draw(st.sampled_from([".html", ".html/", ".html ", ".htm", ""]))
    separator = draw(st.sampled_from(["/", "/", "/", "//", "\\", "/./"]))
    path = separator.join(segments)
    prefix = draw(st.sampled_from(["", "", "/", "//", " ", "\t/", "./", "../", "~/", "C:\\"]))
    suffix = draw(st.sampled_from(["", "", "/", "//", " ", "\n", "\x00"]))
    return prefix + path + suffix


@st.composite
def plausible_paths(draw: st.DrawFn) -> str:
    """Paths a caller might well give (a bucket, folders, a `.html` name), with at most one hostile touch."""
    folders = draw(st.lists(st.text("abcdefghij0123456789-_ .\u00e9\u4e2d", min_size=1, max_size=12), max_size=3))
    name = draw(st.text("abcdefghij0123456789-_ .\u00e9", min_size=1, max_size=20)) + ".html"
    segments = [draw(st.sampled_from(PARA_BUCKETS)), *folders, name]
    if draw(st.booleans()):
        segments.insert(draw(st.integers(0, len(segments))), draw(path_segment))
    prefix = draw(st.sampled_from(["", "", "/", "//", " "]))
    return prefix + "/".join(segments) + draw(st.sampled_from(["", "", "/", " "]))


path_inputs = st.one_of(raw_paths(), plausible_paths(), plausible_paths(), any_text)


def _edge_slug(length: int, tail: int, filler: str) -> str:
    body = (filler * length)[: max(1, length - len(str(tail)) - 1)]
    return slugify(f"{body}-{tail}")


# Slugs at the 80-character budget with a numeric tail, where an ordinal suffix can rebuild the slug.
edge_slugs = st.builds(_edge_slug, st.integers(70, 82), st.integers(1, 1000), st.sampled_from(["a", "ab-", "x1-", "0"]))

# ---------------------------------------------------------------- secrets

_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _token(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


secret_shapes = st.one_of(
    _token(_ALNUM, 36).map("ghp_".__add__),
    _token("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16).map("AKIA".__add__),
    _token(_ALNUM + "-", 24).map("xoxb-".__add__),
    _token(_ALNUM + "_-", 22).map("glpat-".__add__),
    _token(_ALNUM + "_-", 35).map("AIza".__add__),
    _token(_ALNUM, 24).map("sk_live_".__add__),
    st.tuples(_token(_ALNUM + "_-", 16), _token(_ALNUM + "_-", 16)).map(lambda parts: f"eyJ{parts[0]}.{parts[1]}.sig"),
    _token(_ALNUM + "/+", 40).map("aws_secret_access_key = ".__add__),
    _token(_ALNUM, 20).map(lambda body: f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"),
    _token(_ALNUM + "!@", 14).map("password=".__add__),
    _token(_ALNUM, 16).map(lambda body: f"https://user:{body}@host.example/"),
    _token(_ALNUM + "._~+/-", 20).map("Bearer ".__add__),
    _token(_ALNUM, 16).map(lambda body: f'"apiKey": "{body}"'),
)
_SECRET_GLUE: Final[tuple[str, ...]] = (
    " ",
    "",
    "\n",
    "://",
    "@",
    "=",
    ":",
    '"',
    "'",
    "x://",
    "a://u:",
    "token=",
    "<",
    ">",
    "\u200b",
    "\u3000",
    "[",
    "]",
)
secret_text = st.lists(
    st.one_of(
        secret_shapes,
        st.sampled_from(_SECRET_GLUE),
        st.sampled_from(NASTY_CHARACTERS),
        st.text(ANY_CHARACTER, max_size=6),
    ),
    max_size=8,
).map("".join)

# ---------------------------------------------------------------- JSONL apply streams

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    st.text(ANY_CHARACTER, max_size=20),
    st.sampled_from(HOSTILE_VALUES),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(ANY_CHARACTER, max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
_OP_TEXT_VALUES = st.one_of(
    st.sampled_from(["A claim.", "The pool ceiling is 64. Measured in staging.", "x", " ", "", "```\ncode\n```"]),
    nasty_text,
    hostile_fragment,
    secret_text,
)


_INSTANTS = st.sampled_from(["2026-07-01", "2026-07-01T12:00:00Z", "2026-02-30", "2026-07-01T25:00:00Z", "tomorrow"])
# For each known field, values of its own JSON type (hostile inside that type), so ops get past the shape
# check and reach the vocabulary checks, the notary and the renderer.
_TYPED_VALUES: Final[dict[str, st.SearchStrategy[Any]]] = {
    "title": st.one_of(st.just("Pool ceiling"), nasty_text, secret_text),
    "type": st.one_of(st.sampled_from(MEMORY_TYPES), st.sampled_from(HOSTILE_VALUES), secret_shapes),
    "body": _OP_TEXT_VALUES,
    "article_html": st.one_of(hostile_fragment, st.just("<p><mark>A claim.</mark></p>"), _OP_TEXT_VALUES),
    "path": raw_paths(),
    "workspace": st.one_of(st.sampled_from(["checkout-api", "../x", ".git", ""]), nasty_text),
    "status": st.one_of(st.sampled_from(TASK_STATUSES), st.sampled_from(HOSTILE_VALUES), secret_shapes),
    "due": st.one_of(_INSTANTS, secret_shapes),
    "event_at": st.one_of(_INSTANTS, secret_shapes),
    "importance": st.one_of(st.integers(-5, 15), st.floats(), st.sampled_from(HOSTILE_VALUES)),
    "confidence": st.one_of(st.floats(), st.integers(-2, 2), st.sampled_from(HOSTILE_VALUES)),
}


@st.composite
def op_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `write` op, then some fields set to hostile values of their own type, dropped, retyped to
    any JSON value, or added (unknown keys, secret-shaped keys)."""
    op: dict[str, Any] = {
        "op": "write",
        "title": draw(st.sampled_from(["Pool ceiling", "Rotate the deploy key", "x"])),
        "type": draw(st.sampled_from(MEMORY_TYPES)),
        draw(st.sampled_from(["body", "article_html"])): draw(_TYPED_VALUES["article_html"]),
    }
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["typed", "typed", "typed", "drop", "retype", "unknown"]))
        if action == "drop" and len(op) > 1:
            del op[draw(st.sampled_from(sorted(op)))]
        elif action == "retype":
            op[draw(st.sampled_from(OP_FIELDS))] = draw(json_values)
        elif action == "unknown":
            op[draw(st.one_of(st.text(ANY_CHARACTER, max_size=8), secret_shapes))] = draw(json_scalars)
        else:
            key = draw(st.sampled_from(OP_FIELDS[1:]))  # `op` has one value; retyping covers the rest
            if key in ("tag", "tags", "entity", "entities"):
                texts = st.one_of(st.sampled_from(["db", "service:db", "x:", ":x", ""]), nasty_text, secret_text)
                op[key] = draw(st.one_of(texts, st.lists(texts, max_size=3)))
            elif key in ("strict_path", "redact", "strip_invisible"):
                op[key] = draw(st.booleans())
            else:
                op[key] = draw(_TYPED_VALUES.get(key, _OP_TEXT_VALUES))
    return op


# Raw JSON spellings `json.dumps` never writes: huge or odd numbers, deep nesting, duplicate keys.
RAW_NUMBERS: Final[tuple[str, ...]] = (
    "1" + "0" * 400,
    "-" + "9" * 400,
    "1" * 5000,
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "7.0",
    "7.5",
    "1E1",
    "0.9999999999999999999999",
    "01",
    "1.",
    ".5",
    "+1",
    "0x7",
)


def _deep_json(depth: int, opener: str) -> str:
    closer = "]" if opener == "[" else "}"
    inner = opener + '"a":' if opener == "{" else opener
    return inner * depth + "1" + closer * depth


raw_op_lines = st.one_of(
    st.builds(
        lambda key, number: (
            '{"op":"write","title":"t","type":"semantic","body":"A claim.","' + key + '":' + number + "}"
        ),
        st.sampled_from(["importance", "confidence", "title", "tags", "redact", "unknown"]),
        st.sampled_from(RAW_NUMBERS),
    ),
    st.builds(
        lambda depth, opener, key: (
            '{"op":"write","title":"t","type":"semantic","body":"A claim.","'
            + key
            + '":'
            + _deep_json(depth, opener)
            + "}"
        ),
        st.integers(1, 3000),
        st.sampled_from(["[", "{"]),
        st.sampled_from(["tags", "importance", "unknown", "body"]),
    ),
    st.builds(lambda depth: "[" * depth, st.integers(1, 3000)),
    st.just('{"op":"write","op":"write","title":"t","title":7,"type":"semantic","body":"A claim."}'),
    st.just('{"op":"write","title":"t","type":"semantic","body":"A claim.","title":null}'),
    st.just('{"op":"write","title":"\\ud800","type":"semantic","body":"A claim."}'),
    st.just('{"op":"write","title":"t","type":"semantic","body":"\\udcff\\u0000\\u202e."}'),
    st.just("\ufeff" + '{"op":"write","title":"t","type":"semantic","body":"A claim."}'),
)


def _encoded(value: object, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)


op_lines = st.one_of(
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, json_values, st.booleans()),
    raw_op_lines,
    any_text.filter(lambda text: "\n" not in text),
    tag_soup,
)


@st.composite
def apply_streams(draw: st.DrawFn) -> str:
    """One to five lines (some blank, some mutated after encoding), joined as a stream."""
    lines = draw(
        st.lists(st.one_of(op_lines, st.sampled_from(["", " ", "\t", "\r", "\u3000", "\x1c"])), min_size=1, max_size=5)
    )
    if draw(st.booleans()):
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        at = draw(st.integers(0, len(line)))
        lines[index] = (
            line[:at] + draw(st.one_of(st.sampled_from(NASTY_CHARACTERS), decoded_bytes, st.just(""))) + line[at:]
        )
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)
