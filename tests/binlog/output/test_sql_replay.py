"""`binlog dump --format sql|flashback` piped into the real `mariadb` client: hostile
strings arrive intact, a replay cut in the middle and run again (safe mode) ends identical,
a flashback restores the contents before a range, and key swaps (UPDATE a=3 WHERE a=1; a=1 WHERE
a=2; a=2 WHERE a=3) replay with --split-updates, TiCDC's split of UPDATE events."""
from __future__ import annotations

import json

import pytest
from replay_helpers import assert_same_contents, cli, contents, dsn, load_schema, mariadb_client, run_script, script

pytestmark = pytest.mark.server


def _schema_only(source, target, databases):
    load_schema(target, source.dump_schema(databases))


def test_sql_pipe_cut_midway_then_rerun(two_servers):
    source, target = two_servers
    run_script(source, script("hostile.sql"))
    files = [str(p) for p in source.binlog_files()]
    # the keyless table's duplicate rows cannot be replayed twice idempotently: left out
    sql = cli("dump", "--format", "sql", "--exclude-table", "hx.nokey", *files)
    assert sql.returncode == 0, sql.stderr.decode()
    text = sql.stdout
    assert text.count(b"BEGIN;") == text.count(b"COMMIT;") > 10
    # hostile bytes never appear raw: latin1 and GBK text as hex with an introducer
    assert b"_latin1 X'e9ff80818d8f909d'" in text and b"_gbk X'815c27d6d0cec4'" in text
    assert b"'\\');DROP TABLE s;-- '" in text
    # the first run dies in the middle of a transaction (input cut short)
    cut = text.index(b"COMMIT;", len(text) // 2) - 40
    first = mariadb_client(target, text[:cut])
    assert first.returncode != 0        # the cut statement is a syntax error; the open transaction is rolled back
    mid = contents(target, ["hx"])
    assert mid                         # something was applied
    # run it all again: DDL already done fails harmlessly (--force goes on), every data
    # statement is idempotent in safe mode
    again = mariadb_client(target, text, "--force")
    errors = [l for l in again.stderr.decode().splitlines() if l.startswith("ERROR")]
    assert errors and all(" 1007 " in e or " 1050 " in e for e in errors), errors
    source.execute("DROP TABLE hx.nokey")
    assert_same_contents(source, target, ["hx"])


@pytest.mark.parametrize("extended", [[], ["--extended-insert"]], ids=["rows", "extended-insert"])
def test_flashback_restores_prior_contents(mariadb_factory, extended):
    source = mariadb_factory({"binlog_row_metadata": "FULL"})
    run_script(source, script("hostile.sql"))
    before = contents(source, ["hx"])
    file, pos = source.master_status()
    run_script(source, """USE hx;
UPDATE s SET u = 'overwritten \\\\ '' x', id = id + 100 WHERE id < 5;
DELETE FROM s WHERE id = 7;
INSERT INTO s (id, u, l, b) VALUES (50, 'new 😀', _latin1 X'ff00', X'00');
UPDATE ck SET code = CONCAT('X', code);
DELETE FROM nokey WHERE n = 1;
UPDATE nokey SET f = 2.5;
BEGIN;
UPDATE many SET id = id + 5000 WHERE id < 50 ORDER BY id DESC;
DELETE FROM many WHERE id > 1000 AND id < 5000;
INSERT INTO many (id, v, tm) VALUES (3, 'reused key', '-00:00:00.5');
COMMIT;
""")
    assert contents(source, ["hx"]) != before
    names = [n for n in source.binlog_names() if n >= file]
    undo = cli("dump", "--format", "flashback", *extended, "--start-position", pos,
               *[source.binlog_dir / n for n in names])
    assert undo.returncode == 0, undo.stderr.decode()
    text = undo.stdout.decode()
    # newest first: the first undone transaction is the last one of the range
    first_block = text.split("-- undo of ", 2)[1].split("BEGIN;\n")[1]
    assert first_block.startswith("DELETE FROM `hx`.`many` WHERE `id` = 3 LIMIT 1;")
    # the deleted rows of `many` come back in multi-row statements with --extended-insert
    assert ("),(" in first_block) == bool(extended)
    applied = mariadb_client(source, undo.stdout)
    assert applied.returncode == 0, applied.stderr.decode()
    after = contents(source, ["hx"])
    for table in before:
        assert before[table][1] == after[table][1], table
        assert before[table][0] == after[table][0], table


SEED = """CREATE DATABASE seed;
USE seed;
CREATE TABLE t (a INT PRIMARY KEY, b INT);
INSERT INTO t VALUES (1, 1);
INSERT INTO t VALUES (2, 2);
CREATE TABLE t2 (a INT PRIMARY KEY, b INT);
INSERT INTO t2 VALUES (1, 1);
INSERT INTO t2 VALUES (2, 2);
"""

SWAPS = """USE seed;
BEGIN;
UPDATE t SET a = 3 WHERE a = 1;
UPDATE t SET a = 1 WHERE a = 2;
UPDATE t SET a = 2 WHERE a = 3;
COMMIT;
BEGIN;
UPDATE t2 SET a = 3 WHERE a = 2;
UPDATE t2 SET a = 2 WHERE a = 1;
COMMIT;
"""


def test_seed_key_swaps_replay_with_split_updates(two_servers):
    source, target = two_servers
    run_script(source, SEED)
    file, pos = source.master_status()
    run_script(source, SWAPS)
    assert source.query("SELECT a, b FROM seed.t ORDER BY a") == [(1, 2), (2, 1)]
    assert source.query("SELECT a, b FROM seed.t2 ORDER BY a") == [(2, 1), (3, 2)]
    files = [str(source.binlog_dir / n) for n in source.binlog_names() if n >= file]

    # TiCDC's view: per transaction, net changes; DELETEs of both rows first, then INSERTs
    js = cli("dump", "--split-updates", "--start-position", pos, *files)
    assert js.returncode == 0, js.stderr.decode()
    recs = [json.loads(l) for l in js.stdout.splitlines()]
    t1 = [(r["op"], r["before"] and r["before"]["a"], r["after"] and (r["after"]["a"], r["after"]["b"]))
          for r in recs if r["table"] == "t"]
    assert [op for op, _, _ in t1] == ["delete", "delete", "insert", "insert"]
    assert sorted(b for _, b, _ in t1[:2]) == [1, 2]
    assert sorted(a for _, _, a in t1[2:]) == [(1, 2), (2, 1)]
    assert len({r["gtid"] for r in recs if r["table"] == "t"}) == 1

    # plain statements (no REPLACE to hide a collision): replays only because of the order
    _schema_only(source, target, ["seed"])
    target.execute("INSERT INTO seed.t VALUES (1, 1), (2, 2)")
    target.execute("INSERT INTO seed.t2 VALUES (1, 1), (2, 2)")
    sql = cli("dump", "--format", "sql", "--split-updates", "--no-safe", "--start-position", pos, *files)
    assert sql.returncode == 0, sql.stderr.decode()
    body = sql.stdout.decode()
    tx1 = body.split("BEGIN;")[1].split("COMMIT;")[0].strip().splitlines()
    assert [l.split()[0] for l in tx1] == ["DELETE", "DELETE", "INSERT", "INSERT"]
    done = mariadb_client(target, sql.stdout)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["seed"])

    # the same through `binlog apply --split-updates`, safe and plain
    for safe in ("--safe", "--no-safe"):
        target.execute("DROP DATABASE seed")
        _schema_only(source, target, ["seed"])
        target.execute("INSERT INTO seed.t VALUES (1, 1), (2, 2)")
        target.execute("INSERT INTO seed.t2 VALUES (1, 1), (2, 2)")
        applied = cli("apply", "--to", dsn(target), "--split-updates", safe, "--reset-checkpoint",
                      "--start-position", pos, *files)
        assert applied.returncode == 0, applied.stderr.decode()
        assert_same_contents(source, target, ["seed"])


@pytest.mark.parametrize("safe", ["--safe", "--no-safe"])
def test_extended_insert_replays_the_same(two_servers, safe):
    """--extended-insert: runs of row INSERTs (REPLACEs) of a table become multi-row
    statements; through the mariadb client the target ends as the source is (hostile
    strings, large transactions, updates and deletes between the runs)."""
    source, target = two_servers
    run_script(source, script("hostile.sql"))
    run_script(source, """CREATE TABLE hx.ext (id INT PRIMARY KEY, v VARCHAR(20));
BEGIN;
INSERT INTO hx.ext VALUES (1, 'a'), (2, 'b');
UPDATE hx.ext SET v = 'c' WHERE id = 1;
INSERT INTO hx.ext VALUES (3, 'd');
DELETE FROM hx.ext WHERE id = 2;
INSERT INTO hx.ext VALUES (2, 'e'), (4, 'f');
UPDATE hx.ext SET id = 5 WHERE id = 4;
COMMIT;""")
    files = [str(p) for p in source.binlog_files()]
    common = ["dump", "--format", "sql", safe, "--exclude-table", "hx.nokey", *files]
    plain, extended = cli(*common), cli(*common, "--extended-insert")
    assert plain.returncode == 0 and extended.returncode == 0, extended.stderr.decode()
    verb = b"REPLACE INTO" if safe == "--safe" else b"INSERT INTO"
    assert plain.stdout.count(verb) > extended.stdout.count(verb) > 0
    assert b"),(" in extended.stdout and b"),(" not in plain.stdout
    assert plain.stdout.count(b"BEGIN;") == extended.stdout.count(b"BEGIN;")
    done = mariadb_client(target, extended.stdout)
    assert done.returncode == 0, done.stderr.decode()
    source.execute("DROP TABLE hx.nokey")
    assert_same_contents(source, target, ["hx"])
