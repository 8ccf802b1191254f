"""MySQL binary JSON (type 245) and the JSON diffs of PARTIAL_UPDATE_ROWS_EVENT.

Binary JSON (mysql-server sql-common/json_binary.cc, parse_binary / parse_value):
a document is one type byte and the value.  Types: 0/1 small/large object, 2/3
small/large array, 4 literal (0 null, 1 true, 2 false), 5 int16, 6 uint16, 7 int32,
8 uint32, 9 int64, 10 uint64, 11 double, 12 string, 15 opaque.
- Object/array: element count and byte size (2 bytes small, 4 large, LE); an object then
  has count key entries (offset, u16 length); then count value entries (type byte +
  offset, or the value inlined for literal/int16/uint16, and int32/uint32 in the large
  format); offsets are relative to the start of the object/array (after its type byte).
- String: a variable-length length (7 bits a byte, low bits first, at most 5 bytes), then
  utf8mb4 bytes.  Opaque: a MySQL field-type byte, a variable length, the data.
An empty document is JSON null (parse_binary).

Opaque values are rendered as MySQL's JSON output does (sql-common/json_dom.cc): DATE as
'YYYY-MM-DD', DATETIME/TIMESTAMP as 'YYYY-MM-DD hh:mm:ss.ffffff', TIME as
'[-]hh:mm:ss.ffffff' (data: int64 LE packed, TIME_from_longlong_*_packed); NEWDECIMAL as
decimal.Decimal (data: precision byte, scale byte, decimal2bin); anything else as
'base64:typeNN:<base64 of the data>'.

JSON diffs (mysql-server sql/json_diff.cc Json_diff_vector::write_binary / read_binary):
u32 LE byte length of what follows, then diffs until it is used up: u8 operation
(0 REPLACE, 1 INSERT, 2 REMOVE), packed-integer path length + path text, and for
non-REMOVE a packed-integer value length + binary JSON value.
"""
from __future__ import annotations

import base64
import copy
import json
from decimal import Decimal
from typing import NamedTuple

from ..constants import ColumnType
from ._common import F64, I16, I32, I64, U16, U32, U64, malformed, read_length, truncated
from .decimal import decimal_from_bin, decimal_layout

MAX_DEPTH = 100

_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY = 0, 1, 2, 3
_LITERAL, _INT16, _UINT16, _INT32, _UINT32, _INT64, _UINT64, _DOUBLE, _STRING = range(4, 13)
_OPAQUE = 15


_SCALAR_SIZE = {_INT16: 2, _UINT16: 2, _INT32: 4, _UINT32: 4, _INT64: 8, _UINT64: 8, _DOUBLE: 8}
_SCALAR_STRUCT = {_INT16: I16, _UINT16: U16, _INT32: I32, _UINT32: U32, _INT64: I64,
                  _UINT64: U64, _DOUBLE: F64}


def parse_json_binary(data: bytes) -> object:
    """Binary JSON document -> dict/list/str/int/float/bool/None/Decimal."""
    data = bytes(data)
    if not data:
        return None
    # Every value of a well-formed document has bytes of its own, so a document never
    # holds more values than bytes; entries sharing one offset could otherwise make a
    # few hundred bytes expand to 2**depth values.
    budget = [len(data)]
    return _value(data, data[0], 1, len(data), 0, budget)


def _varlen(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """read_variable_length: up to 5 bytes, 7 bits each, low bits first."""
    length = 0
    for i in range(5):
        if pos + i >= end:
            raise malformed(f"JSON {what} length runs past its value")
        b = data[pos + i]
        length |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if length > 0xFFFFFFFF:
                break
            return length, pos + i + 1
    raise malformed(f"ill-formed JSON {what} length")


def _value(data: bytes, vtype: int, pos: int, end: int, depth: int, budget: list):
    if vtype <= _LARGE_ARRAY:
        if depth >= MAX_DEPTH:
            raise malformed(f"JSON document nested deeper than {MAX_DEPTH} levels")
        return _container(data, vtype, pos, end, depth + 1, budget)
    if vtype == _LITERAL:
        if pos >= end:
            raise malformed("JSON literal runs past its value")
        return _literal(data[pos])
    size = _SCALAR_SIZE.get(vtype)
    if size is not None:
        if end - pos < size:
            raise malformed("JSON number runs past its value")
        return _SCALAR_STRUCT[vtype].unpack_from(data, pos)[0]
    if vtype == _STRING:
        n, pos = _varlen(data, pos, end, "string")
        if end - pos < n:
            raise malformed("JSON string runs past its value")
        try:
            return data[pos:pos + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise malformed(f"JSON string is not valid utf8mb4: {exc}") from exc
    if vtype == _OPAQUE:
        if pos >= end:
            raise malformed("JSON opaque value runs past its value")
        field_type = data[pos]
        n, pos = _varlen(data, pos + 1, end, "opaque")
        if end - pos < n:
            raise malformed("JSON opaque value runs past its value")
        return _opaque(field_type, data[pos:pos + n])
    raise malformed(f"unknown JSON value type {vtype}")


def _literal(b: int):
    if b == 0:
        return None
    if b == 1:
        return True
    if b == 2:
        return False
    raise malformed(f"unknown JSON literal {b}")


def _container(data: bytes, vtype: int, start: int, end: int, depth: int, budget: list):
    large = vtype in (_LARGE_OBJECT, _LARGE_ARRAY)
    is_object = vtype in (_SMALL_OBJECT, _LARGE_OBJECT)
    osize = 4 if large else 2
    off = U32 if large else U16
    if end - start < 2 * osize:
        raise malformed("JSON object/array header runs past its value")
    count = off.unpack_from(data, start)[0]
    nbytes = off.unpack_from(data, start + osize)[0]
    if nbytes > end - start:
        raise malformed(f"JSON object/array of {nbytes} bytes overruns its {end - start}")
    cend = start + nbytes
    key_entry = osize + 2
    value_entry = 1 + osize
    header = 2 * osize + (count * key_entry if is_object else 0) + count * value_entry
    if header > nbytes:
        raise malformed("JSON object/array header larger than the value")
    ventries = start + 2 * osize + (count * key_entry if is_object else 0)
    budget[0] -= count
    if budget[0] < 0:
        raise malformed("JSON value offsets overlap: the document holds more values than bytes")
    values = []
    for i in range(count):
        e = ventries + i * value_entry
        etype = data[e]
        if etype == _LITERAL:
            values.append(_literal(data[e + 1]))
        elif etype == _INT16:
            values.append(I16.unpack_from(data, e + 1)[0])
        elif etype == _UINT16:
            values.append(U16.unpack_from(data, e + 1)[0])
        elif large and etype == _INT32:
            values.append(I32.unpack_from(data, e + 1)[0])
        elif large and etype == _UINT32:
            values.append(U32.unpack_from(data, e + 1)[0])
        else:
            voff = off.unpack_from(data, e + 1)[0]
            if voff < header or voff >= nbytes:
                raise malformed(f"JSON value offset {voff} outside its object/array")
            values.append(_value(data, etype, start + voff, cend, depth, budget))
    if not is_object:
        return values
    result = {}
    for i in range(count):
        e = start + 2 * osize + i * key_entry
        koff = off.unpack_from(data, e)[0]
        klen = U16.unpack_from(data, e + osize)[0]
        if koff < header or koff + klen > nbytes:
            raise malformed(f"JSON key offset {koff} outside its object")
        try:
            key = data[start + koff:start + koff + klen].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise malformed(f"JSON key is not valid utf8mb4: {exc}") from exc
        result[key] = values[i]
    return result


# --- opaque values ------------------------------------------------------------------------

_DATE_TYPES = (ColumnType.DATE, ColumnType.NEWDATE)
_DATETIME_TYPES = (ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.DATETIME2,
                   ColumnType.TIMESTAMP2)
_TIME_TYPES = (ColumnType.TIME, ColumnType.TIME2)


def _opaque(field_type: int, data: bytes):
    if field_type == ColumnType.NEWDECIMAL:
        if len(data) < 2:
            raise malformed("JSON DECIMAL value too short")
        precision, scale = data[0], data[1]
        size = decimal_layout(precision, scale)[0]
        if len(data) - 2 < size:
            raise malformed("JSON DECIMAL value too short")
        return decimal_from_bin(data[2:2 + size], precision, scale)
    if field_type in _DATE_TYPES or field_type in _DATETIME_TYPES or field_type in _TIME_TYPES:
        if len(data) < 8:
            raise malformed("JSON temporal value too short")
        packed = I64.unpack_from(data, 0)[0]
        negative = packed < 0
        if negative:
            packed = -packed
        usec = packed & 0xFFFFFF
        if field_type in _TIME_TYPES:
            hms = packed >> 24
            return (f"{'-' if negative else ''}{(hms >> 12) & 0x3FF:02d}:{(hms >> 6) & 63:02d}:"
                    f"{hms & 63:02d}.{usec:06d}")
        ymdhms = packed >> 24
        ymd = ymdhms >> 17
        ym = ymd >> 5
        hms = ymdhms & 0x1FFFF
        text = f"{ym // 13:04d}-{ym % 13:02d}-{ymd & 31:02d}"
        if field_type in _DATE_TYPES:
            return text
        return f"{text} {hms >> 12:02d}:{(hms >> 6) & 63:02d}:{hms & 63:02d}.{usec:06d}"
    return f"base64:type{field_type}:{base64.b64encode(data).decode('ascii')}"


# --- column decoder -----------------------------------------------------------------------

def decode_json(buf, pos, end, col):
    """u{meta} LE length, then binary JSON; an empty value is JSON null."""
    n, pos = read_length(buf, pos, end, col.length or 4, "JSON")
    if end - pos < n:
        raise truncated(n, "JSON", end - pos)
    return parse_json_binary(buf[pos:pos + n]), pos + n


# --- JSON diffs (PARTIAL_UPDATE_ROWS_EVENT) -----------------------------------------------

REPLACE, INSERT, REMOVE = 0, 1, 2
OPERATION_NAMES = ("REPLACE", "INSERT", "REMOVE")


class JsonDiff(NamedTuple):
    operation: int          # REPLACE / INSERT / REMOVE
    path: str               # as written by the server, e.g. '$.a[1]."x y"'
    value: object = None    # parsed binary JSON; None for REMOVE

    @property
    def operation_name(self) -> str:
        return OPERATION_NAMES[self.operation]


def _packed(buf, pos: int, end: int, what: str) -> tuple[int, int]:
    if end - pos < 1:
        raise truncated(1, what, end - pos)
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if size is None:
        raise malformed(f"invalid packed integer prefix 0x{first:02x} in {what}")
    if end - pos - 1 < size:
        raise truncated(size + 1, what, end - pos)
    return int.from_bytes(buf[pos + 1:pos + 1 + size], "little"), pos + 1 + size


def decode_json_diffs(buf, pos, end, col=None) -> tuple[list[JsonDiff], int]:
    """Decoder-style: the diff vector of a partially updated JSON column -> (diffs, new_pos)."""
    if end - pos < 4:
        raise truncated(4, "JSON diff length", end - pos)
    length = int.from_bytes(buf[pos:pos + 4], "little")
    pos += 4
    if end - pos < length:
        raise truncated(length, "JSON diffs", end - pos)
    stop = pos + length
    diffs = []
    while pos < stop:
        op = buf[pos]
        pos += 1
        if op > REMOVE:
            raise malformed(f"unknown JSON diff operation {op}")
        n, pos = _packed(buf, pos, stop, "JSON diff path length")
        if stop - pos < n:
            raise truncated(n, "JSON diff path", stop - pos)
        try:
            path = bytes(buf[pos:pos + n]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise malformed(f"JSON diff path is not valid utf8mb4: {exc}") from exc
        parse_json_path(path)  # validate now, as the server does
        pos += n
        value = None
        if op != REMOVE:
            n, pos = _packed(buf, pos, stop, "JSON diff value length")
            if stop - pos < n:
                raise truncated(n, "JSON diff value", stop - pos)
            value = parse_json_binary(buf[pos:pos + n])
            pos += n
        diffs.append(JsonDiff(op, path, value))
    return diffs, pos


def parse_json_diffs(buf, pos: int, end: int) -> list[JsonDiff]:
    """The diffs of one partially updated JSON column starting at buf[pos] (see
    decode_json_diffs for the end position)."""
    return decode_json_diffs(buf, pos, end)[0]


def parse_json_path(path: str) -> list:
    """'$.a[1]."x y"[last-1]' -> ['a', 1, 'x y', ('last', 1)]: str member names, int array
    cells, ('last', n) for `last` / `last-n`.  Wildcards and ranges are rejected."""
    s = path.strip()
    if not s.startswith("$"):
        raise malformed(f"JSON path {path!r} does not start with $")
    legs: list = []
    i, n = 1, len(s)
    while i < n:
        c = s[i]
        if c.isspace():
            i += 1
        elif c == ".":
            i += 1
            while i < n and s[i].isspace():
                i += 1
            if i < n and s[i] == '"':
                j = i + 1
                while j < n and s[j] != '"':
                    j += 2 if s[j] == "\\" else 1
                if j >= n:
                    raise malformed(f"unterminated member name in JSON path {path!r}")
                try:
                    legs.append(json.loads(s[i:j + 1]))
                except ValueError as exc:
                    raise malformed(f"bad member name in JSON path {path!r}") from exc
                i = j + 1
            else:
                j = i
                while j < n and s[j] not in '.[' and not s[j].isspace():
                    j += 1
                name = s[i:j]
                if not name or name == "*":
                    raise malformed(f"unsupported member leg in JSON path {path!r}")
                legs.append(name)
                i = j
        elif c == "[":
            j = s.find("]", i)
            if j < 0:
                raise malformed(f"unterminated array leg in JSON path {path!r}")
            inner = s[i + 1:j].replace(" ", "")
            if inner.isdigit():
                legs.append(int(inner))
            elif inner == "last":
                legs.append(("last", 0))
            elif inner.startswith("last-") and inner[5:].isdigit():
                legs.append(("last", int(inner[5:])))
            else:
                raise malformed(f"unsupported array leg [{inner}] in JSON path {path!r}")
            i = j + 1
        else:
            raise malformed(f"unexpected {c!r} in JSON path {path!r}")
    return legs


def _index(leg, size: int) -> int:
    if isinstance(leg, tuple):
        return size - 1 - leg[1]
    return leg


def _seek(doc, legs):
    for leg in legs:
        if isinstance(doc, dict) and isinstance(leg, str):
            if leg not in doc:
                return None, False
            doc = doc[leg]
        elif isinstance(doc, list) and not isinstance(leg, str):
            k = _index(leg, len(doc))
            if not 0 <= k < len(doc):
                return None, False
            doc = doc[k]
        else:
            return None, False
    return doc, True


def apply_json_diffs(doc, diffs) -> object:
    """Apply diffs to a copy of doc as sql/json_diff.cc apply_json_diffs does; a diff the
    server would reject (path not found, key already present) raises MalformedEventError."""
    doc = copy.deepcopy(doc)
    for diff in diffs:
        op, path, value = diff[0], diff[1], diff[2] if len(diff) > 2 else None
        legs = parse_json_path(path)
        if not legs:
            raise malformed(f"JSON diff on the document root ({path!r})")
        parent, found = _seek(doc, legs[:-1])
        last = legs[-1]
        if not found:
            raise malformed(f"JSON diff path {path!r} not found in the document")
        if op == REPLACE:
            if isinstance(parent, dict) and isinstance(last, str) and last in parent:
                parent[last] = copy.deepcopy(value)
                continue
            if isinstance(parent, list) and not isinstance(last, str):
                k = _index(last, len(parent))
                if 0 <= k < len(parent):
                    parent[k] = copy.deepcopy(value)
                    continue
            raise malformed(f"JSON diff REPLACE path {path!r} not found in the document")
        if op == INSERT:
            if isinstance(parent, dict) and isinstance(last, str):
                if last in parent:
                    raise malformed(f"JSON diff INSERT of existing member {path!r}")
                parent[last] = copy.deepcopy(value)
                continue
            if isinstance(parent, list) and not isinstance(last, str):
                k = min(max(_index(last, len(parent)), 0), len(parent))
                parent.insert(k, copy.deepcopy(value))
                continue
            raise malformed(f"JSON diff INSERT path {path!r} does not fit the document")
        if op == REMOVE:
            if isinstance(parent, dict) and isinstance(last, str) and last in parent:
                del parent[last]
                continue
            if isinstance(parent, list) and not isinstance(last, str):
                k = _index(last, len(parent))
                if 0 <= k < len(parent):
                    del parent[k]
                    continue
            raise malformed(f"JSON diff REMOVE path {path!r} not found in the document")
        raise malformed(f"unknown JSON diff operation {op}")
    return doc


def json_text(value) -> str:
    """MySQL's own text form of a JSON value (``{"a": 1, "b": [1, 2]}``): the outputs and
    the row checksums render a decoded JSON column with it."""
    def default(v):
        if isinstance(v, Decimal):
            return float(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v).decode("utf-8", "replace")
        return str(v)

    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=default)
