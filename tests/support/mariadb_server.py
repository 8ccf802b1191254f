"""Start a real, throw-away ``mariadbd`` on loopback for tests and sample generation.

Usage::

    with MariaDBServer({"binlog_row_metadata": "FULL"}) as srv:
        srv.execute("CREATE DATABASE d")
        srv.flush_logs()
        paths = srv.binlog_files()      # absolute Paths, in index order

The first server of a given ``mariadbd`` version runs ``mariadb-install-db`` once into a
cached *template* datadir (under ``$BINLOG_TEST_CACHE`` or the system temp dir); every
server then starts from a copy of it, which takes milliseconds instead of seconds.

Nothing here is needed by the parser itself: it is test and corpus tooling only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Iterable, Mapping

import pymysql

from .sql_harness import Harness, KeptConnection, LocalProcess, cached_template, free_port

__all__ = [
    "MariaDBServer",
    "MariaDBServerError",
    "MariaDBNotFoundError",
    "find_mariadbd",
    "require_mariadbd",
    "find_tool",
    "mariadbd_version",
    "split_version",
]

#: Options every server gets unless the caller overrides them (keys use ``_``).
DEFAULT_OPTIONS: dict[str, Any] = {
    "server_id": 1,
    "binlog_format": "ROW",
    "innodb_buffer_pool_size": "32M",
    "skip_name_resolve": True,
}

_SEARCH_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin",
                "/usr/local/mysql/bin", "/opt/mariadb/bin")

_live_servers: "weakref.WeakSet[MariaDBServer]" = weakref.WeakSet()


class MariaDBServerError(RuntimeError):
    """The server could not be installed, started, queried or stopped."""


class MariaDBNotFoundError(MariaDBServerError):
    """No MariaDB server binary on this machine."""


def find_tool(*names: str, env: str | None = None) -> str:
    """Path of the first of ``names`` found (``$env`` wins), else MariaDBNotFoundError."""
    if env and os.environ.get(env):
        path = os.environ[env]
        if os.access(path, os.X_OK):
            return path
        raise MariaDBNotFoundError(f"${env}={path!r} is not an executable file")
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for d in _SEARCH_DIRS:
            cand = os.path.join(d, name)
            if os.access(cand, os.X_OK):
                return cand
    raise MariaDBNotFoundError(
        f"none of {', '.join(names)} found on PATH or in {', '.join(_SEARCH_DIRS)}; "
        "install the MariaDB server (Debian/Ubuntu: `apt-get install mariadb-server`) "
        + (f"or point ${env} at the binary" if env else ""))


def require_mariadbd() -> None:
    """Skip the calling test when no mariadbd is installed, unless
    ``BINLOG_REQUIRE_SERVER=1`` (then a missing server is an error)."""
    require_tool("mariadbd", "mysqld", env="MARIADBD")


def require_tool(*names: str, env: str | None = None) -> str:
    """``find_tool``, for a test: a tool of the MariaDB packages (the server, mariadb-binlog)
    that is missing skips the calling test, unless ``BINLOG_REQUIRE_SERVER=1`` (then it is
    an error, as a missing server is)."""
    import pytest

    try:
        return find_tool(*names, env=env)
    except MariaDBNotFoundError as exc:
        if os.environ.get("BINLOG_REQUIRE_SERVER") == "1":
            raise
        pytest.skip(f"no {names[0]}: {exc}")


def find_mariadbd() -> str:
    """Path of the ``mariadbd`` (or old-style ``mysqld`` from MariaDB) binary."""
    return find_tool("mariadbd", "mysqld", env="MARIADBD")


def mariadbd_version(mariadbd: str | None = None) -> str:
    """``mariadbd --version`` version string, e.g. ``10.11.19-MariaDB-0+deb12u1``."""
    out = subprocess.run([mariadbd or find_mariadbd(), "--version"], capture_output=True,
                         text=True, check=True).stdout
    # "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64"
    parts = out.split()
    return parts[parts.index("Ver") + 1] if "Ver" in parts else out.strip()


def split_version(version: str) -> tuple[int, ...]:
    """``"10.11.19-MariaDB-0+deb12u1-log"`` -> ``(10, 11, 19)``."""
    head = version.split("-")[0]
    return tuple(int(p) for p in head.split(".") if p.isdigit())


def _opt_key(name: str) -> str:
    return name.strip().lstrip("-").replace("-", "_")


def _opt_arg(name: str, value: Any) -> str | None:
    flag = "--" + name.replace("_", "-")
    if value is None or value is True:
        return flag
    if value is False:
        return None
    return f"{flag}={value}"


def template_datadir(mariadbd: str | None = None) -> Path:
    """Installed, never-started datadir for this server version (built once, cached)."""
    mariadbd = mariadbd or find_mariadbd()

    def install(work: Path) -> Path:
        datadir = work / "data"
        tool = find_tool("mariadb-install-db", "mysql_install_db", env="MARIADB_INSTALL_DB")
        cmd = [tool, "--no-defaults", f"--datadir={datadir}",
               "--auth-root-authentication-method=normal", "--skip-test-db",
               "--innodb-buffer-pool-size=32M"]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        # mariadb-install-db finds mariadbd via --basedir or its compiled-in path; give
        # it the directory layout of the binary we were asked to use when non-standard.
        if not mariadbd.startswith(("/usr/sbin/", "/usr/bin/")):
            cmd.append(f"--basedir={Path(mariadbd).resolve().parent.parent}")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not (datadir / "mysql").is_dir():
            raise MariaDBServerError(
                f"{' '.join(cmd)} failed (exit {proc.returncode}):\n"
                f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return datadir

    return cached_template(f"mariadb-{mariadbd_version(mariadbd)}", install)


class MariaDBServer(Harness, LocalProcess, KeptConnection):
    """A private ``mariadbd`` with binary logging, on 127.0.0.1:<free port> + a unix socket.

    ``options`` are extra server options as a dict (``binlog_row_image="MINIMAL"`` or
    ``"binlog-row-image": "MINIMAL"``); ``True``/``None`` gives a bare ``--flag``, ``False``
    drops a default. ``basedir``: where datadir, binlogs, socket and error log go (a new
    temp dir by default, removed by :meth:`cleanup` / on context exit unless ``keep``).
    """

    def __init__(self, options: Mapping[str, Any] | None = None, *, basedir: str | os.PathLike | None = None,
                 keep: bool = False, startup_timeout: float = 60.0, shutdown_timeout: float = 30.0,
                 mariadbd: str | None = None, binlog_basename: str = "mariadb-bin"):
        self.mariadbd = mariadbd or find_mariadbd()
        self.options: dict[str, Any] = dict(DEFAULT_OPTIONS)
        for k, v in (options or {}).items():
            self.options[_opt_key(k)] = v
        self._own_basedir = basedir is None
        self.basedir = Path(basedir) if basedir else Path(tempfile.mkdtemp(prefix="mariadb-test-"))
        self.basedir.mkdir(parents=True, exist_ok=True)
        self.datadir = self.basedir / "data"
        self.binlog_dir = self.basedir / "binlog"
        self.binlog_basename = binlog_basename
        self.socket = str(self.basedir / "mariadbd.sock")
        self.pid_file = self.basedir / "mariadbd.pid"
        self.error_log = self.basedir / "mariadbd.err"
        # A tmpdir of its own: at start-up mariadbd deletes every "#sql*" file in its
        # tmpdir (sql_base.cc mysql_rm_tmp_tables), which with the shared /tmp were the
        # internal temporary tables of the other servers running at that moment
        # ("Error on delete of '/tmp/#sql-temptable-...MAD'").
        self.tmpdir = self.basedir / "tmp"
        self.port: int | None = None
        self.keep = keep
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self._proc: subprocess.Popen | None = None
        self._conn: pymysql.connections.Connection | None = None
        self._version: str | None = None
        if len(self.socket) > 100:   # sun_path is 108 bytes
            raise MariaDBServerError(f"socket path too long for a unix socket: {self.socket}")

    # -- lifecycle ---------------------------------------------------------------------

    def command(self) -> list[str]:
        """The full ``mariadbd`` command line (port must be chosen already)."""
        args = [self.mariadbd, "--no-defaults"]
        if os.geteuid() == 0:
            args.append("--user=root")
        args += [
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={self.pid_file}",
            f"--log-bin={self.binlog_dir / self.binlog_basename}",
            f"--log-error={self.error_log}",
            f"--tmpdir={self.tmpdir}",
        ]
        for k, v in self.options.items():
            arg = _opt_arg(k, v)
            if arg:
                args.append(arg)
        return args

    def start(self) -> "MariaDBServer":
        """Start (or restart after :meth:`stop`) on the same datadir and binlogs."""
        if self.running:
            return self
        if not self.datadir.exists():
            shutil.copytree(template_datadir(self.mariadbd), self.datadir, symlinks=True)
        self.binlog_dir.mkdir(exist_ok=True)
        self.tmpdir.mkdir(exist_ok=True)
        last_err: Exception | None = None
        for attempt in range(3):            # a free port can be taken between probe and bind
            if self.port is None or attempt:
                self.port = free_port()
            try:
                self._spawn_and_wait()
                _live_servers.add(self)
                return self
            except MariaDBServerError as exc:
                last_err = exc
                if "Address already in use" not in self._log_tail():
                    break
        raise last_err  # type: ignore[misc]

    def _spawn_and_wait(self) -> None:
        log_start = self.error_log.stat().st_size if self.error_log.exists() else 0
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket)
        self._proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._proc.poll() is not None:
                rc = self._proc.returncode
                self._proc = None
                raise MariaDBServerError(
                    f"mariadbd exited with code {rc} during startup\n"
                    f"command: {' '.join(self.command())}\n"
                    f"error log tail ({self.error_log}):\n{self._log_tail(since=log_start)}")
            if os.path.exists(self.socket):
                try:
                    conn = self._raw_connect(connect_timeout=2)
                    conn.close()
                    return
                except pymysql.err.OperationalError:
                    pass
            if time.monotonic() > deadline:
                self._kill()
                raise MariaDBServerError(
                    f"mariadbd did not accept connections within {self.startup_timeout:.0f}s\n"
                    f"error log tail ({self.error_log}):\n{self._log_tail(since=log_start)}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Clean shutdown (``SHUTDOWN``/SIGTERM), bounded wait, then SIGKILL. Idempotent."""
        self._close_conn()
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                conn = self._raw_connect(connect_timeout=5)
                try:
                    conn.cursor().execute("SHUTDOWN")
                except pymysql.err.MySQLError:
                    pass
                finally:
                    with contextlib.suppress(Exception):
                        conn.close()
            except pymysql.err.MySQLError:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(self.shutdown_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    self._kill()
        self._proc = None
        _live_servers.discard(self)

    def restart(self) -> None:
        """Clean stop (the current binlog ends with a STOP event) and start again."""
        self.stop()
        self.start()

    def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        self._proc = None

    def cleanup(self) -> None:
        """Stop and, unless ``keep``, delete the server's directory."""
        self.stop()
        if self._own_basedir and not self.keep:
            shutil.rmtree(self.basedir, ignore_errors=True)

    def __del__(self) -> None:  # last resort: never leave a server behind
        with contextlib.suppress(Exception):
            self._kill()

    def _log_tail(self, lines: int = 40, since: int = 0) -> str:
        try:
            with open(self.error_log, "rb") as f:
                f.seek(since)
                data = f.read().decode("utf-8", "replace")
        except OSError:
            return "(no error log)"
        return "\n".join(data.splitlines()[-lines:])

    # -- SQL -------------------------------------------------------------------------------

    def _raw_connect(self, db: str | None = None, connect_timeout: float = 10,
                     **kw: Any) -> pymysql.connections.Connection:
        return pymysql.connect(unix_socket=self.socket, user="root", password="", database=db,
                               autocommit=True, charset="utf8mb4",
                               connect_timeout=connect_timeout, **kw)

    def connect(self, db: str | None = None, **kw: Any) -> pymysql.connections.Connection:
        """A new PyMySQL connection over the unix socket (user root, autocommit on)."""
        if not self.running:
            raise MariaDBServerError("server is not running")
        return self._raw_connect(db, **kw)

    def set_global(self, name: str, value: Any) -> None:
        """``SET GLOBAL name = value`` (value passed as a literal, strings quoted)."""
        if not _opt_key(name).replace("_", "").isalnum():
            raise ValueError(f"bad variable name {name!r}")
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        self.execute(f"SET GLOBAL {_opt_key(name)} = %s", (value,))

    def variable(self, name: str) -> Any:
        rows = self.query("SELECT @@GLOBAL." + _opt_key(name))
        return rows[0][0]

    def flush_logs(self) -> None:
        """``FLUSH BINARY LOGS``: close the current binlog (ROTATE) and open the next."""
        self.execute("FLUSH BINARY LOGS")

    def master_status(self) -> tuple[str, int]:
        row = self.query("SHOW MASTER STATUS")[0]
        return row[0], int(row[1])

    def binlog_names(self) -> list[str]:
        """Binlog file names from ``SHOW BINARY LOGS``, in index order."""
        return [r[0] for r in self.query("SHOW BINARY LOGS")]

    def binlog_files(self) -> list[Path]:
        """Absolute paths of the binlog files (``SHOW BINARY LOGS``), in index order."""
        return [self.binlog_dir / n for n in self.binlog_names()]

    def copied_to(self, directory: Path) -> bool:
        """Whether ``directory`` (a relay) holds every binlog file of the server at its
        full size."""
        for path in self.binlog_files():
            copy = Path(directory) / path.name
            if not copy.exists() or copy.stat().st_size != path.stat().st_size:
                return False
        return True

    @property
    def version(self) -> str:
        """``SELECT VERSION()``, e.g. ``10.11.19-MariaDB-0+deb12u1-log``."""
        if self._version is None:
            self._version = self.query("SELECT VERSION()")[0][0]
        return self._version

    # -- corpus tooling (samples/generate.py) ----------------------------------------------

    @property
    def source(self) -> str:
        """Where this server comes from, for the sample corpus's ``server.source``:
        ``local mariadbd (Debian package)`` when dpkg owns the binary."""
        try:
            proc = subprocess.run(["dpkg", "-S", str(Path(self.mariadbd).resolve())],
                                  capture_output=True, text=True)
            if proc.returncode == 0 and proc.stdout.strip():
                return "local mariadbd (Debian package)"
        except OSError:
            pass
        return f"local mariadbd ({self.mariadbd})"

    def copy_binlog(self, name: str, dest: str | os.PathLike) -> None:
        """Copy the binlog file ``name`` (as in SHOW BINARY LOGS) to ``dest``, byte exact."""
        shutil.copyfile(self.binlog_dir / name, dest)

    def dump_schema(self, databases: Iterable[str], *extra: str) -> str:
        """``mariadb-dump --no-data --skip-dump-date --databases DB...`` over the socket;
        returns the dump text exactly as the tool wrote it."""
        tool = find_tool("mariadb-dump", "mysqldump", env="MARIADB_DUMP")
        cmd = [tool, "--no-defaults", f"--socket={self.socket}", "--user=root",
               "--no-data", "--skip-dump-date", *extra, "--databases", *databases]
        proc = subprocess.run(cmd, capture_output=True)
        if proc.returncode != 0:
            raise MariaDBServerError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n"
                                     f"{proc.stderr.decode('utf-8', 'replace')[-2000:]}")
        return proc.stdout.decode("utf-8")


@atexit.register
def _stop_all() -> None:
    for srv in list(_live_servers):
        with contextlib.suppress(Exception):
            srv.stop()
