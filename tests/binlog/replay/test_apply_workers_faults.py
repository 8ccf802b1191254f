"""``binlog apply --workers 16`` under faults, on real servers: kill -9 of the apply at
random moments and of the target, then reruns; a deadlock between two workers; a
refused row.  After the last rerun the target equals the source (CHECKSUM TABLE and row
by row), and the target's own binlog shows every source transaction's marker row
committed exactly once (a transaction applied twice would show twice, whatever the
mode)."""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest
from replay_helpers import REPO, assert_same_contents, cli, dsn, run_script
from workers_helpers import committed_markers, many_script

pytestmark = pytest.mark.server

SEED = int(os.environ.get("BINLOG_KILL_SEED", time.time()))


def _apply_cmd(target, files, *extra) -> list[str]:
    return [sys.executable, "-m", "binlog.cli", "apply", "--to", dsn(target), "--workers", "16",
            "--batch-transactions", "8", "--quiet", *extra, *files]


def _start(cmd, fault: dict | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BINLOG_APPLY_FAULT"}
    return subprocess.Popen(cmd, cwd=REPO, env={**env, **(fault or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _source(source, transactions: int) -> list[str]:
    run_script(source, many_script("kf", transactions, 5))
    return [str(p) for p in source.binlog_files()]


def _committed(target) -> int:
    found = target.query("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'kf' "
                         "AND table_name = 'mk'")
    return target.query("SELECT COUNT(*) FROM kf.mk")[0][0] if found[0][0] else 0


def _kill_apply_repeatedly(source, target, kills: int, transactions: int, safe: str) -> None:
    """Start the apply, kill -9 it at a random moment after it has committed a random
    share more of the markers, ``kills`` times; then run it to the end.  Each run is held
    by the pause hook after a commit it makes before its end (a commit takes at most 8
    transactions, so it makes at least a commit per 8 left): no run ends before its kill,
    every one of ``kills`` lands (counted: a run alive at its kill that committed more than
    the runs before it).  A run held before its share is in is killed there."""
    files = _source(source, transactions)
    rng = random.Random(SEED)
    cmd = _apply_cmd(target, files, safe)
    landed = 0
    for killed in range(kills):
        done = _committed(target)
        goal = done + rng.randint(1, max(2, (transactions - done) // (kills - killed + 1)))
        hold = {"BINLOG_APPLY_FAULT": f"pause-after-commit:{max(1, (transactions - done) // 8)}",
                "BINLOG_APPLY_PAUSE": "600"}
        proc = _start(cmd, hold)
        seen, since = done, time.monotonic()
        while (now := _committed(target)) < goal:
            assert proc.poll() is None, f"seed {SEED}: run {killed + 1} ended: {proc.stderr.read().decode()}"
            if now != seen:
                seen, since = now, time.monotonic()
            elif time.monotonic() - since > (2 if now > done else 60):
                break                       # held by the pause: killed there
            time.sleep(0.01)
        assert proc.poll() is None, f"seed {SEED}: run {killed + 1} ended before its kill"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        landed += _committed(target) > done
    assert landed == kills, f"seed {SEED}: {landed} of {kills} kills landed inside a run"
    before = _committed(target)
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, timeout=600)
    err = done.stderr.decode()
    assert done.returncode == 0, f"seed {SEED}: {err}"
    assert 0 < before < transactions, f"seed {SEED}: {before} of {transactions} committed before the last run"
    assert_same_contents(source, target, ["kf"])
    markers = committed_markers(target, "kf")
    assert sorted(markers) == list(range(1, transactions + 1)), \
        f"seed {SEED}: markers committed twice: {sorted({m for m in markers if markers.count(m) > 1})[:10]}"


@pytest.mark.parametrize("safe", ["--no-safe"])
def test_kill_apply_five_times_then_rerun_applies_each_transaction_once(two_servers, safe):
    source, target = two_servers
    _kill_apply_repeatedly(source, target, kills=5, transactions=2000, safe=safe)


@pytest.mark.slow
@pytest.mark.parametrize("safe", ["--safe", "--no-safe"])
def test_kill_apply_at_twenty_five_random_moments(two_servers, safe):
    source, target = two_servers
    _kill_apply_repeatedly(source, target, kills=25, transactions=6000, safe=safe)


@pytest.mark.parametrize("workers", ["1", "16"])
def test_ddl_a_crash_left_without_checkpoint_rows_is_taken_as_applied(two_servers, workers):
    """A DDL commits by itself and its checkpoint row only after it: a kill -9 between
    the two leaves it applied and unrecorded.  What such crashes leave at the start of
    the input - the database and every table created, no checkpoint row at all - is
    taken as applied by the rerun, DDL after DDL, and each transaction is committed
    once."""
    source, target = two_servers
    text = many_script("kf", 100, 5)
    run_script(source, text)
    run_script(target, text[:text.index("INSERT INTO")])       # the leading DDLs alone
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), "--workers", workers, "--no-safe", *files, timeout=600)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert err.count("taken as applied before the interruption") == 13, err   # the database, 12 tables
    assert_same_contents(source, target, ["kf"])
    assert sorted(committed_markers(target, "kf")) == list(range(1, 101))


def test_kill_target_during_a_sixteen_worker_run(two_servers):
    """The target is killed (-9) and restarted under a 16-worker run: the apply
    reconnects and resumes from the workers' rows (or a rerun does), once each."""
    source, target = two_servers
    files = _source(source, 2000)
    rng = random.Random(SEED)
    for _ in range(2):
        proc = _start(_apply_cmd(target, files, "--no-safe", "--retry-timeout", "60"))
        time.sleep(rng.uniform(0.5, 1.5))
        target._kill()
        time.sleep(1.0)
        target.start()
        try:
            proc.wait(300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    done = cli("apply", "--to", dsn(target), "--workers", "16", "--no-safe", *files, timeout=600)
    assert done.returncode == 0, f"seed {SEED}: {done.stderr.decode()}"
    assert_same_contents(source, target, ["kf"])
    assert sorted(committed_markers(target, "kf")) == list(range(1, 2001)), f"seed {SEED}"


def test_a_refused_row_stops_every_worker_and_a_rerun_finishes(two_servers):
    """Transaction 150 of 300 inserts a row the target holds already (--no-safe): the
    run stops with that transaction (GTID, file, positions), table and row named; the
    workers' rows hold a consistent state; once the row is gone a rerun finishes, each
    transaction committed once."""
    source, target = two_servers
    text = many_script("kf", 300, 5)
    cut = text.index("BEGIN;")
    run_script(source, text[:cut])          # the tables, in a binlog file of their own
    source.execute("FLUSH BINARY LOGS")
    run_script(source, text[cut:])
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), "--workers", "16", files[0])
    assert done.returncode == 0, done.stderr.decode()
    target.execute("INSERT INTO kf.c0 VALUES (150, 'in the way')")
    done = cli("apply", "--to", dsn(target), "--workers", "16", "--batch-transactions", "4",
               "--no-safe", *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert re.search(r"the target refused transaction 0-1-\d+ \(mariadb-bin\.000002 @ \d+\.\.\d+\), "
                     r"row 1 of 2: insert of `kf`.`c0` \(id=150\)", err), err
    assert "Duplicate entry '150'" in err and "every worker stopped" in err, err
    assert 150 not in committed_markers(target, "kf")
    target.execute("DELETE FROM kf.c0 WHERE id = 150")
    done = cli("apply", "--to", dsn(target), "--workers", "16", "--no-safe", *files)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["kf"])
    assert sorted(committed_markers(target, "kf")) == list(range(1, 301))


def test_a_deadlock_between_two_workers_is_retried(two_servers):
    """Triggers on the target (--allow-triggers) take two counter rows in opposite
    orders with a pause between: the two workers applying the source's two inserts
    deadlock; InnoDB rolls one back (1213), its worker applies it again, and each
    trigger's effect is there once."""
    source, target = two_servers
    # twenty short transactions between the two: worker 1 takes jobs until 8 wait on it
    # behind the request it is applying (replay.parallel Pool.OPEN_AT), so the insert
    # into b opens worker 2 while worker 1 applies the insert into a
    fillers = "".join(f"INSERT INTO dl.f VALUES ({i});\n" for i in range(1, 21))
    run_script(source, """CREATE DATABASE dl;
CREATE TABLE dl.a (id INT PRIMARY KEY);
CREATE TABLE dl.b (id INT PRIMARY KEY);
CREATE TABLE dl.f (id INT PRIMARY KEY);
INSERT INTO dl.a VALUES (1);
""" + fillers + """INSERT INTO dl.b VALUES (1);
""")
    run_script(target, """CREATE DATABASE dl;
CREATE TABLE dl.a (id INT PRIMARY KEY);
CREATE TABLE dl.b (id INT PRIMARY KEY);
CREATE TABLE dl.f (id INT PRIMARY KEY);
CREATE TABLE dl.cnt (id INT PRIMARY KEY, n INT NOT NULL);
INSERT INTO dl.cnt VALUES (1, 0), (2, 0);
CREATE TRIGGER dl.ta AFTER INSERT ON dl.a FOR EACH ROW BEGIN UPDATE dl.cnt SET n = n + 1 WHERE id = 1; SET @x = SLEEP(1); UPDATE dl.cnt SET n = n + 1 WHERE id = 2; END;
CREATE TRIGGER dl.tb AFTER INSERT ON dl.b FOR EACH ROW BEGIN UPDATE dl.cnt SET n = n + 10 WHERE id = 2; SET @x = SLEEP(1); UPDATE dl.cnt SET n = n + 10 WHERE id = 1; END;
""")
    files = [str(p) for p in source.binlog_files()]
    done = cli("apply", "--to", dsn(target), "--workers", "2", "--no-ddl", "--allow-triggers", *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "Deadlock found" in err and "applies its open batch again (retry 1)" in err, err
    assert target.query("SELECT id, n FROM dl.cnt ORDER BY id") == [(1, 11), (2, 11)]
    assert target.query("SELECT (SELECT COUNT(*) FROM dl.a), (SELECT COUNT(*) FROM dl.b), "
                        "(SELECT COUNT(*) FROM dl.f)") == [(1, 1, 20)]


def test_workers_follow_a_live_source_through_a_kill(two_servers):
    """``apply --from DSN --stop-never --workers 8`` while the source is written: killed
    -9 part way, started again, it catches up; a last run without --stop-never finds
    nothing to do; each transaction committed once."""
    import threading

    source, target = two_servers
    source.execute("FLUSH BINARY LOGS")
    cmd = [sys.executable, "-m", "binlog.cli", "apply", "--from", dsn(source), "--server-id", "43",
           "--stop-never", "--heartbeat", "0.5", "--workers", "8", "--no-safe", "--quiet",
           "--to", dsn(target)]
    writer = threading.Thread(target=run_script, args=(source, many_script("kf", 600, 5)))
    proc = _start(cmd)
    writer.start()
    try:
        deadline = time.monotonic() + 120
        while _committed(target) < 100 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc = _start(cmd)
        writer.join(300)
        deadline = time.monotonic() + 120
        while _committed(target) < 600 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _committed(target) == 600, proc.stderr.read().decode() if proc.poll() is not None else ""
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        writer.join(300)
    again = cli("apply", "--from", dsn(source), "--server-id", "43", "--workers", "8", "--no-safe",
                "--to", dsn(target))
    assert again.returncode == 0, again.stderr.decode()
    assert "0 transaction(s), 0 row change(s)" in again.stderr.decode(), again.stderr.decode()
    assert_same_contents(source, target, ["kf"])
    assert sorted(committed_markers(target, "kf")) == list(range(1, 601))
