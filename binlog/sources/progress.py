"""A progress line on stderr for long reads of a live server, when stderr is a terminal.

``binlog fetch`` and every ``--from`` reader rewrite one line at most once a second:
position reached, bytes per second since the last line, and the lag behind the server
(now minus the timestamp of the last event read; 0 once a heartbeat says the server has
nothing newer).  When stderr is not a terminal nothing is written at all.
"""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, stream=None, *, interval: float = 1.0, force: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or self.stream.isatty()
        self.interval = interval
        self._last = time.monotonic()
        self._bytes = 0
        self._bytes_then = 0
        self._shown = False
        self._note = ""

    def note(self, text: str) -> None:
        """Text the line ends with from now on (apply: the lag of what it applied)."""
        self._note = "  " + text

    def event(self, file: str, end: int, size: int, timestamp: int) -> None:
        """An event of ``size`` bytes was read; it ends at ``file``:``end``."""
        self._bytes += size
        self._where = f"{file}:{end}"
        self._lag = max(0, int(time.time()) - timestamp) if timestamp else 0
        self._tick()

    def idle(self) -> None:
        """A heartbeat: the server has nothing newer than what was read."""
        self._lag = 0
        self._tick()

    def _tick(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self.interval or not hasattr(self, "_where"):
            return
        rate = (self._bytes - self._bytes_then) / (now - self._last) / 1e6
        self._last, self._bytes_then = now, self._bytes
        self.stream.write(f"\rbinlog: at {self._where}  {rate:.1f} MB/s  lag {self._lag} s{self._note}\x1b[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
