"""Loading the static embedding model shipped inside the package, and embedding texts with it.

This module owns the packaged artifact `memhtml/_models/minilm-l6-v2-static-256/` (all-MiniLM-L6-v2
distilled to one vector per token, see its `NOTICE`) and is the only module that imports `tokenizers`.
The artifact is plain files, so no model2vec is needed at run time:

- `tokenizer.json`: the WordPiece tokenizer (lowercasing, no special tokens added);
- `vocab.txt`: its vocabulary, one token per line in id order (written from `tokenizer.json`);
- `vocab.index`: a hash table of that vocabulary's tokens (`wordpiece.build_token_index`), used only
  while it is that vocabulary's;
- `vectors.npy`: float16 `[vocab_size, dims]`, row i is the vector of token id i, memory-mapped;
- `model.json`: the vector space name, the sizes, the truncation limits and the files' sha256.

A text is embedded exactly as model2vec's `StaticModel.encode` embeds it with this model:

1. keep its first `max_chars_per_text` characters (model2vec's cheap cut before tokenizing: the token
   limit times the median token length of the vocabulary);
2. tokenize without special tokens, truncated to the first `max_tokens_per_text` tokens;
3. drop every unknown token (after truncation, as model2vec does);
4. average the rows of the remaining ids and L2-normalize; a text with no token left is a zero row.

A single text, the common case of a query or of the one memory a write embeds, is tokenized by the
pure-Python `wordpiece` (which reads `vocab.txt` and looks tokens up through `vocab.index`) whenever it
reproduces `tokenizers` on every character of it (ASCII and the scripts and symbols it lists), and its
few token rows are read straight from the memory-mapped file with `struct` (`embed_one`): importing
`tokenizers` and NumPy would cost a CLI search more than everything else it does. A bulk batch is
tokenized the same way, text by text, and its rows summed with NumPy; only the texts `wordpiece` does
not reproduce go through `tokenizers`, which is imported and loaded on first use. Many texts are
embedded in slices of `TEXTS_PER_SLICE`, so memory stays flat however many one call is given (only the
answer grows with them).
"""

from __future__ import annotations

import itertools
import json
import math
import mmap
import re
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from memhtml.index.wordpiece import UnsupportedText, WordPieceVocabulary, read_vocabulary

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

MODEL_DIRECTORY: Final[Path] = Path(__file__).resolve().parent.parent / "_models" / "minilm-l6-v2-static-256"
MODEL_FILENAME: Final[str] = "model.json"
VECTORS_FILENAME: Final[str] = "vectors.npy"
TOKENIZER_FILENAME: Final[str] = "tokenizer.json"
VOCABULARY_FILENAME: Final[str] = "vocab.txt"

# Texts embedded per slice (the unsupported ones among them in one `encode_batch_fast` call: tokenizers
# >= 0.20, `encode_batch` without the offsets, as model2vec calls it): small enough that a slice's token
# lists and widened rows stay a few MB (at most 512 tokens a text, 30 MB of rows).
TEXTS_PER_SLICE: Final[int] = 1024


class UnreadableModelFile(ValueError):
    """A model file read after loading (`tokenizer.json`, on first need) cannot be used."""


class StaticEmbedder:
    """Turns texts into L2-normalized float32 rows of the shipped static model's vector space."""

    space: str
    dims: int

    def __init__(
        self,
        *,
        space: str,
        matrix: NpyMatrix,
        tokenizer_path: Path,
        vocabulary: WordPieceVocabulary,
        unk_token_id: int | None,
        max_tokens_per_text: int | None,
        max_chars_per_text: int | None,
    ) -> None:
        self.space = space
        self.dims = matrix.columns
        self._matrix = matrix
        self._vectors: NDArray[np.floating[Any]] | None = None
        self._unk_token_id = unk_token_id
        self._max_chars = max_chars_per_text
        self._max_tokens = max_tokens_per_text
        self._tokenizer_path = tokenizer_path
        self._tokenizer: Tokenizer | None = None
        self._vocabulary = vocabulary

    def embed_one(self, text: str) -> list[float]:
        """One text's unit vector (or zeros) without NumPy: its few token rows are read straight from the
        file. A query in a CLI process is the common case, and importing NumPy would cost more than
        everything else that search does."""
        limit = self._max_chars
        kept = text[:limit] if limit is not None else text
        try:
            ids = self._vocabulary.ids(kept, self._max_tokens)
        except UnsupportedText:  # a character the pure-Python tokenizer does not reproduce
            ids = self._loaded_tokenizer().encode(kept, add_special_tokens=False).ids
        unknown = self._unk_token_id
        rows = [self._matrix.row(token_id) for token_id in ids if token_id != unknown]
        # Column sums in C (`zip`, `sum`), adding the rows in the order a loop over them would, so the
        # sums are the same, several times faster than adding them value by value.
        total = [sum(column, 0.0) for column in zip(*rows, strict=True)] if rows else [0.0] * self.dims
        norm = math.sqrt(math.fsum(value * value for value in total))
        return [value / norm for value in total] if norm > 0 else total

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, `[len(texts), dims]` float32, each of unit length or all zeros (a text
        with no known token, the empty text included)."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(texts), TEXTS_PER_SLICE):
            stop = min(start + TEXTS_PER_SLICE, len(texts))
            rows = out[start:stop]
            self._sum_rows(texts[start:stop], rows)
            # Normalized in place, slice by slice: no temporary the size of the whole answer.
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            np.divide(rows, norms, out=rows, where=norms > 0)
        return out

    def _sum_rows(self, texts: Sequence[str], out: NDArray[np.float32]) -> None:
        """Write into `out[i]` the sum of the vectors of the kept tokens of `texts[i]` (the mean's direction: the
        count cancels out in the normalization that follows)."""
        import numpy as np

        limit = self._max_chars
        pieces = [text[:limit] for text in texts] if limit is not None else list(texts)
        id_lists = self._token_ids(pieces)
        lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
        ids = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=int(lengths.sum()))
        if self._unk_token_id is not None:
            kept = ids != self._unk_token_id
            owners = np.repeat(np.arange(len(id_lists), dtype=np.int64), lengths)
            lengths = np.bincount(owners[kept], minlength=len(id_lists))
            ids = ids[kept]
        # Each distinct token of the slice is read and widened to float32 once (widening float16 is
        # the costly step; a slice repeats its tokens many times over).
        distinct, positions = np.unique(ids, return_inverse=True)
        rows = self._numpy_vectors()[distinct].astype(np.float32)
        for index, text_positions in enumerate(np.split(positions, np.cumsum(lengths)[:-1])):
            if text_positions.size:
                out[index] = rows[text_positions].sum(axis=0)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids: through the pure-Python `wordpiece` where it reproduces `tokenizers`,
        the rest through `tokenizers` in one batch. The pure-Python tokenizer remembers the pieces of
        every word it met, and texts repeat their words: on the bench corpus it takes a fraction of the CPU
        that `tokenizers` does."""
        found = self._vocabulary.ids_of_many(texts, self._max_tokens)
        unsupported = [index for index, ids in enumerate(found) if ids is None]
        if unsupported:
            encodings = self._loaded_tokenizer().encode_batch_fast(
                [texts[index] for index in unsupported], add_special_tokens=False
            )
            for index, encoding in zip(unsupported, encodings, strict=True):
                found[index] = encoding.ids
        return cast("list[list[int]]", found)

    def _loaded_tokenizer(self) -> Tokenizer:
        """`tokenizer.json` through `tokenizers`, loaded on first use; UnreadableModelFile naming the file
        when it cannot be read or its vocabulary is not `vocab.txt`'s."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            try:
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            except Exception as error:  # tokenizers raises a bare Exception for a malformed file
                raise UnreadableModelFile(f"{self._tokenizer_path} is not a readable tokenizer: {error}") from error
            # Both tokenizers must give one token one id, or a text would embed differently by its script.
            if not self._vocabulary.same_ids(tokenizer.get_vocab(with_added_tokens=True)):
                raise UnreadableModelFile(
                    f"{self._tokenizer_path} and {VOCABULARY_FILENAME} do not hold the same vocabulary"
                )
            tokenizer.no_padding()
            if self._max_tokens is None:
                tokenizer.no_truncation()
            else:
                tokenizer.enable_truncation(self._max_tokens)
            self._tokenizer = tokenizer
        return self._tokenizer

    def _numpy_vectors(self) -> NDArray[np.floating[Any]]:
        """The whole matrix, memory-mapped, for bulk embedding (NumPy is imported on first use)."""
        if self._vectors is None:
            import numpy as np

            self._vectors = np.load(self._matrix.path, mmap_mode="r", allow_pickle=False)
        return self._vectors


class NpyMatrix:
    """A 2-D little-endian float16/float32 `.npy` file read row by row through `mmap`, without NumPy."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as handle:
            prefix = handle.read(10)
            if prefix[:6] != b"\x93NUMPY":
                raise ValueError(f"{path} is not a .npy file")
            major = prefix[6]
            if major == 1:
                header_length = struct.unpack("<H", prefix[8:10])[0]
                header_start = 10
            else:
                handle.seek(8)
                header_length = struct.unpack("<I", handle.read(4))[0]
                header_start = 12
            handle.seek(header_start)
            header = handle.read(header_length).decode("latin-1")
        # The header is a Python dict literal; the three keys a matrix of ours has are read by pattern
        # (`ast` would cost a search its imports for one line).
        matrix = _MATRIX_HEADER.fullmatch(header.strip())
        descr = matrix.group("descr") if matrix else None
        if matrix is None or descr not in _ROW_FORMATS:
            raise ValueError(f"{path} does not hold a C-order float16/float32 matrix (header {header.strip()!r})")
        self.rows, self.columns = int(matrix.group("rows")), int(matrix.group("columns"))
        self._format = struct.Struct(f"<{self.columns}{_ROW_FORMATS[descr]}")
        self._data_offset = header_start + header_length
        expected = self._data_offset + self.rows * self._format.size
        if path.stat().st_size != expected:
            raise ValueError(f"{path} is {path.stat().st_size} bytes, its header promises {expected}")
        self._map: mmap.mmap | None = None

    def row(self, index: int) -> tuple[float, ...]:
        if self._map is None:
            with self.path.open("rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return self._format.unpack_from(self._map, self._data_offset + index * self._format.size)


_ROW_FORMATS: Final[dict[str, str]] = {"<f2": "e", "<f4": "f"}
_MATRIX_HEADER: Final = re.compile(
    r"\{'descr': '(?P<descr>[<>|]\w+)', 'fortran_order': False, "
    r"'shape': \((?P<rows>\d+), (?P<columns>\d+)\), \}"
)


def load_static_embedder(directory: Path = MODEL_DIRECTORY) -> StaticEmbedder:
    """The model in `directory` (the shipped one by default), its matrix memory-mapped.

    Raises FileNotFoundError when one of its files is missing and ValueError, naming the file, when a
    file is unreadable or disagrees with `model.json` (dims, vocabulary size)."""
    facts = _read_facts(_existing(directory / MODEL_FILENAME))
    vectors_path = _existing(directory / VECTORS_FILENAME)
    tokenizer_path = _existing(directory / TOKENIZER_FILENAME)
    vocabulary_path = _existing(directory / VOCABULARY_FILENAME)
    try:
        matrix = NpyMatrix(vectors_path)
    except (OSError, SyntaxError, ValueError) as error:
        raise ValueError(f"{vectors_path} is not a readable .npy matrix: {error}") from error
    dims, vocab_size = facts["dims"], facts["vocab_size"]
    if matrix.columns != dims:
        raise ValueError(f"{vectors_path} has {matrix.columns} columns but {MODEL_FILENAME} says dims={dims}")
    if matrix.rows != vocab_size:
        raise ValueError(f"{vectors_path} has {matrix.rows} rows but {MODEL_FILENAME} says vocab_size={vocab_size}")
    vocabulary = read_vocabulary(vocabulary_path, _recorded_sha256(facts, VOCABULARY_FILENAME))
    if vocabulary.size != vocab_size:
        raise ValueError(
            f"{vocabulary_path} has {vocabulary.size} tokens, {MODEL_FILENAME} says vocab_size={vocab_size}"
        )
    unk_token_id = facts["unk_token_id"]
    if unk_token_id is not None and not 0 <= unk_token_id < vocab_size:
        raise ValueError(f"{directory / MODEL_FILENAME}: unk_token_id={unk_token_id} is outside the vocabulary")
    return StaticEmbedder(
        space=facts["space"],
        matrix=matrix,
        tokenizer_path=tokenizer_path,
        vocabulary=vocabulary,
        unk_token_id=unk_token_id,
        max_tokens_per_text=facts["max_tokens_per_text"],
        max_chars_per_text=facts["max_chars_per_text"],
    )


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"the static embedding model file {path} is missing")
    return path


def _recorded_sha256(facts: dict[str, Any], filename: str) -> str | None:
    """The digest `model.json` records for `filename`, if it records one."""
    files = facts.get("files")
    recorded = files.get(filename) if isinstance(files, dict) else None
    digest = recorded.get("sha256") if isinstance(recorded, dict) else None
    return digest if isinstance(digest, str) else None


def _read_facts(path: Path) -> dict[str, Any]:
    """The fields of `model.json` the loader relies on, each checked for its type."""
    try:
        facts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON: {error}") from error
    if not isinstance(facts, dict):
        raise ValueError(f"{path} is not a JSON object")
    expected: dict[str, tuple[type, ...]] = {
        "space": (str,),
        "dims": (int,),
        "vocab_size": (int,),
        "unk_token_id": (int, type(None)),
        "max_tokens_per_text": (int, type(None)),
        "max_chars_per_text": (int, type(None)),
        "pooling": (str,),
        "normalize": (bool,),
    }
    for key, types in expected.items():
        value = facts.get(key)
        if key not in facts or not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{path}: field {key!r} is missing or not of type {'/'.join(t.__name__ for t in types)}")
    if facts["dims"] <= 0 or facts["vocab_size"] <= 0:
        raise ValueError(f"{path}: dims and vocab_size must be positive")
    if facts["pooling"] != "mean" or facts["normalize"] is not True:
        raise ValueError(f"{path}: only mean pooling with L2 normalization is supported")
    for key in ("max_tokens_per_text", "max_chars_per_text"):
        if facts[key] is not None and facts[key] <= 0:
            raise ValueError(f"{path}: {key} must be positive or null")
    return facts
