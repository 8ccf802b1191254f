"""Values a user types (command line, Spark options): time zones, datetimes, positions.

One public home for them, so the command line and the Spark source read a value the same
way; each raises ``UsageError`` with a message meant for the user.
"""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo

from .errors import UsageError


def parse_zone(name: str) -> tzinfo | None:
    """The zone a name gives (an IANA name such as ``Europe/Berlin``); None for UTC."""
    if name.upper() in ("UTC", "Z", "+00:00"):
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(f"unknown time zone {name!r}") from exc


def parse_epoch(text: str | None, zone: tzinfo | None) -> int | None:
    """Seconds since the epoch of ``'YYYY-MM-DD hh:mm:ss'`` in ``zone`` (None: UTC), unless
    the text names its own offset; None for None."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(f"bad datetime {text!r}: use 'YYYY-MM-DD hh:mm:ss'") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone or timezone.utc)
    return int(moment.timestamp())


def parse_position(text: str | None) -> tuple[str, int] | None:
    """``FILE:POS`` as (file, offset); None for None."""
    if text is None:
        return None
    name, colon, pos = text.rpartition(":")
    if not colon or not name or not pos.isdigit():
        raise UsageError(f"expected FILE:POS, got {text!r}")
    return (name, int(pos))


def parse_table_name(text: str) -> tuple[str, str]:
    """``DB.TABLE`` (backquotes allowed around each part) as (db, table)."""
    db, dot, table = text.partition(".")
    if not dot or not db or not table:
        raise UsageError(f"expected DB.TABLE, got {text!r}")
    return db.strip("`"), table.strip("`")
