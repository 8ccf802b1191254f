"""The fault hooks of the exactly-once tests (``BINLOG_APPLY_FAULT``): the applier
numbers its target commits (the stream's and every worker's, in one count) and, at the
N-th, does what the test asked.

``kill-after-commit:N``, ``kill-before-commit:N``: SIGKILL this process right after /
just before the N-th commit; ``pause-after-commit:N``: sleep ``BINLOG_APPLY_PAUSE``
seconds after it (time for a test to stop the target);
``drop-connection-before-commit:N``: close the socket (a lost connection)."""
from __future__ import annotations

import os
import signal
import socket
import threading
import time


def _parse(text: str | None):
    if not text:
        return None
    kind, _, n = text.partition(":")
    return (kind, int(n)) if n.isdigit() else None


class Faults:
    def __init__(self, text: str | None):
        self.fault = _parse(text)
        self.commits = 0
        self.lock = threading.Lock()

    @classmethod
    def from_environment(cls) -> Faults:
        return cls(os.environ.get("BINLOG_APPLY_FAULT"))

    @property
    def armed(self) -> bool:
        """A fault that strikes between a commit's statements and its COMMIT (so they go
        in two requests, not one)."""
        return self.fault is not None and self.fault[0] in ("kill-before-commit",
                                                            "drop-connection-before-commit")

    def next_commit(self) -> int:
        """The number of the commit about to be made (1, 2, ...)."""
        with self.lock:
            self.commits += 1
            return self.commits

    def kill_before(self, n: int) -> None:
        if self.fault == ("kill-before-commit", n):
            os.kill(os.getpid(), signal.SIGKILL)

    def drop_before(self, n: int, conn) -> None:
        if self.fault == ("drop-connection-before-commit", n):
            self.fault = None
            conn._sock.shutdown(socket.SHUT_RDWR)

    def kill_after(self, n: int) -> None:
        if self.fault == ("kill-after-commit", n):
            os.kill(os.getpid(), signal.SIGKILL)

    def pause_after(self, n: int) -> None:
        if self.fault == ("pause-after-commit", n):
            time.sleep(float(os.environ.get("BINLOG_APPLY_PAUSE", "2")))
