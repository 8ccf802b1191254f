"""A progress line on stderr while files are read (dump, stats, apply, verify-rows).

Only when stderr is a terminal and ``--quiet`` was not given: one line, rewritten at
most twice a second, with the bytes read of all input files, the percentage, the rate
and the time left at that rate (``binlog: 12.3 of 45.6 MB (27%), 8.1 MB/s, 0:04 left``).
The total is known for plain files; for stdin and compressed files only the bytes and
the rate are shown.  The line is erased at the end, so the output on stdout and the
messages after it are unchanged.
"""
from __future__ import annotations

import sys
import time

_EVERY = 64          # look at the clock once per this many updates


class FileProgress:
    def __init__(self, total: int | None, *, quiet: bool = False, stream=None,
                 interval: float = 0.5, force: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and (force or _isatty(self.stream))
        self.total = total or None
        self.interval = interval
        self._start = self._last = time.monotonic()
        self._calls = 0
        self._shown = False

    def update(self, done: int) -> None:
        """``done`` bytes of the input were read so far."""
        if not self.enabled:
            return
        self._calls += 1
        if self._calls % _EVERY:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r" + self.line(done, now - self._start) + "\x1b[K")
        self.stream.flush()
        self._shown = True

    def line(self, done: int, elapsed: float) -> str:
        rate = done / elapsed if elapsed > 0 else 0.0
        text = f"binlog: {done / 1e6:.1f}"
        if self.total:
            text += f" of {self.total / 1e6:.1f} MB ({min(100, done * 100 // self.total)}%)"
        else:
            text += " MB"
        text += f", {rate / 1e6:.1f} MB/s"
        if self.total and rate > 0:
            left = max(0, int((self.total - done) / rate))
            text += f", {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d} left"
        return text

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def input_size(reader) -> int | None:
    """The bytes of a reader's input files, when all are plain files."""
    import os

    from ..sources.stream import is_stream

    files = getattr(reader, "files", None) or []
    if not files or any(is_stream(f) for f in files):
        return None
    try:
        return sum(os.stat(f).st_size for f in files)
    except OSError:
        return None


def with_progress(reader, items, args, *, output_is_terminal: bool = False, stream=None,
                  interval: float = 0.5):
    """``items`` of ``reader``, with the progress line on stderr meanwhile.  Not for a
    live source (``--from``: it shows its own line, with the lag), not with ``--quiet``,
    and not when the command's own output goes to the same terminal (``output_is_terminal``:
    the line would be mixed into it)."""
    if getattr(args, "from_dsn", None):
        yield from items
        return
    quiet = getattr(args, "quiet", False) or output_is_terminal
    progress = FileProgress(input_size(reader), quiet=quiet, stream=stream, interval=interval)
    if not progress.enabled:        # (no line: not even the per-item sum of bytes read)
        yield from items
        return
    try:
        for item in items:
            progress.update(done_bytes(reader))
            yield item
    finally:
        progress.close()


def done_bytes(reader) -> int:
    stats = reader.stats
    return stats.bytes + stats.skipped_bytes + stats.damaged_bytes
