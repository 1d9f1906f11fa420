"""Deterministic synthetic memory corpus for the benchmarks (`make bench`).

Everything here is a pure function of (seed, salt, serial): the same arguments give the same
memories, byte for byte, so ours and the original always measure the same corpus. The memories look
like an agent's: configuration facts with numbers and units, incidents with identifiers such as
INV-2024-001, runbooks with commands, preferences of named people, verdicts, tasks, ~5% episodic
and a few CJK memories, spread over workspaces, tags and entities.

A store is built the way a fixture builder should build it: every file is rendered by our own
renderer (`place_memory`) and all of them land in ONE commit through the store's plumbing; no
per-memory commits, no `apply`. `queries()` draws search queries from the same vocabulary.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memhtml.contracts.paths import memory_filename
from memhtml.operations.write import WriteRequest, place_memory
from memhtml.store.batch import PathClaimer, PlacedMemory
from memhtml.store.commit import Staged, commit_message, commit_paths, commit_subject
from memhtml.store.files import create_file_exclusively
from memhtml.store.initialize import init_store
from memhtml.store.repository import open_store

# ---------------------------------------------------------------- vocabulary

SERVICES = (
    "checkout-api", "billing-service", "auth-gateway", "search-indexer", "payments-worker",
    "notification-hub", "inventory-sync", "user-profile", "report-builder", "ledger",
    "session-store", "media-transcoder", "feature-flags", "rate-limiter", "order-router",
    "email-relay", "metrics-pipeline", "etl-runner", "graphql-edge", "pricing-engine",
    "fraud-scorer", "shipping-quotes", "catalog-api", "audit-log", "webhook-dispatcher",
    "tax-calculator", "geo-lookup", "cart-service", "refund-processor", "scheduler",
)  # fmt: skip
# component -> (unit, values)
COMPONENTS: dict[str, tuple[str, tuple[int, ...]]] = {
    "connection pool ceiling": ("", (16, 32, 48, 64, 96, 128, 256)),
    "retry budget": (" retries", (1, 2, 3, 5, 8)),
    "circuit breaker threshold": (" percent", (5, 10, 20, 25, 50)),
    "cache TTL": (" seconds", (30, 60, 120, 300, 900, 3600)),
    "batch size": ("", (16, 32, 64, 128, 256, 512, 1024)),
    "worker count": ("", (2, 4, 8, 12, 16, 32)),
    "request timeout": (" ms", (250, 500, 1000, 2000, 5000, 30000)),
    "queue depth limit": ("", (100, 500, 1000, 5000, 10000)),
    "heap limit": (" MB", (512, 1024, 2048, 4096, 8192)),
    "replica count": ("", (1, 2, 3, 5, 7)),
    "shard count": ("", (4, 8, 16, 32, 64)),
    "lock timeout": (" ms", (100, 500, 1000, 5000)),
    "max payload size": (" KB", (64, 256, 1024, 4096)),
    "keepalive interval": (" seconds", (15, 30, 60, 120)),
    "rate limit": (" requests per second", (10, 50, 100, 500, 1000)),
    "page size": ("", (20, 50, 100, 200)),
    "token expiry": (" minutes", (5, 15, 30, 60)),
}
TOOLS = (
    "postgres", "redis", "kafka", "sqlite", "nginx", "terraform", "kubernetes", "docker", "grpc",
    "pytest", "elasticsearch", "rabbitmq", "prometheus", "grafana", "envoy", "vault", "clickhouse",
    "s3", "celery", "helm",
)  # fmt: skip
DATA_KINDS = (
    "order snapshots", "session tokens", "audit events", "rate-limit counters", "price tables",
    "feature flag rules", "invoice PDFs", "search synonyms", "webhook receipts", "fraud scores",
)  # fmt: skip
ERRORS = (
    "ECONNRESET", "ETIMEDOUT", "OOMKilled", "SQLITE_BUSY", "HTTP 429", "deadlock detected",
    "certificate has expired", "ENOSPC", "too many open files", "HTTP 502", "checksum mismatch",
    "lease expired", "schema version mismatch", "connection refused", "context deadline exceeded",
)  # fmt: skip
CAUSES = (
    "the lockfile drifted from the registry", "a stale DNS entry pointed at the old cluster",
    "the migration ran before the schema flag flipped", "the connection pool was exhausted by a slow query",
    "the TLS certificate expired overnight", "the disk filled up with unrotated logs",
    "the retry loop had no jitter", "the queue consumer crashed on a poison message",
    "clock skew broke token validation", "the canary received production traffic too early",
)  # fmt: skip
ACTIONS = (
    ("rotate the credentials for", "mise run secrets:rotate {svc}", "restart the pods"),
    ("roll back", "kubectl rollout undo deploy/{svc}", "confirm the error rate drops"),
    ("reindex", "make reindex SERVICE={svc}", "watch the lag metric reach zero"),
    ("drain", "kubectl drain --selector app={svc}", "wait for in-flight jobs to finish"),
    ("run the migrations for", "pnpm --filter {svc} db:migrate", "verify the schema version"),
    ("flush the dead-letter queue of", "bin/dlq replay {svc}", "check that nothing re-fails"),
)
PEOPLE = (
    "Alice Chen", "Bob Martinez", "Carla Rossi", "Dmitri Volkov", "Emeka Okafor", "Fatima Zahra",
    "Hana Sato", "Jia Li", "Laura Schmidt", "Mateo García", "Priya Raman", "Zoë Clarke",
)  # fmt: skip
PREFS = (
    ("squash merges", "merging pull requests"), ("table-driven tests", "unit tests"),
    ("short commit subjects under 50 characters", "commit messages"),
    ("a written design doc before any migration", "schema changes"),
    ("feature flags for risky changes", "releases"), ("metric units", "capacity plans"),
)  # fmt: skip
VERDICTS = (
    ("postgres", "dynamodb", "we need multi-row transactions"),
    ("kafka", "rabbitmq", "replay matters more than routing"),
    ("clickhouse", "elasticsearch", "the queries are aggregations"),
    ("envoy", "nginx", "we need per-route retries"),
)
SITUATIONS = (
    ("a deploy froze during a holiday", "postponed the release to the next business day"),
    ("a migration needed a table lock", "ran it in the maintenance window with a dry run first"),
    ("a vendor outage lasted over an hour", "switched traffic to the fallback provider"),
    ("an API key leaked into a log", "rotated it first and scrubbed the logs second"),
)
FILLER = (
    "This was confirmed against the production dashboards.", "The change shipped behind a feature flag.",
    "The runbook links here from the alert description.", "It was measured on the staging cluster first.",
    "Two engineers reproduced it independently.", "It only shows up under sustained load.",
    "Rolling back restored the previous behaviour within minutes.", "A follow-up ticket tracks the long-term fix.",
    "The old value is still referenced in one legacy script.",
)  # fmt: skip
# (title suffix, claim template): a few memories written in Chinese or Japanese.
CJK_FACTS = (
    ("连接池上限", "{svc} 的连接池上限是 {n}，超过后请求会排队。"),
    ("部署回滚", "{svc} 部署失败时先执行回滚，再检查错误率，工单 {ident}。"),
    ("キャッシュ有効期限", "{svc} のキャッシュ有効期限は {n} 秒です。"),
    ("障害対応", "{svc} で障害が発生したら {ident} の手順に従ってください。"),
)
TAGS = (
    "infra", "db", "ci", "deploy", "perf", "security", "oncall", "testing", "api", "billing",
    "observability", "migration", "incident", "tooling", "release", "cost", "networking", "storage",
)  # fmt: skip
WORKSPACES = ("payments", "search", "platform", "mobile-app", "data-eng", "growth")
IDENTIFIER_PREFIXES = ("INV", "INC", "CHG", "OPS", "RFC")
# A few incidents everybody keeps citing (as in a real tracker); queries look these up.
HOT_IDENTIFIERS = tuple(f"INV-2024-{number:03d}" for number in range(1, 13))
TYPE_WEIGHTS = (
    ("semantic", 38), ("procedural", 14), ("episodic", 5), ("agent_insight", 8), ("user_preference", 7),
    ("error_pattern", 12), ("verdict", 6), ("precedent", 5), ("task", 5),
)  # fmt: skip
CJK_EVERY = 97  # one memory in 97 is written in Chinese or Japanese, cycling through CJK_FACTS
# The corpus spans about three years of writes, the newest at this instant.
NEWEST = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)
SPAN_MINUTES = 3 * 365 * 24 * 60

Claim = tuple[str, str, list[str]]  # title, claim sentence, entities


@dataclass(frozen=True)
class Memory:
    """One generated memory: what a caller would pass to `write`, and when it was written."""

    request: WriteRequest
    written: dt.datetime


# ---------------------------------------------------------------- claims, one builder per type


def identifier(rng: random.Random) -> str:
    """A ticket-like identifier such as INV-2024-001; a third are the few hot ones, shared widely."""
    if rng.random() < 0.3:
        return rng.choice(HOT_IDENTIFIERS)
    return f"{rng.choice(IDENTIFIER_PREFIXES)}-{rng.randint(2022, 2026)}-{rng.randint(1, 400):03d}"


def iso_day(rng: random.Random) -> str:
    return f"{rng.randint(2024, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _semantic(rng: random.Random, svc: str) -> Claim:
    if rng.random() < 0.6:
        component = rng.choice(list(COMPONENTS))
        unit, values = COMPONENTS[component]
        value = f"{rng.choice(values)}{unit}"
        return f"{svc} {component}", f"The {component} of {svc} is {value}.", [f"service:{svc}"]
    data, tool = rng.choice(DATA_KINDS), rng.choice(TOOLS)
    return f"Where {svc} keeps {data}", f"{svc} stores {data} in {tool}.", [f"service:{svc}", f"tool:{tool}"]


def _procedural(rng: random.Random, svc: str) -> Claim:
    verb, command, follow = rng.choice(ACTIONS)
    claim = f"To {verb} {svc}, run `{command.format(svc=svc)}` and then {follow}."
    return f"How to {verb} {svc}", claim, [f"service:{svc}"]


def _episodic(rng: random.Random, svc: str) -> Claim:
    day, ident = iso_day(rng), identifier(rng)
    if rng.random() < 0.5:
        claim = f"On {day} the {svc} deploy failed because {rng.choice(CAUSES)} ({ident})."
        return f"{svc} deploy failure {day}", claim, [f"service:{svc}"]
    error = rng.choice(ERRORS)
    claim = f"During incident {ident} on {day} {svc} returned {error} for {rng.randint(2, 90)} minutes."
    return f"{svc} {error} incident {ident}", claim, [f"service:{svc}"]


def _agent_insight(rng: random.Random, svc: str) -> Claim:
    tool = rng.choice(TOOLS)
    claim = f"Batching {tool} calls in {svc} cut p50 latency by {rng.randint(5, 80)} percent."
    return f"Batching {tool} calls in {svc}", claim, [f"service:{svc}", f"tool:{tool}"]


def _user_preference(rng: random.Random, _svc: str) -> Claim:
    person = rng.choice(PEOPLE)
    preference, topic = rng.choice(PREFS)
    person_id = person.lower().replace(" ", "-")
    return f"{person} on {topic}", f"{person} prefers {preference} for {topic}.", [f"person:{person_id}"]


def _error_pattern(rng: random.Random, svc: str) -> Claim:
    error = rng.choice(ERRORS)
    return f"{error} from {svc}", f"{error} from {svc} usually means {rng.choice(CAUSES)}.", [f"service:{svc}"]


def _verdict(rng: random.Random, svc: str) -> Claim:
    chosen, other, why = rng.choice(VERDICTS)
    claim = f"We chose {chosen} over {other} for {svc} because {why}."
    return f"{chosen} over {other} for {svc}", claim, [f"service:{svc}", f"tool:{chosen}"]


def _precedent(rng: random.Random, _svc: str) -> Claim:
    situation, action = rng.choice(SITUATIONS)
    return f"Precedent: {situation}", f"When {situation}, the team {action}.", []


def _task(rng: random.Random, svc: str) -> Claim:
    component = rng.choice(list(COMPONENTS))
    claim = f"Review the {component} of {svc} before {iso_day(rng)} (tracked in {identifier(rng)})."
    return f"Review {svc} {component}", claim, [f"service:{svc}"]


CLAIM_BUILDERS: dict[str, Callable[[random.Random, str], Claim]] = {
    "semantic": _semantic,
    "procedural": _procedural,
    "episodic": _episodic,
    "agent_insight": _agent_insight,
    "user_preference": _user_preference,
    "error_pattern": _error_pattern,
    "verdict": _verdict,
    "precedent": _precedent,
    "task": _task,
}


def _cjk_claim(rng: random.Random, svc: str, serial: int) -> Claim:
    suffix, template = CJK_FACTS[(serial // CJK_EVERY) % len(CJK_FACTS)]
    claim = template.format(svc=svc, n=rng.choice((30, 64, 128, 300)), ident=identifier(rng))
    return f"{svc} {suffix}", claim, [f"service:{svc}"]


# ---------------------------------------------------------------- one memory


def _bodies(rng: random.Random, token: str) -> list[str]:
    sentences = [*rng.sample(FILLER, rng.choice((0, 1, 1, 2, 3))), f"Source: {token}."]
    if rng.random() < 0.3:
        sentences.append(f"Related: {identifier(rng)}.")
    bodies = [" ".join(sentences)]
    if rng.random() < 0.05:
        service = rng.choice(SERVICES)
        bodies.append(f"```sh\nkubectl logs -l app={service} --tail={rng.randint(50, 500)}\n```")
    return bodies


def _written(rng: random.Random) -> dt.datetime:
    return NEWEST - dt.timedelta(minutes=rng.randrange(SPAN_MINUTES))


def generate_memory(rng: random.Random, serial: int, salt: str) -> Memory:
    """The memory number `serial`; its `Source:` token (salt + serial) keeps its text unique."""
    memory_type = rng.choices([name for name, _ in TYPE_WEIGHTS], [weight for _, weight in TYPE_WEIGHTS])[0]
    service = rng.choice(SERVICES)
    if serial % CJK_EVERY == CJK_EVERY // 2:
        title, claim, entities = _cjk_claim(rng, service, serial)
    else:
        title, claim, entities = CLAIM_BUILDERS[memory_type](rng, service)
    if rng.random() < 0.2 and entities:
        entities.append(f"tool:{rng.choice(TOOLS)}")
    request = WriteRequest(
        title=title[:1].upper() + title[1:],
        memory_type=memory_type,
        claim=claim[:1].upper() + claim[1:],
        bodies=_bodies(rng, f"{rng.choice(IDENTIFIER_PREFIXES)}-{salt}-{serial}"),
        workspace=rng.choice(WORKSPACES) if rng.random() < 0.35 else None,
        tags=rng.sample(TAGS, rng.choice((0, 1, 1, 1, 2, 2, 3))),
        entities=list(dict.fromkeys(entities)),
        importance=rng.randint(1, 10) if rng.random() < 0.4 else None,
        confidence=rng.choice((0.5, 0.7, 0.8, 0.9, 1.0)) if rng.random() < 0.3 else None,
    )
    return Memory(request, _written(rng))


def memories(size: int, seed: int = 42, salt: str = "base") -> Iterator[Memory]:
    """`size` memories; a different `salt` draws memories disjoint from the base corpus."""
    rng = random.Random(f"memhtml-bench-corpus:{seed}:{salt}")
    for serial in range(size):
        yield generate_memory(rng, serial, salt)


def queries(count: int = 20, seed: int = 42) -> list[str]:
    """`count` distinct search queries from the corpus vocabulary, each expected to hit some memory."""
    rng = random.Random(f"memhtml-bench-queries:{seed}")
    makers: list[Callable[[], str]] = [
        lambda: f"{rng.choice(SERVICES)} {rng.choice(list(COMPONENTS))}",
        lambda: f"why did the {rng.choice(SERVICES)} deploy fail",
        lambda: rng.choice(ERRORS),
        lambda: f"what does {rng.choice(ERRORS)} mean",
        lambda: f"how do I {rng.choice(ACTIONS)[0]} {rng.choice(SERVICES)}",
        lambda: f"what does {rng.choice(PEOPLE).split()[0]} prefer for {rng.choice(PREFS)[1]}",
        lambda: f'"{rng.choice(list(COMPONENTS))}"',
        lambda: "{} versus {}".format(*rng.sample(TOOLS, 2)),
        lambda: f"where are {rng.choice(DATA_KINDS)} stored",
        lambda: rng.choice(HOT_IDENTIFIERS),
        lambda: rng.choice(CAUSES),
        lambda: rng.choice(("连接池上限", "キャッシュ有効期限", "部署回滚")),
    ]
    drawn: list[str] = []
    for attempt in range(count * 20):  # bounded: a small vocabulary may run out of new queries
        query = makers[attempt % len(makers)]()
        if query not in drawn:
            drawn.append(query)
        if len(drawn) == count:
            break
    return drawn


def ops_jsonl(size: int, salt: str) -> str:
    """`size` generated memories as apply ops (the claim leads the body, as `apply` reads it)."""
    lines = []
    for memory in memories(size, salt=salt):
        request = memory.request
        op: dict[str, object] = {
            "op": "write",
            "title": request.title,
            "type": request.memory_type,
            "body": " ".join([request.claim or "", *request.bodies]).strip(),
        }
        if request.workspace:
            op["workspace"] = request.workspace
        if request.tags:
            op["tags"] = request.tags
        if request.entities:
            op["entities"] = request.entities
        if request.importance is not None:
            op["importance"] = request.importance
        if request.confidence is not None:
            op["confidence"] = request.confidence
        lines.append(json.dumps(op, ensure_ascii=False))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- stores


def render(memory: Memory) -> PlacedMemory:
    """The memory file exactly as our `write` would render it."""
    return place_memory(memory.request, memory.written)


class FreshPaths:
    """Collision-free paths for a store that holds only its scaffold: ordinals are counted in memory,
    so a 100k build does not pay one `git ls-tree` per file (what `PathClaimer` needs on a live store).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.next_ordinal: dict[tuple[str, str, str | None], int] = {}

    def claim(self, placed: PlacedMemory) -> str:
        key = (placed.directory, placed.slug, placed.date_prefix)
        ordinal = self.next_ordinal.get(key, 1)
        while True:
            candidate = f"{placed.directory}/{memory_filename(placed.slug, ordinal, placed.date_prefix)}"
            ordinal += 1
            if not os.path.lexists(self.root / candidate):
                self.next_ordinal[key] = ordinal
                return candidate


def write_fixture_file(target: Path, text: str) -> None:
    """The bytes `create_file_exclusively` writes, without its per-file fsync and temporary link: a
    fixture needs no durability, and at 100k files the fsyncs alone cost about 40 s."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("xb") as handle:
        handle.write(text.encode("utf-8"))


def build_store(root: Path, size: int, seed: int = 42) -> list[str]:
    """A fresh store of `size` memories committed at once; returns the memory paths in order."""
    init_store(root)
    store = open_store(root)
    paths = FreshPaths(root)
    written = []
    for memory in memories(size, seed):
        placed = render(memory)
        path = paths.claim(placed)
        write_fixture_file(root / path, placed.file_text)
        written.append(path)
    message = commit_message(commit_subject("batch", f"{size} memories"))
    commit_paths(root, store.git_dir, [Staged(path) for path in written], message)  # the git index too
    # Packed, as a lived-in store is: its blobs went in as loose objects, and past git's threshold
    # (6,700) the first plain `git commit` a benchmark makes would start a `git gc` in the background,
    # repacking the whole store through the measurements that follow.
    subprocess.run(["git", "-C", str(root), "gc", "--quiet"], check=True)
    return written


def add_memory_file(root: Path, memory: Memory) -> str:
    """Write one more memory file into a live store (not committed); returns its path."""
    placed = render(memory)
    path = PathClaimer(root).claim(placed.directory, placed.slug, placed.date_prefix)
    create_file_exclusively(root, path, placed.file_text)
    return path
