"""One error hierarchy for everything the parser can reject.

Every error carries as much context as is known where it is raised; outer layers
(the event stream, the rows decoder) add what they know with ``add_context`` and
never replace what is already there.  ``str(err)`` reads like
``binlog.000042 @ 1337 WRITE_ROWS_EVENT_V1 test.t column `c` (@3): need 4 bytes, 1 left (field at 1360)``.
"""
from __future__ import annotations

import os
from typing import Any

_CONTEXT_FIELDS = ("source", "event_offset", "field_offset", "event_type", "table", "column")


class BinlogError(Exception):
    """Base of every error this package raises on bad or unsupported input."""

    def __init__(self, message: str, *, source: str | os.PathLike | None = None, event_offset: int | None = None,
                 field_offset: int | None = None, event_type: str | None = None,
                 table: str | None = None, column: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.source = source
        self.event_offset = event_offset
        self.field_offset = field_offset
        self.event_type = event_type
        self.table = table
        self.column = column
        self.hint = hint

    def add_context(self, **fields: Any) -> "BinlogError":
        """Fill in context fields that are still unknown; known ones are kept."""
        for name, value in fields.items():
            if name not in _CONTEXT_FIELDS:
                raise TypeError(f"unknown context field {name!r}")
            if getattr(self, name) is None and value is not None:
                setattr(self, name, value)
        return self

    def where(self) -> str:
        parts = []
        if self.source is not None:
            parts.append(str(self.source))
        if self.event_offset is not None:
            parts.append(f"@ {self.event_offset}")
        if self.event_type is not None:
            parts.append(str(self.event_type))
        if self.table is not None:
            parts.append(str(self.table))
        if self.column is not None:
            parts.append(f"column {self.column}")
        return " ".join(parts)

    def __str__(self) -> str:
        text = self.message
        if self.field_offset is not None and self.field_offset != self.event_offset:
            text += f" (field at {self.field_offset})"
        where = self.where()
        if where:
            text = f"{where}: {text}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class TruncatedError(BinlogError):
    """A read went past the end of the bytes available to it."""


class IncompleteEventError(TruncatedError):
    """The input ends inside an event: the file is cut short or still being written."""


class BadMagicError(BinlogError):
    """The input does not start with the binlog magic FE 62 69 6E."""


class ChecksumMismatchError(BinlogError):
    """An event's CRC32 footer does not match its bytes."""

    def __init__(self, message: str, *, stored: int, computed: int, **context: Any):
        super().__init__(message, **context)
        self.stored = stored
        self.computed = computed


class MalformedEventError(BinlogError):
    """An event's bytes contradict its own layout (bad length, leftover bytes, bad value)."""


class EncryptedBinlogError(BinlogError):
    """The file is encrypted (START_ENCRYPTION_EVENT); events after it need the key."""


class UnsupportedTypeError(BinlogError):
    """A column type or feature this parser cannot decode."""


class MissingTableMapError(BinlogError):
    """A rows event refers to a table_id with no TABLE_MAP_EVENT before it."""


class PrecisionUnknownError(BinlogError):
    """A legacy TIMESTAMP/DATETIME/TIME column whose fractional precision the binlog does not record."""


class InputError(BinlogError):
    """An input file or directory the system cannot read (EIO, permissions, an empty
    file): names the file and, for a read, the offset (exit code 1)."""


class UsageError(BinlogError):
    """Bad options or arguments given by the user (exit code 2)."""


class ServerError(BinlogError):
    """A server (a replay target, a server to verify against, a live schema source, a
    live source ``--from DSN``) could not be reached or refused (exit code 5).  ``code``:
    the server's error number when it sent one.  Messages never contain the password."""

    def __init__(self, message: str, *, code: int | None = None, **context: Any):
        super().__init__(message, **context)
        self.code = code


class TargetError(ServerError):
    """A replay or verification target failed or refused (exit code 5)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message, hint=hint)


class ServerConnectionError(ServerError):
    """A live source: the connection could not be made or was lost (worth retrying)."""


class ServerAccessError(ServerError):
    """A live source refused the user: wrong password (1045) or a missing privilege (1227)."""


class ServerProtocolError(ServerError):
    """A server's reply broke the protocol at some step of the session (a malformed
    greeting, a result set of the wrong shape, a packet longer than its event, a step
    that timed out): ``step`` names it.  Not retried: a server that does this once
    will do it again."""

    def __init__(self, message: str, *, step: str, **context: Any):
        super().__init__(message, **context)
        self.step = step


class ServerTimeoutError(ServerConnectionError):
    """A step of the session did not complete within its time limit (a silent or
    trickling server): retried like a lost connection."""


class ServerPositionError(ServerError):
    """A live source cannot send from the position asked for (error 1236 and its kin)."""


class PurgedLogError(ServerPositionError):
    """The binlog file asked for is no longer on the server (purged or never there)."""


class GtidPositionError(ServerPositionError):
    """The GTID position asked for is not in the server's binlogs."""


class RelayError(BinlogError):
    """A relay directory (``binlog fetch --to DIR``) disagrees with the server or itself."""


class GapError(BinlogError):
    """A binlog is missing from a sequence of files (exit code 1; --allow-gaps reads on)."""


# The --on-error policies: "fail" raises on damaged input, "skip" reports it and goes on
# (binlog.stream).  Here, not in stream.py, so command-line parsers need no decoders.
ON_ERROR_CHOICES = ("fail", "skip")


def check_on_error(on_error: str) -> None:
    if on_error not in ON_ERROR_CHOICES:
        raise ValueError(f"on_error must be one of {ON_ERROR_CHOICES}, not {on_error!r}")


class DecryptionError(EncryptedBinlogError):
    """An encrypted binlog cannot be decrypted with the keys given; names the key id
    and key version the file needs (never the key)."""

    def __init__(self, message: str, *, key_id: int | None = None, key_version: int | None = None,
                 **context: Any):
        super().__init__(message, **context)
        self.key_id = key_id
        self.key_version = key_version


class MissingKeyError(DecryptionError):
    """No key file given has the key id and version the binlog was encrypted with."""


class WrongKeyError(DecryptionError):
    """The keys given do not decrypt the binlog: its first encrypted event fails its
    checks with every key and algorithm tried."""


class KeyFileError(UsageError):
    """A key file (or its secret) that cannot be read as file_key_management reads it."""
