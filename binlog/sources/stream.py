"""Binlogs read once, from the start: standard input (``-``) and compressed files
(``.gz``, ``.zst``), decompressed as they are read - never inflated to disk or memory
whole (at most one chunk of the reader's at a time).

They implement ``base.Binlog``.  They cannot go back: ``seek`` forward (a start position)
reads and drops the bytes before it; backward is bad usage.
"""
from __future__ import annotations

import sys
import zlib
from pathlib import Path

from ..errors import MalformedEventError, UsageError
from .base import CHUNK, Binlog

COMPRESSED_SUFFIXES = (".gz", ".zst")
STDIN = "-"


def binlog_name(path) -> str:
    """The binlog's own name for a path: ``mariadb-bin.000042`` for
    ``mariadb-bin.000042.gz``, ``stdin`` for ``-``."""
    text = str(path)
    if text == STDIN:
        return "stdin"
    name = Path(text).name
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def is_stream(path) -> bool:
    """Read once from the start (stdin, compressed): no positions can be checked ahead."""
    text = str(path)
    return text == STDIN or text.endswith(COMPRESSED_SUFFIXES)


def _zstd_error():
    import zstandard

    return zstandard.ZstdError


class StreamBinlog(Binlog):
    def __init__(self, name: str, fh, *, closes: bool = True, what: str = "input"):
        self.name = name
        self._fh = fh
        self._closes = closes
        self._what = what
        self._pos = 0
        self._last = b""          # the last chunk read: a start position inside it is
        self._again = b""         # read again from here (the stream jumps back to it)
        self._read1 = getattr(fh, "read1", None) if what == "the gzip data" else None
        self._expected: int | None = None   # zstd: the frame's declared content size

    def read(self, size: int) -> bytes:
        if self._again:
            data, self._again = self._again[:size], self._again[size:]
            self._pos += len(data)
            return data
        try:
            # read1: what one step of decompression gives, so the bytes before a damaged
            # or cut place are handed on before the error
            data = self._read1(size) if self._read1 is not None else self._fh.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            # gzip.BadGzipFile is an OSError, a cut gzip stream raises EOFError
            raise self._damaged(exc) from None
        except _zstd_error() as exc:
            raise self._damaged(exc) from None
        if not data and self._expected is not None and self._pos != self._expected:
            raise self._damaged(f"the data ends after {self._pos} of the {self._expected} "
                                f"bytes its frame declares (the file is cut short)")
        self._pos += len(data)
        self._last = data
        return data

    def _damaged(self, exc) -> MalformedEventError:
        return MalformedEventError(f"{self._what} cannot be read on after byte {self._pos} of "
                                   f"the binlog: {exc}", source=self.name,
                                   field_offset=self._pos)

    def seek(self, offset: int) -> None:
        start_of_last = self._pos - len(self._last)
        if start_of_last <= offset < self._pos and not self._again:
            self._again = self._last[offset - start_of_last:]
            self._pos = offset
            return
        if offset < self._pos:
            super().seek(offset)
        while self._pos < offset:
            if not self.read(min(CHUNK, offset - self._pos)):
                raise UsageError(f"{self.name}: position {offset} is beyond the end of the "
                                 f"binlog ({self._pos} bytes)")

    def close(self) -> None:
        if self._closes:
            self._fh.close()


def open_stream(path) -> StreamBinlog:
    text = str(path)
    if text == STDIN:
        return StreamBinlog("stdin", sys.stdin.buffer, closes=False, what="standard input")
    name = binlog_name(path)
    if text.endswith(".gz"):
        import gzip

        return StreamBinlog(name, gzip.open(text, "rb"), what="the gzip data")
    import zstandard

    raw = open(text, "rb")
    binlog = StreamBinlog(name, zstandard.ZstdDecompressor().stream_reader(raw, closefd=True),
                          what="the zstd data")
    # a cut zstd stream just ends (stream_reader raises nothing): the frame header's
    # content size, when the compressor wrote it (the zstd tool does for files), tells
    with open(text, "rb") as head:
        try:
            declared = zstandard.frame_content_size(head.read(18))
        except zstandard.ZstdError:
            declared = -1          # not a zstd frame: the first read says so
    binlog._expected = declared if declared >= 0 else None
    return binlog
