"""Followers woken by the kernel (binlog/sources/watch.py): a wait ends as soon as a file
of the watched directory is written or created, however long its timeout; a follower of
a growing binlog gets the new bytes long before its poll interval."""
from __future__ import annotations

import sys
import threading
import time

import pytest
from support.paths import REPO

from binlog.reader import BinlogReader
from binlog.sources.watch import DirectoryWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
SAMPLE = REPO / "samples" / "mariadb-10.11" / "checksum_none.binlog"


def later(seconds: float, action) -> threading.Thread:
    def run():
        time.sleep(seconds)
        action()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_write_before_the_wait_ends_it_at_once(tmp_path):
    watch = DirectoryWatch(tmp_path)
    assert watch.kernel
    (tmp_path / "f").write_bytes(b"x")
    started = time.monotonic()
    assert watch.wait(30) is True
    assert time.monotonic() - started < 1
    assert watch.wait(0.05) is False            # the notices were taken: nothing new


def test_a_write_or_a_new_file_during_the_wait_ends_it(tmp_path):
    path = tmp_path / "grows"
    path.write_bytes(b"")
    watch = DirectoryWatch(tmp_path)
    for action in (lambda: path.open("ab").write(b"more"), lambda: (tmp_path / "new").write_bytes(b"")):
        writer = later(0.2, action)
        started = time.monotonic()
        assert watch.wait(30) is True
        assert time.monotonic() - started < 5
        writer.join()
        watch.wait(0.05)                         # (a write's close notice)


def test_nothing_changed_is_the_timeout(tmp_path):
    watch = DirectoryWatch(tmp_path)
    started = time.monotonic()
    assert watch.wait(0.3) is False
    assert 0.25 <= time.monotonic() - started < 3
    watch.close()
    assert watch.fd == -1


def test_a_follower_gets_new_events_long_before_its_poll_interval(tmp_path):
    data = SAMPLE.read_bytes()
    live = tmp_path / "live.binlog"
    live.write_bytes(data[:1100])
    writer = later(0.5, lambda: live.open("ab").write(data[1100:]))
    got: list = []
    reader = BinlogReader([live], follow=True, follow_timeout=None, poll_interval=60.0)

    def read():
        for change in reader.changes():
            got.append(change.pos)
            if len(got) == len(expected):
                return

    expected = [c.pos for c in BinlogReader([SAMPLE]).changes()]
    started = time.monotonic()
    follower = threading.Thread(target=read, daemon=True)
    follower.start()
    follower.join(timeout=20)
    writer.join()
    assert got == expected
    assert time.monotonic() - started < 10      # a poll would have slept 60 s
