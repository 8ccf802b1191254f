"""Test helpers for ``binlog serve``: a workload on a real source, a copy of its
binlogs as a served directory, and ``binlog serve`` in a child process."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.paths import write_index

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "serve-Pw1"


def workload(source, rows: int = 60) -> None:
    source.execute("CREATE DATABASE d")
    source.execute("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), ts DATETIME(3), n DECIMAL(10,2))")
    for i in range(rows):
        source.execute(f"INSERT INTO d.t VALUES ({i}, 'row {i}', '2021-02-03 04:05:06.{i % 1000:03d}', {i}.25)")
    source.execute("UPDATE d.t SET v = CONCAT(v, ' updated') WHERE id % 3 = 0")
    source.flush_logs()
    source.execute("DELETE FROM d.t WHERE id > 50")
    source.execute("CREATE TABLE d.big (id INT PRIMARY KEY, b LONGBLOB)")
    source.execute("INSERT INTO d.big VALUES (1, REPEAT('x', 300000))")


def copy_binlogs(source, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    names = source.binlog_names()
    for name in names:
        source.copy_binlog(name, directory / name)
    write_index(directory, names)


def rows(server, table: str = "d.t") -> list[tuple]:
    return server.query(f"SELECT id, CAST(v AS CHAR), CAST(ts AS CHAR), CAST(n AS CHAR) FROM {table} ORDER BY id")


class Serve:
    """``binlog serve`` in a child process on a free port (read from its first log line)."""

    def __init__(self, binlogs: Path | None, tmp: Path, *extra):
        users = tmp / "users"
        hashed = subprocess.run([sys.executable, "-m", "binlog.cli", "serve", "--hash-password"],
                                input=PASSWORD + "\n", capture_output=True, text=True, cwd=REPO, check=True)
        users.write_text(f"repl {hashed.stdout.strip()}\n")
        self.log_path = tmp / "serve.log"
        self.log = open(self.log_path, "a")
        listen = [] if "--listen" in extra else ["--listen", "127.0.0.1:0"]
        served = [] if binlogs is None else ["--binlogs", binlogs]
        self.proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "serve", *listen, *served,
                                      "--server-id", "100", "--users", users, *map(str, extra)],
                                     cwd=REPO, stderr=self.log, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            found = re.findall(r"listening on 127\.0\.0\.1:(\d+)", self.log_path.read_text())
            if found:
                self.port = int(found[-1])
                return
            assert self.proc.poll() is None, self.log_path.read_text()
            time.sleep(0.05)
        raise AssertionError("binlog serve did not start")

    def text(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.log.close()
        return code

    def rss_kb(self) -> int:
        """The serve process's peak resident memory (VmHWM)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1))


def follow_raw(serve: Serve, first: str, out: Path, **popen) -> subprocess.Popen:
    """mariadb-binlog --raw --stop-never following serve into ``out`` (a child to kill)."""
    return subprocess.Popen(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                             "--port", str(serve.port), "--user", "repl", f"--password={PASSWORD}",
                             "--raw", "--stop-never", "--result-file", f"{out}/", first], **popen)
