"""Chunking a memory's body for the embedding lane: one chunk for the common short fact, none for a blank
body, sentence-end splits for a long one, every chunk within the cap and no character ever dropped."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.chunking import CHUNK_MAX_CHARS, chunk_text


def squeezed(text: str) -> str:
    """`text` with every run of whitespace made one space (what a reader of the joined chunks sees)."""
    return " ".join(text.split())


def non_space(text: str) -> str:
    """Every character of `text` that is not whitespace, in order: what no chunking may lose."""
    return "".join(text.split())


def test_the_cap_is_the_documented_one() -> None:
    assert CHUNK_MAX_CHARS == 1800


def test_a_short_fact_is_one_chunk_trimmed() -> None:
    assert chunk_text("  The API timeout is 30 seconds. Set by the gateway.\n") == [
        "The API timeout is 30 seconds. Set by the gateway."
    ]


def test_a_body_of_exactly_the_cap_is_still_one_chunk() -> None:
    text = "x" * CHUNK_MAX_CHARS
    assert chunk_text(text) == [text]


def test_a_blank_body_has_no_chunk() -> None:
    assert chunk_text("") == []
    assert chunk_text("   \n\t  ") == []


def test_a_long_body_is_split_after_sentence_ends_and_keeps_every_character() -> None:
    # 60 numbered sentences of about 100 characters: about 6000 characters, so four chunks at least.
    sentences = [
        f"Sentence {number:02d} says something about the store" + " and more" * 6 + "." for number in range(60)
    ]
    text = "  ".join(sentences)  # two spaces between sentences: the split swallows any whitespace run
    chunks = chunk_text(text)
    assert len(chunks) >= -(-len(squeezed(text)) // CHUNK_MAX_CHARS)
    assert all(0 < len(chunk) <= CHUNK_MAX_CHARS for chunk in chunks)
    # Every chunk ends where a sentence ends and starts where one starts: no sentence is cut in two.
    assert all(chunk.endswith(".") and chunk.startswith("Sentence ") for chunk in chunks)
    assert " ".join(chunks) == squeezed(text)
    # Greedy packing: the next chunk's first sentence would not have fitted into the previous chunk.
    for before, after in pairwise(chunks):
        first_sentence = after.split(". ")[0] + "."
        assert len(before) + 1 + len(first_sentence) > CHUNK_MAX_CHARS


def test_each_sentence_end_mark_splits() -> None:
    sentence = "w" * 1000
    text = f"{sentence}. {sentence}! {sentence}? {sentence}"
    assert chunk_text(text) == [f"{sentence}.", f"{sentence}!", f"{sentence}?", sentence]


def test_a_sentence_longer_than_the_cap_is_sliced() -> None:
    words = ("lorem ipsum dolor sit amet consectetur " * 200)[:5000]  # no sentence end anywhere
    assert len(words) == 5000 and not any(mark in words for mark in ".!?")
    chunks = chunk_text(words)
    assert [len(chunk) for chunk in chunks] == [1800, 1800, 1400]
    assert "".join(chunks) == words


def test_a_sliced_sentence_is_followed_by_the_next_sentence() -> None:
    long_sentence = "a" * 2000 + "."
    chunks = chunk_text(f"{long_sentence} Short tail.")
    assert chunks == ["a" * 1800, "a" * 200 + ". Short tail."]


# Words, sentence ends, whitespace of several kinds and occasional runs longer than the cap.
PIECES = st.one_of(
    st.sampled_from(["word", "fact", "é", "漢字", "3.5", ".", "!", "?", "...", " ", "  ", "\n", "\t", "\n\n"]),
    st.integers(min_value=1, max_value=2500).map(lambda n: "z" * n),
    st.integers(min_value=1, max_value=2500).map(lambda n: "ab. " * (n // 4 + 1)),
)


@settings(max_examples=150)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_nothing_is_ever_dropped(text: str) -> None:
    chunks = chunk_text(text)
    assert all(0 < len(chunk) <= CHUNK_MAX_CHARS for chunk in chunks)
    assert non_space("".join(chunks)) == non_space(text)
    if not text.strip():
        assert chunks == []
    elif len(text.strip()) <= CHUNK_MAX_CHARS:
        assert chunks == [text.strip()]


@settings(max_examples=100)
@given(st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=300).map(str.strip).filter(bool), max_size=40))
def test_sentences_within_the_cap_are_never_cut(sentences: list[str]) -> None:
    text = " ".join(sentence + "." for sentence in sentences)
    chunks = chunk_text(text)
    # Split only at sentence ends: the chunks, joined by one space, are the text itself.
    assert " ".join(chunks) == text.strip()
    assert all(chunk.endswith(".") for chunk in chunks)
