"""`binlog rewrite` end to end with real servers: a MariaDB 10.11 source whose tables were
created with mysql56_temporal_format=OFF (every legacy type, N = 0..6, edge values,
UPDATE, DELETE, ALTERs mid-stream, log_bin_compress=ON) writes the binlogs; the rewritten
binlogs are read by `mariadb-binlog -v` (the server's values, where the source's own files
give wrong ones or fail) and replayed with `mariadb-binlog OUT | mariadb` into a fresh
server, whose tables must equal the source's, CAST(col AS CHAR) row by row.  (The
source's own binlogs replay right into a MariaDB whose tables have the same precisions:
the server takes a legacy column's precision from its own table, sql/sql_type.cc
make_conversion_table_field; it is the other consumers that need the rewrite.)

python-mysql-replication has no reader of binlog files (only BinLogStreamReader over a
connection): it is left to the tests of `binlog serve`."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.legacy_workload import LEGACY_COLUMNS, WORKLOAD, server_rows
from support.mariadb_server import find_tool

pytestmark = pytest.mark.server

@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The source server and its binlogs (all closed by a last FLUSH)."""
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    srv = MariaDBServer({"log_bin_compress": "ON", "log_bin_compress_min_len": 10})
    srv.start()
    try:
        srv.set_global("mysql56_temporal_format", "OFF")
        for sql in WORKLOAD[:6]:        # DDL in one binlog, the rows in the next
            srv.execute(sql)
        srv.flush_logs()
        for sql in WORKLOAD[6:]:
            srv.execute(sql)
        srv.flush_logs()
        yield srv
    finally:
        srv.cleanup()


def binlog_cli(*args):
    result = subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)],
                            capture_output=True, text=True, timeout=600)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture(scope="module")
def rewritten(source, tmp_path_factory):
    out = tmp_path_factory.mktemp("rewritten")
    result = binlog_cli("rewrite", source.binlog_dir, "--to", out)
    assert result.returncode == 0, result.stderr
    names = (out / "mariadb-bin.index").read_text().split()
    assert names == source.binlog_names()
    return [out / n for n in names]


def test_the_source_really_is_legacy_and_compressed(source):
    types = dict(source.query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                              "WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = 'leg'"))
    assert all("mariadb-5.3" in types[c] for c in LEGACY_COLUMNS + ["t7"])
    conv = source.query("SELECT COLUMN_TYPE FROM information_schema.COLUMNS "
                        "WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = 'conv'")
    assert not any("mariadb-5.3" in t for (t,) in conv)
    listing = subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"), *map(str, source.binlog_files())],
                             capture_output=True, text=True, timeout=120).stdout
    assert "_compressed_rows" in listing


def _verbose_events(stdout: str):
    """(kind, db.table, [images]) of each row change `mariadb-binlog -v` prints."""
    events: list = []
    for line in stdout.splitlines():
        m = re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) `(.*)`\.`(.*)`$", line)
        if m:
            events.append((m.group(1), f"{m.group(2)}.{m.group(3)}", []))
        elif line in ("### SET", "### WHERE") and events:
            events[-1][2].append([])
        elif line.startswith("###   @") and events and events[-1][2]:
            events[-1][2][-1].append(line.split("=", 1)[1])
    return events


def _verbose_last_images(paths):
    """(exit code, notes, {id: last image of rw.leg}) from `mariadb-binlog -v`."""
    result = subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"), "-v", *map(str, paths)],
                            capture_output=True, text=True, errors="replace", timeout=300)
    rows: dict = {}
    for kind, table, images in _verbose_events(result.stdout):
        if table != "rw.leg" or not images or not images[0]:
            continue
        rows.pop(images[0][0], None)
        if kind != "DELETE FROM":
            rows[images[-1][0]] = tuple(images[-1])
    notes = result.stderr + ("corrupted" if "Corrupted replication event" in result.stdout else "")
    return result.returncode, notes, rows


def _as_printed(srv):
    """rw.leg's rows as mariadb-binlog -v prints them: TIMESTAMPs as UNIX_TIMESTAMP (with
    the column's digits), DATETIME/TIME/strings quoted, NULL bare."""
    columns, _ = server_rows(srv)
    exprs = []
    for c in columns:
        if c.startswith("ts"):
            exprs.append(f"CAST(UNIX_TIMESTAMP(`{c}`) AS CHAR)")
        elif c == "id":
            exprs.append("CAST(id AS CHAR)")
        else:
            exprs.append(f"CONCAT('''', `{c}`, '''')")
    _, rows = server_rows(srv, select=exprs)
    return {r[0]: tuple("NULL" if v is None else v for v in r) for r in rows}


def test_mariadb_binlog_prints_the_servers_values(source, rewritten):
    code, notes, printed = _verbose_last_images(rewritten)
    assert code == 0 and not notes, notes
    expected = _as_printed(source)
    assert printed == expected
    # the source's own binlogs: a failure, a corrupted event, or other values
    code, notes, printed = _verbose_last_images(source.binlog_files())
    assert code != 0 or notes or printed != expected


def test_replayed_output_gives_the_sources_tables(source, rewritten, mariadb_factory):
    target = mariadb_factory()
    listing = subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"), *map(str, rewritten)],
                             capture_output=True, check=True, timeout=300).stdout
    assert b"_compressed_rows" not in listing and b"Query_compressed" not in listing
    replay = subprocess.run([find_tool("mariadb", "mysql"), "--no-defaults",
                             f"--socket={target.socket}", "-uroot"],
                            input=listing, capture_output=True, timeout=600)
    assert replay.returncode == 0, replay.stderr.decode(errors="replace")[-2000:]
    for table in ("leg", "big", "conv"):
        assert server_rows(target, table) == server_rows(source, table)
    # the target made MySQL 5.6-format columns of them
    types = dict(target.query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                              "WHERE TABLE_SCHEMA = 'rw' AND TABLE_NAME = 'leg'"))
    assert not any("mariadb-5.3" in t for t in types.values())


def test_dump_of_the_output_without_schema_equals_the_input(source, rewritten, tmp_path):
    import json

    from binlog.rewrite import lookup, parse_map

    def records(paths):
        r = binlog_cli("dump", *paths)
        assert r.returncode == 0, r.stderr
        return [json.loads(line) for line in r.stdout.splitlines()]

    full = tmp_path / "full"
    assert binlog_cli("rewrite", source.binlog_dir, "--to", full, "--full-metadata").returncode == 0
    outputs = [full / p.name for p in rewritten]
    maps = {p.name: parse_map((full / f"{p.name}.map").read_text(), "map") for p in rewritten}
    before, after = records(source.binlog_files()), records(outputs)
    assert len(before) == len(after) > 3000
    for x, y in zip(before, after, strict=True):
        x = dict(x, pos=lookup(maps[x["file"]], x["pos"]))
        if x.get("end_pos") is not None:
            x["end_pos"] = lookup(maps[x["file"]], x["end_pos"])
        assert x == y


def test_rerun_after_a_cut_continues(source, rewritten, tmp_path):
    out = tmp_path / "o"
    assert binlog_cli("rewrite", source.binlog_dir, "--to", out).returncode == 0
    last = out / rewritten[1].name
    size = last.stat().st_size
    with open(last, "r+b") as f:
        f.truncate(size * 2 // 3 + 3)
    assert binlog_cli("rewrite", source.binlog_dir, "--to", out).returncode == 0
    # the binlogs the server closed (it may still add a BINLOG_CHECKPOINT to the last)
    for path in rewritten[:-1]:
        assert (out / path.name).read_bytes() == Path(path).read_bytes(), path.name


def test_keep_compressed_recompresses_rewritten_rows(source, tmp_path):
    out = tmp_path / "kept"
    assert binlog_cli("rewrite", source.binlog_dir, "--to", out, "--keep-compressed").returncode == 0
    paths = [out / n for n in source.binlog_names()]
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    listing = subprocess.run([tool, *map(str, paths)], capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0
    assert "_compressed_rows" in listing.stdout
    code, notes, printed = _verbose_last_images(paths)
    assert code == 0 and not notes, notes
    assert printed == _as_printed(source)


FULL_METADATA_DDL = [
    "CREATE DATABASE md",
    "CREATE TABLE md.t (a INT UNSIGNED NOT NULL, b VARCHAR(20), c CHAR(3) CHARACTER SET latin1, "
    "d TEXT, e ENUM('x','yy','zzz'), f SET('p','q'), g BIGINT, h DECIMAL(10,2) UNSIGNED, "
    "i VARBINARY(8), j TINYINT UNSIGNED, k DATETIME(3), l BLOB, "
    "m VARCHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, PRIMARY KEY (g, a)) "
    "CHARACTER SET utf8mb4",
    "CREATE TABLE md.u (id INT PRIMARY KEY, s1 VARCHAR(4) CHARACTER SET latin1, "
    "s2 VARCHAR(4) CHARACTER SET latin1, s3 VARCHAR(4) CHARACTER SET latin1, "
    "s4 VARCHAR(4) CHARACTER SET utf8mb4, e ENUM('a') CHARACTER SET latin1) CHARACTER SET latin1",
    "INSERT INTO md.t VALUES (1, 'b', 'c', 'd', 'yy', 'p,q', -5, 3.50, x'00ff', 200, "
    "'2024-01-01 00:00:00.5', x'01', 'm')",
    "INSERT INTO md.u VALUES (1, 'a', 'b', 'c', 'd', 'a')",
]


def _optional_metadata(paths) -> dict:
    """{db.table: the TABLE_MAP's optional metadata TLVs, raw} from binlog files."""
    from binlog.events import TableMapEvent
    from binlog.sources.file import read_events

    found = {}
    for path in paths:
        for event in read_events(path):
            if isinstance(event, TableMapEvent) and event.db == "md":
                found[event.qualified_name] = event.optional
    return found


@pytest.mark.parametrize("given", ["NO_LOG", "MINIMAL"])
def test_full_metadata_is_what_the_server_writes(given, mariadb_factory, tmp_path):
    """The same tables on a server with binlog_row_metadata=FULL and on one with less:
    the rewrite of the latter with --full-metadata carries the former's TLVs, byte for
    byte (sql/log_event_server.cc init_metadata_fields writes them)."""
    written = {}
    for metadata in ("FULL", given):
        srv = mariadb_factory({"binlog_row_metadata": metadata})
        for sql in FULL_METADATA_DDL:
            srv.execute(sql)
        srv.flush_logs()
        if metadata == "FULL":
            written["server"] = _optional_metadata(srv.binlog_files())
        else:
            out = tmp_path / metadata
            result = binlog_cli("rewrite", *srv.binlog_files(), "--to", out, "--full-metadata")
            assert result.returncode == 0, result.stderr
            assert _optional_metadata(srv.binlog_files()) != written["server"]
            written["rewrite"] = _optional_metadata([out / p.name for p in srv.binlog_files()])
    assert set(written["server"]) == {"md.t", "md.u"}
    # SIGNEDNESS, a charset field, COLUMN_NAME, SET and ENUM values, SIMPLE_PRIMARY_KEY...
    assert {1, 4, 5, 6, 8} <= set(written["server"]["md.t"])
    for table, tlvs in written["server"].items():
        assert list(written["rewrite"][table].items()) == list(tlvs.items()), table   # in order
