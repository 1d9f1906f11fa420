"""The safety notary's scans: credentials shaped like secrets, invisible and bidirectional-control
characters, control characters and lone surrogates, and executable markup in caller-owned HTML.

Pure functions over one text at a time: each returns findings (what, where) and never decides what a
door does with them. NFKC folding is used to *see* through look-alikes (fullwidth `ｇｈｐ＿…`); no
function here rewrites text except `cleaned`, which applies the redactions and removals a caller
asked for.
"""

from __future__ import annotations

import html
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple


class Finding(NamedTuple):
    """One thing found in a text: `kind` names it (a secret kind, or `U+200B ZERO WIDTH SPACE`),
    [`start`, `end`) is its span in the text as given, `shown` what a message may print of it."""

    kind: str
    start: int
    end: int
    shown: str = ""


# ---------------------------------------------------------------- control characters

# C0 (but TAB, LF and CR), DEL, C1, and lone surrogates (text that was not valid UTF-8).
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def control_findings(text: str) -> list[Finding]:
    """NUL and other control characters, and lone surrogates: never storable text."""
    found = []
    for match in _CONTROL.finditer(text):
        code = ord(match.group())
        if code == 0:
            kind = "NUL U+0000"
        elif 0xD800 <= code <= 0xDFFF:
            kind = f"invalid UTF-8 (lone surrogate U+{code:04X})"
        else:
            kind = f"control character U+{code:04X}"
        found.append(Finding(kind, match.start(), match.end()))
    return found


# ---------------------------------------------------------------- invisible characters

# Unicode's format characters (category Cf; Unicode 15.1, a superset of what older Pythons know):
# zero-width space/joiners, word joiner, BOM, bidi embeddings, overrides and isolates, the invisible
# math operators, interlinear annotation, tag characters; plus the invisible fillers of other
# categories (combining grapheme joiner, Hangul fillers, Khmer inherent vowels).
FORMAT_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
FILLERS: Final[tuple[int, ...]] = (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
_VARIATION_SELECTORS: Final = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_ZWNJ, _ZWJ = "\u200c", "\u200d"


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in ranges)


_INVISIBLE_CLASS: Final = _char_class([*FORMAT_RANGES, *((code, code) for code in FILLERS)])
_INVISIBLE: Final = re.compile(f"[{_INVISIBLE_CLASS}]|(?<=[{_VARIATION_SELECTORS}])[{_VARIATION_SELECTORS}]+")


def invisible_findings(text: str) -> list[Finding]:
    """Invisible and bidi-control characters, one finding per character.

    Two exceptions keep ordinary text writable: a zero-width joiner or non-joiner between two
    non-ASCII letters, marks or symbols (it shapes Persian and Indic words and builds family emoji),
    where it cannot split an ASCII keyword, identifier, URL or secret; and one variation selector
    after its base character (the emoji presentation of a heart). A run of selectors after the first
    carries no glyph and is a known hiding channel, so it is a finding.
    """
    if text.isascii():
        return []
    found = []
    for match in _INVISIBLE.finditer(text):
        for offset, char in enumerate(match.group()):
            position = match.start() + offset
            if char in (_ZWJ, _ZWNJ) and _joins_visible(text, position):
                continue
            found.append(Finding(character_name(char), position, position + 1))
    return found


def _joins_visible(text: str, position: int) -> bool:
    if position == 0 or position + 1 >= len(text):
        return False
    before, after = text[position - 1], text[position + 1]
    return all(not char.isascii() and unicodedata.category(char)[0] in "LMS" for char in (before, after))


def character_name(char: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: a code point as a message names it."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}" if name else f"U+{ord(char):04X}"


def is_invisible(char: str) -> bool:
    return _INVISIBLE.fullmatch(char) is not None


# ---------------------------------------------------------------- secrets

REDACTION_MARKER: Final = "[REDACTED:{kind}]"
# Our own markers are never a secret, even where one would stand (`scheme://user:[REDACTED:…]@host`).
_MARKER: Final = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
# Cleaning can complete what it did not touch (a key whose boundary was the block now redacted, two
# variation selectors around a stripped character); a few rounds reach the fixed point.
MAX_CLEANING_ROUNDS: Final[int] = 4
# A value after a credential keyword counts as a secret when it is at least this long, mixes at least
# this many character classes, and carries at least this many bits of Shannon entropy per character.
# Random tokens of 12+ characters over base62/base64url pass with ≥ 99 % (measured: 99.2 % at 12,
# 100 % from 16; 32-digit hex 99.99 %); words, snake_case or UPPER_CASE placeholders, masks and
# env-var names have one class (`_`, `-` and `.` separate, they are no class) or too little
# entropy (`changeme` 2.75, `Password` 2.75). Values below the length are never secrets here
# (`hunter2`). Known misses, by design: lowercase passphrases and weak mixed words (`Passw0rd`, 2.75).
MIN_VALUE_LENGTH: Final[int] = 8
MIN_VALUE_CLASSES: Final[int] = 2
MIN_VALUE_ENTROPY: Final[float] = 3.0


class _Pattern(NamedTuple):
    kind: str
    # Literals one of which every match contains: a substring test (C speed) decides whether the
    # regex runs at all, and most texts contain none of them. A `gate` every cue contains is tested first.
    cues: tuple[str, ...]
    regex: re.Pattern[str]
    group: int = 0  # the group that is the secret (0: the whole match)
    shows_prefix: bool = True  # whether the first 4 characters are a public prefix a message may show
    checks_value: bool = False  # whether the value must also look random (entropy, classes, length)
    gate: str = ""


_B64URL = r"[A-Za-z0-9_-]"
_PATTERNS: Final[tuple[_Pattern, ...]] = (
    _Pattern(
        "private-key",
        ("PRIVATE KEY",),
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # A block cut short runs to the end of the text (or of the markup's text node).
            r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[^<]*)",
            re.DOTALL,
        ),
    ),
    _Pattern(
        "aws-access-key-id", ("AKIA", "ASIA"), re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
    ),
    _Pattern(
        "aws-secret-access-key",
        ("_access_key", "_ACCESS_KEY", "_Access_Key"),
        re.compile(r"(?i:aws_secret_access_key)[\"']?\s{0,3}[:=]\s{0,3}[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
        group=1,
        shows_prefix=False,
        gate="_",
    ),
    _Pattern(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_\w{22,255})"),
        gate="_",
    ),
    _Pattern("gitlab-token", ("glpat-",), re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}")),
    _Pattern(
        "slack-token",
        ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
        re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"),
        gate="xox",
    ),
    _Pattern(
        "slack-webhook", ("hooks.slack.com",), re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/\w+")
    ),
    _Pattern("jwt", ("eyJ",), re.compile(rf"(?<!{_B64URL})eyJ{_B64URL}{{10,}}\.{_B64URL}{{10,}}\.{_B64URL}*")),
    _Pattern("google-api-key", ("AIza",), re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    _Pattern("stripe-key", ("k_live_",), re.compile(r"(?<![A-Za-z0-9])[sr]k_live_[0-9A-Za-z]{16,}")),
    _Pattern(
        "url-password",
        ("://",),
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s/:@]{1,256}:([^\s/@]{1,256})@"),
        group=1,
        shows_prefix=False,
        checks_value=True,
    ),
    _Pattern(
        "bearer-token",
        ("earer ", "earer\t"),
        re.compile(r"(?<![A-Za-z0-9])[Bb]earer[ \t]+([A-Za-z0-9._~+/-]{8,}=*)"),
        group=1,
        shows_prefix=False,
        checks_value=True,
    ),
)
# `name = value`, `name: value`, `"name": "value"`: the name is checked for a credential keyword
# afterwards, the value stops at whitespace, quotes, markup and list punctuation.
_ASSIGNMENT: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?"
    r"([^\s\"'`<>,;&()\[\]{}]+)"
)
# Credential words (lower case), one of which `_ASSIGNMENT` needs inside a name followed by `:` or `=`.
_ASSIGNMENT_CUES: Final = ("pass", "pwd", "secret", "token", "apikey", "api_key", "api-key", "credential")
_CREDENTIAL_WORDS: Final = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey", "credential", "credentials"}
)
_NAME_PARTS: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def secret_findings(text: str) -> list[Finding]:
    """Every value in `text` shaped like a credential, in text order, spans never overlapping.

    Scanned in a folded view (NFKC, invisible characters removed), so fullwidth or zero-width-split
    tokens are found too; spans are mapped back to `text`.
    """
    view, positions = folded_view(text)
    markers = [match.span() for match in _MARKER.finditer(view)] if "[REDACTED:" in view else []
    spans: list[tuple[int, int, str, str]] = []
    for pattern in _cued(view):
        for match in pattern.regex.finditer(view):
            start, end = match.span(pattern.group)
            value = match.group(pattern.group)
            if pattern.checks_value and not looks_random(value):
                continue
            if any(marker_start <= start and end <= marker_end for marker_start, marker_end in markers):
                continue
            spans.append((start, end, pattern.kind, value[:4] if pattern.shows_prefix else ""))
    lowered = view.lower() if ("=" in view or ":" in view) else ""
    if any(cue in lowered for cue in _ASSIGNMENT_CUES):
        spans += [(start, end, "secret-value", "") for start, end in _assigned_values(view)]
    found: list[Finding] = []
    for start, end, kind, shown in sorted(spans, key=lambda span: (span[0], -span[1])):
        if found and start < found[-1].end:
            continue  # inside an earlier, longer finding (a JWT after `token=`)
        found.append(Finding(kind, start, end, shown))
    if positions is None:
        return found
    return [Finding(item.kind, positions[item.start], positions[item.end - 1] + 1, item.shown) for item in found]


def plainly_clear(text: str) -> bool:
    """Whether no scan of this module can find anything in `text`: ASCII, no control character, no
    secret cue. Exact, not a guess, and fast, so a caller can test many texts joined by newlines (no
    cue contains one) before screening them one by one."""
    if not text.isascii() or _CONTROL.search(text) or _cued(text):
        return False
    return not (("=" in text or ":" in text) and any(cue in text.lower() for cue in _ASSIGNMENT_CUES))


def _cued(view: str) -> list[_Pattern]:
    """The patterns one of whose cues `view` contains."""
    found = []
    for pattern in _PATTERNS:
        if pattern.gate and pattern.gate not in view:
            continue
        for cue in pattern.cues:
            if cue in view:
                found.append(pattern)
                break
    return found


def _assigned_values(view: str) -> Iterable[tuple[int, int]]:
    position = 0
    while (match := _ASSIGNMENT.search(view, position)) is not None:
        name, value = match.group(1), match.group(2)
        if not _names_a_credential(name):
            # The value may hold an assignment of its own (`https://host/login?password=…`,
            # `note:password=…`): look again from where it starts rather than past it.
            position = match.start(2)
            continue
        position = match.end(2)
        end = match.end(2)
        if end < len(view) and view[end] in "([":  # a call or a type (`getToken()`, `Optional[str]`)
            continue
        value = value.rstrip(".")
        if value[:1] in ("$", "%") or not looks_random(value):
            continue  # a reference to a variable, or a word
        yield match.start(2), match.start(2) + len(value)


def _names_a_credential(name: str) -> bool:
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if any(part in _CREDENTIAL_WORDS for part in parts):
        return True
    return any(first == "api" and second == "key" for first, second in itertools.pairwise(parts))


def looks_random(value: str) -> bool:
    """Long enough, mixing character classes, and dense enough in entropy to be a credential."""
    if len(value) < MIN_VALUE_LENGTH:
        return False
    return character_classes(value) >= MIN_VALUE_CLASSES and shannon_entropy(value) >= MIN_VALUE_ENTROPY


def character_classes(value: str) -> int:
    """How many of lower case, upper case, digits and other symbols occur (`_`, `-`, `.` count as none)."""
    lower = upper = digit = other = False
    for char in value:
        if char.islower():
            lower = True
        elif char.isupper():
            upper = True
        elif char.isdigit():
            digit = True
        elif char not in "_-.":
            other = True
    return lower + upper + digit + other


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(count / size * math.log2(count / size) for count in Counter(value).values())


def folded_view(text: str) -> tuple[str, list[int] | None]:
    """`text` as the scans see it: NFKC per character, invisible characters dropped; with, unless
    the view is `text` itself, the position in `text` of every view character (plus the end)."""
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _INVISIBLE.search(text)):
        return text, None
    pieces: list[str] = []
    positions: list[int] = []
    for index, char in enumerate(text):
        folded = char
        if not char.isascii():
            if is_invisible(char):
                continue
            folded = unicodedata.normalize("NFKC", char)
        pieces.append(folded)
        positions.extend([index] * len(folded))
    positions.append(len(text))
    return "".join(pieces), positions


def shown(finding: Finding) -> str:
    """How a message names a secret without echoing it: at most a public 4-character prefix, and its length."""
    length = finding.end - finding.start
    return f"`{finding.shown}…` {length} characters" if finding.shown else f"{length} characters"


# ---------------------------------------------------------------- cleaning


def cleaned_fully(text: str, *, redact: bool, strip_invisible: bool) -> tuple[str, list[Finding], list[Finding]]:
    """`text` cleaned until its scans find nothing more to clean (at most MAX_CLEANING_ROUNDS rounds), with
    every redaction and removal made on the way (spans of the round's text, for reporting kinds)."""
    redactions: list[Finding] = []
    removals: list[Finding] = []
    for _ in range(MAX_CLEANING_ROUNDS):
        secrets = secret_findings(text) if redact else []
        invisible = invisible_findings(text) if strip_invisible else []
        if not (secrets or invisible):
            break
        redactions += secrets
        removals += invisible
        text = cleaned(text, secrets, invisible)
    return text, redactions, removals


def cleaned(text: str, redactions: Sequence[Finding], removals: Sequence[Finding]) -> str:
    """`text` with each redaction's span replaced by its `[REDACTED:<kind>]` marker and each removal's
    span dropped (a removal inside a redaction goes with it)."""
    edits = sorted(
        [(item.start, item.end, REDACTION_MARKER.format(kind=item.kind)) for item in redactions]
        + [(item.start, item.end, "") for item in removals],
        key=lambda edit: (edit[0], -edit[1]),
    )
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        if start < cursor:
            continue
        pieces += [text[cursor:start], replacement]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


# ---------------------------------------------------------------- markup

# `script` and `style` (and `on*` handlers, `style`/`class` attributes) are the format check's own
# refusals; these are the rest of what executes, loads or hides another document, or is parsed by a
# browser differently from its markup (foreign content, raw-text elements: the mutation-XSS vectors).
FORBIDDEN_MARKUP: Final[dict[str, str]] = {
    "iframe": "a memory file does not embed other documents",
    "frame": "a memory file does not embed other documents",
    "frameset": "a memory file does not embed other documents",
    "object": "a memory file does not embed plugins or documents",
    "embed": "a memory file does not embed plugins or documents",
    "applet": "a memory file does not embed plugins or documents",
    "portal": "a memory file does not embed other documents",
    "base": "a memory file does not change how its links resolve",
    "meta": "the head carries a memory's metadata, the article does not",
    "link": "the head carries a memory's edges, the article does not",
    "template": "a memory file does not carry inert markup for scripts",
    "svg": "foreign content can carry scripts and animations",
    "math": "foreign content can carry scripts and animations",
    "noscript": "browsers parse its content differently from this markup",
    "noembed": "browsers parse its content differently from this markup",
    "noframes": "browsers parse its content differently from this markup",
    "xmp": "browsers parse its content differently from this markup",
    "plaintext": "browsers parse its content differently from this markup",
}
# Attributes whose value a browser follows or loads as a URL.
URL_ATTRIBUTES: Final = frozenset(
    {
        "href",
        "src",
        "srcset",
        "action",
        "formaction",
        "xlink:href",
        "data",
        "poster",
        "background",
        "cite",
        "longdesc",
        "lowsrc",
        "dynsrc",
        "codebase",
        "manifest",
        "ping",
        "icon",
        "usemap",
        "itemtype",
    }
)
DANGEROUS_SCHEMES: Final = ("javascript", "vbscript", "data")
# What a browser ignores in a URL's scheme: every ASCII control and space (it strips them at the
# ends and drops tab and newline anywhere; dropping them anywhere is stricter).
_URL_IGNORED: Final = re.compile("[\x00-\x20]+")


def dangerous_scheme(url: str) -> str | None:
    """The scheme of `url` when a browser would execute or inline it (`javascript`, `vbscript`,
    `data`), after entity decoding, NFKC, dropping controls, spaces and invisible characters, in any case."""
    value = unicodedata.normalize("NFKC", html.unescape(url))
    value = _URL_IGNORED.sub("", "".join(char for char in value if not is_invisible(char))).lower()
    scheme, colon, _ = value.partition(":")
    return scheme if colon and scheme in DANGEROUS_SCHEMES else None


def markup_violations(elements: Iterable[tuple[str, Sequence[tuple[str, str]]]]) -> list[str]:
    """Violations of caller markup given as (tag, attributes) in document order: forbidden elements,
    and URL attributes whose scheme executes or inlines a document."""
    found: list[str] = []
    for tag, attributes in elements:
        name = unicodedata.normalize("NFKC", tag).lower()
        if name in FORBIDDEN_MARKUP:
            found.append(f"<{tag}> is forbidden: {FORBIDDEN_MARKUP[name]}")
        for attribute, value in attributes:
            if attribute.lower() == "srcdoc":
                found.append(f"srcdoc attribute on <{tag}>: a memory file does not embed other documents")
            if attribute.lower() not in URL_ATTRIBUTES:
                continue
            urls = [candidate.strip().split(" ")[0] for candidate in value.split(",")] if attribute == "srcset" else []
            for url in [value, *urls]:
                scheme = dangerous_scheme(url)
                if scheme is not None:
                    found.append(f"{scheme}: URL in the {attribute} of <{tag}>: a memory file does not execute")
                    break
    return found
