"""The supersession benchmark: seeded chains of changing facts, the probes that ask about them, their scoring.

A pure, seeded generator invents teams and services and, for each, chains of facts about one subject
and attribute that change over time ("The Heron team's office is in Oslo." … later "… in Lima."):
a team's office and its lead, and which team owns a service. Each chain is written either through
`correct` (each version supersedes the one before) or as plain writes with event times (every
version stays active). A few teams get two facts that contradict each other, recorded with a
`contradicts` link.

Probes, by case:
- `current/<method>`: the chain's latest value ranks first.
- `as-of/<method>`: with `--as-of` a day between two versions, the value valid then ranks first.
- `multi-hop/current`, `multi-hop/as-of`: "where is the office of the team that owns the X service",
  asked in two hops: the top hit of "which team owns X" names the team the second search asks about;
  the probe passes when the second hop's top hit is the expected office.
- `contradiction`: both sides of a recorded contradiction are the top two hits.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple

from memhtml.evaluation.discrimination import mulberry32

DEFAULT_SEED: Final[int] = 20261130
DEFAULT_TEAMS: Final[int] = 10
DEFAULT_SERVICES: Final[int] = 8
DEFAULT_CONTRADICTIONS: Final[int] = 4
METHODS: Final[tuple[str, ...]] = ("correct", "plain")
CASES: Final[tuple[str, ...]] = (
    "current/correct",
    "current/plain",
    "as-of/correct",
    "as-of/plain",
    "multi-hop/current",
    "multi-hop/as-of",
    "contradiction",
)
# Both sides of a contradiction must be the top hits: there are two of them.
CONTRADICTION_DEPTH: Final[int] = 2
_START: Final = dt.datetime(2024, 1, 8, 9, 0, tzinfo=dt.UTC)

_TEAMS: Final[tuple[str, ...]] = (
    "Heron", "Kestrel", "Marlin", "Osprey", "Puffin", "Quail", "Raven", "Sparrow", "Tern", "Vireo",
    "Wren", "Avocet", "Bunting", "Curlew", "Dunlin", "Egret", "Finch", "Grebe", "Ibis", "Jacana",
)  # fmt: skip
_SERVICES: Final[tuple[str, ...]] = (
    "ledger", "courier", "beacon", "atlas", "prism", "harbor", "lantern", "quarry", "summit", "tundra",
    "meadow", "glacier", "canyon", "delta", "ember", "fjord",
)  # fmt: skip
_CITIES: Final[tuple[str, ...]] = (
    "Oslo", "Lima", "Quito", "Hanoi", "Dakar", "Porto", "Tallinn", "Accra", "Bergen", "Cusco",
    "Nairobi", "Ghent", "Leipzig", "Malmo", "Turku", "Valencia",
)  # fmt: skip
_PEOPLE: Final[tuple[str, ...]] = (
    "Amara Osei", "Bruno Silva", "Chen Wei", "Dagny Berg", "Emeka Obi", "Farah Haddad", "Goran Petrov",
    "Hana Sato", "Ines Duarte", "Jonas Lind", "Kavya Rao", "Luca Ferri", "Mira Novak", "Nils Holm",
)  # fmt: skip


class Attribute(NamedTuple):
    name: str
    claim: str  # formatted with subject and value
    question: str  # formatted with subject
    values: tuple[str, ...]


ATTRIBUTES: Final[dict[str, Attribute]] = {
    "office": Attribute(
        "office", "The {subject} team's office is in {value}.", "Where is the {subject} team's office?", _CITIES
    ),
    "lead": Attribute("lead", "{value} leads the {subject} team.", "Who leads the {subject} team?", _PEOPLE),
    "owner": Attribute(
        "owner", "The {value} team owns the {subject} service.", "Which team owns the {subject} service?", ()
    ),
}  # fmt: skip


class Fact(NamedTuple):
    key: str
    subject: str
    attribute: str
    value: str
    claim: str
    event_at: str  # `YYYY-MM-DDThh:mm:ssZ`
    entity: str

    @property
    def title(self) -> str:
        return f"{self.subject} {self.attribute}: {self.value}"


class Chain(NamedTuple):
    """The versions of one subject's attribute, oldest first, all written by one method."""

    key: str
    method: str  # correct | plain
    facts: tuple[Fact, ...]


class Contradiction(NamedTuple):
    left: Fact
    right: Fact


class Probe(NamedTuple):
    """One question. A multi-hop probe asks `query` first, then `follow_up` about its top hit's value."""

    case: str
    query: str
    expected: str  # the fact key that must rank first (multi-hop: on the second hop)
    as_of: str | None = None
    follow_up: str | None = None  # the second hop's question, formatted with the first hop's value
    expected_first: str | None = None
    together: tuple[str, ...] = ()  # contradiction: keys that must all be in the top CONTRADICTION_DEPTH


class Benchmark(NamedTuple):
    chains: tuple[Chain, ...]
    contradictions: tuple[Contradiction, ...]
    probes: tuple[Probe, ...]

    @property
    def facts(self) -> dict[str, Fact]:
        found = {fact.key: fact for chain in self.chains for fact in chain.facts}
        found.update({fact.key: fact for pair in self.contradictions for fact in (pair.left, pair.right)})
        return found


def build_benchmark(
    seed: int = DEFAULT_SEED,
    teams: int = DEFAULT_TEAMS,
    services: int = DEFAULT_SERVICES,
    contradictions: int = DEFAULT_CONTRADICTIONS,
) -> Benchmark:
    """The whole benchmark for `seed`: the same arguments give the same chains and probes."""
    if not (teams >= 1 and teams + contradictions <= len(_TEAMS) and 0 <= services <= len(_SERVICES)):
        raise ValueError(f"teams plus contradictions must be 1..{len(_TEAMS)} and services 0..{len(_SERVICES)}")
    random = mulberry32(seed)
    team_names = _shuffled(_TEAMS, random)
    chosen_teams, contradicting = team_names[:teams], team_names[teams : teams + contradictions]
    chains: list[Chain] = []
    for index, team in enumerate(chosen_teams):
        for attribute in ("office", "lead"):
            method = METHODS[(index + (attribute == "lead")) % 2]
            values = _shuffled(ATTRIBUTES[attribute].values, random)[: 1 + int(random() * 4)]
            chains.append(_chain(team, attribute, values, method, random))
    for index, service in enumerate(_shuffled(_SERVICES, random)[:services]):
        owners = _shuffled(chosen_teams, random)[: 1 + int(random() * 3)]
        chains.append(_chain(service, "owner", owners, METHODS[index % 2], random))
    pairs = []
    for team in contradicting:
        left, right = _shuffled(_PEOPLE, random)[:2]
        at = _instant(_START + dt.timedelta(days=int(random() * 300)))
        pairs.append(Contradiction(_fact(team, "lead", left, at, "a"), _fact(team, "lead", right, at, "b")))
    probes = _probes(chains, pairs)
    return Benchmark(tuple(chains), tuple(pairs), probes)


def _shuffled(items: Sequence[str], random: Callable[[], float]) -> list[str]:
    """A seeded Fisher–Yates shuffle of a copy of `items`."""
    order = list(items)
    for position in range(len(order) - 1, 0, -1):
        other = int(random() * (position + 1))
        order[position], order[other] = order[other], order[position]
    return order


def _fact(subject: str, attribute: str, value: str, event_at: str, suffix: str) -> Fact:
    spec = ATTRIBUTES[attribute]
    entity_type = "service" if attribute == "owner" else "team"
    return Fact(
        key=f"{subject.lower()}-{attribute}-{suffix}",
        subject=subject,
        attribute=attribute,
        value=value,
        claim=spec.claim.format(subject=subject, value=value),
        event_at=event_at,
        entity=f"{entity_type}:{subject.lower()}",
    )


def _chain(subject: str, attribute: str, values: Sequence[str], method: str, random: Callable[[], float]) -> Chain:
    moment = _START + dt.timedelta(days=int(random() * 60))
    facts = []
    for version, value in enumerate(values, start=1):
        facts.append(_fact(subject, attribute, value, _instant(moment), f"v{version}"))
        moment += dt.timedelta(days=20 + int(random() * 70))  # at least 20 days: an as-of day fits between
    return Chain(f"{subject.lower()}-{attribute}", method, tuple(facts))


def _instant(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def between(earlier: str, later: str) -> str:
    """A day strictly after `earlier`'s day and strictly before `later`'s (`YYYY-MM-DD`)."""
    start = dt.date.fromisoformat(earlier[:10])
    end = dt.date.fromisoformat(later[:10])
    if (end - start).days < 2:
        raise ValueError(f"no whole day between {earlier} and {later}")
    return (start + (end - start) / 2).isoformat()


def value_at(chain: Chain, day: str) -> Fact:
    """The version valid on `day`: the last one whose event day is before it."""
    valid = [fact for fact in chain.facts if fact.event_at[:10] < day]
    if not valid:
        raise ValueError(f"no version of {chain.key} is valid on {day}")
    return valid[-1]


def _probes(chains: Sequence[Chain], pairs: Sequence[Contradiction]) -> tuple[Probe, ...]:
    probes: list[Probe] = []
    for chain in chains:
        first = chain.facts[0]
        question = ATTRIBUTES[first.attribute].question.format(subject=first.subject)
        probes.append(Probe(f"current/{chain.method}", question, chain.facts[-1].key))
        for older, newer in zip(chain.facts, chain.facts[1:], strict=False):
            day = between(older.event_at, newer.event_at)
            probes.append(Probe(f"as-of/{chain.method}", question, older.key, as_of=day))
    offices = {chain.facts[0].subject: chain for chain in chains if chain.facts[0].attribute == "office"}
    follow_up = ATTRIBUTES["office"].question.replace("{subject}", "{value}")
    for chain in chains:
        owner = chain.facts[0]
        if owner.attribute != "owner":
            continue
        question = ATTRIBUTES["owner"].question.format(subject=owner.subject)
        current = chain.facts[-1]
        probes.append(
            Probe("multi-hop/current", question, offices[current.value].facts[-1].key, follow_up=follow_up,
                  expected_first=current.key)
        )  # fmt: skip
        for older, newer in zip(chain.facts, chain.facts[1:], strict=False):
            day = between(older.event_at, newer.event_at)
            office_chain = offices[older.value]
            if office_chain.facts[0].event_at[:10] >= day:
                continue  # the team's office was not yet known that day
            probes.append(
                Probe("multi-hop/as-of", question, value_at(office_chain, day).key, as_of=day, follow_up=follow_up,
                      expected_first=older.key)
            )  # fmt: skip
    for pair in pairs:
        question = ATTRIBUTES["lead"].question.format(subject=pair.left.subject)
        probes.append(Probe("contradiction", question, pair.left.key, together=(pair.left.key, pair.right.key)))
    return tuple(probes)


class ProbeOutcome(NamedTuple):
    case: str
    query: str
    passed: bool
    expected_rank: int | None  # where the expected key ranked (multi-hop: on the second hop)
    first_hop_passed: bool | None = None


def first_hop_value(ranked_keys: Sequence[str], facts: Mapping[str, Fact]) -> str | None:
    """The value the top hit of a first hop states (the team to ask about next), or None with no hit."""
    for key in ranked_keys:
        if key in facts:
            return facts[key].value
    return None


def score_probe(probe: Probe, ranked_keys: Sequence[str], first_hop: Sequence[str] | None = None) -> ProbeOutcome:
    """Score one probe from its (final) ranking of fact keys, best first."""
    position: dict[str, int] = {}
    for index, key in enumerate(ranked_keys, start=1):
        position.setdefault(key, index)
    rank = position.get(probe.expected)
    if probe.together:
        passed = all(position.get(key, CONTRADICTION_DEPTH + 1) <= CONTRADICTION_DEPTH for key in probe.together)
    else:
        passed = rank == 1
    first_passed = None
    if probe.follow_up is not None:
        first_passed = bool(first_hop) and first_hop is not None and first_hop[0] == probe.expected_first
        passed = passed and first_passed
    return ProbeOutcome(probe.case, probe.query, passed, rank, first_passed)


def accuracy_by_case(outcomes: Sequence[ProbeOutcome]) -> dict[str, dict[str, float | int]]:
    """`{case: {probes, passed, accuracy}}` for every case in CASES order, then `overall`."""
    table: dict[str, dict[str, float | int]] = {}
    for case in (*CASES, "overall"):
        chosen = [outcome for outcome in outcomes if case in ("overall", outcome.case)]
        passed = sum(1 for outcome in chosen if outcome.passed)
        table[case] = {
            "probes": len(chosen),
            "passed": passed,
            "accuracy": round(passed / len(chosen), 3) if chosen else 0.0,
        }
    return table
