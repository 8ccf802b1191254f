"""TiDB as the target, a real one: ``tidb-server -store unistore`` built from the Go module
proxy (the ``tidb-8.5`` peer, tests/support/tidb_server.py).  The source is a real MariaDB
whose tables were created with mysql56_temporal_format=OFF (tests/support/legacy_workload.py:
every legacy type, N = 0..6, edge values, UPDATEs, DELETEs, an ALTER mid-stream, a table
converted to the MySQL 5.6 format, compressed events) and ordinary tables beside them.

- ``binlog apply`` (one worker and 16), ``binlog dump --format sql | mariadb`` and ``binlog
  verify-rows`` against TiDB: every table equal to the source's, ``CAST(col AS CHAR)`` row by
  row on both servers (CHECKSUM TABLE cannot compare a MariaDB and a TiDB);
- what this TiDB refuses, run on it: a TIME beyond MySQL's range, ``--method binlog``
  (TiDB takes a ``BINLOG`` statement and does nothing with it), DDL it cannot parse;
- exactly once after kill -9 of the apply and of TiDB: the rerun's --no-safe INSERTs would
  fail on the marker's primary key had a transaction been applied twice.
"""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import pymysql
import pytest
from replay_helpers import REPO, cli
from support.legacy_workload import WORKLOAD, within_mysql_time_range
from support.mariadb_server import MariaDBServer, find_tool, require_mariadbd
from tidb_helpers import UTF8MB4, table_rows
from workers_helpers import many_script

pytestmark = pytest.mark.server

TABLES = {"rw": ("leg", "big", "conv"), "od": ("kinds",)}

#: Ordinary tables beside the legacy ones: the types a migration carries besides temporals.
ORDINARY = [
    "CREATE DATABASE od CHARACTER SET utf8mb4",
    "CREATE TABLE od.kinds (id BIGINT UNSIGNED PRIMARY KEY, i INT, s VARCHAR(40), "
    "t TEXT, b VARBINARY(16), bl BLOB, d DECIMAL(20,6), f FLOAT, db DOUBLE, bt BIT(10), "
    "e ENUM('a','b','c'), st SET('x','y','z'), y YEAR, dd DATE, j JSON, "
    "dt6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(4)) CHARACTER SET utf8mb4",
    "INSERT INTO od.kinds VALUES (1, -2147483648, 'héllo 😀', REPEAT('t', 300), 0x00ff, "
    "REPEAT(0xAB, 5000), -12345678901234.123456, 1.5, -2.25e-300, b'1010101010', 'b', 'x,z', "
    "1901, '2024-02-29', '{\"a\": [1, 2.5, \"x\"]}', '2024-01-02 03:04:05.678901', "
    "'2024-01-02 03:04:05.678', '-12:34:56.7891')",
    "INSERT INTO od.kinds (id) VALUES (18446744073709551615)",
    "UPDATE od.kinds SET s = 'it''s \\\\ \"q\"', i = 7 WHERE id = 1",
    "INSERT INTO od.kinds (id, s) VALUES (3, 'gone')",
    "DELETE FROM od.kinds WHERE id = 3",
]


@pytest.fixture(scope="module")
def legacy_source():
    """(source, its binlog files) after the legacy workload (values within MySQL's TIME
    range) and the ordinary tables, with compressed events."""
    require_mariadbd()
    source = MariaDBServer({"log_bin_compress": "ON", "log_bin_compress_min_len": 10, **UTF8MB4})
    source.start()
    try:
        source.set_global("mysql56_temporal_format", "OFF")
        conn = source.connect()
        with conn.cursor() as cur:
            for sql in within_mysql_time_range(WORKLOAD) + ORDINARY:
                cur.execute(sql)
        conn.close()
        source.flush_logs()
        yield source, [str(p) for p in source.binlog_files()]
    finally:
        source.cleanup()


def assert_same_tables(source, tidb) -> None:
    for db, tables in TABLES.items():
        for table in tables:
            want, got = table_rows(source, db, table), table_rows(tidb, db, table)
            assert want[0] == got[0], f"{db}.{table}: columns differ"
            assert len(want[1]) == len(got[1]), f"{db}.{table}: {len(want[1])} rows vs {len(got[1])}"
            for a, b in zip(want[1], got[1], strict=True):
                assert a == b, f"{db}.{table}:\n  source {a}\n  TiDB   {b}"


def verify_rows(tidb, files) -> str:
    done = cli("verify-rows", "--against", tidb.dsn, *files, timeout=600)
    out = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 0, out
    return out


@pytest.mark.parametrize("workers", [1, 16])
def test_apply_into_tidb_gives_the_sources_tables(legacy_source, tidb_factory, workers):
    source, files = legacy_source
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, "--workers", workers, *files, timeout=600)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert_same_tables(source, tidb)
    # every key the binlog changed: leg 8, big 3000, conv 2, kinds 3 (one deleted)
    assert "3013 row(s) checked, 3013 equal, 0 different" in verify_rows(tidb, files)
    # a rerun finds everything applied
    again = cli("apply", "--to", tidb.dsn, "--workers", workers, *files, timeout=600)
    assert again.returncode == 0, again.stderr.decode()
    assert_same_tables(source, tidb)


def test_dump_sql_into_tidb_through_the_mariadb_client(legacy_source, tidb_factory):
    source, files = legacy_source
    tidb = tidb_factory()
    dump = cli("dump", "--format", "sql", *files, timeout=600)
    assert dump.returncode == 0, dump.stderr.decode()
    client = subprocess.run([find_tool("mariadb", "mysql"), "--no-defaults", "-h127.0.0.1",
                             f"-P{tidb.port}", "-uroot", "--default-character-set=utf8mb4"],
                            input=dump.stdout, capture_output=True, timeout=600)
    assert client.returncode == 0, client.stderr.decode()
    assert_same_tables(source, tidb)
    verify_rows(tidb, files)


def test_verify_rows_names_a_row_tidb_holds_differently(legacy_source, tidb_factory):
    source, files = legacy_source
    tidb = tidb_factory()
    assert cli("apply", "--to", tidb.dsn, *files, timeout=600).returncode == 0
    tidb.execute("UPDATE rw.leg SET t3 = '-00:00:00.002' WHERE id = 6")
    tidb.execute("DELETE FROM od.kinds WHERE id = 18446744073709551615")
    done = cli("verify-rows", "--against", tidb.dsn, *files, timeout=600)
    out = done.stdout.decode()
    assert done.returncode == 6, out + done.stderr.decode()
    assert "DIFF rw.leg (id=6)" in out, out
    assert "DIFF od.kinds (id=18446744073709551615): missing on the target" in out, out
    assert "3013 row(s) checked, 3011 equal, 2 different" in done.stderr.decode() + out


def test_a_time_beyond_mysqls_range_stops_the_apply_with_the_row_named(mariadb_factory, tidb_factory):
    """MariaDB's TIME(N) holds up to 838:59:59.999999; TiDB refuses more than 838:59:59
    (error 1292 even though the replay's sql_mode is not strict): a clear error naming
    the row and the column, the transactions before it committed."""
    source = mariadb_factory(UTF8MB4)
    source.set_global("mysql56_temporal_format", "OFF")
    for sql in ["CREATE DATABASE tr", "CREATE TABLE tr.t (id INT PRIMARY KEY, t1 TIME(1))",
                "INSERT INTO tr.t VALUES (1, '838:59:59')", "INSERT INTO tr.t VALUES (2, '838:59:59.9')"]:
        source.execute(sql)
    files = [str(p) for p in source.binlog_files()]
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "insert of `tr`.`t` (id=2)" in err and "error 1292" in err, err
    assert "'838:59:59.9' for column 't1'" in err, err
    assert tidb.query("SELECT id, CAST(t1 AS CHAR) FROM tr.t") == [(1, "838:59:59.0")]


def test_method_binlog_is_refused_for_tidb_which_ignores_binlog_statements(mariadb_factory, tidb_factory):
    """TiDB answers OK to a ``BINLOG '...'`` statement and applies nothing: the rows
    ``mariadb-binlog`` prints as BINLOG statements never arrive.  So ``--method binlog``
    refuses a TiDB target before it sends anything (exit 2)."""
    source = mariadb_factory(UTF8MB4)
    source.execute("CREATE DATABASE mb")
    source.execute("CREATE TABLE mb.t (id INT PRIMARY KEY, v VARCHAR(10))")
    source.execute("INSERT INTO mb.t VALUES (1, 'one'), (2, 'two')")
    files = [str(p) for p in source.binlog_files()]
    tidb = tidb_factory()
    printed = subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"), "--no-defaults", *files],
                             capture_output=True, check=True).stdout.decode()
    # the BINLOG statements mariadb-binlog prints: the FORMAT_DESCRIPTION, then the rows
    statements = ["BINLOG '" + part.split("'", 1)[0] + "'" for part in printed.split("\nBINLOG '")[1:]]
    assert len(statements) >= 2
    tidb.execute("CREATE DATABASE mb")
    tidb.execute("CREATE TABLE mb.t (id INT PRIMARY KEY, v VARCHAR(10))")
    for statement in statements:
        tidb.execute(statement)                                     # OK, every one
    assert tidb.query("SELECT COUNT(*) FROM mb.t") == [(0,)]         # and no row
    done = cli("apply", "--to", tidb.dsn, "--method", "binlog", *files)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "--method binlog needs a MariaDB target; this one is 8.0.11-TiDB-v8.5" in err, err
    assert tidb.query("SELECT COUNT(*) FROM mb.t") == [(0,)]


# -- exactly once after kill -9 ----------------------------------------------------------------

def _markers_source(mariadb_factory, transactions: int):
    source = mariadb_factory(UTF8MB4)
    conn = source.connect()
    with conn.cursor() as cur:
        for sql in many_script("kt", transactions, 5).split(";\n"):
            if sql.strip():
                cur.execute(sql)
    conn.close()
    source.flush_logs()
    return source, [str(p) for p in source.binlog_files()]


def _markers(tidb) -> int:
    found = tidb.query("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kt' "
                       "AND TABLE_NAME = 'mk'")[0][0]
    return tidb.query("SELECT COUNT(*) FROM kt.mk")[0][0] if found else 0


def _rerun(cmd: list[str]) -> None:
    """The apply ``cmd`` run again to the end: it must succeed."""
    done = cli(*cmd[3:], timeout=600)
    assert done.returncode == 0, done.stderr.decode()


def _kill_then_rerun(cmd: list[str], landed, kills: int, most: int) -> None:
    """kill -9 of the apply ``cmd`` up to ``kills`` times, each once ``landed()`` (the rows
    of it in the target) moved by 20 to ``most`` since the run started - at least once (a
    run that ends first must end well) - then a rerun to the end."""
    rng, done = random.Random(), 0
    while done < kills:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        goal = landed() + rng.randint(20, most)
        while proc.poll() is None and landed() < goal:
            time.sleep(0.02)
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read().decode()
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done += 1
    assert done >= 1
    _rerun(cmd)


def _assert_once(source, tidb, transactions: int) -> None:
    assert [r[0] for r in tidb.query("SELECT id FROM kt.mk ORDER BY id")] == list(range(1, transactions + 1))
    for table in ["hot", "mk"] + [f"c{c}" for c in range(10)]:
        assert table_rows(source, "kt", table) == table_rows(tidb, "kt", table), table


@pytest.mark.parametrize("workers", [1, 16])
def test_kill_apply_into_tidb_then_rerun_applies_each_transaction_once(mariadb_factory, tidb_factory, workers):
    """kill -9 of the apply three times at random moments, then a rerun to the end; the
    runs are --no-safe (INSERT, not REPLACE): a transaction applied twice would fail on
    its marker's primary key."""
    transactions = 600
    source, files = _markers_source(mariadb_factory, transactions)
    tidb = tidb_factory()
    cmd = [sys.executable, "-m", "binlog.cli", "apply", "--to", tidb.dsn, "--no-safe", "--quiet",
           "--workers", str(workers), "--batch-transactions", "8", *files]
    _kill_then_rerun(cmd, lambda: _markers(tidb), kills=3, most=120)
    _assert_once(source, tidb, transactions)


def test_safe_mode_into_tidb_applies_each_transaction_once(mariadb_factory, tidb_factory):
    """The default safe mode (REPLACE and idempotent updates: a re-applied row change
    leaves the same row) is exactly once on TiDB too: kill -9 of a 16-worker apply twice,
    then a rerun; a table without a key (its INSERTs are not idempotent: a transaction
    applied twice would leave two rows) holds each transaction's row once."""
    transactions = 300
    source = mariadb_factory(UTF8MB4)
    source.execute("CREATE DATABASE sm")
    source.execute("CREATE TABLE sm.log (tx INT NOT NULL, v VARCHAR(20))")
    source.execute("CREATE TABLE sm.hot (id INT PRIMARY KEY, n INT NOT NULL)")
    source.execute("INSERT INTO sm.hot VALUES (1, 0), (2, 0), (3, 0)")
    conn = source.connect()
    with conn.cursor() as cur:
        for i in range(1, transactions + 1):
            cur.execute("BEGIN")
            cur.execute(f"INSERT INTO sm.log VALUES ({i}, 'tx {i}')")
            cur.execute(f"UPDATE sm.hot SET n = n + 1 WHERE id = {i % 3 + 1}")
            cur.execute("COMMIT")
    conn.close()
    source.flush_logs()
    files = [str(p) for p in source.binlog_files()]
    tidb = tidb_factory()
    cmd = [sys.executable, "-m", "binlog.cli", "apply", "--to", tidb.dsn, "--quiet", "--workers", "16",
           "--batch-transactions", "4", *files]

    def logged() -> int:
        found = tidb.query("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sm' "
                           "AND TABLE_NAME = 'log'")[0][0]
        return tidb.query("SELECT COUNT(*) FROM sm.log")[0][0] if found else 0

    _kill_then_rerun(cmd, logged, kills=2, most=80)
    assert tidb.query("SELECT tx, COUNT(*) FROM sm.log GROUP BY tx HAVING COUNT(*) <> 1") == []
    for table in ("log", "hot"):
        assert table_rows(source, "sm", table) == table_rows(tidb, "sm", table), table


def test_restart_tidb_during_an_apply_then_it_resumes_once(mariadb_factory, tidb_factory):
    """TiDB itself stopped under a 16-worker run (every session cut mid-batch) and started
    again on its store: the apply reconnects (or the rerun resumes) from the checkpoint
    TiDB committed.

    A stop, not kill -9: the test's store is unistore, which keeps the locks of a
    transaction being committed in memory and writes them out only when it closes
    (pkg/store/mockstore/unistore/tikv/mvcc.go: MVCCStore.Close -> dumpMemLocks, and
    SyncWrite off in mock.go), so a kill -9 between the commit of a transaction's primary
    key and its secondaries leaves half of it - seen once: a row of a transaction present
    and the checkpoint row of the same commit gone.  TiKV keeps those locks in its Raft
    log; the apply's own kill -9 is the test above."""
    transactions = 600
    source, files = _markers_source(mariadb_factory, transactions)
    tidb = tidb_factory()
    cmd = [sys.executable, "-m", "binlog.cli", "apply", "--to", tidb.dsn, "--no-safe", "--quiet",
           "--workers", "16", "--batch-transactions", "8", "--retry-timeout", "60", *files]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None and _markers(tidb) < 150:
            time.sleep(0.02)
        tidb.stop()
        tidb.start()
        proc.wait(300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _rerun(cmd)
    _assert_once(source, tidb, transactions)


# -- DDL TiDB refuses, or takes in part ----------------------------------------------------------

def _source_with(mariadb_factory, statements):
    source = mariadb_factory(UTF8MB4)
    for sql in ["CREATE DATABASE dd", *statements]:
        source.execute(sql)
    return source, [str(p) for p in source.binlog_files()]


@pytest.mark.parametrize("ddl, extra, refused", [
    ("CREATE TABLE dd.geo (id INT PRIMARY KEY, g GEOMETRY NOT NULL, SPATIAL INDEX (g))", (),
     "the target refused the DDL: error 1064"),
    ("CREATE TABLE dd.inv (id INT PRIMARY KEY, x INT INVISIBLE)", (), "the target refused the DDL: error 1064"),
    ("CREATE TABLE dd.l2 (id INT PRIMARY KEY, v VARCHAR(10)) CHARACTER SET latin2", (),
     "the target refused the DDL: error 1115"),
    # (TiDB would refuse it, 1273: the replay says so before, as for the collations TiDB would
    # take the statement without: tests/binlog/replay/test_apply_tidb_sessions.py)
    ("CREATE TABLE dd.sw (id INT PRIMARY KEY, v VARCHAR(10)) CHARACTER SET latin1 COLLATE latin1_swedish_ci",
     (), "TiDB has no collation latin1_swedish_ci (named in the statement)"),
    # (the binlog holds routines with their DEFINER, as the server wrote them)
    ("TRIGGER dd.tr BEFORE INSERT ON dd.base FOR EACH ROW SET NEW.v = NEW.v + 1", ("--routines",),
     "the target refused the DDL: error 1064"),
    ("PROCEDURE dd.pr() BEGIN SELECT 1; END", ("--routines",), "the target refused the DDL: error 1064"),
])
def test_ddl_tidb_refuses_stops_the_apply_naming_the_statement(mariadb_factory, tidb_factory, ddl, extra,
                                                               refused):
    """What this TiDB refuses, run on it by the apply: a clear error naming the statement,
    TiDB's error and what to do; the rows before it committed."""
    statement = ddl if ddl.startswith("CREATE") else f"CREATE {ddl}"
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.base (id INT PRIMARY KEY, v INT)", "INSERT INTO dd.base VALUES (1, 1)", statement])
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *extra, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert f"DDL failed: {refused}" in err, err
    assert "statement: CREATE " in err and ddl.split("(")[0].replace("dd.pr", "`dd`.`pr`") in err, err
    assert "--exclude-table" in err, err                            # the TiDB hint
    assert tidb.query("SELECT id, v FROM dd.base") == [(1, 1)]


def test_routines_are_not_replayed_without_routines(mariadb_factory, tidb_factory):
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.base (id INT PRIMARY KEY, v INT)",
        "CREATE TRIGGER dd.tr BEFORE INSERT ON dd.base FOR EACH ROW SET NEW.v = NEW.v + 1",
        "INSERT INTO dd.base VALUES (1, 1)"])
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "TRIGGER definitions (and those of triggers, procedures, functions, events) are not replayed" in err, err
    assert tidb.query("SELECT id, v FROM dd.base") == [(1, 2)]        # the row the trigger wrote


def test_fulltext_indexes_tidb_leaves_out_are_reported(mariadb_factory, tidb_factory):
    """TiDB takes CREATE TABLE with a FULLTEXT index and leaves the index out (warning
    1214); ALTER TABLE ... FORCE (a rebuild, which doctor advises on a legacy source) it
    refuses (error 8200): the one is reported, the other not replayed, with a warning
    naming each; the rows arrive."""
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.doc (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY fx (body))",
        "INSERT INTO dd.doc VALUES (1, 'full text')",
        "ALTER TABLE dd.doc FORCE",
        "INSERT INTO dd.doc VALUES (2, 'after the rebuild')"])
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert ("the target took the DDL with warning 1214: The used table type doesn't support FULLTEXT "
            "indexes: CREATE TABLE dd.doc") in err, err
    assert "not replayed on TiDB, which refuses it (error 8200): a table rebuild" in err, err
    assert "ALTER TABLE dd.doc FORCE" in err, err
    assert "FULLTEXT" not in tidb.query("SHOW CREATE TABLE dd.doc")[0][1]
    with pytest.raises(Exception, match="8200"):
        tidb.execute("ALTER TABLE dd.doc FORCE")
    assert tidb.query("SELECT id, body FROM dd.doc ORDER BY id") == [(1, "full text"), (2, "after the rebuild")]


def test_foreign_keys_as_the_source_has_them_are_replayed(mariadb_factory, tidb_factory):
    """TiDB 8.5 takes foreign keys (with ON DELETE CASCADE) and enforces them; the replay's
    session has foreign_key_checks off, as a replica applying rows does, so a child row
    the source wrote with its checks off (its parent absent) arrives too."""
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.p (id INT PRIMARY KEY)",
        "CREATE TABLE dd.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES dd.p (id) ON DELETE CASCADE)",
        "INSERT INTO dd.p VALUES (1), (2)", "INSERT INTO dd.c VALUES (10, 1), (20, 2)",
        "SET SESSION foreign_key_checks = 0", "INSERT INTO dd.c VALUES (30, 99)"])
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    assert done.returncode == 0, done.stderr.decode()
    assert "FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE" in tidb.query("SHOW CREATE TABLE dd.c")[0][1]
    assert tidb.query("SELECT id, pid FROM dd.c ORDER BY id") == [(10, 1), (20, 2), (30, 99)]
    with pytest.raises(pymysql.err.MySQLError, match="1452"):        # enforced outside the replay
        tidb.execute("INSERT INTO dd.c VALUES (40, 98)")


def test_a_row_over_tidbs_default_entry_limit_is_applied(mariadb_factory, tidb_factory):
    """A 7 MiB row: TiDB refuses an entry over 6 MiB unless the session raises
    tidb_txn_entry_size_limit (error 8025), which the apply does on a TiDB target."""
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.big (id INT PRIMARY KEY, b LONGBLOB)",
        "INSERT INTO dd.big VALUES (1, REPEAT('x', 7 << 20))"])
    tidb = tidb_factory()
    with pytest.raises(Exception, match="8025"):
        tidb.execute("CREATE TABLE test.big (id INT PRIMARY KEY, b LONGBLOB)")
        tidb.execute("INSERT INTO test.big VALUES (1, REPEAT('x', 7 << 20))")
    done = cli("apply", "--to", tidb.dsn, *files, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert tidb.query("SELECT id, LENGTH(b) FROM dd.big") == [(1, 7 << 20)]


def test_a_batch_over_tidbs_transaction_limit_says_what_to_do(mariadb_factory, tidb_factory):
    source, files = _source_with(mariadb_factory, [
        "CREATE TABLE dd.w (id INT PRIMARY KEY, pad VARCHAR(2000))", "USE dd",
        "INSERT INTO dd.w SELECT seq, REPEAT('p', 2000) FROM seq_1_to_2000"])
    tidb = tidb_factory({"performance": {"txn-total-size-limit": 1 << 20}})
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "error 8004: Transaction is too large" in err, err
    assert "txn-total-size-limit" in err and "--batch-rows" in err, err
