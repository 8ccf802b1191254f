"""Waiting for the files of a directory to change: a followed binlog growing, a relay's
next file appearing.  On Linux the kernel says when (inotify, through libc: a write, a
new or renamed file, a close after writing), so a follower wakes as soon as its input
grows instead of at its next poll; elsewhere, or when inotify cannot be had (no libc,
the watch limit reached), ``wait`` just sleeps its timeout, as a poll would.

The watch is made before the follower reads: whatever is written between its last read
and its wait is queued in the kernel, and the wait returns at once.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import sys
import time
import weakref
from pathlib import Path

# linux/inotify.h: what counts as a change (written, closed after writing, created,
# renamed into the directory); inotify_init1's flags are O_NONBLOCK and O_CLOEXEC
_IN_MODIFY, _IN_CLOSE_WRITE, _IN_MOVED_TO, _IN_CREATE = 0x2, 0x8, 0x80, 0x100
_MASK = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


class DirectoryWatch:
    """Changes to the files of ``directory``: ``wait(timeout)`` returns once something
    changed since the last ``wait`` (at once when it already had), or after ``timeout``
    seconds.  ``kernel``: whether inotify tells (else ``wait`` sleeps its timeout)."""

    def __init__(self, directory: str | os.PathLike):
        self.fd = -1
        libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        if libc.inotify_add_watch(fd, os.fsencode(Path(directory)), _MASK) < 0:
            os.close(fd)
            return
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)

    @property
    def kernel(self) -> bool:
        return self.fd >= 0

    def wait(self, timeout: float) -> bool:
        """Until a change or ``timeout`` seconds; True when a change was seen."""
        if self.fd < 0:
            time.sleep(timeout)
            return False
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
        if not ready:
            return False
        self._drain()
        return True

    def _drain(self) -> None:
        """Take the queued notices (what changed does not matter: the follower looks)."""
        while True:
            try:
                if not os.read(self.fd, 65536):
                    return
            except BlockingIOError:
                return

    def close(self) -> None:
        if self.fd >= 0:
            self._closer()
            self.fd = -1
