"""Column-value decoders, TABLE_MAP metadata readers and the tables that pick them.

A decoder is ``decode(buf, pos, end, col) -> (value, new_pos)`` (binlog/column.py).
Metadata readers and value decoders are two tables keyed by the same type code
(docs/style.md); get a column's decoder with ``decoder_for(col)``, which also handles
the legacy TIMESTAMP/DATETIME/TIME columns whose precision the binlog does not carry.

Values: ints (honouring col.unsigned); float for FLOAT/DOUBLE; decimal.Decimal for
NEWDECIMAL; int for YEAR and BIT; str for DATE, DATETIME*, TIMESTAMP* and TIME* (see
temporal.py); str or bytes for text/binary columns (str when col.encoding is set); ENUM
label or int index; SET 'a,c' or int bitmask; parsed JSON; bytes for GEOMETRY; list of
floats for VECTOR.
"""
from __future__ import annotations

from typing import Any, Callable

from ..column import Column
from ..constants import ColumnType as T
from ..errors import MalformedEventError, PrecisionUnknownError, UnsupportedTypeError
from .bit import decode_bit
from .decimal import decimal_from_bin, decode_newdecimal
from .ints import (
    decode_double,
    decode_float,
    decode_int24,
    decode_long,
    decode_longlong,
    decode_null,
    decode_short,
    decode_tiny,
    decode_year,
)
from .json_binary import (
    JsonDiff,
    apply_json_diffs,
    decode_json,
    decode_json_diffs,
    parse_json_binary,
    parse_json_diffs,
    parse_json_path,
)
from .metadata import METADATA_READERS, make_column, string_real_type
from .strings import (
    decode_blob,
    decode_blob_compressed,
    decode_enum,
    decode_geometry,
    decode_set,
    decode_string,
    decode_varchar,
    decode_varchar_compressed,
    decode_vector,
    uncompress_column,
)
from .temporal import (
    decode_date,
    decode_datetime0,
    decode_datetime2,
    decode_datetime_hires,
    decode_time0,
    decode_time2,
    decode_time_hires,
    decode_timestamp0,
    decode_timestamp2,
    decode_timestamp_hires,
    encode_date,
    encode_datetime0,
    encode_datetime2,
    encode_datetime_hires,
    encode_time0,
    encode_time2,
    encode_time_hires,
    encode_timestamp0,
    encode_timestamp2,
    encode_timestamp_hires,
    transcode_datetime,
    transcode_time,
    transcode_timestamp,
)

Decoder = Callable[[bytes, int, int, Column], tuple[object, int]]
Encoder = Callable[[Any, Column], bytes]

COLUMN_DECODERS: dict[int, Decoder] = {int(k): v for k, v in {
    T.TINY: decode_tiny, T.SHORT: decode_short, T.INT24: decode_int24, T.LONG: decode_long,
    T.LONGLONG: decode_longlong, T.FLOAT: decode_float, T.DOUBLE: decode_double,
    T.NULL: decode_null, T.YEAR: decode_year, T.DATE: decode_date,
    T.TIMESTAMP: decode_timestamp0, T.DATETIME: decode_datetime0, T.TIME: decode_time0,
    T.TIMESTAMP2: decode_timestamp2, T.DATETIME2: decode_datetime2, T.TIME2: decode_time2,
    T.NEWDECIMAL: decode_newdecimal, T.BIT: decode_bit,
    T.VARCHAR: decode_varchar, T.VAR_STRING: decode_varchar, T.STRING: decode_string,
    T.TINY_BLOB: decode_blob, T.MEDIUM_BLOB: decode_blob, T.LONG_BLOB: decode_blob,
    T.BLOB: decode_blob,
    T.BLOB_COMPRESSED: decode_blob_compressed, T.VARCHAR_COMPRESSED: decode_varchar_compressed,
    T.ENUM: decode_enum, T.SET: decode_set,
    T.JSON: decode_json, T.GEOMETRY: decode_geometry, T.VECTOR: decode_vector,
}.items()}

# MariaDB 5.3 "hires" legacy temporals, N = col.precision in 1..6.
LEGACY_HIRES_DECODERS: dict[int, Decoder] = {
    int(T.TIMESTAMP): decode_timestamp_hires,
    int(T.DATETIME): decode_datetime_hires,
    int(T.TIME): decode_time_hires,
}

# Encoders, the mirror of the decoders: ``encode(value, col) -> bytes`` takes what the
# decoder of the same type code gives and writes the server's bytes for it (the types
# ``binlog rewrite`` writes or reads back; see temporal.py).
COLUMN_ENCODERS: dict[int, Encoder] = {int(k): v for k, v in {
    T.DATE: encode_date,
    T.TIMESTAMP: encode_timestamp0, T.DATETIME: encode_datetime0, T.TIME: encode_time0,
    T.TIMESTAMP2: encode_timestamp2, T.DATETIME2: encode_datetime2, T.TIME2: encode_time2,
}.items()}

LEGACY_HIRES_ENCODERS: dict[int, Encoder] = {
    int(T.TIMESTAMP): encode_timestamp_hires,
    int(T.DATETIME): encode_datetime_hires,
    int(T.TIME): encode_time_hires,
}

# Legacy bytes straight to the *2 bytes of the same value and precision:
# ``transcode(buf, pos, end, n) -> (bytes, new_pos)`` = the legacy decoder then the *2
# encoder, without the text between them (binlog rewrite).
LEGACY_TRANSCODERS = {
    int(T.TIMESTAMP): transcode_timestamp,
    int(T.DATETIME): transcode_datetime,
    int(T.TIME): transcode_time,
}

_NAMES = {int(T.TIMESTAMP): "TIMESTAMP", int(T.DATETIME): "DATETIME", int(T.TIME): "TIME"}


def decoder_for(col: Column) -> Decoder:
    """The decoder for a fully described column (type, metadata, precision)."""
    t = col.type
    if t in LEGACY_HIRES_DECODERS:
        n = col.precision
        if n is None:
            raise PrecisionUnknownError(
                f"precision of a legacy MariaDB {_NAMES[t]} column is not recorded in the binlog")
        if n == 0:
            return COLUMN_DECODERS[t]
        if 1 <= n <= 6:
            return LEGACY_HIRES_DECODERS[t]
        raise MalformedEventError(f"invalid fractional precision {n} for {_NAMES[t]}")
    decoder = COLUMN_DECODERS.get(t)
    if decoder is None:
        if t == T.DECIMAL:
            raise UnsupportedTypeError("pre-5.0 DECIMAL (type 0) columns cannot be decoded")
        raise UnsupportedTypeError(f"no decoder for column type {t}")
    return decoder


def encoder_for(col: Column) -> Encoder:
    """The encoder for a fully described column (legacy 7/12/11: by its precision)."""
    t = col.type
    if t in LEGACY_HIRES_ENCODERS and col.precision:
        return LEGACY_HIRES_ENCODERS[t]
    encoder = COLUMN_ENCODERS.get(t)
    if encoder is None:
        raise UnsupportedTypeError(f"no encoder for column type {t}")
    return encoder


__all__ = [
    "COLUMN_DECODERS", "COLUMN_ENCODERS", "Encoder", "LEGACY_HIRES_ENCODERS", "LEGACY_TRANSCODERS",
    "encoder_for", "LEGACY_HIRES_DECODERS", "METADATA_READERS", "Decoder", "JsonDiff",
    "apply_json_diffs", "decimal_from_bin", "decode_json_diffs", "decoder_for", "make_column",
    "parse_json_binary", "parse_json_diffs", "parse_json_path", "string_real_type",
    "uncompress_column",
]
