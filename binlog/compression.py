"""Decompression of MariaDB compressed events and MySQL transaction payloads (and the
MariaDB compression ``binlog rewrite --keep-compressed`` writes).

MariaDB block (``sql/log_event.cc`` binlog_buf_compress / binlog_get_uncompress_len /
binlog_buf_uncompress): byte0 = 0x80 | (algorithm << 4) | lenlen, algorithm 0 = zlib,
lenlen 1..4; then the uncompressed length, lenlen bytes big-endian; then a zlib stream.

Hostile input: a declared size is checked before anything is inflated, against
``MAX_UNCOMPRESSED`` and against what the compressed bytes could possibly produce
(zlib cannot expand by more than ~1032:1), and the output is produced in bounded steps,
never more than the declared size plus one byte.  Any failure is a MalformedEventError
or TruncatedError (never a zlib.error / ZstdError).
"""
from __future__ import annotations

import io
import zlib

from .errors import MalformedEventError, TruncatedError

# Largest uncompressed payload we accept (max_allowed_packet's ceiling is 1 GiB).
MAX_UNCOMPRESSED = 1 << 30

# deflate's best case is 258 bytes from 2 bits (~1032:1); with the zlib header and the
# final block a stream of n bytes never inflates to more than this.
ZLIB_MAX_RATIO = 1032
_ZLIB_SLACK = 1024

_ZSTD_STEP = 1 << 20      # zstd output is produced in steps of at most this many bytes


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
    return zlib_exact(bytes(data[pos + 1 + lenlen:end]), size, what, limit)


def mariadb_compress(data: bytes) -> bytes:
    """The block ``mariadb_uncompress`` reads (sql/log_event.cc binlog_buf_compress):
    0x80 | lenlen, the uncompressed length big-endian in lenlen (1..4) bytes, then a zlib
    stream (compress())."""
    n = len(data)
    lenlen = 4 if n >> 24 else 3 if n >> 16 else 2 if n >> 8 else 1
    return bytes((0x80 | lenlen,)) + n.to_bytes(lenlen, "big") + zlib.compress(data)


def check_declared_size(size: int, compressed_len: int, what: str, limit: int = MAX_UNCOMPRESSED,
                        max_ratio: int | None = ZLIB_MAX_RATIO) -> None:
    """Reject a declared uncompressed size before allocating anything for it."""
    if size > limit:
        raise MalformedEventError(f"{what} declares {size} uncompressed bytes, over the {limit} limit")
    if max_ratio is not None and size > compressed_len * max_ratio + _ZLIB_SLACK:
        raise MalformedEventError(f"{what} declares {size} uncompressed bytes, more than "
                                  f"{compressed_len} compressed bytes can hold")


#: Inflated sizes from which zlib_exact makes one buffer of exactly the declared size:
#: ``decompressobj`` collects its output in growing blocks and joins them at the end, so a
#: 200 MiB rows part briefly needs 400 MiB.
ONE_BUFFER = 16 << 20


def zlib_exact(stream: bytes, size: int, what: str, limit: int = MAX_UNCOMPRESSED, wbits: int = zlib.MAX_WBITS) -> bytes:
    """Inflate a zlib stream that must yield exactly ``size`` bytes."""
    check_declared_size(size, len(stream), what, limit)
    if size >= ONE_BUFFER:
        return _zlib_one_buffer(stream, size, what, wbits)
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(stream, size + 1)
    except zlib.error as exc:
        raise MalformedEventError(f"{what}: corrupt zlib data ({exc})") from exc
    if len(out) != size or not inflater.eof:
        raise MalformedEventError(f"{what}: zlib data gives {len(out)}{'+' if not inflater.eof else ''}"
                                  f" bytes, header says {size}")
    return out


def _zlib_one_buffer(stream: bytes, size: int, what: str, wbits: int) -> bytes:
    """A large inflate in one buffer: first the stream is inflated through a 1 MiB window
    and counted (nothing kept: a stream that gives more than ``size`` never allocates
    more), then ``zlib.decompress`` with ``bufsize=size`` fills its one output block and
    CPython hands that block back as the bytes, uncopied (Modules/zlibmodule.c,
    _BlocksOutputBuffer_Finish's single-block path).  Twice the CPU, once the memory."""
    inflater = zlib.decompressobj(wbits)
    data, count = stream, 0
    try:
        while count <= size:
            out = inflater.decompress(data, _ZSTD_STEP)
            count += len(out)
            data = inflater.unconsumed_tail
            if inflater.eof or (not out and not data):
                break
    except zlib.error as exc:
        raise MalformedEventError(f"{what}: corrupt zlib data ({exc})") from exc
    if count != size or not inflater.eof:
        raise MalformedEventError(f"{what}: zlib data gives {count}{'+' if not inflater.eof else ''}"
                                  f" bytes, header says {size}")
    try:
        return zlib.decompress(stream, wbits, size)
    except zlib.error as exc:
        raise MalformedEventError(f"{what}: corrupt zlib data ({exc})") from exc


def zstd_exact(stream: bytes, size: int | None, what: str, limit: int = MAX_UNCOMPRESSED) -> bytes | bytearray:
    """Decompress zstd data that must yield ``size`` bytes (any size up to ``limit`` if
    None), in bounded steps: a frame's own content-size field is never trusted for an
    allocation."""
    import zstandard

    if size is not None and size > limit:
        raise MalformedEventError(f"{what} declares {size} uncompressed bytes, over the {limit} limit")
    cap = limit if size is None else size
    parts, total = [], 0
    try:
        try:
            content_size = zstandard.get_frame_parameters(stream).content_size
        except zstandard.ZstdError as exc:
            raise MalformedEventError(f"{what}: corrupt zstd data ({exc})") from exc
        # CONTENTSIZE_UNKNOWN/ERROR (>= CONTENTSIZE_ERROR): the frame does not say
        declared = content_size if content_size < zstandard.CONTENTSIZE_ERROR else None
        if declared is not None and size is not None and declared != size:
            raise MalformedEventError(f"{what}: zstd frame says {declared} bytes, header says {size}")
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(stream), read_across_frames=True)
        if size is not None:
            return _zstd_into(reader, size, what)
        while total <= cap:
            chunk = reader.read(min(_ZSTD_STEP, cap + 1 - total))
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
    except zstandard.ZstdError as exc:
        raise MalformedEventError(f"{what}: corrupt zstd data ({exc})") from exc
    if total > cap:
        raise MalformedEventError(f"{what}: zstd data gives more than the "
                                  f"{'declared ' + str(size) if size is not None else str(limit) + ' limit of'} bytes")
    out = b"".join(parts)
    if size is not None and total != size:
        raise MalformedEventError(f"{what}: zstd data gives {total} bytes, header says {size}")
    if size is None and declared is not None and total != declared:
        raise MalformedEventError(f"{what}: zstd data gives {total} bytes, its frame says {declared}")
    return out


def _zstd_into(reader, size: int, what: str) -> bytearray:
    """Decompress into one buffer of the declared (already capped) size, in steps: the
    output is held once, never as pieces and their join (2x)."""
    import zstandard

    out = bytearray(size)
    view = memoryview(out)
    total = 0
    try:
        while total < size:
            n = reader.readinto(view[total:total + _ZSTD_STEP])
            if not n:
                break
            total += n
        extra = reader.read(1)
    except zstandard.ZstdError as exc:
        raise MalformedEventError(f"{what}: corrupt zstd data ({exc})") from exc
    if extra:
        raise MalformedEventError(f"{what}: zstd data gives more than the declared {size} bytes")
    if total != size:
        raise MalformedEventError(f"{what}: zstd data gives {total} bytes, header says {size}")
    return out
