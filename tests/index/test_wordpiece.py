"""The pure-Python WordPiece tokenizer gives the ids `tokenizers` gives with the shipped `tokenizer.json`,
id for id, on every ASCII text and every text of the characters it supports: the bench corpus's memories
and queries, each supported code point in several contexts, edge cases of each stage of the pipeline in
many scripts, and generated text (words built from the vocabulary's own pieces, punctuation, controls,
marks). Text with any other character is refused, and embeds through `tokenizers`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import string
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from memhtml.index.static_embedder import MODEL_DIRECTORY, load_static_embedder
from memhtml.index.wordpiece import SUPPORTED_RANGES, TokenIds, WordPieceVocabulary, read_vocabulary, supports

MAX_TOKENS = 512


@pytest.fixture(scope="module", params=["table", "searched", "indexed", "many-texts"])
def vocabulary(request: pytest.FixtureRequest) -> Iterator[WordPieceVocabulary]:
    """The shipped vocabulary checked whole into a table; read as the model loader reads it (its digest
    verified), answering every lookup through the shipped `vocab.index`; so read without the index,
    answering every lookup by searching the file's text (no table ever built); and so read, then asked
    for many texts at once, which matches each new word by walking its prefixes instead."""
    if request.param == "table":
        yield read_vocabulary(MODEL_DIRECTORY / "vocab.txt")
        return
    if request.param == "many-texts":
        walking = _verified_vocabulary()
        assert walking.ids_of_many([]) == []
        assert walking._prefixes is not None
        yield walking
        return
    if request.param == "indexed":
        indexed = _verified_vocabulary()
        assert indexed._ids._index is not None
        yield indexed
        assert indexed._ids._table is None
        return
    from memhtml.index import wordpiece

    budget = wordpiece._SEARCH_BUDGET_READS
    wordpiece._SEARCH_BUDGET_READS = 10**9
    try:
        searched = _verified_vocabulary(indexed=False)
    finally:
        wordpiece._SEARCH_BUDGET_READS = budget
    assert searched._ids._table is None and searched._ids._index is None
    yield searched
    assert searched._ids._table is None  # every text of the module was tokenized by searching


@pytest.fixture(scope="module")
def reference_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(MODEL_DIRECTORY / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def reference_ids(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


def tokenizer_json() -> dict[str, Any]:
    parsed = json.loads((MODEL_DIRECTORY / "tokenizer.json").read_text(encoding="utf-8"))
    assert isinstance(parsed, dict)
    return parsed


def test_vocab_txt_is_tokenizer_json_s_vocabulary_in_id_order() -> None:
    vocab = tokenizer_json()["model"]["vocab"]
    lines = (MODEL_DIRECTORY / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert {token: position for position, token in enumerate(lines[:-1])} == vocab


def test_the_pipeline_is_the_one_this_tokenizer_reproduces() -> None:
    """If the shipped tokenizer's configuration changes, the pure-Python one must be revisited."""
    parsed = tokenizer_json()
    assert parsed["normalizer"] == {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    }
    assert parsed["pre_tokenizer"] == {"type": "BertPreTokenizer"}
    model = {key: value for key, value in parsed["model"].items() if key != "vocab"}
    assert model == {
        "type": "WordPiece",
        "unk_token": "[UNK]",
        "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 100,
    }
    assert sorted(token["content"] for token in parsed["added_tokens"]) == ["[PAD]", "[UNK]"]
    assert all(not token["normalized"] and not token["single_word"] for token in parsed["added_tokens"])


def corpus_texts() -> Iterator[str]:
    """The bench corpus generator's memories and queries (`scripts/corpus.py`, not a package)."""
    location = Path(__file__).resolve().parents[2] / "scripts" / "corpus.py"
    spec = importlib.util.spec_from_file_location("memhtml_bench_corpus_wordpiece", location)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    if spec.name not in sys.modules:
        sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
        spec.loader.exec_module(module)
    for memory in module.memories(600, seed=7):
        request = memory.request
        yield from (request.title, request.claim or "", *request.bodies)
    yield from module.queries(40, 7)


def test_every_ascii_text_of_the_bench_corpus_tokenizes_the_same(
    vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer
) -> None:
    compared = 0
    for text in corpus_texts():
        if not text.isascii():
            continue
        assert vocabulary.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text), text
        compared += 1
    assert compared > 1500


EDGE_CASES = [
    "",
    " ",
    "INV-2024-001 RTX 4090 v5.8.4",
    "don't stop-believing!!! (really?) [sic] {x} <y> a|b ~c `d` ^e _f_ @g #h $i %j &k *l +m =n /o \\p",
    "snake_case camelCase kebab-case dotted.name path/to/file.html https://example.com/a?b=c&d=e",
    "tab\there, line\nfeed, carriage\rreturn, vertical\x0btab, form\x0cfeed, nul\x00byte, del\x7fete, bell\x07",
    "\x1c\x1d\x1e\x1f separators and unit\x1fseparator",
    "[PAD] [UNK] x[PAD]y [pad] [Unk] [UNK[UNK]] [[PAD]] [PA D]",
    "##ing ## #### a##b",
    "a" * 100,
    "a" * 101,
    "ab" * 60 + " short",
    "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic",
    "xqzjv qqqqq zzzzzzzz wxyzwxyz",
    "unaffable unbelievably untokenizable",
    "commit 3f9a1c0e7b2d4c5a8e6f1b0c9d8e7f6a5b4c3d2e and 9fceb02, sha256:e3b0c44298fc1c149afbf4c8996fb924",
    "a1b2c3d4e5f6g7h8i9j0 zz9zz9zz9 qwertyuiopasdfghjklzxcvbnm",
    "UPPER lower MiXeD 12345 3.14159 1e10 0x1F 007",
    "word " * 700,
    "punctuation" + "." * 600,
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_of_each_stage_tokenize_the_same(
    text: str, vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer
) -> None:
    assert vocabulary.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text)


def vocabulary_pieces() -> list[str]:
    lines = (MODEL_DIRECTORY / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    return [line for line in lines if line.isascii()]


PIECES = vocabulary_pieces()
ascii_character = st.characters(max_codepoint=0x7F, exclude_categories=())
# Words glued from the vocabulary's own entries (`##` continuations included), so greedy matching,
# fallbacks to shorter pieces and unknown tails are all exercised, separated by anything ASCII.
glued_word = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)
ascii_text = st.lists(
    st.one_of(
        glued_word,
        st.text(ascii_character, max_size=8),
        st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x7f", "[PAD]", "[UNK]", "##"]),
        st.sampled_from(string.punctuation),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ascii_text)
def test_generated_ascii_text_tokenizes_the_same(
    text: str, vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer
) -> None:
    assert vocabulary.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text)


@cache
def supported_code_points() -> tuple[int, ...]:
    return tuple(code for first, last in SUPPORTED_RANGES for code in range(first, last + 1) if supports(chr(code)))


# Each supported character glued between letters, doubled, and after a capital with a word after it: every
# rule of the normalizer, the pre-tokenizer and WordPiece meets every character.
CONTEXTS = ("a{0}b", "{0}{0}", "A{0} x")


def test_every_supported_character_tokenizes_the_same_in_context(reference_tokenizer: Tokenizer) -> None:
    vocabulary = read_vocabulary(MODEL_DIRECTORY / "vocab.txt")
    code_points = supported_code_points()
    # The CJK blocks alone hold about 90k assigned code points; Latin, Greek, Cyrillic, the kana and Hangul more.
    assert len(code_points) > 100_000
    for context in CONTEXTS:
        texts = [context.format(chr(code)) for code in code_points]
        expected = reference_tokenizer.encode_batch(texts, add_special_tokens=False)
        differing = [
            f"U+{code:04X} in {context!r}"
            for code, text, encoding in zip(code_points, texts, expected, strict=True)
            if vocabulary.ids(text, MAX_TOKENS) != encoding.ids
        ]
        assert differing == []
        walked = read_vocabulary(MODEL_DIRECTORY / "vocab.txt").ids_of_many(texts, MAX_TOKENS)
        differing = [
            f"U+{code:04X} in {context!r}, many texts at once"
            for code, ids, encoding in zip(code_points, walked, expected, strict=True)
            if ids != encoding.ids
        ]
        assert differing == []


UNICODE_CASES = [
    "la facture a été payée deux fois — à Noël, naïve crème brûlée",
    "Straße ÄÖÜ äöü ß ẞ Œuvre Ĳssel ǅemal",
    "İstanbul ıi İI",
    "ΟΔΟΣ Ὀδυσσεύς σοφός",
    "Tiếng Việt có dấu: Hà Nội, Đà Nẵng",
    "Русский текст: ЁЖИК ёжик, й и",
    "עברית עם ניקוד: שָׁלוֹם",
    "العربية مع التشكيل: مَرْحَبًا ؟،",
    "हिन्दी देवनागरी: नमस्ते",
    "ภาษาไทย สวัสดีครับ",
    "ქართული ენა",
    "我今天吃了苹果。部署失败！",
    "日本語のテキスト：カタカナとひらがな、漢字。",
    "한국어 텍스트: 안녕하세요",
    "ＲＴＸ４０９０ ｶﾀｶﾅ",
    "“Smart quotes” ‘single’ … • – — ‐ ‑ ‒ ― ‹›«» ¿¡",
    "zero\u200bwidth\u200djoiner soft\u00adhyphen\u2060word",
    "emoji 👍🏽 ❤️ 👨\u200d👩\u200d👧 ✓ ✔ ❌ ★ ☃",
    "€100 £5 ¥20 ₹30 ©2026 ™ ° ± × ÷ √ ∞ ≤ ≥ → ⇒ ½ ² ₂",
    "e\u0301\u0327 a\u0308\u0304 o\u0328\u0301 stacked marks",
    "non\u00a0breaking\u2003spaces\u3000ideographic\u2028line\u2029paragraph\u0085next",
    "[UNK]café[PAD]苹果 [unk] [Ünk]",
    "é" * 101,
    "苹" * 600,
]


@pytest.mark.parametrize("text", UNICODE_CASES)
def test_text_in_many_scripts_tokenizes_the_same(
    text: str, vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer
) -> None:
    assert supports(text)
    assert vocabulary.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text)


# The vocabulary's non-ASCII pieces made of supported characters (it holds pieces of other scripts too).
UNICODE_PIECES = [
    piece
    for piece in (MODEL_DIRECTORY / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if piece and not piece.isascii() and supports(piece)
]
supported_character = st.integers(min_value=0, max_value=len(supported_code_points()) - 1).map(
    lambda index: chr(supported_code_points()[index])
)
unicode_text = st.lists(
    st.one_of(
        glued_word,
        st.lists(st.sampled_from(PIECES + UNICODE_PIECES), min_size=1, max_size=4).map("".join),
        st.text(supported_character, max_size=8),
        st.text(ascii_character, max_size=4),
        st.sampled_from([" ", "\t", "\n", "\u00a0", "\u3000", "\u200b", "\u0301", "\u0308", "\ufe0f", "[PAD]", "##"]),
        st.sampled_from([*string.punctuation, "—", "’", "“", "…", "、", "。", "！", "？", "«", "¿"]),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=unicode_text)
def test_generated_text_of_supported_characters_tokenizes_the_same(
    text: str, vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer
) -> None:
    assert vocabulary.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text)


# Outside the supported ranges, or unassigned: U+061D and U+0B55 were assigned after the Unicode tables
# `tokenizers` reads (it keeps them as letters where these rules would split or drop them); Tamil, Javanese
# and private use are not among the ranges; U+0378 is unassigned.
UNSUPPORTED = ["\u061d", "\u0b55", "தமிழ்", "ꦗꦮ", "\ue000", "\u0378", "\U000e0001"]


@pytest.mark.parametrize("character", UNSUPPORTED)
def test_text_with_a_character_it_does_not_reproduce_is_refused_not_guessed(
    character: str, vocabulary: WordPieceVocabulary
) -> None:
    text = f"café {character} 苹果"
    assert not supports(text)
    with pytest.raises(ValueError, match="SUPPORTED_RANGES"):
        vocabulary.ids(text)


def test_supported_text_embeds_as_the_batch_path_does_and_the_rest_through_tokenizers() -> None:
    model = load_static_embedder()
    texts = ("la facture a été payée deux fois", "我今天吃了苹果", "café [UNK] naïve", "தமிழ் café report", "ꦗꦮ café")
    for text in texts:
        single = model.embed_one(text)
        batch = model.embed([text, "padding so the batch path runs"])[0]
        assert sum(a * float(b) for a, b in zip(single, batch, strict=True)) >= 0.99999, text


@pytest.mark.parametrize(
    ("text", "loads_tokenizers"),
    [("la facture a été payée — 苹果 ❤️ Ελληνικά", False), ("deploy failure", False), ("தமிழ் உரை", True)],
)
def test_a_single_text_loads_tokenizers_only_when_it_holds_an_unsupported_character(
    text: str, loads_tokenizers: bool
) -> None:
    # In a fresh process: importing `tokenizers` and loading `tokenizer.json` is what a CLI command saves.
    probe = (
        "import sys\n"
        "from memhtml.index.static_embedder import load_static_embedder\n"
        f"load_static_embedder().embed_one({text!r})\n"
        "print('tokenizers' in sys.modules, 'numpy' in sys.modules)\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == [str(loads_tokenizers), "False"]


def test_a_vocabulary_without_its_special_tokens_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text("[PAD]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="UNK"):
        read_vocabulary(tmp_path / "vocab.txt")
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\nhello\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="twice"):
        read_vocabulary(tmp_path / "vocab.txt")


def test_a_vocabulary_read_with_a_digest_must_have_it(tmp_path: Path) -> None:
    text = "[PAD]\n[UNK]\nhello\n##lo\n"
    (tmp_path / "vocab.txt").write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert read_vocabulary(tmp_path / "vocab.txt", digest).ids("hello hellolo") == [2, 2, 3]
    with pytest.raises(ValueError, match="sha256"):
        read_vocabulary(tmp_path / "vocab.txt", "0" * 64)


def test_a_long_text_of_words_already_met_needs_no_lookup_and_builds_no_table() -> None:
    vocabulary = _verified_vocabulary(indexed=False)
    query = "how do I roll back email-relay"
    assert vocabulary.ids(query) and vocabulary._ids._table is None
    budget_left = vocabulary._ids._search_budget
    document = " ".join([query] * 10)
    assert vocabulary.ids(document) == vocabulary.ids(query) * 10
    # The word memo answered every word: no search read the vocabulary again, and no table was built.
    assert vocabulary._ids._search_budget == budget_left and vocabulary._ids._table is None


def test_searched_lookups_give_way_to_the_table_with_the_same_ids() -> None:
    text = (MODEL_DIRECTORY / "vocab.txt").read_text(encoding="utf-8")
    searched = TokenIds(text)
    table = TokenIds(text).table()
    probes = ["[PAD]", "[UNK]", "the", "##ing", "invoice", "zzzz-not-a-token", "", "a\nb", *list(table)[-3:]]
    answers = [searched.get(token) for token in probes * 20]  # past the searched lookups: the table answers
    assert answers == [table.get(token) for token in probes * 20]
    assert searched._table is not None and searched.size == len(table)


def test_the_word_memo_stays_bounded_and_never_changes_an_answer(
    vocabulary: WordPieceVocabulary, reference_tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memhtml.index import wordpiece

    monkeypatch.setattr(wordpiece, "_CACHED_WORDS", 8)
    fresh = WordPieceVocabulary((MODEL_DIRECTORY / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1])
    for serial in range(40):
        text = f"invoice{serial} paid twice by customer{serial * 7}"
        assert fresh.ids(text, MAX_TOKENS) == reference_ids(reference_tokenizer, text)
        assert len(fresh._words) <= 8


def _verified_vocabulary(*, indexed: bool = True) -> WordPieceVocabulary:
    return read_vocabulary(MODEL_DIRECTORY / "vocab.txt", _shipped_vocabulary_digest(), indexed=indexed)


def _shipped_vocabulary_digest() -> str:
    digest = json.loads((MODEL_DIRECTORY / "model.json").read_text(encoding="utf-8"))["files"]["vocab.txt"]["sha256"]
    assert isinstance(digest, str)
    return digest


def test_a_query_and_a_short_memory_are_tokenized_without_building_the_token_table(
    reference_tokenizer: Tokenizer,
) -> None:
    vocabulary = _verified_vocabulary(indexed=False)
    texts = [
        "how long do we keep database snapshots",
        "The token expiry of auth-gateway is 60 minutes. This was confirmed against the production "
        "dashboards. Source: CHG-base-2691.",
    ]
    for text in texts:
        assert vocabulary.ids(text) == reference_tokenizer.encode(text, add_special_tokens=False).ids
    assert vocabulary._ids._table is None


def test_searches_build_the_token_table_once_they_have_read_the_vocabulary_their_budget_of_times(
    reference_tokenizer: Tokenizer,
) -> None:
    from memhtml.index import wordpiece

    vocabulary = _verified_vocabulary(indexed=False)
    ids = vocabulary._ids
    budget = wordpiece._SEARCH_BUDGET_READS * len(ids._text)
    misses = 0
    while ids._table is None:
        assert ids.get(f"no-such-token-{misses}") is None
        misses += 1
        assert misses <= wordpiece._SEARCH_BUDGET_READS + 1
    # Each miss read the whole text once; the lookup after the budget ran out built the table.
    assert misses == -(-budget // len(ids._text)) + 1
    text = "Memories of many kinds: " + " ".join(f"word{number}" for number in range(40))
    assert vocabulary.ids(text) == reference_tokenizer.encode(text, add_special_tokens=False).ids
