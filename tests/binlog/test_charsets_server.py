"""Text columns whose charset the binlog does not carry, on a real server.

MariaDB before 10.5 has no ``binlog_row_metadata``: TABLE_MAP says nothing about
charsets, so the charset of a VARCHAR/CHAR/TEXT column comes from DDL (the binlog's own
or a schema given), or stays unknown and the values are given as raw bytes
(``{"bytes_hex": ...}``) - never as text guessed from UTF-8 validity.

One private server writes, with the default ``binlog_row_metadata=NO_LOG``: databases
and tables created BEFORE the stored binlog (``pre_*``) and INSIDE it (``in_*``), among
them a database created under ``SET SESSION character_set_server = gbk`` with no charset
of its own (only the QUERY event's Q_CHARSET_CODE says it is gbk); then, with
``binlog_row_metadata=FULL``, one more row per table.  The expected values are the
server's ``CAST(col AS CHAR)`` and ``HEX(col)``.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.mariadb_server import MariaDBServer, require_mariadbd
from support.records import row_records

from binlog.reader import BinlogReader

pytestmark = pytest.mark.server

WIDE = ("id INT PRIMARY KEY, l1 VARCHAR(20), u3 VARCHAR(20) CHARACTER SET utf8mb3, "
        "u4 TEXT CHARACTER SET utf8mb4, g CHAR(10) CHARACTER SET gbk, b VARBINARY(20)")
NARROW = "id INT PRIMARY KEY, v VARCHAR(20)"
TABLES = {"pre_dflt.t": WIDE, "pre_gbk.t": NARROW, "in_dflt.t": WIDE, "in_sess.t": NARROW,
          "in_gbk.t": NARROW}
WIDE_ROWS = ["(%s, 'héllo wörld', 'ünï €', '😀 ok', '中文ü', x'00ff6869')",
             "(%s, '0123abcd', 'ab', '', 'x', x'')"]
NARROW_ROWS = ["(%s, '中文 ü')", "(%s, 'deadbeef')"]
PRE_COLUMNS = 6        # pre_dflt.t: l1 u3 u4 g b; pre_gbk.t: v


def _insert(srv, table: str, first_id: int, count: int) -> None:
    rows = WIDE_ROWS if TABLES[table] == WIDE else NARROW_ROWS
    values = ", ".join(rows[i % 2] % (first_id + i) for i in range(count))
    srv.execute(f"INSERT INTO {table} VALUES {values}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_mariadbd()
    with MariaDBServer({"binlog_row_metadata": "NO_LOG"}) as srv:
        srv.start()
        srv.execute("CREATE DATABASE pre_dflt")                  # server default: latin1
        srv.execute("CREATE DATABASE pre_gbk CHARACTER SET gbk")
        for table in ("pre_dflt.t", "pre_gbk.t"):
            srv.execute(f"CREATE TABLE {table} ({TABLES[table]})")
        srv.flush_logs()
        first = srv.master_status()[0]
        srv.execute("CREATE DATABASE in_dflt")
        srv.execute("SET SESSION character_set_server = gbk")
        srv.execute("CREATE DATABASE in_sess")                   # gbk, from collation_server
        srv.execute("SET SESSION character_set_server = DEFAULT")
        srv.execute("CREATE DATABASE in_gbk CHARACTER SET gbk")
        for table in ("in_dflt.t", "in_sess.t", "in_gbk.t"):
            srv.execute(f"CREATE TABLE {table} ({TABLES[table]})")
        for table in TABLES:
            _insert(srv, table, 1, 2)
        srv.set_global("binlog_row_metadata", "FULL")
        for table in TABLES:
            _insert(srv, table, 3, 1)
        srv.flush_logs()
        names = srv.binlog_names()
        files = [srv.binlog_dir / n for n in names[names.index(first):-1]]
        expected = {table: _server_values(srv, table) for table in TABLES}
        assert srv.query("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA "
                         "WHERE SCHEMA_NAME = 'in_sess'") == [("gbk",)]
        srv.schema_dump = tmp_path_factory.mktemp("charsets") / "pre.sql"
        srv.schema_dump.write_text(srv.dump_schema(["pre_dflt", "pre_gbk"]), encoding="utf-8")
        srv.files, srv.expected = files, expected
        yield srv


def _server_values(srv, table: str) -> dict:
    """{id: {column: (CAST(col AS CHAR), LOWER(HEX(col)))}} as the server gives them."""
    columns = [c.split()[0] for c in TABLES[table].split(", ")[1:]]
    exprs = ", ".join(f"CAST({c} AS CHAR), LOWER(HEX({c}))" for c in columns)
    out = {}
    for row in srv.query(f"SELECT id, {exprs} FROM {table} ORDER BY id"):
        out[row[0]] = {c: (row[1 + 2 * i], row[2 + 2 * i]) for i, c in enumerate(columns)}
    return out


def dump(server, *args):
    cmd = [sys.executable, "-m", "binlog.cli", "dump", *map(str, args), *map(str, server.files)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def rows_of(result) -> dict:
    out = {}
    for record in row_records(result.stdout):
        out[(f"{record['db']}.{record['table']}", record["after"]["id"])] = record["after"]
    return out


def as_text(server, table: str, row_id: int) -> dict:
    """What a decoded row must be when the charset is known: the server's text, and hex
    for the binary column."""
    values = server.expected[table][row_id]
    return {c: hexed if c == "b" else text for c, (text, hexed) in values.items()}


def as_raw(server, table: str, row_id: int) -> dict:
    return {c: {"bytes_hex": hexed} for c, (text, hexed) in server.expected[table][row_id].items()}


def _values(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "id" and not k.startswith("@1")}


def _by_position(row: dict, table: str) -> dict:
    """Rows without names (no schema, no metadata) carry @N keys: name them."""
    columns = [c.split()[0] for c in TABLES[table].split(", ")[1:]]
    if "id" in row:
        return _values(row)
    return {columns[i]: row[f"@{i + 2}"] for i in range(len(columns))}


def test_ddl_in_the_binlog_gives_the_charsets_and_unknown_ones_stay_raw_bytes(server):
    result = dump(server)
    got = {}
    for record in row_records(result.stdout):
        after = record["after"]
        row_id = after.get("id", after.get("@1"))
        got[(f"{record['db']}.{record['table']}", row_id)] = _by_position(after, f"{record['db']}.{record['table']}")
    for table in ("in_dflt.t", "in_sess.t", "in_gbk.t"):
        for row_id in (1, 2, 3):
            assert got[(table, row_id)] == as_text(server, table, row_id), (table, row_id)
    for table in ("pre_dflt.t", "pre_gbk.t"):
        for row_id in (1, 2):
            assert got[(table, row_id)] == as_raw(server, table, row_id), (table, row_id)
        assert got[(table, 3)] == as_text(server, table, 3)     # FULL metadata
    warnings = [line for line in result.stderr.splitlines() if "--assume-charset" in line]
    assert len(warnings) == PRE_COLUMNS, result.stderr
    assert all("--schema-ddl" in w and "bytes_hex" in w for w in warnings)


@pytest.mark.parametrize("how", ["ddl", "live"])
def test_schema_gives_the_charsets_of_tables_made_before_the_binlog(server, how):
    if how == "ddl":
        result = dump(server, "--schema-ddl", server.schema_dump)
    else:
        result = dump(server, "--schema-from", f"mysql://root@localhost/?unix_socket={server.socket}")
    got = rows_of(result)
    for table in TABLES:
        for row_id in (1, 2, 3):
            assert _values(got[(table, row_id)]) == as_text(server, table, row_id), (how, table, row_id)
    assert "--assume-charset" not in result.stderr


def test_assume_charset_decodes_what_nothing_else_tells(server):
    result = dump(server, "--assume-charset", "gbk", "--table", "pre_gbk.t")
    rows = [r["after"] for r in row_records(result.stdout)]
    assert [r["@2"] for r in rows[:2]] == [server.expected["pre_gbk.t"][i]["v"][0] for i in (1, 2)]
    assert "--assume-charset" not in result.stderr


def test_raw_bytes_are_the_same_object_in_json_text_and_spark(server):
    from spark_ingest.records import BatchBuilder

    raw = {"bytes_hex": server.expected["pre_gbk.t"][1]["v"][1]}
    json_rows = [r["after"] for r in row_records(dump(server, "--table", "pre_gbk.t").stdout)]
    assert json_rows[0]["@2"] == raw
    text = dump(server, "--table", "pre_gbk.t", "--format", "text").stdout
    assert f"###   @2={json.dumps(raw, separators=(',', ':'))}" in text
    builder = BatchBuilder()
    for change in BinlogReader([str(p) for p in server.files]).changes():
        if change.db == "pre_gbk":
            builder.add(change)
    after = builder.batch(final=True).column("after").to_pylist()
    assert json.loads(after[0])["@2"] == raw
    assert [json.loads(a) for a in after] == json_rows
    stats = dump(server, "--table", "pre_gbk.t", "--stats").stderr
    assert "1 text column(s) of unknown charset" in stats


def test_the_collation_tables_are_the_servers(server):
    """binlog/charsets.py's MariaDB tables are this server's: every named collation id
    (information_schema.COLLATIONS) and every id's charset (COLLATION_CHARACTER_SET_APPLICABILITY,
    the uca1400 ids too)."""
    from binlog.charsets import MARIADB_COLLATION_NAMES, MARIADB_COLLATIONS

    named = dict(server.query("SELECT ID, COLLATION_NAME FROM information_schema.COLLATIONS "
                              "WHERE ID IS NOT NULL"))
    assert named == MARIADB_COLLATION_NAMES
    charsets = dict(server.query("SELECT ID, CHARACTER_SET_NAME FROM information_schema."
                                 "COLLATION_CHARACTER_SET_APPLICABILITY WHERE ID IS NOT NULL"))
    assert charsets == MARIADB_COLLATIONS
