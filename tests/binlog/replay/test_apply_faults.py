"""`binlog apply` on real servers under target faults: it never commits a value the
target changed (a narrower column), counts and reports target rows that safe mode's
REPLACE deleted and replaced, reconnects to a restarting target for a bounded time, and
its summary counts only what the target committed."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from replay_helpers import REPO, cli, dsn, run_script

pytestmark = pytest.mark.server


def _summary(stderr: str) -> tuple[int, int]:
    m = re.search(r"binlog apply: (\d+) transaction\(s\), (\d+) row change\(s\)", stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2))


def test_a_value_the_target_column_cannot_hold_stops_with_the_row_named(two_servers):
    source, target = two_servers
    run_script(source, """CREATE DATABASE n7;
CREATE TABLE n7.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO n7.t VALUES (1, 'short');
INSERT INTO n7.t VALUES (3, 'ok'), (4, 'much too long');
""")
    target.execute("CREATE DATABASE n7")
    target.execute("CREATE TABLE n7.t (id INT PRIMARY KEY, v VARCHAR(5))")   # narrower
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), "--no-ddl", *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "row 2 of 2: insert of `n7`.`t` (id=4)" in err, err
    assert "Data truncated for column 'v'" in err, err
    # the transaction before it is committed, nothing of the failing one
    assert target.query("SELECT id, v FROM n7.t ORDER BY id") == [(1, "short")]


_MANY_EVENTS = """CREATE DATABASE le;
CREATE TABLE le.t (id INT PRIMARY KEY, pad VARCHAR(255));
INSERT INTO le.t VALUES (0, 'before');
USE le;
INSERT INTO le.t SELECT seq, REPEAT('x', 190) FROM seq_1_to_3000;
"""


def _many_events(source, target, script: str = "", pad: int = 255, rows: str = "") -> list[str]:
    """The source's binlogs after _MANY_EVENTS (and ``script``); the target's le.t made
    with ``pad`` wide a column, holding ``rows`` (VALUES text) already."""
    run_script(source, _MANY_EVENTS + script)
    target.execute("CREATE DATABASE le")
    target.execute(f"CREATE TABLE le.t (id INT PRIMARY KEY, pad VARCHAR({pad}))")
    if rows:
        target.execute(f"INSERT INTO le.t VALUES {rows}")
    return [str(p) for p in source.binlog_files()]


@pytest.mark.parametrize("early", [False, True])
def test_a_refused_row_deep_in_a_many_event_insert_is_named(two_servers, early):
    """3,000 rows in ~80 rows events go as a few multi-row statements rendered from the
    events' bytes (no row decoded); the target refuses the 2,500th row: the error names
    it (the events are decoded then), nothing of the transaction is committed.  With
    --batch-rows 500 the transaction goes to the target before its COMMIT is read."""
    source, target = two_servers
    files = _many_events(source, target, rows="(2500, 'already here')")
    extra = ("--batch-rows", "500") if early else ()
    done = cli("apply", "--to", dsn(target), "--no-safe", "--no-ddl", *extra, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert re.search(r"row 2500 of \d+: insert of `le`.`t` \(id=2500\)", err), err
    assert "Duplicate entry '2500'" in err, err
    assert target.query("SELECT COUNT(*), MIN(id), MAX(id) FROM le.t") == [(2, 0, 2500)]


def test_safe_mode_replaces_a_row_deep_in_a_many_event_insert(two_servers):
    source, target = two_servers
    files = _many_events(source, target, rows="(2500, 'already here'), (1700, 'and here')")
    done = cli("apply", "--to", dsn(target), "--no-ddl", "--batch-rows", "700", *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert _summary(err) == (2, 3001), err
    assert "2 row(s) already on the target" in err or err.count("1 row(s) already on the target") == 2, err
    expected = source.query("SELECT COUNT(*), CAST(SUM(CRC32(CONCAT(id, pad))) AS CHAR) FROM le.t")
    assert target.query("SELECT COUNT(*), CAST(SUM(CRC32(CONCAT(id, pad))) AS CHAR) FROM le.t") == expected


def test_a_value_too_long_deep_in_a_many_event_update_names_the_row(two_servers):
    """An UPDATE of 3,001 rows (delete + replace runs rendered from the events' bytes): the
    target's narrower column truncates the 2,500th row's new value (a warning, at a row of
    the multi-row REPLACE): the error names that row of the transaction, nothing of it is
    committed."""
    source, target = two_servers
    files = _many_events(source, target, "UPDATE le.t SET pad = CONCAT(REPEAT('y', 150), "
                         "IF(id = 2500, REPEAT('z', 60), ''));\n", pad=200)
    done = cli("apply", "--to", dsn(target), "--no-ddl", *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert re.search(r"row 2501 of 3001: update of `le`.`t` \(id=2500\)", err), err
    assert "Data too long for column 'pad'" in err or "Data truncated for column 'pad'" in err, err
    assert target.query("SELECT COUNT(*), MAX(LENGTH(pad)) FROM le.t") == [(3001, 190)]


def test_enum_error_value_is_applied_as_the_source_holds_it(two_servers):
    source, target = two_servers
    run_script(source, """CREATE DATABASE e7;
CREATE TABLE e7.t (id INT PRIMARY KEY, c ENUM('a', 'b'));
SET SESSION sql_mode = '';
INSERT INTO e7.t VALUES (1, 'zzz'), (2, 'b');
""")
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), *files)
    assert done.returncode == 0, done.stderr.decode()
    query = "SELECT id, CAST(c AS CHAR), c + 0 FROM e7.t ORDER BY id"
    assert target.query(query) == source.query(query) == [(1, "", 0), (2, "b", 2)]


def test_safe_mode_counts_and_reports_replaced_target_rows(two_servers):
    source, target = two_servers
    run_script(source, """CREATE DATABASE s7;
CREATE TABLE s7.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO s7.t VALUES (1, 'one'), (2, 'two'), (3, 'three');
""")
    target.execute("CREATE DATABASE s7")
    target.execute("CREATE TABLE s7.t (id INT PRIMARY KEY, v VARCHAR(20))")
    target.execute("INSERT INTO s7.t VALUES (1, 'diverged'), (3, 'diverged')")
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), "--no-ddl", *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "2 row(s) already on the target with the same key were deleted and replaced" in err
    assert "2 target row(s) deleted and replaced by REPLACE" in err
    assert target.query("SELECT id, v FROM s7.t ORDER BY id") == \
        [(1, "one"), (2, "two"), (3, "three")]


def _apply_pausing_after_commit_3(target, files, *, retry_timeout: float) -> subprocess.Popen:
    """``binlog apply`` in batches of 2 transactions, pausing 1.5 s after its third commit
    (the first batch of inserts, after CREATE DATABASE and CREATE TABLE); returned once
    the target's checkpoint shows that commit, so the caller can kill the target under
    the pause."""
    env = {**os.environ, "BINLOG_APPLY_FAULT": "pause-after-commit:3", "BINLOG_APPLY_PAUSE": "1.5"}
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--to", dsn(target),
                             "--batch-transactions", "2", "--retry-timeout", str(retry_timeout),
                             *files],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # (the table, not just its database: apply creates one, then the other)
        made = target.query("SELECT COUNT(*) FROM information_schema.tables WHERE "
                            "table_schema = 'binlog_apply' AND table_name = 'checkpoint'")
        rows = target.query("SELECT transactions FROM binlog_apply.checkpoint") if made[0][0] else []
        if rows and rows[0][0] >= 4:
            return proc
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the apply did not reach its third commit")


def test_apply_rides_out_a_target_restart_and_counts_only_commits(two_servers):
    source, target = two_servers
    inserts = "\n".join(f"INSERT INTO r8.t VALUES ({i}, 'v{i}');" for i in range(1, 31))
    run_script(source, f"CREATE DATABASE r8;\nCREATE TABLE r8.t (id INT PRIMARY KEY, v VARCHAR(9));\n{inserts}\n")
    files = [str(p) for p in source.binlog_files()]
    proc = _apply_pausing_after_commit_3(target, files, retry_timeout=60)
    try:
        target._kill()
        time.sleep(4)            # refused for ~2.5 s after the apply wakes: it must wait
        target.start()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = err.decode()
    assert proc.returncode == 0, err
    assert "connection to the target lost" in err and "reconnecting" in err, err
    assert target.query("SELECT COUNT(*) FROM r8.t") == [(30,)]
    txs, rows = _summary(err)
    assert rows == 30 and txs == 30, err        # each row once, however often it was sent
    assert target.query("SELECT row_changes FROM binlog_apply.checkpoint") == [(30,)]


def test_reconnect_gives_up_after_the_retry_timeout(two_servers):
    source, target = two_servers
    run_script(source, "CREATE DATABASE g8;\nCREATE TABLE g8.t (id INT PRIMARY KEY);\n"
                       + "\n".join(f"INSERT INTO g8.t VALUES ({i});" for i in range(10)))
    files = [str(p) for p in source.binlog_files()]
    proc = _apply_pausing_after_commit_3(target, files, retry_timeout=2)
    try:
        target._kill()
        started = time.monotonic()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = err.decode()
    assert proc.returncode == 5, err
    assert "still refused after 2s of retries" in err, err
    assert time.monotonic() - started < 20
    txs, rows = _summary(err)
    assert (txs, rows) == (2, 2), err           # the one batch the target committed
    target.start()
