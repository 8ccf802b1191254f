"""Character and binary columns: VARCHAR (15), VAR_STRING (253), CHAR/BINARY (254),
BLOB/TEXT (249-252), and MariaDB's compressed BLOB_COMPRESSED (140) / VARCHAR_COMPRESSED (141).

Row images (sql/field.cc Field_varstring::pack, Field_string::pack, Field_blob::pack):
- VARCHAR: 1-byte length if col.length (max bytes, the metadata) <= 255, else 2-byte LE.
- CHAR/BINARY: 1-byte length, 2-byte LE when col.length > 255; the server already
  stripped trailing pad, so the bytes are returned as they are.
- BLOB: LE length in col.length (= metadata, 1..4) bytes.
The value is ``str`` when col.encoding is set (strict decode; failure is a
MalformedEventError naming the charset), else ``bytes``.

Compressed columns (MariaDB sql/field_comp.cc, Field_longstr::uncompress) are framed like
BLOB / VARCHAR; the payload is empty for '' or starts with one header byte:
- 0x00: the rest is the value, stored uncompressed;
- bit 7 set, bits 4-7 the method (8 = zlib, the only one), bit 3 set = raw deflate
  (column_compression_zlib_wrap=OFF, the default) else a zlib stream, bits 0-2 = n:
  then the original length as n bytes big-endian, then the deflate data.
VARCHAR_COMPRESSED metadata is the field length + 1 (the header byte).
"""
from __future__ import annotations

import codecs
import struct
import zlib
from contextvars import ContextVar
from typing import Iterator

from ..charsets import COLLATIONS
from ..compression import MAX_UNCOMPRESSED
from ..constants import BINARY_COLLATION
from ._common import malformed, read_framed, read_length, truncated

#: Binary BLOB values at least this large are given as a read-only ``memoryview`` of the
#: rows data instead of a copy, so a 200 MiB LONGBLOB exists once in memory, not as the
#: inflated event *and* its value; text ones as a ``LargeText`` (the same
#: view and its codec).  None (the default): always ``bytes`` / ``str``.
#: Set by the outputs that write large values in pieces (``binlog dump --format json|sql``,
#: ``--checksum``): every other consumer keeps getting ``bytes``.
LARGE_VIEWS: ContextVar[int | None] = ContextVar("binlog_large_blob_views", default=None)

#: A binary or text value at least this large is written in pieces, never rendered whole
#: (the JSON, text and SQL writers) nor encoded whole (the checksums): a 200 MiB LONGBLOB
#: would otherwise be held as bytes, hex text and JSON bytes at once
#: (docs/troubleshooting.md "Hostile content: limits").  ``binlog dump`` sets
#: ``LARGE_VIEWS`` to it for the writers that take pieces.  binlog/_speedups.h says it
#: again (tests/binlog/test_c_constants.py holds the two together).
LARGE_VALUE = 1 << 20


#: Characters' bytes decoded at a time by ``LargeText`` (a multi-byte character cut at a
#: piece's end is carried into the next by the incremental decoder).
TEXT_PIECE = 1 << 20


class LargeText:
    """A text value of ``LARGE_VIEWS`` bytes or more (MEDIUM/LONGTEXT, a compressed TEXT):
    its bytes - a read-only view of the rows data, or the inflated column - and the
    column's codec, validated when decoded but never held as one ``str`` (a 200 MiB
    LONGTEXT would be the rows data *and* a str of up to 4x its size).
    The piece writers (``--format json|sql|flashback``, ``--checksum``) write it a piece
    at a time; ``text()`` gives the whole str to anything else."""

    __slots__ = ("data", "encoding")

    def __init__(self, data, encoding: str):
        self.data = data
        self.encoding = encoding

    def pieces(self, size: int = TEXT_PIECE) -> Iterator[str]:
        """The text as str pieces of about ``size`` bytes each (whole characters)."""
        decoder = codecs.getincrementaldecoder(self.encoding)("strict")
        view = memoryview(self.data)
        for i in range(0, len(view), size):
            piece = decoder.decode(view[i:i + size])
            if piece:
                yield piece
        tail = decoder.decode(b"", True)
        if tail:
            yield tail

    def isascii(self) -> bool:
        return all(piece.isascii() for piece in self.pieces())

    def text(self) -> str:
        return "".join(self.pieces())

    def __len__(self) -> int:
        """Bytes, not characters (the size that chose this form)."""
        return len(self.data)

    def __eq__(self, other) -> bool:
        if isinstance(other, LargeText):
            return self.encoding == other.encoding and self.data == other.data
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.encoding, len(self.data), bytes(self.data[:64]), bytes(self.data[-64:])))

    def __repr__(self) -> str:
        return f"LargeText({len(self.data)} bytes, {self.encoding})"


def large_text(data, col):
    """``data`` (a view or bytes of ``LARGE_VIEWS`` size) as a validated LargeText, or None
    when its codec cannot be decoded in pieces (then the caller decodes it whole)."""
    try:
        if codecs.lookup(col.encoding).incrementaldecoder is None:
            return None
    except LookupError:
        return None        # to_text raises the typed error naming the codec
    decoder = codecs.getincrementaldecoder(col.encoding)("strict")
    view = memoryview(data)
    at = 0
    try:
        for at in range(0, len(view), TEXT_PIECE):
            decoder.decode(view[at:at + TEXT_PIECE])
        decoder.decode(b"", True)
    except UnicodeDecodeError as exc:
        charset = COLLATIONS.get(col.collation, "unknown charset")
        raise malformed(f"bytes are not valid {charset} (collation {col.collation}, codec "
                        f"{col.encoding}): {exc.reason} in bytes {at}..{at + TEXT_PIECE} of a "
                        f"{len(view)}-byte value") from exc
    return LargeText(data, col.encoding)


def to_text(data: bytes, col):
    encoding = col.encoding
    if encoding is None:
        return data
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        charset = COLLATIONS.get(col.collation, "unknown charset")
        raise malformed(f"bytes are not valid {charset} (collation {col.collation}, "
                        f"codec {encoding}): {exc}") from exc


def decode_varchar(buf, pos, end, col):
    size = 1 if col.length <= 255 else 2
    data, pos = read_framed(buf, pos, end, size, "VARCHAR")
    if col.length and len(data) > col.length:
        raise malformed(f"VARCHAR value of {len(data)} bytes exceeds the column's {col.length}")
    return to_text(data, col), pos


def decode_string(buf, pos, end, col):
    size = 1 if col.length <= 255 else 2
    data, pos = read_framed(buf, pos, end, size, "CHAR")
    if col.length and len(data) > col.length:
        raise malformed(f"CHAR value of {len(data)} bytes exceeds the column's {col.length}")
    if col.collation == BINARY_COLLATION and len(data) < col.length:
        # BINARY(N) is stored padded with 0x00 to N bytes; Field_string::pack strips the
        # padding for the binlog, so put it back to give the value the server holds.
        data = bytes(data) + b"\0" * (col.length - len(data))
    return to_text(data, col), pos


def _prefix_size(col, what: str) -> int:
    size = col.length
    if not 1 <= size <= 4:
        raise malformed(f"invalid {what} length-prefix size {size}")
    return size


def decode_blob(buf, pos, end, col):
    size = _prefix_size(col, "BLOB")
    threshold = LARGE_VIEWS.get()
    if threshold is not None:
        n, start = read_length(buf, pos, end, size, "BLOB")
        view = memoryview(buf)
        if n >= threshold and view.readonly:       # (a buffer nobody can change under it)
            if end - start < n:
                raise truncated(n, "BLOB", end - start)
            value = view[start:start + n]
            if col.encoding is None:
                return value, start + n
            text = large_text(value, col)
            if text is not None:
                return text, start + n
    data, pos = read_framed(buf, pos, end, size, "BLOB")
    return to_text(data, col), pos


def uncompress_column(data: bytes) -> bytes:
    """Payload of a MariaDB compressed column -> the original bytes."""
    if not data:
        return b""
    header = data[0]
    method = header >> 4
    if method == 0:
        return data[1:]
    if method != 8:
        raise malformed(f"unknown column compression method {method} (header 0x{header:02x})")
    lenlen = header & 7
    if len(data) < 1 + lenlen:
        raise malformed(f"compressed column value too short for its {lenlen}-byte length")
    expected = int.from_bytes(data[1:1 + lenlen], "big")
    if expected > MAX_UNCOMPRESSED:
        raise malformed(f"compressed column claims {expected} bytes, over the 1 GiB cap")
    inflater = zlib.decompressobj(-zlib.MAX_WBITS if header & 8 else zlib.MAX_WBITS)
    try:
        # expected + 1: a max_length of 0 would mean "no limit" to zlib.
        out = inflater.decompress(data[1 + lenlen:], expected + 1)
    except zlib.error as exc:
        raise malformed(f"corrupt compressed column value: {exc}") from exc
    if not inflater.eof or len(out) != expected:
        raise malformed(f"compressed column value does not inflate to its stated {expected} bytes")
    return out


def decode_blob_compressed(buf, pos, end, col):
    data, pos = read_framed(buf, pos, end, _prefix_size(col, "BLOB"), "compressed BLOB")
    data = uncompress_column(data)
    threshold = LARGE_VIEWS.get()
    if threshold is not None and col.encoding is not None and len(data) >= threshold:
        text = large_text(data, col)       # the inflated bytes are the one copy
        if text is not None:
            return text, pos
    return to_text(data, col), pos


def decode_varchar_compressed(buf, pos, end, col):
    size = 1 if col.length <= 255 else 2
    data, pos = read_framed(buf, pos, end, size, "compressed VARCHAR")
    return to_text(uncompress_column(data), col), pos


def decode_geometry(buf, pos, end, col):
    """u{meta} LE length, then 4-byte LE SRID + WKB; returned as bytes (what HEX(col) shows)."""
    return read_framed(buf, pos, end, _prefix_size(col, "GEOMETRY"), "GEOMETRY")


def decode_vector(buf, pos, end, col):
    """MySQL 9 VECTOR (242): framed like BLOB (meta = prefix size, 4), then float32 LE values
    (libs/mysql/binlog/event/binary_log_funcs.cpp calc_field_size)."""
    data, pos = read_framed(buf, pos, end, _prefix_size(col, "VECTOR"), "VECTOR")
    if len(data) % 4:
        raise malformed(f"VECTOR value of {len(data)} bytes is not a whole number of floats")
    return list(struct.unpack(f"<{len(data) // 4}f", data)), pos


# --- ENUM / SET ---------------------------------------------------------------------------

def decode_enum(buf, pos, end, col):
    """LE index in col.length (1 or 2) bytes; 0 is ''."""
    n = col.length
    if n not in (1, 2):
        raise malformed(f"invalid ENUM pack length {n}")
    if end - pos < n:
        raise truncated(n, "ENUM", end - pos)
    idx = buf[pos] if n == 1 else buf[pos] | buf[pos + 1] << 8
    labels = col.enum_values
    if labels is None:
        return idx, pos + n
    if idx == 0:
        return "", pos + n
    if idx > len(labels):
        raise malformed(f"ENUM index {idx} beyond the column's {len(labels)} values")
    return labels[idx - 1], pos + n


def decode_set(buf, pos, end, col):
    """LE bitmask in col.length (1, 2, 3, 4 or 8) bytes."""
    n = col.length
    if n not in (1, 2, 3, 4, 8):
        raise malformed(f"invalid SET pack length {n}")
    if end - pos < n:
        raise truncated(n, "SET", end - pos)
    mask = int.from_bytes(buf[pos:pos + n], "little")
    labels = col.set_values
    if labels is None:
        return mask, pos + n
    if mask >> len(labels):
        raise malformed(f"SET bitmask 0x{mask:x} has bits beyond the column's {len(labels)} values")
    return ",".join(label for i, label in enumerate(labels) if mask >> i & 1), pos + n
