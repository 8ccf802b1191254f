"""``mariadb-binlog -vv --base64-output=decode-rows`` (the MariaDB server package's), on a
file and with ``--read-from-remote-server`` through serve, from the transaction's position.

Its row images are parsed from the ``### INSERT/UPDATE/DELETE`` blocks; each value's type
comes from its own ``/* TYPE(N) ... */`` comment (-vv).  Values become text as the server
writes them: a quoted value unquoted, NULL as null, a TIMESTAMP (printed as seconds since
the epoch, the fraction as printed) as the UTC date and time with the same fraction, 0 being
the zero date.  It stops on a legacy column with exit status 1 and no message; the message
shown is then its exit status."""
from __future__ import annotations

import re
import subprocess
from datetime import datetime, timezone

from support.compat import Change, Run, Runner, Target
from support.mariadb_server import find_tool, mariadbd_version

_GTID = re.compile(r"\tGTID (\d+-\d+-\d+)")
_STATEMENT = re.compile(r"### (INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\.`([^`]*)`")
_VALUE = re.compile(r"###   @(\d+)=(.*?)(?: /\* (\w+)(?:\((\d+)\))? [^*]*\*/)?$")
OPS = {"INSERT INTO": "insert", "UPDATE": "update", "DELETE FROM": "delete"}


def tool() -> str:
    return find_tool("mariadb-binlog", "mysqlbinlog")


def version() -> str:
    """``Ver 3.5`` of the MariaDB package it came with: ``3.5 (MariaDB 10.11.19)``."""
    out = subprocess.run([tool(), "--version"], capture_output=True, text=True).stdout
    found = re.search(r"Ver (\S+)", out)
    server = re.match(r"[\d.]+", mariadbd_version())
    return f"{found.group(1) if found else out.strip()} (MariaDB {server.group(0) if server else '?'})"


def value_text(raw: str, kind: str | None):
    if raw == "NULL":
        return None
    if raw.startswith("'") and raw.endswith("'"):
        return raw[1:-1].replace("\\'", "'").replace("\\\\", "\\")
    if kind == "TIMESTAMP":
        whole, _, frac = raw.partition(".")
        if int(whole) == 0:
            stamp = "0000-00-00 00:00:00"
        else:
            stamp = datetime.fromtimestamp(int(whole), timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return stamp + (f".{frac}" if frac else "")
    return raw


def parse(output: str) -> list[Change]:
    """The row changes of mariadb-binlog's -vv output."""
    changes = []
    gtid = None
    table = op = None
    images: dict[str, list] = {}
    current: list | None = None

    def flush():
        if op is not None:
            before = tuple(images["WHERE"]) if "WHERE" in images else None
            after = tuple(images["SET"]) if "SET" in images else None
            changes.append(Change(table, op, before, after, gtid))

    for line in output.splitlines():
        found = _GTID.search(line)
        if found and not line.startswith("###"):
            gtid = found.group(1)
            continue
        statement = _STATEMENT.match(line)
        if statement:
            flush()
            op, table = OPS[statement.group(1)], f"{statement.group(2)}.{statement.group(3)}"
            images, current = {}, None
        elif line in ("### SET", "### WHERE"):
            current = images.setdefault(line[4:], [])
        elif line.startswith("###   @") and current is not None:
            match = _VALUE.match(line)
            if match:
                current.append(value_text(match.group(2), match.group(3)))
        elif not line.startswith("###"):
            flush()
            op = None
    flush()
    return changes


def result(done: subprocess.CompletedProcess) -> Run:
    run = Run(changes=parse(done.stdout))
    if done.returncode != 0:
        gtids = _GTID.findall(done.stdout)
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else \
            f"exit status {done.returncode}, no message"
        run.errors.append((gtids[-1] if gtids else None, message[:300]))
        run.finished = False
    return run


def run_file(target: Target) -> Run:
    return result(subprocess.run([tool(), "-vv", "--base64-output=decode-rows", f"--start-position={target.start_pos}",
                                  str(target.binlog)], capture_output=True, text=True, timeout=300))


def run_remote(target: Target) -> Run:
    return result(subprocess.run([tool(), "--read-from-remote-server", f"--host={target.host}", f"--port={target.port}",
                                  f"--user={target.user}", f"--password={target.password}", "-vv",
                                  "--base64-output=decode-rows", f"--start-position={target.start_pos}",
                                  target.binlog.name], capture_output=True, text=True, timeout=300))


RUNNERS = [
    Runner("mariadb-binlog -v", "file", version, run_file,
           "`mariadb-binlog -vv --base64-output=decode-rows FILE`; a TIMESTAMP (seconds since the epoch) "
           "written as the UTC date and time"),
    Runner("mariadb-binlog -v", "network", version, run_remote,
           "`mariadb-binlog --read-from-remote-server -vv` through serve; values as in file mode"),
]
