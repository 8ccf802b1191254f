"""`binlog apply --method binlog` on real servers: a MariaDB target applies the source's row
events themselves (BINLOG statements, as `mariadb-binlog | mariadb` does), legacy temporal
tables still go as SQL, and the checkpoint's exactly-once holds (kill -9 and rerun, a
conflict in the middle of a batch, a source restart inside a batch).  Expected contents
come from the source server (CHECKSUM TABLE and row by row)."""
from __future__ import annotations

import base64
import re
import signal

import pytest
from replay_helpers import (
    apply_batches_source,
    assert_same_contents,
    cli,
    contents,
    dsn,
    load_schema,
)

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def source_and_files(tmp_path_factory):
    """The source after tests/binlog/replay/sql/apply_batches.sql: (server, DML binlogs, schema)."""
    with apply_batches_source(tmp_path_factory.mktemp("binlog_method")) as found:
        yield found


@pytest.fixture(scope="module")
def target():
    from support.mariadb_server import MariaDBServer

    with MariaDBServer({}) as srv:
        yield srv


def _fresh(target, schema_file, *, modern=False, db="ab") -> None:
    for name in (db, "binlog_apply"):
        target.execute(f"DROP DATABASE IF EXISTS {name}")
    with open(schema_file, encoding="utf-8") as f:
        dump = f.read()
    if modern:      # the target's legacy-format tables in the MySQL 5.6 layouts instead
        dump = dump.replace("/* mariadb-5.3 */", "")
    if db != "ab":
        dump = dump.replace("`ab`", f"`{db}`")
    target.execute(f"CREATE DATABASE IF NOT EXISTS {db} CHARACTER SET utf8mb4")
    target.execute(f"USE {db}")
    load_schema(target, f"USE `{db}`;\n" + dump)


def _apply(target, files, schema_file, *extra, env=None):
    return cli("apply", "--method", "binlog", "--to", dsn(target), "--schema-ddl", schema_file,
               "--no-ddl", *extra, *files, env=env)


def _general_log(target, run):
    target.execute("SET GLOBAL log_output = 'TABLE'")
    target.execute("TRUNCATE mysql.general_log")
    target.execute("SET GLOBAL general_log = 1")
    try:
        done = run()
    finally:
        target.execute("SET GLOBAL general_log = 0")
    queries = [r[0] for r in target.query(
        "SELECT CAST(argument AS CHAR) FROM mysql.general_log WHERE command_type = 'Query'")]
    return done, queries


def _payloads(queries) -> list[bytes]:
    return [base64.b64decode(q[len("BINLOG '"):-1]) for q in queries if q.startswith("BINLOG '")]


def test_row_events_go_as_they_are_and_legacy_temporals_as_sql(source_and_files, target):
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    done, queries = _general_log(target, lambda: _apply(target, files, schema_file))
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["ab"])
    payloads = _payloads(queries)
    assert len(payloads) >= 5
    maps = b"".join(payloads)
    assert b"\x01k\x00" in maps and b"\x02c2\x00" in maps       # TABLE_MAPs of ab.k, ab.c2
    # ab.legacy (TIMESTAMP(3)/DATETIME(6)/TIME(2) in the 5.3 layouts) never goes as events
    assert b"\x06legacy\x00" not in maps
    assert any(re.match(r"(INSERT|UPDATE|DELETE).*`ab`\.`legacy`", q) for q in queries)
    assert not any(q.startswith("REPLACE") for q in queries)    # --method binlog is not --safe
    # one FORMAT_DESCRIPTION per binlog, not per statement
    assert sum(1 for p in payloads if p[4] == 15) <= len(files)


def test_legacy_temporals_into_a_modern_target(source_and_files, target):
    """The target's tables in the MySQL 5.6 layouts: the legacy rows, decoded here, land
    with their fractions (values compared; CHECKSUM TABLE differs by layout)."""
    source, files, schema_file = source_and_files
    _fresh(target, schema_file, modern=True)
    done = _apply(target, files, schema_file)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["ab"], checksum=False)
    legacy = target.query("SELECT CAST(ts AS CHAR), CAST(dt AS CHAR), CAST(tm AS CHAR) FROM ab.legacy "
                          "WHERE id = 3")
    assert legacy == source.query("SELECT CAST(ts AS CHAR), CAST(dt AS CHAR), CAST(tm AS CHAR) "
                                  "FROM ab.legacy WHERE id = 3")
    assert legacy[0][2].endswith(".50")


@pytest.mark.parametrize("fault", ["kill-after-commit:3", "kill-before-commit:2"])
def test_kill_then_rerun_applies_each_transaction_once(source_and_files, target, fault):
    """Row events are applied strictly (a row applied twice is a duplicate key error):
    the rerun succeeding with the source's contents is exactly-once."""
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    killed = _apply(target, files, schema_file, "--batch-transactions", "1",
                    env={"BINLOG_APPLY_FAULT": fault})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    done = _apply(target, files, schema_file)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["ab"])


def test_a_conflict_stops_the_run_and_keeps_the_transactions_before_it(source_and_files, target):
    """A row already on the target: the transaction that inserts it fails (exit 5, the
    server's message and the rows events named); the transactions of the batch before it
    are applied again and committed, so a rerun after the fix completes the copy."""
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    target.execute("INSERT INTO ab.k VALUES (20050, 'in the way', 0)")
    failed = _apply(target, files, schema_file, "--batch-transactions", "100")
    err = failed.stderr.decode()
    assert failed.returncode == 5, err
    assert "Duplicate entry" in err and "in the rows events at" in err
    done_before = target.query("SELECT transactions FROM binlog_apply.checkpoint")
    assert done_before and done_before[0][0] >= 5, done_before
    assert target.query("SELECT COUNT(*) FROM ab.u")[0][0] == 500    # committed before it
    target.execute("DELETE FROM ab.k WHERE id = 20050")
    done = _apply(target, files, schema_file)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["ab"])


def test_rewrite_db_rewrites_the_table_maps(source_and_files, target):
    source, files, schema_file = source_and_files
    _fresh(target, schema_file, db="other")
    done = _apply(target, files, schema_file, "--rewrite-db", "ab->other")
    assert done.returncode == 0, done.stderr.decode()
    a, b = contents(source, ["ab"]), contents(target, ["other"])
    assert {k.split(".", 1)[1]: v for k, v in a.items()} == {k.split(".", 1)[1]: v for k, v in b.items()}


def test_a_table_filter_sends_only_the_kept_tables_events(source_and_files, target):
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    done, queries = _general_log(target, lambda: _apply(target, files, schema_file,
                                                         "--table", "ab.k", "--table", "ab.legacy"))
    assert done.returncode == 0, done.stderr.decode()
    a, b = contents(source, ["ab"]), contents(target, ["ab"])
    assert b["ab.k"] == a["ab.k"] and b["ab.legacy"] == a["ab.legacy"]
    assert all(not b[t][1] for t in ("ab.u", "ab.s", "ab.nopk", "ab.c2"))
    maps = b"".join(_payloads(queries))
    assert b"\x01k\x00" in maps and b"\x01u\x00" not in maps and b"\x02c2\x00" not in maps


def test_usage_errors(source_and_files, target):
    _, files, schema_file = source_and_files
    for extra in (["--safe"], ["--split-updates"]):
        done = _apply(target, files, schema_file, *extra)
        assert done.returncode == 2, done.stderr.decode()
        assert "--method sql" in done.stderr.decode()


@pytest.fixture(scope="module")
def small_source():
    """A source with a transaction, a restart (the next binlog's FORMAT_DESCRIPTION has
    ``created`` set), another transaction, a 300 kB row, and a 4 MB transaction (its
    events go to the target before its COMMIT is read)."""
    from support.mariadb_server import MariaDBServer

    with MariaDBServer({"binlog_row_metadata": "FULL"}) as source:
        source.execute("CREATE DATABASE sm")
        source.execute("CREATE TABLE sm.t (id INT PRIMARY KEY, v LONGTEXT)")
        source.flush_logs()
        first = source.master_status()[0]
        source.execute("INSERT INTO sm.t SELECT seq, CONCAT('before ', seq) FROM sm.seq_1_to_50")
        source.restart()
        source.execute("INSERT INTO sm.t SELECT seq, CONCAT('after ', seq) FROM sm.seq_51_to_60")
        source.execute("INSERT INTO sm.t VALUES (61, REPEAT('x', 300000))")
        source.execute("INSERT INTO sm.t SELECT 100 + seq, REPEAT(CHAR(64 + seq % 26), 200) "
                       "FROM sm.seq_1_to_20000")
        source.flush_logs()
        names = source.binlog_names()
        files = [p for p in source.binlog_files() if names.index(p.name) >= names.index(first)]
        yield source, [str(p) for p in files]


def _created(path: str) -> int:
    with open(path, "rb") as f:
        head = f.read(4 + 19 + 56)
    return int.from_bytes(head[4 + 19 + 52:4 + 19 + 56], "little")


def test_a_source_restart_inside_a_batch_loses_nothing(small_source, target):
    """The binlog after a restart starts with a FORMAT_DESCRIPTION whose ``created`` is
    set (servers that roll back the open transaction at such an FDE would drop the one
    before the restart from the batch; it goes zeroed): both transactions land."""
    source, files = small_source
    assert any(_created(f) for f in files[1:]), [_created(f) for f in files]
    _empty_sm(target)
    done = cli("apply", "--method", "binlog", "--to", dsn(target), "--no-ddl",
               "--batch-transactions", "100", *files)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["sm"])


def _empty_sm(target) -> None:
    target.execute("DROP DATABASE IF EXISTS sm")
    target.execute("DROP DATABASE IF EXISTS binlog_apply")
    target.execute("CREATE DATABASE sm")
    target.execute("CREATE TABLE sm.t (id INT PRIMARY KEY, v LONGTEXT)")


@pytest.mark.parametrize("method", ["binlog", "sql"])
def test_a_large_transaction_goes_before_its_commit_is_read(small_source, target, method):
    """The 4 MB transaction (20,000 rows) is sent as it is read (its events, or with
    --method sql multi-row statements every --batch-rows changes), after a savepoint; cut
    before its COMMIT (--stop-position) the target rolls back to it: nothing of the
    transaction is committed, everything before it is; the next run completes the copy."""
    from binlog import BinlogReader

    source, files = small_source
    xids = [(n, e.event.header.offset) for n, f in enumerate(files) for e in BinlogReader([f]).items()
            if getattr(e, "event", None) is not None and e.event.header.type_code == 16]
    last, cut = xids[-1]       # the big transaction's XID: it is not read
    _empty_sm(target)
    done, queries = _general_log(target, lambda: cli(
        "apply", "--method", method, "--to", dsn(target), "--no-ddl", "--stop-position",
        str(cut), "--batch-transactions", "100", *files[:last + 1]))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "the input ends before its COMMIT" in err
    assert "SAVEPOINT binlog_apply_early" in queries
    assert "ROLLBACK TO SAVEPOINT binlog_apply_early" in queries
    assert target.query("SELECT COUNT(*), MAX(id) FROM sm.t") == [(61, 61)]
    done, queries = _general_log(target, lambda: cli(
        "apply", "--method", method, "--to", dsn(target), "--no-ddl", *files))
    assert done.returncode == 0, done.stderr.decode()
    assert "SAVEPOINT binlog_apply_early" in queries
    assert_same_contents(source, target, ["sm"])


@pytest.mark.parametrize("method", ["binlog", "sql"])
def test_a_conflict_in_a_transaction_sent_early(small_source, target, method):
    """A row of the 4 MB transaction is already on the target: the part sent before its
    COMMIT fails; the transactions before it are committed (the checkpoint stops right
    before it) and nothing of it stays."""
    source, files = small_source
    _empty_sm(target)
    target.execute("INSERT INTO sm.t VALUES (15000, 'in the way')")
    extra = ["--no-safe"] if method == "sql" else []
    failed = cli("apply", "--method", method, "--to", dsn(target), "--no-ddl", "--batch-transactions",
                 "100", *extra, *files)
    err = failed.stderr.decode()
    assert failed.returncode == 5, err
    assert "Duplicate entry '15000'" in err
    assert target.query("SELECT COUNT(*) FROM sm.t") == [(62,)]     # 61 before it + the one in the way
    assert target.query("SELECT transactions FROM binlog_apply.checkpoint") == [(3,)]
    target.execute("DELETE FROM sm.t WHERE id = 15000")
    done = cli("apply", "--method", method, "--to", dsn(target), "--no-ddl", *extra, *files)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["sm"])


def test_an_event_over_the_targets_max_allowed_packet_is_refused(small_source, target):
    source, files = small_source
    _empty_sm(target)
    before = target.variable("max_allowed_packet")
    target.set_global("max_allowed_packet", 65536)
    try:
        done = cli("apply", "--method", "binlog", "--to", dsn(target), "--no-ddl", *files)
    finally:
        target.set_global("max_allowed_packet", before)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "max_allowed_packet (65536)" in err and "--method sql" in err
    # everything before that transaction was applied and committed
    assert target.query("SELECT COUNT(*) FROM sm.t")[0][0] == 60


def test_a_user_without_binlog_replay_is_told_so(small_source, target):
    _, files = small_source
    target.execute("CREATE USER IF NOT EXISTS 'plainapply'@'127.0.0.1' IDENTIFIED BY 'pw-1'")
    target.execute("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON *.* TO 'plainapply'@'127.0.0.1'")
    target.execute("DROP DATABASE IF EXISTS binlog_apply")
    done = cli("apply", "--method", "binlog", "--to",
               f"mysql://plainapply:pw-1@127.0.0.1:{target.port}/", "--no-ddl", *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "BINLOG REPLAY" in err and "pw-1" not in err


def test_target_triggers_do_not_fire(small_source, target):
    """As on a replica (slave_run_triggers_for_rbr=NO): the row events are not refused for
    a target trigger, and it does not write the rows again."""
    source, files = small_source
    _empty_sm(target)
    target.execute("CREATE TABLE sm.log (id INT)")
    target.execute("CREATE TRIGGER sm.t_ai AFTER INSERT ON sm.t FOR EACH ROW "
                   "INSERT INTO sm.log VALUES (NEW.id)")
    done = cli("apply", "--method", "binlog", "--to", dsn(target), "--no-ddl", *files)
    assert done.returncode == 0, done.stderr.decode()
    assert target.query("SELECT COUNT(*) FROM sm.log") == [(0,)]
    assert target.query("SELECT COUNT(*) FROM sm.t") == source.query("SELECT COUNT(*) FROM sm.t")
