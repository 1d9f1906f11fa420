"""Integer and number flags take ASCII digits only, and the whole value: other scripts' digits and a
trailing newline are refused, not read."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(
    ("argv", "flag", "value", "expected"),
    [
        (["list"], "limit", "١٠", "an integer from 1 to 1000"),
        (["list"], "limit", "２", "an integer from 1 to 1000"),
        (["list"], "limit", "10\n", "an integer from 1 to 1000"),
        (["search", "deploy"], "limit", "١", "an integer from 1 to 200"),
        (["recall", "deploy"], "budget", "١٠", "an integer from 0 to 1000000"),
        (["neighbors", "areas/x.html"], "depth", "१", "an integer from 1 to 2"),
        (["write", "--title", "t", "--type", "semantic", "--claim", "c"], "importance", "٥", "an integer from 1 to 10"),
        (
            ["write", "--title", "t", "--type", "semantic", "--claim", "c"],
            "confidence",
            "０.５",
            "a number from 0 to 1",
        ),
        (
            ["write", "--title", "t", "--type", "semantic", "--claim", "c"],
            "confidence",
            "0.5\n",
            "a number from 0 to 1",
        ),
    ],
)
def test_digits_of_other_scripts_are_refused(argv: list[str], flag: str, value: str, expected: str) -> None:
    answer = run_cli(*argv, f"--{flag}", value)
    assert answer.status == 2, answer.stdout + answer.stderr
    envelope = answer.envelope
    assert envelope["code"] == "ERR_INVALID_FLAG"
    assert envelope["error"] == f"--{flag} must be {expected}, not {json.dumps(value, ensure_ascii=False)}"
    assert f"memhtml {argv[0]} --{flag} <" in envelope["suggestions"][0]


@pytest.mark.parametrize("value", ["10", "+10", "010"])
def test_ascii_digits_still_read(value: str) -> None:
    answer = run_cli("list", "--limit", value, "--repo", "/nonexistent/memhtml-store")
    # Past the grammar: the refusal, if any, is about the store, not the value.
    assert answer.envelope.get("code") != "ERR_INVALID_FLAG", answer.stdout
