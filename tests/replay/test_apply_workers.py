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
