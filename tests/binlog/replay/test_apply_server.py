"""`binlog apply` between two real mariadbd: every type family of the sample workload plus
hostile strings, DDL replayed from the binlog, crashes (SIGKILL right after and right
before a target commit, a lost connection, Ctrl-C) and resumption - the target ends with
the source's exact contents (CHECKSUM TABLE and row by row), no row lost or doubled."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from replay_helpers import REPO, assert_same_contents, cli, dsn, run_script, script

pytestmark = pytest.mark.server
DBS = ["tf", "hx"]


def _checkpoint(target):
    rows = target.query("SELECT binlog_file, binlog_pos, gtid, resume_file, resume_pos, "
                        "transactions FROM binlog_apply.checkpoint WHERE name = 'default'")
    return rows[0] if rows else None


def _source_end(source):
    """(file, position, GTID) after the source's last transaction."""
    file, pos = source.master_status()
    gtid = source.query("SELECT @@gtid_binlog_pos")[0][0]
    return file, pos, gtid


@pytest.fixture
def loaded(two_servers):
    source, target = two_servers
    run_script(source, script("types_full.sql"))
    run_script(source, script("hostile.sql"))
    end = _source_end(source)
    files = [str(p) for p in source.binlog_files()]
    return source, target, files, end


def test_apply_crash_and_resume_gives_identical_contents(loaded):
    source, target, files, (end_file, end_pos, end_gtid) = loaded
    to = dsn(target)
    # 1. SIGKILL right after the 3rd target commit (batches of 2 source transactions)
    killed = cli("apply", "--to", to, "--batch-transactions", "2", *files,
                 env={"BINLOG_APPLY_FAULT": "kill-after-commit:3"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    cp = _checkpoint(target)
    assert cp is not None and 3 <= cp[5] <= 6, cp     # 3 commits (DDL commits alone)
    # 2. SIGKILL after the statements and the checkpoint update, before the COMMIT:
    #    nothing of that batch may survive
    killed = cli("apply", "--to", to, "--batch-transactions", "3", *files,
                 env={"BINLOG_APPLY_FAULT": "kill-before-commit:4"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    cp2 = _checkpoint(target)
    assert cp[5] < cp2[5] < 100, cp2                  # 3 commits went in, the 4th did not
    # 3. the connection drops before a commit: reconnect, resume from the checkpoint
    dropped = cli("apply", "--to", to, "--batch-transactions", "5", "--retries", "2", *files,
                  env={"BINLOG_APPLY_FAULT": "drop-connection-before-commit:2"})
    assert dropped.returncode == 0, dropped.stderr.decode()
    assert b"connection to the target lost" in dropped.stderr and b"reconnecting" in dropped.stderr
    assert_same_contents(source, target, DBS)
    cp3 = _checkpoint(target)
    assert (cp3[0], cp3[1], cp3[2]) == (end_file, end_pos, end_gtid)
    assert (cp3[3], cp3[4]) == (end_file, end_pos)
    # 4. a run with nothing new applies nothing and changes nothing
    again = cli("apply", "--to", to, *files)
    assert again.returncode == 0, again.stderr.decode()
    assert b"0 transaction(s), 0 row change(s), 0 DDL" in again.stderr
    # the checkpoint table's own exclusion is not the user's filter: no "matched no table"
    assert b"matched no table" not in again.stderr, again.stderr.decode()
    assert_same_contents(source, target, DBS)


def test_ctrl_c_then_resume(loaded):
    """Ctrl-C during a run: exit 130, the resume message, the checkpoint of the last
    commit; a rerun finishes.  The run is held after its 10th commit (the pause hook,
    BINLOG_APPLY_FAULT=pause-after-commit:10), so the signal always comes before its end."""
    source, target, files, _ = loaded
    env = {**os.environ, "BINLOG_APPLY_FAULT": "pause-after-commit:10", "BINLOG_APPLY_PAUSE": "300"}
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--to", dsn(target),
                             "--batch-transactions", "1", *files], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _checkpoint_or_none(target) is None:      # its first commits are in
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "no commit in 120 s"
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it was interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"interrupted" in err and b"run the same command to resume" in err, err.decode()
    held = _checkpoint(target)
    assert 0 < held[5] <= 10, held                  # the commits before the signal, no more
    done = cli("apply", "--to", dsn(target), *files)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, DBS)


def _checkpoint_or_none(target):
    """The checkpoint, None before apply has made its table."""
    made = target.query("SELECT COUNT(*) FROM information_schema.tables "
                        "WHERE table_schema = 'binlog_apply' AND table_name = 'checkpoint'")
    return _checkpoint(target) if made[0][0] else None


def test_constraint_failure_names_transaction_and_row(two_servers):
    source, target = two_servers
    run_script(source, """CREATE DATABASE k;
USE k;
CREATE TABLE t (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY (code));
INSERT INTO t VALUES (1, 'a'), (2, 'b');
INSERT INTO t VALUES (3, 'c');
""")
    files = [str(p) for p in source.binlog_files()]
    gtid = source.query("SELECT @@gtid_binlog_pos")[0][0]
    # the target already has a row the source's last insert collides with
    target.execute("CREATE DATABASE k")
    target.execute("CREATE TABLE k.t (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY (code))")
    target.execute("INSERT INTO k.t VALUES (9, 'c')")
    failed = cli("apply", "--to", dsn(target), "--no-safe", "--no-ddl", *files)
    assert failed.returncode == 5, failed.stderr.decode()
    err = failed.stderr.decode()
    assert f"transaction {gtid}" in err and "row 1 of 1: insert of `k`.`t` (id=3)" in err
    assert "Duplicate entry 'c'" in err and "error 1062" in err
    # what came before the failing transaction is committed and checkpointed
    assert target.query("SELECT id FROM k.t ORDER BY id") == [(1,), (2,), (9,)]


def test_lost_connection_without_retries_is_a_clear_error(loaded):
    source, target, files, _ = loaded
    failed = cli("apply", "--to", dsn(target), "--retries", "0", *files,
                 env={"BINLOG_APPLY_FAULT": "drop-connection-before-commit:3"})
    assert failed.returncode == 5
    err = failed.stderr.decode()
    assert "connection to the target lost" in err and "nothing of it was committed" in err
    assert "run the same command again" in err
    assert cli("apply", "--to", dsn(target), *files).returncode == 0
    assert_same_contents(source, target, DBS)
