"""The two sortable instant forms the corpus accepts: `YYYY-MM-DD` and `YYYY-MM-DDThh:mm:ssZ`.

Values in these forms sort lexicographically the way they sort in time, which the index relies on.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

# The forms as a pattern; `is_sortable_instant` answers exactly what it matches, a character at a time.
SORTABLE_INSTANT_PATTERN: Final = r"^(\d{4})-(\d{2})-(\d{2})(T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)Z)?$"
_DATE_LENGTH: Final[int] = 10
_INSTANT_LENGTH: Final[int] = 20
# Days in each month of a common year, January at 1.
_DAYS_IN_MONTH: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_sortable_instant(value: str) -> bool:
    """True when `value` is a real calendar date, optionally with a UTC time to the second (`:60` allowed).

    What `SORTABLE_INSTANT_PATTERN` matches, with Python's meaning of it (`\\d` any Unicode decimal digit,
    `$` also before one final newline), and a real date; read character by character, since every file's
    check asks this of its instants: the pattern's match, its groups and a `datetime.date` were a visible
    share of a file's parse, check and projection, and this takes a fraction of that."""
    if value.endswith("\n"):
        value = value[:-1]
    length = len(value)
    if length not in (_DATE_LENGTH, _INSTANT_LENGTH):
        return False
    if value[4] != "-" or value[7] != "-":
        return False
    year, month, day = value[0:4], value[5:7], value[8:10]
    if not (year.isdecimal() and month.isdecimal() and day.isdecimal()):
        return False
    if length == _INSTANT_LENGTH and not _is_utc_time_of_day(value):
        return False
    return _is_calendar_date(int(year), int(month), int(day))


def _is_calendar_date(year: int, month: int, day: int) -> bool:
    """Whether `datetime.date` takes these: a year from 1 to 9999 and a day its month has."""
    if year < 1 or month < 1 or month > 12 or day < 1:
        return False
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return day <= (29 if leap else 28)
    return day <= _DAYS_IN_MONTH[month]


def _is_utc_time_of_day(value: str) -> bool:
    """`Thh:mm:ssZ` after the date: hours to 23, minutes to 59, seconds to 59 or a leap second's 60."""
    if value[10] != "T" or value[13] != ":" or value[16] != ":" or value[19] != "Z":
        return False
    hour_tens, hour_units = value[11], value[12]
    if not ((hour_tens in "01" and hour_units.isdecimal()) or (hour_tens == "2" and hour_units in "0123")):
        return False
    if not (value[14] in "012345" and value[15].isdecimal()):
        return False
    return (value[17] in "012345" and value[18].isdecimal()) or (value[17] == "6" and value[18] == "0")


def format_instant(moment: dt.datetime) -> str:
    """A UTC instant to the second, in the corpus form `YYYY-MM-DDThh:mm:ssZ`."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
