"""The schema store under faults: it is idempotent
(a DDL at a position already recorded is a no-op, re-reading any input changes nothing),
a DDL costs the same however many came before, and every store failure is a clear
error (a read-only store still serves reads)."""
from __future__ import annotations

import signal
import sqlite3
import subprocess

import pytest
from replay_helpers import REPO, cli, dsn, run_script

from schema_store import SchemaStore
from schema_store.errors import SchemaError
from schema_store.resolver import SchemaResolver
from schema_store.snapshot import export_snapshot, import_snapshot


class _Query:
    """What SchemaResolver.observe_query reads of a QUERY event."""

    def __init__(self, query: str, db: str = "d"):
        self.query, self.db = query, db


def _rows(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()
                for t in ("versions", "overrides", "databases")}
    finally:
        conn.close()


# -- item 6: idempotent ----------------------------------------------------------------------

@pytest.mark.server
def test_reading_a_server_binlog_twice_changes_nothing(mariadb_server, tmp_path):
    server = mariadb_server
    server.flush_logs()
    first = server.master_status()[0]
    for sql in ["CREATE DATABASE idem6", "CREATE TABLE idem6.t (id INT PRIMARY KEY, v INT)",
                "ALTER TABLE idem6.t ADD COLUMN c DATETIME(3)",
                "INSERT INTO idem6.t VALUES (1, 2, '2024-01-02 03:04:05.678')",
                "ALTER TABLE idem6.t ADD COLUMN d INT FIRST, DROP COLUMN v",
                "CREATE TABLE idem6.u LIKE idem6.t", "RENAME TABLE idem6.u TO idem6.w",
                "ALTER TABLE idem6.w ADD COLUMN e INT"]:
        server.execute(sql)
    server.flush_logs()
    binlog = tmp_path / first
    server.copy_binlog(first, binlog)
    store = tmp_path / "s.db"
    assert cli("dump", "--schema-store", store, binlog).returncode == 0
    once = _rows(store)
    again = cli("dump", "--schema-store", store, binlog)
    assert again.returncode == 0, again.stderr.decode()
    assert _rows(store) == once
    # and the store says what the server says
    with SchemaStore(store) as s:
        for table in ("t", "w"):
            expected = [r[0] for r in server.query(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                "'idem6' AND table_name = %s ORDER BY ordinal_position", (table,))]
            assert list(s.schema("idem6", table, (first, 1 << 40)).column_names) == expected
        assert s.schema("idem6", "u", (first, 1 << 40)) is None
    server.execute("DROP DATABASE idem6")


def test_ddl_at_a_recorded_position_is_a_no_op():
    store = SchemaStore()
    resolver = SchemaResolver(store)
    resolver.observe_query(_Query("CREATE TABLE t (id INT)"), ("b.000001", 100))
    for _ in range(2):
        resolver.observe_query(_Query("ALTER TABLE t ADD COLUMN c INT"), ("b.000001", 200))
    assert store.schema("d", "t", ("b.000001", 300)).column_names == ("id", "c")
    # another statement at the same position (another binlog of the same name) still counts
    resolver.observe_query(_Query("ALTER TABLE t ADD COLUMN e INT"), ("b.000001", 200))
    assert store.schema("d", "t", ("b.000001", 300)).column_names == ("id", "c", "e")


def test_importing_the_same_ddl_and_overrides_twice_changes_nothing(tmp_path):
    path = tmp_path / "s.db"
    ddl = "CREATE DATABASE d CHARACTER SET latin1; CREATE TABLE d.t (id INT, ts TIMESTAMP);"
    for _ in range(2):
        with SchemaStore(path) as store:
            store.import_ddl(ddl, source="ddl:x.sql")
            store.set_override("d", "t", "@2", "timestamp", 3)
            store.record_inferred("d", "t", 1, 3, ("b.000001", 4))
        if _ == 0:
            once = _rows(path)
    assert _rows(path) == once


@pytest.mark.server
def test_apply_with_a_schema_store_resumes_after_a_kill(two_servers, tmp_path):
    source, target = two_servers
    run_script(source, """CREATE DATABASE k6;
CREATE TABLE k6.t (id INT PRIMARY KEY, v INT);
INSERT INTO k6.t VALUES (1, 1);
INSERT INTO k6.t VALUES (2, 2);
ALTER TABLE k6.t ADD COLUMN c INT;
INSERT INTO k6.t VALUES (3, 3, 3);
ALTER TABLE k6.t ADD COLUMN d VARCHAR(5);
INSERT INTO k6.t VALUES (4, 4, 4, 'x');
INSERT INTO k6.t VALUES (5, 5, 5, 'y');
""")
    files = [str(p) for p in source.binlog_files()]
    store = tmp_path / "s.db"
    args = ("apply", "--to", dsn(target), "--schema-store", store, "--batch-transactions", "1")
    # killed after the ALTER ran on the target, before its checkpoint was committed: the
    # resumed run reads the ALTER again
    killed = cli(*args, *files, env={"BINLOG_APPLY_FAULT": "kill-before-commit:5"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    for _ in range(2):          # resumed, then once more with nothing left to do
        done = cli(*args, *files)
        assert done.returncode == 0, done.stderr.decode()
    assert target.query("SELECT id, v, c, d FROM k6.t ORDER BY id") == \
        source.query("SELECT id, v, c, d FROM k6.t ORDER BY id")
    with SchemaStore(store) as s:
        assert s.schema("k6", "t", (source.binlog_names()[-1], 1 << 40)).column_names == \
            ("id", "v", "c", "d")


# -- item 12: a DDL costs the same whatever came before ---------------------------------------

def test_versions_of_a_growing_table_are_stored_as_deltas(tmp_path):
    path = tmp_path / "s.db"
    store = SchemaStore(path)
    resolver = SchemaResolver(store)
    resolver.observe_query(_Query("CREATE TABLE t (id INT PRIMARY KEY)"), ("b.000001", 4))
    for i in range(300):
        resolver.observe_query(_Query(f"ALTER TABLE t ADD COLUMN c{i} VARCHAR(5)"),
                               ("b.000001", 100 + i))
    resolver.observe_query(_Query("ALTER TABLE t DROP COLUMN c7, MODIFY c200 INT"),
                           ("b.000001", 1000))
    store.close()
    sizes = [len(r[6]) for r in _rows(path)["versions"]]
    # the 300th ALTER writes what the 30th did (only the new column), not 300 columns
    assert max(sizes[30:]) < 2 * max(sizes[20:30]), sizes[-5:]
    with SchemaStore(path) as again:     # a new process: versions rebuilt from the deltas
        names = again.schema("d", "t", ("b.000001", 2000)).column_names
        assert len(names) == 300 and "c7" not in names and names[-1] == "c299"
        assert again.schema("d", "t", ("b.000001", 199)).columns[-1].name == "c99"
        assert again.schema("d", "t", ("b.000001", 2000)).column("c200").data_type == "int"
        # a snapshot holds whole schemas: its rows stand alone, renumbered or filtered
        data = export_snapshot(again)
        data["versions"] = data["versions"][-1:]
        copy = import_snapshot(data)
        assert copy.schema("d", "t", ("b.000001", 2000)).column_names == names


# -- item 9: schema-store failures are errors, never tracebacks -------------------------------

def _corrupt(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"SQLite format 3\0" + b"\xff" * 4000)
    return path


def _directory(tmp_path):
    return tmp_path


def _under_a_file(tmp_path):
    (tmp_path / "plain").write_text("x")
    return tmp_path / "plain" / "s.db"


@pytest.mark.parametrize("make, words", [
    (_corrupt, "not an SQLite database"),
    (_directory, "is a directory"),
    (_under_a_file, "cannot create or open"),
])
def test_a_bad_store_is_a_schema_error(tmp_path, make, words):
    path = make(tmp_path)
    with pytest.raises(SchemaError) as err:
        SchemaStore(path)
    assert words in str(err.value) and str(path) in str(err.value)


@pytest.fixture
def read_only_store(tmp_path):
    path = tmp_path / "ro.db"
    with SchemaStore(path) as store:
        store.import_ddl("CREATE TABLE d.t (id INT, ts TIMESTAMP)", source="ddl:x")
    subprocess.run(["chattr", "+i", str(path)], check=True)    # root ignores chmod
    yield path
    subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_store_serves_reads_and_refuses_writes(read_only_store):
    with SchemaStore(read_only_store) as store:
        assert store.read_only
        assert store.schema("d", "t").column_names == ("id", "ts")
        with pytest.raises(SchemaError, match="read-only"):
            store.set_override("d", "t", "@2", "timestamp", 3)


def test_dump_with_a_read_only_store_reads(read_only_store):
    binlog = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"
    done = cli("dump", "--schema-store", read_only_store, binlog)
    assert done.returncode == 0, done.stderr.decode()
    assert b"is read-only: the DDL read is tracked in memory" in done.stderr
    assert done.stdout.count(b"\n") > 10
