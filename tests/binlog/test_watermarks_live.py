"""Watermark records on live streams (binlog.watermarks), against a real server.

What each watermark claims - every change the server committed up to its file:pos came
before it - is checked against the server's own binlog (SHOW BINLOG EVENTS: where each
transaction's GTID starts and its XID/COMMIT ends), and its time against the server's
clock (UNIX_TIMESTAMP()); never against our own decoding of the same binlog."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[2]


def dsn(server) -> str:
    return f"mysql://root@localhost/?unix_socket={server.socket}"


class Reader:
    """``binlog dump --from ... --stop-never`` in the background; its complete lines,
    as JSON, in arrival order (a line cut by a kill -9 is not one)."""

    def __init__(self, server, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "binlog.cli", "dump", "--from", dsn(server), "--server-id", "51",
             "--stop-never", "--heartbeat", "1", *args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[dict] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            if raw.endswith(b"\n"):
                self.lines.append(json.loads(raw))

    def watermarks(self, idle: bool | None = None) -> list[dict]:
        return [r for r in list(self.lines) if r.get("op") == "watermark"
                and (idle is None or r["idle"] is idle)]

    def wait(self, condition, timeout: float = 60, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.1)

    def stop(self, sig=signal.SIGTERM) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)
        self._thread.join(10)
        return self.proc.stderr.read().decode()


def transactions(server) -> list[dict]:
    """Every transaction of the server's binlogs, in order: its GTID, file, the offset of
    its GTID event and the end of the event that commits it (SHOW BINLOG EVENTS)."""
    out = []
    for name in server.binlog_names():
        current = None
        for _log, pos, kind, _sid, end, info in server.query(f"SHOW BINLOG EVENTS IN '{name}'"):
            if kind == "Gtid":
                current = {"gtid": info.split()[-1], "file": name, "start": pos,
                           "explicit": info.startswith("BEGIN")}
            elif current is not None and (kind == "Xid" or kind.startswith("Query") and (
                    not current["explicit"] or info.strip().upper() in ("COMMIT", "ROLLBACK"))):
                current["end"] = end
                out.append(current)
                current = None
    return out


def key(file: str, pos: int) -> tuple:
    return int(file.rsplit(".", 1)[1]), pos


def check_complete_before(lines: list[dict], txs: list[dict]) -> int:
    """Each watermark: every transaction that ends at or before it is in the lines
    before it, and it does not stand inside a transaction.  Returns how many were seen."""
    seen: set[str] = set()
    marks = 0
    for line in lines:
        if line.get("op") != "watermark":
            if line.get("gtid"):
                seen.add(line["gtid"])
            continue
        marks += 1
        at = key(line["file"], line["pos"])
        for tx in txs:
            if key(tx["file"], tx["end"]) <= at:
                assert tx["gtid"] in seen, f"{tx['gtid']} (ends {tx['end']}) after {line}"
            assert not key(tx["file"], tx["start"]) < at < key(tx["file"], tx["end"]), \
                f"{line} inside {tx}"
    return marks


def insert(server, first: int, count: int, pause: float = 0.0) -> None:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for i in range(first, first + count):
                cur.execute("BEGIN")
                cur.execute("INSERT INTO wm.t VALUES (%s, %s)", (i, f"row {i}"))
                cur.execute("INSERT INTO wm.u VALUES (%s, %s)", (i, i * 7))
                cur.execute("COMMIT")
                if pause:
                    time.sleep(pause)
    finally:
        conn.close()


@pytest.fixture
def server(mariadb_factory):
    srv = mariadb_factory({"binlog_row_metadata": "FULL"})
    srv.execute("CREATE DATABASE wm")
    srv.execute("CREATE TABLE wm.t (a INT PRIMARY KEY, b VARCHAR(40))")
    srv.execute("CREATE TABLE wm.u (k INT PRIMARY KEY, v BIGINT)")
    insert(srv, 0, 20)
    return srv


def server_clock(server) -> int:
    return int(server.query("SELECT UNIX_TIMESTAMP()")[0][0])


def epoch(iso: str) -> int:
    return int(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


@pytest.mark.slow
def test_idle_then_busy(server):
    """Idle for 10 s: a watermark at each heartbeat, its ts the server's clock moving on;
    then busy: watermarks between transactions only, each after every transaction that
    ends at or before it in the server's binlog."""
    reader = Reader(server, "--watermark-interval", "0.2")
    try:
        reader.wait(lambda: reader.watermarks(idle=True), what="the first idle watermark")
        before = server_clock(server)
        time.sleep(10)
        after = server_clock(server)
        idle = reader.watermarks(idle=True)
        insert(server, 100, 300)
        end = server.query("SHOW MASTER STATUS")[0]
        reader.wait(lambda: any(key(w["file"], w["pos"]) == key(end[0], int(end[1]))
                                for w in reader.watermarks(idle=True)), what="caught up")
    finally:
        reader.stop()
    # idle: one per heartbeat (1 s), none of them moving, ts advancing with the server's clock
    assert len(idle) >= 8, idle
    assert len({(w["file"], w["pos"]) for w in idle}) == 1
    times = [epoch(w["ts"]) for w in idle]
    assert times == sorted(times) and times[-1] - times[0] >= 7, times
    in_window = [t for t in times if before - 1 <= t <= after + 1]
    assert len(in_window) >= 8, (before, after, times)
    # busy: some at transaction ends (interval 0.2 s), all complete before
    lines = list(reader.lines)
    txs = transactions(server)
    assert len(txs) == 3 + 20 + 300
    assert check_complete_before(lines, txs) >= 10
    busy = [w for w in reader.watermarks(idle=False)]
    ends = {(tx["file"], tx["end"]): tx["gtid"] for tx in txs}
    assert busy and all((w["file"], w["pos"]) in ends for w in busy)
    # the GTID of a watermark at a transaction's end is that transaction's
    assert all(ends[(w["file"], w["pos"])] == w["gtid"] for w in busy)
    marks = reader.watermarks()
    assert [epoch(w["ts"]) for w in marks] == sorted(epoch(w["ts"]) for w in marks)


def test_resume_from_the_last_watermark(server):
    """A reader killed -9 mid-stream and started again at its last watermark's GTID: the
    lines before that watermark plus the new run's give every transaction of the server's
    binlog once, and the rows the server has."""
    stop = threading.Event()

    def busy():
        i = 1000
        while not stop.is_set():
            insert(server, i, 5, pause=0.01)
            i += 5

    first = Reader(server, "--watermark-interval", "0.1")
    writer = threading.Thread(target=busy, daemon=True)
    writer.start()
    try:
        first.wait(lambda: len(first.watermarks(idle=False)) >= 5, what="busy watermarks")
        first.stop(signal.SIGKILL)
        lines = list(first.lines)
        last = max(i for i, r in enumerate(lines) if r.get("op") == "watermark")
        mark, kept = lines[last], lines[:last]
        second = Reader(server, "--watermark-interval", "0.1", "--start-gtid", mark["gtid"])
        time.sleep(1.0)
    finally:
        stop.set()
        writer.join(30)
    try:
        end = server.query("SHOW MASTER STATUS")[0]
        second.wait(lambda: any(key(w["file"], w["pos"]) == key(end[0], int(end[1]))
                                for w in second.watermarks(idle=True)), what="caught up")
    finally:
        second.stop()
    assert len(kept) < len(lines), "the kill came after the last watermark's lines"
    after = second.lines
    combined = kept + after
    rows = [r for r in combined if r.get("op") in ("insert", "update", "delete")]
    # every transaction of the server's binlog once, in its order
    txs = transactions(server)
    gtids = []
    for r in combined:
        if r.get("gtid") and r.get("op") != "watermark" and (not gtids or gtids[-1] != r["gtid"]):
            gtids.append(r["gtid"])
    assert gtids == [tx["gtid"] for tx in txs]
    # and the rows the server has
    got = sorted(r["after"]["a"] for r in rows if r["table"] == "t")
    assert got == [a for (a,) in server.query("SELECT a FROM wm.t ORDER BY a")]
    assert len(got) > 20
    assert check_complete_before(after, [tx for tx in txs
                                         if key(tx["file"], tx["end"]) > key(mark["file"], mark["pos"])])


def test_debezium_heartbeat_records(server):
    """--format debezium: a watermark is the connector's heartbeat record, with its
    topic, key, value and source offset (where everything before it ends)."""
    reader = Reader(server, "--format", "debezium")
    try:
        reader.wait(lambda: sum("topic" in r for r in reader.lines) >= 2, what="heartbeats")
    finally:
        reader.stop()
    file, pos = server.query("SHOW MASTER STATUS")[0][:2]
    gtid_pos = server.query("SELECT @@gtid_binlog_pos")[0][0]
    beats = [r for r in reader.lines if "topic" in r]
    changes = [r for r in reader.lines if "topic" not in r]
    assert len(changes) == 3 + 40          # three DDL, 20 transactions of two rows
    last = beats[-1]
    assert set(last) == {"topic", "key", "value", "sourcePartition", "sourceOffset"}
    assert last["topic"] == "__debezium-heartbeat.binlog"
    assert last["key"] == {"serverName": "binlog"}
    assert last["sourcePartition"] == {"server": "binlog"}
    assert set(last["value"]) == {"ts_ms"} and last["value"]["ts_ms"] % 1000 == 0
    assert last["sourceOffset"] == {"ts_sec": last["value"]["ts_ms"] // 1000, "file": file,
                                    "pos": int(pos), "gtids": gtid_pos}
    assert abs(last["sourceOffset"]["ts_sec"] - server_clock(server)) <= 5
    # each after every transaction that ends at or before its offset
    as_json = [{"op": "watermark", "file": r["sourceOffset"]["file"], "pos": r["sourceOffset"]["pos"]}
               if "topic" in r else {"gtid": r["source"]["gtid"]} for r in reader.lines]
    assert check_complete_before(as_json, transactions(server)) == len(beats)


def test_library_records_yield_watermarks(server):
    from binlog import BinlogReader
    from binlog.sources.server import ServerOptions, ServerSource
    from binlog.watermarks import Watermark

    source = ServerSource(ServerOptions(dsn(server), 52, heartbeat=1), blocking=True)
    records = BinlogReader(source, watermark_interval=60).records()
    seen = []
    for record in records:
        seen.append(record)
        if isinstance(record, Watermark) and record.idle:
            break
    records.close()
    marks = [r for r in seen if isinstance(r, Watermark)]
    file, pos = server.query("SHOW MASTER STATUS")[0][:2]
    assert (marks[-1].file, marks[-1].pos, marks[-1].gtid) == (file, int(pos),
                                                               server.query("SELECT @@gtid_binlog_pos")[0][0])
    # interval 60 s: one at the first transaction end, then none until the heartbeat
    assert len(marks) == 2 and not marks[0].idle
    assert sum(1 for r in seen if getattr(r, "op", None) == "insert") == 40


def test_off_by_default_for_files_and_with_no_watermarks(server):
    files = [str(f) for f in server.binlog_files()]
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *files], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and '"watermark"' not in done.stdout
    reader = Reader(server, "--no-watermarks")
    try:
        reader.wait(lambda: len(reader.lines) >= 43, what="the changes")
        time.sleep(2.5)         # two heartbeats
    finally:
        reader.stop()
    assert not reader.watermarks() and len(reader.lines) == 43
    bad = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--from", dsn(server),
                          "--server-id", "51", "--no-watermarks", "--watermark-interval", "1"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "contradict" in bad.stderr


@pytest.mark.slow
def test_apply_checkpoint_time(mariadb_factory, server):
    """apply --from: the checkpoint's source_ts is the source's clock at its last
    watermark, moving on while the source is idle."""
    target = mariadb_factory({})
    # a checkpoint table as earlier versions made it: source_ts is added to it
    target.execute("CREATE DATABASE binlog_apply")
    target.execute("""CREATE TABLE binlog_apply.checkpoint (
  name VARCHAR(64) NOT NULL PRIMARY KEY, binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL, gtid VARCHAR(255) NULL, gtid_pos TEXT NULL,
  resume_file VARCHAR(255) NOT NULL, resume_pos BIGINT UNSIGNED NOT NULL,
  transactions BIGINT UNSIGNED NOT NULL DEFAULT 0, row_changes BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))""")
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--from", dsn(server),
                             "--server-id", "53", "--stop-never", "--heartbeat", "1",
                             "--to", dsn(target)], cwd=REPO, stderr=subprocess.PIPE, text=True)

    def checkpoint():
        try:
            rows = target.query("SELECT UNIX_TIMESTAMP(source_ts), transactions "
                                "FROM binlog_apply.checkpoint WHERE name = 'default'")
        except Exception:       # noqa: BLE001 - the table is not there yet
            return None
        return rows[0] if rows else None

    try:
        deadline = time.monotonic() + 60
        while not (checkpoint() and checkpoint()[0] is not None and checkpoint()[1] == 23):
            assert proc.poll() is None and time.monotonic() < deadline, f"apply: {checkpoint()}"
            time.sleep(0.2)
        first = int(checkpoint()[0])
        time.sleep(4)
        later = int(checkpoint()[0])
        now = server_clock(server)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert later - first >= 2 and now - 3 <= later <= now
