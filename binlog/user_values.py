"""Values a user types (command line, Spark options): time zones, datetimes, positions, sizes,
server addresses (DSNs).

One public home for them, so the command line and the Spark source read a value the same
way; each raises ``UsageError`` with a message meant for the user.
"""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from urllib.parse import parse_qs, unquote, urlsplit

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
# ``?ssl_cert=``, ``?ssl_key=``, ``?ssl_verify_cert=1``, ``?ssl_verify_identity=1``); for a
# live source, ``?server_public_key=FILE`` (the server's RSA key, so the password is never
# encrypted with a key the server sends) and ``?allow_cleartext_password=1`` (the opt-in to
# send it in clear where the server asks so: sources/wire.py, protocol/auth.py).
# ``?password_file=PATH`` reads the password from a file's first line, so it is not on a
# command line (which every local user can read in /proc/PID/cmdline); serve hands its
# fetch child the upstream's password that way, through a pipe (/dev/fd/N).
# One parser for --schema-from, --from and --to; a DSN carries a password, so messages
# show ``redact_dsn(dsn)``.
_SCHEMES = ("mysql", "mariadb")
_FLOATS = ("connect_timeout", "read_timeout")
_PATHS = ("unix_socket", "ssl_ca", "ssl_cert", "ssl_key", "server_public_key")
_PASSWORD_FILE = "password_file"
#: a password file's first line is read from at most this many bytes
_PASSWORD_FILE_LIMIT = 4096
_FLAGS = ("ssl_verify_cert", "ssl_verify_identity", "allow_cleartext_password")
#: Parameters only our own client takes (not PyMySQL's keyword arguments).
WIRE_ONLY = ("allow_cleartext_password",)


def redact_dsn(dsn: str) -> str:
    """The DSN for a message, with nothing that may be a password: read from the raw
    text, not from urlsplit, so a password holding an unencoded ``/ ? # @`` is masked
    too.  Kept: the scheme, the user name, the host part (a ``host:port`` whose port is not
    a number may be ``user:password`` without an ``@``: masked), the path and the query's
    parameter names."""
    scheme, sep, rest = dsn.partition("://")
    if not sep:
        scheme = dsn.partition(":")[0] if ":" in dsn else ""
        # a word before ':' is a scheme; anything else may be a pasted password
        return f"{scheme if scheme.isalpha() and len(scheme) <= 10 else '...'}:<not scheme://...>"
    auth, at, tail = rest.rpartition("@")
    if at:
        user = auth.partition(":")[0]
        head = f"{user}:***@" if ":" in auth else f"{user}@"
    else:
        head, tail = "", rest
    host, slash, after = tail.partition("/")
    if not at and ":" in host and not host.rpartition(":")[2].isdigit() and not host.endswith("]"):
        host = host.partition(":")[0] + ":***"
    path, q, query = after.partition("?")
    if q:
        names = [item.partition("=")[0] for item in query.split("&")]
        query = "&".join(f"{n}=..." if n not in _FLOATS + _PATHS + _FLAGS + (_PASSWORD_FILE,) else item
                         for n, item in zip(names, query.split("&"), strict=True))
    return f"{scheme}://{head}{host}{slash}{path}{q}{query}"


def _bad(dsn: str, why: str) -> UsageError:
    return UsageError(f"bad DSN {redact_dsn(dsn)!r}: {why}")


def parse_dsn(dsn: str) -> dict:
    """DSN -> keyword arguments for ``pymysql.connect`` (plus ``'database'``, None when
    the DSN names none).  UsageError for a DSN that is not one (``mysql:/host``,
    ``mysql:host``, a password with an unencoded ``/``, a port that is no number...); its
    message never contains the password, nor any value that could be one."""
    scheme, sep = dsn.partition(":")[0], "://" in dsn
    if scheme.lower() not in _SCHEMES:
        raise _bad(dsn, "expected mysql://user:pass@host:port/db or mariadb://...")
    if not sep:
        # mysql:/host or mysql:host would parse as a path: localhost:3306, silently
        raise _bad(dsn, "expected mysql://user:pass@host:port/db (two slashes after the scheme)")
    try:
        parts = urlsplit(dsn)
        port = parts.port
    except ValueError:
        # urlsplit's message quotes the bad port, which may be a password (mysql://u:pw)
        raise _bad(dsn, "the host part is not host, host:port (1-65535) or [IPv6]:port; "
                        "percent-encode '@ : / ? #' in the user name and password") from None
    if "/" in parts.path.lstrip("/") or parts.fragment:
        # mysql://u:pa/ss@host/db: the password's '/' (or '#') ended the host part
        raise _bad(dsn, "the path must be /database only; percent-encode '/ ? # @' in the "
                        "user name, password and database")
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
                raise _bad(dsn, f"{name} must be a number of seconds, not {value!r}") from None
        elif name in _PATHS:
            kw[name] = value
        elif name in _FLAGS:
            kw[name] = value.lower() in ("1", "true", "yes", "on")
        elif name == _PASSWORD_FILE:
            if parts.password:
                raise _bad(dsn, "give the password in the DSN or in ?password_file=, not both")
            kw["password"] = _read_password(dsn, value)
        else:
            known = ", ".join(_FLOATS + _PATHS + _FLAGS + (_PASSWORD_FILE,))
            raise _bad(dsn, f"unknown parameter {name!r} (known: {known})")
    return kw


def _read_password(dsn: str, path: str) -> str:
    """The first line of a password file (its line end dropped; no other trimming: a
    password may begin or end with blanks).  Only the path is ever quoted in a message."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_PASSWORD_FILE_LIMIT + 1)
    except OSError as exc:
        raise _bad(dsn, f"?password_file={path}: {exc.strerror or exc}") from None
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) > _PASSWORD_FILE_LIMIT:
        raise _bad(dsn, f"?password_file={path}: no line end in its first {_PASSWORD_FILE_LIMIT} bytes")
    try:
        return line.removesuffix(b"\r").decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(dsn, f"?password_file={path}: the password is not UTF-8") from None


def pymysql_kwargs(kw: dict) -> dict:
    """A parsed DSN as ``pymysql.connect`` takes it: the key file's contents, not its
    path; our client's own parameters left out."""
    out = {k: v for k, v in kw.items() if k not in WIRE_ONLY}
    path = out.pop("server_public_key", None)
    if path:
        try:
            with open(path, "rb") as fh:
                out["server_public_key"] = fh.read(64 * 1024)
        except OSError as exc:
            raise UsageError(f"?server_public_key={path}: {exc.strerror or exc}") from None
    return out


def dsn_address(kw: dict) -> str:
    """Where a parsed DSN connects to, for messages: ``host:port`` or the socket path."""
    return kw.get("unix_socket") or f"{kw.get('host', 'localhost')}:{kw.get('port', 3306)}"

