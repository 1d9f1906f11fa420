"""Conflict classes for pairs of one-sentence claims, decided by rules and never by a model.

Owns the small claim parser (subject, attribute or predicate, value, polarity), the value comparisons
(unit conversion, approximate markers, date granularity) and the fixed rule order that names one of
CONFLICT_CLASSES. Precision beats recall throughout: whenever a claim or a pair is ambiguous, no finding.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from memhtml.domain.frames import frame_key

CONFLICT_CLASSES: Final = (
    "scope difference", "temporal update", "preference change", "precision difference", "logical contradiction",
    "source conflict",
)  # fmt: skip


class ClaimFacts(NamedTuple):
    """What the classifier may know about one memory."""

    claim: str
    memory_type: str
    workspace: str | None = None
    entities: tuple[str, ...] = ()
    source: str | None = None


class ConflictFinding(NamedTuple):
    """One classified pair; `reason` reads "<attribute>: '<old value>' vs '<new value>'" plus a class note."""

    conflict_class: str
    action: str
    reason: str


class _Assertion(NamedTuple):
    topic: str  # normalized subject plus attribute (or subject alone for verb predicates)
    relation: str  # "be" for attribute values, "pref" for preferences, else the verb's base form
    verb: str  # the preference verb, so "uses X" never contradicts "does not like X"
    value: str
    shown_value: str
    shown_topic: str
    positive: bool
    changed: bool  # "no longer": the negation reports a change, not a contradiction
    functional: bool  # holds one value at a time, so a different value is a conflict
    kind: str = ""  # for an unnamed attribute, what sort of value it holds: "weekday", "number", "name" …
    switch: bool = False  # "switched to": a preference that replaces, where "uses" may only add
    alternative: str = ""  # "prefers tabs over spaces", "switched from Vim to Neovim": the value given up
    additive: bool = False  # "also": explicitly one more value, never a replacement


def _vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


_QUOTES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_ARTICLES: Final = frozenset({"the", "a", "an"})
_COPULAS: Final = {"is": True, "are": True, "was": True, "were": True}
_COPULAS.update({"isn't": False, "aren't": False, "wasn't": False, "weren't": False})
# Hedges, modals and clause joiners: a claim carrying one is not a single plain assertion.
_UNSURE: Final = _vocabulary(
    "might could should would will maybe perhaps probably possibly likely unlikely if unless when whenever although "
    "though while because since but or whether sometimes usually often occasionally rarely seems seem appears think "
    "thinks believe believes said says that which who whose where until before after except only"
)
_PRONOUNS: Final = _vocabulary(
    "it this that these those they he she we i you there here its his her their our my your someone something "
    "everyone everything nobody nothing"
)
# "One of the owners is Alice" names a member, not the value of an attribute.
_QUANTIFIERS: Final = _vocabulary("one some many most all each every any no none several few both either neither")
_ADVERBS: Final = frozenset({"now", "currently", "still", "also", "today", "nowadays", "actually"})
_AUXILIARIES: Final = frozenset({"does", "do", "did", "doesn't", "don't", "didn't", "never", "cannot", "can't", "can"})
_NEGATED: Final = {f"{word} not" for word in ("does", "do", "did", "can")} | {"no longer"}
_NEGATED.update(_AUXILIARIES - {"does", "do", "did", "can"})
_APPROX: Final = r"about|around|roughly|approximately|approx\.?|nearly|almost|circa|ca\.|~"
_BOUNDS: Final = ("at least", "at most", "up to", "more than", "less than", "fewer than", "no more than", "over ")
_BOUNDS_TOO: Final = ("under ", "above ", "below ", "between ", "within ")
_MONTH_NAMES: Final = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec"),
)  # fmt: skip
_MONTHS: Final = {name: number for number, names in enumerate(_MONTH_NAMES, start=1) for name in names}
# Closed vocabularies of setting values ("weekly", "disabled"), grouped so "public" never replaces "REST".
_ENUM_GROUPS: Final = {word: group for group, words in (
    ("weekday", "monday tuesday wednesday thursday friday saturday sunday weekdays weekends"),
    ("frequency", "hourly daily nightly weekly biweekly monthly quarterly yearly annually"),
    ("toggle", "enabled disabled on off true false yes no"), ("visibility", "public private internal"),
    ("necessity", "required optional mandatory"), ("state", "open closed active inactive deprecated archived blocked"),
) for word in words.split()}  # fmt: skip
_NUMBER_WORDS: Final = {word: n for n, word in enumerate(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"), start=1)}  # fmt: skip
# (base, preposition) -> (attribute, gated): a verb naming one attribute of its subject. Gated ones count only
# with a name-like value, since "moved to a new office" is no address and "joined the call" no employer.
_FAMILY_VERBS: Final = {
    ("live", "in"): ("residence", False), ("reside", "in"): ("residence", False), ("move", "to"): ("residence", True),
    ("relocate", "to"): ("residence", False), ("work", "at"): ("employer", False), ("work", "for"): ("employer", False),
    ("join", ""): ("employer", True), ("report", "to"): ("manager", False),
}  # fmt: skip
_PASSIVES: Final = {
    ("located", "in"): "location", ("based", "in"): "location", ("headquartered", "in"): "location",
    ("owned", "by"): "owner", ("maintained", "by"): "maintainer", ("managed", "by"): "manager", ("led", "by"): "lead",
    ("run", "by"): "lead", ("written", "in"): "language", ("implemented", "in"): "language", ("hosted", "on"): "host",
    ("hosted", "in"): "host", ("hosted", "at"): "host", ("employed", "by"): "employer",
}  # fmt: skip
# "is set to 30s" states the value exactly as "is 30s" does.
_FILLERS: Final = frozenset({("set", "to"), ("equal", "to"), ("scheduled", "for"), ("scheduled", "on")})
_PREF_VERBS: Final = frozenset({"like", "love", "enjoy", "use", "prefer", "favor", "favour"})
_SWITCH_VERBS: Final = frozenset({"switch", "migrate", "change"})
_MULTI_VERBS: Final = _vocabulary(
    "support have include require contain allow accept provide expose handle own speak need store block send offer run"
)
_CONTEXT_WORDS: Final = frozenset({"for", "in", "on", "with", "during", "at"})


_BASES: Final = _PREF_VERBS | _SWITCH_VERBS | {verb for verb, _ in _FAMILY_VERBS} | _MULTI_VERBS
_SURFACE: Final = {base + ("es" if base.endswith("ch") else "s"): base for base in _BASES} | {"has": "have"}
_SURFACE.update({"switched": "switch", "migrated": "migrate", "changed": "change", "moved": "move"})
_SURFACE.update({"relocated": "relocate", "joined": "join"})


def _stem(word: str) -> str:
    """A crude verb key on which "retries"/"retry" and "caches"/"cache" agree; only ever compared to itself."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 2 else word


def _strip_article(tokens: list[str]) -> list[str]:
    # Only a leading article and only before another word: "Plan A" and "The slot is A" keep their "A".
    return tokens[1:] if len(tokens) > 1 and tokens[0].lower() in _ARTICLES else tokens


def _value(tokens: list[str]) -> tuple[str, str] | None:
    cleaned = _strip_article([stripped for token in tokens if (stripped := token.strip("\"'`"))])
    if not 1 <= len(cleaned) <= 8 or any(token.lower() in _COPULAS for token in cleaned):
        return None
    shown = " ".join(cleaned).rstrip(",")
    return (shown.lower(), shown) if shown else None


def _kind(shown: str) -> str:
    """What sort of value a bare "X is V" states, or "" when V describes X ("fast", "backed up nightly")."""
    words, low = shown.split(" "), shown.lower()
    if _quantity(low) is not None or _date(low) is not None or re.match(rf"(?:(?:{_APPROX}) ?)?\d", low):
        return "number"
    if len(words) > 1 and words[0].endswith("ed"):
        return ""  # a participle phrase is a predication: "deployed to us-east-1", "backed up nightly"
    named = any(char.isdigit() or char.isupper() or char in "/._:@#" for char in words[-1])
    return _ENUM_GROUPS.get(words[-1].lower()) or ("name" if named else "")


class _Subject(NamedTuple):
    topic: str
    shown: str  # without a leading article, for attribute names: "office of the payments team"
    shown_full: str  # with it, for family names: "location of the payments team"
    explicit: bool  # the attribute is named ("X of Y", "Y's X"), so any value is a value of it

    def family(self, name: str) -> tuple[str, str]:
        return f"{self.topic} {name}", f"{name} of {self.shown_full}"


def _subject(tokens: list[str]) -> _Subject | None:
    low = [token.lower() for token in tokens]
    if any(char in token for token in low for char in ',:()[]"') or low[0] in ("a", "an"):
        return None
    core = tokens[1:] if low[0] == "the" else tokens
    core_low = [token.lower() for token in core]
    if not 1 <= len(core) <= 6 or core_low[0] in _PRONOUNS | _QUANTIFIERS | _ARTICLES:
        return None
    shown_full = " ".join([low[0], *tokens[1:]] if low[0] == "the" else tokens)
    possessive = [i for i, token in enumerate(core_low) if token.endswith(("'s", "s'"))]
    if possessive:
        split = possessive[0]
        if split == len(core) - 1:
            return None
        owner = [*core_low[:split], core_low[split].removesuffix("'s").removesuffix("'")]
        return _Subject(" ".join([*owner, *core[split + 1 :]]).lower(), " ".join(core), shown_full, True)
    if "of" in core_low[1:-1]:
        split = core_low.index("of")
        owner = _strip_article(core[split + 1 :])
        return _Subject(" ".join([*owner, *core[:split]]).lower(), " ".join(core), shown_full, True)
    return _Subject(" ".join(core).lower(), " ".join(core), shown_full, False)


def _assertion(
    subject: _Subject, value: list[str], polarity: tuple[bool, bool], *, topic: str = "", shown_topic: str = "",
    relation: str = "be", verb: str = "", functional: bool | None = None,
) -> _Assertion | None:  # fmt: skip
    """`polarity` is (positive, changed); an unnamed attribute holds one value only when it looks like a value."""
    parsed = _value(value)
    if parsed is None:
        return None
    kind = "" if subject.explicit or functional is not None else _kind(parsed[1])
    functional = bool(kind) if functional is None and not subject.explicit else functional is not False
    topic, shown_topic = topic or subject.topic, shown_topic or subject.shown
    return _Assertion(topic, relation, verb, *parsed, shown_topic, *polarity, functional, kind)


def _copula(subject: _Subject, rest: list[str], polarity: tuple[bool, bool]) -> _Assertion | None:
    low = [token.lower() for token in rest]
    if tuple(low[:2]) in _FILLERS:
        rest, low = rest[2:], low[2:]
    if len(low) > 2 and (low[0], low[1]) in _PASSIVES:
        if subject.explicit:
            return _assertion(subject, rest[2:], polarity)
        topic, shown = subject.family(_PASSIVES[(low[0], low[1])])
        return _assertion(subject, rest[2:], polarity, topic=topic, shown_topic=shown, functional=True)
    if low[:1] == ["the"] and "of" in low[2:-1] and not subject.explicit and subject.shown == subject.shown_full:
        # "Alice is the owner of billing" says what "The owner of billing is Alice" says.
        split = low.index("of")
        owner = _strip_article(rest[split + 1 :])
        inverted = _Subject(" ".join([*owner, *rest[1:split]]).lower(), " ".join(rest[1:]), "", True)
        return _assertion(inverted, subject.shown.split(" "), polarity)
    if len(low) > 1 and low[0] in ("in", "on", "at") and not " ".join(low).startswith(_BOUNDS):
        tail = " ".join(low[1:])
        if subject.explicit or _quantity(tail) is not None or _date(tail) is not None:
            return _assertion(subject, rest[1:], polarity, functional=True)
        # "is in Berlin" is a location and "is on Monday" a day, so neither meets "is at 3pm".
        topic, shown = subject.family("location") if low[0] == "in" else (f"{subject.topic} {low[0]}", "")
        return _assertion(subject, rest[1:], polarity, topic=topic, shown_topic=shown)
    return _assertion(subject, rest, polarity)


def _verb(
    subject: _Subject, base: str, rest: list[str], polarity: tuple[bool, bool], *, modal: str, said: str
) -> _Assertion | None:
    low = [token.lower() for token in rest]
    if base in _SWITCH_VERBS and "to" in low[:-1] and low[0] in ("to", "from"):
        target, given_up = rest[low.index("to") + 1 :], _value(rest[1 : low.index("to")])
        if base == "change":
            return _assertion(subject, target, polarity)  # "changed to 30s" states a value, not a taste
        found = _preference(subject, f"{modal}switched to", target, polarity)
        return found and found._replace(switch=True, alternative=given_up[0] if given_up else "")
    for prep in (low[0], ""):
        if (base, prep) in _FAMILY_VERBS:
            family, gated = _FAMILY_VERBS[(base, prep)]
            topic, shown = subject.family(family)
            target, functional = (rest[1:] if prep else rest), (None if gated else True)
            return _assertion(subject, target, polarity, topic=topic, shown_topic=shown, functional=functional)
    if base in _PREF_VERBS:
        return _preference(subject, f"{modal}{base}", rest, polarity)
    if base == "have" and low[0] == "no" and polarity[0]:
        return _assertion(subject, rest[1:], (False, polarity[1]), relation=f"{modal}have", functional=False)
    count = re.match(rf"^(?:(?:{_APPROX}) ?)?[\d,.]+ ([a-z][a-z ]*)$", " ".join(low))
    if base == "have" and not modal and count is not None and len(count.group(1).split(" ")) <= 3:
        # "has 3 replicas" is the value 3 of the attribute "replicas".
        noun = count.group(1).split(" ")
        topic = " ".join([subject.topic, *(_stem(word) for word in noun)])
        shown = f"{count.group(1)} of {subject.shown_full}"
        return _assertion(subject, rest[: -len(noun)], polarity, topic=topic, shown_topic=shown, functional=True)
    shown_topic = f"{subject.shown_full} {modal}{said}"
    return _assertion(subject, rest, polarity, relation=f"{modal}{base}", shown_topic=shown_topic, functional=False)


def _preference(subject: _Subject, verb: str, rest: list[str], polarity: tuple[bool, bool]) -> _Assertion | None:
    low, given_up = [token.lower() for token in rest], ""
    for cut, skip in (("over", 1), ("instead", 2)):
        if cut in low[1:]:
            at = low.index(cut, 1)
            given_up = (_value(rest[at + skip :]) or ("", ""))[0]
            rest, low = rest[:at], low[:at]
    # "prefers tabs for Python" and "prefers spaces for YAML" are two preferences, not one changed.
    context = next((i for i, token in enumerate(low) if i > 0 and token in _CONTEXT_WORDS), len(low))
    topic = " ".join([subject.topic, *_strip_article(low[context:])])
    shown = " ".join([f"preference of {subject.shown_full}", *rest[context:]])
    found = _assertion(
        subject, rest[:context], polarity, topic=topic, shown_topic=shown, relation="pref", verb=verb, functional=False
    )
    return found and found._replace(alternative=given_up)


def _parse(claim: str, hints: frozenset[str]) -> _Assertion | None:
    """The claim's one assertion, or None when it is not a single plain statement this parser can read."""
    text = " ".join(claim.translate(_QUOTES).split()).rstrip(".!")
    if not text or len(text) > 300 or text.endswith("?") or ";" in text:
        return None
    tokens = text.split(" ")
    low = [token.lower().rstrip(",") for token in tokens]
    # "may" is a hedge unless it is the month: "May 2024", "5 May 2024", "May 5, 2024".
    following = [*low[1:], ""]
    if any(token in _UNSURE or (token == "may" and not following[i][:1].isdigit()) for i, token in enumerate(low)):
        return None
    additive = "also" in low or low[-1] == "too" or low[-2:] == ["as", "well"]
    drop = 1 if low[-1] == "too" else 2 if low[-2:] == ["as", "well"] else 0
    keep = [i for i, token in enumerate(low[: len(low) - drop]) if token not in _ADVERBS]
    tokens, low = [tokens[i] for i in keep], [low[i] for i in keep]
    if not 3 <= len(low) <= 24:
        return None
    for j, token in enumerate(low[1:], start=1):
        # A plural subject takes the base form: "Users prefer tabs"; "Customer support is" stays a noun.
        plural = low[j - 1].endswith("s") and not low[j - 1].endswith(("ss", "'s"))
        starts = token in _COPULAS or token in _AUXILIARIES or token in _SURFACE or low[j : j + 2] == ["no", "longer"]
        known = (plural and token in _BASES) or (_stem(token) in hints and (plural or _stem(token) != token))
        if not (starts or known) or all(word in _ARTICLES for word in low[:j]):
            continue
        subject = _subject(tokens[:j])
        found = None if subject is None else _predicate(subject, tokens[j:], low[j:], plural)
        return found and found._replace(additive=additive)
    return None


def _predicate(subject: _Subject, tokens: list[str], low: list[str], plural: bool) -> _Assertion | None:
    if low[0] in _COPULAS:
        positive, k, changed = _COPULAS[low[0]], 1, False
        if low[1:2] in (["not"], ["never"]):
            positive, k = False, 2
        elif low[1:3] == ["no", "longer"]:
            positive, k, changed = False, 3, True
        return _copula(subject, tokens[k:], (positive, changed)) if tokens[k:] else None
    two, one = " ".join(low[:2]), low[0]
    k = 2 if two in _NEGATED else 1 if one in _NEGATED or one in ("does", "do", "can") else 0
    positive, changed = (two if k == 2 else one) not in _NEGATED, two == "no longer"
    modal = "can " if one in ("can", "cannot", "can't") else ""
    if k >= len(low) - 1 or not low[k].isalpha() or low[k] in _COPULAS:
        return None
    verb = low[k]
    if k > 0 and low[0] not in ("never", "no"):
        if verb in _SURFACE and verb not in _BASES:
            return None  # "does not supports" is not a form this parser should guess at
        base = verb if verb in _BASES else _stem(verb)
    else:
        base = _SURFACE.get(verb) or (verb if plural and verb in _BASES else _stem(verb))
    return _verb(subject, base, tokens[k + 1 :], (positive, changed), modal=modal, said=verb)


def _hints(claim: str) -> frozenset[str]:
    """Stems of verbs the claim negates, so the other claim's "retries" is read as that verb."""
    low = [token.strip(".,!?\"'").lower() for token in claim.split()]
    negators = ("not", "never", "doesn't", "don't", "didn't", "cannot", "can't", "longer")
    return frozenset(_stem(low[i + 1]) for i in range(len(low) - 1) if low[i] in negators and low[i + 1].isalpha())


class _Quantity(NamedTuple):
    dimension: str
    magnitudes: tuple[float, ...]
    unit: tuple[str, float]
    approximate: bool
    fuzzy: bool  # months and years are not a fixed number of days


# name -> (dimension, factor, alternative factor): data sizes carry both the 1024 and the 1000 reading.
_UNITS: Final[dict[str, tuple[str, float, float]]] = {}
for _names, _dimension, _factor, _alternative in (
    ("ms msec millisecond", "time", 0.001, 0.001), ("s sec second", "time", 1, 1), ("min minute", "time", 60, 60),
    ("h hr hour", "time", 3600, 3600), ("d day", "time", 86400, 86400), ("w wk week", "time", 604800, 604800),
    ("mo month", "time", 2629746, 2629746), ("y yr year", "time", 31556952, 31556952), ("b byte", "data", 1, 1),
    ("kb kib kilobyte", "data", 1024, 1e3), ("mb mib megabyte", "data", 1024**2, 1e6),
    ("gb gib gigabyte", "data", 1024**3, 1e9), ("tb tib terabyte", "data", 1024**4, 1e12),
    ("mm millimeter", "length", 0.001, 0.001), ("cm centimeter", "length", 0.01, 0.01),
    ("meter metre", "length", 1, 1), ("km kilometer", "length", 1000, 1000), ("% percent", "percent", 1, 1),
):  # fmt: skip
    _UNITS.update(dict.fromkeys(_names.split(), (_dimension, _factor, _alternative)))
_QUANTITY: Final = re.compile(rf"^(?:({_APPROX}) ?)?(\d[\d,]*(?:\.\d+)?|[a-z]+) ?([a-z%]+)?$")


def _quantity(value: str) -> _Quantity | None:
    match = _QUANTITY.match(value)
    if match is None or not (match.group(2)[0].isdigit() or match.group(2) in _NUMBER_WORDS):
        return None
    approximate, number, unit = match.group(1) is not None, match.group(2), match.group(3) or ""
    magnitude = float(number.replace(",", "")) if number[0].isdigit() else float(_NUMBER_WORDS[number])
    known = _UNITS.get(unit) or _UNITS.get(unit.removesuffix("s"))
    dimension, factor, alternative = known or (f"unit:{_stem(unit)}" if unit else "", 1.0, 1.0)
    fuzzy = dimension == "time" and factor >= _UNITS["month"][1]
    magnitudes = (magnitude * factor, magnitude * alternative)
    return _Quantity(dimension, magnitudes, (dimension, factor), approximate, fuzzy)


_DATES: Final = tuple(re.compile(pattern) for pattern in (
    r"^(?P<y>\d{4})(?:[-/](?P<m>\d{1,2})(?:[-/](?P<d>\d{1,2}))?)?$",
    r"^(?P<m>[a-z]+)\.?(?: (?P<d>\d{1,2})(?:st|nd|rd|th)?,?)? (?P<y>\d{4})$",
    r"^(?P<d>\d{1,2})(?:st|nd|rd|th)? (?P<m>[a-z]+)\.?,? (?P<y>\d{4})$",
))  # fmt: skip


def _date(value: str) -> tuple[int, ...] | None:
    """(year,), (year, month) or (year, month, day): the fields a date states, so granularity is its length."""
    match = next((found for pattern in _DATES if (found := pattern.match(value)) is not None), None)
    if match is None:
        return None
    year, month, day = match.group("y", "m", "d")
    month = str(_MONTHS.get(month, 0)) if month and not month.isdigit() else month
    numbers = tuple(int(field) for field in (year, month, day) if field is not None)
    valid = (len(numbers) < 2 or 1 <= numbers[1] <= 12) and (len(numbers) < 3 or 1 <= numbers[2] <= 31)
    return numbers if valid else None


def _compare(old: str, new: str) -> tuple[str, int]:
    """("same" | "finer" | "different" | "unsure", index of the more precise value or -1)."""
    if old == new:
        return "same", -1
    if any(value.startswith(_BOUNDS + _BOUNDS_TOO) for value in (old, new)):
        return "unsure", -1  # "at least 50" vs "52" agree; "at least 50" vs "40" do not; no safe call either way
    dates = (_date(old), _date(new))
    if dates[0] is not None and dates[1] is not None and max(len(dates[0]), len(dates[1])) > 1:
        shorter = min(len(dates[0]), len(dates[1]))
        if dates[0][:shorter] != dates[1][:shorter]:
            return "different", -1
        return ("same", -1) if dates[0] == dates[1] else ("finer", 0 if len(dates[0]) > shorter else 1)
    if (dates[0] is None) != (dates[1] is None) and re.search(r"\b\d{4}\b", old + " " + new):
        return "unsure", -1  # "Q1 2024" or "early 2024" against a date: a granularity this parser cannot read
    versions = all(re.fullmatch(r"v?\d+(?:\.\d+)+", value) for value in (old, new))
    if versions and (f"{new}.".startswith(f"{old}.") or f"{old}.".startswith(f"{new}.")):
        return "finer", 1 if len(new) > len(old) else 0  # version "3.11" names the line that "3.11.4" pins
    first, second = _quantity(old), _quantity(new)
    if first is None or second is None:  # "about 200 requests per minute" is approximate, just not parsed
        return ("unsure" if re.match(_APPROX, old) or re.match(_APPROX, new) else "different"), -1
    if first.dimension != second.dimension:
        # "5m" may be minutes or metres and "3 replicas" is no time, so only two known dimensions differ surely.
        known = {first.dimension, second.dimension} <= {"time", "data", "length", "percent"}
        return ("different" if known else "unsure"), -1
    gap = min(abs(x - y) / max(abs(x), abs(y), 1e-12) for x in first.magnitudes for y in second.magnitudes)
    tolerance = 0.10 if first.approximate or second.approximate else 0.05 if first.fuzzy or second.fuzzy else 1e-9
    if not gap <= tolerance:
        return "different", -1
    if first.unit == second.unit and first.approximate == second.approximate:
        return "same", -1
    if first.approximate != second.approximate:
        return "finer", 1 if first.approximate else 0
    return "finer", 0 if first.unit[1] < second.unit[1] else 1


def _replaces(fresh: _Assertion, stale: _Assertion, facts: tuple[ClaimFacts, ClaimFacts]) -> bool:
    """Whether two preferences are one taste changed rather than two tastes ("prefers tabs", "uses Vim")."""
    if fresh.alternative == stale.value or stale.alternative == fresh.value:
        return True
    pairs = (entity.split(":", 1) for fact in facts for entity in fact.entities if ":" in entity)
    types = {name.strip().casefold(): kind.strip().casefold() for kind, name in pairs}
    kinds = (types.get(stale.value), types.get(fresh.value))
    if None not in kinds:
        return kinds[0] == kinds[1]
    # Without entity types, only a switch away from a named standing taste ("likes Redis" -> "switched to
    # Postgres") is a replacement; two switches ("to GitLab", "to Kubernetes") may well be two domains.
    named = _kind(fresh.shown_value) == _kind(stale.shown_value) == "name"
    return kinds == (None, None) and fresh.switch != stale.switch and named


def classify_pair(new: ClaimFacts, old: ClaimFacts) -> ConflictFinding | None:
    """The conflict class of `new` against `old`, or None when they are no conflict or the call is unsure."""
    if "task" in (new.memory_type, old.memory_type):
        return None  # tasks are plans, which coexist; they never contradict facts or each other
    fresh, stale = _parse(new.claim, _hints(old.claim)), _parse(old.claim, _hints(new.claim))
    if fresh is None or stale is None or (fresh.topic, fresh.relation) != (stale.topic, stale.relation):
        return None
    verdict, finer = _compare(stale.value, fresh.value)
    same = verdict == "same"
    if verdict == "unsure" or (same and (fresh.positive == stale.positive or fresh.verb != stale.verb)):
        return None
    # Different values conflict only when positive ("is not 30s" and "is 60s" agree), not added ("also uses
    # Redis"), of one kind ("is REST" and "is public" are two facets) and of an attribute with a single value.
    one_kind = not fresh.kind or not stale.kind or fresh.kind == stale.kind
    single = _replaces(fresh, stale, (new, old)) if fresh.relation == "pref" else fresh.functional and stale.functional
    kept = fresh.positive and stale.positive and not (fresh.additive or stale.additive)
    if not same and not (kept and one_kind and single):
        return None
    was, now = (x.shown_value if x.positive else f"not {x.shown_value}" for x in (stale, fresh))
    # A negated verb is shown in its base form, so the attribute is named from the positive side.
    reason = f"{(fresh if fresh.positive else stale).shown_topic}: '{was}' vs '{now}'"
    if new.workspace != old.workspace:
        scopes = f" in workspace '{old.workspace or 'global'}' vs '{new.workspace or 'global'}'"
        return ConflictFinding("scope difference", "add", reason + scopes)
    if same and not (fresh.changed or stale.changed):
        return ConflictFinding("logical contradiction", "keep-both-flag", reason)
    if verdict == "finer":
        precise = f"; '{(stale, fresh)[finer].shown_value}' is more precise" if finer >= 0 else ""
        return ConflictFinding("precision difference", "keep-more-precise", reason + precise)
    if new.source and old.source and new.source.strip().casefold() != old.source.strip().casefold():
        return ConflictFinding("source conflict", "keep-both-flag", f"{reason} per '{old.source}' vs '{new.source}'")
    if fresh.relation == "pref" or "user_preference" in (new.memory_type, old.memory_type):
        return ConflictFinding("preference change", "correct", reason)
    return ConflictFinding("temporal update", "correct", reason)


def are_candidates(new: ClaimFacts, old: ClaimFacts) -> bool:
    """Whether the pair is worth classifying: a shared entity, or the same frame key."""
    shared = {e.strip().casefold() for e in new.entities} & {e.strip().casefold() for e in old.entities}
    if shared - {""}:
        return True
    key = frame_key(new.claim)
    return key is not None and key == frame_key(old.claim)
