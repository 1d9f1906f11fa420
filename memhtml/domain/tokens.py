"""The one tokenizer the BM25 index and the query side share, so a memory is always found by its own words.

Owns the matching normalization (NFKC, case folding, Latin accent folding), the token rules for words,
identifiers and CJK text, the query parser with quoted phrases, and the phrase post-filter. Nothing
here ever changes stored text: every output is a matching key derived from it.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Mapping
from functools import cache
from typing import Final, NamedTuple

# Long enough for any real word, hash prefix or identifier; short enough that a pasted blob cannot
# put kilobyte-sized keys into the postings. Longer tokens are cut, identically on both sides.
MAX_TOKEN_LENGTH: Final = 64

# Characters that join words into one identifier when a letter or digit stands on both sides.
CONNECTORS: Final = "-._/:"
_CONNECTOR_CLASS: Final = "[" + re.escape(CONNECTORS) + "]"
# Inside a word, the runs of ASCII digits and the runs of anything else (letters and their marks).
_LETTER_OR_DIGIT_RUN: Final = re.compile(r"[0-9]++|[^0-9]++")
# Digit groups joined by connectors: `3.11` in `python3.11`, `2024-001` in `inv-2024-001`.
_DIGIT_STRETCH: Final = re.compile(f"[0-9]++(?:{_CONNECTOR_CLASS}[0-9]++)++")

# Scripts written without spaces between words: every character is a token and so is every
# overlapping pair. Han (with 々〆〇 and the compatibility ideographs), Hiragana, Katakana (with ー)
# and Hangul. Only the word characters of those blocks are listed, so ・ and 、。 still separate.
_CJK_CLASS: Final = (
    "["
    "\u1100-\u11ff"
    "\u3005-\u3007\u3021-\u3029\u3038-\u303c"
    "\u3041-\u3096\u309d-\u309f"
    "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
    "\u3131-\u318e"
    "\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7c6\ud7cb-\ud7fb"
    "\uf900-\ufaff\uff66-\uff9d"
    "\U00020000-\U000323af"
    "]"
)

# Where the Basic Multilingual Plane keeps its combining marks (general categories Mn, Mc), which
# Python's `\w` leaves out. Scanning only these windows keeps the first non-ASCII text cheap; a test
# checks they still hold every mark except the ones left out on purpose: variation selectors
# (U+FE00–FE0F, they only pick a glyph) and the kana and ideographic tone marks that follow CJK.
MARK_WINDOWS: Final = ((0x0300, 0x2E00), (0xA600, 0xAC00), (0xFB1E, 0xFB1F), (0xFE20, 0xFE30))

# NFKC keeps these, but they are a hyphen to a reader (language models emit U+2011 inside
# identifiers like INV‑2024‑001), and a soft hyphen is an invisible break inside a word.
_HYPHEN_LOOKALIKES: Final = (("\u2010", "-"), ("\u2011", "-"), ("\u00ad", ""))
# Accents are folded only off basic Latin letters (café = cafe, as SQLite FTS5 does for the
# original): on Cyrillic or Greek the same marks make different letters (й is not и).
_MAY_CARRY_LATIN_ACCENT: Final = re.compile(r"[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]")
_COMBINING_ACCENTS: Final = re.compile(r"[\u0300-\u036f]+")


class _Patterns(NamedTuple):
    """The compiled token rules for one alphabet: ASCII-only text, or any text."""

    word: re.Pattern[str]
    compound: re.Pattern[str]
    cjk_run: re.Pattern[str] | None


def _compile(word: str, cjk_run: str | None) -> _Patterns:
    # Possessive quantifiers never backtrack, so every scan stays linear even on a megabyte of
    # letters with no separator in it.
    return _Patterns(
        word=re.compile(word),
        compound=re.compile(f"{word}(?:{_CONNECTOR_CLASS}{word})*+"),
        cjk_run=None if cjk_run is None else re.compile(cjk_run),
    )


# Folded ASCII text has only these letters, so the common case needs no Unicode tables.
_ASCII_PATTERNS: Final = _compile("[a-z0-9]++", None)
# For folded ASCII text, a byte translation and `str.split` cut the same words and compounds as the
# patterns several times cheaper: every character that cannot be in a word (or, for compounds, a
# connector) becomes a space, and the runs left are split apart in C.
_WORD_CHARACTERS: Final = b"abcdefghijklmnopqrstuvwxyz0123456789"
_NOT_IN_A_WORD: Final = bytes(code if code in _WORD_CHARACTERS else 32 for code in range(256))
_NOT_IN_A_COMPOUND: Final = bytes(
    code if code in _WORD_CHARACTERS or code in CONNECTORS.encode() else 32 for code in range(256)
)


def _combining_mark_class() -> str:
    """A regex character class of the combining marks found in MARK_WINDOWS."""
    ranges: list[tuple[int, int]] = []
    for window_start, window_end in MARK_WINDOWS:
        window = "".join(map(chr, range(window_start, window_end)))
        for offset, category in enumerate(map(unicodedata.category, window)):
            if category in ("Mn", "Mc"):
                code_point = window_start + offset
                if ranges and ranges[-1][1] == code_point - 1:
                    ranges[-1] = (ranges[-1][0], code_point)
                else:
                    ranges.append((code_point, code_point))
    return "[" + "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in ranges) + "]"


@cache
def _unicode_patterns() -> _Patterns:
    # Built on the first non-ASCII text only: an English query never pays for the Unicode tables.
    # CJK runs are cut out of the text before words are scanned, so the letter class can stay
    # `[^\W_]` (cheap to compile) and a word still never swallows a CJK character.
    letter = r"[^\W_]"
    return _compile(f"{letter}++(?:{_combining_mark_class()}++{letter}*+)*+", f"{_CJK_CLASS}++")


def fold_for_matching(text: str) -> str:
    """The matching form of `text`: NFKC, then `str.casefold`, then accents removed from Latin letters.

    Full-width `ＲＴＸ４０９０` becomes `rtx4090`, `Straße` becomes `strasse`, `Café` becomes `cafe`,
    U+2010/U+2011 hyphens become `-` and soft hyphens vanish. Used only to derive matching keys;
    stored text keeps the caller's bytes.
    """
    if text.isascii():
        return text.lower()
    for lookalike, replacement in _HYPHEN_LOOKALIKES:
        if lookalike in text:
            text = text.replace(lookalike, replacement)
    folded = unicodedata.normalize("NFKC", text).casefold()
    if _MAY_CARRY_LATIN_ACCENT.search(folded):
        decomposed = unicodedata.normalize("NFD", folded)

        def off_latin_letters(accents: re.Match[str]) -> str:
            start = accents.start()
            return "" if start and "a" <= decomposed[start - 1] <= "z" else accents.group()

        # Compose again what NFD took apart, and what case folding left decomposed (Greek ΐ).
        folded = unicodedata.normalize("NFKC", _COMBINING_ACCENTS.sub(off_latin_letters, decomposed))
    return folded


def _capped(token: str) -> str:
    return token[:MAX_TOKEN_LENGTH]


def _mixes_letters_and_digits(word: str) -> bool:
    return not (word.isalpha() or word.isdigit())


def _identifier_terms(compound: str, patterns: _Patterns) -> list[str]:
    """The terms of one word or connector-joined identifier, capped: itself and, when it has several
    words, each of them; where letters meet digits inside a word, its letter and digit runs
    (`python3` also gives `python` and `3`, `rtx4090` gives `rtx` and `4090`); and then each stretch of
    digit groups joined by connectors (`python3.11` gives `3.11`, `v5.8.4` gives `5.8.4`), so that a
    version typed alone finds the name it is glued to. An identifier whose digits stand apart
    (`INV-2024-001`) has its number groups as parts already, and no stretch is added: every one would
    be a term of its own in the vocabulary."""
    parts = _words(compound, patterns)
    terms = [compound, *parts] if len(parts) > 1 else parts
    glued = False
    for part in parts:
        if _mixes_letters_and_digits(part):
            runs = _LETTER_OR_DIGIT_RUN.findall(part)
            if len(runs) > 1:
                terms.extend(runs)
                glued = True
    if glued and len(parts) > 1:
        terms.extend(stretch for stretch in _DIGIT_STRETCH.findall(compound) if stretch != compound)
    return [_capped(term) for term in terms]


def _compounds(folded: str, patterns: _Patterns) -> list[str]:
    """`patterns.compound.findall(folded)`: every word or connector-joined identifier, in order."""
    if patterns is not _ASCII_PATTERNS:
        return patterns.compound.findall(folded)
    compounds: list[str] = []
    for run in _spaced(folded, _NOT_IN_A_COMPOUND).split():
        # A run of word characters and connectors: its edge connectors join nothing, and a run that is
        # then all word characters is one compound (by far the most common case).
        core = run.strip(CONNECTORS)
        if core.isalnum():
            compounds.append(core)
        elif core:
            compounds.extend(patterns.compound.findall(core))
    return compounds


def _words(folded: str, patterns: _Patterns) -> list[str]:
    """`patterns.word.findall(folded)`: the words, in order."""
    if patterns is _ASCII_PATTERNS:
        return _spaced(folded, _NOT_IN_A_WORD).split()
    return patterns.word.findall(folded)


def _spaced(ascii_text: str, table: bytes) -> str:
    """`ascii_text` with each character `table` maps to a space made one (a byte translation: one C loop)."""
    return ascii_text.encode("ascii").translate(table).decode("ascii")


def _spaced_out(text: str, cjk_run: re.Pattern[str], one_by_one: bool) -> str:
    """`text` with every CJK run set apart by spaces, whole or character by character."""
    if one_by_one:
        return cjk_run.sub(lambda run: " " + " ".join(run.group()) + " ", text)
    return cjk_run.sub(r" \g<0> ", text)


def document_terms(text: str) -> dict[str, int]:
    """Every index term of `text` with its frequency: the postings of one document.

    Words and digit runs; each identifier whole and by its parts (`_identifier_terms`); each CJK
    character and each overlapping CJK pair. Empty or punctuation-only text has no terms.
    """
    folded = fold_for_matching(text)
    patterns = _ASCII_PATTERNS if folded.isascii() else _unicode_patterns()
    cjk_runs: list[str] = []
    if patterns.cjk_run is not None:
        cjk_runs = patterns.cjk_run.findall(folded)
        if cjk_runs:
            folded = patterns.cjk_run.sub(" ", folded)
    frequencies: dict[str, int] = {}
    _count(frequencies, _compounds(folded, patterns))
    # Only the few distinct terms that are identifiers, over-long, carry combining marks or mix letters
    # with digits are split.
    for compound in [
        term
        for term in frequencies
        if len(term) > MAX_TOKEN_LENGTH or not term.isalnum() or _mixes_letters_and_digits(term)
    ]:
        _count(frequencies, _identifier_terms(compound, patterns), frequencies.pop(compound))
    if cjk_runs:
        _count(frequencies, list("".join(cjk_runs)))
        _count(frequencies, [pair for run in cjk_runs for pair in map(operator.add, run, run[1:])])
    return frequencies


def _count(frequencies: dict[str, int], terms: list[str], times: int = 1) -> None:
    """Add `times` to the frequency of each of `terms` (a loop compiled to C: cheaper than a Counter)."""
    for term in terms:
        frequencies[term] = frequencies.get(term, 0) + times


def document_length(term_frequencies: Mapping[str, int]) -> int:
    """The BM25 length of a document: how many terms it holds, counting repeats (the sum of frequencies)."""
    return sum(term_frequencies.values())


def _query_tokens(text: str) -> list[str]:
    """The query terms of `text` in reading order, repeats kept.

    An identifier gives itself and its parts, as in a document (`_identifier_terms`). A CJK run of two
    or more characters gives only its overlapping pairs, so a match needs the characters side by side
    (苹果 does not match a text that has 苹 and 果 apart); a lone CJK character gives itself.
    """
    folded = fold_for_matching(text)
    patterns = _ASCII_PATTERNS if folded.isascii() else _unicode_patterns()
    if patterns.cjk_run is not None:
        folded = _spaced_out(folded, patterns.cjk_run, one_by_one=False)
    tokens: list[str] = []
    for compound in _compounds(folded, patterns):
        if patterns.cjk_run is not None and patterns.cjk_run.match(compound):
            if len(compound) == 1:
                tokens.append(compound)
            else:
                tokens.extend(map(operator.add, compound, compound[1:]))
            continue
        tokens.extend(_identifier_terms(compound, patterns))
    return tokens


def phrase_words(text: str) -> list[str]:
    """The words of `text` in reading order, the sequence phrases are matched on.

    Identifier parts count as separate words and each CJK character is one word, so punctuation and
    spacing between words never matter: `RTX 4090`, `rtx-4090` and `RTX_4090` read the same.
    """
    folded = fold_for_matching(text)
    patterns = _ASCII_PATTERNS if folded.isascii() else _unicode_patterns()
    if patterns.cjk_run is not None:
        folded = _spaced_out(folded, patterns.cjk_run, one_by_one=True)
    return [_capped(word) for word in _words(folded, patterns)]


def phrase_matches(phrase: str, document_text: str) -> bool:
    """Whether the words of `phrase` occur in `document_text` side by side and in order.

    `"RTX 4090"` matches `rtx-4090` but not `RTX4090` (one word) nor `RTX 3090 and 4090`.
    A phrase with no words matches every document, so it never filters anything out.
    """
    wanted = phrase_words(phrase)
    if not wanted:
        return True
    # Words never contain a space, so space-delimited joins turn the sequence search into a
    # substring search that cannot match across word boundaries.
    return f" {' '.join(wanted)} " in f" {' '.join(phrase_words(document_text))} "


class QueryPhrase(NamedTuple):
    """One span the user put in balanced double quotes: as typed, as matched, and its query terms."""

    typed: str
    normalized_text: str
    terms: tuple[str, ...]


class QueryTerms(NamedTuple):
    """What the lexical arm needs from a query: its distinct terms and its required phrases."""

    terms: tuple[str, ...]
    phrases: tuple[QueryPhrase, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when nothing searchable survived, so the lexical arm must be dropped."""
        return not self.terms

    @property
    def normalized_phrase_texts(self) -> list[str]:
        """Each phrase's words joined by one space, ready for `phrase_matches`."""
        return [phrase.normalized_text for phrase in self.phrases]


def _quoted_segments(query: str) -> list[tuple[str, bool]]:
    """The query cut at ASCII double quotes into (text, is_phrase) pieces.

    Quotes pair up left to right; with an odd count the last quote has no partner and is read as a
    plain separator. Only `"` counts: curly and full-width quotes are ordinary punctuation.
    """
    pieces = query.split('"')
    if len(pieces) % 2 == 0:
        pieces[-2:] = [pieces[-2] + " " + pieces[-1]]
    return [(piece, index % 2 == 1) for index, piece in enumerate(pieces)]


def parse_query(query: str) -> QueryTerms:
    """The terms and phrases of a search query, by the same rules as `document_terms`.

    Every term of a query is among the document terms of the same text, so a memory always
    matches a query made of its own words. Terms keep the order they were typed in, once each.
    """
    terms: dict[str, None] = {}
    phrases: list[QueryPhrase] = []
    for segment, is_phrase in _quoted_segments(query):
        segment_terms = dict.fromkeys(_query_tokens(segment))
        terms.update(segment_terms)
        words = phrase_words(segment) if is_phrase else []
        if words:
            phrases.append(QueryPhrase(typed=segment, normalized_text=" ".join(words), terms=tuple(segment_terms)))
    return QueryTerms(terms=tuple(terms), phrases=tuple(phrases))


# The function words a question is built from ("what did …", "when was … to the …"). As query terms
# they match chatter rather than evidence and, under the all-terms rule, they exclude the memory that
# states the fact in other words. Negations ("not", "no", "never") are not among them: they are
# evidence. Measured on `eval locomo` (1,535 questions, corrected evidence): recall@10 0.576 -> 0.604.
QUERY_STOP_WORDS: Final[frozenset[str]] = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has", "have", "how",
     "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "what", "when",
     "where", "which", "who", "whom", "why", "will", "with", "would"}
)  # fmt: skip


def content_terms(query: QueryTerms) -> QueryTerms:
    """The query without its stop words, unless nothing else is left; a quoted phrase keeps every term.

    `what did Caroline research` searches `caroline research`; `to be or not to be` (nothing but stop
    words and a negation) keeps `not`; `"the who"` as a phrase keeps both words.
    """
    quoted = {term for phrase in query.phrases for term in phrase.terms}
    kept = tuple(term for term in query.terms if term not in QUERY_STOP_WORDS or term in quoted)
    return QueryTerms(terms=kept, phrases=query.phrases) if kept else query
