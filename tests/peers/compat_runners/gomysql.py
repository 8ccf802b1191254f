"""go-mysql as TiDB DM configures it (tests/peers/go-mysql, both pinned versions): file mode
(DM's relay-log reader) and network mode (DM's syncer, through serve).

go-mysql gives temporals as strings (ParseTime off, as DM leaves it): those strings are the
text compared; integers become their decimal text, binary values ({"hex": ...}) their UTF-8
text.  An error is go-mysql's own message, shortened to its cause (the panic it recovered,
without the event bytes it quotes)."""
from __future__ import annotations

import json
import re
import subprocess

from support.compat import Change, Run, Runner, Target, gtid_of_position
from support.peers import build_peer

VERSIONS = ("1.7.0", "1.16.0")


def binary(version: str) -> str:
    return str(build_peer(f"go-mysql-{version}") / "gomysql-peer")


def text(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and "hex" in value:
        return bytes.fromhex(value["hex"]).decode("utf-8", "replace")
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def short_error(message: str) -> str:
    """go-mysql's error without the event bytes it quotes (%q of the whole event)."""
    panic = re.search(r"(parse rows event panic [^\n]*?), data \"", message)
    if panic:
        return panic.group(1)
    first = re.split(r", [Dd]ata \"|\n", message, maxsplit=1)[0]
    return first[:200]


def parse(done: subprocess.CompletedProcess, target: Target) -> Run:
    """The peer's JSON lines as a Run.  An error's transaction is the one of the event its
    message names (``LogPos``: where that event ends): the syncer's streamer may hand the
    error over before the events queued ahead of it (a select over both channels)."""
    run = Run()
    last_gtid = None
    for line in done.stdout.splitlines():
        record = json.loads(line)
        if record["kind"] == "row":
            last_gtid = record["gtid"] or None
            image = {key: None if record[key] is None else tuple(text(v) for v in record[key])
                     for key in ("before", "after")}
            run.changes.append(Change(f"{record['schema']}.{record['table']}", record["op"], image["before"],
                                      image["after"], last_gtid))
        elif record["kind"] == "error":
            at = re.search(r"LogPos:0x([0-9a-f]+)", record["error"])
            gtid = gtid_of_position(target.binlog, int(at.group(1), 16)) if at else record["gtid"] or None
            run.errors.append((gtid, short_error(record["error"])))
            run.finished = False
    if done.returncode not in (0, 1) or (done.returncode == 1 and not run.errors):
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith(("panic:", "fatal error:"))]
        run.errors.append((None, (lines[0] if lines else f"exit {done.returncode}")[:200]))
        run.finished = False
    return run


def run_file(version: str):
    def run(target: Target) -> Run:
        done = subprocess.run([binary(version), "-mode", "file", "-offset", str(target.start_pos),
                               str(target.binlog)], capture_output=True, text=True, timeout=300)
        return parse(done, target)
    return run


def run_network(version: str):
    def run(target: Target) -> Run:
        start = (["-gtid", target.start_after] if target.start_after
                 else ["-file", target.binlog.name, "-pos", str(target.start_pos)])
        done = subprocess.run([binary(version), "-mode", "network", "-host", target.host,
                               "-port", str(target.port), "-user", target.user, *start,
                               "-stop-file", target.binlog.name, "-stop-pos", str(target.end),
                               "-timeout", "60s"], capture_output=True, text=True, timeout=300,
                              env={"GOMYSQL_PEER_PASSWORD": target.password, "PATH": "/usr/bin:/bin"})
        return parse(done, target)
    return run


RUNNERS = [runner for version in VERSIONS for runner in (
    Runner("go-mysql", "file", lambda v=version: f"v{v}", run_file(version),
           "DM's relay-log reader (BinlogParser.ParseReader)"),
    Runner("go-mysql", "network", lambda v=version: f"v{v}", run_network(version),
           "DM's syncer (BinlogSyncer, by position; resumed by GTID)"),
)]
