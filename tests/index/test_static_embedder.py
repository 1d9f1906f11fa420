"""The shipped static embedding model: the loader reproduces model2vec's own vectors, rows are unit
length (or zero), the files are the ones model.json records, and a broken model directory is refused
with an error naming the file."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memhtml.contracts.errors import ModelUnavailable
from memhtml.index import static_embedder
from memhtml.index.embedders import ShippedStaticEmbedder
from memhtml.index.static_embedder import (
    MODEL_DIRECTORY,
    NpyMatrix,
    StaticEmbedder,
    UnreadableModelFile,
    load_static_embedder,
)

PARITY_MIN_COSINE = 0.9999


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return load_static_embedder()


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    parsed = json.loads((MODEL_DIRECTORY / "reference_vectors.json").read_text(encoding="utf-8"))
    assert isinstance(parsed, dict)
    return parsed


@pytest.fixture(scope="module")
def model_facts() -> dict[str, Any]:
    parsed = json.loads((MODEL_DIRECTORY / "model.json").read_text(encoding="utf-8"))
    assert isinstance(parsed, dict)
    return parsed


def reference_matrix(reference: dict[str, Any]) -> tuple[list[str], list[str], np.ndarray]:
    sentences = reference["sentences"]
    ids = [entry["id"] for entry in sentences]
    texts = [entry["text"] for entry in sentences]
    return ids, texts, np.asarray([entry["vector"] for entry in sentences], dtype=np.float64)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_loader_reproduces_model2vec_for_every_reference_sentence(
    embedder: StaticEmbedder, reference: dict[str, Any]
) -> None:
    ids, texts, expected = reference_matrix(reference)
    actual = embedder.embed(texts).astype(np.float64)
    expected_zero = {name for name, row in zip(ids, expected, strict=True) if not row.any()}
    # The reference covers both kinds of row, and names its texts without a known token.
    assert expected_zero == set(reference["zero_rows"])
    assert 0 < len(expected_zero) < len(ids)
    mismatches: list[tuple[str, object]] = []
    for name, want, got in zip(ids, expected, actual, strict=True):
        if name in expected_zero:
            if got.any():
                mismatches.append((name, "model2vec gives a zero row"))
        elif not got.any():
            mismatches.append((name, "the loader gives a zero row"))
        elif cosine(want, got) < PARITY_MIN_COSINE:
            mismatches.append((name, round(cosine(want, got), 6)))
    assert mismatches == []


def test_the_truncation_probes_are_in_the_reference(reference: dict[str, Any]) -> None:
    # Texts longer than the token limit and the character limit: the parity test above covers both cuts.
    by_id = {entry["id"]: entry["text"] for entry in reference["sentences"]}
    facts = json.loads((MODEL_DIRECTORY / "model.json").read_text(encoding="utf-8"))
    assert len(by_id["beyond-character-limit"]) > facts["max_chars_per_text"]
    assert set(reference["truncation_probes"]) <= set(by_id)


def test_rows_are_unit_length_float32_of_the_model_dims(embedder: StaticEmbedder, reference: dict[str, Any]) -> None:
    _, texts, _ = reference_matrix(reference)
    rows = embedder.embed(texts)
    assert rows.shape == (len(texts), embedder.dims)
    assert rows.dtype == np.float32
    norms = np.linalg.norm(rows, axis=1)
    assert np.all((np.abs(norms - 1.0) < 1e-5) | (norms == 0.0))
    assert np.count_nonzero(norms) == len(texts) - len(reference["zero_rows"])


def test_the_model_names_its_space_and_dims(embedder: StaticEmbedder, model_facts: dict[str, Any]) -> None:
    assert embedder.space == "minilm-l6-v2-static@256" == model_facts["space"]
    assert embedder.dims == 256 == model_facts["dims"]


def test_an_empty_list_gives_an_empty_matrix(embedder: StaticEmbedder) -> None:
    rows = embedder.embed([])
    assert rows.shape == (0, embedder.dims)
    assert rows.dtype == np.float32


def test_a_text_without_known_tokens_is_a_zero_row(embedder: StaticEmbedder) -> None:
    rows = embedder.embed(["", "🦄🦄", "a normal sentence about invoices"])
    assert not rows[0].any()
    assert not rows[1].any()
    assert rows[2].any()


def test_one_string_is_refused_rather_than_embedded_character_by_character(embedder: StaticEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("a single string")


def test_a_paraphrase_scores_above_an_unrelated_pair_as_in_model2vec(
    embedder: StaticEmbedder, reference: dict[str, Any]
) -> None:
    ids, texts, expected = reference_matrix(reference)
    actual = embedder.embed(texts).astype(np.float64)
    row = {name: index for index, name in enumerate(ids)}

    def cosines(matrix: np.ndarray, kind: str) -> list[float]:
        return [cosine(matrix[row[a]], matrix[row[b]]) for a, b in reference["pairs"][kind]]

    assert reference["pairs"]["paraphrase"]
    assert reference["pairs"]["unrelated"]
    for kind in ("paraphrase", "negation_twin", "unrelated"):
        assert cosines(actual, kind) == pytest.approx(cosines(expected, kind), abs=1e-3)
    # The expectation comes from model2vec's vectors: every paraphrase above every unrelated pair there...
    for paraphrase, unrelated in product(cosines(expected, "paraphrase"), cosines(expected, "unrelated")):
        assert paraphrase > unrelated
    # ...and so with the loader.
    for paraphrase, unrelated in product(cosines(actual, "paraphrase"), cosines(actual, "unrelated")):
        assert paraphrase > unrelated


def test_slicing_does_not_change_the_rows(
    embedder: StaticEmbedder, reference: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, texts, _ = reference_matrix(reference)
    many = texts * 5
    whole = embedder.embed(many)
    # Tiny slices: the texts straddle slice boundaries, and the slices' distinct tokens differ.
    monkeypatch.setattr(static_embedder, "TEXTS_PER_SLICE", 3)
    pieces = embedder.embed(many)
    np.testing.assert_allclose(pieces, whole, atol=1e-6)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    np.testing.assert_allclose(alone, whole[: len(texts)], atol=1e-6)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_shipped_files_are_the_ones_model_json_records(model_facts: dict[str, Any]) -> None:
    recorded = model_facts["files"]
    assert set(recorded) == {"vectors.npy", "tokenizer.json", "vocab.txt"}
    for name, record in recorded.items():
        path = MODEL_DIRECTORY / name
        assert sha256(path) == record["sha256"], name
        assert path.stat().st_size == record["bytes"], name


def test_the_model_ships_its_license_and_attribution(model_facts: dict[str, Any]) -> None:
    license_text = (MODEL_DIRECTORY / "LICENSE").read_text(encoding="utf-8")
    notice = (MODEL_DIRECTORY / "NOTICE").read_text(encoding="utf-8")
    assert "Apache License" in license_text
    assert "Version 2.0, January 2004" in license_text
    assert "all-MiniLM-L6-v2" in notice
    assert "Apache" in notice
    assert model_facts["base_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert sum(path.stat().st_size for path in MODEL_DIRECTORY.iterdir()) < 17 * 1024 * 1024


def test_loading_and_embedding_need_neither_model2vec_nor_torch_and_a_query_needs_no_numpy_or_tokenizers() -> None:
    probe = (
        "import sys\n"
        "import memhtml.index.static_embedder as module\n"
        "cheap = not ({'numpy', 'tokenizers'} & set(sys.modules))\n"
        "module.load_static_embedder().embed_one('an invoice was paid twice')\n"
        "query = not ({'numpy', 'tokenizers'} & set(sys.modules))\n"
        "module.load_static_embedder().embed(['an invoice was paid twice'])\n"
        "heavy = sorted({'model2vec', 'torch', 'huggingface_hub', 'transformers'} & set(sys.modules))\n"
        "print(cheap, query, heavy)\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "True True []"


def model_copy(tmp_path: Path, **changes: Any) -> Path:
    directory = tmp_path / "model"
    shutil.copytree(MODEL_DIRECTORY, directory)
    facts = json.loads((directory / "model.json").read_text(encoding="utf-8"))
    facts.update(changes)
    (directory / "model.json").write_text(json.dumps(facts), encoding="utf-8")
    return directory


def test_a_copy_of_the_model_loads_and_embeds_the_same(embedder: StaticEmbedder, tmp_path: Path) -> None:
    copy = load_static_embedder(model_copy(tmp_path))
    np.testing.assert_array_equal(copy.embed(["paid twice"]), embedder.embed(["paid twice"]))


@pytest.mark.parametrize("missing", ["model.json", "vectors.npy", "tokenizer.json", "vocab.txt"])
def test_a_missing_file_is_named(tmp_path: Path, missing: str) -> None:
    directory = model_copy(tmp_path)
    (directory / missing).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(missing)):
        load_static_embedder(directory)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"dims": 384}, "vectors.npy"),
        ({"vocab_size": 30522}, "vectors.npy"),
        ({"space": None}, "model.json"),
        ({"pooling": "cls"}, "model.json"),
        ({"max_tokens_per_text": 0}, "model.json"),
    ],
)
def test_a_model_json_that_disagrees_is_refused(tmp_path: Path, changes: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        load_static_embedder(model_copy(tmp_path, **changes))


def test_a_corrupt_tokenizer_is_refused_naming_it_when_first_needed(tmp_path: Path) -> None:
    # tokenizer.json is read on first need (a text with a character the pure-Python tokenizer does not
    # reproduce, alone or in a batch): ASCII or French text never pays for it, and a corrupt file is
    # refused then, naming it, as the loader would have.
    directory = model_copy(tmp_path)
    (directory / "tokenizer.json").write_text("{not json", encoding="utf-8")
    model = load_static_embedder(directory)
    assert any(model.embed_one("an invoice was paid twice"))
    assert any(model.embed_one("la facture a été payée deux fois"))
    assert model.embed(["an invoice", "was paid twice"]).any()
    with pytest.raises(UnreadableModelFile, match=re.escape("tokenizer.json")):
        model.embed(["an invoice", "தமிழ் invoice"])
    with pytest.raises(UnreadableModelFile, match=re.escape("tokenizer.json")):
        model.embed_one("தமிழ் invoice")


def test_an_unreadable_tokenizer_is_the_model_unavailable_error_of_a_load(tmp_path: Path) -> None:
    directory = model_copy(tmp_path)
    (directory / "tokenizer.json").write_text("{not json", encoding="utf-8")
    embedder = ShippedStaticEmbedder(load_static_embedder(directory))
    with pytest.raises(ModelUnavailable, match=re.escape("tokenizer.json")):
        embedder.embed_documents(["a"] * 39 + ["தமிழ்"])
    with pytest.raises(ModelUnavailable, match=re.escape("tokenizer.json")):
        embedder.embed_query("தமிழ் payée deux fois")


def test_a_vocabulary_that_disagrees_is_refused_naming_it(tmp_path: Path) -> None:
    directory = model_copy(tmp_path)
    lines = (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()
    (directory / "vocab.txt").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape("vocab.txt")):
        load_static_embedder(directory)


def test_a_matrix_that_is_not_a_float_matrix_is_refused(tmp_path: Path) -> None:
    directory = model_copy(tmp_path)
    np.save(directory / "vectors.npy", np.zeros(256, dtype=np.float16))
    with pytest.raises(ValueError, match=re.escape("vectors.npy")):
        load_static_embedder(directory)


def test_one_text_without_numpy_matches_the_batch_path() -> None:
    # The query path reads token rows with struct; the bulk path widens them with NumPy: one model.
    model = load_static_embedder()
    reference = json.loads((MODEL_DIRECTORY / "reference_vectors.json").read_text(encoding="utf-8"))
    texts = [item["text"] for item in reference["sentences"]]
    batch = model.embed(texts)
    for text, row in zip(texts, batch, strict=True):
        single = model.embed_one(text)
        assert len(single) == model.dims
        if not any(row):
            assert not any(single), text
            continue
        cosine = sum(a * float(b) for a, b in zip(single, row, strict=True))
        assert cosine >= 0.99999, text


def test_a_tokenizer_whose_vocabulary_is_not_vocab_txt_is_refused_when_first_needed(tmp_path: Path) -> None:
    # Same size, two ids swapped: ASCII text (vocab.txt) and other text (tokenizer.json) would disagree.
    directory = model_copy(tmp_path)
    tokenizer = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tokenizer["model"]["vocab"]
    vocab["twice"], vocab["paid"] = vocab["paid"], vocab["twice"]
    (directory / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    model = load_static_embedder(directory)
    with pytest.raises(UnreadableModelFile, match="same vocabulary"):
        model.embed(["an invoice", "was paid twice", "தமிழ்"])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_matrix_numpy_wrote_is_read_row_by_row(tmp_path: Path, dtype: str) -> None:
    matrix = np.arange(12, dtype=dtype).reshape(3, 4) / 4
    np.save(tmp_path / "m.npy", matrix)
    read = NpyMatrix(tmp_path / "m.npy")
    assert (read.rows, read.columns) == (3, 4)
    assert [read.row(index) for index in range(3)] == [tuple(float(x) for x in row) for row in matrix]


@pytest.mark.parametrize(
    "array",
    [
        np.zeros((3, 4)),  # float64
        np.asfortranarray(np.zeros((3, 4), dtype="float32")),
        np.zeros(3, dtype="float32"),
        np.zeros((2, 3, 4), dtype="float32"),
        np.zeros((3, 4), dtype="int32"),
    ],
    ids=["float64", "fortran-order", "one-dimensional", "three-dimensional", "integers"],
)
def test_an_array_that_is_not_a_c_order_float_matrix_is_refused(tmp_path: Path, array: np.ndarray) -> None:
    np.save(tmp_path / "a.npy", array)
    with pytest.raises(ValueError, match="does not hold a C-order float16/float32 matrix"):
        NpyMatrix(tmp_path / "a.npy")


def test_a_batch_tokenized_in_python_where_it_can_embeds_exactly_as_through_tokenizers_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bulk embedding tokenizes each text the pure-Python tokenizer reproduces with it, and only the rest
    through `tokenizers`: every row must be the one a batch wholly through `tokenizers` gives, bit for bit."""
    hashes = [hashlib.sha256(str(number).encode()).hexdigest() for number in range(60)]
    texts = [
        *(f"commit {hashes[number]} fixed INV-2024-{number:03d} in v5.8.{number}" for number in range(60)),
        "la facture a été payée deux fois — 苹果",
        "தமிழ் café report",  # not reproduced by the pure-Python tokenizer
        "",
        "[UNK] unaffable " + "word " * 700,  # past the token limit
    ]
    model = load_static_embedder()
    rows = model.embed(texts)
    through_tokenizers = load_static_embedder()
    monkeypatch.setattr(
        through_tokenizers._vocabulary, "ids_of_many", lambda batch, max_tokens=None: [None] * len(batch)
    )
    np.testing.assert_array_equal(rows, through_tokenizers.embed(texts))
    supported_only = load_static_embedder()
    assert supported_only.embed(texts[:60]).shape == (60, supported_only.dims)
    assert supported_only._tokenizer is None  # no text of that batch needed `tokenizers`
