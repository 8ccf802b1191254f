"""Schemas that disagree with a TABLE_MAP, on a real server.

- Columns MariaDB logs that a naive reading of CREATE TABLE misses (INVISIBLE, VIRTUAL /
  STORED generated, the row_start/row_end of WITH SYSTEM VERSIONING) are modelled by the
  DDL tracker: the rows decode with names and no warning.
- A schema that contradicts a TABLE_MAP which decodes its rows alone (a stale
  --schema-ddl) gives one warning per table and the TABLE_MAP's own decoding (@N), and
  --stats says so; a table with legacy temporal columns stays an error (their byte count
  is never guessed).
"""
from __future__ import annotations

import subprocess
import sys

import pytest
from support.mariadb_server import MariaDBServer, require_mariadbd
from support.records import row_records

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_mariadbd()
    with MariaDBServer({"binlog_row_metadata": "NO_LOG"}) as srv:
        srv.start()
        srv.execute("CREATE DATABASE sd")
        srv.execute("CREATE TABLE sd.grown (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET ascii)")
        srv.set_global("mysql56_temporal_format", "OFF")
        srv.execute("CREATE TABLE sd.legacy (id INT PRIMARY KEY, d DATETIME(3))")
        srv.set_global("mysql56_temporal_format", "ON")
        srv.flush_logs()
        first = srv.master_status()[0]
        srv.execute("CREATE DATABASE sh")           # inside the binlog: its charset is known
        srv.execute("""CREATE TABLE sh.hidden (id INT PRIMARY KEY, a INT INVISIBLE,
                       g INT AS (id * 10) VIRTUAL, s VARCHAR(12) AS (CONCAT('s', id)) STORED,
                       v VARCHAR(5)) WITH SYSTEM VERSIONING""")
        srv.execute("INSERT INTO sh.hidden (id, a, v) VALUES (1, 7, 'x'), (2, NULL, 'y')")
        srv.execute("UPDATE sh.hidden SET v = 'z', a = 8 WHERE id = 2")
        srv.execute("INSERT INTO sd.grown VALUES (1, 'one')")
        srv.execute("INSERT INTO sd.legacy VALUES (1, '2020-01-02 03:04:05.678')")
        srv.flush_logs()
        names = srv.binlog_names()
        srv.files = [srv.binlog_dir / n for n in names[names.index(first):-1]]
        srv.hidden_rows = srv.query("SELECT id, a, g, s, v FROM sh.hidden ORDER BY id")
        srv.hidden_columns = [r[0] for r in srv.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'sh' "
            "AND TABLE_NAME = 'hidden' ORDER BY ORDINAL_POSITION")]
        stale = tmp_path_factory.mktemp("stale") / "stale.sql"
        # The schema of an older version: one column fewer than the binlog's tables.
        stale.write_text("CREATE DATABASE sd;\nUSE sd;\nCREATE TABLE grown (id INT PRIMARY KEY);\n"
                         "CREATE TABLE legacy (id INT PRIMARY KEY);\n")
        srv.stale = stale
        yield srv


def dump(server, *args):
    cmd = [sys.executable, "-m", "binlog.cli", "dump", *map(str, args), *map(str, server.files)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_invisible_generated_and_versioning_columns_are_modelled(server):
    result = dump(server, "--table", "sh.hidden")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    records = row_records(result.stdout)
    # information_schema does not list the implicit row_start/row_end; the row images hold them
    assert list(records[0]["after"]) == server.hidden_columns + ["row_start", "row_end"]
    final = {}
    for r in records:
        if r["op"] in ("insert", "update") and r["after"]["row_end"].startswith("2038"):
            final[r["after"]["id"]] = r["after"]
    for row in server.hidden_rows:
        got = final[row[0]]
        assert (got["a"], got["s"], got["v"]) == (row[1], row[3], row[4])
        assert got["g"] in (row[2], None)       # a VIRTUAL column's value may not be logged


def test_a_contradicting_schema_warns_once_and_the_table_map_decodes(server):
    result = dump(server, "--schema-ddl", server.stale, "--table", "sd.grown", "--stats")
    assert result.returncode == 0, result.stderr
    rows = [r["after"] for r in row_records(result.stdout)]
    assert rows == [{"@1": 1, "@2": {"bytes_hex": "6f6e65"}}]
    warnings = [w for w in result.stderr.splitlines() if "warning" in w and "TABLE_MAP alone" in w]
    assert len(warnings) == 1 and "sd.grown" in warnings[0] and "2 columns" in warnings[0]
    assert "sd.grown: 1 TABLE_MAP(s) contradicted by the schema" in result.stderr


def test_a_legacy_temporal_table_stays_an_error(server):
    result = dump(server, "--schema-ddl", server.stale, "--table", "sd.legacy")
    assert result.returncode != 0
    assert "SchemaMismatchError" in result.stderr or "schema" in result.stderr.lower()
    assert "TABLE_MAP has 2 columns" in result.stderr


# --- table names in another letter case (lower_case_table_names=1) ----------------------

@pytest.fixture(scope="module")
def lctn_server(tmp_path_factory):
    """A server started with lower_case_table_names=1: it logs ``CREATE TABLE MySqlCdc`` as
    typed and maps the table as ``mysqlcdc``."""
    require_mariadbd()
    with MariaDBServer({"lower_case_table_names": 1, "binlog_row_metadata": "NO_LOG"}) as srv:
        srv.start()
        assert srv.variable("lower_case_table_names") == 1
        srv.execute("CREATE DATABASE OldDb CHARACTER SET utf8mb4")
        srv.execute("CREATE TABLE OldDb.Before (id INT PRIMARY KEY, e ENUM('x','y'))")
        srv.flush_logs()
        first = srv.master_status()[0]
        srv.execute("CREATE DATABASE MyDb CHARACTER SET utf8mb4")
        srv.execute("CREATE TABLE MyDb.MySqlCdc (id INT PRIMARY KEY, e ENUM('a','b'), "
                    "b VARBINARY(4), v VARCHAR(5))")
        srv.execute("INSERT INTO MyDb.MySqlCdc VALUES (1, 'b', x'00ff', 'é')")
        srv.execute("INSERT INTO OLDDB.BEFORE VALUES (1, 'y')")
        srv.flush_logs()
        names = srv.binlog_names()
        srv.files = [srv.binlog_dir / n for n in names[names.index(first):-1]]
        srv.cdc = srv.query("SELECT id, CAST(e AS CHAR), LOWER(HEX(b)), v FROM mydb.mysqlcdc")
        ddl = tmp_path_factory.mktemp("lctn") / "before.sql"
        # A schema as the application's own script spells it (not as the server stores it).
        ddl.write_text("CREATE DATABASE OldDb CHARACTER SET utf8mb4;\n"
                       "CREATE TABLE OldDb.Before (id INT PRIMARY KEY, e ENUM('x','y'));\n")
        srv.ddl = ddl
        yield srv


def test_the_binlog_says_names_are_case_insensitive(lctn_server):
    result = dump(lctn_server, "--table", "mydb.mysqlcdc")
    assert result.returncode == 0, result.stderr
    rows = row_records(result.stdout)
    assert [(r["db"], r["table"]) for r in rows] == [("mydb", "mysqlcdc")]
    (row_id, e, b, v), = lctn_server.cdc
    assert rows[0]["after"] == {"id": row_id, "e": e, "b": b, "v": v}
    assert "lower_case_table_names" in result.stderr


def test_a_schema_in_another_case_needs_the_option_when_nothing_says(lctn_server):
    # --no-track-ddl: the binlog's CREATE DATABASE MyDb (logged as mydb) would say so.
    plain = dump(lctn_server, "--schema-ddl", lctn_server.ddl, "--table", "olddb.before",
                 "--no-track-ddl")
    assert plain.returncode == 0, plain.stderr
    assert row_records(plain.stdout)[0]["after"] == {"@1": 1, "@2": 2}
    assert "--lower-case-table-names 1" in plain.stderr
    told = dump(lctn_server, "--schema-ddl", lctn_server.ddl, "--table", "olddb.before",
                "--no-track-ddl", "--lower-case-table-names", "1")
    assert told.returncode == 0, told.stderr
    assert row_records(told.stdout)[0]["after"] == {"id": 1, "e": "y"}
