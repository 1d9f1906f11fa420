"""The two sortable instant forms the corpus accepts: `YYYY-MM-DD` and `YYYY-MM-DDThh:mm:ssZ`.

Values in these forms sort lexicographically the way they sort in time, which the index relies on.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

_INSTANT: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)Z)?$")


def is_sortable_instant(value: str) -> bool:
    """True when `value` is a real calendar date, optionally with a UTC time to the second (`:60` allowed)."""
    match = _INSTANT.match(value)
    if match is None:
        return False
    try:
        dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return False
    return True


def format_instant(moment: dt.datetime) -> str:
    """A UTC instant to the second, in the corpus form `YYYY-MM-DDThh:mm:ssZ`."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
