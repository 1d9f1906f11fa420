"""Whole-process timing of `memhtml write` on a generated store, side by side with the original.

Builds an N-memory store in one commit with `corpus.build_store` (files rendered by our serializer,
committed through the store's plumbing), then alternates single writes of fresh memories between
ours and, when installed, the original (`$MEMHTML_ORIGINAL` or
~/.cache/memhtml-original/bin/memhtml-original). Ours runs with its default embedder on, the original
with embeddings (and its LLM) off (PRODUCT.md §6; see `bench_env`). Prints medians and the ratio
ours/original. Reports only; never fails the build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_env import ORIGINAL, original_env, original_installed, ours_env
from corpus import build_store


def write_argv(serial: int) -> list[str]:
    return [
        "write",
        "--title",
        f"Bench write {serial}",
        "--type",
        "semantic",
        "--claim",
        f"Bench fact number {serial} holds.",
        "--tag",
        "bench",
        "--entity",
        "service:bench",
    ]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {completed.stdout[:300]!r} {completed.stderr[-300:]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    ours = [str(Path(sys.executable).with_name("memhtml"))]
    original_bin = ORIGINAL
    has_original = original_installed()
    base_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@memhtml.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@memhtml.invalid",
    }
    env, their_env = ours_env(base_env), original_env(base_env)
    with tempfile.TemporaryDirectory(prefix="memhtml-bench-") as scratch:
        base = Path(scratch) / "ours"
        started = time.perf_counter()
        build_store(base, args.size)
        print(f"built a {args.size}-memory store in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        theirs = Path(scratch) / "theirs"
        if has_original:
            shutil.copytree(base, theirs, symlinks=True)
            timed([original_bin, "index", "rebuild", "--repo", str(theirs)], their_env)  # its first open indexes
        # and so does ours (embedding every memory): time writes, not that
        timed([*ours, "index", "rebuild", "--repo", str(base)], env)
        samples: dict[str, list[float]] = {"ours": [], "original": []}
        manifest = [timed([*ours, "manifest"], env) for _ in range(args.runs)]
        for run in range(args.runs):
            samples["ours"].append(timed([*ours, *write_argv(run), "--repo", str(base)], env))
            if has_original:
                samples["original"].append(timed([original_bin, *write_argv(run), "--repo", str(theirs)], their_env))
    ours_median = statistics.median(samples["ours"]) * 1000
    print("| operation | store | ours (median ms) | original (median ms) | ratio |")
    print("|---|---|---|---|---|")
    if has_original:
        original_median = statistics.median(samples["original"]) * 1000
        ratio = f"{ours_median / original_median:.2f}"
        print(f"| write | {args.size} | {ours_median:.0f} | {original_median:.0f} | {ratio} |")
    else:
        print(f"| write | {args.size} | {ours_median:.0f} | not installed | — |")
    print(f"| manifest | — | {statistics.median(manifest) * 1000:.0f} | | |")


if __name__ == "__main__":
    main()
