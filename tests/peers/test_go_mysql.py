"""go-mysql as TiDB DM configures it (tests/peers/go-mysql, v1.7.0 and v1.16.0) on a real
MariaDB 10.11 source whose tables were created with mysql56_temporal_format=OFF: every
legacy type, N = 0..6, edge values, UPDATEs, DELETEs, an ALTER mid-stream
(support/legacy_workload.py), the later part of it written with log_bin_compress=ON.

- through ``binlog serve`` (network mode, DM's syncer: by file/position, by MariaDB GTID and
  resumed after a GTID) and on ``binlog rewrite``'s output (file mode, DM's relay-log
  reader): every table's rows equal the source's;
- directly on the source and on its own binlogs: the failure go-mysql has, asserted.

Expected values are the source's ``CAST(col AS CHAR)`` (time_zone +00:00, as the peer's
TimestampStringLocation).  go-mysql gives temporals as strings (DM leaves ParseTime off);
they are compared with the server's text as values (support/compat.py ``same``: the fields of
the date and time, the fraction padded to six digits): go-mysql writes a MySQL 5.6 TIME whose
fraction is zero without it (``838:59:59`` for the server's ``838:59:59.0``), otherwise its
strings are the server's own.  Each peer's changes are applied in order by id (an UPDATE's or
DELETE's before image must be the row as it stands) and the result compared row by row.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest
from compat_runners.gomysql import short_error, text
from support.compat import same
from support.legacy_workload import WORKLOAD, server_rows
from support.mariadb_server import MariaDBServer, require_mariadbd
from support.serve_process import PASSWORD, REPO, Serve, copy_binlogs

pytestmark = pytest.mark.server

VERSIONS = ("1.7.0", "1.16.0")
TABLES = ("leg", "big", "conv")
#: where log_bin_compress goes on: after the legacy rows were written uncompressed
COMPRESS_FROM = 8
SENT = Path(__file__).resolve().parent / "sent"
NATIVE = ["SET GLOBAL log_bin_compress = OFF", "SET GLOBAL mysql56_temporal_format = ON",
          "CREATE TABLE rw.native (id INT PRIMARY KEY, dt1 DATETIME(1), dt6 DATETIME(6))",
          "INSERT INTO rw.native VALUES (1, '2022-00-00 00:00:00.5', '2022-11-00 12:00:00.000001')",
          "SET GLOBAL mysql56_temporal_format = OFF"]


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """(source, original binlogs dir, rewritten binlogs dir, serve of the rewritten)."""
    require_mariadbd()
    tmp = tmp_path_factory.mktemp("gomysql")
    source = MariaDBServer({"server_id": 1, "log_bin_compress_min_len": 10})
    source.start()
    serve = None
    try:
        source.set_global("mysql56_temporal_format", "OFF")
        source.execute(f"CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'")
        source.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO repl@'%'")
        conn = source.connect()
        with conn.cursor() as cur:
            for i, sql in enumerate(WORKLOAD):
                if i == COMPRESS_FROM:
                    cur.execute("SET GLOBAL log_bin_compress = ON")
                cur.execute(sql)
            # go-mysql's own handling of a zero month, on a MySQL 5.6-format table
            for sql in NATIVE:
                cur.execute(sql)
        conn.commit()
        conn.close()
        source.flush_logs()
        copy_binlogs(source, tmp / "original")
        subprocess.run(["python3", "-m", "binlog.cli", "rewrite", "--quiet", "--to", str(tmp / "rewritten"),
                        str(tmp / "original")], cwd=REPO, check=True, capture_output=True)
        (tmp / "serve").mkdir()
        serve = Serve(tmp / "rewritten", tmp / "serve")
        yield source, tmp / "original", tmp / "rewritten", serve
    finally:
        if serve is not None:
            serve.stop()
        source.cleanup()


def run_peer(binary: Path, *args: str, password: str = PASSWORD) -> tuple[list[dict], dict]:
    """(row lines, the last line: end or error) of one run."""
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300,
                          env={"GOMYSQL_PEER_PASSWORD": password, "PATH": "/usr/bin:/bin"})
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines, done.stderr[-2000:]
    assert done.returncode == (1 if lines[-1]["kind"] == "error" else 0), done.stderr[-2000:]
    return [r for r in lines if r["kind"] == "row"], lines[-1]


def network(binary: Path, port: int, binlogs: Path, *start: str, user: str = "repl") -> tuple[list[dict], dict]:
    """DM's syncer from ``start`` to the end of the last binlog in ``binlogs``."""
    last = sorted(p for p in binlogs.iterdir() if re.fullmatch(r".*\.\d{6}", p.name))[-1]
    return run_peer(binary, "-mode", "network", "-port", str(port), "-user", user, *start,
                    "-stop-file", last.name, "-stop-pos", str(last.stat().st_size))


def files(binlogs: Path) -> list[str]:
    """The closed binlog files, in index order.  The last, open one is left out: its
    FORMAT_DESCRIPTION carries LOG_EVENT_BINLOG_IN_USE_F, which the server leaves out of
    its checksum (log_event.cc), and go-mysql v1.16 checks that event's checksum as it
    is ("failed checksum for FormatDescriptionEvent"); DM's relay reader reads the copies
    DM's relay writes from the stream, where the server sends the flag cleared."""
    names = [line.strip().removeprefix("./") for line in next(binlogs.glob("*.index")).read_text().splitlines()]
    return [str(binlogs / name) for name in names if name][:-1]


def final_state(rows: list[dict]) -> dict[str, dict[str, tuple]]:
    """Each table's rows after go-mysql's changes, applied in order by id; an UPDATE's or
    DELETE's before image is checked against the row as it stands (same width only: an
    ALTER in between adds a column)."""
    state: dict[str, dict[str, tuple]] = {}
    for row in rows:
        table = state.setdefault(f"{row['schema']}.{row['table']}", {})
        before = None if row["before"] is None else tuple(text(v) for v in row["before"])
        after = None if row["after"] is None else tuple(text(v) for v in row["after"])
        if before is not None:
            current = table.pop(before[0], None)
            assert current is not None, f"{row['op']} of a row that is not there: {before}"
            if len(current) == len(before):
                assert all(same(a, b) for a, b in zip(current, before, strict=True)), (current, before)
        if after is not None:
            table[after[0]] = after
    return state


def go_time_date(text: str | None) -> str | None:
    """A DATETIME after 1970 with a zero month or day as go-mysql v1.7.0 gives it in the
    MySQL 5.6 format: through Go's time.Date (replication/row_event.go decodeDatetime2; later
    versions format the fields as they are), which normalizes month 0 to December of the
    year before and day 0 to the last day of the month before (``2022-00-00`` ->
    ``2021-11-30``)."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)( .*)", text or "")
    if not match or match.group(1) == "0000" or "00" not in (match.group(2), match.group(3)):
        return None
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    first = date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
    return f"{first + timedelta(days=day - 1):%Y-%m-%d}{match.group(4)}"


def assert_equal_to_source(source, rows: list[dict], version: str) -> int:
    """Every table's rows as go-mysql's changes leave them equal the source's (but for
    v1.7.0's own time.Date normalization of a zero month or day, shown on a MySQL
    5.6-format table of the source itself in test_a_zero_month_is_go_mysqls_own); the
    number of values compared."""
    own_bug = go_time_date if version == "1.7.0" else (lambda text: None)
    state = final_state(rows)
    compared = 0
    for table in TABLES:
        columns, expected = server_rows(source, table)
        got = state.get(f"rw.{table}", {})
        assert sorted(got, key=int) == [r[0] for r in expected], table
        for want in expected:
            mine = got[want[0]]
            assert len(mine) == len(want), (table, mine, want)
            for name, a, b in zip(columns, mine, want, strict=True):
                assert same(a, b) or a == own_bug(b), \
                    f"rw.{table} id {want[0]} {name}: go-mysql {a!r}, server {b!r}"
                compared += 1
    return compared


@pytest.mark.parametrize("version", VERSIONS)
def test_dm_syncer_reads_the_sources_values_through_serve(legacy, peers, version):
    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    first = Path(files(rewritten)[0]).name
    by_position, end = network(binary, serve.port, rewritten, "-file", first, "-pos", "4")
    assert end["kind"] == "end", end
    assert assert_equal_to_source(source, by_position, version) > 10000
    by_gtid, end = network(binary, serve.port, rewritten, "-gtid", "")
    assert end["kind"] == "end", end
    assert by_gtid == by_position
    # resumed after a transaction in the middle (the UPDATE of rw.leg's id 1): exactly what
    # came after it
    middle = next(r["gtid"] for r in by_position if r["op"] == "update" and r["table"] == "leg")
    resumed, end = network(binary, serve.port, rewritten, "-gtid", middle)
    assert end["kind"] == "end", end
    after = by_position[max(i for i, r in enumerate(by_position) if r["gtid"] == middle) + 1:]
    assert [(r["gtid"], r["before"], r["after"]) for r in resumed] == \
        [(r["gtid"], r["before"], r["after"]) for r in after]


@pytest.mark.parametrize("version", VERSIONS)
def test_dm_relay_reader_reads_the_rewritten_binlogs(legacy, peers, version):
    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    rows, end = run_peer(binary, "-mode", "file", *files(rewritten))
    assert end["kind"] == "end", end
    assert assert_equal_to_source(source, rows, version) > 10000


def first_legacy_rows_event(source) -> int:
    """Where the first rows event of rw.leg ends in the source's first binlog, from the
    server's SHOW BINLOG EVENTS (its TABLE_MAP comes just before it)."""
    events = source.query(f"SHOW BINLOG EVENTS IN '{source.binlog_names()[0]}'")
    for i, (_, _, kind, _, _, info) in enumerate(events):
        if kind == "Table_map" and "(rw.leg)" in info:
            return int(events[i + 1][4])
    raise AssertionError("no rows event of rw.leg")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", ["network", "file"])
def test_dm_panics_on_the_sources_legacy_rows(legacy, peers, version, mode):
    """Straight on the source (DM's syncer) or on its own binlogs (DM's relay reader):
    go-mysql reads a legacy TIMESTAMP as 4 bytes, DATETIME as 8, TIME as 3, runs off the
    end of the row image and stops with the panic it recovered, at the first rows event of
    the legacy table, without one row of it."""
    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    if mode == "network":
        rows, end = network(binary, source.port, original, "-file", source.binlog_names()[0], "-pos", "4")
    else:
        rows, end = run_peer(binary, "-mode", "file", *files(original))
    assert end["kind"] == "error", end
    assert re.fullmatch(r"parse rows event panic runtime error: (index|slice bounds) out of range "
                        r"\[[\d:]+\]( with (length|capacity) \d+)?", short_error(end["error"])), end["error"][:300]
    assert f"LogPos:{hex(first_legacy_rows_event(source))}," in end["error"]
    assert not [r for r in rows if r["table"] == "leg"]


@pytest.mark.parametrize("version", VERSIONS)
def test_dm_on_the_sources_compressed_rows_events(legacy, peers, version):
    """From where log_bin_compress went on, MariaDB writes QUERY_COMPRESSED_EVENT (165) and
    WRITE/UPDATE/DELETE_ROWS_COMPRESSED_EVENT_V1 (166-168).  go-mysql v1.7.0 hands them over
    as GenericEvents: no rows and no error, DM would go on without those changes;
    v1.16.0 inflates them and panics on the legacy rows inside, as on the plain ones.
    Through serve the rewritten binlog has them as plain events (read in the tests above)."""
    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    events = source.query(f"SHOW BINLOG EVENTS IN '{source.binlog_names()[0]}'")
    compressed = [e for e in events if "compressed" in e[2].lower()]
    assert {e[2] for e in compressed} >= {"Query_compressed", "Update_rows_compressed_v1"}, {e[2] for e in events}
    previous = max(int(e[1]) for e in events if e[2] == "Gtid" and int(e[1]) < int(compressed[0][1]))
    done = subprocess.run([str(binary), "-mode", "file", "-offset", str(previous), *files(original)],
                          capture_output=True, text=True, timeout=300)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    if version == "1.7.0":
        generic = [r for r in lines if r["kind"] == "generic"]
        assert [r["pos"] for r in generic] == [int(e[4]) for e in compressed]
        assert {r["type"] for r in generic} >= {165, 166, 167, 168}
        assert lines[-1]["kind"] == "end" and done.returncode == 0, lines[-1]
        assert not [r for r in lines if r["kind"] == "row" and r["table"] in ("leg", "big")]
    else:
        assert lines[-1]["kind"] == "error" and done.returncode == 1, lines[-1]
        assert "EventType:0xa7," in lines[-1]["error"]     # UPDATE_ROWS_COMPRESSED_EVENT_V1
        assert short_error(lines[-1]["error"]).startswith("parse rows event panic runtime error: ")
        assert not [r for r in lines if r["kind"] == "generic" and r["type"] in (166, 167, 168)]


def normalized(commands: list[str]) -> list[str]:
    """The commands as recorded: a replica's random UUID and a connection id replaced."""
    out = []
    for command in commands:
        command = re.sub(r"'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'", "'<uuid>'", command)
        out.append(re.sub(r"^KILL \d+$", "KILL <connection id>", command))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_what_dm_syncer_sends_to_serve_is_recorded(legacy, peers, version):
    """Every command go-mysql sends serve, from the login to the end of the dump (the syncer
    closes with a KILL of its own dump connection, on a second connection), by position and
    by MariaDB GTID, equals tests/peers/sent/go-mysql-<version>.txt: a new version that
    sends something new fails here, and serve must then answer it (none is refused).
    ``BINLOG_RECORD_SENT=1`` writes the file anew."""
    from support.wire_capture import Capture

    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    sent = []
    for start in (["-file", Path(files(rewritten)[0]).name, "-pos", "4"], ["-gtid", "0-1-3"]):
        capture = Capture(serve.port)
        try:
            _, end = network(binary, capture.port, rewritten, *start)
        finally:
            capture.close()
        assert end["kind"] == "end", end
        sent += [f"# {' '.join(start)}", *normalized(capture.commands)]
    record = SENT / f"go-mysql-{version}.txt"
    if os.environ.get("BINLOG_RECORD_SENT") == "1":      # after checking what changed
        record.write_text("".join(f"{line}\n" for line in sent))
    assert sent == record.read_text().splitlines()
    assert "asked what is not served" not in serve.text()


@pytest.mark.parametrize("version", VERSIONS)
def test_a_zero_month_is_go_mysqls_own(legacy, peers, version):
    """The one difference allowed above is go-mysql v1.7.0's own: on a table the source
    created in the MySQL 5.6 format, read from the source's own binlog, a DATETIME with a
    zero month or day comes back through Go's time.Date (``2022-00-00`` as ``2021-11-30``);
    v1.16.0 gives the server's text."""
    source, original, rewritten, serve = legacy
    binary = peers(f"go-mysql-{version}") / "gomysql-peer"
    events = source.query(f"SHOW BINLOG EVENTS IN '{source.binlog_names()[0]}'")
    create = next(int(e[1]) for e in events if "CREATE TABLE rw.native" in e[5])
    rows, end = run_peer(binary, "-mode", "file", "-offset", str(create), *files(original))
    assert end["kind"] == "end", end
    native = [r["after"] for r in rows if r["table"] == "native"]
    columns, expected = server_rows(source, "native")
    assert expected == [("1", "2022-00-00 00:00:00.5", "2022-11-00 12:00:00.000001")]
    if version == "1.7.0":
        assert native == [[1, "2021-11-30 00:00:00.5", "2022-10-31 12:00:00.000001"]]
        assert [go_time_date(v) for v in expected[0][1:]] == native[0][1:]
    else:
        assert native == [[1, *expected[0][1:]]]


def test_dm_relay_reader_reads_a_rewrite_of_the_open_binlog(peers, tmp_path):
    """A binlog copied while the server still writes it has LOG_EVENT_BINLOG_IN_USE_F in its
    FORMAT_DESCRIPTION, which the server leaves out of that event's CRC32 (sql/log_event_server.cc
    Log_event_writer::write_header) and clears when it closes the file (sql/log.cc
    MYSQL_BIN_LOG::close); go-mysql v1.16.0 checks the CRC32 over the flag as it is and refuses
    such a copy.  ``binlog rewrite`` writes the copy into a closed file (the flag cleared, the
    CRC32 unchanged): go-mysql reads every row of it as the source holds them."""
    from binlog.constants import LOG_EVENT_BINLOG_IN_USE_F
    from binlog.header import FLAGS_AT

    require_mariadbd()
    binary = peers("go-mysql-1.16.0") / "gomysql-peer"
    source = MariaDBServer({"server_id": 1})
    source.start()
    try:
        source.set_global("mysql56_temporal_format", "OFF")
        conn = source.connect()
        with conn.cursor() as cur:
            for sql in WORKLOAD[:7]:        # rw.leg: every legacy type, N = 0..6, edge values
                cur.execute(sql)
        conn.commit()
        conn.close()
        name = source.binlog_names()[-1]    # the file the server has open
        copy_binlogs(source, tmp_path / "original")
        open_copy = tmp_path / "original" / name
        assert open_copy.read_bytes()[4 + FLAGS_AT] & LOG_EVENT_BINLOG_IN_USE_F
        subprocess.run(["python3", "-m", "binlog.cli", "rewrite", "--quiet", "--to", str(tmp_path / "rewritten"),
                        str(tmp_path / "original")], cwd=REPO, check=True, capture_output=True)
        rewritten = tmp_path / "rewritten" / name
        assert not rewritten.read_bytes()[4 + FLAGS_AT] & LOG_EVENT_BINLOG_IN_USE_F

        rows, end = run_peer(binary, "-mode", "file", str(rewritten))
        assert end["kind"] == "end", end
        columns, expected = server_rows(source, "leg")
        got = final_state(rows)["rw.leg"]
        assert sorted(got, key=int) == [r[0] for r in expected]
        for want in expected:
            assert all(same(a, b) for a, b in zip(got[want[0]], want, strict=True)), (got[want[0]], want)
        # the copy itself: refused at its first event, before any row
        rows, end = run_peer(binary, "-mode", "file", str(open_copy))
        assert end["kind"] == "error" and not rows, end
        assert "failed checksum for FormatDescriptionEvent" in end["error"], end["error"][:300]
    finally:
        source.cleanup()
