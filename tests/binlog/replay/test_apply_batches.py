"""`binlog apply`'s multi-row statements and pipeline on real servers (sql/apply_batches.sql):
the same keys touched several times in a transaction and in one rows event, key shifts,
text keys a collation takes as equal, multi-table transactions, a table without a key,
legacy temporals.  The target ends with the source's contents (CHECKSUM TABLE and row by
row), also after kill -9 in the middle and a rerun; and the statements are multi-row."""
from __future__ import annotations

import signal

import pytest
from replay_helpers import (
    apply_batches_source,
    assert_encoded_statements_match,
    assert_same_contents,
    cli,
    dsn,
    load_schema,
)

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def source_and_files(tmp_path_factory):
    """The source after the workload: (server, DML binlog files, schema file)."""
    with apply_batches_source(tmp_path_factory.mktemp("apply_batches")) as found:
        yield found


@pytest.fixture(scope="module")
def target():
    from support.mariadb_server import MariaDBServer

    with MariaDBServer({}) as srv:
        yield srv


def _fresh(target, schema_file) -> None:
    target.execute("DROP DATABASE IF EXISTS ab")
    target.execute("DROP DATABASE IF EXISTS binlog_apply")
    with open(schema_file, encoding="utf-8") as f:
        load_schema(target, f.read())


def _apply(target, files, schema_file, *extra, env=None):
    return cli("apply", "--to", dsn(target), "--schema-ddl", schema_file, "--no-ddl", *extra,
               *files, env=env)


def test_apply_gives_the_source_contents(source_and_files, target):
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    done = _apply(target, files, schema_file)
    assert done.returncode == 0, done.stderr.decode()
    assert "replaced" not in done.stderr.decode()       # no REPLACE met a row it did not expect
    assert_same_contents(source, target, ["ab"])


def test_statements_are_multi_row(source_and_files, target):
    """The general log of the target: a few statements, not one per row."""
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    target.execute("SET GLOBAL log_output = 'TABLE'")
    target.execute("TRUNCATE mysql.general_log")
    target.execute("SET GLOBAL general_log = 1")
    try:
        done = _apply(target, files, schema_file)
    finally:
        target.execute("SET GLOBAL general_log = 0")
    assert done.returncode == 0, done.stderr.decode()
    rows = target.query("SELECT CAST(argument AS CHAR) FROM mysql.general_log WHERE command_type = 'Query' "
                        "AND argument LIKE 'REPLACE INTO `ab`.`k`%'")
    # 3000 + 700 + 99 rows inserted, 1000 updated...: a statement per transaction part
    assert rows and len(rows) <= 25, len(rows)
    assert_same_contents(source, target, ["ab"])


@pytest.mark.parametrize("safe", [True, False], ids=["safe", "no-safe"])
@pytest.mark.parametrize("limit", [None, 300])
def test_statements_from_the_events_bytes_are_the_decoded_rows(source_and_files, limit, safe,
                                                               monkeypatch):
    """The workload's statements as apply makes them from the rows events' bytes
    (EncodedInsert/EncodedKeyed: key shifts, keys touched twice in an event, folded text
    keys, several tables) are those of the decoded rows, cut alike (``limit``: statements
    of ~300 bytes, cut inside events), with the same rows."""
    from binlog.replay import batch

    if limit:
        monkeypatch.setattr(batch, "MAX_STATEMENT_BYTES", limit)
    _, files, schema_file = source_and_files
    items = assert_encoded_statements_match(files, safe, schema_ddl=schema_file)
    assert {ch.op for ch in items} == {"insert", "update", "delete"}, {ch.op for ch in items}


@pytest.mark.parametrize("fault", ["kill-after-commit:3", "kill-before-commit:4"])
def test_kill_in_the_middle_then_rerun_is_identical(source_and_files, target, fault):
    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    killed = _apply(target, files, schema_file, "--batch-transactions", "1",
                    env={"BINLOG_APPLY_FAULT": fault})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    cp = target.query("SELECT transactions FROM binlog_apply.checkpoint")
    assert cp and 1 <= cp[0][0] < 15, cp
    done = _apply(target, files, schema_file)
    assert done.returncode == 0, done.stderr.decode()
    assert "replaced" not in done.stderr.decode()       # nothing applied twice
    assert_same_contents(source, target, ["ab"])


def test_ctrl_c_while_a_live_source_is_idle_stops_at_once(source_and_files, target):
    """The decoding thread waits on the source's socket; Ctrl-C ends the run anyway (130),
    with everything the source had committed applied."""
    import subprocess
    import sys
    import time

    from replay_helpers import REPO, contents

    source, files, schema_file = source_and_files
    _fresh(target, schema_file)
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--from", dsn(source),
                             "--server-id", "77", "--stop-never", "--heartbeat", "0.5",
                             "--schema-ddl", schema_file, "--no-ddl", "--to", dsn(target)],
                            cwd=REPO, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while contents(source, ["ab"]) != contents(target, ["ab"]):
            assert time.monotonic() < deadline and proc.poll() is None, "apply did not catch up"
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err.decode()
    assert b"run the same command to resume" in err
    assert_same_contents(source, target, ["ab"])
