"""``--rewrite-db FROM->TO`` with mariadb-binlog's semantics (binlog/assembly/rewrite_db.py):
rows (the TABLE_MAP's database) and the default database of statements and DDL go to TO;
qualified names in statement text and CREATE/DROP DATABASE stay as they are, with a
warning.  ``binlog apply`` into a real server: the rows land in TO; ``mariadb-binlog
--rewrite-db`` on the same binlog, piped into another server, is the reference."""
from __future__ import annotations

import json
import subprocess

import pytest
from replay_helpers import cli, dsn, raw_connection

pytestmark = pytest.mark.server

WORKLOAD = [
    "SET SESSION binlog_format = 'ROW'",
    "CREATE DATABASE src",
    "USE src",
    "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
    "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)",
    "UPDATE t SET v = 'bb' WHERE id = 2",
    "DELETE FROM t WHERE id = 1",
    # statement-logged, in the default database src
    "SET SESSION binlog_format = 'STATEMENT'",
    "INSERT INTO t VALUES (4, 'stmt', 4)",
    "UPDATE t SET n = n * 10 WHERE id >= 3",
    "SET SESSION binlog_format = 'ROW'",
    "ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 7",
    "INSERT INTO t (id, v, n) VALUES (5, 'after alter', 5)",
]


def _rows(server, db):
    conn = raw_connection(server)
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT CAST(id AS CHAR), v, CAST(n AS CHAR), CAST(w AS CHAR) FROM `{db}`.t ORDER BY id")
        return cur.fetchall()
    finally:
        conn.close()


def _tables(server, db):
    return server.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (db,))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    server = MariaDBServer({"binlog_row_metadata": "FULL"}).start()
    try:
        conn = server.connect()
        with conn.cursor() as cur:
            for sql in WORKLOAD:
                cur.execute(sql)
        conn.commit()
        conn.close()
        server.execute("FLUSH BINARY LOGS")
        yield server, [str(p) for p in server.binlog_files()]
    finally:
        server.cleanup()


def test_apply_rewrite_db_lands_in_the_target_database(source, mariadb_factory):
    server, files = source
    target = mariadb_factory({})
    target.execute("CREATE DATABASE dst")
    done = cli("apply", "--to", dsn(target), "--rewrite-db", "src->dst", *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert _rows(target, "dst") == _rows(server, "src")
    assert len(_rows(target, "dst")) == 4
    # CREATE DATABASE src is not rewritten (mariadb-binlog leaves it): src exists, empty
    assert _tables(target, "src") == []
    assert "CREATE DATABASE src" in err and "names the database itself" in err


def test_format_sql_matches_mariadb_binlog_rewrite_db(source, mariadb_factory):
    """mariadb-binlog --rewrite-db's output and ours, each run on a fresh server with dst
    created: the same rows, in dst."""
    from support.mariadb_server import find_tool

    server, files = source
    ours, theirs = mariadb_factory({}), mariadb_factory({})
    client = find_tool("mariadb", "mysql")
    for target in (ours, theirs):
        target.execute("CREATE DATABASE dst")
    script = cli("dump", "--format", "sql", "--rewrite-db", "src->dst", *files)
    assert script.returncode == 0, script.stderr.decode()
    assert b"USE`dst`" in script.stdout
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    reference = subprocess.run([tool, "--no-defaults", "--rewrite-db=src->dst", *files],
                               capture_output=True, timeout=60)
    assert reference.returncode == 0, reference.stderr.decode()
    for target, sql in ((ours, script.stdout), (theirs, reference.stdout)):
        run = subprocess.run([client, "--no-defaults", f"--socket={target.socket}", "-uroot",
                              "--binary-mode"], input=sql, capture_output=True, timeout=120)
        assert run.returncode == 0, run.stderr.decode()
    assert _rows(ours, "dst") == _rows(theirs, "dst") == _rows(server, "src")
    assert _tables(ours, "src") == _tables(theirs, "src") == []


def test_records_name_the_target_database_and_warn_on_qualified_names(source, tmp_path):
    server, files = source
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")
        cur.execute("USE src")
        cur.execute("INSERT INTO src.t (id, v, n) VALUES (6, 'qualified', 6)")
    conn.commit()
    conn.close()
    server.execute("FLUSH BINARY LOGS")
    files = [str(p) for p in server.binlog_files()]
    done = cli("dump", "--rewrite-db", "src->dst", *files)
    assert done.returncode == 0, done.stderr.decode()
    records = [json.loads(line) for line in done.stdout.splitlines()]
    rows = [r for r in records if r["op"] in ("insert", "update", "delete")]
    statements = [r for r in records if r["op"] in ("statement", "ddl")]
    assert rows and {r["db"] for r in rows} == {"dst"}
    by_sql = {r["sql"]: r["db"] for r in statements}
    assert by_sql["CREATE DATABASE src"] == "src"
    assert by_sql["INSERT INTO t VALUES (4, 'stmt', 4)"] == "dst"
    assert by_sql["ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 7"] == "dst"
    assert by_sql["INSERT INTO src.t (id, v, n) VALUES (6, 'qualified', 6)"] == "dst"
    err = done.stderr.decode()
    assert "its text names src.<table> qualified" in err and "VALUES (6, 'qualified', 6)" in err
