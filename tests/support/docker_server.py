"""A real MariaDB (or MySQL) server in Docker, for rebuilding the sample corpus with other
server versions (``samples/generate.py --server docker:mariadb:10.0``).

The server is one service of ``docker/compose.yml`` started through testcontainers'
``DockerCompose``; it offers the same small interface the corpus generator uses from
:class:`support.mariadb_server.MariaDBServer`: ``options``, ``version``, ``source``,
``connect()``, ``restart()``, ``flush_logs()``, ``binlog_names()``, ``copy_binlog()``,
``dump_schema()``, and the context manager.

Differences from the local server, all because the compose file fixes each service's
command line (``--log-bin=mariadb-bin --server-id=1 --binlog-format=ROW ...``):

- a case's server options are applied with ``SET GLOBAL`` after start (and again after
  every restart); options that are not variables of that server, or not dynamic, are
  reported in :attr:`DockerServer.unsupported_options` instead;
- before the case runs, ``RESET MASTER`` empties the binlog (the image's entrypoint may
  have written to it while initialising);
- binlog files are copied out of the container byte for byte with ``docker compose cp``;
- the schema dump is made by the container's own ``mariadb-dump``/``mysqldump``, so a 10.0
  or 10.1 dump is a real dump of that version.

Nothing is tried when no Docker engine is reachable: :class:`DockerUnavailableError` says
so before anything starts.
"""
from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import pymysql

from .sql_harness import Harness

REPO = Path(__file__).resolve().parents[2]
COMPOSE_DIR = REPO / "docker"
COMPOSE_FILE = "compose.yml"

#: Options of the local harness that are start-up only or fixed by the compose file.
STARTUP_ONLY = {"server_id", "innodb_buffer_pool_size", "skip_name_resolve", "log_bin",
                "log_bin_basename"}


class DockerServerError(RuntimeError):
    """The container could not be started, queried or stopped."""


class DockerUnavailableError(DockerServerError):
    """No Docker engine (or no docker compose CLI, or no testcontainers) here."""


def compose_services(compose_dir: Path = COMPOSE_DIR, compose_file: str = COMPOSE_FILE
                     ) -> dict[str, dict]:
    """``{service name: service dict}`` of the compose file."""
    import yaml  # PyYAML: a dependency of testcontainers' compose support

    data = yaml.safe_load((compose_dir / compose_file).read_text(encoding="utf-8"))
    return dict(data.get("services") or {})


def resolve_service(spec: str, compose_dir: Path = COMPOSE_DIR,
                    compose_file: str = COMPOSE_FILE) -> tuple[str, str]:
    """``"mariadb:10.0"`` (an image), ``"docker:mariadb:10.0"`` or ``"mariadb-10.0"`` (a
    service name) -> ``(service, image)``; a clear error for anything else."""
    if spec.startswith("docker:"):
        spec = spec[len("docker:"):]
    services = compose_services(compose_dir, compose_file)
    if spec in services:
        return spec, services[spec].get("image", "")
    for name, svc in services.items():
        if svc.get("image") == spec:
            return name, spec
    choices = ", ".join(f"{svc.get('image')} (service {name})" for name, svc in services.items())
    raise DockerServerError(f"{spec!r} is neither an image nor a service of "
                            f"{compose_dir / compose_file}; choose one of: {choices}")


def check_docker() -> None:
    """Raise :class:`DockerUnavailableError` with the reason unless a Docker engine and the
    ``docker compose`` CLI are usable."""
    try:
        import testcontainers.compose  # noqa: F401

        import docker
    except ImportError as exc:
        raise DockerUnavailableError(
            f"the Docker path needs the Python packages testcontainers and docker ({exc}); "
            "pip install 'testcontainers[compose]'") from exc
    if not shutil.which("docker"):
        raise DockerUnavailableError(
            "no `docker` CLI on PATH: testcontainers drives `docker compose`; install the "
            "Docker CLI with the compose plugin, or use the local server (no --server)")
    try:
        client = docker.from_env(timeout=5)
        client.ping()
    except Exception as exc:   # docker.errors.DockerException, connection errors
        raise DockerUnavailableError(
            f"no Docker engine reachable ({type(exc).__name__}: {exc}); start one, or set "
            "DOCKER_HOST, or use the local server (no --server)") from exc
    proc = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise DockerUnavailableError("`docker compose` is not available (the compose v2 "
                                     f"plugin is needed): {proc.stderr.strip()[-300:]}")


class DockerServer(Harness):
    """One compose service of docker/compose.yml, started for one case."""

    port_in_container = 3306

    def __init__(self, spec: str, options: Mapping[str, Any] | None = None, *,
                 compose_dir: Path = COMPOSE_DIR, compose_file: str = COMPOSE_FILE,
                 startup_timeout: float = 180.0, keep: bool = False):
        self.service, self.image = resolve_service(spec, compose_dir, compose_file)
        self.compose_dir, self.compose_file = compose_dir, compose_file
        self.options: dict[str, Any] = {"server_id": 1, "binlog_format": "ROW"}
        for k, v in (options or {}).items():
            self.options[k.strip().lstrip("-").replace("-", "_")] = v
        self.unsupported_options: dict[str, Any] = {}
        self.startup_timeout = startup_timeout
        self.keep = keep
        self.binlog_basename = "mariadb-bin"
        self._compose = None
        self._version: str | None = None
        self._datadir: str | None = None

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def source(self) -> str:
        return f"docker:{self.image}"

    def _cmd(self, *args: str) -> list[str]:
        return [*self._compose.compose_command_property, *args]

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(self._cmd(*args), cwd=self.compose_dir, capture_output=True)
        if check and proc.returncode != 0:
            raise DockerServerError(f"{' '.join(self._cmd(*args))} failed "
                                    f"({proc.returncode}): "
                                    f"{proc.stderr.decode('utf-8', 'replace')[-1500:]}")
        return proc

    def start(self) -> "DockerServer":
        check_docker()
        from testcontainers.compose import DockerCompose

        self._compose = DockerCompose(context=str(self.compose_dir),
                                      compose_file_name=self.compose_file,
                                      services=[self.service], wait=False)
        self._compose.start()
        self._wait_ready()
        if self.image.startswith("mysql"):
            raise DockerServerError(
                f"{self.image}: the sample generator records MariaDB GTIDs "
                "(@@gtid_binlog_pos, @@last_gtid); MySQL servers are not supported yet")
        self._apply_options(initial=True)
        with self._admin() as cur:
            cur.execute("RESET MASTER")
        return self

    def _host_port(self) -> tuple[str, int]:
        host, port = self._compose.get_service_host_and_port(self.service,
                                                             self.port_in_container)
        if not host or host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return host, int(port)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                conn = self._raw_connect(connect_timeout=3)
                conn.close()
                return
            except Exception as exc:   # not published yet, entrypoint's init server, ...
                last = exc
                time.sleep(1)
        logs = ""
        with contextlib.suppress(Exception):
            logs = self._compose.get_logs(self.service)[0][-3000:]
        raise DockerServerError(f"{self.service} ({self.image}) did not accept connections "
                                f"within {self.startup_timeout:.0f}s: {last}\n{logs}")

    def _apply_options(self, initial: bool = False) -> None:
        """SET GLOBAL every case option that is a dynamic variable of this server."""
        with self._admin() as cur:
            for name, value in self.options.items():
                if name in STARTUP_ONLY:
                    continue
                cur.execute("SELECT COUNT(*) FROM information_schema.GLOBAL_VARIABLES "
                            "WHERE VARIABLE_NAME = %s", (name.upper(),))
                if not cur.fetchone()[0]:
                    self.unsupported_options[name] = value
                    continue
                if value is True:
                    value = "ON"
                elif value is False:
                    value = "OFF"
                cur.execute(f"SELECT @@GLOBAL.{name}")
                if str(cur.fetchone()[0]).upper() == str(value).upper():
                    continue     # e.g. binlog_checksum: setting it rotates the binlog
                try:
                    cur.execute(f"SET GLOBAL {name} = %s", (value,))
                except pymysql.err.MySQLError as exc:
                    if initial:
                        self.unsupported_options[name] = f"{value} (SET GLOBAL failed: {exc})"

    def stop(self) -> None:
        if self._compose is not None:
            with contextlib.suppress(Exception):
                self._compose.stop(down=not self.keep)
            self._compose = None

    def restart(self) -> None:
        """Clean shutdown (SIGTERM: the binlog ends with STOP) and start again; the case's
        SET GLOBAL options are applied again (a restart resets them)."""
        self._run("restart", "-t", "60", self.service)
        self._wait_ready()
        self._apply_options()

    def cleanup(self) -> None:
        self.stop()

    # -- SQL ---------------------------------------------------------------------------

    def _raw_connect(self, db: str | None = None, connect_timeout: float = 10,
                     **kw: Any) -> pymysql.connections.Connection:
        host, port = self._host_port()
        return pymysql.connect(host=host, port=port, user="root", password="", database=db,
                               autocommit=True, charset="utf8mb4",
                               connect_timeout=connect_timeout, **kw)

    def connect(self, db: str | None = None, **kw: Any) -> pymysql.connections.Connection:
        return self._raw_connect(db, **kw)

    @contextlib.contextmanager
    def _admin(self):
        conn = self._raw_connect()
        try:
            with conn.cursor() as cur:
                yield cur
        finally:
            conn.close()

    def query(self, sql: str, args: Iterable[Any] | None = None) -> list[tuple]:
        with self._admin() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def execute(self, sql: str, args: Iterable[Any] | None = None) -> int:
        with self._admin() as cur:
            return cur.execute(sql, args)

    def flush_logs(self) -> None:
        self.execute("FLUSH BINARY LOGS")

    def binlog_names(self) -> list[str]:
        return [r[0] for r in self.query("SHOW BINARY LOGS")]

    @property
    def version(self) -> str:
        if self._version is None:
            self._version = self.query("SELECT VERSION()")[0][0]
        return self._version

    def copy_binlog(self, name: str, dest: str | Path) -> None:
        if self._datadir is None:
            self._datadir = self.query("SELECT @@datadir")[0][0].rstrip("/")
        self._run("cp", f"{self.service}:{self._datadir}/{name}", str(dest))

    def dump_schema(self, databases: Iterable[str], *extra: str) -> str:
        """The container's own dump tool (``mariadb-dump``, or ``mysqldump`` on old
        images): ``--no-data --skip-dump-date --databases DB...``."""
        dbs = " ".join("'" + d.replace("'", "'\\''") + "'" for d in databases)
        args = " ".join(extra)
        script = ("tool=$(command -v mariadb-dump || command -v mysqldump) && "
                  f"exec \"$tool\" --no-defaults --user=root --no-data --skip-dump-date "
                  f"{args} --databases {dbs}")
        proc = self._run("exec", "-T", self.service, "sh", "-c", script)
        return proc.stdout.decode("utf-8")
