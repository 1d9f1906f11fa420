"""The divergence veto: a negation, a changed number or a variant qualifier makes two close texts different
facts; identical texts and plain rewordings never diverge."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.domain.divergence import diverges, negations, numbers, qualifiers

BASE = "The staging cache is enabled for the billing service."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cache is not enabled.", ("not",)),
        ("The cache isn't enabled.", ("not",)),
        ("The cache isn\u2019t enabled.", ("not",)),  # a typographic apostrophe
        ("You can't deploy on Fridays.", ("not",)),
        ("You won't need a token.", ("not",)),
        ("It doesn't retry, and never will.", ("not", "never")),
        ("NO retries WITHOUT a token.", ("no", "without")),
        ("The cache is enabled.", ()),
        ("Notes are kept in the nobody folder.", ()),  # markers are whole words only
    ],
)
def test_negation_markers_with_contractions_expanded(text: str, expected: tuple[str, ...]) -> None:
    assert negations(text) == expected


def test_numbers_are_the_numeric_tokens() -> None:
    assert numbers("Pool 64, timeout 3.5 s, 10,000 rows in 2024.") == frozenset({"64", "3.5", "10,000", "2024"})
    assert numbers("Agent v5.8.4 ships.") == frozenset({"5.8.4"})
    assert numbers("No digits here.") == frozenset()


def test_qualifiers_are_the_variant_words() -> None:
    assert qualifiers("Use the Pro plan on the BETA channel.") == frozenset({"pro", "beta"})
    assert qualifiers("A proactive, professional approach.") == frozenset()  # not inside other words


@pytest.mark.parametrize(
    "flipped",
    [
        "The staging cache is not enabled for the billing service.",  # negation added
        "The staging cache isn't enabled for the billing service.",  # contracted negation
        "The staging cache can't be enabled for the billing service.",
        "The staging cache is enabled for the billing service 2.",  # a number appears
        "The staging cache is enabled for the legacy billing service.",  # a qualifier appears
    ],
)
def test_a_flip_diverges_both_ways(flipped: str) -> None:
    assert diverges(BASE, flipped)
    assert diverges(flipped, BASE)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("The connection limit is 10.", "The connection limit is 20."),
        ("Timeout is 3.5 seconds.", "Timeout is 35 seconds."),
        ("Released in 2024 with 3 fixes.", "Released in 2024 with 4 fixes."),
        ("Use the iPhone 15 Pro.", "Use the iPhone 15 Pro Max."),
        ("Ship the beta build.", "Ship the rc build."),
        ("Deploys never run on Fridays.", "Deploys run on Fridays."),
        ("The token is valid.", "The token is invalid."),
    ],
)
def test_different_facts_that_read_alike_diverge(left: str, right: str) -> None:
    assert diverges(left, right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("The API timeout is 30 seconds.", "Requests to the API time out after 30 seconds."),
        ("The cache isn't enabled.", "The cache is not enabled."),  # the same negation, spelled two ways
        ("Deploys don't run on Fridays.", "On Fridays, deploys do not run!"),
        ("Use the Pro plan, version 2.1.", "Version 2.1 of the PRO plan is the one to use."),
        ("Alice likes green tea.", "Green tea is what Alice likes."),
    ],
)
def test_rewordings_without_a_flip_do_not_diverge(left: str, right: str) -> None:
    assert not diverges(left, right)
    assert not diverges(right, left)


def test_cannot_and_cant_are_the_same_negation() -> None:
    assert negations("You cannot deploy on Fridays.") == negations("You can't deploy on Fridays.")
    assert not diverges("You cannot deploy on Fridays.", "You can't deploy on Fridays.")


@given(st.text(max_size=200))
def test_a_text_never_diverges_from_itself(text: str) -> None:
    assert not diverges(text, text)


@given(st.text(max_size=120), st.text(max_size=120))
def test_divergence_is_symmetric(left: str, right: str) -> None:
    assert diverges(left, right) == diverges(right, left)
