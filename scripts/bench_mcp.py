"""Warm in-server latency of `memory_write` and `memory_search` over MCP, ours against the original.

For each corpus size (default 1k and 10k) the benchmark builds one deterministic store with
`corpus.build_store` (one commit, files rendered by our renderer), copies it for the original when it
is installed (`$MEMHTML_ORIGINAL` or ~/.cache/memhtml-original/bin/memhtml-original), indexes both
once, then starts both servers (`python -m memhtml.mcp --repo R` with our default embedder on; the
original's `memhtml-original serve mcp --repo R` with embeddings and its LLM off, see `bench_env`) and
drives each with the SDK's own stdio client. After a few
untimed warm-up calls it alternates the two servers call by call: fresh memories from the corpus
generator (a salt disjoint from the store) for `memory_write`, the generator's queries for
`memory_search`. A sample is the round trip of one `tools/call` as the client sees it.

Prints medians in milliseconds, the ratio ours/original and how many calls answered an error (an
error is listed, never timed into the medians). The original's reference figures on this kind of
machine: 69 ms per write and 6 ms per search at 1k. Reports only; never fails the build.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from bench_env import ORIGINAL, original_installed, side_env
from corpus import Memory, build_store, memories, queries
from mcp import ClientSession, StdioServerParameters, stdio_client

BENCH_GIT = {
    "GIT_AUTHOR_NAME": "memhtml bench",
    "GIT_AUTHOR_EMAIL": "bench@memhtml.invalid",
    "GIT_COMMITTER_NAME": "memhtml bench",
    "GIT_COMMITTER_EMAIL": "bench@memhtml.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
WARM_UP_CALLS = 3
OUR_SIDE = "ours"
THEIR_SIDE = "original"
# The original's own figures (ORIGINAL-FIGURES.md), for a reader without the original installed.
REFERENCE_MS = {("write", 1000): 69.0, ("search", 1000): 6.0, ("write", 10000): 135.0, ("search", 10000): 19.0}


@dataclass
class Samples:
    """Round-trip seconds per (operation, size, side), and the calls that answered an error."""

    seconds: dict[tuple[str, int, str], list[float]] = field(default_factory=dict)
    errors: dict[tuple[str, int, str], list[str]] = field(default_factory=dict)
    start_seconds: dict[tuple[int, str], float] = field(default_factory=dict)

    def median_ms(self, operation: str, size: int, side: str) -> float | None:
        found = self.seconds.get((operation, size, side))
        return statistics.median(found) * 1000 if found else None


def write_arguments(memory: Memory) -> dict[str, Any]:
    """A generated memory as `memory_write` arguments both servers accept (the claim leads the body)."""
    request = memory.request
    arguments: dict[str, Any] = {
        "title": request.title,
        "memory_type": request.memory_type,
        "body": " ".join([request.claim or "", *request.bodies]).strip(),
    }
    if request.workspace:
        arguments["workspace"] = request.workspace
    if request.tags:
        arguments["tags"] = list(request.tags)
    if request.entities:
        arguments["entities"] = list(request.entities)
    if request.importance is not None:
        arguments["importance"] = request.importance
    if request.confidence is not None:
        arguments["confidence"] = request.confidence
    return arguments


def server_parameters(side: str, root: Path) -> StdioServerParameters:
    env = side_env(side, {**os.environ, **BENCH_GIT})
    if side == OUR_SIDE:
        return StdioServerParameters(command=sys.executable, args=["-m", "memhtml.mcp", "--repo", str(root)], env=env)
    return StdioServerParameters(command=ORIGINAL, args=["serve", "mcp", "--repo", str(root)], env=env)


@asynccontextmanager
async def session(side: str, root: Path, errlog: Any) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(server_parameters(side, root), errlog=errlog) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


async def timed_call(
    client: ClientSession, samples: Samples, key: tuple[str, int, str], tool: str, arguments: dict[str, Any]
) -> None:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    if result.is_error:
        text = getattr(result.content[0], "text", "") if result.content else ""
        samples.errors.setdefault(key, []).append(text[:200])
        return
    samples.seconds.setdefault(key, []).append(elapsed)


@dataclass(frozen=True)
class Plan:
    """What one size measures: the stores each side serves and the calls it makes."""

    size: int
    stores: dict[str, Path]
    runs: int
    query_count: int


async def measure_size(plan: Plan, samples: Samples, errlog: Any) -> None:
    """Both servers on their copy of one store, alternating call by call."""
    size, stores, runs = plan.size, plan.stores, plan.runs
    writes = [write_arguments(memory) for memory in memories(runs + WARM_UP_CALLS, salt=f"mcp-bench-{size}")]
    drawn = queries(plan.query_count)
    async with AsyncExitStack() as stack:
        clients: dict[str, ClientSession] = {}
        for side, root in stores.items():
            started = time.perf_counter()
            clients[side] = await stack.enter_async_context(session(side, root, errlog))
            samples.start_seconds[(size, side)] = time.perf_counter() - started
        for client in clients.values():  # warm-up: imports, caches, the first index open
            for number in range(WARM_UP_CALLS):
                await client.call_tool("memory_search", {"query": drawn[number % len(drawn)]})
                await client.call_tool("memory_write", writes[number])
        for number in range(runs):
            for side, client in clients.items():
                await timed_call(client, samples, ("write", size, side), "memory_write", writes[WARM_UP_CALLS + number])
            for side, client in clients.items():
                query = {"query": drawn[number % len(drawn)]}
                await timed_call(client, samples, ("search", size, side), "memory_search", query)


def index_once(side: str, command: list[str]) -> None:
    """Index the store before its server starts, so no timed call pays for a first indexing."""
    completed = subprocess.run(
        command, capture_output=True, env=side_env(side, {**os.environ, **BENCH_GIT}), check=False
    )
    if completed.returncode != 0:
        print(f"warning: {' '.join(command[:3])} exited {completed.returncode}", file=sys.stderr)


def report(samples: Samples, sizes: list[int], has_original: bool) -> None:
    print("| operation | store | ours (median ms) | original (median ms) | ratio | original's reference |")
    print("|---|---|---|---|---|---|")
    for operation in ("write", "search"):
        for size in sizes:
            ours = samples.median_ms(operation, size, OUR_SIDE)
            theirs = samples.median_ms(operation, size, THEIR_SIDE) if has_original else None
            ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "—"
            reference = REFERENCE_MS.get((operation, size))
            print(
                f"| memory_{operation} | {size} | {_ms(ours)} | "
                f"{_ms(theirs) if has_original else 'not installed'} | {ratio} | {_ms(reference)} |"
            )
    for (size, side), seconds in sorted(samples.start_seconds.items()):
        print(f"server start + initialize, {side}, {size} store: {seconds * 1000:.0f} ms")
    for (operation, size, side), errors in sorted(samples.errors.items()):
        print(f"{side} answered {len(errors)} error(s) to memory_{operation} at {size}; first: {errors[0]}")


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=30, help="timed calls per operation, server and size")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--no-original", action="store_true", help="measure ours only")
    args = parser.parse_args()
    # The original's `serve mcp` prints its `serve.exit` envelope on stdout after the JSON-RPC stream
    # ends (its documented contract); the client would log that unparsable line as an error at exit.
    logging.getLogger("mcp.client.stdio").addFilter(
        lambda record: not record.getMessage().startswith("Failed to parse JSONRPC message")
    )
    has_original = not args.no_original and original_installed()
    samples = Samples()
    with tempfile.TemporaryDirectory(prefix="memhtml-bench-mcp-") as scratch:
        errlog_path = Path(scratch) / "servers-stderr.log"
        with errlog_path.open("w", encoding="utf-8") as errlog:
            for size in args.sizes:
                ours = Path(scratch) / f"ours-{size}"
                started = time.perf_counter()
                build_store(ours, size)
                print(f"built a {size}-memory store in {time.perf_counter() - started:.1f} s", file=sys.stderr)
                stores = {OUR_SIDE: ours}
                index_once(OUR_SIDE, [sys.executable, "-m", "memhtml", "index", "rebuild", "--repo", str(ours)])
                if has_original:
                    theirs = Path(scratch) / f"theirs-{size}"
                    shutil.copytree(ours, theirs, symlinks=True, ignore=shutil.ignore_patterns(".memhtml"))
                    index_once(THEIR_SIDE, [ORIGINAL, "index", "rebuild", "--repo", str(theirs)])
                    stores[THEIR_SIDE] = theirs
                anyio.run(measure_size, Plan(size, stores, args.runs, args.queries), samples, errlog)
                shutil.rmtree(ours, ignore_errors=True)
                if has_original:
                    shutil.rmtree(stores[THEIR_SIDE], ignore_errors=True)
        report(samples, args.sizes, has_original)
        if samples.errors:
            print(f"server logs: {errlog_path.read_text(encoding='utf-8')[-2000:]}", file=sys.stderr)


if __name__ == "__main__":
    main()
