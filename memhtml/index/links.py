"""Walking the link graph (`edges`): one hop of a neighbourhood walk in both directions, and the newest
memory superseding a path (the step `resolve` and search's successor take)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from memhtml.index.database import Database, membership


class WalkedEdge(NamedTuple):
    """A link walked from a frontier: `way` is "out" (from the forward frontier) or "in" (into the
    backward one); `title` is that of the memory at the far end."""

    way: str
    source: str
    rel: str
    destination: str
    derived: bool
    title: str


def hop_edges(
    database: Database, forward: Sequence[str], backward: Sequence[str], rels: Sequence[str], *, cap: int
) -> list[WalkedEdge]:
    """One hop of both walks: links of `rels` out of `forward` and into `backward`, forward links first,
    at most `cap` of them. A link whose far end is not indexed (moved or archived away) is no edge."""
    outgoing, out_parameters = membership("e.src_path", "forward", forward)
    incoming, in_parameters = membership("e.dst_path", "backward", backward)
    rows = database.rows(
        f"""
        SELECT way, src_path, rel, dst_path, derived, title FROM (
            SELECT 'out' AS way, e.src_path, e.rel, e.dst_path, e.derived, f.title
            FROM edges e JOIN files f ON f.path = e.dst_path
            WHERE {outgoing} AND e.rel IN (SELECT unnest($rels))
            UNION ALL
            SELECT 'in' AS way, e.src_path, e.rel, e.dst_path, e.derived, f.title
            FROM edges e JOIN files f ON f.path = e.src_path
            WHERE {incoming} AND e.rel IN (SELECT unnest($rels))
        ) ORDER BY way = 'in', src_path, rel, dst_path LIMIT $cap
        """,
        {**out_parameters, **in_parameters, "rels": list(rels), "cap": cap},
    )
    return [
        WalkedEdge(way, source, rel, destination, bool(derived), title)
        for way, source, rel, destination, derived, title in rows
    ]


def newest_superseding(database: Database, path: str) -> str | None:
    """Of the memories superseding `path`, the newest word: the one updated last (its own `updated` meta,
    so the answer is the same before and after a rebuild), the greatest path breaking a tie."""
    winner = database.value(
        """
        SELECT e.src_path FROM edges e JOIN files f ON f.path = e.src_path
        WHERE e.dst_path = $path AND e.rel = 'supersedes'
        ORDER BY f.updated_at DESC, e.src_path DESC LIMIT 1
        """,
        {"path": path},
    )
    return None if winner is None else str(winner)
