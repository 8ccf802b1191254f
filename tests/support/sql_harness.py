"""What the test servers' harnesses share (MariaDBServer, TiDBServer, DockerServer; the DM
cluster's ports): a free loopback port, the cached templates a server starts from,
start/cleanup as a context manager, the child process of a local one, and the one
connection ``execute``/``query`` keep between calls."""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

import pymysql


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cached_template(key: str, build: Callable[[Path], Path]) -> Path:
    """The cached directory ``<key>-template`` ($BINLOG_TEST_CACHE, else a folder of the
    system temp dir per user), made once: ``build(work)`` makes it inside the scratch
    folder ``work`` and returns it, under the lock ``<key>.lock`` that parallel test
    processes wait on; a half-made one (no ``.complete``) is made again."""
    root = Path(os.environ.get("BINLOG_TEST_CACHE")
                or Path(tempfile.gettempdir()) / f"binlog-test-cache-{os.getuid()}")
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{key}-template"
    if (target / ".complete").exists():
        return target
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").exists():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"{key}-install-", dir=root))
        try:
            made = build(work)
            (made / ".complete").touch()
            shutil.rmtree(target, ignore_errors=True)
            os.rename(made, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return target


class Harness:
    """``with Server(...) as server``: started on entry (cleaned up if the start fails),
    cleaned up on exit.  A subclass has ``start()`` (returning itself) and ``cleanup()``."""

    def start(self):
        raise NotImplementedError

    def cleanup(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class LocalProcess:
    """A server run as a child process of the tests (``_proc``, None when stopped)."""

    _proc: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None


class KeptConnection:
    """``execute`` and ``query`` on one connection of the harness's own (``connect()``),
    kept between calls, so session settings (``SET SESSION ...``, ``USE``) persist until
    ``_close_conn`` (the harness's stop); a connection the server dropped is made again."""

    _conn: pymysql.connections.Connection | None = None

    def connect(self, db: str | None = None, **kw: Any) -> pymysql.connections.Connection:
        raise NotImplementedError

    def _cursor(self):
        if self._conn is None or not self._conn.open:
            self._conn = self.connect()
        else:
            try:
                self._conn.ping(False)
            except pymysql.err.Error:
                self._close_conn()
                self._conn = self.connect()
        return self._conn.cursor()

    def _close_conn(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def execute(self, sql: str, args: Iterable[Any] | None = None) -> int:
        """Run one statement on the kept connection; returns the affected rows."""
        with self._cursor() as cur:
            return cur.execute(sql, args)

    def query(self, sql: str, args: Iterable[Any] | None = None) -> list[tuple]:
        """Run one statement on the kept connection and return all rows as tuples."""
        with self._cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())
