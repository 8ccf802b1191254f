"""Values a user types (command line, Spark options): time zones, datetimes, positions,
server addresses (DSNs).

One public home for them, so the command line and the Spark source read a value the same
way; each raises ``UsageError`` with a message meant for the user.
"""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

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


# DSNs: ``mysql://user:pass@host:port/db`` or ``mariadb://...``, user and password
# percent-encoded, ``?unix_socket=/path`` for a socket, ``?connect_timeout=`` /
# ``?read_timeout=`` in seconds, TLS through PyMySQL's ssl_* arguments (``?ssl_ca=/path``,
# ``?ssl_cert=``, ``?ssl_key=``, ``?ssl_verify_cert=1``, ``?ssl_verify_identity=1``).
# One parser for --schema-from, --from and --to; a DSN carries a password, so messages
# show ``redact_dsn(dsn)``.
_SCHEMES = ("mysql", "mariadb")
_FLOATS = ("connect_timeout", "read_timeout")
_PATHS = ("unix_socket", "ssl_ca", "ssl_cert", "ssl_key")
_FLAGS = ("ssl_verify_cert", "ssl_verify_identity")


def redact_dsn(dsn: str) -> str:
    """The DSN with its password replaced by ``***`` (for messages)."""
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "<unparsable DSN>"
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return dsn
    netloc = f"{userinfo.partition(':')[0]}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def parse_dsn(dsn: str) -> dict:
    """DSN -> keyword arguments for ``pymysql.connect`` (plus ``'database'``, None when
    the DSN names none).  UsageError for a DSN that is not one; its message never
    contains the password."""
    try:
        parts = urlsplit(dsn)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"bad DSN {redact_dsn(dsn)!r}: {exc}") from None
    if parts.scheme.lower() not in _SCHEMES:
        raise UsageError(f"bad DSN {redact_dsn(dsn)!r}: expected mysql://user:pass@host:port/db "
                         f"or mariadb://...")
    kw: dict = {"user": unquote(parts.username) if parts.username else "root",
                "password": unquote(parts.password) if parts.password else ""}
    if parts.hostname:
        kw["host"] = parts.hostname
    if port:
        kw["port"] = port
    kw["database"] = unquote(parts.path.lstrip("/")) or None
    query = parse_qs(parts.query)
    for name, values in query.items():
        value = values[-1]
        if name in _FLOATS:
            try:
                kw[name] = float(value)
            except ValueError:
                raise UsageError(f"bad DSN {redact_dsn(dsn)!r}: {name} must be a number of "
                                 f"seconds, not {value!r}") from None
        elif name in _PATHS:
            kw[name] = value
        elif name in _FLAGS:
            kw[name] = value.lower() in ("1", "true", "yes", "on")
        else:
            raise UsageError(f"bad DSN {redact_dsn(dsn)!r}: unknown parameter {name!r} (known: "
                             f"{', '.join(_FLOATS + _PATHS + _FLAGS)})")
    return kw


def dsn_address(kw: dict) -> str:
    """Where a parsed DSN connects to, for messages: ``host:port`` or the socket path."""
    return kw.get("unix_socket") or f"{kw.get('host', 'localhost')}:{kw.get('port', 3306)}"
