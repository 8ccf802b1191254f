"""Decompression of MariaDB compressed events and MySQL transaction payloads.

MariaDB block (``sql/log_event.cc`` binlog_buf_compress / binlog_get_uncompress_len /
binlog_buf_uncompress): byte0 = 0x80 | (algorithm << 4) | lenlen, algorithm 0 = zlib,
lenlen 1..4; then the uncompressed length, lenlen bytes big-endian; then a zlib stream.
Declared sizes are checked against a cap before anything is allocated.
"""
from __future__ import annotations

import zlib

from .errors import MalformedEventError, TruncatedError

# Largest uncompressed payload we accept (max_allowed_packet's ceiling is 1 GiB).
MAX_UNCOMPRESSED = 1 << 30


def mariadb_uncompress(data: bytes, pos: int, end: int, what: str, limit: int = MAX_UNCOMPRESSED) -> bytes:
    if pos >= end:
        raise TruncatedError(f"need 1 byte for {what} compression header, 0 left")
    head = data[pos]
    lenlen = head & 0x07
    algorithm = (head >> 4) & 0x07
    if not head & 0x80 or lenlen < 1 or lenlen > 4:
        raise MalformedEventError(f"bad {what} compression header 0x{head:02x}")
    if algorithm != 0:
        raise MalformedEventError(f"unknown {what} compression algorithm {algorithm}")
    if pos + 1 + lenlen > end:
        raise TruncatedError(f"need {lenlen} bytes for {what} uncompressed length, {end - pos - 1} left")
    size = int.from_bytes(data[pos + 1:pos + 1 + lenlen], "big")
    if size > limit:
        raise MalformedEventError(f"{what} declares {size} uncompressed bytes, over the {limit} limit")
    return zlib_exact(bytes(data[pos + 1 + lenlen:end]), size, what)


def zlib_exact(stream: bytes, size: int, what: str) -> bytes:
    """Inflate a zlib stream that must yield exactly ``size`` bytes."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(stream, size + 1)
    except zlib.error as exc:
        raise MalformedEventError(f"{what}: corrupt zlib data ({exc})") from exc
    if len(out) != size or not inflater.eof:
        raise MalformedEventError(f"{what}: zlib data gives {len(out)}{'+' if not inflater.eof else ''}"
                                  f" bytes, header says {size}")
    return out


def zstd_exact(stream: bytes, size: int | None, what: str, limit: int = MAX_UNCOMPRESSED) -> bytes:
    import zstandard

    if size is not None and size > limit:
        raise MalformedEventError(f"{what} declares {size} uncompressed bytes, over the {limit} limit")
    try:
        # max_output_size bounds the allocation when the frame has no content size.
        out = zstandard.ZstdDecompressor().decompress(stream, max_output_size=size if size else limit)
    except zstandard.ZstdError as exc:
        raise MalformedEventError(f"{what}: corrupt zstd data ({exc})") from exc
    if len(out) > limit:
        raise MalformedEventError(f"{what}: more than {limit} bytes after decompression")
    if size is not None and len(out) != size:
        raise MalformedEventError(f"{what}: zstd data gives {len(out)} bytes, header says {size}")
    return out
