"""TiDB DM itself (dm-master, dm-worker, dmctl of pingcap/tiflow, the ``dm-8.5`` peer) on a
MariaDB 10.11 source whose tables were created with ``mysql56_temporal_format=OFF``
(tests/support/legacy_workload.py: every legacy type, N = 0..6, edge values, UPDATEs,
DELETEs, ALTERs mid-stream, compressed events), into TiDB (the ``tidb-8.5`` peer):

- through ``binlog serve --upstream --relay`` with the source.yaml and task.yaml of
  docs/serve.md, ``task-mode: all``: DM's dump (its checker's and dumpling's queries pass
  through serve to the source, the loader writes TiDB) then its binlog replication, under a write load
  during the incremental phase, end with every table in TiDB equal to the source's row by
  row (``CAST(col AS CHAR)`` on both servers); the only values that differ are ones TiDB or
  DM make of any MySQL 5.6-format column too, each checked against the servers: a TIME
  beyond TiDB's range is what TiDB's own CAST makes of the source's value, and a DATETIME
  with a zero month is what DM makes of the same value in a native twin of the table;
- straight on the source, DM's syncer stops at the first legacy rows event with go-mysql's
  ``parse rows event panic``: the story this project exists for.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import pytest
from support.dm_cluster import DMCluster
from support.legacy_workload import CREATE, WORKLOAD, server_rows
from support.mariadb_server import MariaDBServer, require_mariadbd
from support.serve_process import PASSWORD, Serve
from support.tidb_server import TiDBServer
from support.wire_capture import Capture

pytestmark = [pytest.mark.server, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
SENT = Path(__file__).resolve().parent / "sent"
DM_PEER = "dm-8.5"
TIDB_PEER = "tidb-8.5"
TABLES = ("leg", "big", "conv", "wl")
#: the source as DM needs it: TiDB refuses latin1_swedish_ci (the server's built-in default)
#: under its new collations, so the source's tables are utf8mb4 as a packaged server makes them
SOURCE_OPTIONS = {"server_id": 1, "character_set_server": "utf8mb4", "collation_server": "utf8mb4_general_ci"}
#: a table written to all through the incremental phase, created (legacy) before DM starts
WL_CREATE = ("CREATE TABLE rw.wl (id INT PRIMARY KEY, ts3 TIMESTAMP(3) NULL DEFAULT NULL, "
             "dt6 DATETIME(6) NULL, t4 TIME(4) NULL, n INT)")
#: DM's account on the source (not one of serve's --users: its session passes through).  DM's
#: privilege checker parses SHOW GRANTS with TiDB's parser, which fails on MariaDB 10.5+'s
#: name for REPLICATION CLIENT (BINLOG MONITOR), on the source as through serve: ALL parses
DM_USER = "dm"
DM_GRANTS = "ALL PRIVILEGES"


def example(name: str) -> str:
    """The yaml block of docs/serve.md whose first line is ``# NAME``: the files the docs
    tell DM users to write are the ones this test runs."""
    for block in re.findall(r"```yaml\n(.*?)```", DOCS.read_text(), re.S):
        if block.startswith(f"# {name}"):
            return block
    raise AssertionError(f"docs/serve.md has no yaml block starting with '# {name}'")


def source_yaml(port: int) -> str:
    text = example("source.yaml")
    text = re.sub(r'host: "serve-host"', 'host: "127.0.0.1"', text)
    text = re.sub(r"port: 3307", f"port: {port}", text)
    text = re.sub(r'user: "cdc"', f'user: "{DM_USER}"', text)
    return re.sub(r'password: "[^"]*"', f'password: "{PASSWORD}"', text)


def task_yaml(tidb_port: int) -> str:
    text = example("task.yaml")
    text = re.sub(r'host: "tidb-host"', 'host: "127.0.0.1"', text)
    text = re.sub(r"port: 4000", f"port: {tidb_port}", text)
    return text.replace('"shop"', '"rw"').replace("shop:", "rw:")


def task_name() -> str:
    return re.search(r'^name: "([^"]+)"', example("task.yaml"), re.M).group(1)


def start_source(options: dict) -> MariaDBServer:
    require_mariadbd()
    source = MariaDBServer({**SOURCE_OPTIONS, **options}).start()
    source.set_global("mysql56_temporal_format", "OFF")
    source.execute(f"CREATE USER {DM_USER}@'%' IDENTIFIED BY '{PASSWORD}'")
    source.execute(f"GRANT {DM_GRANTS} ON *.* TO {DM_USER}@'%'")
    run(source, WORKLOAD[:7])                       # rw.leg with its rows, rw.big: DM's dump
    run(source, [WL_CREATE, "INSERT INTO rw.wl VALUES (0, '2001-02-03 04:05:06.789', "
                            "'2001-02-03 04:05:06.789012', '-12:34:56.7891', 0)"])
    return source


def run(source, statements) -> None:
    conn = source.connect()
    try:
        with conn.cursor() as cur:
            for sql in ["SET SESSION time_zone = '+00:00'", "SET SESSION sql_mode = ''", *statements]:
                cur.execute(sql)
        conn.commit()
    finally:
        conn.close()


def start_task(dm: DMCluster, tmp: Path, port: int, tidb: TiDBServer) -> None:
    (tmp / "source.yaml").write_text(source_yaml(port))
    (tmp / "task.yaml").write_text(task_yaml(tidb.port))
    dm.create_source(tmp / "source.yaml")
    dm.start_task(tmp / "task.yaml")


def subtask(dm: DMCluster) -> dict:
    status = dm.query_status(task_name())
    subtasks = status["sources"][0]["subTaskStatus"] if status.get("sources") else []
    assert subtasks, json.dumps(status)[:3000]
    return subtasks[0]


def wait_for(dm: DMCluster, done, what: str, timeout: float = 300) -> dict:
    """The subtask's status once ``done(status)``; fails at once when DM pauses the task
    (unless pausing is what is awaited)."""
    deadline = time.monotonic() + timeout
    while True:
        status = subtask(dm)
        if done(status):
            return status
        if status["stage"] == "Paused":
            raise AssertionError(f"DM paused the task waiting for {what}: {json.dumps(status)[:4000]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"DM: still waiting for {what} after {timeout:.0f} s: {json.dumps(status)[:4000]}")
        time.sleep(1)


def replicating(status: dict) -> bool:
    """In DM's incremental phase (its Sync unit), running."""
    return status["stage"] == "Running" and status["unit"] == "Sync"


class WriteLoad:
    """Transactions on rw.wl (legacy columns) from a thread while the workload runs: an
    INSERT each, an UPDATE of an earlier row every 3rd, a DELETE every 7th."""

    def __init__(self, source: MariaDBServer, transactions: int = 400):
        self.source, self.transactions = source, transactions
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            conn = self.source.connect()
            with conn.cursor() as cur:
                cur.execute("SET SESSION time_zone = '+00:00'")
                for i in range(1, self.transactions + 1):
                    cur.execute("INSERT INTO rw.wl VALUES (%s, FROM_UNIXTIME(1000000000 + %s * 7777.123), "
                                "'1999-12-31 23:59:59.999999' + INTERVAL %s * 1234567 MICROSECOND, "
                                "SEC_TO_TIME(%s * 1234.5678 - 200000), %s)", (i, i, i, i, i))
                    if i % 3 == 0:
                        cur.execute("UPDATE rw.wl SET n = n + 1, t4 = -t4, dt6 = dt6 + INTERVAL 1 SECOND "
                                    "WHERE id = %s", (i // 2,))
                    if i % 7 == 0:
                        cur.execute("DELETE FROM rw.wl WHERE id = %s", (i - 5,))
                    conn.commit()
            conn.close()
        except BaseException as exc:    # noqa: BLE001 - handed to the test by join()
            self.error = exc

    def join(self) -> None:
        self.thread.join(timeout=600)
        assert not self.thread.is_alive(), "the write load did not finish"
        if self.error is not None:
            raise self.error


def column_types(server, table: str) -> dict[str, tuple[str, int]]:
    return {name: (kind, precision or 0) for name, kind, precision in server.query(
        "SELECT COLUMN_NAME, DATA_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = '{table}'")}


def differences(source, tidb, table: str) -> dict[tuple[str, str], tuple]:
    """{(id, column): (source's text, TiDB's text)} of every cell that differs; the two
    servers must hold the same columns and the same ids."""
    columns, want = server_rows(source, table)
    got_columns, got = server_rows(tidb, table)
    assert got_columns == columns, table
    assert [r[0] for r in got] == [r[0] for r in want], f"{table}: other rows in TiDB"
    return {(w[0], c): (x, y) for w, g in zip(want, got, strict=True) for c, x, y in zip(columns, w, g, strict=True) if x != y}


def tidb_cast(tidb, value: str, kind: str, precision: int) -> str:
    """What TiDB itself makes of the source's text in a column of that type."""
    return tidb.query(f"SELECT CAST(CAST(%s AS {kind.upper()}({precision})) AS CHAR)", (value,))[0][0]


@pytest.fixture(scope="module")
def through_serve(tmp_path_factory, peers):
    """(source, tidb, dm, serve, capture) after the workload and a write load went from the legacy
    source through serve and DM (full, then incremental) into TiDB."""
    dm_bin, tidb_bin = peers(DM_PEER), peers(TIDB_PEER) / "tidb-server"
    tmp = tmp_path_factory.mktemp("dm-serve")
    source = start_source({"log_bin_compress": "ON", "log_bin_compress_min_len": 10})
    tidb = TiDBServer(tidb_bin)
    dm = DMCluster(dm_bin, tmp / "dm")
    serve = capture = None
    try:
        tidb.start()
        upstream = f"mysql://root@localhost/?unix_socket={source.socket}"
        serve = Serve(None, tmp, "--upstream", upstream, "--relay", tmp / "relay", "--full-metadata")
        capture = Capture(serve.port)       # records what DM sends serve
        dm.start()
        start_task(dm, tmp, capture.port, tidb)
        wait_for(dm, replicating, "the incremental phase")
        load = WriteLoad(source)
        run(source, ["USE rw", *WORKLOAD[7:], *twin_statements()])
        load.join()
        wait_equal(source, tidb, dm)
        yield source, tidb, dm, serve, capture
    finally:
        dm.stop()
        if capture is not None:
            capture.close()
        if serve is not None:
            serve.stop()
        tidb.cleanup()
        source.cleanup()


def twin_statements() -> list[str]:
    """rw.nat: rw.leg's columns (t7 added mid-stream included) in the MySQL 5.6 format,
    with rw.leg's final rows: what DM makes of each value in a native column."""
    create = CREATE.replace("CREATE TABLE leg", "CREATE TABLE nat").replace(
        "t6 TIME(6) NULL,", "t6 TIME(6) NULL, t7 TIME(4) NULL,")
    return ["SET GLOBAL mysql56_temporal_format = ON", create,
            "SET GLOBAL mysql56_temporal_format = OFF", "INSERT INTO nat SELECT * FROM leg"]


def wait_equal(source, tidb, dm, timeout: float = 300) -> None:
    """Until TiDB holds every row of the source (the same ids in every table, the twin's
    last row there too); DM's task must stay running."""
    deadline = time.monotonic() + timeout
    want = {t: [r[0] for r in server_rows(source, t)[1]] for t in (*TABLES, "nat")}
    while True:
        status = subtask(dm)
        assert status["stage"] == "Running", json.dumps(status)[:4000]
        try:
            got = {t: [r[0] for r in server_rows(tidb, t)[1]] for t in want}
        except Exception:       # noqa: BLE001 - a table is not there yet
            got = {}
        if got == want and replicating(status) and status["sync"]["synced"] and not differences(source, tidb, "wl"):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"TiDB did not catch up: {json.dumps(status)[:3000]}")
        time.sleep(1)


def test_dm_through_serve_brings_every_table_into_tidb(through_serve):
    source, tidb, dm, serve, capture = through_serve
    by_tidb, by_twin, over_range = set(), set(), set()
    for table in TABLES:
        types = column_types(tidb, table)
        for (row, column), (value, got) in differences(source, tidb, table).items():
            kind, precision = types[column]
            if got == tidb_cast(tidb, value, kind, precision):
                by_tidb.add((table, row, column))
            elif table == "leg" and got == _cell(tidb, "nat", row, column):
                by_twin.add((table, row, column))
            else:
                raise AssertionError(f"rw.{table} id {row} {column}: source {value!r}, TiDB {got!r}")
        columns, rows = server_rows(source, table)
        over_range |= {(table, r[0], c) for r in rows for c, v in zip(columns, r, strict=True)
                       if types[c][0] == "time" and re.fullmatch(r"-?838:59:59\.\d*[1-9]\d*", v or "")}
    # TiDB's TIME stops at 838:59:59.000000 (MySQL's range), MariaDB's at 838:59:59.999999
    assert by_tidb == over_range and over_range
    # go-mysql v1.9.1 (DM's) decodes a DATETIME2 with Go's time.Date, which turns a zero
    # month into the previous year's: '2022-00-00' arrives as '2021-11-30' from the native
    # twin as from serve's rewrite
    assert by_twin == {("leg", "6", f"dt{n}") for n in range(1, 7)}
    assert _cell(tidb, "leg", "6", "dt3") == "2021-11-30 00:00:00.000"


def test_dm_dumps_and_follows_serve_in_its_coordinates(through_serve):
    source, tidb, dm, serve, capture = through_serve
    status = subtask(dm)
    log = serve.text()
    # the incremental phase started where the dump through serve left it, by GTID, as a
    # client of serve logged in with the source's account
    assert re.search(rf"\({DM_USER}@127\.0\.0\.1:\d+, server id \d+\) dumps from mariadb-bin\.\d+:\d+ "
                     r"\(GTID 0-1-\d+\)", log), log[-3000:]
    assert "asked what is not served" not in log, log[-3000:]
    assert PASSWORD not in log
    served = dict(_served_logs(serve))
    file, pos = re.fullmatch(r"\((\S+), (\d+)\)", status["sync"]["syncerBinlog"]).groups()
    assert served[file] == int(pos)
    # the tables DM created in TiDB from its dump and the ALTERs: the source's columns, each
    # temporal one with its N
    for table in (*TABLES, "nat"):
        assert column_types(tidb, table) == column_types(source, table)


def test_what_dm_sends_serve_is_recorded(through_serve):
    """Every distinct command DM sent serve (its checker, dumpling's snapshot, the syncer's
    dump) equals tests/peers/sent/dm-8.5.txt: a new DM version that sends something new
    fails here, and serve must then answer it or pass it to the source (none is refused:
    the serve log has no "asked what is not served").  ``BINLOG_RECORD_SENT=1`` writes the
    file anew."""
    source, tidb, dm, serve, capture = through_serve
    sent = sorted(set(normalized(capture.commands)))
    record = SENT / f"{DM_PEER}.txt"
    if os.environ.get("BINLOG_RECORD_SENT") == "1":      # after checking what changed
        record.write_text("".join(f"{line}\n" for line in sent))
    assert sent == record.read_text().splitlines()


def normalized(commands: list[str]) -> list[str]:
    """The commands as recorded, what changes from run to run replaced."""
    out = []
    for command in commands:
        for pattern, placeholder in _VARYING:
            command = re.sub(pattern, placeholder, command)
        out.append(" ".join(command.split()))
    return out


_VARYING = [(r"'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'", "'<uuid>'"),
            (r"^KILL \d+$", "KILL <connection id>"),
            (r"@slave_connect_state='[\d,-]*'", "@slave_connect_state='<gtid>'")]


def test_dm_straight_on_the_source_stops_at_the_first_legacy_rows_event(tmp_path, peers):
    """The story: DM (go-mysql 1.9.1) on the legacy source itself reads the legacy
    TIMESTAMP(N) as 4 bytes and stops with a recovered panic."""
    dm_bin, tidb_bin = peers(DM_PEER), peers(TIDB_PEER) / "tidb-server"
    source = start_source({})
    tidb = TiDBServer(tidb_bin)
    dm = DMCluster(dm_bin, tmp_path / "dm")
    try:
        tidb.start()
        dm.start()
        start_task(dm, tmp_path, source.port, tidb)
        wait_for(dm, replicating, "the incremental phase")
        assert _ids(tidb, "leg") == _ids(source, "leg")                     # the dump (SQL) came
        run(source, ["USE rw", WORKLOAD[8]])                                # an UPDATE of rw.leg
        status = wait_for(dm, lambda s: s["stage"] == "Paused", "the pause", timeout=120)
        message = " ".join(e["Message"] + " " + e.get("RawCause", "") for e in status["result"]["errors"])
        assert "parse rows event panic runtime error" in message and "out of range" in message, message[:3000]
        assert "Table:[]uint8{0x6c, 0x65, 0x67}" in message, message[:3000]       # rw.leg's TABLE_MAP
        assert _cell(tidb, "leg", "1", "ts3") == "2022-11-02 11:11:22.326"     # the UPDATE never came
    finally:
        dm.stop()
        tidb.cleanup()
        source.cleanup()


def _cell(server, table: str, row: str, column: str):
    server.execute("SET SESSION time_zone = '+00:00'")
    found = server.query(f"SELECT CAST(`{column}` AS CHAR) FROM rw.{table} WHERE id = %s", (row,))
    return found[0][0] if found else None


def _ids(server, table: str) -> list[str]:
    return [row[0] for row in server_rows(server, table)[1]]


def _served_logs(serve) -> list[tuple]:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            return list(cur.fetchall())
    finally:
        conn.close()
