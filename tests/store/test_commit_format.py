"""Commit subjects and trailers byte-compatible with the original."""

from __future__ import annotations

from memhtml.store.commit import commit_message, commit_subject


def test_subject_flattens_whitespace() -> None:
    assert commit_subject("write", "Test   one\n") == "memhtml(write): Test one"
    assert commit_subject("write", "   ") == "memhtml(write): (untitled)"
    # U+FEFF is whitespace to JavaScript's \s, which the original uses.
    assert commit_subject("write", "\ufeffA\ufeffB") == "memhtml(write): A B"


def test_subject_cap_counts_utf16_units() -> None:
    subject = commit_subject("write", "x" * 80)
    assert subject == "memhtml(write): " + "x" * 71 + "…"
    # Each astral character is two UTF-16 units: 71 units hold 35 of them.
    astral = commit_subject("write", "😀" * 40)
    assert astral == "memhtml(write): " + "😀" * 35 + "…"
    assert commit_subject("write", "y" * 72) == "memhtml(write): " + "y" * 72


def test_message_with_and_without_trailers() -> None:
    subject = "memhtml(write): Test one"
    assert commit_message(subject) == subject + "\n"
    assert (
        commit_message(subject, [("Memhtml-Session", "s1"), ("Memhtml-Prompt", "p1")])
        == subject + "\n\nMemhtml-Session: s1\nMemhtml-Prompt: p1\n"
    )
    # A newline in a value cannot forge a second trailer; empty values are omitted.
    assert (
        commit_message(subject, [("Memhtml-Session", "a\nMemhtml-Prompt: forged"), ("Memhtml-Prompt", " ")])
        == subject + "\n\nMemhtml-Session: a Memhtml-Prompt: forged\n"
    )
