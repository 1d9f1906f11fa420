"""Whole-process timing and peak memory of `memhtml apply`, side by side with the original.

Three cases, each on a fresh copy of its starting store for every run, ours and the original
alternating: N ops into an empty store, N other ops into a store that already holds N, and the same
N ops again onto the store they landed in (all unchanged). Ops come from the project's corpus
generator as `apply` JSONL. Prints medians, peak RSS of the command's own process and the ratio
ours/original. Ours runs with its default embedder on, the original with embeddings (and its LLM) off
(PRODUCT.md §6; see `bench_env`). `--one-batch 50000` also times a single 50k-op batch. Reports
only; never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_env import ORIGINAL, original_installed, side_env
from corpus import ops_jsonl

BENCH_GIT = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@memhtml.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@memhtml.invalid",
}


def run(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (MB) of the process itself, and stdout."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout, _ = process.communicate()
    elapsed = time.perf_counter() - started
    peak = _children_peak_mb()
    if process.returncode not in (0, 3):
        raise SystemExit(f"{command[0]} failed ({process.returncode}): {stdout[:400]!r}")
    return elapsed, peak, stdout.decode("utf-8", "replace")


def _children_peak_mb() -> int:
    """The largest resident set of any child waited for (hence one command per measuring process)."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one-batch", type=int, default=0, help="also time one batch of this many ops")
    parser.add_argument("--ops", type=Path, help="JSONL ops to use instead of generated ones")
    parser.add_argument("--other-ops", type=Path, help="JSONL ops for the loaded-store case (with --ops)")
    args = parser.parse_args()
    ours = str(Path(sys.executable).with_name("memhtml"))
    tools = {"ours": ours} | ({"original": ORIGINAL} if original_installed() else {})
    envs = {name: side_env(name, {**os.environ, **BENCH_GIT}) for name in tools}
    with tempfile.TemporaryDirectory(prefix="memhtml-bench-apply-") as scratch_name:
        scratch = Path(scratch_name)
        base_ops, other_ops = scratch / "base.jsonl", scratch / "other.jsonl"
        if args.ops and args.other_ops:
            base_ops, other_ops = args.ops.resolve(), args.other_ops.resolve()
            args.size = sum(1 for line in base_ops.read_text(encoding="utf-8").splitlines() if line.strip())
        else:
            base_ops.write_text(ops_jsonl(args.size, "base"), encoding="utf-8")
            other_ops.write_text(ops_jsonl(args.size, "other"), encoding="utf-8")
        starts: dict[tuple[str, str], Path] = {}
        for name, binary in tools.items():
            empty = scratch / f"{name}-empty"
            run([binary, "init", "--repo", str(empty)], envs[name])
            loaded = scratch / f"{name}-loaded"
            shutil.copytree(empty, loaded, symlinks=True)
            run([binary, "apply", "--repo", str(loaded), "--file", str(base_ops)], envs[name])
            starts[(name, "empty")], starts[(name, "loaded")] = empty, loaded
        cases = [
            (f"apply {args.size} ops, fresh store", "empty", base_ops),
            (f"apply {args.size} ops, {args.size} store", "loaded", other_ops),
            (f"re-apply the same {args.size} (all unchanged)", "loaded", base_ops),
        ]
        if args.one_batch:
            big = scratch / "big.jsonl"
            big.write_text(ops_jsonl(args.one_batch, "big"), encoding="utf-8")
            cases.append((f"apply {args.one_batch} ops in one batch, fresh store", "empty", big))
        print(f"{'case':48} {'ours s':>8} {'MB':>6} {'original s':>11} {'MB':>6} {'ratio':>6}")
        for label, start, ops in cases:
            samples: dict[str, list[tuple[float, int]]] = {name: [] for name in tools}
            runs = 1 if "one batch" in label else args.runs
            for number in range(runs):
                for name, binary in tools.items():
                    target = scratch / f"{name}-run-{start}-{number}-{len(samples[name])}-{label[:5]}"
                    shutil.copytree(starts[(name, start)], target, symlinks=True)
                    # RUSAGE_CHILDREN is a running maximum, so measure each command in a fresh child
                    # (which passes its own environment, the side's, on to the command).
                    measured = subprocess.run(
                        [sys.executable, __file__, "--measure", binary, str(target), str(ops)],
                        capture_output=True,
                        text=True,
                        env=envs[name],
                        check=False,
                    )
                    try:
                        elapsed, peak = json.loads(measured.stdout)
                    except json.JSONDecodeError:
                        print(f"  {name} failed on {label}: {measured.stdout[-300:]} {measured.stderr[-300:]}")
                        elapsed, peak = float("nan"), 0
                    samples[name].append((elapsed, peak))
                    shutil.rmtree(target, ignore_errors=True)
            ours_time = statistics.median(s for s, _ in samples["ours"])
            ours_peak = max(m for _, m in samples["ours"])
            if "original" in samples:
                theirs_time = statistics.median(s for s, _ in samples["original"])
                theirs_peak = max(m for _, m in samples["original"])
                ratio = f"{ours_time / theirs_time:.2f}"
                print(f"{label:48} {ours_time:8.2f} {ours_peak:6d} {theirs_time:11.2f} {theirs_peak:6d} {ratio:>6}")
            else:
                print(f"{label:48} {ours_time:8.2f} {ours_peak:6d} {'—':>11} {'—':>6} {'—':>6}")


def measure(binary: str, root: str, ops: str) -> None:
    """Child mode: run one apply and print [seconds, peak MB of that command's process]."""
    elapsed, peak, _ = run([binary, "apply", "--repo", root, "--file", ops, "--dense"], os.environ.copy())
    print(json.dumps([elapsed, peak]))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--measure":
        measure(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
