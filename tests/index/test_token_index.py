"""The hashed token index beside the shipped vocabulary (`vocab.index`): it is what its vocabulary builds,
it answers every lookup as the vocabulary's own lines do, and an index that is not its vocabulary's is
never used (lookups then search the text and still give the same ids)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memhtml.index.static_embedder import MODEL_DIRECTORY, load_static_embedder
from memhtml.index.wordpiece import (
    TOKEN_INDEX_SUFFIX,
    TokenIndex,
    build_token_index,
    read_token_index,
    read_vocabulary,
)

VOCABULARY = MODEL_DIRECTORY / "vocab.txt"
SMALL_VOCABULARY = "[PAD]\n[UNK]\nhello\n##lo\nwor\n##ld\n"


def shipped_digest() -> str:
    digest = json.loads((MODEL_DIRECTORY / "model.json").read_text(encoding="utf-8"))["files"]["vocab.txt"]["sha256"]
    assert isinstance(digest, str)
    return digest


def shipped_index() -> TokenIndex:
    index = read_token_index(VOCABULARY.with_suffix(TOKEN_INDEX_SUFFIX), VOCABULARY.read_bytes(), shipped_digest())
    assert index is not None
    return index


def test_the_shipped_index_is_the_one_its_vocabulary_builds() -> None:
    assert VOCABULARY.with_suffix(TOKEN_INDEX_SUFFIX).read_bytes() == build_token_index(VOCABULARY.read_bytes())


def test_every_token_is_found_with_its_line_number_and_nothing_else_is() -> None:
    index = shipped_index()
    tokens = VOCABULARY.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(tokens) == 29_525
    assert [index.get(token) for token in tokens] == list(range(len(tokens)))
    listed = {token: token_id for token_id, token in enumerate(tokens)}
    # Near misses of every kind: a token with a character more or less, cased, prefixed, or joined with the
    # next one; the empty string, line breaks, a lone surrogate and text no vocabulary holds.
    near = [
        *(token + "x" for token in tokens[::7]),
        *(token[:-1] for token in tokens[::5] if len(token) > 1),
        *(token.upper() for token in tokens[::11]),
        *("##" + token for token in tokens[::13]),
        *(first + second for first, second in zip(tokens[::17], tokens[1::17], strict=False)),
        "",
        "\n",
        "the\nand",
        "\ud800",
        "réservé-à-personne",
    ]
    for probe in near:
        assert index.get(probe) == listed.get(probe), probe
    assert sum(probe not in listed for probe in near) > 5_000  # most of them are misses


def test_a_vocabulary_read_as_the_model_loader_reads_it_looks_up_through_its_index(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text(SMALL_VOCABULARY, encoding="utf-8")
    (tmp_path / "vocab.index").write_bytes(build_token_index(SMALL_VOCABULARY.encode("utf-8")))
    digest = hashlib.sha256(SMALL_VOCABULARY.encode("utf-8")).hexdigest()
    vocabulary = read_vocabulary(tmp_path / "vocab.txt", digest)
    assert vocabulary._ids._index is not None
    assert vocabulary.ids("hello hellolo world worx") == [2, 2, 3, 4, 5, 1]
    assert vocabulary._ids._table is None
    unindexed = read_vocabulary(tmp_path / "vocab.txt", digest, indexed=False)
    assert unindexed._ids._index is None
    assert unindexed.ids("hello hellolo world worx") == [2, 2, 3, 4, 5, 1]


def test_the_shipped_model_tokenizes_through_the_index_without_building_the_table() -> None:
    model = load_static_embedder()
    ids = model._vocabulary._ids
    assert ids._index is not None
    text = "The token expiry of auth-gateway is 60 minutes. Source: CHG-base-2691, confirmed by Dana Whitfield."
    vector = model.embed_one(text)
    assert ids._table is None
    assert vector == pytest.approx([float(value) for value in model.embed([text])[0]], abs=1e-6)


def _damaged(index: bytes, how: str) -> bytes | None:
    if how == "missing":
        return None
    if how == "truncated":
        return index[:-4]
    if how == "too short for its header":
        return index[:40]
    if how == "another magic":
        return b"XXXXXXXX" + index[8:]
    if how == "a slot changed":
        return index[:-8] + bytes([index[-8] ^ 0x01]) + index[-7:]
    if how == "another vocabulary's":
        return build_token_index((SMALL_VOCABULARY + "extra\n").encode("utf-8"))
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    ["missing", "truncated", "too short for its header", "another magic", "a slot changed", "another vocabulary's"],
)
def test_an_index_that_is_not_its_vocabularys_is_not_used(tmp_path: Path, how: str) -> None:
    vocabulary_bytes = SMALL_VOCABULARY.encode("utf-8")
    (tmp_path / "vocab.txt").write_bytes(vocabulary_bytes)
    damaged = _damaged(build_token_index(vocabulary_bytes), how)
    if damaged is not None:
        (tmp_path / "vocab.index").write_bytes(damaged)
    digest = hashlib.sha256(vocabulary_bytes).hexdigest()
    assert read_token_index(tmp_path / "vocab.index", vocabulary_bytes, digest) is None
    vocabulary = read_vocabulary(tmp_path / "vocab.txt", digest)
    assert vocabulary._ids._index is None
    assert vocabulary.ids("hello hellolo world") == [2, 2, 3, 4, 5]


def test_an_index_whose_offsets_do_not_end_where_its_vocabulary_does_is_not_used(tmp_path: Path) -> None:
    vocabulary_bytes = SMALL_VOCABULARY.encode("utf-8")
    # The index of a vocabulary one byte longer, its header naming this vocabulary's digest.
    other = build_token_index(SMALL_VOCABULARY.replace("wor\n", "word\n").encode("utf-8"))
    relabelled = other[:8] + hashlib.sha256(vocabulary_bytes).digest() + other[40:]
    (tmp_path / "vocab.index").write_bytes(relabelled)
    digest = hashlib.sha256(vocabulary_bytes).hexdigest()
    assert read_token_index(tmp_path / "vocab.index", vocabulary_bytes, digest) is None


def test_a_token_listed_twice_cannot_be_indexed() -> None:
    with pytest.raises(ValueError, match="'hello' twice"):
        build_token_index(b"[PAD]\n[UNK]\nhello\nworld\nhello\n")


def test_every_probe_ends_whatever_the_number_of_tokens(tmp_path: Path) -> None:
    from memhtml.index.wordpiece import _INDEX_HEADER

    # Twice as many slots as tokens at least, a power of two: an empty slot always ends a miss's probe.
    for count in (0, 1, 3, 4, 5, 1000):
        vocabulary = "".join(f"t{number}\n" for number in range(count)).encode("utf-8")
        built = build_token_index(vocabulary)
        slots = (len(built) - _INDEX_HEADER.size) // 4 - (count + 1)
        assert slots >= 2 * count and slots & (slots - 1) == 0
        (tmp_path / "vocab.index").write_bytes(built)
        index = read_token_index(tmp_path / "vocab.index", vocabulary, hashlib.sha256(vocabulary).hexdigest())
        assert index is not None
        assert [index.get(f"t{number}") for number in range(count)] == list(range(count))
        assert [index.get(f"u{number}") for number in range(count)] == [None] * count
