"""Fuzz properties of the safety notary's scans: total on any text, spans inside the text, `plainly_clear`
exact, and cleaning (redacting secrets, dropping invisible characters) leaves nothing to find.

Cleaning runs to its fixed point (`cleaned_fully`): the inputs that once left a finding behind (a
marker read as a URL password, a key completed by the redaction of its neighbour, selectors joined by a
stripped character) and the secrets once missed (`https://host/login?password=…`) are replayed from
`corpus/notary.json`.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given

from memhtml.domain.notary import (
    Finding,
    cleaned_fully,
    control_findings,
    dangerous_scheme,
    folded_view,
    invisible_findings,
    markup_violations,
    plainly_clear,
    secret_findings,
)
from tests.fuzz.input_strategies import secret_text
from tests.fuzz.strategies import any_text, corpus, corpus_value, fuzz, note_outcome


def assert_spans(text: str, findings: list[Finding]) -> None:
    assert all(0 <= finding.start < finding.end <= len(text) for finding in findings), findings
    assert all(isinstance(finding.kind, str) and finding.kind for finding in findings)


def assert_scans_and_cleaning_hold(text: str) -> None:
    controls, invisible, secrets = control_findings(text), invisible_findings(text), secret_findings(text)
    for findings in (controls, invisible, secrets):
        assert_spans(text, findings)
    ordered = sorted(secrets, key=lambda finding: finding.start)
    assert all(earlier.end <= later.start for earlier, later in pairwise(ordered))
    view, positions = folded_view(text)
    assert positions is None or len(positions) == len(view) + 1
    if plainly_clear(text):
        assert not (controls or invisible or secrets), "plainly_clear must be exact"
    dangerous_scheme(text)
    markup_violations([("a", [("href", text), ("srcset", text)]), (text, [(text, text)])])
    clean, _, _ = cleaned_fully(text, redact=True, strip_invisible=True)
    left = [*secret_findings(clean), *invisible_findings(clean)]
    assert left == [], "a cleaned text still holds something to find"
    note_outcome("secrets redacted" if secrets else "no secret")


@fuzz(ci_examples=400)
@given(any_text)
def test_scans_are_total_on_any_text(text: str) -> None:
    assert_scans_and_cleaning_hold(text)


@fuzz(ci_examples=400)
@given(secret_text)
def test_cleaned_text_holds_nothing_to_find(text: str) -> None:
    assert_scans_and_cleaning_hold(text)


@pytest.mark.parametrize("entry", corpus("notary"))
def test_notary_corpus_replays(entry: dict[str, Any]) -> None:
    text = corpus_value(entry)
    if entry.get("check") == "finds a secret":
        assert secret_findings(text), "the scan misses the secret"
    elif entry.get("check") == "cleaning is a fixed point":
        left, _, _ = cleaned_fully(text, redact=True, strip_invisible=True)
        assert secret_findings(left) == [] and invisible_findings(left) == []
    else:
        assert_scans_and_cleaning_hold(text)
