"""The shipped model's WordPiece tokenizer in pure Python, for the texts a command embeds one at a time.

Importing `tokenizers` and loading `tokenizer.json` cost a CLI process ≈50–90 ms, more than the rest of a
search at 10k memories. A query, or the one memory a write embeds, is short, so `StaticEmbedder.embed_one`
tokenizes it here whenever this module reproduces `tokenizers` on every character of it (`supports`):
ASCII, and the scripts, punctuation and symbols of `SUPPORTED_RANGES` (Latin with its accents, Greek,
Cyrillic, Armenian, Hebrew, Arabic, Devanagari, Thai, Georgian, the CJK ideographs, kana and Hangul, the
general punctuation of typeset text such as `—`, `’` and `…`, and the common symbol blocks and emoji).
Every other text, and every bulk batch, goes to `tokenizers`. On supported text the two agree id for id
(tests compare them on every supported code point in several contexts, on the bench corpus, on edge
cases and on generated text), because each stage of the shipped pipeline is then a rule of the Unicode
character database, applied in the order `tokenizers` applies it:

- the special tokens (`[PAD]`, `[UNK]`) are matched in the raw text first, case and all, and each is
  its own id, as `tokenizers` matches its added tokens before normalizing;
- BertNormalizer: NUL, U+FFFD and every other control or format character (general category C) but tab,
  line feed and carriage return is dropped, so `\\x0b` and `\\x0c` go too; those three and every other
  White_Space character become spaces; each CJK ideograph (BERT's ranges) is set apart by spaces; the
  text is decomposed (NFD) and its nonspacing marks (Mn) dropped, which takes accents off (`café` is
  `cafe`); each character is lowercased on its own (`ΟΔΟΣ` gives `οδοσ`: no final-sigma rule);
- BertPreTokenizer: split on whitespace, and every punctuation character (ASCII punctuation, or general
  category P) is a word of its own;
- WordPiece: greedy longest match from the start of a word, continuations prefixed `##`; a word longer
  than `max_input_chars_per_word` characters, or with a piece the vocabulary lacks, is one unknown token.

`tokenizers` reads its character classes from older Unicode tables than Python's `unicodedata`, so the
ranges hold only blocks whose marks, punctuation and controls were all assigned before those tables were
made; an unassigned code point (category Cn here) is never supported, whatever range it falls in.

The vocabulary comes from `vocab.txt` (the token of id i on line i + 1), written from `tokenizer.json`
when the model is built. A query or a short memory needs the ids of a few dozen pieces, so its lookups
search the file's text itself, and only long or many texts build the whole token table (≈9 ms, once,
after searches that cost about as much: `_SEARCH_BUDGET_READS`): reading a vocabulary whose digest
`model.json` records costs ≈2 ms.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# Every ASCII control character except tab, line feed and carriage return.
_DROPPED: Final[dict[int, None]] = {code: None for code in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]}
# A word is a run of characters that are neither whitespace (what cleaning left of it) nor ASCII
# punctuation, or one punctuation character (`!`-`/`, `:`-`@`, `[`-backquote, `{`-`~`).
_WORDS: Final[re.Pattern[str]] = re.compile(r"[^\t\n\r !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")

# The blocks tokenized here beside ASCII, as inclusive (first, last) code points; see the module docstring.
SUPPORTED_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x0080, 0x052F),  # Latin-1, Latin Extended-A/B, IPA, modifiers, combining diacritics, Greek, Cyrillic
    (0x0531, 0x05FF),  # Armenian, Hebrew
    (0x0600, 0x061C),  # Arabic (U+061D, assigned after the tables `tokenizers` reads, is left out)
    (0x061E, 0x06FF),
    (0x0900, 0x097F),  # Devanagari
    (0x0E00, 0x0E7F),  # Thai
    (0x10A0, 0x11FF),  # Georgian, Hangul Jamo
    (0x1E00, 0x1FFF),  # Latin Extended Additional (Vietnamese), Greek Extended
    (0x2000, 0x2BFF),  # general punctuation, super- and subscripts, currency, letterlike, arrows, math,
    # technical, enclosed alphanumerics, box drawing, shapes, symbols, dingbats
    (0x2E00, 0x2E42),  # supplemental punctuation up to the marks added after those tables
    (0x2E80, 0x2FDF),  # CJK and Kangxi radicals
    (0x3000, 0x9FFF),  # CJK punctuation, kana, Bopomofo, Hangul compatibility Jamo, CJK ideographs
    (0xAC00, 0xD7FF),  # Hangul syllables and Jamo Extended-B
    (0xF900, 0xFB4F),  # CJK compatibility ideographs, alphabetic presentation forms
    (0xFE00, 0xFE6F),  # variation selectors (the emoji presentation one), vertical, half and small forms
    (0xFF00, 0xFFEF),  # half- and full-width forms
    (0x1F000, 0x1FAFF),  # tiles, cards, enclosed supplements, emoji and pictographs
    (0x20000, 0x2FA1F),  # CJK ideographs, extensions B to F and the compatibility supplement
)
_SUPPORTED_TEXT_PATTERN: Final[str] = (
    r"[\x00-\x7f" + "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in SUPPORTED_RANGES) + "]*+"
)
# The CJK ideographs BertNormalizer sets apart, with `tokenizers`' bounds (U+2B820–2B91F are not among them).
_CJK_IDEOGRAPHS: Final[tuple[tuple[int, int], ...]] = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip
# Unicode's White_Space characters: the ones that are not controls become spaces.
_WHITE_SPACE: Final[frozenset[str]] = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
)
# `string.punctuation`, written out: importing `string` compiles its Template pattern (≈0.4 ms).
_ASCII_PUNCTUATION: Final[frozenset[str]] = frozenset("""!"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~""")
# Characters looked up in the memo maps below before they start over (a long-lived server meets many).
_MEMO_CHARACTERS: Final[int] = 20_000


class UnsupportedText(ValueError):
    """A character of the text is one this module does not reproduce `tokenizers` on."""


class _CleanedCharacter(dict[int, str]):
    """`str.translate` map of BertNormalizer's first stages: a character to nothing (a control), a space
    (white space), itself set apart by spaces (a CJK ideograph) or itself; `UnsupportedText` for a
    character outside `SUPPORTED_RANGES` or unassigned."""

    def __missing__(self, code: int) -> str:
        character = chr(code)
        category = unicodedata.category(character)
        if category == "Cn" or (code > 0x7F and not _in_supported_ranges(code)):
            raise UnsupportedText(f"U+{code:04X} is outside ASCII and SUPPORTED_RANGES: not tokenized here")
        if character in "\t\n\r":
            cleaned = " "
        elif category[0] == "C":
            cleaned = ""
        elif character in _WHITE_SPACE:
            cleaned = " "
        elif any(first <= code <= last for first, last in _CJK_IDEOGRAPHS):
            cleaned = f" {character} "
        else:
            cleaned = character
        if len(self) >= _MEMO_CHARACTERS:
            self.clear()
        self[code] = cleaned
        return cleaned


class _FoldedCharacter(dict[int, str]):
    """`str.translate` map of a decomposed character to its folded words' form: a nonspacing mark to
    nothing, punctuation set apart by spaces, anything else lowercased on its own."""

    def __missing__(self, code: int) -> str:
        character = chr(code)
        category = unicodedata.category(character)
        if category == "Mn":
            folded = ""
        elif character in _ASCII_PUNCTUATION or category[0] == "P":
            folded = f" {character} "
        else:
            folded = character.lower()
        if len(self) >= _MEMO_CHARACTERS:
            self.clear()
        self[code] = folded
        return folded


_CLEANED: Final = _CleanedCharacter()
_FOLDED: Final = _FoldedCharacter()


def _in_supported_ranges(code: int) -> bool:
    return any(first <= code <= last for first, last in SUPPORTED_RANGES)


@functools.cache
def _supported_text() -> re.Pattern[str]:
    """The texts made of ASCII and `SUPPORTED_RANGES` only. Compiled at the first text outside ASCII:
    the character class takes ≈2.7 ms to compile, which a command whose texts are ASCII never needs."""
    return re.compile(_SUPPORTED_TEXT_PATTERN)


def supports(text: str) -> bool:
    """Whether `WordPieceVocabulary.ids` tokenizes `text` exactly as `tokenizers` does."""
    if text.isascii():
        return True
    if _supported_text().fullmatch(text) is None:
        return False
    try:
        text.translate(_CLEANED)
    except UnsupportedText:
        return False
    return True


def _unicode_words(text: str) -> list[str]:
    """The words of `text`, normalized and split as BertNormalizer and BertPreTokenizer do; UnsupportedText
    when it holds a character this module does not reproduce `tokenizers` on."""
    cleaned = text.translate(_CLEANED)
    return unicodedata.normalize("NFD", cleaned).translate(_FOLDED).split()


# Lookups are answered by searching the vocabulary's text until the searches have read it this many
# times over; the next lookup builds the whole token table. Building it costs as much as ≈50-100 reads
# (4 ms warm, ≈9 ms in a fresh process, 37M instructions; a missed token reads the text once, ≈90 µs,
# and a found one up to twice, to find it and count the lines before it), so a query (2 to 19 lookups
# in the bench) and a short memory (≈27 lookups for 125 characters: ≈5M instructions) never build it,
# and a long text or a batch builds it after at most about what it costs.
_SEARCH_BUDGET_READS: Final[int] = 60

# Words whose pieces are remembered; past this the memo starts over (a query repeats few words, a
# server that embeds for days would otherwise keep every word it ever met).
_CACHED_WORDS: Final[int] = 50_000


class TokenIds:
    """Token → id of a vocabulary given as its text, one token per line (the id is the line number)."""

    def __init__(self, text: str) -> None:
        body = text[:-1] if text.endswith("\n") else text
        self._text = "\n" + body + "\n"  # every token sits between two line feeds
        self.size = body.count("\n") + 1 if body else 0
        self._table: dict[str, int] | None = None
        self._search_budget = _SEARCH_BUDGET_READS * len(self._text)  # characters the searches may read

    def get(self, token: str) -> int | None:
        if self._table is None and self._search_budget > 0:
            if "\n" in token:
                return None
            found = self._text.find("\n" + token + "\n")
            if found < 0:
                self._search_budget -= len(self._text)
                return None
            self._search_budget -= 2 * found
            return self._text.count("\n", 0, found)
        return self.table().get(token)

    def table(self) -> dict[str, int]:
        """Every token with its id; ValueError when a token is listed twice."""
        if self._table is None:
            tokens = self._text[1:-1].split("\n") if self.size else []
            table = dict(zip(tokens, range(len(tokens)), strict=True))
            if len(table) != len(tokens):
                raise ValueError("the vocabulary lists a token twice")
            self._table = table
        return self._table


class WordPieceVocabulary:
    """Token ids of ASCII text, exactly as the shipped `tokenizer.json` gives them without special tokens."""

    def __init__(
        self,
        tokens: list[str] | TokenIds,
        *,
        unk_token: str = "[UNK]",
        literal_tokens: tuple[str, ...] = ("[PAD]", "[UNK]"),
        continuing_prefix: str = "##",
        max_chars_per_word: int = 100,
    ) -> None:
        """`tokens` as a list is checked whole now; as `TokenIds` (read from a file whose digest was
        verified) the table is built only when a long text needs it."""
        self._ids = tokens if isinstance(tokens, TokenIds) else TokenIds("\n".join(tokens))
        if not isinstance(tokens, TokenIds):
            self._ids.table()
        unk = self._ids.get(unk_token)
        if unk is None:
            raise ValueError(f"the vocabulary has no {unk_token!r} token")
        self.size = self._ids.size
        self._unk = unk
        self._prefix = continuing_prefix
        self._max_chars = max_chars_per_word
        self._words: dict[str, tuple[int, ...]] = {}
        literals = {token: self._ids.get(token) for token in literal_tokens}
        missing = [token for token, token_id in literals.items() if token_id is None]
        if missing:
            raise ValueError(f"the vocabulary lacks its special tokens {missing}")
        self._literals = {token: token_id for token, token_id in literals.items() if token_id is not None}
        alternatives = "|".join(re.escape(token) for token in literal_tokens)
        self._literal_pattern = re.compile(alternatives) if literal_tokens else None

    def same_ids(self, vocabulary: Mapping[str, int]) -> bool:
        """Whether `vocabulary` (a `tokenizers` vocabulary) gives every token the id this one does."""
        return self._ids.table() == vocabulary

    def ids(self, text: str, max_tokens: int | None = None) -> list[int]:
        """The ids of `text`, the first `max_tokens` of them; UnsupportedText (a ValueError) for text this
        module does not `support`, found while its words are read (one pass over the text)."""
        ascii_only = text.isascii()
        found: list[int] = []
        start = 0
        for literal in self._literal_pattern.finditer(text) if self._literal_pattern else ():
            self._extend(found, text[start : literal.start()], ascii_only)
            found.append(self._literals[literal.group()])
            start = literal.end()
        self._extend(found, text[start:], ascii_only)
        return found[:max_tokens] if max_tokens is not None else found

    def _extend(self, found: list[int], text: str, ascii_only: bool) -> None:
        words = _WORDS.findall(text.translate(_DROPPED).lower()) if ascii_only else _unicode_words(text)
        for word in words:
            pieces = self._words.get(word)
            if pieces is None:
                if len(self._words) >= _CACHED_WORDS:  # a long-lived server meets ever more distinct words
                    self._words.clear()
                pieces = self._words[word] = self._pieces(word)
            found.extend(pieces)

    def _pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > self._max_chars:
            return (self._unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                token_id = self._ids.get(piece)
                if token_id is not None:
                    pieces.append(token_id)
                    break
                end -= 1
            else:  # no piece of the vocabulary starts here: the whole word is unknown
                return (self._unk,)
            start = end
        return tuple(pieces)


def read_vocabulary(path: Path, expected_sha256: str | None = None) -> WordPieceVocabulary:
    """The vocabulary in `path`, one token per line; ValueError naming the file when it is unreadable.

    With `expected_sha256` (the digest `model.json` records) the file must have exactly that digest,
    and its token table (checked whole when the model was built) is then built only when needed."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a readable vocabulary: {error}") from error
    verified = expected_sha256 is not None and hashlib.sha256(data).hexdigest() == expected_sha256
    if expected_sha256 is not None and not verified:
        raise ValueError(f"{path} is not the vocabulary model.json records (its sha256 differs)")
    try:
        if verified:
            return WordPieceVocabulary(TokenIds(text))
        tokens = text.split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        return WordPieceVocabulary(tokens)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
