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

Which transaction it failed in comes from the failure itself, not from what it delivered:
the embedded engine drops the records still queued when its producer fails
(``ChangeEventQueue.poll`` throws the producer's error before draining), so transactions
read before the failure may be missing from its output.  When some are, the same start is
read again from a copy of the binlog that ends where the failed transaction begins,
served by its own ``binlog serve``: that run meets no failure and delivers them all.
"""
from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

from support.compat import Change, Run, Runner, Target, gtid_of_position, row_transactions, transactions
from support.debezium import Debezium, properties, server_text
from support.paths import write_index
from support.peers import build_peer
from support.serve_process import Serve

PEER = "debezium"
POM = Path(__file__).resolve().parents[1] / "debezium" / "pom.xml"
OPS = {"c": "insert", "u": "update", "d": "delete"}
LIMIT = 120.0           # seconds one run may take


def version() -> str:
    return re.search(r"<debezium.version>([^<]+)</debezium.version>", POM.read_text()).group(1)


def run(target: Target) -> Run:
    workdir = target.tmp / "debezium"
    history = workdir / "schema-history.dat"
    before = history.read_bytes() if history.exists() else None
    first = _attempt(target, workdir)
    if first.finished or not first.errors or first.errors[-1][0] is None:
        return first
    failed, message = first.errors[-1]
    if not _missing(first, target, failed):
        return first
    again = _attempt_on_prefix(target, failed, before)
    if not again.finished:
        return first
    again.errors.append((failed, message))
    again.finished = False
    return again


def _attempt(target: Target, workdir: Path) -> Run:
    """One run of the engine on ``target``, in ``workdir`` (offsets, schema history)."""
    jar = build_peer(PEER) / "debezium-runner.jar"
    attempt = len(list(workdir.glob("events-*.jsonl"))) if workdir.exists() else 0
    extra = {"topic.prefix": "cells", "database.include.list": "tc",
             "snapshot.mode": "configuration_based",
             "snapshot.mode.configuration.based.snapshot.schema": "false",
             "snapshot.mode.configuration.based.snapshot.data": "false",
             "snapshot.mode.configuration.based.start.stream": "true",
             # records reach the output within milliseconds (fewer runs on a prefix)
             "poll.interval.ms": "10",
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


def _missing(run: Run, target: Target, failed: str) -> bool:
    """Whether a transaction with rows between the start and the failed one gave no change
    (its records were still queued when the engine stopped)."""
    delivered = {c.gtid for c in run.changes}
    return any(g not in delivered for g in _row_transactions_after(target)
               if _seq(g) < _seq(failed))


def _attempt_on_prefix(target: Target, failed: str, history: bytes | None) -> Run:
    """The same start read from a copy of the binlog that ends where ``failed`` begins,
    served by a serve of its own, in a workdir holding the schema history as it was
    before the first attempt."""
    folder = target.tmp / f"prefix-{len(list(target.tmp.glob('prefix-*')))}"
    served = folder / "binlog"
    served.mkdir(parents=True)
    binlog = served / target.binlog.name
    binlog.write_bytes(target.binlog.read_bytes()[:dict(transactions(target.binlog))[failed]])
    write_index(served, [binlog.name])
    workdir = folder / "debezium"
    workdir.mkdir()
    if history is not None:
        (workdir / "schema-history.dat").write_bytes(history)
    serve = Serve(served, folder)
    try:
        return _attempt(replace(target, binlog=binlog, port=serve.port), workdir)
    finally:
        serve.stop()


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
        gtid = _failed_transaction(engine, end, result, target)
        if gtid is not None:
            result.changes = [c for c in result.changes if _before(c.gtid, gtid)]
        result.errors.append((gtid, _cause(end.get("error") or end.get("message") or "")))
        result.finished = False
    return result


def _failed_transaction(engine: Debezium, end: dict, result: Run, target: Target) -> str | None:
    """The transaction the connector failed in.  A deserialization failure names its event
    (``EventHeaderV4{... nextPosition=N ...}`` in the error's causes); a failure while
    handling an event is logged first by the binlog reader's own thread, with the offset
    of the transaction being read (``Last offset stored = {... gtids=G ...}``: G is the
    last transaction completed, BinlogStreamingChangeEventSource.logStreamingSourceState).
    Not what it delivered, nor the 'binlog reader near position' it logs: its client reads
    on after the failure, and the records still queued are dropped."""
    found = re.search(r"nextPosition=(\d+)", end.get("error") or "")
    if found:
        return gtid_of_position(target.binlog, int(found.group(1)))
    logged = re.search(r"Error during binlog processing\. Last offset stored = \{[^}]*\bgtids=([\d-]+)",
                       engine.log_path.read_text(errors="replace"))
    if logged:
        return next((name for name, _ in transactions(target.binlog) if _seq(name) > _seq(logged.group(1))), None)
    delivered = {c.gtid for c in result.changes}
    return next((g for g in _row_transactions_after(target) if g not in delivered), None)


def _row_transactions_after(target: Target) -> list[str]:
    """The transactions with rows after the start, in binlog order."""
    return [g for g in row_transactions(target.binlog)
            if target.start_after is None or _seq(g) > _seq(target.start_after)]


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
                  "its offsets (the failed transaction is the one its error names; the records its engine still "
                  "held when it failed are read again from a copy of the binlog that ends before that transaction). "
                  "Its values (DATETIME as epoch millis or micros, TIMESTAMP as an ISO string in "
                  "UTC, TIME as micros) are written as the server's text. Debezium gives a zero date as null "
                  "in any column format (a MySQL 5.6 one too): the DATETIME cells show that.")]
