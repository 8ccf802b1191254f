"""TiCDC-compatible CRC32 row checksums (TiCDC's row checksum, ``buildChecksumBytes``).

    checksum = 0
    for column in columns, in table (column ID) order:
        checksum = crc32.update(checksum, encode(column))

``encode`` by the column's MySQL type:

- TINYINT, SMALLINT, MEDIUMINT, INT, BIGINT, YEAR: the value as UINT64, little-endian
  (negative values as their two's complement: ``uint64(int64(v))``);
- FLOAT, DOUBLE: the value as a double, its IEEE 754 bits as UINT64 little-endian (a
  FLOAT's float32 value widened exactly);
- BIT: the bits as UINT64; ENUM: its 1-based index, SET: its bitmask, as UINT64;
- TIMESTAMP, DATE, TIME, DATETIME, DECIMAL, JSON: their text (MySQL's form: temporals
  with exactly N fraction digits, TIMESTAMP in UTC; DECIMAL with its exact digits);
- CHAR, VARCHAR, TEXT, BLOB, BINARY...: their bytes (text in the column's charset);
- NULL and GEOMETRY: nothing.

CRC32 is IEEE (``zlib.crc32``, Go's ``crc32.IEEETable``).  Checksums need the whole row:
a partial image (binlog_row_image=MINIMAL/NOBLOB) has none.
"""
from __future__ import annotations

import struct
import zlib
from datetime import datetime, timezone
from decimal import Decimal

from .charsets import CHARSET_CODECS, charset_of
from .constants import ColumnType as T
from .errors import BinlogError
from .types.json_binary import json_text
from .types.strings import LARGE_VALUE, LargeText

_INTS = frozenset({T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR})
_TEXT_FORMS = frozenset({T.DATE, T.NEWDATE, T.TIME, T.TIME2, T.DATETIME, T.DATETIME2,
                         T.TIMESTAMP, T.TIMESTAMP2})
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")


class ChecksumError(BinlogError, ValueError):
    """A value no row checksum can be made of (a FLOAT/DOUBLE NaN or infinity, which no
    server stores: the row's bytes are damaged; a SET whose labels are unknown)."""


def _u64(value: int) -> bytes:
    return _U64.pack(int(value) & 0xFFFFFFFFFFFFFFFF)


def _utc_timestamp(text: str, tz) -> str:
    """A TIMESTAMP rendered in ``tz`` back to UTC (the zero date stays)."""
    if tz is None or text.startswith("0000-00-00"):
        return text
    head, dot, frac = text.partition(".")
    local = datetime.strptime(head, "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
    utc = local.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return utc + (dot + frac if dot else "")


class UnknownChecksum(ChecksumError):
    """A value whose encoding the binlog does not tell: the image has no checksum."""


def _enum_number(value, labels) -> int:
    if isinstance(value, int):
        return value
    if labels is None:
        return 0
    if value == "":
        if "" in labels:
            # the error value (index 0) and a member '' both decode to '': the index,
            # which TiCDC encodes, is unknown (MariaDB KB "ENUM": the error value)
            raise UnknownChecksum("an ENUM value '' of a column with a member '': its index is unknown")
        return 0
    return labels.index(value) + 1


def _set_number(value, labels) -> int:
    if isinstance(value, int):
        return value
    if not value:
        return 0
    if labels is None:
        raise ChecksumError("SET labels unknown")
    mask = 0
    for part in value.split(","):
        mask |= 1 << labels.index(part)
    return mask


def _decimal_text(value) -> str:
    if not isinstance(value, Decimal):
        value = Decimal(str(value))
    if value == 0:
        value = abs(value)          # no "-0.00"
    return format(value, "f")


# A value at least LARGE_VALUE large is checksummed in pieces, never encoded whole:
# bytes and views as they are, text encoded a piece of characters at a time
# (slicing a str cuts between characters, so the pieces' bytes are the whole's).
_PIECE = 1 << 20


def value_pieces(value, col):
    """The bytes of ``encode_value(value, col)``, in pieces for a large value."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        if col.type not in (T.GEOMETRY, T.NULL, T.VECTOR):
            yield value                           # zlib.crc32 takes any buffer, uncopied
            return
    elif isinstance(value, str) and len(value) >= LARGE_VALUE and col.type in _STREAMED_TEXT:
        codec = col.encoding or _codec_of(col) or "utf-8"
        for i in range(0, len(value), _PIECE):
            yield value[i:i + _PIECE].encode(codec)
        return
    elif isinstance(value, LargeText):
        # what the str's pieces encode to: its characters, a piece at a time
        codec = col.encoding or _codec_of(col) or "utf-8"
        for piece in value.pieces():
            yield piece.encode(codec)
        return
    yield encode_value(value, col)


# the types whose str values encode_value encodes in the column's charset
_STREAMED_TEXT = frozenset({T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB,
                            T.LONG_BLOB, T.BLOB_COMPRESSED, T.VARCHAR_COMPRESSED})


def encode_value(value, col) -> bytes:
    """The bytes ``encode(column)`` gives for one decoded value (binlog.column.Column)."""
    if value is None:
        return b""
    t = col.type
    if t in _INTS:
        return _u64(value)
    if t in (T.FLOAT, T.DOUBLE):
        v = float(value)
        if v != v or v in (float("inf"), float("-inf")):
            raise ChecksumError(f"a {v} {'FLOAT' if t == T.FLOAT else 'DOUBLE'} value has no row "
                                f"checksum (no server stores one: the row's bytes are damaged)",
                                column=col.label, hint="dump the file without --checksum to see the row")
        return _F64.pack(v)
    if t == T.BIT:
        return _u64(value)
    if t in (T.ENUM, T.SET):
        enum = t == T.ENUM
        try:
            if enum:
                return _u64(_enum_number(value, col.enum_values))
            return _u64(_set_number(value, col.set_values))
        except ChecksumError as exc:
            raise exc.add_context(column=col.label) from None
        except ValueError as exc:       # a label not among the column's (list.index)
            raise ChecksumError(f"{'ENUM' if enum else 'SET'} value {value!r}: {exc}",
                                column=col.label) from exc
    if t in (T.GEOMETRY, T.NULL):
        return b""
    if t == T.NEWDECIMAL:
        return _decimal_text(value).encode("ascii")
    if t in _TEXT_FORMS:
        text = str(value)
        if t in (T.TIMESTAMP, T.TIMESTAMP2):
            text = _utc_timestamp(text, col.tz)
        return text.encode("ascii")
    if t == T.JSON:
        return (value if isinstance(value, str) else json_text(value)).encode("utf-8")
    if t == T.VECTOR:
        return struct.pack(f"<{len(value)}f", *value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        codec = col.encoding or _codec_of(col) or "utf-8"
        return value.encode(codec)
    if isinstance(value, int):
        return _u64(value)
    raise ChecksumError(f"no checksum encoding for a {type(value).__name__} of type {t}",
                        column=col.label)


def _codec_of(col):
    return CHARSET_CODECS.get(charset_of(col) or "")


def row_checksum(row: dict | None, columns) -> int | None:
    """CRC32 of a complete row image (dict keyed by column key), columns in table order;
    None for no image or a partial one."""
    if row is None or len(row) != len(columns):
        return None
    crc = 0
    try:
        for col in columns:
            if col.key not in row:
                return None
            crc = crc_update(crc, row[col.key], col)
    except UnknownChecksum:
        return None
    return crc


def crc_update(crc: int, value, col) -> int:
    """``crc`` updated with one decoded value (``value_pieces``): the compiled checksum
    (``_speedups.encode_rows`` with flag 8) adds the values of Python decoders with it."""
    for data in value_pieces(value, col):
        if data:
            crc = zlib.crc32(data, crc)
    return crc


def change_checksums(change, checksum=None) -> dict:
    """{"current": after image's checksum, "previous": before image's} (TiCDC's names),
    by ``checksum`` (a RowChecksum of the change's table version) when given; a
    ChecksumError names the change's file, offset and table."""
    try:
        if checksum is None:
            cols = change.plan.columns
            return {"current": row_checksum(change.after, cols),
                    "previous": row_checksum(change.before, cols)}
        return {"current": checksum(change.after), "previous": checksum(change.before)}
    except ChecksumError as exc:
        at_change(exc, change)
        raise


def at_change(error: ChecksumError, change) -> None:
    """Let ``error`` name the change's file, offset and table (known fields are kept)."""
    error.add_context(source=change.file, event_offset=change.pos, table=f"{change.db}.{change.table}")


_MASK = 0xFFFFFFFFFFFFFFFF


def fast_encoder(col):
    """``encode_value(value, col)`` for the value type the decoder gives ``col``, as a
    function that returns None for any other value (the caller then takes
    ``value_pieces``: the same bytes, large values in pieces)."""
    t = col.type
    if t in _INTS:
        return lambda v: _U64.pack(v & _MASK) if v.__class__ is int else None
    if t in (T.FLOAT, T.DOUBLE):
        return lambda v: _F64.pack(v) if v.__class__ is float and v - v == 0.0 else None
    if t in _TEXT_FORMS and (t not in (T.TIMESTAMP, T.TIMESTAMP2) or col.tz is None):
        return lambda v: v.encode("ascii") if v.__class__ is str and v.isascii() else None
    if t == T.NEWDECIMAL:
        return lambda v: _decimal_text(v).encode("ascii") if v.__class__ is Decimal else None
    if t == T.ENUM:
        labels = col.enum_values
        return lambda v: _U64.pack(_enum_number(v, labels) & _MASK) if v.__class__ in (int, str) else None
    if t in _STREAMED_TEXT:
        codec = col.encoding or _codec_of(col) or "utf-8"
        return lambda v: (v.encode(codec) if v.__class__ is str and len(v) < LARGE_VALUE
                          else v if v.__class__ is bytes else None)
    return lambda v: None


class PlanChecksums:
    """``RowChecksum`` of each table version (DecodePlan), made once: ``checksums(plan)``.
    The plan is held, so its id is not taken by another while cached."""

    __slots__ = ("_cache",)

    def __init__(self):
        self._cache: dict = {}

    def __call__(self, plan) -> "RowChecksum":
        entry = self._cache.get(id(plan))
        if entry is None or entry[0] is not plan:
            if len(self._cache) > 4096:
                self._cache.clear()
            entry = self._cache[id(plan)] = (plan, RowChecksum(plan.columns))
        return entry[1]


class RowChecksum:
    """``row_checksum(row, columns)`` with each column's encoding chosen once
    (``fast_encoder``); any value off the usual path takes ``value_pieces``."""

    __slots__ = ("steps", "width")

    def __init__(self, columns):
        self.steps = tuple((col.key, fast_encoder(col), col) for col in columns)
        self.width = len(self.steps)

    def __call__(self, row: dict | None) -> int | None:
        if row is None or len(row) != self.width:
            return None
        crc = 0
        crc32 = zlib.crc32
        try:
            for key, encode, col in self.steps:
                if key not in row:
                    return None
                value = row[key]
                if value is None:
                    continue
                data = encode(value)
                if data is None:
                    crc = crc_update(crc, value, col)
                elif data:
                    crc = crc32(data, crc)
        except UnknownChecksum:
            return None         # (an ENUM '' that may be the error value)
        return crc
