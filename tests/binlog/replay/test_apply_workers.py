"""``binlog apply --workers N`` on real servers: source transactions dispatched to N
target connections by their keys end in a target equal to the source (CHECKSUM TABLE and
row by row), in safe mode and --no-safe; ``--workers 1`` sends today's statements."""
from __future__ import annotations

import json
import os

import pytest
from replay_helpers import assert_same_contents, cli, dsn, run_script
from workers_helpers import DATA, general_log_on, moves_script, sent_statements

pytestmark = pytest.mark.server

GOLDEN = DATA / "workers1_statements.json"


def test_one_worker_sends_the_statements_of_the_sequential_apply(two_servers):
    """The statements of a --workers 1 run are those the sequential apply sent before
    workers existed (recorded from it: BINLOG_UPDATE_GOLDEN=1 writes the file again)."""
    source, target = two_servers
    run_script(source, moves_script())
    files = [str(p) for p in source.binlog_files()]
    general_log_on(target)
    done = cli("apply", "--to", dsn(target), "--workers", "1", *files)
    assert done.returncode == 0, done.stderr.decode()
    got = sent_statements(target)
    if os.environ.get("BINLOG_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=0) + "\n", encoding="utf-8")
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert_same_contents(source, target, ["wk"])


#: a transaction of 3,000 rows (over --batch-rows: it runs alone, its statements rendered
#: while the target executes them), then small ones on its rows
LARGE = """USE wm;
INSERT INTO wm.c1 (id, v) SELECT seq + 100000, REPEAT('b', 30) FROM seq_1_to_3000;
UPDATE wm.c1 SET v = 'after' WHERE id = 100001;
DELETE FROM wm.c1 WHERE id = 100002;
"""


@pytest.mark.parametrize("safe", ["--safe", "--no-safe"])
def test_sixteen_workers_end_equal_to_the_source(two_servers, safe):
    """Keys moving inside a transaction and swapping across transactions, a unique
    secondary key moving, DDL in the middle, then 300 transactions on 5 hot rows (whose
    unique tags swap) and on disjoint rows of 10 tables: 16 workers leave the target
    equal to the source; each transaction's marker was committed once (target binlog).
    A 3,000-row transaction among them runs alone."""
    from workers_helpers import committed_markers, many_script

    source, target = two_servers
    run_script(source, moves_script() + many_script("wm", 300, 5) + LARGE)
    files = [str(p) for p in source.binlog_files()]
    general_log_on(target)
    done = cli("apply", "--to", dsn(target), "--workers", "16", "--batch-transactions", "4",
               "--batch-rows", "1000", safe, *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert_same_contents(source, target, ["wk", "wm"])
    assert sorted(committed_markers(target, "wm")) == list(range(1, 301))
    # the workers' rows were folded into the stream's at the end
    assert target.query("SELECT name FROM binlog_apply.checkpoint") == [("default",)]
    # and more than one session wrote the markers
    sessions = target.query("SELECT COUNT(DISTINCT thread_id) FROM mysql.general_log WHERE "
                            "argument LIKE '%`wm`.`mk`%'")
    assert sessions[0][0] > 1, sessions
