"""Debezium's MariaDB connector (the ``debezium`` peer: the embedded engine, file offsets,
file schema history) through ``binlog serve --upstream --relay`` in front of a MariaDB 10.11
source whose tables were created with mysql56_temporal_format=OFF (every legacy type, N =
0..6, edge values, UPDATE/DELETE, an ALTER mid-stream, compressed events):

- its snapshot (``snapshot.mode=initial``, taken through serve: the queries run on the
  source in Debezium's own session) and its streaming, by MariaDB GTID and by binlog file
  and position, give every value the source has (``CAST(col AS CHAR)``), compared through
  the rules of tests/support/debezium.py (DATETIME as epoch millis or micros, TIMESTAMP as
  an ISO string in UTC, TIME as micros, zero dates as null);
- every statement it sends, on its JDBC connections and its binlog connection, is answered
  by serve or run on the source in its session (the list is kept in
  tests/peers/sent/debezium.tsv: a Debezium that sends something new fails here);
- straight on the source it loses rows: the compressed events are skipped without a word,
  and the legacy columns of uncompressed ones stop it with an error.

The restart test (slow) restarts Debezium, serve and the source under a write load.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pymysql
import pytest
from support.debezium import Change, Debezium, matches, properties
from support.legacy_workload import WORKLOAD, server_rows
from support.mariadb_server import MariaDBServer, find_tool, require_mariadbd
from support.serve_process import Serve
from support.wire_capture import Capture

pytestmark = pytest.mark.server

STATEMENTS = Path(__file__).resolve().parents[2] / "peers" / "sent" / "debezium.tsv"
USER, PASSWORD = "dbz", "dbz-Pw1"
DIRECT_USER = "dbz_direct"      # Debezium straight on the source: another account, so the
                                # source's general log tells its statements from the others
#: the privileges Debezium's documentation asks for (MariaDB: BINLOG MONITOR is REPLICATION CLIENT)
GRANTS = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR, LOCK TABLES"
TABLES = ("leg", "big", "conv")
SNAPSHOT = 8            # WORKLOAD[:8] runs before Debezium starts: its snapshot has leg and big
ALTER = 13              # WORKLOAD[8:13] in compressed events, the rest (from the ALTER on) not
STATEMENTS_HEADER = """\
# Every statement and command Debezium's MariaDB connector (tests/peers/debezium) sent to
# binlog serve in tests/binlog/serve/test_debezium_through_serve.py (its JDBC connections and its binlog
# connection, GTID lists as '<gtid>'), and who answered it: serve itself, or the upstream
# in Debezium's own session.  BINLOG_UPDATE_GOLDEN=1 writes this file again.
"""
_DML = re.compile(r"\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I)


@dataclass
class Pipeline:
    source: MariaDBServer
    serve: Serve
    tmp: Path
    capture: Capture
    snapshot: dict[str, tuple[list[str], list[tuple]]]     # table -> the source's rows at the snapshot
    counts: Counter                                      # (table, op) -> rows the source changed after it
    compressed: Counter                                  # ... of which in compressed events
    changes: list[Change]                                # Debezium's through serve
    direct: list[Change]                                 # Debezium's straight from the source
    direct_end: dict                                     # ... and how that engine ended
    sent: list[tuple[str, str]]                          # (user, statement) the source received


def legacy_source(tmp, **options) -> MariaDBServer:
    require_mariadbd()
    source = MariaDBServer({"server_id": 1, **options}, basedir=tmp / "source")
    source.start()
    source.set_global("mysql56_temporal_format", "OFF")
    for user in (USER, DIRECT_USER):
        source.execute(f"CREATE USER {user}@'%' IDENTIFIED BY '{PASSWORD}'")
        source.execute(f"GRANT {GRANTS} ON *.* TO {user}@'%'")
    return source


def run_counting(source: MariaDBServer, statements) -> Counter:
    """Run the workload's statements; the rows the server says each changed, by (table, op)."""
    counts: Counter = Counter()
    conn = source.connect()
    try:
        with conn.cursor() as cur:
            for sql in ["SET SESSION time_zone = '+00:00'", "SET SESSION sql_mode = ''", *statements]:
                cur.execute(sql)
                dml = _DML.match(sql)
                if dml:
                    op = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[dml.group(1).split()[0].upper()]
                    counts[(dml.group(2), op)] += cur.rowcount
        conn.commit()
    finally:
        conn.close()
    return counts


def streamed(changes: list[Change]) -> Counter:
    return Counter((c.table, c.op) for c in changes if c.op != "r")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, peers):
    """The source, serve in front of it, Debezium through serve and Debezium straight on
    the source, both started after the first part of the workload (their snapshots), then
    the rest: its first part in compressed events, the rest not."""
    jar = peers("debezium") / "debezium-runner.jar"
    tmp = tmp_path_factory.mktemp("debezium")
    # a source in a zone of its own: the snapshot's TIMESTAMPs are right only if the
    # driver's time_zone='+00:00' reached the upstream session (serve passes SETs on)
    source = legacy_source(tmp, log_bin_compress="ON", log_bin_compress_min_len=10, default_time_zone="+02:00")
    serve = capture = None
    runs: list[Debezium] = []
    try:
        run_counting(source, WORKLOAD[:SNAPSHOT])
        snapshot = {t: server_rows(source, t) for t in ("leg", "big")}
        upstream = f"mysql://root@localhost/?unix_socket={source.socket}"
        serve = Serve(None, tmp, "--upstream", upstream, "--relay", tmp / "relay", "--full-metadata")
        capture = Capture(serve.port)
        source.execute("SET GLOBAL log_output = 'TABLE'")
        source.execute("SET GLOBAL general_log = 1")
        runs = [Debezium(jar, properties(port=port, user=user, password=PASSWORD, workdir=tmp / name,
                                         server_id=server_id), tmp / name, tmp / name / "events.jsonl")
                for name, port, user, server_id in [("serve", capture.port, USER, 5401),
                                                    ("direct", source.port, DIRECT_USER, 5402)]]
        rows = sum(len(r) for _, r in snapshot.values())
        for run in runs:
            run.wait_for(lambda got: sum(c.op == "r" for c in got) == rows, what="the snapshot")
        compressed = run_counting(source, ["USE rw", *WORKLOAD[SNAPSHOT:ALTER]])
        source.set_global("log_bin_compress", "OFF")
        counts = compressed + run_counting(source, ["USE rw", *WORKLOAD[ALTER:]])
        through, direct = runs
        through.wait_for(lambda got: streamed(got) == counts, what="every change of the workload")
        done = through.stop()
        assert done["success"], done
        direct_end = direct.wait_end(timeout=120)
        source.execute("SET GLOBAL general_log = 0")
        sent = source.query("SELECT CAST(user_host AS CHAR), CAST(argument AS CHAR) FROM mysql.general_log "
                            "WHERE command_type = 'Query'")
        yield Pipeline(source, serve, tmp, capture, snapshot, counts, compressed, through.changes(),
                       direct.changes(), direct_end, sent)
    finally:
        for run in runs:
            run.kill()
        if capture is not None:
            capture.close()
        if serve is not None:
            serve.stop()
        source.cleanup()


def precisions(source: MariaDBServer, table: str) -> dict[str, int]:
    return {name: int(n or 0) for name, n in source.query(
        "SELECT COLUMN_NAME, DATETIME_PRECISION FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = '{table}'")}


def assert_rows_equal(source, table: str, expected, images: dict[int, Change]) -> int:
    """Each of the source's rows (its CAST text) against Debezium's image of it; the
    number of values compared."""
    columns, rows = expected
    n = precisions(source, table)
    assert sorted(images) == sorted(int(r[0]) for r in rows), table
    compared = 0
    for row in rows:
        change = images[int(row[0])]
        for name, want in zip(columns, row, strict=True):
            got = change.after[name]
            assert matches(want, got, change.fields[name], n[name]), \
                (table, row[0], name, want, got, change.fields[name].get("name"), change.source)
            compared += 1
    return compared


def final_images(changes: list[Change], table: str) -> dict[int, Change]:
    """The rows Debezium's events leave: each key's last insert, read or update image, deletes applied."""
    state: dict[int, Change] = {}
    for change in changes:
        if change.table != table:
            continue
        key = (change.after or change.before)["id"]
        if change.op == "d":
            state.pop(key, None)
        else:
            state[key] = change
    return state


def test_the_snapshot_through_serve_has_the_sources_values(pipeline):
    for table, expected in pipeline.snapshot.items():
        reads = {c.after["id"]: c for c in pipeline.changes if c.table == table and c.op == "r"}
        assert len(reads) == len(expected[1]) == sum(c.table == table and c.op == "r" for c in pipeline.changes)
        assert assert_rows_equal(pipeline.source, table, expected, reads) >= len(expected[1])


def test_streaming_through_serve_ends_with_the_sources_rows(pipeline):
    """Every change the source made after the snapshot arrives once (the source's own
    affected-row counts, by table and op), compressed events or not, and the rows the
    events leave are the source's."""
    changes = pipeline.changes
    assert streamed(changes) == pipeline.counts
    compared = sum(assert_rows_equal(pipeline.source, t, server_rows(pipeline.source, t), final_images(changes, t))
                   for t in TABLES)
    assert compared > 10000
    legacy = {c.after["t6"] for c in changes if c.table == "leg" and c.op == "u" and c.after}
    assert -3020399999999 in legacy          # -838:59:59.999999 from the rewritten binlog


def served_boundaries(directory: Path, name: str) -> set[int]:
    """The offsets at which the events of a binlog file start, as mariadb-binlog lists them."""
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    out = subprocess.run([tool, str(directory / name)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {int(p) for p in re.findall(r"^# at (\d+)$", out.stdout, re.M)}


def test_debezium_streams_by_gtid_in_serves_coordinates(pipeline):
    """The MariaDB connector streams by MariaDB GTID only (MariaDbConnection.isGtidModeEnabled
    is always true: it sets @slave_connect_state, never a file and position); the file and
    position it keeps in its offsets are the served binlogs', not the source's."""
    dumps = re.findall(r"server id 5401\) dumps from (\S+):(\d+)( \(GTID [^)]*\))?", pipeline.serve.text())
    assert dumps and all(gtid.startswith(" (GTID 0-1-") for _, _, gtid in dumps), dumps
    positions = {(c.source["file"], c.source["pos"]) for c in pipeline.changes if c.op != "r"}
    files = {file for file, _ in positions}
    served = {f: served_boundaries(pipeline.tmp / "relay.rewritten", f) for f in files}
    original = {f: served_boundaries(pipeline.source.binlog_dir, f) for f in files}
    assert all(pos in served[file] for file, pos in positions)
    assert not all(pos in original[file] for file, pos in positions)


def test_straight_on_the_source_debezium_loses_rows_and_stops(pipeline):
    """Without serve: its binlog library skips MariaDB's compressed events without a word
    (event types 165-171 are UNKNOWN to it, EventType.byEventNumber), so the changes in them
    never arrive, and it stops at the first uncompressed legacy row (its DATETIME read as
    8 bytes, RowDeserializers: "Invalid value for MonthOfYear")."""
    direct, end = pipeline.direct, pipeline.direct_end
    assert sum(c.op == "r" for c in direct) == sum(len(r) for _, r in pipeline.snapshot.values())
    assert sum(pipeline.compressed.values()) > 1000
    # not one change of the legacy tables arrived: those in compressed events skipped, the
    # first uncompressed one its error (it may still pass on a few later events of the
    # converted table before the engine stops: its binlog thread reads on after the error)
    assert not [k for k in streamed(direct) if k[0] != "conv"], (streamed(direct), end)
    assert end["success"] is False, end
    assert "Error while deserializing binlog data of datetime" in end["error"], end


def normalized(statement: str) -> str:
    """A statement with what changes from run to run (GTIDs) left out."""
    return re.sub(r"'\d+-\d+-\d+(?:,\d+-\d+-\d+)*'", "'<gtid>'", statement.strip().rstrip(";").rstrip())


def test_every_statement_is_answered_by_serve_or_run_on_the_source(pipeline):
    """What Debezium sent (recorded between it and serve) is each either run on the source
    in Debezium's own session (the source's general log, as user dbz) or answered by serve;
    the list is tests/peers/sent/debezium.tsv (BINLOG_UPDATE_GOLDEN=1 writes it again)."""
    upstream = {normalized(text) for user, text in pipeline.sent if user.startswith(f"{USER}[")}
    got = sorted({("upstream" if normalized(c) in upstream else "serve", normalized(c))
                  for c in pipeline.capture.commands})
    lines = [f"{where}\t{text}" for where, text in got]
    if os.environ.get("BINLOG_UPDATE_GOLDEN"):
        STATEMENTS.write_text(STATEMENTS_HEADER + "".join(line + "\n" for line in lines))
    want = [line for line in STATEMENTS.read_text().splitlines() if line and not line.startswith("#")]
    assert lines == want
    assert "asked what is not served" not in pipeline.serve.text()


class Writer(threading.Thread):
    """A write load on the source until ``stop``: inserts of new ids, updates that count
    (``n`` = the number of the row's updates, so a doubled or lost update shows in Debezium's
    images) and deletes; each statement retried through the source's restart, and safe to
    retry (an insert whose id is there, an update whose ``n`` moved, a delete of a gone row
    change nothing)."""

    def __init__(self, source: MariaDBServer, first: int):
        super().__init__(daemon=True)
        self.source = source
        self.next_id = first
        self.step = 0
        self.alive: dict[int, int] = {}          # id -> n, as the writer made them
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        conn = None
        try:
            while not self.stop.is_set():
                statement = self._next()
                while True:
                    try:
                        conn = conn or self._connect()
                        with conn.cursor() as cur:
                            cur.execute(statement)
                        break
                    except pymysql.err.OperationalError:
                        conn = None                 # the source restarting: again, once it is back
                        time.sleep(0.2)
                time.sleep(0.02)
        except BaseException as exc:    # noqa: BLE001 - handed to the test, which fails with it
            self.error = exc

    def _connect(self):
        conn = pymysql.connect(unix_socket=self.source.socket, user="root", autocommit=True, connect_timeout=2,
                               init_command="SET time_zone = '+00:00'")
        return conn

    def _next(self) -> str:
        self.step += 1
        i = self.step
        if i % 3 == 0 and self.alive:
            key = sorted(self.alive)[i % len(self.alive)]
            n = self.alive[key] = self.alive[key] + 1
            return (f"UPDATE rw.load SET n = {n}, t = '-{i % 839}:00:00.{i % 10000:04d}', "
                    f"dt = '2024-01-01' + INTERVAL {i} SECOND + INTERVAL {i % 1000 * 1000} MICROSECOND "
                    f"WHERE id = {key} AND n = {n - 1}")
        if i % 7 == 0 and self.alive:
            key = sorted(self.alive)[(i // 7) % len(self.alive)]
            del self.alive[key]
            return f"DELETE FROM rw.load WHERE id = {key}"
        i, self.next_id = self.next_id, self.next_id + 1
        self.alive[i] = 0
        return (f"INSERT IGNORE INTO rw.load VALUES ({i}, 0, FROM_UNIXTIME({1600000000 + i}.{i % 1000000:06d}), "
                f"'2020-02-29 12:00:00.{i % 1000:03d}', '{i % 839}:59:59.{i % 10000:04d}', 'w')")

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=120)
        assert self.error is None, self.error


LOAD = ("CREATE TABLE rw.load (id INT PRIMARY KEY, n INT NOT NULL, ts TIMESTAMP(6) NULL DEFAULT NULL, "
        "dt DATETIME(3) NULL, t TIME(4) NULL, note VARCHAR(20))")


@pytest.mark.slow
def test_restarts_of_debezium_serve_and_the_source_under_load(tmp_path, peers):
    """Debezium through serve while a writer changes the source: Debezium is stopped and
    started again (it resumes by the GTID in its offsets, whose file and position are the
    served binlogs'), serve is restarted (Debezium's binlog client reconnects by GTID), the
    source is restarted (serve's relay reconnects).  Every insert arrives once, every
    update once and in order (``n`` counts them), and the rows the events leave are the
    source's."""
    jar = peers("debezium") / "debezium-runner.jar"
    source = legacy_source(tmp_path, log_bin_compress="ON", log_bin_compress_min_len=10)
    serve = writer = None
    runs: list[Debezium] = []
    try:
        source.execute("CREATE DATABASE rw")
        source.execute(LOAD)
        source.execute("INSERT INTO rw.load SELECT seq, 0, NULL, '2021-01-01 00:00:00.5', '-00:00:00.5', 's' "
                       "FROM rw.seq_1_to_100")
        upstream = f"mysql://root@localhost/?unix_socket={source.socket}"
        serve = Serve(None, tmp_path, "--upstream", upstream, "--relay", tmp_path / "relay", "--full-metadata")
        props = properties(port=serve.port, user=USER, password=PASSWORD, workdir=tmp_path / "dbz", server_id=5401)

        def start() -> Debezium:
            runs.append(Debezium(jar, props, tmp_path / "dbz", tmp_path / "dbz" / f"events-{len(runs)}.jsonl"))
            return runs[-1]

        start().wait_for(lambda got: sum(c.op == "r" for c in got) == 100, what="the snapshot")
        writer = Writer(source, 101)
        writer.start()
        time.sleep(3)
        assert runs[-1].stop()["success"]                       # Debezium restarts
        start().wait_for(lambda got: len(got) > 5, what="changes after its restart")
        serve.stop()                                            # serve restarts
        serve = Serve(None, tmp_path, "--upstream", upstream, "--relay", tmp_path / "relay", "--full-metadata",
                      "--listen", f"127.0.0.1:{serve.port}")
        time.sleep(3)
        source.restart()                                        # the source restarts
        source.set_global("mysql56_temporal_format", "OFF")
        time.sleep(3)
        assert runs[-1].stop()["success"]                       # Debezium again, after all that
        start()
        time.sleep(2)
        writer.finish()
        want = server_rows(source, "load")
        changes = runs[-1].wait_for(
            lambda got: sorted(final_images([c for r in runs[:-1] for c in r.changes()] + got, "load"))
            == sorted(int(r[0]) for r in want[1]), what="the source's final rows")
        assert runs[-1].stop()["success"]
        every = [c for r in runs[:-1] for c in r.changes()] + changes
        assert_exactly_once(every)
        assert assert_rows_equal(source, "load", want, final_images(every, "load")) > 100 * 6
        # each restart resumed from the last run's offsets: its GTID, in serve's coordinates
        for before in runs[:-1]:
            last = [line["offset"] for line in before.lines() if line.get("offset")][-1]
            assert f"(GTID {last['gtids']})" in serve.text()
        boundaries = {}
        for c in every:
            if c.op != "r":
                file = c.source["file"]
                boundaries.setdefault(file, served_boundaries(tmp_path / "relay.rewritten", file))
                assert c.source["pos"] in boundaries[file]
    finally:
        if writer is not None:
            writer.stop.set()
        for run in runs:
            run.kill()
        if serve is not None:
            serve.stop()
        source.cleanup()


def assert_exactly_once(changes: list[Change]) -> None:
    """Each id created once (snapshot read or insert), its updates n = 1, 2, 3... each once
    and in order, at most one delete, nothing after it."""
    seen: dict[int, list[tuple[str, int]]] = {}
    for c in changes:
        if c.table != "load":
            continue
        image = c.after or c.before
        seen.setdefault(image["id"], []).append((c.op, image["n"]))
    for key, events in seen.items():
        ops = [op for op, _ in events]
        assert ops[0] in ("r", "c") and ops.count("r") + ops.count("c") == 1, (key, events)
        updates = [n for op, n in events if op == "u"]
        assert updates == list(range(1, len(updates) + 1)), (key, events)
        assert ops.count("d") <= 1 and (ops[-1] == "d" or "d" not in ops), (key, events)
