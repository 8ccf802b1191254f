"""Debezium's MariaDB connector (tests/peers/debezium: the embedded engine) on the
compatibility page, network mode: it reads serve (``binlog serve --binlogs``, a serve
account, no upstream) from the start of the binlog with no snapshot
(``snapshot.mode=configuration_based``, schema and data off), so its schema comes from the
binlog's own DDL, as for a pipeline started on a binlog's first file.

Its values are turned into the server's text as tests/support/debezium.py says (DATETIME
as epoch milliseconds or microseconds, TIMESTAMP as an ISO string in UTC, TIME as
microseconds; the fraction written with six digits, which the page compares as a value).
A zero date is null in Debezium (``BinlogValueConverters``), in either binlog, and shown so.
After an error it is started again after the transaction it failed in, with that GTID
written into its offsets, as an operator skipping the transaction would.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

from support.compat import Change, Run, Runner, Target, row_transactions
from support.debezium import Debezium, properties, server_text
from support.peers import build_peer

PEER = "debezium"
POM = Path(__file__).resolve().parents[1] / "debezium" / "pom.xml"
OPS = {"c": "insert", "u": "update", "d": "delete"}
LIMIT = 120.0           # seconds one run may take


def version() -> str:
    return re.search(r"<debezium.version>([^<]+)</debezium.version>", POM.read_text()).group(1)


def run(target: Target) -> Run:
    jar = build_peer(PEER) / "debezium-runner.jar"
    workdir = target.tmp / "debezium"
    attempt = len(list(workdir.glob("events-*.jsonl"))) if workdir.exists() else 0
    extra = {"topic.prefix": "cells", "database.include.list": "tc",
             "snapshot.mode": "configuration_based",
             "snapshot.mode.configuration.based.snapshot.schema": "false",
             "snapshot.mode.configuration.based.snapshot.data": "false",
             "snapshot.mode.configuration.based.start.stream": "true",
             "heartbeat.interval.ms": "300", "connect.keep.alive.interval.ms": "1500"}
    if target.start_after:
        extra.update({"runner.offset.gtids": target.start_after, "runner.offset.file": target.binlog.name,
                      "runner.offset.pos": str(target.start_pos)})
    engine = Debezium(jar, properties(port=target.port, user=target.user, password=target.password,
                                      workdir=workdir, server_id=5601, **extra),
                      workdir, workdir / f"events-{attempt}.jsonl")
    try:
        _wait(engine, target)
        end = engine.completed() or engine.stop()
    finally:
        engine.kill()
    return _result(engine, end, target)


def _wait(engine: Debezium, target: Target) -> None:
    """Until the engine stops by itself, or a record's offset says it has read the whole
    binlog (a heartbeat's: Debezium makes one after any event once heartbeat.interval.ms
    has passed, serve's own heartbeats at the end included)."""
    deadline = time.monotonic() + LIMIT
    while engine.completed() is None and time.monotonic() < deadline:
        if any(_past_the_end(line.get("offset") or {}, target) for line in engine.lines()):
            return
        time.sleep(0.3)


def _past_the_end(offset: dict, target: Target) -> bool:
    """An offset at the binlog's end, or in a later file (its closing ROTATE names the next)."""
    file = offset.get("file") or ""
    return file > target.binlog.name or (file == target.binlog.name and offset.get("pos", 0) >= target.end)


def _result(engine: Debezium, end: dict, target: Target) -> Run:
    result = Run()
    for change in engine.changes():
        images = []
        for image in (change.before, change.after):
            images.append(None if image is None else
                          tuple(_text(value, change.fields[name]) for name, value in image.items()))
        result.changes.append(Change(f"{change.source['db']}.{change.table}", OPS.get(change.op, change.op),
                                     images[0], images[1], change.source.get("gtid")))
    if not end.get("success"):
        gtid = _failed_transaction(result, target)
        if gtid is not None:
            result.changes = [c for c in result.changes if _before(c.gtid, gtid)]
        result.errors.append((gtid, _cause(end.get("error") or end.get("message") or "")))
        result.finished = False
    return result


def _failed_transaction(result: Run, target: Target) -> str | None:
    """The first transaction with rows after the start that gave no change: the one the
    connector failed in.  Not the log's 'binlog reader near position': its binlog client
    reads on after the failure (failing on later events, delivering others) until the
    connector stops, so the positions it logs, and what it delivered after the failure,
    depend on timing; the changes after the failed transaction are dropped and read again
    by the run that starts after it."""
    delivered = {c.gtid for c in result.changes}
    rows = row_transactions(target.binlog)
    started = rows.index(target.start_after) + 1 if target.start_after in rows else 0
    if target.start_after and target.start_after not in rows:
        started = next((i for i, g in enumerate(rows) if _seq(g) > _seq(target.start_after)), len(rows))
    return next((g for g in rows[started:] if g not in delivered), None)


def _seq(gtid: str) -> int:
    """The sequence number: the corpus is one domain of one server, in order."""
    return int(gtid.rsplit("-", 1)[1])


def _before(gtid: str | None, failed: str) -> bool:
    return gtid is None or _seq(gtid) < _seq(failed)


def _text(value, schema: dict) -> str | None:
    try:
        return server_text(value, schema, 6)
    except ValueError:
        return str(value)      # not a value the server could have: shown as Debezium gave it


def _cause(chain: str) -> str:
    """The innermost cause of the runner's ``outer <- ... <- inner`` chain, without the
    exception's class."""
    inner = re.sub(r"^[\w.$]+(?:Exception|Error): ", "", chain.split(" <- ")[-1])
    # where its reader was in the connection's bytes (heartbeats included): not the binlog's
    return re.sub(r"^Failed to read next byte from position \d+$", "Failed to read next byte (past the event's end)",
                  inner)[:200]


RUNNERS = [Runner("Debezium", "network", version, run,
                  "The MariaDB connector in the embedded engine, from the binlog's start without a snapshot "
                  "(its schema from the binlog's DDL), restarted after a failed transaction with that GTID in "
                  "its offsets. Its values (DATETIME as epoch millis or micros, TIMESTAMP as an ISO string in "
                  "UTC, TIME as micros) are written as the server's text. Debezium gives a zero date as null "
                  "in any column format (a MySQL 5.6 one too): the DATETIME cells show that.")]
