"""The discrimination fixture and its scoring: does each target memory rank above its own wrong twins?

A seeded, pure generator writes a corpus of invented service facts (12 topics with disjoint
vocabularies, crossed with nine memory types) and, for a sample of semantic and procedural targets,
up to three mechanically derived wrong twins: a negation flip, a numeric flip and a variant flip.
Each twin passes its own family's divergence predicate, sits beside its target, copies its body,
and is dated a day later, so recency favours the twin: only relevance can put the target first.
The query is the target's claim, lowercased, stop words removed, at most 12 tokens.

Scoring: a probe's discrimination rank is 1 plus the number of its twins the target fails to
outrank strictly (an absent twin is outranked by a present target; an absent target loses to all).
The gate passes only with probes, zero inversions and MRR at or above the floor.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from memhtml.domain.divergence import negations, numbers, qualifiers

DEFAULT_SEED: Final[int] = 20260802
DEFAULT_SIZE: Final[int] = 200
DEFAULT_PROBES: Final[int] = 36
DEFAULT_MRR_FLOOR: Final[float] = 0.85
PROBE_LIMIT: Final[int] = 40
MAX_QUERY_TOKENS: Final[int] = 12
FAMILY_MARKERS: Final[dict[str, str]] = {
    "negation": "Refuted reading",
    "numeric": "Restated quantity",
    "variant": "Qualified variant",
}
_STOP_WORDS: Final[frozenset[str]] = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it", "its", "of",
     "on", "or", "that", "the", "this", "to", "was", "were", "will", "with"}
)  # fmt: skip
_WORD: Final = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")


def mulberry32(seed: int) -> Callable[[], float]:
    """A small, well-known 32-bit PRNG: the same seed gives the same stream on every platform."""
    state = seed & 0xFFFFFFFF

    def next_value() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        value = state
        value = ((value ^ (value >> 15)) * (value | 1)) & 0xFFFFFFFF
        value ^= (value + (((value ^ (value >> 7)) * (value | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((value ^ (value >> 14)) & 0xFFFFFFFF) / 4294967296

    return next_value


class Topic(NamedTuple):
    service: str
    area: str
    anchor: str  # the variant anchor noun: a qualifier is inserted after it
    nouns: tuple[str, str, str, str, str]
    verbs: tuple[str, str, str]  # the negation anchor: "not" is inserted after it


TOPICS: Final[tuple[Topic, ...]] = (
    Topic("kestrel", "payments", "gateway", ("ledger", "invoice", "settlement", "refund", "chargeback"),
          ("routes", "batches", "signs")),
    Topic("quokka", "search", "crawler", ("snippet", "synonym", "shard", "facet", "stemmer"),
          ("ranks", "tokenizes", "merges")),
    Topic("marmot", "billing", "meter", ("tariff", "coupon", "proration", "dunning", "receipt"),
          ("charges", "rates", "bills")),
    Topic("ocelot", "identity", "vault", ("token", "passkey", "session", "scope", "claimset"),
          ("issues", "rotates", "revokes")),
    Topic("pelican", "logistics", "router", ("parcel", "depot", "manifest", "courier", "pallet"),
          ("dispatches", "weighs", "labels")),
    Topic("narwhal", "telemetry", "collector", ("span", "histogram", "exemplar", "sampler", "exporter"),
          ("aggregates", "buffers", "flushes")),
    Topic("wombat", "storage", "compactor", ("segment", "tombstone", "snapshot", "blobstore", "checksum"),
          ("compresses", "replicates", "scrubs")),
    Topic("lemur", "messaging", "broker", ("topic", "partition", "offset", "consumer", "dlq"),
          ("publishes", "acknowledges", "retains")),
    Topic("tapir", "analytics", "warehouse", ("cohort", "funnel", "dashboard", "metric", "rollup"),
          ("materializes", "partitions", "refreshes")),
    Topic("axolotl", "scheduling", "planner", ("shift", "roster", "timeslot", "overtime", "rota"),
          ("allocates", "reserves", "balances")),
    Topic("ibex", "notifications", "dispatcher", ("digest", "webhook", "template", "channel", "throttle"),
          ("delivers", "deduplicates", "queues")),
    Topic("gecko", "inventory", "ledgerbook", ("sku", "warehousebin", "backorder", "restock", "cyclecount"),
          ("reconciles", "reserves", "counts")),
)  # fmt: skip

# Nine types (tasks are not memories of fact); each has its own claim template.
_TEMPLATES: Final[dict[str, str]] = {
    "semantic": "The {service} {anchor} {verb} every {noun} within {number} seconds in the {scope} lane.",
    "procedural": "To recover the {service} {anchor}, the operator {verb} each {noun} in batches of {number} "
    "for the {scope} lane.",
    "episodic": "On shift {number} the {service} {anchor} {verb} a stuck {noun} for the {scope} lane.",
    "agent_insight": "The {service} {anchor} {verb} a {noun} faster when {number} workers share the {scope} lane.",
    "user_preference": "The team wants the {service} {anchor} to keep {number} {noun} copies in the {scope} lane.",
    "error_pattern": "The {service} {anchor} {verb} a duplicate {noun} when retries exceed {number} in the "
    "{scope} lane.",
    "verdict": "Review {number} approved how the {service} {anchor} {verb} each {noun} in the {scope} lane.",
    "precedent": "Incident {number} set how the {service} {anchor} {verb} a late {noun} in the {scope} lane.",
    "arc": "The {service} {anchor} story covers how it {verb} the {noun} over {number} weeks in the {scope} lane.",
}
_TYPES: Final[tuple[str, ...]] = tuple(_TEMPLATES)
_SCOPES: Final[tuple[str, ...]] = (
    "amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kelp", "lagoon", "maple", "nimbus", "onyx", "prairie", "quartz", "russet", "sierra", "tundra",
)  # fmt: skip
_QUALIFIERS: Final[tuple[str, ...]] = ("legacy", "beta", "preview", "experimental", "pro")


class FixtureMemory(NamedTuple):
    key: str  # unique within the fixture; the harness maps it to the stored path
    title: str
    memory_type: str
    claim: str
    body: str
    workspace: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    event_at: str
    family: str | None = None  # set on a wrong twin: negation | numeric | variant
    target_key: str | None = None


class Probe(NamedTuple):
    target_key: str
    control_keys: tuple[str, ...]
    families: tuple[str, ...]
    query: str


class AccessSeed(NamedTuple):
    key: str
    access_count: int
    reinforce_count: int
    outcome_score: float
    last_accessed_at: str


class Fixture(NamedTuple):
    memories: tuple[FixtureMemory, ...]
    probes: tuple[Probe, ...]
    access: tuple[AccessSeed, ...]


def build_fixture(
    seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE, probes: int = DEFAULT_PROBES, now: dt.datetime | None = None
) -> Fixture:
    """The whole fixture for `seed`: the same arguments give the same fixture, byte for byte."""
    if size < 1 or probes < 0:
        raise ValueError("size must be at least 1 and probes at least 0")
    instant = (now or dt.datetime(2026, 11, 30, tzinfo=dt.UTC)).astimezone(dt.UTC)
    random = mulberry32(seed)
    base = [_base_memory(ordinal, random, instant) for ordinal in range(size)]
    eligible = [memory for memory in base if memory.memory_type in ("semantic", "procedural")]
    stride = max(1, len(eligible) // probes) if probes else 1
    targets = eligible[::stride][:probes] if probes else []
    controls: list[FixtureMemory] = []
    probe_list: list[Probe] = []
    for target in targets:
        twins = [twin for family in FAMILY_MARKERS if (twin := _twin(target, family, random)) is not None]
        controls += twins
        probe_list.append(
            Probe(
                target.key,
                tuple(twin.key for twin in twins),
                tuple(twin.family or "" for twin in twins),
                probe_query(target.claim),
            )
        )
    access_random = mulberry32(seed ^ 0x5F3759DF)
    access = [
        _access(memory.key, access_random, instant) for memory in base if access_random() < 0.6
    ]  # controls never get history
    return Fixture(tuple(base + controls), tuple(probe_list), tuple(access))


def _base_memory(ordinal: int, random: Callable[[], float], instant: dt.datetime) -> FixtureMemory:
    topic = TOPICS[ordinal % len(TOPICS)]
    memory_type = _TYPES[(ordinal // len(TOPICS)) % len(_TYPES)]
    noun = topic.nouns[(ordinal // 3) % len(topic.nouns)]
    verb = topic.verbs[ordinal % len(topic.verbs)]
    scope = f"{_SCOPES[ordinal % len(_SCOPES)]}{ordinal // len(_SCOPES)}"
    number = 5 + int(random() * 90)
    claim = _TEMPLATES[memory_type].format(
        service=topic.service.capitalize(), anchor=topic.anchor, verb=verb, noun=noun, number=number, scope=scope
    )
    code = _letter_code(ordinal)
    body = " ".join(
        [
            claim,
            f"The {topic.area} group owns the {topic.service} {topic.anchor} and reviews it every quarter.",
            f"\n\nEach {noun} carries a {topic.nouns[(ordinal + 1) % 5]} reference for the {scope} lane.",
            f"\n\nThe runbook entry is filed under code {code} for the {topic.area} workspace.",
        ]
    )
    days_ago = int(random() * 400)
    return FixtureMemory(
        key=f"m{ordinal:04d}",
        title=f"{topic.service.capitalize()} {topic.anchor} {noun} {scope}",
        memory_type=memory_type,
        claim=claim,
        body=body,
        workspace=topic.area,
        tags=(topic.service, topic.area),
        entities=(f"project:{topic.service}",),
        event_at=_day(instant - dt.timedelta(days=days_ago + 2)),
    )


def _twin(target: FixtureMemory, family: str, random: Callable[[], float]) -> FixtureMemory | None:
    """A wrong twin of `target` in `family`, or None when the flip would not pass its own predicate."""
    topic = next(topic for topic in TOPICS if target.tags[0] == topic.service)
    claim = target.claim
    if family == "negation":
        verb = next((verb for verb in topic.verbs if f" {verb} " in claim), None)
        flipped = claim.replace(f" {verb} ", f" does not {_base_form(verb)} ", 1) if verb else claim
        passes = negations(flipped) != negations(claim)
    elif family == "numeric":
        found = re.search(r"\d+", claim)
        if found is None:
            return None
        value = int(found.group())
        changed = value + 10 if value < 100 else value * 2
        flipped = claim[: found.start()] + str(changed) + claim[found.end() :]
        passes = numbers(flipped) != numbers(claim)
    else:
        qualifier = _QUALIFIERS[int(random() * len(_QUALIFIERS))]
        flipped = claim.replace(f" {topic.anchor} ", f" {topic.anchor} {qualifier} ", 1)
        passes = qualifiers(flipped) != qualifiers(claim)
    if not passes or flipped == claim:
        return None
    day_after = _day(dt.datetime.fromisoformat(target.event_at.replace("Z", "+00:00")) + dt.timedelta(days=1))
    return FixtureMemory(
        key=f"{target.key}-{family}",
        title=f"{FAMILY_MARKERS[family]} — {target.title}",
        memory_type=target.memory_type,
        claim=flipped,
        body=target.body.replace(claim, flipped, 1),
        workspace=target.workspace,
        tags=target.tags,
        entities=target.entities,
        event_at=day_after,
        family=family,
        target_key=target.key,
    )


def _base_form(verb: str) -> str:
    """ "routes" -> "route", "dispatches" -> "dispatch", "tokenizes" -> "tokenize"."""
    for ending in ("ches", "shes", "sses", "xes"):
        if verb.endswith(ending):
            return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def probe_query(claim: str) -> str:
    """The target claim, lowercased, stop words removed, at most 12 tokens (digits kept)."""
    tokens = [token for token in _WORD.findall(claim.lower()) if token not in _STOP_WORDS]
    return " ".join(tokens[:MAX_QUERY_TOKENS])


def _access(key: str, random: Callable[[], float], instant: dt.datetime) -> AccessSeed:
    count = max(1, round(1 / (0.08 + random())))
    return AccessSeed(
        key=key,
        access_count=count,
        reinforce_count=int(random() * 3),
        outcome_score=round(min(1.0, random() * 1.5 - 0.5), 3),
        last_accessed_at=_instant(instant - dt.timedelta(hours=int(random() * 2000))),
    )


def _letter_code(ordinal: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    first, rest = divmod(ordinal, 26 * 26)
    second, third = divmod(rest, 26)
    return f"{letters[first % 26]}{letters[second]}{letters[third]}-{ordinal:04d}"


def _day(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def _instant(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class ProbeResult(NamedTuple):
    target_key: str
    query: str
    target_rank: int | None
    control_ranks: dict[str, int | None]
    discrimination_rank: int
    degraded: bool

    @property
    def inverted(self) -> bool:
        return self.discrimination_rank > 1


def score_probe(probe: Probe, ranked_keys: Sequence[str], degraded: bool) -> ProbeResult:
    """Rank the target against its twins in one hit list (keys best first)."""
    position = {key: index + 1 for index, key in enumerate(ranked_keys)}
    target = position.get(probe.target_key)
    controls = {family: position.get(key) for key, family in zip(probe.control_keys, probe.families, strict=True)}
    if target is None:
        failed = len(probe.control_keys)
    else:
        failed = sum(1 for rank in controls.values() if rank is not None and rank <= target)
    return ProbeResult(probe.target_key, probe.query, target, controls, 1 + failed, degraded)


@dataclass(frozen=True)
class GateResult:
    results: tuple[ProbeResult, ...]
    mrr_floor: float
    corpus_size: int
    by_family: dict[str, int] = field(default_factory=dict)

    @property
    def probes(self) -> int:
        return len(self.results)

    @property
    def inversions(self) -> int:
        return sum(1 for result in self.results if result.inverted)

    @property
    def mrr(self) -> float:
        if not self.results:
            return 0.0
        return round(sum(1 / result.discrimination_rank for result in self.results) / len(self.results), 4)

    @property
    def corpus_mrr(self) -> float:
        if not self.results:
            return 0.0
        return round(sum(1 / result.target_rank for result in self.results if result.target_rank) / self.probes, 4)

    @property
    def passed(self) -> bool:
        return self.probes > 0 and self.inversions == 0 and self.mrr >= self.mrr_floor
