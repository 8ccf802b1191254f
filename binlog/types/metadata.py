"""TABLE_MAP metadata: how many bytes each column type has, and what they mean.

Sources: MySQL sql/rpl_utility.cc table_def ctor and libs/mysql/binlog/event/
binary_log_funcs.cpp calc_field_size; MariaDB sql/field.cc do_save_field_metadata.

METADATA_READERS[type](cursor) -> int, the 16-bit metadata as the server's readers build it:

=========================================================  =====  ==========================
type                                                       bytes  returned int
=========================================================  =====  ==========================
DECIMAL(0) TINY SHORT LONG NULL TIMESTAMP LONGLONG INT24   0      0
DATE TIME DATETIME YEAR NEWDATE BOOL INVALID
FLOAT DOUBLE                                               1      pack length (4 / 8)
TIMESTAMP2 DATETIME2 TIME2                                 1      fsp 0..6
BLOB TINY/MEDIUM/LONG_BLOB GEOMETRY JSON VECTOR            1      length-prefix size 1..4
BLOB_COMPRESSED                                            1      length-prefix size 1..4
VARCHAR VAR_STRING VARCHAR_COMPRESSED                      2      LE u16: max length in bytes
                                                                  (COMPRESSED: +1 header byte)
BIT                                                        2      LE u16 of [M%8, M//8]:
                                                                  (M//8) << 8 | M%8
NEWDECIMAL                                                 2      b0 << 8 | b1 =
                                                                  precision << 8 | scale
STRING ENUM SET                                            2      b0 << 8 | b1 (STRING rule
                                                                  in make_column)
TYPED_ARRAY                                                1 + k  inner type << 16 | inner
                                                                  meta (k bytes of the inner
                                                                  type); not decodable
=========================================================  =====  ==========================
"""
from __future__ import annotations

from ..column import Column
from ..constants import LEGACY_TEMPORAL_TYPES, ColumnType as T
from ..errors import MalformedEventError, UnsupportedTypeError


def _zero(cur) -> int:
    return 0


def _one(cur) -> int:
    return cur.u8("column metadata")


def _two_le(cur) -> int:
    return cur.u16("column metadata")


def _two_be(cur) -> int:
    return cur.uint_be(2, "column metadata")


def _typed_array(cur) -> int:
    inner = cur.u8("typed array element type")
    reader = METADATA_READERS.get(inner)
    if reader is None or inner == T.TYPED_ARRAY:
        raise UnsupportedTypeError(f"typed array of unknown column type {inner}")
    return inner << 16 | reader(cur)


class _Readers(dict):
    """dict whose missing keys raise UnsupportedTypeError (``.get`` still returns None)."""

    def __missing__(self, key):
        raise UnsupportedTypeError(f"unknown column type {key} in TABLE_MAP")


METADATA_READERS = {
    T.DECIMAL: _zero, T.TINY: _zero, T.SHORT: _zero, T.LONG: _zero, T.NULL: _zero,
    T.TIMESTAMP: _zero, T.LONGLONG: _zero, T.INT24: _zero, T.DATE: _zero, T.TIME: _zero,
    T.DATETIME: _zero, T.YEAR: _zero, T.NEWDATE: _zero, T.BOOL: _zero, T.INVALID: _zero,
    T.FLOAT: _one, T.DOUBLE: _one,
    T.TIMESTAMP2: _one, T.DATETIME2: _one, T.TIME2: _one,
    T.TINY_BLOB: _one, T.MEDIUM_BLOB: _one, T.LONG_BLOB: _one, T.BLOB: _one,
    T.GEOMETRY: _one, T.JSON: _one, T.VECTOR: _one, T.BLOB_COMPRESSED: _one,
    T.VARCHAR: _two_le, T.VAR_STRING: _two_le, T.VARCHAR_COMPRESSED: _two_le, T.BIT: _two_le,
    T.NEWDECIMAL: _two_be, T.STRING: _two_be, T.ENUM: _two_be, T.SET: _two_be,
    T.TYPED_ARRAY: _typed_array,
}
METADATA_READERS = _Readers({int(k): v for k, v in METADATA_READERS.items()})

_KNOWN = frozenset(int(t) for t in T)
_PREFIX_TYPES = frozenset({T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB, T.GEOMETRY, T.JSON,
                           T.VECTOR, T.BLOB_COMPRESSED})
_FSP_TYPES = frozenset({T.TIMESTAMP2, T.DATETIME2, T.TIME2})


def string_real_type(meta: int) -> tuple[int, int]:
    """STRING (254) metadata -> (real type, length) per sql/log_event_client.cc.

    b0 = meta >> 8, b1 = meta & 0xFF.  If (b0 & 0x30) != 0x30 the length is over 255:
    real = b0 | 0x30 and length = b1 | (((b0 & 0x30) ^ 0x30) << 4); else real = b0 and
    length = b1.  For ENUM/SET the length is the pack length."""
    b0, b1 = meta >> 8, meta & 0xFF
    if (b0 & 0x30) != 0x30:
        return b0 | 0x30, b1 | (((b0 & 0x30) ^ 0x30) << 4)
    return b0, b1


def make_column(index: int, binlog_type: int, meta: int) -> Column:
    """Column from one TABLE_MAP entry (type byte + metadata int from METADATA_READERS).

    type: STRING is remapped to ENUM/SET/STRING by its metadata, everything else keeps
    its binlog type.  length: VARCHAR/VAR_STRING/VARCHAR_COMPRESSED/STRING max bytes;
    ENUM/SET pack length; BLOB/GEOMETRY/JSON/VECTOR/BLOB_COMPRESSED length-prefix size;
    FLOAT/DOUBLE pack length; BIT value bytes (precision = number of bits).
    precision: fsp for 17/18/19, None for legacy 7/12/11 (not in the binlog), digits for
    NEWDECIMAL (with scale)."""
    if binlog_type not in _KNOWN:
        raise UnsupportedTypeError(f"unknown column type {binlog_type}")
    col = Column(index=index, binlog_type=binlog_type, type=binlog_type, meta=meta)
    t = binlog_type
    if t == T.STRING:
        real, length = string_real_type(meta)
        if real in (T.ENUM, T.SET):
            col.type, col.length = real, meta & 0xFF
        elif real == T.STRING:
            col.length = length
        else:
            raise MalformedEventError(f"STRING column metadata 0x{meta:04x} names type {real}")
    elif t in (T.ENUM, T.SET):
        col.length = meta & 0xFF
    elif t in (T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED):
        col.length = meta
    elif t in _PREFIX_TYPES:
        if not 1 <= meta <= 4:
            raise MalformedEventError(f"column type {t}: invalid length-prefix size {meta}")
        col.length = meta
    elif t in _FSP_TYPES:
        if meta > 6:
            raise MalformedEventError(f"column type {t}: invalid fractional precision {meta}")
        col.precision = meta
    elif t == T.NEWDECIMAL:
        col.precision, col.scale = meta >> 8, meta & 0xFF
        if not (0 < col.precision <= 65 and col.scale <= 30 and col.scale <= col.precision):
            raise MalformedEventError(f"invalid DECIMAL({col.precision},{col.scale}) metadata")
    elif t == T.BIT:
        nbytes, bits = meta >> 8, meta & 0xFF
        # BIT(M) has M <= 64 (sql/field.h Field_bit; the server refuses more): a larger
        # M is damage, and its values would not fit the 64-bit integers of the outputs
        if bits > 7 or nbytes * 8 + bits > 64:
            raise MalformedEventError(f"invalid BIT metadata 0x{meta:04x}")
        col.length = nbytes + (1 if bits else 0)
        col.precision = nbytes * 8 + bits
    elif t in (T.FLOAT, T.DOUBLE):
        col.length = meta
    elif t in LEGACY_TEMPORAL_TYPES:
        col.precision = None
    return col
