"""The shipped model's WordPiece tokenizer in pure Python, for ASCII text.

Importing `tokenizers` and loading `tokenizer.json` cost a CLI process ≈50 ms, more than the rest of a
search at 10k memories. A query, or the one memory a write embeds, is short and nearly always ASCII,
so `StaticEmbedder.embed_one` tokenizes ASCII text here and leaves every other text, and every bulk
batch, to `tokenizers`. On ASCII the two agree id for id (tests compare them on the bench corpus, on
edge cases and on generated text), because on ASCII each stage of the shipped pipeline is simple:

- BertNormalizer: control characters are dropped (`\\x0b` and `\\x0c` too: they are dropped as controls
  before whitespace is mapped), tab, line feed and carriage return become spaces, letters are
  lowercased; stripping accents and isolating CJK characters change nothing;
- BertPreTokenizer: split on whitespace, and every punctuation character is a word of its own;
- the special tokens (`[PAD]`, `[UNK]`) are matched in the raw text first, case and all, and each is
  its own id, as `tokenizers` matches its added tokens before normalizing;
- WordPiece: greedy longest match from the start of a word, continuations prefixed `##`; a word longer
  than `max_input_chars_per_word` characters, or with a piece the vocabulary lacks, is one unknown token.

The vocabulary comes from `vocab.txt` (the token of id i on line i + 1), written from `tokenizer.json`
when the model is built. A query needs the ids of a dozen pieces, so its lookups search the file's
text itself, and only a long text (a document) builds the whole token table (≈9 ms, once): reading
a vocabulary whose digest `model.json` records costs ≈2 ms.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# Every ASCII control character except tab, line feed and carriage return.
_DROPPED: Final[dict[int, None]] = {code: None for code in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]}
# A word is a run of characters that are neither whitespace (what cleaning left of it) nor ASCII
# punctuation, or one punctuation character (`!`-`/`, `:`-`@`, `[`-backquote, `{`-`~`).
_WORDS: Final[re.Pattern[str]] = re.compile(r"[^\t\n\r !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")

# Lookups answered by searching the vocabulary's text before the whole table is built (≈9 ms): a
# search costs 50-200 µs, so it pays for the dozen lookups of a query (the bench's 19 queries take
# 2 to 19), never for a document, whose text builds the table at once (longer than `_SEARCHED_TEXT`).
_SEARCHED_LOOKUPS: Final[int] = 32
_SEARCHED_TEXT: Final[int] = 200

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
        self._searches_left = _SEARCHED_LOOKUPS

    def get(self, token: str) -> int | None:
        if self._table is None and self._searches_left > 0:
            self._searches_left -= 1
            if "\n" in token:
                return None
            found = self._text.find("\n" + token + "\n")
            return None if found < 0 else self._text.count("\n", 0, found)
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
        self._searched_text = _SEARCHED_TEXT
        self._words: dict[str, tuple[int, ...]] = {}
        literals = {token: self._ids.get(token) for token in literal_tokens}
        missing = [token for token, token_id in literals.items() if token_id is None]
        if missing:
            raise ValueError(f"the vocabulary lacks its special tokens {missing}")
        self._literals = {token: token_id for token, token_id in literals.items() if token_id is not None}
        alternatives = "|".join(re.escape(token) for token in literal_tokens)
        self._literal_pattern = re.compile(alternatives) if literal_tokens else None

    def warm_for_documents(self) -> None:
        """Build the whole token table now, as the first text longer than a query would."""
        self._ids.table()

    def same_ids(self, vocabulary: Mapping[str, int]) -> bool:
        """Whether `vocabulary` (a `tokenizers` vocabulary) gives every token the id this one does."""
        return self._ids.table() == vocabulary

    def ids(self, text: str, max_tokens: int | None = None) -> list[int]:
        """The ids of `text` (ASCII; anything else raises ValueError), the first `max_tokens` of them."""
        if not text.isascii():
            raise ValueError("WordPieceVocabulary tokenizes ASCII text only")
        if len(text) > self._searched_text:
            self._ids.table()
        found: list[int] = []
        start = 0
        for literal in self._literal_pattern.finditer(text) if self._literal_pattern else ():
            self._extend(found, text[start : literal.start()])
            found.append(self._literals[literal.group()])
            start = literal.end()
        self._extend(found, text[start:])
        return found[:max_tokens] if max_tokens is not None else found

    def _extend(self, found: list[int], text: str) -> None:
        for word in _WORDS.findall(text.translate(_DROPPED).lower()):
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
