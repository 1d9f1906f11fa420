"""Provenance in the state plane (`state.session_links`): which session, prompt and turn wrote, read or
corrected which memory. Kept beside the access counters because git cannot rebuild it either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from memhtml.index.database import Database


class SessionLink(NamedTuple):
    """Provenance of one read or write: which session, prompt and turn touched which memory."""

    path: str
    kind: str
    session_id: str
    prompt_id: str | None = None
    turn_uuid: str | None = None


def record_session_links(database: Database, links: Sequence[SessionLink], at: str) -> None:
    """Record `links` at instant `at` in one statement (a batch may carry thousands); a link already
    recorded for its (path, session, kind) is kept as it was."""
    # One row per (path, session, kind): a batch may touch one memory with several ops.
    links = list({(link.path, link.session_id, link.kind): link for link in links}.values())
    if not links:
        return
    with database.transaction():
        database.run(
            """
            INSERT INTO state.session_links
            SELECT * FROM (SELECT unnest($paths), unnest($sessions), unnest($prompts), unnest($turns),
                                  unnest($kinds), $at)
            ON CONFLICT DO NOTHING
            """,
            {
                "paths": [link.path for link in links],
                "sessions": [link.session_id for link in links],
                "prompts": [link.prompt_id for link in links],
                "turns": [link.turn_uuid for link in links],
                "kinds": [link.kind for link in links],
                "at": at,
            },
        )
