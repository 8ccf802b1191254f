"""Statement-logged changes and DDL are in the output, and `binlog
apply` executes statement-logged changes in their session context.

The binlog comes from a real mariadbd logging with binlog_format=STATEMENT (and MIXED for
one transaction that interleaves statements and row events); the expected values come
from that server: SHOW BINLOG EVENTS for the statements and their positions, the rows
it holds for what a replay must give (compared as CAST(... AS CHAR) / HEX())."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.server

ROW_OPS = ("insert", "update", "delete")
WORKLOAD = [
    "CREATE DATABASE st CHARACTER SET utf8mb4",
    "USE st",
    "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40), n DOUBLE, at DATETIME(6),"
    " l VARCHAR(20) CHARACTER SET latin1) ENGINE=InnoDB",
    "INSERT INTO t (v) VALUES ('a'), ('b')",                           # INSERT_ID
    "INSERT INTO t (v, n) VALUES ('c', LAST_INSERT_ID())",             # LAST_INSERT_ID
    "SET @who := 'user var \u00e9', @k := 42, @d := 1.25",
    "INSERT INTO t (v, n) VALUES (@who, @k + @d)",                     # USER_VAR events
    "INSERT INTO t (v, n) VALUES ('rand', RAND())",                    # RAND seeds
    "SET time_zone = '+05:30'",
    "INSERT INTO t (v, at) VALUES ('tz', NOW(6))",                     # time zone, HRNOW
    "SET time_zone = SYSTEM",
    "SET sql_mode = CONCAT(@@sql_mode, ',PIPES_AS_CONCAT')",
    "INSERT INTO t (v) VALUES ('p' || 'q')",                           # sql_mode
    "SET sql_mode = DEFAULT",
    "SET NAMES latin1",
    b"INSERT INTO t (v, l) VALUES ('latin', '\xe9t\xe9')",             # latin1 bytes
    "SET NAMES utf8mb4",
    "BEGIN",
    "INSERT INTO t (v) VALUES ('in trx')",
    "UPDATE t SET n = n + 1 WHERE v = 'a'",
    "COMMIT",
    "ALTER TABLE t ADD COLUMN extra INT DEFAULT 7",
    "UPDATE t SET extra = id * 2",
    "DELETE FROM t WHERE v = 'b'",
    # MIXED: one transaction holding a statement, then row events (UUID() is unsafe)
    "SET SESSION binlog_format = 'MIXED'",
    "BEGIN",
    "INSERT INTO t (v) VALUES ('mixed statement')",
    "INSERT INTO t (v) VALUES (UUID())",
    "UPDATE t SET n = 99 WHERE v = 'mixed statement'",
    "COMMIT",
    # rows, a statement on them, rows, a statement: a replay that moved a statement
    # before rows logged ahead of it leaves their v a UUID (not selected below)
    "BEGIN",
    "INSERT INTO t (v, n) VALUES (UUID(), 1001), (UUID(), 1002)",
    "UPDATE t SET n = n * 10 WHERE n IN (1001, 1002)",
    "INSERT INTO t (v, n) VALUES (UUID(), 1003)",
    "UPDATE t SET v = CONCAT('mixed ', n) WHERE n IN (10010, 10020, 1003)",
    "COMMIT",
]
SELECT_ROWS = ("SELECT id, v, CAST(n AS CHAR), CAST(at AS CHAR), HEX(l), extra FROM st.t "
               "WHERE v NOT LIKE '%-%-%-%' ORDER BY id")


def binlog(*args):
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from support.mariadb_server import MariaDBServer

    srv = MariaDBServer({"binlog_format": "STATEMENT", "binlog_row_metadata": "FULL"}).start()
    try:
        srv.flush_logs()
        name, _ = srv.master_status()
        conn = srv.connect()
        with conn.cursor() as cur:
            for statement in WORKLOAD:
                cur.execute(statement)
        conn.close()
        events = srv.query(f"SHOW BINLOG EVENTS IN '{name}'")
        rows = srv.query(SELECT_ROWS)
        ids = dict(srv.query("SELECT v, id FROM st.t"))
        columns = [r[0] for r in srv.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'st' "
            "AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION")]
        d = tmp_path_factory.mktemp("stmt")
        srv.copy_binlog(name, d / name)
        yield {"path": d / name, "events": events, "rows": rows, "ids": ids, "columns": columns}
    finally:
        srv.cleanup()


def test_every_statement_and_ddl_is_a_json_record(source):
    result = binlog("dump", source["path"])
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    statements = [r for r in records if r["op"] in ("statement", "ddl")]
    # the server's own listing: every QUERY event that is not BEGIN/COMMIT
    queries = [(pos, info) for _, pos, kind, _, _, info in source["events"]
               if kind == "Query" and info not in ("BEGIN", "COMMIT")]
    assert [r["pos"] for r in statements] == [pos for pos, _ in queries]
    for r, (_, info) in zip(statements, queries, strict=True):
        if "(v, l)" in info:
            continue        # SHOW BINLOG EVENTS shows latin1 bytes as '?': checked below
        assert info.endswith(r["sql"]) or r["sql"].endswith(info.split("; ", 1)[-1]), (r, info)
        assert r["gtid"] and r["session"]["sql_mode"]
    by_sql = {r["sql"]: r for r in statements}
    assert by_sql["CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40), n DOUBLE, "
                  "at DATETIME(6), l VARCHAR(20) CHARACTER SET latin1) ENGINE=InnoDB"]["op"] == "ddl"
    assert by_sql["INSERT INTO t (v) VALUES ('a'), ('b')"]["session"]["insert_id"] == source["ids"]["a"]
    lid = by_sql["INSERT INTO t (v, n) VALUES ('c', LAST_INSERT_ID())"]["session"]
    assert lid["last_insert_id"] == source["ids"]["a"] and lid["insert_id"] == source["ids"]["c"]
    uv = by_sql["INSERT INTO t (v, n) VALUES (@who, @k + @d)"]["session"]["user_vars"]
    assert uv == {"who": "user var \u00e9", "k": 42, "d": "1.25"}
    assert {"rand_seed1", "rand_seed2"} <= set(by_sql["INSERT INTO t (v, n) VALUES ('rand', RAND())"]["session"])
    assert by_sql["INSERT INTO t (v, at) VALUES ('tz', NOW(6))"]["session"]["time_zone"] == "+05:30"
    assert "PIPES_AS_CONCAT" in by_sql["INSERT INTO t (v) VALUES ('p' || 'q')"]["session"]["sql_mode"]
    latin = [r for r in statements if r["sql"].startswith("INSERT INTO t (v, l)")][0]
    assert latin["sql"] == "INSERT INTO t (v, l) VALUES ('latin', '\u00e9t\u00e9')"
    assert latin["session"]["character_set_client"] == "latin1"
    # DDL: the table's columns right after the ALTER, as the server lists them at the end
    alter = by_sql["ALTER TABLE t ADD COLUMN extra INT DEFAULT 7"]
    assert alter["op"] == "ddl" and [c["name"] for c in alter["schema"][0]["columns"]] == source["columns"]
    # MIXED: the statement and the row event of one transaction, in binlog order
    mixed = [r for r in records if r["gtid"] == by_sql["INSERT INTO t (v) VALUES ('mixed statement')"]["gtid"]]
    assert [r["op"] for r in mixed] == ["statement", "insert", "statement"]


def test_text_shows_the_session(source):
    result = binlog("dump", "--format", "text", source["path"])
    assert result.returncode == 0, result.stderr
    assert "# session: sql_mode=" in result.stdout and "time_zone=+05:30" in result.stdout


def test_stats_counts_statement_logged_changes(source):
    result = binlog("stats", "--json", source["path"])
    assert result.returncode == 0, result.stderr
    logged = json.loads(result.stdout)["statement_logged_changes"]
    expected = sum(1 for *_, kind, _, _, info in source["events"]
                   if kind == "Query" and info.split("; ", 1)[-1].split()[0] in ("INSERT", "UPDATE", "DELETE"))
    assert sum(logged.values()) == expected


def test_apply_executes_statements_in_their_session(source, mariadb_factory):
    target = mariadb_factory({})
    dsn = f"mysql://root@127.0.0.1:{target.port}/"
    result = binlog("apply", "--to", dsn, source["path"])
    assert result.returncode == 0, result.stderr
    assert target.query(SELECT_ROWS) == source["rows"]


@pytest.mark.parametrize("extended", [[], ["--extended-insert"]], ids=["rows", "extended-insert"])
def test_sql_script_replays_statements(source, mariadb_factory, extended):
    from support.mariadb_server import find_tool

    target = mariadb_factory({})
    # bytes: the latin1 statement is in the script as the source sent it
    script = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql",
                             *extended, str(source["path"])], capture_output=True, timeout=300)
    assert script.returncode == 0, script.stderr
    client = find_tool("mariadb", "mysql")
    proc = subprocess.run([client, "--no-defaults", f"--socket={target.socket}", "--user=root"],
                          input=script.stdout, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert target.query(SELECT_ROWS) == source["rows"]
    assert [r[1] for r in source["rows"][-3:]] == ["mixed 10010", "mixed 10020", "mixed 1003"]
