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
when the model is built; reading it costs ≈3 ms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# Every ASCII control character except tab, line feed and carriage return.
_DROPPED: Final[dict[int, None]] = {code: None for code in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]}
# A word is a run of characters that are neither whitespace (what cleaning left of it) nor ASCII
# punctuation, or one punctuation character (`!`-`/`, `:`-`@`, `[`-backquote, `{`-`~`).
_WORDS: Final[re.Pattern[str]] = re.compile(r"[^\t\n\r !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")

# Words whose pieces are remembered; past this the memo starts over (a query repeats few words, a
# server that embeds for days would otherwise keep every word it ever met).
_CACHED_WORDS: Final[int] = 50_000


class WordPieceVocabulary:
    """Token ids of ASCII text, exactly as the shipped `tokenizer.json` gives them without special tokens."""

    def __init__(
        self,
        tokens: list[str],
        *,
        unk_token: str = "[UNK]",
        literal_tokens: tuple[str, ...] = ("[PAD]", "[UNK]"),
        continuing_prefix: str = "##",
        max_chars_per_word: int = 100,
    ) -> None:
        self._ids = dict(zip(tokens, range(len(tokens)), strict=True))
        if len(self._ids) != len(tokens):
            raise ValueError("the vocabulary lists a token twice")
        if unk_token not in self._ids:
            raise ValueError(f"the vocabulary has no {unk_token!r} token")
        self.size = len(tokens)
        self._unk = self._ids[unk_token]
        self._prefix = continuing_prefix
        self._max_chars = max_chars_per_word
        self._words: dict[str, tuple[int, ...]] = {}
        missing = [token for token in literal_tokens if token not in self._ids]
        if missing:
            raise ValueError(f"the vocabulary lacks its special tokens {missing}")
        self._literals = {token: self._ids[token] for token in literal_tokens}
        alternatives = "|".join(re.escape(token) for token in literal_tokens)
        self._literal_pattern = re.compile(alternatives) if literal_tokens else None

    def same_ids(self, vocabulary: Mapping[str, int]) -> bool:
        """Whether `vocabulary` (a `tokenizers` vocabulary) gives every token the id this one does."""
        return self._ids == vocabulary

    def ids(self, text: str, max_tokens: int | None = None) -> list[int]:
        """The ids of `text` (ASCII; anything else raises ValueError), the first `max_tokens` of them."""
        if not text.isascii():
            raise ValueError("WordPieceVocabulary tokenizes ASCII text only")
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


def read_vocabulary(path: Path) -> WordPieceVocabulary:
    """The vocabulary in `path`, one token per line; ValueError naming the file when it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a readable vocabulary: {error}") from error
    tokens = text.split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    try:
        return WordPieceVocabulary(tokens)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
