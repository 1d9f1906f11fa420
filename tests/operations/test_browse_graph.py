"""`resolve` and `neighbors` over real stores: supersedes chains followed forward from live memories,
dangling link targets left out of the graph, and every edge counted once."""

from __future__ import annotations

import json
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from tests.conftest import git, run_cli
from tests.index.test_search import commit_files, memory_file


def _write(store_root: Path, title: str, claim: str) -> str:
    answer = run_cli("write", "--repo", str(store_root), "--title", title, "--type", "semantic", "--claim", claim)
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def _link(store_root: Path, source: str, rel: str, destination: str) -> None:
    answer = run_cli("link", "--repo", str(store_root), source, rel, destination)
    assert answer.status == 0, answer.stdout + answer.stderr


def _resolve(store_root: Path, path: str) -> dict[str, Any]:
    answer = run_cli("resolve", "--repo", str(store_root), path)
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def _neighbors(store_root: Path, path: str, *flags: str) -> dict[str, Any]:
    answer = run_cli("neighbors", "--repo", str(store_root), path, *flags)
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def _archive(store_root: Path, path: str) -> str:
    answer = run_cli("archive", "--repo", str(store_root), path, "--reason", "gone")
    assert answer.status == 0, answer.stdout + answer.stderr
    archived = str(answer.data["archivePath"])
    assert (store_root / archived).is_file() and not (store_root / path).exists()
    return archived


def _supersedes(source: str, destination: str) -> dict[str, str]:
    return {"from": source, "to": destination, "via": "supersedes"}


def _nodes(data: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(node["path"], node["hop"], node["rel"]) for node in data["nodes"]]


# resolve


def test_resolve_follows_a_supersedes_link_past_a_live_memory(store_root: Path) -> None:
    newer = _write(store_root, "Deploy window moved", "Deploys run on Thursdays.")
    older = _write(store_root, "Deploy window", "Deploys run on Tuesdays.")
    _link(store_root, newer, "supersedes", older)
    resolved = _resolve(store_root, older)
    assert resolved["requested"] == older
    assert resolved["path"] == newer and resolved["title"] == "Deploy window moved"
    assert resolved["steps"] == [_supersedes(older, newer)] and resolved["hops"] == 1
    assert resolved["stopReason"] == "live"
    assert resolved["indexedCommit"] == git(store_root, "rev-parse", "HEAD").strip()
    # The newest memory is where every chain ends.
    assert _resolve(store_root, newer) | {"requested": None} == resolved | {
        "requested": None, "hops": 0, "steps": [], "path": newer
    }  # fmt: skip


def test_resolve_follows_a_chain_of_supersedes_links_to_the_newest(store_root: Path) -> None:
    first = _write(store_root, "Alpha one", "Alpha is one.")
    second = _write(store_root, "Alpha two", "Alpha is two.")
    third = _write(store_root, "Alpha three", "Alpha is three.")
    _link(store_root, second, "supersedes", first)
    _link(store_root, third, "supersedes", second)
    resolved = _resolve(store_root, first)
    assert resolved["steps"] == [_supersedes(first, second), _supersedes(second, third)]
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (third, 2, "live")
    assert resolved["title"] == "Alpha three"


def test_resolve_mixes_an_archive_move_with_supersedes_links(store_root: Path) -> None:
    target = _write(store_root, "Gamma old", "Gamma is old.")
    corrected = run_cli(
        "correct", target, "--repo", str(store_root), "--title", "Gamma fixed", "--claim", "Gamma is fixed."
    )
    assert corrected.status == 0, corrected.stdout + corrected.stderr
    fixed, archived = str(corrected.data["path"]), str(corrected.data["archivedPath"])
    newest = _write(store_root, "Gamma newest", "Gamma is newest of all.")
    _link(store_root, newest, "supersedes", fixed)
    resolved = _resolve(store_root, target)
    assert resolved["steps"] == [
        {"from": target, "to": archived, "via": "archive_move"},
        _supersedes(archived, fixed),
        _supersedes(fixed, newest),
    ]
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (newest, 3, "live")


def test_resolve_follows_plain_git_moves(store_root: Path) -> None:
    older = _write(store_root, "Epsilon old", "Epsilon is old.")
    middle, last = "areas/inbox/epsilon-moved.html", "resources/epsilon/epsilon-old.html"
    (store_root / "resources/epsilon").mkdir(parents=True)
    git(store_root, "mv", older, middle)
    git(store_root, "commit", "-q", "-m", "move")
    git(store_root, "mv", middle, last)
    git(store_root, "commit", "-q", "-m", "move again")
    resolved = _resolve(store_root, older)
    assert resolved["steps"] == [
        {"from": older, "to": middle, "via": "rename"},
        {"from": middle, "to": last, "via": "rename"},
    ]
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (last, 2, "live")
    assert resolved["title"] == "Epsilon old"


def test_resolve_of_a_deleted_or_unknown_path_stays_unindexed(store_root: Path) -> None:
    gone = _write(store_root, "Zeta", "Zeta is gone.")
    git(store_root, "rm", "-q", gone)
    git(store_root, "commit", "-q", "-m", "delete")
    never = "areas/inbox/never-written.html"
    for path in (gone, never):
        resolved = _resolve(store_root, path)
        assert (resolved["path"], resolved["steps"], resolved["stopReason"]) == (path, [], "unindexed")


def test_resolve_ignores_an_old_move_of_a_path_written_again(store_root: Path) -> None:
    first = _write(store_root, "Eta", "Eta is first.")
    git(store_root, "mv", first, "areas/inbox/eta-moved.html")
    git(store_root, "commit", "-q", "-m", "move")
    (store_root / first).write_text("<p>not a memory</p>", encoding="utf-8")  # back at the path, unindexable
    git(store_root, "add", first)
    git(store_root, "commit", "-q", "-m", "something else at the old path")
    resolved = _resolve(store_root, first)
    assert (resolved["steps"], resolved["stopReason"]) == ([], "unindexed")


def test_resolve_takes_a_path_as_a_name_not_a_pattern(store_root: Path) -> None:
    bracketed, plain = "areas/inbox/[x].html", "areas/inbox/x.html"
    commit_files(
        store_root, {bracketed: memory_file("Bracket", "Theta one."), plain: memory_file("Plain", "Theta two.")}
    )
    (store_root / "resources/u").mkdir(parents=True)
    git(store_root, "mv", bracketed, "resources/u/[x].html")
    git(store_root, "commit", "-q", "-m", "move the bracketed one")
    git(store_root, "rm", "-q", plain)  # a later removal of a path the pattern `[x]` would match
    git(store_root, "commit", "-q", "-m", "drop the plain one")
    resolved = _resolve(store_root, bracketed)
    assert resolved["steps"] == [{"from": bracketed, "to": "resources/u/[x].html", "via": "rename"}]


def test_resolve_follows_a_moved_memory_not_the_next_one_at_its_path(store_root: Path) -> None:
    first, second = "areas/inbox/avocet.html", "areas/inbox/dunlin.html"
    commit_files(
        store_root, {first: memory_file("Avocet", "Avocets wade."), second: memory_file("Dunlin", "Dunlins flock.")}
    )
    (store_root / "resources/w").mkdir(parents=True)
    git(store_root, "mv", first, "resources/w/avocet.html")
    git(store_root, "mv", second, "resources/w/dunlin.html")
    git(store_root, "commit", "-q", "-m", "reorganise")
    archived = _archive(store_root, "resources/w/avocet.html")
    (store_root / "resources/z").mkdir(parents=True)
    git(store_root, "mv", "resources/w/dunlin.html", "resources/z/dunlin.html")
    git(store_root, "commit", "-q", "-m", "move again")
    commit_files(
        store_root,
        {
            "resources/w/avocet.html": memory_file("Curlew", "Curlews probe."),
            "resources/w/dunlin.html": memory_file("Knot", "Knots gather."),
        },
    )
    avocet = _resolve(store_root, first)
    assert avocet["steps"] == [
        {"from": first, "to": "resources/w/avocet.html", "via": "rename"},
        {"from": "resources/w/avocet.html", "to": archived, "via": "archive_move"},
    ]
    assert (avocet["stopReason"], avocet["title"]) == ("archived", "Avocet")
    dunlin = _resolve(store_root, second)
    assert [step["to"] for step in dunlin["steps"]] == ["resources/w/dunlin.html", "resources/z/dunlin.html"]
    assert (dunlin["stopReason"], dunlin["title"]) == ("live", "Dunlin")


def test_resolve_of_a_moved_superseded_path_follows_the_link_that_names_it(store_root: Path) -> None:
    older = _write(store_root, "Iota old", "Iota is old.")
    newer = _write(store_root, "Iota new", "Iota is new.")
    _link(store_root, newer, "supersedes", older)
    (store_root / "resources/sea").mkdir(parents=True)
    git(store_root, "mv", older, "resources/sea/iota-old.html")
    git(store_root, "commit", "-q", "-m", "move the old one")
    resolved = _resolve(store_root, older)
    assert resolved["steps"] == [_supersedes(older, newer)]
    assert (resolved["path"], resolved["stopReason"]) == (newer, "live")


def test_resolve_stops_at_an_archived_successor(store_root: Path) -> None:
    newer = _write(store_root, "Delta new", "Delta is new.")
    older = _write(store_root, "Delta old", "Delta is old.")
    _link(store_root, newer, "supersedes", older)
    archived = _archive(store_root, newer)
    resolved = _resolve(store_root, older)
    # The link still sits in the moved file, so the archived copy is the successor; nothing supersedes it.
    assert resolved["steps"] == [_supersedes(older, archived)]
    assert (resolved["path"], resolved["stopReason"], resolved["title"]) == (archived, "archived", "Delta new")


def test_resolve_closes_a_cycle_of_supersedes_links_and_stops(store_root: Path) -> None:
    one = _write(store_root, "Cycle one", "Cycle is one.")
    two = _write(store_root, "Cycle two", "Cycle is two.")
    three = _write(store_root, "Cycle three", "Cycle is three.")
    _link(store_root, two, "supersedes", one)
    _link(store_root, three, "supersedes", two)
    _link(store_root, one, "supersedes", three)
    resolved = _resolve(store_root, one)
    assert resolved["steps"] == [_supersedes(one, two), _supersedes(two, three), _supersedes(three, one)]
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (one, 3, "cycle")
    assert resolved["title"] == "Cycle one"


def test_resolve_takes_the_successor_updated_last_before_and_after_a_rebuild(store_root: Path) -> None:
    target = _write(store_root, "Eps target", "Eps is the target.")
    older = _write(store_root, "Eps c", "Eps is c.")
    time.sleep(1.1)  # instants have whole seconds: the next memory must carry a later one
    newest = _write(store_root, "Eps a", "Eps is a.")  # the smaller path: only its time can pick it
    _link(store_root, newest, "supersedes", target)
    _link(store_root, older, "supersedes", target)  # linked last, but older
    assert _resolve(store_root, target)["path"] == newest
    hits = run_cli("search", "--repo", str(store_root), "target").data["hits"]
    assert [hit["supersededBy"] for hit in hits if hit["path"] == target] == [newest]
    # The answer comes from the memories themselves, not from when the index saw them.
    assert run_cli("index", "rebuild", "--repo", str(store_root)).status == 0
    assert _resolve(store_root, target)["path"] == newest


def test_of_successors_updated_in_the_same_instant_the_greatest_path_wins(store_root: Path) -> None:
    first, second, target = _batch(store_root, 3)  # one batch: one instant for all three
    _link(store_root, first, "supersedes", target)
    _link(store_root, second, "supersedes", target)
    assert _resolve(store_root, target)["path"] == max(first, second)


def _batch(store_root: Path, count: int) -> list[str]:
    """`count` memories written in one batch, in order."""
    batch = store_root.parent / "batch.jsonl"
    ops = [
        {"op": "write", "title": f"Link {number}", "type": "semantic", "body": f"Link number {number} holds."}
        for number in range(count)
    ]
    batch.write_text("".join(json.dumps(op) + "\n" for op in ops), encoding="utf-8")
    applied = run_cli("apply", "--repo", str(store_root), "--file", str(batch))
    assert applied.status == 0, applied.stdout + applied.stderr
    paths = [str(result["path"]) for result in applied.data["results"]]
    assert len(set(paths)) == count
    return paths


def _supersede_by_hand(store_root: Path, pairs: list[tuple[str, str]]) -> None:
    """Each (newer, older) pair as a supersedes link in the newer file, all in one hand-made commit."""
    for newer, older in pairs:
        file = store_root / newer
        link = f'<link rel="memhtml-supersedes" href="/{older}">\n</head>'
        file.write_text(file.read_text(encoding="utf-8").replace("</head>", link, 1), encoding="utf-8")
    git(store_root, "commit", "-qam", "supersedes links by hand")


def test_resolve_gives_up_after_sixteen_hops(store_root: Path) -> None:
    paths = _batch(store_root, 17)
    # A cycle of 17: the step back to the start would be the 17th, one past the limit.
    _supersede_by_hand(store_root, [*((newer, older) for older, newer in pairwise(paths)), (paths[0], paths[16])])
    resolved = _resolve(store_root, paths[0])
    assert resolved["steps"] == [_supersedes(older, newer) for older, newer in pairwise(paths)]
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (paths[16], 16, "hop_limit")
    assert resolved["title"] == "Link 16"


def test_a_cycle_closed_on_the_sixteenth_hop_is_a_cycle(store_root: Path) -> None:
    paths = _batch(store_root, 16)
    _supersede_by_hand(store_root, [*((newer, older) for older, newer in pairwise(paths)), (paths[0], paths[15])])
    resolved = _resolve(store_root, paths[0])
    assert resolved["steps"][-1] == _supersedes(paths[15], paths[0])
    assert (resolved["path"], resolved["hops"], resolved["stopReason"]) == (paths[0], 16, "cycle")


# neighbors


def test_neighbors_leaves_out_a_link_target_archived_since(store_root: Path) -> None:
    source = _write(store_root, "Beta new", "Beta is new.")
    target = _write(store_root, "Beta old", "Beta is old.")
    _link(store_root, source, "relates_to", target)
    assert _nodes(_neighbors(store_root, source)) == [(target, 1, "relates_to")]
    _archive(store_root, target)
    data = _neighbors(store_root, source, "--depth", "2")
    assert (data["nodes"], data["edges"], data["nodesDropped"]) == ([], 0, 0)


def test_neighbors_leaves_out_a_link_target_moved_away_by_hand(store_root: Path) -> None:
    source = _write(store_root, "Kappa source", "Kappa is the source.")
    target = _write(store_root, "Kappa target", "Kappa is the target.")
    third = _write(store_root, "Kappa third", "Kappa is third.")
    _link(store_root, source, "relates_to", target)
    _link(store_root, source, "caused_by", third)
    moved = "resources/kappa/kappa-target.html"
    (store_root / "resources/kappa").mkdir(parents=True)
    git(store_root, "mv", target, moved)
    git(store_root, "commit", "-qm", "move by hand")
    data = _neighbors(store_root, source)
    # Only the link whose target is still there is an edge.
    assert (_nodes(data), data["edges"]) == ([(third, 1, "caused_by")], 1)
    assert [node["title"] for node in data["nodes"]] == ["Kappa third"]


def _chain(store_root: Path) -> tuple[str, str, str, str]:
    """deploy -leads_to-> checkout -relates_to-> one-writer -caused_by-> runbook."""
    deploy = _write(store_root, "Deploy", "Deploy ships code.")
    checkout = _write(store_root, "Checkout", "Checkout takes payment.")
    writer = _write(store_root, "One writer", "One writer owns the ledger.")
    runbook = _write(store_root, "Runbook", "Runbook lists steps.")
    _link(store_root, deploy, "leads_to", checkout)
    _link(store_root, checkout, "relates_to", writer)
    _link(store_root, writer, "caused_by", runbook)
    return deploy, checkout, writer, runbook


def test_neighbors_counts_each_edge_once_over_two_hops(store_root: Path) -> None:
    deploy, checkout, writer, runbook = _chain(store_root)
    data = _neighbors(store_root, checkout, "--depth", "2")
    assert _nodes(data) == [(deploy, 1, "leads_to"), (writer, 1, "relates_to"), (runbook, 2, "caused_by")]
    assert data["edges"] == 3  # the three links, though the first two are met again from the second hop
    narrowed = _neighbors(store_root, checkout, "--depth", "2", "--rel", "relates_to")
    assert (_nodes(narrowed), narrowed["edges"]) == ([(writer, 1, "relates_to")], 1)
    # From one end: deploy -> checkout -> one-writer; runbook is a third hop away.
    from_end = _neighbors(store_root, deploy, "--depth", "2")
    assert (_nodes(from_end), from_end["edges"]) == ([(checkout, 1, "leads_to"), (writer, 2, "relates_to")], 2)
    # The limit trims the nodes listed, not the edges walked.
    trimmed = _neighbors(store_root, checkout, "--depth", "2", "--limit", "1")
    assert (_nodes(trimmed), trimmed["edges"], trimmed["nodesDropped"]) == ([(deploy, 1, "leads_to")], 3, 2)


def test_neighbors_walks_links_forward_and_backward_without_turning(store_root: Path) -> None:
    center = _write(store_root, "Xray", "Xray is the center.")
    near = _write(store_root, "Yank", "Yank is near.")
    onward = _write(store_root, "Wone", "Wone is far.")
    inward = _write(store_root, "Wtwo", "Wtwo is far too.")
    _link(store_root, center, "relates_to", near)
    _link(store_root, near, "relates_to", onward)
    _link(store_root, inward, "caused_by", near)
    _link(store_root, onward, "relates_to", inward)
    # center -> near -> onward is a path forward; inward -> near points back against it.
    data = _neighbors(store_root, center, "--depth", "2")
    assert (_nodes(data), data["edges"]) == ([(near, 1, "relates_to"), (onward, 2, "relates_to")], 2)
    # Once near also points at the center, the backward walk reaches inward through it.
    _link(store_root, near, "caused_by", center)
    data = _neighbors(store_root, center, "--depth", "2")
    assert _nodes(data) == [(near, 1, "relates_to"), (onward, 2, "relates_to"), (inward, 2, "caused_by")]
    assert data["edges"] == 4
    narrowed = _neighbors(store_root, center, "--depth", "2", "--rel", "caused_by")
    assert (_nodes(narrowed), narrowed["edges"]) == ([(near, 1, "caused_by"), (inward, 2, "caused_by")], 2)


def test_an_edge_between_two_reached_memories_counts_once(store_root: Path) -> None:
    center = _write(store_root, "Xray", "Xray is the center.")
    alpha = _write(store_root, "Alpha", "Alpha is near.")
    bravo = _write(store_root, "Bravo", "Bravo is near too.")
    _link(store_root, center, "relates_to", alpha)
    _link(store_root, center, "relates_to", bravo)
    _link(store_root, alpha, "relates_to", bravo)
    assert _neighbors(store_root, center)["edges"] == 2
    data = _neighbors(store_root, center, "--depth", "2")
    assert (_nodes(data), data["edges"]) == ([(alpha, 1, "relates_to"), (bravo, 1, "relates_to")], 3)
    # From alpha, forward reaches bravo and backward the center; center -> bravo is on neither walk.
    data = _neighbors(store_root, alpha, "--depth", "2")
    assert (_nodes(data), data["edges"]) == ([(bravo, 1, "relates_to"), (center, 1, "relates_to")], 2)


def test_a_link_out_names_the_rel_before_a_link_in(store_root: Path) -> None:
    zeta = _write(store_root, "Zeta", "Zeta is one end.")
    alpha = _write(store_root, "Alpha", "Alpha is the other end.")
    _link(store_root, zeta, "relates_to", alpha)
    _link(store_root, alpha, "caused_by", zeta)
    from_zeta = _neighbors(store_root, zeta)
    assert (_nodes(from_zeta), from_zeta["edges"]) == ([(alpha, 1, "relates_to")], 2)
    from_alpha = _neighbors(store_root, alpha)
    assert (_nodes(from_alpha), from_alpha["edges"]) == ([(zeta, 1, "caused_by")], 2)


def test_search_names_the_successor_resolve_reaches_for_a_corrected_memory_linked_again(store_root: Path) -> None:
    original = _write(store_root, "Zeta window", "Zeta deploys run on Tuesdays.")
    corrected = run_cli(
        "correct", "--repo", str(store_root), original, "--title", "Zeta window moved",
        "--claim", "Zeta deploys run on Thursdays.",
    )  # fmt: skip
    assert corrected.status == 0, corrected.stdout + corrected.stderr
    archived = str(corrected.data["archivedPath"]) if "archivedPath" in corrected.data else None
    archived = archived or _resolve(store_root, original)["steps"][0]["to"]
    time.sleep(1.1)  # the later successor carries a later instant
    latest = _write(store_root, "Zeta window final", "Zeta deploys run on Fridays.")
    _link(store_root, latest, "supersedes", archived)
    assert _resolve(store_root, archived)["path"] == latest
    hits = run_cli("search", "--repo", str(store_root), "zeta tuesdays", "--include-archived").data["hits"]
    assert [hit["supersededBy"] for hit in hits if hit["path"] == archived] == [latest]


def test_neighbors_and_reinforce_of_a_path_moved_away_suggest_resolving_it(store_root: Path) -> None:
    path = "resources/db/pool.html"
    commit_files(store_root, {path: memory_file("Pool", "The pool ceiling is 64.")})
    assert run_cli("archive", path, "--repo", str(store_root), "--reason", "old").status == 0
    for command in (["neighbors", path], ["reinforce", path, "--signal", "positive"]):
        answer = run_cli(*command, "--repo", str(store_root))
        assert answer.status == 1, answer.stdout
        assert answer.envelope["code"] == "ERR_PATH_NOT_FOUND"
        assert f"memhtml resolve {path}" in answer.envelope["suggestions"]
