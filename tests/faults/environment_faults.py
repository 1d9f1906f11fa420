"""Faults of the machine around the store: odd characters in its path, a full disk, a read-only store,
damaged support files, input with no bound, and Ctrl-C while the executable starts.

A failure is an answer that is not one envelope (a traceback, nothing at all), a code other than the
documented one for the fault, a remedy that does not work when followed, or a store left changed by a
command that stored nothing. Lost memories are counted from git as in `git_faults`.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.faults.harness import Answer, Bench, Tally, claims_in_head, clean_tree

# Directory names that DuckDB, git or a line-oriented reader treat specially.
ODD_NAMES = [
    "new\nline",
    "glob*?[x]{a,b}",
    "back\\slash",
    "semi;colon $(x) `y`",
    "it's a store",
    'double"quote',
    "per%cent_and_under",
    "tab\there",
    "ünïcødé 日本",
    "-leading-dash",
]


def _ops(label: str, count: int) -> str:
    """`count` ops in a workspace of their own (a crowded inbox is a finding of `doctor`'s)."""
    return "".join(
        json.dumps(
            {
                "op": "write",
                "title": f"{label} {n}",
                "type": "semantic",
                "body": f"{label} fact {n} holds.",
                "workspace": "faults",
            }
        )
        + "\n"
        for n in range(count)
    )


def _is_envelope(answer: Answer) -> bool:
    return answer.envelope is not None and "Traceback" not in answer.stderr


def odd_store_paths(bench: Bench, tries: int) -> Tally:
    """Every command of a store's life, in stores whose paths hold special characters."""
    tally = Tally("odd characters in the store's path")
    for name in ODD_NAMES[:tries]:
        tally.tries += 1
        root = bench.scratch / "odd" / name
        root.parent.mkdir(exist_ok=True)
        try:
            initialized = bench.run("init", "--repo", str(root))
            if "?" in str(root) or "\\" in str(root):
                # DuckDB cannot keep a file there: refused before anything is written.
                if (initialized.status, initialized.code) != (2, "ERR_INVALID_FLAG") or root.exists():
                    tally.fail(f"{name!r}: init answered {initialized.status} {initialized.code}")
                continue
            claim = "An odd place keeps this fact."
            steps = [
                bench.write(root, "Odd place", claim),
                bench.run("apply", "--repo", str(root), stdin=_ops("Odd batch", 70)),
                bench.run("search", "--repo", str(root), "odd place"),
                bench.run("list", "--repo", str(root)),
                bench.run("index", "rebuild", "--repo", str(root)),
                bench.run("index", "update", "--repo", str(root)),
                bench.run("doctor", "--repo", str(root)),
            ]
        except (OSError, RuntimeError) as error:
            tally.fail(f"{name!r}: {error}")
            continue
        failed = [answer for answer in steps if answer.status != 0]
        if failed:
            tally.fail(f"{name!r}: {failed[0].status} {failed[0].code} {failed[0].stdout[:160]!r}")
        hits = steps[2].envelope or {}
        if not (hits.get("data") or {}).get("hits"):
            tally.fail(f"{name!r}: search found nothing")
        stored = [claim] if steps[0].stored else []
        tally.lost += len(stored) - len(claims_in_head(bench, root, stored))
    return tally


@contextmanager
def _mounted(kind: str, target: Path, *options: str) -> Iterator[bool]:
    """Mount on `target` for the block; False (nothing mounted) where this process may not mount."""
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", *options, kind, str(target)], capture_output=True, check=False)
    if done.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def full_disk(bench: Bench, tries: int) -> Tally:
    """A store on a file system with no space left: writes refuse with ERR_NO_SPACE and leave nothing
    half-written; once space is freed, the next write lands."""
    tally = Tally("disk full")
    for attempt in range(tries):
        mount_point = bench.scratch / f"full-{attempt}"
        with _mounted("tmpfs", mount_point, "-t", "tmpfs", "-o", "size=6m") as mounted:
            if not mounted:
                tally.notes.append("skipped: this process may not mount a tmpfs")
                return tally
            tally.tries += 1
            root = mount_point / "store"
            bench.run("init", "--repo", str(root))
            kept = "A fact written before the disk filled."
            bench.write(root, "Before", kept)
            filler = mount_point / "filler"
            with filler.open("wb") as handle:
                try:
                    while True:
                        handle.write(b"\0" * 65536)
                except OSError:
                    pass
            answers = [
                bench.write(root, "Full", "A fact that finds the disk full."),
                bench.run("apply", "--repo", str(root), stdin=_ops("Full batch", 200)),
            ]
            for answer in answers:
                if answer.status == 0 or answer.code != "ERR_NO_SPACE" or not _is_envelope(answer):
                    tally.fail(f"answered {answer.status} {answer.code}: {answer.stdout[:160]!r}")
            if not clean_tree(bench, root):
                tally.fail("a full disk left the tree changed")
            filler.unlink()
            after = bench.write(root, "After", "A fact written once space was freed.")
            if after.status != 0:
                tally.fail(f"after freeing space: {after.status} {after.code}")
            stored = [kept] + (["A fact written once space was freed."] if after.stored else [])
            tally.lost += len(stored) - len(claims_in_head(bench, root, stored))
    return tally


def read_only_store(bench: Bench, tries: int) -> Tally:
    """A store mounted read-only: reads answer, writes refuse with ERR_READ_ONLY and touch nothing."""
    tally = Tally("read-only store")
    for attempt in range(tries):
        root = bench.store(f"readonly-{attempt}")
        claim = "A fact stored before the store became read-only."
        bench.write(root, "Kept", claim)
        bench.run("search", "--repo", str(root), "fact")  # the index is fresh before the mount
        view = bench.scratch / f"readonly-view-{attempt}"
        with _mounted(str(root), view, "--bind") as mounted:
            if not mounted:
                tally.notes.append("skipped: this process may not bind-mount")
                return tally
            subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True, check=False)
            tally.tries += 1
            reads = [bench.run("search", "--repo", str(view), "fact"), bench.run("status", "--repo", str(view))]
            for answer in reads:
                if answer.status != 0:
                    tally.fail(f"a read answered {answer.status} {answer.code}: {answer.stdout[:160]!r}")
            written = bench.write(view, "Refused", "A fact the read-only store refuses.")
            if written.status == 0 or written.code != "ERR_READ_ONLY" or not _is_envelope(written):
                tally.fail(f"a write answered {written.status} {written.code}: {written.stdout[:160]!r}")
        tally.lost += 1 - len(claims_in_head(bench, root, [claim]))
    return tally


def _damage(root: Path, kind: str) -> None:
    memhtml = root / ".memhtml"
    if kind == ".memhtml is a file":
        subprocess.run(["rm", "-rf", str(memhtml)], check=True)
        memhtml.write_text("not a directory\n")
    elif kind == "index is a directory":
        (memhtml / "index.duckdb").unlink()
        (memhtml / "index.duckdb").mkdir()
    elif kind == "index holds garbage":
        (memhtml / "index.duckdb").write_bytes(os.urandom(64 * 1024))
    elif kind == "state database holds garbage":
        (memhtml / "state.duckdb").write_bytes(os.urandom(64 * 1024))
    elif kind == "git index holds garbage":
        (root / ".git" / "index").write_bytes(b"garbage, not an index")
    elif kind == "access log holds garbage":
        (memhtml / "state" / "access.jsonl").write_text("{not json\n\x00\x01 nor this\n")
    else:
        raise ValueError(kind)


DAMAGES = [
    ".memhtml is a file",
    "index is a directory",
    "index holds garbage",
    "state database holds garbage",
    "git index holds garbage",
    "access log holds garbage",
]


def damaged_support_files(bench: Bench, tries: int) -> Tally:
    """Each support file damaged in turn: every command answers an envelope, `doctor --fix` (or the
    remedy the answer names) leaves a healthy store, and no memory is lost."""
    tally = Tally("damaged support files")
    for kind in DAMAGES[:tries]:
        tally.tries += 1
        root = bench.store(f"damaged-{DAMAGES.index(kind)}")
        claims = ["A fact from before the damage holds."]
        bench.write(root, "Before", claims[0])
        bench.run("search", "--repo", str(root), "fact")
        _damage(root, kind)
        answers = [
            bench.run("search", "--repo", str(root), "fact"),
            bench.run("status", "--repo", str(root)),
            bench.write(root, "During", "A fact written with a damaged support file."),
        ]
        if answers[2].stored:
            claims.append("A fact written with a damaged support file.")
        for answer in answers:
            if not _is_envelope(answer):
                tally.fail(f"{kind}: not an envelope: {answer.stdout[:80]!r} {answer.stderr[-160:]!r}")
        fixed = bench.run("doctor", "--fix", "--repo", str(root))
        examined = bench.run("doctor", "--repo", str(root))
        if examined.status != 0:
            data = (examined.envelope or {}).get("data") or examined.envelope or {}
            tally.fail(f"{kind}: after doctor --fix ({fixed.status} {fixed.code}): {json.dumps(data)[:300]}")
        after = bench.write(root, "After", "A fact written after the repair.")
        if after.status != 0:
            tally.fail(f"{kind}: a write after the repair answered {after.status} {after.code}")
        else:
            claims.append("A fact written after the repair.")
        tally.lost += len(claims) - len(claims_in_head(bench, root, claims))
    return tally


def unbounded_input(bench: Bench, tries: int) -> Tally:
    """An `apply` stream past the batch limits is refused at exit 2 before memory grows with it."""
    tally = Tally("unbounded apply input")
    root = bench.store("unbounded")
    line = json.dumps({"op": "write", "title": "Many", "type": "semantic", "body": "One of very many."}) + "\n"
    # Each stream as (block, how many times): written to the file a block at a time, so the harness never
    # holds a stream (a child forked from it would count the harness's memory as its own peak).
    streams = {
        "150,000 lines": [(line * 1_000, 150)],
        "300 MiB in 3,000 lines": [("x" * 100_000 + "\n", 3_000), ("y" * (1 << 20), 1)],
        "one 300 MiB line": [("z" * (1 << 20), 300)],
    }
    for name, blocks in list(streams.items())[:tries]:
        tally.tries += 1
        source = bench.scratch / "stream.jsonl"
        with source.open("w", encoding="utf-8") as writing:
            for block, times in blocks:
                for _ in range(times):
                    writing.write(block)
        started = time.monotonic()
        with source.open("rb") as handle:
            process = subprocess.Popen(
                [*bench.memhtml, "apply", "--dry-run", "--repo", str(root)],
                stdin=handle,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=bench.env,
            )
            assert process.stdout is not None
            stdout = process.stdout.read()
            # This child's own peak (`wait4`), not the largest of every child the harness ever ran.
            _, status, usage = os.wait4(process.pid, 0)
        source.unlink()
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        code = (json.loads(stdout) if stdout.startswith(b"{") else {}).get("code")
        tally.notes.append(f"{name}: exit {process.returncode} in {seconds:.1f} s, peak {usage.ru_maxrss // 1024} MB")
        if process.returncode != 2 or code != "ERR_INPUT_TOO_LARGE":
            tally.fail(f"{name}: exit {process.returncode} {code}")
    return tally


def startup_interrupt(bench: Bench, tries: int) -> Tally:
    """Ctrl-C (SIGINT) while the executable starts: one envelope, never a traceback."""
    tally = Tally("Ctrl-C during start-up")
    root = bench.store("startup")
    rng = random.Random(7)
    silent = before_us = lost_before_us = 0
    for attempt in range(tries):
        tally.tries += 1
        process = bench.start("status", "--repo", str(root))
        time.sleep(rng.uniform(0.005, 0.12))
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate()
        answer = Answer(process.returncode, stdout, stderr)
        # Ended by the signal before Python took it (exit -2, nothing printed) is what any program does.
        ended_by_signal = process.returncode == -signal.SIGINT and not stdout and not stderr.strip()
        if answer.envelope is None and not stdout and _only_interpreter_start_up(stderr):
            before_us += 1
        elif answer.envelope is not None and _lost_by_the_interpreter_before_us(stderr):
            lost_before_us += 1
        elif "Traceback" in stderr or not (ended_by_signal or answer.envelope is not None):
            tally.fail(f"try {attempt}: exit {process.returncode}, stderr {stderr[-120:]!r}")
        silent += ended_by_signal
    tally.notes.append(f"{silent} ended by the signal before Python took it, nothing printed")
    tally.notes.append(f"{before_us} taken by the interpreter before memhtml's first statement ran (its traceback)")
    tally.notes.append(
        f"{lost_before_us} taken by the interpreter in an import lock's callback before memhtml's first "
        "statement ran, printed and lost there (the command then ran as if not interrupted)"
    )
    return tally


def _lost_by_the_interpreter_before_us(stderr: str) -> bool:
    """Python's own handler (a bare `KeyboardInterrupt`, where memhtml's says which signal) raised in an
    import lock's callback while the executable's wrapper imported our first module: Python prints it
    as "Exception ignored" and goes on, before any code of ours could take the signal."""
    return (
        "Exception ignored in: <function _get_module_lock.<locals>.cb" in stderr
        and re.search(r"KeyboardInterrupt: *\n", stderr) is not None
        and not re.search(r'File "[^"]*/memhtml/[^"]*\.py"', stderr)
    )


def _only_interpreter_start_up(stderr: str) -> bool:
    """A traceback with no frame of a memhtml module: the interpreter's own start-up (`site`, the frozen
    modules) or the import machinery finding our first module, which no code of a package can guard."""
    return "KeyboardInterrupt" in stderr and not re.search(r'File "[^"]*/memhtml/[^"]*\.py"', stderr)


SCENARIOS = {
    "odd-store-paths": (odd_store_paths, 4, len(ODD_NAMES)),
    "full-disk": (full_disk, 1, 3),
    "read-only-store": (read_only_store, 1, 3),
    "damaged-support-files": (damaged_support_files, len(DAMAGES), len(DAMAGES)),
    "unbounded-input": (unbounded_input, 1, 3),
    "startup-interrupt": (startup_interrupt, 10, 100),
}
