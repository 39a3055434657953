"""The bounds of every value that reaches a column, checked at the boundary (DESIGN section 6,
invariant 7: bad input gets a precise 4xx and stores nothing; no input produces a 5xx).

One module, pure (no Django, no model: the formats use it too), used by the ingest body
(``ingest/body.py``), the provider formats' counts (``formats/base.py``), the event and compliance
APIs (``api/serializers.py: BoundedDateTimeField``), the console's query strings and forms
(``console/forms.py``) and the admin's filters (``console/middleware.py`` refuses a NUL in any
query string or path). Each check raises ``OutOfBounds`` with a code and a sentence; the caller
names the field and the JSON path in its own error shape.

The rules:

- **Timestamps**: RFC 3339 with a real calendar date and time (no 30 February, hour 25, month
  13), an offset within ±14:00 (the widest any place on Earth uses), and within a sane window:
  not before ``TIMESTAMP_EARLIEST`` (2000-01-01) and not more than ``TIMESTAMP_FUTURE_SECONDS``
  (a day) in the future (``Window.of(settings)``). Both PostgreSQL and Python hold every instant
  of that window, in every time zone a page may show it in.
- **Integers**: within their column (``INT32_MAX`` for a PositiveIntegerField), counts not
  negative, and no integer of more than ``MAX_INT_DIGITS`` digits (Python refuses to read one;
  the JSON decoder's ValueError is turned into a 400 where bodies are decoded).
- **Strings**: no NUL (PostgreSQL text cannot hold one).
- **Ids in a URL or a query string**: digits only, within a bigint.

Where a bad row is already stored (an older version, a restore), ``clamp`` brings an instant
Python cannot hold back into range, so that pages and the erase path still work on it
(``conversations/apps.py`` installs it as the database's timestamp loader).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_INT_DIGITS = 4300  # sys.get_int_max_str_digits(): Python reads no longer integer from text
MAX_OFFSET = timedelta(hours=14)
DEFAULT_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
DEFAULT_FUTURE = timedelta(days=1)

# RFC 3339 (and the forms ISO 8601 writers commonly send): date, "T" or a space, time with
# optional fraction, then "Z", an offset, or nothing (UTC).
_TIMESTAMP = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[Tt ]"
    r"(?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"(?P<tz>[Zz]|[+-]\d{2}(?::?\d{2})?)?",
    re.ASCII,  # "\d" is 0-9 only: int() would read other scripts' digits
)
_DATE = re.compile(r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})", re.ASCII)
_ID = re.compile(r"[0-9]{1,19}")


class OutOfBounds(ValueError):
    """A value outside its bounds: ``code`` (stable) and ``detail`` (for a person)."""

    def __init__(self, detail: str, *, code: str = "out_of_range") -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code


@dataclass(frozen=True, slots=True)
class Window:
    """The instants a timestamp may name: from ``earliest`` to ``future`` after now."""

    earliest: datetime = DEFAULT_EARLIEST
    future: timedelta = DEFAULT_FUTURE

    @classmethod
    def of(cls, settings: Any, *, future: timedelta | None = None) -> Window:
        """The window the settings give (``TIMESTAMP_EARLIEST``, an ISO date, and
        ``TIMESTAMP_FUTURE_SECONDS``); ``future`` overrides the latter (a deletion's due date
        may be months ahead)."""
        earliest = getattr(settings, "TIMESTAMP_EARLIEST", None)
        seconds = getattr(settings, "TIMESTAMP_FUTURE_SECONDS", None)
        return cls(
            earliest=parse_date(earliest).replace(tzinfo=UTC)
            if isinstance(earliest, str)
            else DEFAULT_EARLIEST,
            future=future
            if future is not None
            else (timedelta(seconds=seconds) if isinstance(seconds, int) else DEFAULT_FUTURE),
        )

    def latest(self, now: datetime | None = None) -> datetime:
        return (now or datetime.now(UTC)) + self.future

    def describe(self, now: datetime | None = None) -> str:
        latest = self.latest(now)
        return f"{self.earliest:%Y-%m-%d} to {latest:%Y-%m-%dT%H:%M}Z"

    def check(self, at: datetime, now: datetime | None = None) -> datetime:
        """``at`` (aware) if it lies in the window, else OutOfBounds."""
        check_offset(at)
        if at < self.earliest or at > self.latest(now):
            raise OutOfBounds(f"expected a time from {self.describe(now)}, got {at.isoformat()}")
        return at


def check_offset(at: datetime) -> datetime:
    offset = at.utcoffset()
    if offset is not None and abs(offset) > MAX_OFFSET:
        raise OutOfBounds("the UTC offset must be within ±14:00", code="invalid")
    return at


def parse_timestamp(
    text: Any, window: Window | None = None, now: datetime | None = None
) -> datetime:
    """An RFC 3339 timestamp (without an offset: UTC), a real date and time, an offset within
    ±14:00, inside ``window`` (the default window when None)."""
    if not isinstance(text, str):
        raise OutOfBounds(
            "expected an RFC 3339 timestamp, e.g. 2026-11-29T10:00:00Z", code="invalid"
        )
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        raise OutOfBounds(
            "expected an RFC 3339 timestamp, e.g. 2026-11-29T10:00:00Z", code="invalid"
        )
    tz = m["tz"]
    if tz is None or tz in "Zz":
        zone: timezone = UTC
    else:
        digits = tz[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:] or 0)
        if minutes >= 60:
            raise OutOfBounds(f"not a valid UTC offset: {tz}", code="invalid")
        offset = timedelta(hours=hours, minutes=minutes)
        if offset > MAX_OFFSET:
            raise OutOfBounds(f"the UTC offset must be within ±14:00, got {tz}", code="invalid")
        zone = timezone(-offset if tz[0] == "-" else offset)
    fraction = (m["f"] or "").ljust(6, "0")[:6]
    try:
        at = datetime(
            int(m["y"]),
            int(m["mo"]),
            int(m["d"]),
            int(m["h"]),
            int(m["mi"]),
            int(m["s"] or 0),
            int(fraction),
            tzinfo=zone,
        )
    except ValueError as exc:  # 30 February, month 13, hour 25, second 60...
        raise OutOfBounds(f"not a real date and time: {exc}", code="invalid") from None
    return (window or Window()).check(at, now)


def parse_date(text: str) -> datetime:
    """A calendar date (YYYY-MM-DD) as a naive midnight, or OutOfBounds."""
    m = _DATE.fullmatch(text.strip())
    if m is None:
        raise OutOfBounds("expected a date, YYYY-MM-DD", code="invalid")
    try:
        return datetime(int(m["y"]), int(m["mo"]), int(m["d"]))
    except ValueError as exc:
        raise OutOfBounds(f"not a real date: {exc}", code="invalid") from None


def check_day(day: date, window: Window | None = None, now: datetime | None = None) -> date:
    """A day a filter names (since/until): from the window's first day to the day after the
    window's last (a filter's day is widened to its end, which must still be a real instant)."""
    w = window or Window()
    first, last = w.earliest.date(), w.latest(now).date() + timedelta(days=1)
    if not first <= day <= last:
        raise OutOfBounds(f"expected a date from {first} to {last}")
    return day


def check_int(
    value: Any, *, minimum: int = 0, maximum: int = INT32_MAX, what: str = "a number"
) -> int:
    """An integer (not a boolean) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OutOfBounds("A valid integer is required.", code="invalid")
    if value < minimum:
        raise OutOfBounds(f"expected {what} from {minimum} to {maximum}", code="min_value")
    if value > maximum:
        raise OutOfBounds(f"expected {what} from {minimum} to {maximum}", code="max_value")
    return value


def check_count(value: Any) -> int:
    """A count (tokens, calls): not negative, within an integer column."""
    return check_int(value, what="a count")


def check_text(value: str) -> str:
    """A string PostgreSQL text can hold (no NUL)."""
    if "\x00" in value:
        raise OutOfBounds("contains a NUL character", code="invalid_string")
    return value


def parse_id(text: str, *, maximum: int = INT64_MAX) -> int:
    """A database id from a URL or a query string: digits only, 1 to ``maximum``."""
    if not _ID.fullmatch(text):
        raise OutOfBounds("expected a positive integer id", code="invalid")
    value = int(text)
    if not 0 < value <= maximum:
        raise OutOfBounds(f"expected an id from 1 to {maximum}")
    return value


def is_count_key(key: str) -> bool:
    """Whether a provider member names a count kept in a column (``*_tokens``, ``*Tokens``)."""
    return key.lower().endswith("tokens")


# --- rows already stored ----------------------------------------------------------------------

# Two days inside Python's range: a clamped instant can still be shown in any time zone (±14:00)
# and moved by a day (a filter's end) without overflowing.
CLAMP_MAX = datetime.max.replace(tzinfo=UTC) - timedelta(days=2)
CLAMP_MIN = datetime.min.replace(tzinfo=UTC) + timedelta(days=2)


def clamp(at: datetime) -> datetime:
    """An aware instant moved into the range every page can show."""
    if at > CLAMP_MAX:
        return CLAMP_MAX
    if at < CLAMP_MIN:
        return CLAMP_MIN
    return at
