"""SIGINT and SIGTERM stop a command the same way, between records, never inside one.

Without this, SIGTERM kills the process where it stands (its buffered output lost, or a
half JSON line left in the pipe when a large record was being written), and Ctrl-C during
a write raises KeyboardInterrupt with part of a record already passed on.  ``install()``
(called by ``binlog.cli.main``) makes both signals raise KeyboardInterrupt - every command
already turns that into exit code 130 - except inside ``deferred()``: there the signal is
remembered and raised when the block ends, so a record being written is finished first.
``GuardedOutput`` puts every ``write`` of an output stream in such a block.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_depth = 0
_pending = False


def _handler(signum, frame):
    global _pending
    if _depth:
        _pending = True
        return
    raise KeyboardInterrupt(signal.Signals(signum).name)


def install():
    """Our handler for SIGINT and SIGTERM; returns the previous ones (for ``restore``).
    Does nothing outside the main thread (only it can set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return {s: signal.signal(s, _handler) for s in _SIGNALS}


def restore(previous) -> None:
    global _pending
    _pending = False
    for s, h in (previous or {}).items():
        signal.signal(s, h)


@contextmanager
def deferred():
    """A block a signal does not cut: it raises KeyboardInterrupt when the block ends."""
    global _depth, _pending
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending:
            _pending = False
            raise KeyboardInterrupt("interrupted")


class GuardedOutput:
    """A binary stream whose writes are never cut by SIGINT/SIGTERM: each record is
    written whole (and flushed at exit by the command) or not at all."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        with deferred():
            # a signal can make a blocked write return early with part of the data
            # written (write(2) on a pipe; BufferedWriter passes the count on): go on
            done = 0
            while done < len(view):
                done += self.raw.write(view[done:])
        return done

    def flush(self) -> None:
        with deferred():
            self.raw.flush()

    def __getattr__(self, name):
        return getattr(self.raw, name)
