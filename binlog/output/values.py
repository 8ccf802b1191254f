"""Rendering decoded values for output (docs/output-formats.md: the JSON record).

The helpers the JSON and text outputs share live here, below them.  A column's charset
(``charsets.charset_of``) and MySQL's text form of a JSON value (``types.json_binary.
json_text``) live lower still: the row checksums use them and sit below the outputs.
"""
from __future__ import annotations

import base64
from datetime import datetime, timezone
from decimal import Decimal
from typing import Iterator

from ..types.strings import LARGE_VALUE, LargeText


class HexBytes:
    """Renders bytes as hex; ``tag`` names the key of the raw-bytes object that text of
    an unknown charset is given as (``{"bytes_hex": "68e9"}``)."""
    tag = "bytes_hex"

    def __call__(self, raw: bytes) -> str:
        return raw.hex()


class Base64Bytes:
    """Renders bytes as base64 (``{"bytes_base64": ...}`` for text of unknown charset)."""
    tag = "bytes_base64"

    def __call__(self, raw: bytes) -> str:
        return base64.b64encode(raw).decode("ascii")


def bytes_renderer(encoding: str = "hex") -> HexBytes | Base64Bytes:
    """bytes -> str in the --binary-encoding (``.tag``: see HexBytes)."""
    return Base64Bytes() if encoding == "base64" else HexBytes()


def render_row(row: dict | None, plan, render_bytes) -> dict | None:
    """JSON-ready copy of a row: bytes of binary columns as hex/base64; bytes of character
    columns whose charset neither the binlog nor the schema gives as a raw-bytes object
    ``{"bytes_hex": ...}`` (never a bare string: a consumer could not tell hex from text
    that is hex digits); DECIMAL as exact digits.  Only the columns whose type can hold
    such values are looked at."""
    if row is None:
        return None
    keys = _render_keys(plan)
    if not keys:
        return row       # DECIMAL and partial JSON are left to json_default
    out = dict(row)
    for key, col in keys:
        value = out.get(key)
        if value is None:
            continue
        if isinstance(value, (bytes, bytearray, memoryview)):     # (views: large BLOBs)
            out[key] = _render_bytes(value, col, render_bytes)
        elif isinstance(value, Decimal):
            out[key] = format(value, "f")   # exact digits, never exponent form (0E-30)
        elif hasattr(value, "as_json"):
            out[key] = value.as_json()
    return out


# Types whose decoded values are never bytes; DECIMAL (246) and MySQL JSON (245) are
# rendered by json_default (orjson calls it for Decimal and PartialJson values).
_PLAIN_TYPES = frozenset({1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 245, 246,
                          247, 248})


def _render_keys(plan) -> tuple:
    keys = getattr(plan, "_render_keys", None)
    if keys is None:
        keys = tuple((c.key, c) for c in plan.columns
                     if c.type not in _PLAIN_TYPES and not (c.encoding and c.type in _TEXT_TYPES))
        plan._render_keys = keys
    return keys


# Text columns with a known codec decode to str.
_TEXT_TYPES = frozenset({15, 253, 254, 252, 249, 250, 251, 140, 141})


class RawBytes(dict):
    """The output form of text whose charset is unknown: ``{"bytes_hex": "68e9"}`` (or
    ``bytes_base64``).  A dict, so every JSON writer prints it as that object; its own
    type, so the text format can tell it from a JSON column's value."""


def _render_bytes(value, col, render_bytes):
    if col is not None and col.charset_unknown:
        return RawBytes({getattr(render_bytes, "tag", "bytes_hex"): render_bytes(bytes(value))})
    return render_bytes(bytes(value))


def json_default(value):
    if isinstance(value, Decimal):
        return format(value, "f")
    if hasattr(value, "as_json"):
        return value.as_json()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, LargeText):     # where no piece writer takes it (e.g. a CDC key)
        return value.text()
    raise TypeError(f"cannot render {type(value).__name__}")


def iso_ts(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")




def is_large(value) -> bool:
    """A value the writers write in pieces: binary of LARGE_VALUE bytes or more, or a
    LargeText (``types.strings.LARGE_VIEWS``)."""
    return isinstance(value, (bytes, bytearray, memoryview, LargeText)) and len(value) >= LARGE_VALUE


def large_values(row, plan) -> list:
    """(key, column) of the values of ``row`` that ``is_large``."""
    if row is None:
        return []
    found = [(key, col) for key, col in _render_keys(plan)
             if isinstance(row.get(key), (bytes, bytearray, memoryview)) and len(row[key]) >= LARGE_VALUE]
    found += [(key, plan.column_by_key(key)) for key, value in row.items() if value.__class__ is LargeText]
    return found


#: Raw bytes per piece of a large binary value: a multiple of 3, so base64 pieces join.
BYTES_PIECE = 3 << 18


def bytes_pieces(value, render_bytes, piece: int = BYTES_PIECE) -> Iterator[bytes]:
    """``render_bytes(value)`` (hex or base64) of a large binary value, in pieces: the
    pieces join into the whole's text."""
    view = memoryview(value).cast("B")
    encode = base64.b64encode if getattr(render_bytes, "tag", "") == "bytes_base64" else bytes.hex
    for i in range(0, len(view), piece):
        out = encode(bytes(view[i:i + piece]))
        yield out if isinstance(out, bytes) else out.encode("ascii")
