"""Text from outside (a server's error message, a binlog's names and statements) made
inert before it reaches a terminal or a log: control and other non-printable characters
escaped (``\\x1b``, ``\\u2028``) so nothing can clear the screen, set a window title,
fake a prompt or end a line early; the length capped; and secrets we know of (the DSN's
password) removed, for a server that echoes them back."""
from __future__ import annotations

from collections.abc import Iterable

#: Longest text kept from one outside message (the server's own messages are < 512
#: bytes: MYSQL_ERRMSG_SIZE, include/mysql_com.h).
MAX_TEXT = 512


def escape(text: str) -> str:
    """Non-printable characters as ``\\xNN`` / ``\\uNNNN``; printable text unchanged."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else
                   (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   for c in text)


def inert(text: str | bytes, *, secrets: Iterable[str] = (), limit: int = MAX_TEXT) -> str:
    """``text`` safe to print: secrets replaced by ``***`` (before and after escaping, so
    an escaped copy is caught too), escaped, cut to ``limit`` characters."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if len(text) > limit * 8:
        text = text[:limit * 8]         # bound the work on a huge message
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = escape(text)
    for secret in secrets:
        if secret:
            text = text.replace(escape(secret), "***")
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return text
