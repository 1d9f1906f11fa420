"""The rule-based conflict classifier: each class with look-alikes that must not match, and the no-finding cases."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.conflicts import CONFLICT_CLASSES, ClaimFacts, are_candidates, classify_pair


def fact(claim: str, memory_type: str = "semantic", **fields: str | None) -> ClaimFacts:
    return ClaimFacts(claim, memory_type, workspace=fields.get("workspace"), source=fields.get("source"))


def class_of(new: ClaimFacts, old: ClaimFacts) -> str | None:
    finding = classify_pair(new, old)
    return None if finding is None else finding.conflict_class


ACTIONS = {
    "scope difference": "add",
    "temporal update": "correct",
    "preference change": "correct",
    "precision difference": "keep-more-precise",
    "logical contradiction": "keep-both-flag",
    "source conflict": "keep-both-flag",
}

POSITIVES = [
    # scope difference: one attribute, two values, two workspaces (None is the global scope).
    (
        fact("The API timeout is 60s.", workspace="mobile"),
        fact("The API timeout is 30s.", workspace="web"),
        "scope difference",
    ),
    (
        fact("The deploy day of the checkout service is Friday.", workspace="eu"),
        fact("The deploy day of the checkout service is Tuesday."),
        "scope difference",
    ),
    # temporal update: one attribute, a new value.
    (
        fact("The office of the payments team is Munich."),
        fact("The office of the payments team is Berlin."),
        "temporal update",
    ),
    (fact("Alice works for Globex."), fact("Alice works at Acme."), "temporal update"),
    (
        fact("The owner of the billing service is Alice."),
        fact("The billing service is owned by the payments team."),
        "temporal update",
    ),
    (fact("The latest version of the SDK is 4.3."), fact("The latest version of the SDK is 4.2."), "temporal update"),
    (fact("Alice moved to Berlin."), fact("Alice lives in Paris."), "temporal update"),
    # preference change: a preference replaced.
    (fact("The user switched to Postgres."), fact("The user likes Redis."), "preference change"),
    (fact("The user prefers spaces."), fact("The user prefers tabs over spaces."), "preference change"),
    (
        fact("The preferred editor of the user is Emacs.", "user_preference"),
        fact("The preferred editor of the user is Vim.", "user_preference"),
        "preference change",
    ),
    (fact("The user no longer uses Vim."), fact("The user uses Vim."), "preference change"),
    # precision difference: one quantity or date at two precisions.
    (
        fact("The migration duration is 92 days."),
        fact("The migration duration is about 3 months."),
        "precision difference",
    ),
    (fact("The job timeout is 120 minutes."), fact("The job timeout is 2 hours."), "precision difference"),
    (fact("The cache size is 1536 MB."), fact("The cache size is 1.5 GB."), "precision difference"),
    (fact("The team size is 52."), fact("The team size is around 50."), "precision difference"),
    (fact("The launch is on 2024-03-05."), fact("The launch is in 2024."), "precision difference"),
    (fact("The launch date is March 5, 2024."), fact("The launch date is March 2024."), "precision difference"),
    # logical contradiction: one predicate and object, opposite polarity.
    (fact("The gateway does not support HTTP/2."), fact("The gateway supports HTTP/2."), "logical contradiction"),
    (fact("The cache is not shared."), fact("The cache is shared."), "logical contradiction"),
    (
        fact("The gateway does not retry failed requests."),
        fact("The gateway retries failed requests."),
        "logical contradiction",
    ),
    (fact("The user never uses tabs."), fact("The user uses tabs."), "logical contradiction"),
    (fact("The service has no cache."), fact("The service has a cache."), "logical contradiction"),
    # source conflict: two known, different sources disagree.
    (
        fact("The API timeout is 60s.", source="runbook"),
        fact("The API timeout is 30s.", source="wiki"),
        "source conflict",
    ),
    (
        fact("Alice works at Globex.", source="hr-export"),
        fact("Alice works at Acme.", source="linkedin"),
        "source conflict",
    ),
]


@pytest.mark.parametrize(("new", "old", "expected"), POSITIVES)
def test_each_class_is_found_with_its_action(new: ClaimFacts, old: ClaimFacts, expected: str) -> None:
    finding = classify_pair(new, old)
    assert finding is not None
    assert finding.conflict_class == expected
    assert finding.action == ACTIONS[expected]


NEGATIVES = [
    # scope look-alikes
    (fact("The API timeout is 30s.", workspace="mobile"), fact("The API timeout is 30s.", workspace="web"), None),
    (fact("The API timeout is 30s.", workspace="mobile"), fact("The API retry budget is 3.", workspace="web"), None),
    (
        fact("The API timeout is 60s.", workspace="web"),
        fact("The API timeout is 30s.", workspace="web"),
        "temporal update",
    ),
    # temporal look-alikes: other facets, descriptions, compatible negations, multi-valued verbs, members
    (fact("Alice works at Acme."), fact("Alice lives in Paris."), None),
    (fact("The service is reliable."), fact("The service is fast."), None),
    (fact("The API timeout is not 30s."), fact("The API timeout is 60s."), None),
    (fact("The gateway supports HTTP/3."), fact("The gateway supports HTTP/2."), None),
    (fact("One of the owners of billing is Bob."), fact("One of the owners of billing is Alice."), None),
    (fact("The API timeout might be 60s."), fact("The API timeout is 30s."), None),
    (fact("The office of the payments team is Munich."), fact("The office of the search team is Berlin."), None),
    # preference look-alikes: additive use, other contexts, other kinds of thing, a flat negation
    (fact("The user uses tmux."), fact("The user uses Vim."), None),
    (fact("The user prefers spaces for YAML."), fact("The user prefers tabs for Python."), None),
    (fact("The user also likes Postgres."), fact("The user switched to Redis."), None),
    (
        ClaimFacts("The user prefers Python.", "user_preference", entities=("language:Python",)),
        ClaimFacts("The user prefers tabs.", "user_preference", entities=("style:tabs",)),
        None,
    ),
    (fact("The user does not like Redis."), fact("The user likes Redis."), "logical contradiction"),
    # precision look-alikes: beyond tolerance, the same value twice, bounds, other months
    (fact("The migration duration is 92 days."), fact("The migration duration is 9 months."), "temporal update"),
    (fact("The team size is 70."), fact("The team size is around 50."), "temporal update"),
    (fact("The job timeout is 150 minutes."), fact("The job timeout is 2 hours."), "temporal update"),
    (fact("The API timeout is 30 seconds."), fact("The API timeout is 30s."), None),
    (fact("The team size is 52."), fact("The team size is at least 50."), None),
    (fact("The launch date is 2024-04-05."), fact("The launch date is March 2024."), "temporal update"),
    (fact("The launch date is 2024-03-05."), fact("The launch date is early 2024."), None),
    # contradiction look-alikes: other objects, other verbs, other modality, other subjects, a stated change
    (fact("The gateway does not support HTTP/2."), fact("The gateway supports HTTP/3."), None),
    (fact("The user does not like Vim."), fact("The user uses Vim."), None),
    (fact("The gateway does not handle retries."), fact("The gateway can handle retries."), None),
    (fact("The proxy does not support HTTP/2."), fact("The gateway supports HTTP/2."), None),
    (fact("The API is no longer public."), fact("The API is public."), "temporal update"),
    (
        fact("The gateway does not support HTTP/2.", workspace="edge"),
        fact("The gateway supports HTTP/2."),
        "scope difference",
    ),
    # source look-alikes: one source, an unknown source, agreement, precision, other facets
    (fact("The API timeout is 60s.", source="wiki"), fact("The API timeout is 30s.", source="wiki"), "temporal update"),
    (fact("The API timeout is 60s.", source="runbook"), fact("The API timeout is 30s."), "temporal update"),
    (fact("The API timeout is 30s.", source="runbook"), fact("The API timeout is 30s.", source="wiki"), None),
    (
        fact("The job timeout is 120 minutes.", source="runbook"),
        fact("The job timeout is 2 hours.", source="wiki"),
        "precision difference",
    ),
    (fact("The API timeout is 30s.", source="runbook"), fact("The API retry budget is 3.", source="wiki"), None),
]


@pytest.mark.parametrize(("new", "old", "expected"), NEGATIVES)
def test_look_alikes_get_no_finding_or_another_class(new: ClaimFacts, old: ClaimFacts, expected: str | None) -> None:
    assert class_of(new, old) == expected


def test_every_class_has_two_positives_and_two_look_alikes() -> None:
    positives = {name: sum(expected == name for *_, expected in POSITIVES) for name in CONFLICT_CLASSES}
    assert min(positives.values()) >= 2
    assert len(NEGATIVES) >= 2 * len(CONFLICT_CLASSES)


@pytest.mark.parametrize(
    ("new", "old", "reason"),
    [
        (
            fact("The office of the payments team is Munich."),
            fact("The office of the payments team is Berlin."),
            "office of the payments team: 'Berlin' vs 'Munich'",
        ),
        (
            fact("The gateway does not support HTTP/2."),
            fact("The gateway supports HTTP/2."),
            "the gateway supports: 'HTTP/2' vs 'not HTTP/2'",
        ),
        (
            fact("The migration duration is 92 days."),
            fact("The migration duration is about 3 months."),
            "migration duration: 'about 3 months' vs '92 days'; '92 days' is more precise",
        ),
        (
            fact("The API timeout is 60s.", workspace="mobile"),
            fact("The API timeout is 30s."),
            "API timeout: '30s' vs '60s' in workspace 'global' vs 'mobile'",
        ),
        (
            fact("The API timeout is 60s.", source="runbook"),
            fact("The API timeout is 30s.", source="wiki"),
            "API timeout: '30s' vs '60s' per 'wiki' vs 'runbook'",
        ),
        (
            fact("The user switched to Postgres."),
            fact("The user likes Redis."),
            "preference of the user: 'Redis' vs 'Postgres'",
        ),
    ],
)
def test_the_reason_names_the_attribute_and_both_values(new: ClaimFacts, old: ClaimFacts, reason: str) -> None:
    finding = classify_pair(new, old)
    assert finding is not None
    assert finding.reason == reason


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # Units: "m" could be minutes or metres, and an unknown unit is no time.
        (fact("The cache TTL is 300s."), fact("The cache TTL is 5m."), None),
        (fact("The cache TTL is 300 s."), fact("The cache TTL is 5 min."), "precision difference"),
        (fact("The cache TTL is 5 minutes."), fact("The cache TTL is 5 min."), None),
        (fact("The disk is 1000 GB."), fact("The disk is 1 TB."), "precision difference"),
        # Versions: a release line and a patch on it.
        (
            fact("The Python version of the project is 3.11.4."),
            fact("The Python version of the project is 3.11."),
            "precision difference",
        ),
        (
            fact("The Python version of the project is 3.12."),
            fact("The Python version of the project is 3.11."),
            "temporal update",
        ),
        # Bare "X is V" holds a value only when V looks like one, and of one kind.
        (fact("The API is public."), fact("The API is REST."), None),
        (fact("The on-call rotation is daily."), fact("The on-call rotation is weekly."), "temporal update"),
        (fact("The feature flag is off."), fact("The feature flag is on."), "temporal update"),
        (fact("The build is red."), fact("The build is green."), None),
        (
            fact("The billing service is deployed to eu-west-1."),
            fact("The billing service is deployed to us-east-1."),
            None,
        ),
        (fact("The database is backed up nightly."), fact("The database is Postgres 15."), None),
        # The preposition names the facet: a day, a time, a place.
        (fact("The meeting is at 3pm."), fact("The meeting is on Monday."), None),
        (fact("The meeting is on Tuesday."), fact("The meeting is on Monday."), "temporal update"),
        (fact("The team is in trouble."), fact("The team is in Berlin."), None),
        (fact("The team is based in Munich."), fact("The team is in Berlin."), "temporal update"),
        # One attribute however it is phrased.
        (fact("The owner of the repo is Alice."), fact("Bob is the owner of the repo."), "temporal update"),
        (fact("The repo's owner is Bob."), fact("The repo is owned by Alice."), "temporal update"),
        (fact("Alice's manager is Bob."), fact("Alice reports to Carol."), "temporal update"),
        (fact("The default region changed to eu-west-1."), fact("The default region is us-east-1."), "temporal update"),
        (fact("The default region is set to eu-west-1."), fact("The default region is us-east-1."), "temporal update"),
        (fact("The service has 5 replicas."), fact("The service has 3 replicas."), "temporal update"),
        (fact("Alice joined Acme."), fact("Alice works at Globex."), "temporal update"),
        (fact("Alice joined the meeting."), fact("Alice works at Globex."), None),
        (fact("The user is based in Germany."), fact("The user lives in Berlin."), None),
        # Hedged, compound, pronoun or question claims are not read at all.
        (fact("The timeout is 30s and the retry budget is 3."), fact("The timeout is 60s."), None),
        (fact("It is 60s."), fact("It is 30s."), None),
        (fact("Is the timeout 60s?"), fact("The timeout is 30s."), None),
        (fact("The timeout is probably 60s."), fact("The timeout is 30s."), None),
        # "May" the month is read; "may" the hedge is not.
        (fact("The release is on 2024-05-17."), fact("The release is in May 2024."), "precision difference"),
        (fact("The release may slip to June."), fact("The release is in May 2024."), None),
    ],
)
def test_the_parser_and_value_rules(new: ClaimFacts, old: ClaimFacts, expected: str | None) -> None:
    assert class_of(new, old) == expected


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # Two tastes are one changed only with evidence: a given-up alternative, entity types, or a switch.
        (fact("The user prefers coffee."), fact("The user prefers tea."), None),
        (fact("The user prefers tea."), fact("The user prefers coffee over tea."), "preference change"),
        (fact("The user switched from Vim to Neovim."), fact("The user uses Vim."), "preference change"),
        (fact("The user switched from tabs to spaces."), fact("The user prefers tabs."), "preference change"),
        (fact("The user switched to Neovim."), fact("The user uses Vim."), "preference change"),
        (fact("The user switched to Neovim."), fact("The user uses tmux."), None),
        (fact("The team migrated to Kubernetes."), fact("The team switched to GitLab."), None),
        (fact("The user uses Vim."), fact("The user prefers dark mode."), None),
        (
            ClaimFacts("The user prefers Neovim.", "user_preference", entities=("editor:Neovim",)),
            ClaimFacts("The user prefers Vim.", "user_preference", entities=("editor:Vim",)),
            "preference change",
        ),
        (
            ClaimFacts("The user switched to Postgres.", "semantic", entities=("db:postgres",)),
            ClaimFacts("The user likes Redis.", "semantic", entities=("cache:redis",)),
            None,
        ),
        (fact("Users do not prefer dark mode."), fact("Users prefer dark mode."), "logical contradiction"),
    ],
)
def test_preferences_change_only_on_evidence(new: ClaimFacts, old: ClaimFacts, expected: str | None) -> None:
    assert class_of(new, old) == expected


STORE = [
    "The user prefers dark mode.",
    "The user prefers Python for scripting.",
    "The user prefers tabs over spaces.",
    "The user likes concise answers.",
    "The user uses Vim.",
    "The user uses tmux.",
    "The user works at Acme.",
    "The user lives in Berlin.",
    "The user is a backend engineer.",
    "The user's timezone is CET.",
    "The user has two cats.",
    "The user is allergic to peanuts.",
    "Alice is the tech lead of the payments team.",
    "Alice is the owner of the billing service.",
    "The payments team is in Berlin.",
    "The payments team uses Go.",
    "The billing service is written in Go.",
    "The billing service depends on Postgres.",
    "The billing service depends on Redis.",
    "The billing service is stateless.",
    "The billing service supports gRPC.",
    "The billing service supports REST.",
    "The project uses pytest.",
    "The project uses ruff.",
    "The project is open source.",
    "The project's license is MIT.",
    "The project is hosted on GitHub.",
    "The build takes about 5 minutes.",
    "The build is flaky.",
    "The release is in March 2024.",
    "The API is REST.",
    "The API is public.",
    "The API timeout is 30 seconds.",
    "The cache is Redis.",
    "The cache is warm.",
    # The three real conflicts in the store:
    "The user switched to Neovim.",
    "The user moved to Munich.",
    "The API timeout is 60 seconds.",
]


def test_a_mixed_store_yields_only_its_real_conflicts() -> None:
    memories = [fact(claim) for claim in STORE]
    findings = {(new.claim, old.claim, class_of(new, old)) for new, old in itertools.permutations(memories, 2)}
    found = {finding for finding in findings if finding[2] is not None}
    real = {
        ("The user switched to Neovim.", "The user uses Vim.", "preference change"),
        ("The user moved to Munich.", "The user lives in Berlin.", "temporal update"),
        ("The API timeout is 60 seconds.", "The API timeout is 30 seconds.", "temporal update"),
    }
    # Either order is the same conflict, with the same class.
    assert found == real | {(new, old, kind) for old, new, kind in real}


FACETS = [
    "The port of the checkout service is 8080.",
    "The region of the checkout service is eu-west-1.",
    "The checkout service is owned by the payments team.",
    "The checkout service is written in Go.",
    "The request timeout of the checkout service is 30 seconds.",
    "The retry budget of the checkout service is 3.",
    "The database of the checkout service is Postgres.",
    "The checkout service's cache is Redis.",
    "The queue of the checkout service is SQS.",
    "The deploy day of the checkout service is Tuesday.",
    "The on-call rotation of the checkout service is weekly.",
    "The SLA of the checkout service is 99.9%.",
    "The log level of the checkout service is INFO.",
    "The checkout service is hosted on AWS.",
    "The checkout service uses Kafka.",
    "The checkout service supports HTTP/2.",
    "The checkout service has 3 replicas.",
    "The memory limit of the checkout service is 512 MB.",
]


def test_facets_of_one_object_never_conflict() -> None:
    entity = ("service:checkout service",)
    memories = [ClaimFacts(claim, "semantic", entities=entity) for claim in FACETS]
    assert all(are_candidates(new, old) for new, old in itertools.permutations(memories, 2))
    findings = [(n.claim, o.claim, classify_pair(n, o)) for n, o in itertools.permutations(memories, 2)]
    assert [found for found in findings if found[2] is not None] == []


@pytest.mark.parametrize(
    "claim",
    [
        "The office of the payments team is Berlin.",
        "The gateway supports HTTP/2.",
        "The user prefers tabs.",
        "The migration duration is about 3 months.",
        "The service is fast.",
        "not a sentence at all",
    ],
)
def test_identical_claims_are_no_conflict(claim: str) -> None:
    assert classify_pair(fact(claim), fact(claim)) is None


@pytest.mark.parametrize(("new_type", "old_type"), [("task", "semantic"), ("semantic", "task"), ("task", "task")])
def test_tasks_never_conflict(new_type: str, old_type: str) -> None:
    new, old = fact("The release owner is Bob.", new_type), fact("The release owner is Alice.", old_type)
    assert classify_pair(new, old) is None
    assert class_of(fact(new.claim), fact(old.claim)) == "temporal update"


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (
            ClaimFacts("Alice likes tea.", "semantic", entities=("person:Alice",)),
            ClaimFacts("Bob is here.", "semantic", entities=("Person:alice ",)),
            True,
        ),
        (
            fact("The connection pool ceiling of the payments gateway is 64."),
            fact("The connection pool ceiling of the payments gateway is 128."),
            True,
        ),
        (fact("The office of the payments team is Berlin."), fact("Alice works at Acme."), False),
        (
            ClaimFacts("Alice likes tea.", "semantic", entities=("person:alice",)),
            ClaimFacts("Bob likes coffee.", "semantic", entities=("person:bob",)),
            False,
        ),
        (ClaimFacts("Tea.", "semantic", entities=("",)), ClaimFacts("Coffee.", "semantic", entities=("",)), False),
    ],
)
def test_candidates_share_an_entity_or_a_frame_key(new: ClaimFacts, old: ClaimFacts, expected: bool) -> None:
    assert are_candidates(new, old) is expected


_VOCABULARY = (
    "the a of is are not never no longer does doesn't uses prefers likes switched moved to in on at by supports has "
    "user service API timeout office Berlin 30s 2 hours about around 3 months 92 days 2024 2024-03-05 March , . ' 's"
)
_SENTENCES = st.lists(st.sampled_from(_VOCABULARY.split()), max_size=12).map(" ".join)
_TEXT = st.one_of(st.text(max_size=120), _SENTENCES)
_FACTS = st.builds(
    ClaimFacts,
    claim=_TEXT,
    memory_type=st.sampled_from(["semantic", "user_preference", "episodic", "task"]),
    workspace=st.one_of(st.none(), st.sampled_from(["a", "b"])),
    entities=st.lists(st.text(max_size=12), max_size=3).map(tuple),
    source=st.one_of(st.none(), st.sampled_from(["wiki", "runbook"])),
)


@settings(max_examples=200, deadline=None)
@given(_FACTS, _FACTS)
def test_classify_pair_never_raises_and_names_a_known_class(new: ClaimFacts, old: ClaimFacts) -> None:
    finding = classify_pair(new, old)
    assert finding is None or finding.conflict_class in CONFLICT_CLASSES
    assert finding is None or finding.action == ACTIONS[finding.conflict_class]
    assert isinstance(are_candidates(new, old), bool)
