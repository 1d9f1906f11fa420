"""Frame keys exactly as the original derives them, including every way a gist has no key."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.frames import (
    MAX_VALUE_TOKENS,
    MIN_FRAME_TOKENS,
    collapsed_whitespace,
    frame_key,
    key_of_collapsed,
)


def test_the_reference_example() -> None:
    assert (
        frame_key("The connection pool ceiling of the payments gateway is 64.")
        == "the connection pool ceiling of the payments gateway is"
    )


@pytest.mark.parametrize(
    ("gist", "key"),
    [
        # The frame is greedy: it ends at the last linking word.
        ("The timeout of the API is set to 30 seconds.", "the timeout of the api is set to"),
        ("Preferred editor of the user is Vim", "preferred editor of the user is"),
        # One final period is absorbed into nothing; a second one stays in the value.
        ("The build step of CI is flaky..", "the build step of ci is"),
        # Whitespace runs of any JavaScript kind collapse first.
        ("  The   pool\tsize\u00a0of\nthe  API is   64 ", "the pool size of the api is"),
        # A value of exactly MAX_VALUE_TOKENS tokens still counts.
        ("The release date of v2 is one two three four five six.", "the release date of v2 is"),
        # Nothing follows the last linking word, so the frame ends at the one before it.
        ("The pool size of the gateway is", "the pool size of"),
        # A frame of exactly MIN_FRAME_TOKENS tokens still counts.
        ("Team lead is Alice.", "team lead is"),
    ],
)
def test_frame_keys(gist: str, key: str) -> None:
    assert frame_key(gist) == key


@pytest.mark.parametrize(
    "gist",
    [
        "Price is 5.",  # the frame "Price is" has two tokens
        "The release date of v2 is one two three four five six seven.",  # a seven-token value
        "The Pool Size Is 64.",  # only lowercase linking words split
        "THE CEILING OF THE GATEWAY IS 64",
        "This thing works fine",  # "is" inside "This" is not a word
        "Deploys happen on Fridays",  # no linking word at all
        "",
        "   ",
    ],
)
def test_gists_without_a_frame_key(gist: str) -> None:
    assert frame_key(gist) is None


def test_the_limits_are_the_originals() -> None:
    assert (MIN_FRAME_TOKENS, MAX_VALUE_TOKENS) == (3, 6)


WORDS = st.sampled_from(["the", "pool", "size", "of", "is", "in", "to", "by", "as", "API", "64", "Is"])


@settings(max_examples=200)
@given(st.lists(WORDS, max_size=14).map(" ".join))
def test_a_key_is_lowercase_ends_with_a_linking_word_and_respects_the_limits(gist: str) -> None:
    key = frame_key(gist)
    if key is None:
        return
    assert key == key.lower()
    assert key.split(" ")[-1] in {"of", "is", "in", "to", "by", "as"}
    assert len(key.split(" ")) >= MIN_FRAME_TOKENS
    assert gist.lower().startswith(key + " ")
    value = gist[len(key) + 1 :].removesuffix(".")
    assert 1 <= len(value.split(" ")) <= MAX_VALUE_TOKENS


def _key_by_the_patterns(gist: str) -> str | None:
    """The key with every whitespace run collapsed by the JavaScript class, as before the shortcut."""
    return key_of_collapsed(collapsed_whitespace(gist))


SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t", "\n", "\x0b", "\x1c", "\x7f", "\u00a0", "\u3000", ". "])
GISTS = st.lists(st.tuples(WORDS | st.sampled_from(["é", "Team", "lead"]), SEPARATORS), max_size=12).map(
    lambda pieces: "".join(word + separator for word, separator in pieces)
)


@settings(max_examples=500)
@given(GISTS)
def test_the_printable_ascii_shortcut_keys_every_gist_as_the_patterns_do(gist: str) -> None:
    assert frame_key(gist) == _key_by_the_patterns(gist)


@pytest.mark.parametrize(
    "gist", ["Team  lead is Alice.", "Team\tlead is Alice.", "Team lead is Alice.\x0b", "Team\x1clead is Alice."]
)
def test_a_gist_with_other_whitespace_than_single_spaces_takes_the_collapsing_path(gist: str) -> None:
    assert frame_key(gist) == _key_by_the_patterns(gist)
