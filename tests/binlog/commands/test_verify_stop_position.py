"""`verify-rows --stop-position` inside a transaction stops at the
transaction boundary, as `apply` and `dump --format sql` do, so a target applied with the
same --stop-position verifies equal."""
from __future__ import annotations

import pytest
from replay_helpers import cli, dsn, run_script

pytestmark = pytest.mark.server


def test_stop_position_inside_a_transaction_verifies_whole_transactions(two_servers):
    source, target = two_servers
    run_script(source, """CREATE DATABASE v10;
CREATE TABLE v10.t (id INT PRIMARY KEY, v VARCHAR(10));
INSERT INTO v10.t VALUES (1, 'one');
BEGIN;
INSERT INTO v10.t VALUES (2, 'two');
INSERT INTO v10.t VALUES (3, 'three');
COMMIT;
""")
    name = source.binlog_names()[-1]
    events = source.query(f"SHOW BINLOG EVENTS IN '{name}'")
    maps = [row[1] for row in events if row[2] == "Table_map"]
    stop = maps[-1]      # the second row's TABLE_MAP: inside the last transaction
    files = [str(p) for p in source.binlog_files()]
    applied = cli("apply", "--to", dsn(target), "--stop-position", stop, *files)
    assert applied.returncode == 0, applied.stderr.decode()
    assert target.query("SELECT id FROM v10.t ORDER BY id") == [(1,)]
    checked = cli("verify-rows", "--against", dsn(target), "--stop-position", stop, *files)
    out = checked.stdout.decode() + checked.stderr.decode()
    assert checked.returncode == 0, out
    assert "the input ends before its COMMIT" in out and "1 row change(s) are not verified" in out
    # the whole input: the transaction counts, and the target lacks its rows
    full = cli("verify-rows", "--against", dsn(target), *files)
    text = full.stdout.decode()
    assert full.returncode == 6 and "v10.t (id=2): missing on the target" in text


def test_a_transaction_cut_off_counts_nothing_it_could_not_check(two_servers):
    """The cut-off transaction's row of a table without a key is not reported as a table
    not checked: nothing of that transaction is verified (or counted) at all."""
    source, target = two_servers
    run_script(source, """CREATE DATABASE v11;
CREATE TABLE v11.t (id INT PRIMARY KEY, v VARCHAR(10));
CREATE TABLE v11.nokey (a INT, b INT);
INSERT INTO v11.t VALUES (1, 'one');
BEGIN;
INSERT INTO v11.nokey VALUES (1, 1);
INSERT INTO v11.t VALUES (2, 'two');
COMMIT;
""")
    name = source.binlog_names()[-1]
    events = source.query(f"SHOW BINLOG EVENTS IN '{name}'")
    stop = [row[1] for row in events if row[2] == "Table_map"][-1]    # inside the last transaction
    files = [str(p) for p in source.binlog_files()]
    applied = cli("apply", "--to", dsn(target), "--stop-position", stop, *files)
    assert applied.returncode == 0, applied.stderr.decode()
    checked = cli("verify-rows", "--against", dsn(target), "--stop-position", stop, *files)
    out = checked.stdout.decode()
    assert checked.returncode == 0, out + checked.stderr.decode()
    assert "verify-rows: 1 row(s) checked, 1 equal, 0 different\n" in out, out
    assert "nokey" not in out, out
    # the whole input: the committed transaction's keyless table is reported
    full = cli("verify-rows", "--against", dsn(target), *files)
    assert "tables without a key or missing on the target, not checked: v11.nokey" in full.stdout.decode()
