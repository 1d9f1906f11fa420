"""The shipped model's WordPiece tokenizer in pure Python, for the texts a command embeds.

Importing `tokenizers` and loading `tokenizer.json` cost a CLI process more than the rest of a search
at 10k memories. A query, or the one memory a write embeds, is short, so `StaticEmbedder.embed_one`
tokenizes it here whenever this module reproduces `tokenizers` on every character of it (`supports`):
ASCII, and the scripts, punctuation and symbols of `SUPPORTED_RANGES` (Latin with its accents, Greek,
Cyrillic, Armenian, Hebrew, Arabic, Devanagari, Thai, Georgian, the CJK ideographs, kana and Hangul, the
general punctuation of typeset text such as `—`, `’` and `…`, and the common symbol blocks and emoji).
A bulk batch is tokenized here too, text by text (`ids_of_many`), each word's pieces remembered: the
memories of a rebuild take a fraction of the CPU they take through `tokenizers`.
Every other text goes to `tokenizers`. On supported text the two agree id for id
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
when the model is built, with `vocab.index` beside it: a hash table of its tokens (`TokenIndex`), quick
to read and used only while its header names the digest of the vocabulary `model.json` records and
the digest of its own contents holds. Each lookup is then a probe or two, so the one memory a write or
an update embeds (≈150–250 lookups, most of them misses) costs next to nothing to tokenize. Without the
index, lookups search the file's text itself, and after searches that cost about as much as building
the whole token table (once: `_SEARCH_BUDGET_READS`) the table answers: that memory then took many
times longer. Reading a vocabulary whose digest `model.json` records is a small fixed cost (figures in
docs/performance.md).
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
import sys
import unicodedata
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from zlib import crc32

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
# `string.punctuation`, written out: importing `string` compiles its Template pattern.
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
    the character class takes a noticeable time to compile, which a command whose texts are ASCII never
    needs."""
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
# (a missed token reads the text once, and a found one up to twice, to find it and count the lines
# before it), so a query (2 to 19 lookups in the bench) and a short memory (≈27 lookups for 125
# characters) never build it,
# and a long text or a batch builds it after at most about what it costs.
_SEARCH_BUDGET_READS: Final[int] = 60

# Words whose pieces are remembered; past this the memo starts over (a query repeats few words, a
# server that embeds for days would otherwise keep every word it ever met).
_CACHED_WORDS: Final[int] = 50_000


class TokenIds:
    """Token → id of a vocabulary given as its text, one token per line (the id is the line number).

    With the vocabulary's `TokenIndex`, every lookup is answered by it; without, by searching the text
    and then by the whole token table."""

    def __init__(self, text: str, index: TokenIndex | None = None) -> None:
        body = text[:-1] if text.endswith("\n") else text
        self._text = "\n" + body + "\n"  # every token sits between two line feeds
        self.size = body.count("\n") + 1 if body else 0
        self._index = index
        self._table: dict[str, int] | None = None
        self._search_budget = _SEARCH_BUDGET_READS * len(self._text)  # characters the searches may read

    def get(self, token: str) -> int | None:
        if self._index is not None:
            return self._index.get(token)
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


# `vocab.index` beside `vocab.txt`: a hash table of its tokens, built from it by `build_token_index` (the
# model's build writes it; `tests/index/test_token_index.py` checks the shipped one is what its vocabulary
# builds). Little-endian: this header (magic, the sha256 of the vocabulary it indexes, the sha256 of
# what follows, the token count, the slot count, 4 bytes of padding), then each token's byte offset in
# the vocabulary (one more: the end), then the slots (a token's id + 1, or 0 for an empty slot).
TOKEN_INDEX_SUFFIX: Final[str] = ".index"
_INDEX_HEADER: Final = struct.Struct("<8s32s32sII4x")
_INDEX_MAGIC: Final[bytes] = b"MHTOKIX1"


class TokenIndex:
    """The ids of a vocabulary's tokens through its `vocab.index`: a token's CRC-32 picks a slot, the
    slots after it are probed in turn, and a slot's token is compared with the vocabulary's own bytes
    before its id is answered. A lookup is a probe or two, where searching the text read the file for
    each token and building the whole table was a cost of its own: a memory of a few hundred characters
    took many times longer to tokenize that way."""

    def __init__(self, vocabulary: bytes, offsets: memoryview, slots: memoryview) -> None:
        self._vocabulary = vocabulary
        self._offsets = offsets
        self._slots = slots
        self._mask = len(slots) - 1

    def get(self, token: str) -> int | None:
        try:
            wanted = token.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no line of a UTF-8 file holds one
            return None
        slots, offsets, vocabulary, mask = self._slots, self._offsets, self._vocabulary, self._mask
        slot = crc32(wanted) & mask
        stored = slots[slot]
        while stored:
            token_id = stored - 1
            start = offsets[token_id]
            if vocabulary[start : offsets[token_id + 1] - 1] == wanted:
                return token_id
            slot = (slot + 1) & mask
            stored = slots[slot]
        return None


def build_token_index(vocabulary: bytes) -> bytes:
    """The `vocab.index` of `vocabulary` (the bytes of a `vocab.txt`, one token per line); ValueError
    when a token is listed twice. Twice as many slots as tokens (a power of two), so a probe meets an
    empty slot after ≈1.5 slots on average."""
    body = _lines(vocabulary)
    tokens = body.split(b"\n") if body else []
    offsets = array("I")
    position = 0
    for token in tokens:
        offsets.append(position)
        position += len(token) + 1
    offsets.append(position)
    slot_count = 8
    while slot_count < 2 * len(tokens):
        slot_count *= 2
    slots = array("I", bytes(4 * slot_count))
    mask = slot_count - 1
    for token_id, token in enumerate(tokens):
        slot = crc32(token) & mask
        while slots[slot]:
            if tokens[slots[slot] - 1] == token:
                raise ValueError(f"the vocabulary lists the token {token.decode('utf-8', 'replace')!r} twice")
            slot = (slot + 1) & mask
        slots[slot] = token_id + 1
    if sys.byteorder != "little":
        offsets.byteswap()
        slots.byteswap()
    payload = offsets.tobytes() + slots.tobytes()
    header = _INDEX_HEADER.pack(
        _INDEX_MAGIC,
        hashlib.sha256(vocabulary).digest(),
        hashlib.sha256(payload).digest(),
        len(tokens),
        slot_count,
    )
    return header + payload


def _lines(vocabulary: bytes) -> bytes:
    """A vocabulary's tokens and the line feeds between them, without the one that ends the file."""
    return vocabulary[:-1] if vocabulary.endswith(b"\n") else vocabulary


def read_token_index(path: Path, vocabulary: bytes, vocabulary_sha256: str) -> TokenIndex | None:
    """The index at `path` when it is the one `vocabulary` (of that digest) builds, as far as its header
    and the digest of its contents say; None for anything else (missing, unreadable, of another
    vocabulary, damaged, or a big-endian machine), and lookups then search the text."""
    if sys.byteorder != "little":
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < _INDEX_HEADER.size:
        return None
    magic, indexed_sha256, payload_sha256, count, slot_count = _INDEX_HEADER.unpack_from(data)
    payload = memoryview(data)[_INDEX_HEADER.size :]
    if (
        magic != _INDEX_MAGIC
        or indexed_sha256.hex() != vocabulary_sha256
        or slot_count <= count  # an empty slot ends every probe
        or slot_count & (slot_count - 1)
        or len(payload) != 4 * (count + 1 + slot_count)
        or hashlib.sha256(payload).digest() != payload_sha256
    ):
        return None
    words = payload.cast("I")
    body = _lines(vocabulary)
    if words[count] != (len(body) + 1 if body else 0):  # the offsets end where the vocabulary does
        return None
    return TokenIndex(body, words[: count + 1], words[count + 1 :])


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
        # Every token's proper prefixes, read once many texts come at once (`ids_of_many`).
        self._prefixes: frozenset[str] | None = None
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

    def ids_of_many(self, texts: Sequence[str], max_tokens: int | None = None) -> list[list[int] | None]:
        """`ids` of each text, None for one this module does not `support`.

        Many texts first read the whole token table and the set of every token's proper prefixes, once:
        a piece is then looked up in the table, an order of magnitude cheaper than through `vocab.index`,
        and a word whose rest is not one token is matched by walking forward only while what it has read
        begins some token (`_walked_pieces`). Trying every shorter length from the rest's end instead costs
        a lookup per length: texts of commit hashes (40 characters the vocabulary knows in short pieces)
        took several times longer that way than walking, table and prefixes included."""
        if self._prefixes is None:
            self._prefixes = frozenset(token[:end] for token in self._ids.table() for end in range(1, len(token)))
        found: list[list[int] | None] = []
        for text in texts:
            try:
                found.append(self.ids(text, max_tokens))
            except UnsupportedText:
                found.append(None)
        return found

    def _extend(self, found: list[int], text: str, ascii_only: bool) -> None:
        words = _WORDS.findall(text.translate(_DROPPED).lower()) if ascii_only else _unicode_words(text)
        for word in words:
            pieces = self._words.get(word)
            if pieces is None:
                if len(self._words) >= _CACHED_WORDS:  # a long-lived server meets ever more distinct words
                    self._words.clear()
                if len(word) > self._max_chars:
                    pieces = (self._unk,)
                elif self._prefixes is None:
                    pieces = self._pieces(word)
                else:
                    pieces = self._walked_pieces(word, self._ids.table(), self._prefixes)
                self._words[word] = pieces
            found.extend(pieces)

    def _pieces(self, word: str) -> tuple[int, ...]:
        """WordPiece's greedy longest match: at each position the longest piece the vocabulary holds,
        found by trying every length from the longest down (a word is most often one token)."""
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

    def _walked_pieces(self, word: str, table: Mapping[str, int], prefixes: frozenset[str]) -> tuple[int, ...]:
        """`_pieces` of `word` by another route to the same match: the rest of the word when it is one
        token, else the longest token met walking forward one character at a time while the piece read
        so far is a proper prefix of some token (every prefix of a longer token is one, so the walk never
        stops short of it)."""
        pieces: list[int] = []
        start, length, prefix = 0, len(word), ""
        while start < length:
            rest = prefix + word[start:]
            token_id = table.get(rest)
            if token_id is not None:
                pieces.append(token_id)
                break
            longest: tuple[int, int] | None = None  # (end, id) of the longest token found so far
            end = start + 1
            while end < length:  # the whole rest was looked up above
                piece = prefix + word[start:end]
                token_id = table.get(piece)
                if token_id is not None:
                    longest = (end, token_id)
                if piece not in prefixes:
                    break
                end += 1
            if longest is None:  # no piece of the vocabulary starts here: the whole word is unknown
                return (self._unk,)
            start = longest[0]
            pieces.append(longest[1])
            prefix = self._prefix
        return tuple(pieces)


def read_vocabulary(path: Path, expected_sha256: str | None = None, *, indexed: bool = True) -> WordPieceVocabulary:
    """The vocabulary in `path`, one token per line; ValueError naming the file when it is unreadable.

    With `expected_sha256` (the digest `model.json` records) the file must have exactly that digest,
    and its token table (checked whole when the model was built) is then built only when needed: its
    lookups go through the `TokenIndex` beside it (`vocab.index`, unless `indexed` is False), else
    search its text."""
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
            assert expected_sha256 is not None
            index = read_token_index(path.with_suffix(TOKEN_INDEX_SUFFIX), data, expected_sha256) if indexed else None
            return WordPieceVocabulary(TokenIds(text, index))
        tokens = text.split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        return WordPieceVocabulary(tokens)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
