"""Every fault class of the harness, replayed against the real executable: no answer may disagree with
git, no store may be left worse than it was found, and no memory may be lost. Small here; `make stress`
(`MEMHTML_STRESS=1`) replays each at the size the closing figures are measured at."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.faults.harness import Bench, scenarios, scratch_directory

STRESS = os.environ.get("MEMHTML_STRESS") == "1"
EXECUTABLE = [sys.executable, "-m", "memhtml"]


@pytest.mark.parametrize("name", list(scenarios()))
def test_the_fault_is_answered_truly_and_loses_nothing(name: str) -> None:
    scenario, small, large = scenarios()[name]
    with scratch_directory() as scratch:
        tally = scenario(Bench(EXECUTABLE, scratch), large if STRESS else small)
    if tally.tries == 0:
        pytest.skip("; ".join(tally.notes))
    assert (tally.failures, tally.lost) == (0, 0), tally
    print(f"{tally.fault}: {tally.tries} tries, {'; '.join(tally.notes)}")


def test_the_harness_counts_a_loss_it_is_shown(tmp_path: Path) -> None:
    """The counting itself can fail: a memory removed behind memhtml's back is counted as lost."""
    from tests.faults.harness import claims_in_head

    bench = Bench(EXECUTABLE, tmp_path)
    root = bench.store()
    assert bench.write(root, "Kept", "A kept fact stays.").stored
    assert bench.write(root, "Gone", "A fact removed by hand.").stored
    bench.git(root, "rm", "-q", "areas/inbox/gone.html")
    bench.git(root, "commit", "-qm", "removed by hand")
    assert claims_in_head(bench, root, ["A kept fact stays.", "A fact removed by hand."]) == {"A kept fact stays."}
