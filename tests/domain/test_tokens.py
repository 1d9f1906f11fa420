"""The shared tokenizer: identifiers whole and by parts, CJK characters and pairs, folding, quoted phrases."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.tokens import (
    MARK_WINDOWS,
    MAX_TOKEN_LENGTH,
    document_length,
    document_terms,
    fold_for_matching,
    parse_query,
    phrase_matches,
    phrase_words,
)


def matches(query: str, document: str) -> bool:
    """The all-terms rule the index applies: every query term is a term of the document."""
    terms = parse_query(query).terms
    return bool(terms) and set(terms) <= set(document_terms(document))


# --- identifiers, numbers, Latin words -------------------------------------------------------


def test_an_identifier_is_a_term_whole_and_by_each_part() -> None:
    assert document_terms("Paid INV-2024-001 today") == {
        "paid": 1,
        "inv-2024-001": 1,
        "inv": 1,
        "2024": 1,
        "001": 1,
        "today": 1,
    }
    assert parse_query("INV-2024-001").terms == ("inv-2024-001", "inv", "2024", "001")
    assert matches("INV-2024-001", "Paid INV-2024-001 today")
    assert matches("2024", "Paid INV-2024-001 today")
    assert matches("inv 001", "Paid INV-2024-001 today")
    # The whole identifier is a term of its own, so its parts scattered elsewhere do not match it.
    assert not matches("INV-2024-001", "inv 2024 and 001")


def test_a_version_string_is_found_as_typed_and_by_its_parts() -> None:
    terms = document_terms("Upgraded to v5.8.4.")
    assert terms == {"upgraded": 1, "to": 1, "v5.8.4": 1, "v5": 1, "8": 1, "4": 1, "v": 1, "5": 1, "5.8.4": 1}
    assert matches("v5.8.4", "Upgraded to v5.8.4.")
    assert matches("v5", "Upgraded to v5.8.4.")
    assert matches("5.8.4", "Upgraded to v5.8.4.")
    assert not matches("v5.8.5", "Upgraded to v5.8.4.")
    assert not matches("5.8.5", "Upgraded to v5.8.4.")


def test_a_version_glued_to_its_name_is_found_by_the_version_alone() -> None:
    document = "The render box runs Python3.11 with CUDA12.4."
    assert {"python3.11", "python3", "python", "3", "11", "3.11", "cuda12.4", "cuda", "12", "12.4"} <= set(
        document_terms(document)
    )
    assert parse_query("python 3.11").terms == ("python", "3.11", "3", "11")
    assert matches("3.11", document)
    assert matches("python 3.11", document)
    assert matches("cuda 12.4", document)
    # A lone digit elsewhere is not the version: "3 brokers" lacks the term 3.11.
    assert not matches("3.11", "The kafka cluster has 3 brokers and 11 topics.")


def test_letters_and_digits_glued_in_one_word_are_found_by_each_run() -> None:
    assert document_terms("rtx4090") == {"rtx4090": 1, "rtx": 1, "4090": 1}
    assert parse_query("RTX4090").terms == ("rtx4090", "rtx", "4090")
    assert matches("rtx", "the rtx4090 box")
    assert matches("4090", "the rtx4090 box")
    assert matches("k8s", "runs on k8s")
    # Only a word mixing both is split, and a stretch of digit groups comes only with such a word.
    assert document_terms("Paid INV-2024-001 today") == {
        "paid": 1, "inv-2024-001": 1, "inv": 1, "2024": 1, "001": 1, "today": 1
    }  # fmt: skip
    assert set(document_terms("x86_64")) == {"x86_64", "x86", "64", "x", "86", "86_64"}


def test_rtx_4090_is_found_as_typed_and_digits_are_kept() -> None:
    document = "The box has an NVIDIA RTX 4090 card."
    assert {"rtx", "4090"} <= set(document_terms(document))
    assert parse_query("RTX 4090").terms == ("rtx", "4090")
    assert matches("RTX 4090", document)
    assert matches("4090", document)
    query = parse_query('"RTX 4090"')
    assert query.normalized_phrase_texts == ["rtx 4090"]
    assert all(phrase_matches(phrase, document) for phrase in query.normalized_phrase_texts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("snake_case_name", {"snake_case_name", "snake", "case", "name"}),
        ("meet at 12:30", {"meet", "at", "12:30", "12", "30"}),
        ("src/memhtml/domain", {"src/memhtml/domain", "src", "memhtml", "domain"}),
        # A connector needs a letter or digit on both sides: sentence ends and doubled marks split.
        ("The end. Next", {"the", "end", "next"}),
        ("a--b", {"a", "b"}),
        ("see https://example.com/a", {"see", "https", "example.com/a", "example", "com", "a"}),
        # Only -._/: connect; other punctuation separates.
        ("a+b a@b a,b", {"a", "b"}),
    ],
)
def test_the_compound_rule(text: str, expected: set[str]) -> None:
    assert set(document_terms(text)) == expected


def test_repeated_words_count_and_the_length_is_the_sum_of_frequencies() -> None:
    terms = document_terms("the cat and the hat-box, the end")
    assert terms["the"] == 3
    assert terms["hat-box"] == 1
    # Eight words (hat and box among them) plus the identifier hat-box itself.
    assert document_length(terms) == 9


def test_nothing_searchable_gives_no_terms() -> None:
    for text in ("", "   ", "!!! ... --- ///", "“”—…", "🙂🎉"):
        assert document_terms(text) == {}
        query = parse_query(text)
        assert query.terms == ()
        assert query.is_empty


# --- CJK --------------------------------------------------------------------------------------


def test_chinese_text_gives_every_character_and_every_overlapping_pair() -> None:
    assert set(document_terms("我今天吃了苹果")) == {
        *"我今天吃了苹果",
        "我今",
        "今天",
        "天吃",
        "吃了",
        "了苹",
        "苹果",
    }
    assert set(document_terms("苹果")) == {"苹", "果", "苹果"}


def test_a_cjk_query_of_two_or_more_characters_needs_them_side_by_side() -> None:
    assert parse_query("苹果").terms == ("苹果",)
    assert parse_query("苹").terms == ("苹",)
    assert parse_query("吃苹果").terms == ("吃苹", "苹果")
    assert matches("苹果", "我今天吃了苹果")
    assert matches("苹", "我今天吃了苹果")
    # Both characters are present, but apart: the pair is not.
    assert not matches("苹果", "苹是果")


def test_japanese_kana_and_kanji() -> None:
    document = "東京タワーに行きました"
    assert {"タ", "ワ", "ー", "タワ", "ワー", "東京", "行き"} <= set(document_terms(document))
    assert matches("タワー", document)
    assert matches("東京", document)
    assert matches("ひらがな", "これはひらがなです")
    assert not matches("大阪", document)


def test_korean_words_are_found_inside_longer_words() -> None:
    assert matches("서울", "서울에서 만나요")
    assert set(document_terms("서울")) == {"서", "울", "서울"}
    assert not matches("부산", "서울에서 만나요")


def test_cjk_next_to_latin_and_digits_splits_into_both_kinds() -> None:
    assert set(document_terms("iPhone15手机")) == {"iphone15", "iphone", "15", "手", "机", "手机"}
    assert set(document_terms("2024年")) == {"2024", "年"}
    # A connector joins Latin words only; it never glues CJK to an identifier.
    assert set(document_terms("A-株")) == {"a", "株"}


def test_cjk_punctuation_separates_runs() -> None:
    assert "果然" not in document_terms("苹果。然后")
    assert "果・然" not in document_terms("苹果・然后")
    assert set(document_terms("苹果・然后")) == {"苹", "果", "苹果", "然", "后", "然后"}


# --- normalization ------------------------------------------------------------------------------


def test_full_width_letters_and_digits_fold_to_ascii() -> None:
    assert document_terms("ＲＴＸ４０９０") == {"rtx4090": 1, "rtx": 1, "4090": 1}
    assert matches("rtx4090", "ＲＴＸ４０９０")
    assert matches("ＲＴＸ４０９０", "rtx4090")
    assert matches("ＲＴＸ　４０９０", "RTX 4090")  # the ideographic space separates too


def test_case_folding_matches_sharp_s_with_double_s() -> None:
    # str.casefold maps ß to "ss" (str.lower would keep ß), so all three spellings meet.
    assert fold_for_matching("Straße") == "strasse"
    assert document_terms("Straße") == document_terms("STRASSE") == document_terms("strasse") == {"strasse": 1}
    assert matches("STRASSE", "Die Straße ist lang")


def test_accents_fold_off_latin_letters_only() -> None:
    assert document_terms("Café naïve Ångström") == {"cafe": 1, "naive": 1, "angstrom": 1}
    assert matches("cafe", "Café")
    assert matches("café", "CAFE")
    assert fold_for_matching("İstanbul") == "istanbul"
    # On Cyrillic the breve makes a different letter: й stays й, so "мой" does not turn into "мои".
    assert document_terms("мой") == {"мой": 1}
    assert not matches("мои", "мой")


def test_language_model_hyphens_and_soft_hyphens() -> None:
    assert document_terms("INV\u20112024\u2011001") == document_terms("INV-2024-001")
    assert document_terms("hy\u00adphen") == {"hyphen": 1}


def test_combining_marks_stay_inside_their_word() -> None:
    # Python's \w leaves vowel signs and viramas out; the tokenizer keeps Hindi words whole.
    assert document_terms("हिन्दी किताब") == {"हिन्दी": 1, "किताब": 1}
    assert phrase_words("ภาษาไทย") == ["ภาษาไทย"]


def test_variation_selectors_do_not_change_a_word() -> None:
    assert document_terms("1\ufe0f") == {"1": 1}


def test_the_mark_windows_hold_every_combining_mark_but_the_ones_left_out() -> None:
    deliberately_left_out = {*range(0xFE00, 0xFE10), *range(0x302A, 0x3030), 0x3099, 0x309A}
    outside = [
        code_point
        for code_point in range(0x10000)
        if unicodedata.category(chr(code_point)) in ("Mn", "Mc")
        and not any(start <= code_point < end for start, end in MARK_WINDOWS)
    ]
    assert set(outside) <= deliberately_left_out


# --- length cap -------------------------------------------------------------------------------


def test_tokens_are_capped_and_a_capped_token_still_matches_itself() -> None:
    blob = "x" * 10_000
    assert document_terms(blob) == {"x" * MAX_TOKEN_LENGTH: 1}
    long_identifier = "-".join(["segment"] * 20)
    terms = document_terms(long_identifier)
    assert terms == {long_identifier[:MAX_TOKEN_LENGTH]: 1, "segment": 20}
    assert matches(blob, f"prefix {blob} suffix")
    assert matches(long_identifier, long_identifier)


# --- quoted phrases -----------------------------------------------------------------------------


def test_balanced_quotes_keep_a_phrase() -> None:
    query = parse_query('cards with "RTX 4090" inside')
    assert query.terms == ("cards", "with", "rtx", "4090", "inside")
    assert len(query.phrases) == 1
    phrase = query.phrases[0]
    assert phrase.typed == "RTX 4090"
    assert phrase.normalized_text == "rtx 4090"
    assert phrase.terms == ("rtx", "4090")
    assert query.normalized_phrase_texts == ["rtx 4090"]


def test_two_phrases_and_a_cjk_phrase() -> None:
    query = parse_query('"error budget" and "苹果手机"')
    assert query.normalized_phrase_texts == ["error budget", "苹 果 手 机"]
    assert query.phrases[1].terms == ("苹果", "果手", "手机")
    assert query.terms == ("error", "budget", "and", "苹果", "果手", "手机")


def test_an_unbalanced_quote_is_ignored() -> None:
    assert parse_query('RTX "4090').terms == ("rtx", "4090")
    assert parse_query('RTX "4090').phrases == ()
    # Quotes pair left to right; the third one has no partner.
    query = parse_query('"out of memory" "kernel')
    assert query.normalized_phrase_texts == ["out of memory"]
    assert query.terms == ("out", "of", "memory", "kernel")
    # An unpaired quote separates like a space: it never glues two words together.
    assert parse_query('abc"def').terms == ("abc", "def")


def test_only_ascii_double_quotes_make_phrases() -> None:
    assert parse_query("“RTX 4090”").phrases == ()
    assert parse_query("＂RTX 4090＂").phrases == ()


def test_an_empty_or_punctuation_only_phrase_is_dropped() -> None:
    assert parse_query('"" hello "..."').phrases == ()
    assert parse_query('"" hello "..."').terms == ("hello",)


@pytest.mark.parametrize(
    ("phrase", "document", "expected"),
    [
        ("RTX 4090", "an RTX 4090 card", True),
        ("RTX 4090", "an rtx-4090 card", True),  # connectors between words do not matter
        ("RTX 4090", "an RTX_4090 card", True),
        ("RTX 4090", "RTX\n\t4090", True),
        ("rtx 4090", "ＲＴＸ　４０９０", True),
        ("RTX 4090", "an RTX4090 card", False),  # one word is not two
        ("RTX 4090", "RTX 3090 and 4090", False),
        ("RTX 4090", "4090 RTX", False),
        ("RTX 409", "RTX 4090", False),  # whole words only, never a prefix
        ("TX 4090", "RTX 4090", False),
        ("out of memory", "ran out of memory again", True),
        ("out of memory", "ran out of the memory", False),
        ("苹果", "我今天吃了苹果", True),
        ("苹果", "苹是果", False),
        ("INV-2024-001", "invoice INV-2024-001 paid", True),
        ("", "anything", True),  # a phrase with no words never filters anything out
    ],
)
def test_phrase_matches(phrase: str, document: str, expected: bool) -> None:
    assert phrase_matches(phrase, document) is expected


# --- properties ---------------------------------------------------------------------------------

MIXED_ALPHABET = st.sampled_from(
    [
        *"abcXYZ0129",
        *"-._/:",
        " ",
        "\n",
        '"',
        ",",
        "!",
        *"苹果我東京タワー서울ー・。",
        *"ＲＴＸ４",
        "é",
        "\u0301",
        "ß",
        "İ",
        *"हिन्",
        "\u2011",
        "\u00ad",
        "\ufe0f",
        "🙂",
    ]
)
MIXED_TEXT = st.lists(MIXED_ALPHABET, max_size=40).map("".join)
ANY_TEXT = st.one_of(MIXED_TEXT, st.text(max_size=60))


@settings(max_examples=200)
@given(ANY_TEXT)
def test_a_document_always_matches_a_query_made_of_its_own_words(text: str) -> None:
    assert set(parse_query(text).terms) <= set(document_terms(text))


@settings(max_examples=200)
@given(ANY_TEXT)
def test_the_tokenizer_is_deterministic_and_tokens_are_never_empty_nor_over_the_cap(text: str) -> None:
    terms = document_terms(text)
    assert terms == document_terms(text)
    assert parse_query(text) == parse_query(text)
    every_token = [*terms, *parse_query(text).terms, *phrase_words(text)]
    assert all(0 < len(token) <= MAX_TOKEN_LENGTH for token in every_token)
    assert all(count > 0 for count in terms.values())
    assert document_length(terms) >= len(terms)


@settings(max_examples=200)
@given(ANY_TEXT)
def test_folding_is_idempotent_and_the_folded_text_tokenizes_the_same(text: str) -> None:
    folded = fold_for_matching(text)
    assert fold_for_matching(folded) == folded
    assert document_terms(folded) == document_terms(text)


@settings(max_examples=200)
@given(ANY_TEXT)
def test_a_text_contains_its_own_phrase_and_a_normalized_phrase_reads_back_the_same(text: str) -> None:
    assert phrase_matches(text, text)
    normalized = " ".join(phrase_words(text))
    assert phrase_words(normalized) == phrase_words(text)


@settings(max_examples=200)
@given(MIXED_TEXT, MIXED_TEXT, MIXED_TEXT)
def test_a_phrase_inside_a_document_matches_it(before: str, phrase: str, after: str) -> None:
    assert phrase_matches(phrase, f"{before} {phrase} {after}")


def test_a_querys_stop_words_are_not_search_terms_unless_nothing_else_is_left() -> None:
    from memhtml.domain.tokens import content_terms

    assert content_terms(parse_query("What did Caroline research?")).terms == ("caroline", "research")
    assert content_terms(parse_query("to be or not to be")).terms == ("not",)  # a negation is evidence
    assert content_terms(parse_query("what is it")).terms == ("what", "is", "it")  # nothing else: all kept
    quoted = content_terms(parse_query('"the who" on tour'))
    assert quoted.terms == ("the", "who", "tour") and quoted.normalized_phrase_texts == ["the who"]


# --- the str.split shortcuts of folded ASCII text ----------------------------------------------

# Folded ASCII text with every kind of character the patterns tell apart: word characters, each
# connector (runs of them, at edges), other punctuation and every ASCII whitespace and control.
FOLDED_ASCII = st.text(alphabet=st.sampled_from([*"az09", *"-._/:", *"!@,;'\"()[]", *" \t\n\v\f\r\x00\x1c\x1f\x7f"]))


@given(FOLDED_ASCII)
def test_the_ascii_shortcuts_cut_what_the_patterns_cut(text: str) -> None:
    from memhtml.domain.tokens import _ASCII_PATTERNS, _compounds, _words

    assert _compounds(text, _ASCII_PATTERNS) == _ASCII_PATTERNS.compound.findall(text)
    assert _words(text, _ASCII_PATTERNS) == _ASCII_PATTERNS.word.findall(text)
