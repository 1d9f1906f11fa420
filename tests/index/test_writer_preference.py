"""Writer preference: processes that keep the index open for reading never starve a writer."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from memhtml.index.database import open_database
from tests.conftest import run_cli

# A reader that opens the index read-only in a loop, holding it 100 ms each time, until its end.
READER = """
import sys, time
from pathlib import Path
from memhtml.index.database import open_database
root, seconds, offset = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
time.sleep(offset)
end, opens = time.monotonic() + seconds, 0
while time.monotonic() < end:
    with open_database(root, read_only=True):
        time.sleep(0.1)
    opens += 1
print(opens)
"""


def test_a_writer_opens_while_readers_keep_the_index_open_one_after_another(store_root: Path) -> None:
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(store_root), "6", str(number * 0.025)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for number in range(4)
    ]
    try:
        time.sleep(1.5)  # every reader in its loop, their opens overlapping
        assert all(reader.poll() is None for reader in readers)
        # Without writer preference the overlapping readers hold the file for the whole wait, and the
        # open fails with the index "held by another memhtml process".
        with open_database(store_root, lock_wait=3.0) as database:
            assert not database.read_only
    finally:
        outputs = [reader.communicate(timeout=60) for reader in readers]
    for reader, (stdout, stderr) in zip(readers, outputs, strict=True):
        assert reader.returncode == 0, stderr.decode()
        assert int(stdout) > 0
