"""A real, throw-away ``tidb-server`` on loopback for the tests that use TiDB as the target
(``binlog apply``, ``dump --format sql | mariadb``, ``verify-rows``).

The binary is the ``tidb-8.5`` peer (tests/peers/build.py, built from the Go module proxy).
Each server runs ``tidb-server -store unistore -path DIR/store -P PORT -status PORT2`` in a
temp dir of its own (its store, temp dirs, socket, log and config file there), on
127.0.0.1 with OS-chosen free ports, so several run at once::

    with TiDBServer(peer_dir / "tidb-server") as tidb:
        tidb.execute("CREATE DATABASE d")
        tidb.dsn        # mysql://root@127.0.0.1:PORT/  (root, no password)

``kill()`` is a ``kill -9`` (a crash: the store is left as it is), ``start()`` after it or
after ``stop()`` runs the same store on the same ports again.  The first server bootstraps
TiDB's system tables once into a cached template store (``$BINLOG_TEST_CACHE``, as the
mariadbd template datadir), copied for every later server, which then starts in seconds.
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Mapping

import pymysql

from .sql_harness import Harness, KeptConnection, LocalProcess, cached_template, free_port

__all__ = ["TiDBServer", "TiDBServerError"]

_live: "weakref.WeakSet[TiDBServer]" = weakref.WeakSet()


class TiDBServerError(RuntimeError):
    """The server could not be started, queried or stopped."""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_text(config: Mapping[str, Any]) -> str:
    """TiDB's config file from a dict: top-level keys, then one ``[section]`` per dict value."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in config.items() if not isinstance(v, Mapping)]
    for section, values in config.items():
        if isinstance(values, Mapping):
            lines.append(f"\n[{section}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class TiDBServer(Harness, LocalProcess, KeptConnection):
    """A private ``tidb-server -store unistore`` on 127.0.0.1:<free port>.

    ``config``: TiDB config-file settings (``{"performance": {"txn-total-size-limit": N}}``),
    merged over the fixture's own (temp dirs in the server's directory).
    """

    def __init__(self, binary: str | os.PathLike, config: Mapping[str, Any] | None = None, *,
                 basedir: str | os.PathLike | None = None, startup_timeout: float = 180.0,
                 shutdown_timeout: float = 30.0, template: bool = True):
        self.binary = str(binary)
        self._own_basedir = basedir is None
        self.basedir = Path(basedir) if basedir else Path(tempfile.mkdtemp(prefix="tidb-test-"))
        self.store = self.basedir / "store"
        self.log = self.basedir / "tidb.log"
        self.config_file = self.basedir / "tidb.toml"
        self.socket = str(self.basedir / "tidb.sock")
        self.config = _merge({"temp-dir": str(self.basedir / "temp"),
                              "tmp-storage-path": str(self.basedir / "tmp-storage")}, config or {})
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self.template = template
        self.port: int | None = None
        self.status_port: int | None = None
        self._proc: subprocess.Popen | None = None
        self._conn: pymysql.connections.Connection | None = None
        if len(self.socket) > 100:          # sun_path is 108 bytes
            raise TiDBServerError(f"socket path too long for a unix socket: {self.socket}")

    # -- lifecycle ---------------------------------------------------------------------

    def command(self) -> list[str]:
        return [self.binary, "-store", "unistore", "-path", str(self.store),
                "-host", "127.0.0.1", "-P", str(self.port),
                "-status-host", "127.0.0.1", "-status", str(self.status_port),
                "-socket", self.socket, "-config", str(self.config_file),
                "-L", "warn", "-log-file", str(self.log), "-temp-dir", str(self.basedir / "temp"),
                # (else tidb-slow.log in the working directory: TiDB's log.slow-query-file)
                "-log-slow-query", str(self.basedir / "tidb-slow.log")]

    @property
    def dsn(self) -> str:
        """The DSN ``binlog apply --to`` / ``verify-rows`` take (root, no password)."""
        return f"mysql://root@127.0.0.1:{self.port}/"

    def start(self) -> "TiDBServer":
        """Start (or start again after :meth:`stop` / :meth:`kill`) on the same store;
        returns once it answers SQL."""
        if self.running:
            return self
        if not self.store.exists() and self.template:
            shutil.copytree(template_store(self.binary), self.store, symlinks=True)
        self.config_file.write_text(toml_text(self.config))
        fresh_ports = self.port is None
        for attempt in range(3):           # a free port can be taken between probe and bind
            if fresh_ports or attempt:
                self.port, self.status_port = free_port(), free_port()
            try:
                self._spawn_and_wait()
                _live.add(self)
                return self
            except TiDBServerError as exc:
                if "address already in use" not in str(exc).lower():
                    raise
        raise TiDBServerError(f"no free port for tidb-server after 3 tries; log: {self.log}")

    def _spawn_and_wait(self) -> None:
        log_start = self.log.stat().st_size if self.log.exists() else 0
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket)      # a kill -9 leaves it behind
        stderr = open(self.basedir / "tidb.stderr", "ab")
        try:
            self._proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                          stdout=stderr, stderr=stderr, start_new_session=True)
        finally:
            stderr.close()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._proc.poll() is not None:
                rc, self._proc = self._proc.returncode, None
                raise TiDBServerError(f"tidb-server exited with code {rc} during start-up\n"
                                      f"command: {' '.join(self.command())}\n{self._tail(log_start)}")
            try:
                conn = self._raw_connect(connect_timeout=2)
                conn.close()
                return
            except pymysql.err.OperationalError:
                pass
            if time.monotonic() > deadline:
                self._signal(signal.SIGKILL)
                raise TiDBServerError(f"tidb-server did not answer within {self.startup_timeout:.0f} s\n"
                                      f"{self._tail(log_start)}")
            time.sleep(0.2)

    def _tail(self, since: int = 0, lines: int = 30) -> str:
        out = []
        for path, start in ((self.log, since), (self.basedir / "tidb.stderr", 0)):
            try:
                with open(path, "rb") as f:
                    f.seek(start)
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                continue
            out.append(f"{path.name} tail:\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(out) or "(no log)"

    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(self.shutdown_timeout)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(10)
        self._proc = None

    def stop(self) -> None:
        """A clean shutdown (SIGTERM: TiDB closes its sessions and its store), bounded,
        then SIGKILL.  Idempotent."""
        self._close_conn()
        self._signal(signal.SIGTERM)
        _live.discard(self)

    def kill(self) -> None:
        """``kill -9``: a crash, the store left as it was at that instant."""
        self._close_conn()
        self._signal(signal.SIGKILL)
        _live.discard(self)

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        if self._own_basedir:
            shutil.rmtree(self.basedir, ignore_errors=True)

    def __del__(self) -> None:      # last resort: never leave a server behind
        with contextlib.suppress(Exception):
            self._signal(signal.SIGKILL)

    # -- SQL -------------------------------------------------------------------------------

    def _raw_connect(self, db: str | None = None, connect_timeout: float = 10,
                     **kw: Any) -> pymysql.connections.Connection:
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                               database=db, autocommit=True, charset="utf8mb4",
                               connect_timeout=connect_timeout, **kw)

    def connect(self, db: str | None = None, **kw: Any) -> pymysql.connections.Connection:
        """A new PyMySQL connection over TCP (root, autocommit on)."""
        if not self.running:
            raise TiDBServerError("tidb-server is not running")
        return self._raw_connect(db, **kw)

    @property
    def version(self) -> str:
        """``SELECT VERSION()``: ``8.0.11-TiDB-v8.5.4-e4e814fdc0af``."""
        return self.query("SELECT VERSION()")[0][0]


def template_store(binary: str) -> Path:
    """A unistore directory TiDB has bootstrapped (its system tables) and shut down
    cleanly, made once per binary (keyed by its hash) and copied for each server."""
    def bootstrap(work: Path) -> Path:
        server = TiDBServer(binary, basedir=work, template=False)
        server.start()
        server.stop()
        return server.store

    digest = hashlib.sha256(Path(binary).read_bytes()).hexdigest()[:16]
    return cached_template(f"tidb-{digest}", bootstrap)


@atexit.register
def _stop_all() -> None:
    for server in list(_live):
        with contextlib.suppress(Exception):
            server.stop()
