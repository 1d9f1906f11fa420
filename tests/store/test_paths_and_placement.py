"""Path algebra, slugs and placement: pure rules checked against the original's observed answers."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from memhtml.contracts.paths import (
    SLUG_MAX,
    archive_path_for,
    is_memory_path,
    memory_filename,
    normalize_path,
    original_path_for,
    path_problem,
    slug_with_ordinal,
    slugify,
)
from memhtml.domain.placement import placement_directory


def test_slugify_matches_observed_examples() -> None:
    assert slugify("Déployé à l'été: Ünïcode!") == "deploye-a-l-ete-unicode"
    assert slugify("日本語のタイトル") == "untitled"
    assert slugify("Law & Order") == "law-order"
    assert slugify("My WS!") == "my-ws"
    assert slugify("Test   one") == "test-one"


def test_slug_is_capped_and_trimmed() -> None:
    long_title = "word " * 40
    slug = slugify(long_title)
    assert len(slug) <= SLUG_MAX
    assert not slug.endswith("-")


@given(st.text())
def test_slugify_is_idempotent_and_safe(text: str) -> None:
    slug = slugify(text)
    assert slugify(slug) == slug
    assert 0 < len(slug) <= SLUG_MAX
    assert set(slug) <= set(string.ascii_lowercase + string.digits + "-")


@given(st.text(alphabet="abc-", min_size=1, max_size=90), st.integers(min_value=2, max_value=1000))
def test_collision_suffix_stays_inside_budget_and_never_rebuilds_the_slug(text: str, ordinal: int) -> None:
    slug = slugify(text)
    suffixed = slug_with_ordinal(slug, ordinal)
    assert len(suffixed) <= SLUG_MAX
    assert suffixed.endswith(f"-{ordinal}")
    assert suffixed != slug


def test_eighty_char_slug_whose_tail_is_the_suffix_is_cut_one_shorter() -> None:
    slug = "a" * 78 + "-2"
    assert slug_with_ordinal(slug, 2) != slug
    assert slug_with_ordinal(slug, 2).endswith("-2")


def test_filenames_for_episodic_and_reserved_index_stem() -> None:
    assert memory_filename("deploy-freeze", 1, "20261130") == "20261130-deploy-freeze.html"
    assert memory_filename("x", 2, "20261130") == "20261130-x-2.html"
    # `index.html` would be overwritten by publishing, so the bare stem is never used.
    assert memory_filename("index", 1, None) == "index-2.html"


def test_normalize_and_usable_paths() -> None:
    assert normalize_path("/resources//db/x.html") == "resources/db/x.html"
    assert path_problem("foo/bar.txt") is not None
    assert "PARA bucket" in (path_problem("foo/bar.html") or "")
    assert path_problem("resources/../x.html") is not None
    assert path_problem("resources/x.txt") is not None
    assert path_problem("resources/index.html") is not None
    assert is_memory_path("areas/inbox/x.html")
    assert not is_memory_path("README.html")


@given(
    st.from_regex(r"(projects|areas|resources|archive)(/[a-z0-9-]{1,12}){1,3}\.html", fullmatch=True),
    st.integers(min_value=1970, max_value=2999),
)
def test_original_path_is_a_left_inverse_of_archiving(path: str, year: int) -> None:
    assert original_path_for(archive_path_for(path, year)) == path
    # Archiving twice strips exactly one prefix.
    twice = archive_path_for(archive_path_for(path, year), year)
    assert original_path_for(twice) == archive_path_for(path, year)


def test_placement_rules_in_order() -> None:
    place = placement_directory
    assert place("arc", workspace="w", entities=[], tags=["t"]) == "areas/arcs"
    assert place("task", workspace="My Team/../X", entities=[], tags=[]) == "projects/my-team-x/tasks"
    assert place("task", workspace=None, entities=["person:a"], tags=["t"]) == "areas/inbox/tasks"
    assert place("semantic", workspace="w", entities=["person:sanju"], tags=["t"]) == "resources/people"
    assert place("procedural", workspace=None, entities=["person:sanju"], tags=[]) == "areas/inbox"
    assert place("procedural", workspace="payments", entities=[], tags=["ops"]) == "projects/payments"
    assert place("semantic", workspace=None, entities=[], tags=["  ", "Sky Facts"]) == "resources/sky-facts"
    assert place("precedent", workspace=None, entities=[], tags=["db"]) == "resources/db"
    assert place("verdict", workspace=None, entities=[], tags=["db"]) == "areas/inbox"
    assert place("semantic", workspace=None, entities=["person:"], tags=[]) == "areas/inbox"


_PATH_PIECES = st.sampled_from(
    ["projects", "areas", "resources", "archive", "/", "/", ".", "..", "-", "_", "a", "Z", "9", ".html", "index.html",
     "sitemap.xml", " ", "é", "\u202e", "\x00", "%2e", "x" * 250, ".git", "\ud800"]
)  # fmt: skip


@given(st.lists(_PATH_PIECES, max_size=12).map("".join))
def test_the_plain_path_shortcut_agrees_with_every_rule(path: str) -> None:
    assert is_memory_path(path) == (path_problem(path) is None)


def test_the_plain_path_shortcut_at_its_limits() -> None:
    for path in ("areas/" + "a" * 250 + ".html", "areas/" + "b" * 255 + "/x.html", "areas/" + "c/" * 508 + "x.html"):
        assert is_memory_path(path) == (path_problem(path) is None)
    assert not is_memory_path("areas/" + "a" * 251 + ".html") and not is_memory_path("areas/sub/index.html")
    assert is_memory_path("resources/db/pool-ceiling.html") and not is_memory_path("areas/.hidden/x.html")
