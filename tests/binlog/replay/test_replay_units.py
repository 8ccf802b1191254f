"""Replay building blocks without a server: literals, key-changing update splitting,
transaction boundaries, TiCDC checksums, stats."""
from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import zlib
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from binlog.assembly.split import split_changes, split_transaction
from binlog.assembly.transactions import Statement, Transaction, TxAssembler, classify_query
from binlog.checksum import encode_value, row_checksum
from binlog.column import Column
from binlog.constants import ColumnType as T
from binlog.output.sql.literals import SqlRenderError, literal, quote_text, text_literal
from binlog.reader import BinlogReader, RowChange
from binlog.replay.keys import TableKeys
from binlog.rows import DecodePlan

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / "mariadb-10.11"


def col(index, type_, name=None, **kw):
    return Column(index=index, binlog_type=type_, type=type_, name=name or f"c{index}", **kw)


def mysql_unescape(body: str) -> str:
    """What the server reads inside '...' (backslash escapes on)."""
    table = {"0": "\0", "n": "\n", "r": "\r", "Z": "\x1a", "'": "'", '"': '"', "\\": "\\",
             "t": "\t", "b": "\b"}
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            out.append(table.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            assert c != "'", f"unescaped quote in {body!r}"
            out.append(c)
            i += 1
    return "".join(out)


# -- literals ---------------------------------------------------------------------------------

@given(st.text())
@settings(max_examples=300, deadline=None)
def test_quoted_text_cannot_break_out_and_reads_back(text):
    lit = quote_text(text)
    assert lit[0] == lit[-1] == "'"
    assert mysql_unescape(lit[1:-1]) == text
    assert "\n" not in lit and "\r" not in lit and "\0" not in lit


def test_special_bytes_are_escaped():
    assert quote_text("a'b\"c\\d\0e\x1af\ng\rh") == "'a\\'b\\\"c\\\\d\\0e\\Zf\\ng\\rh'"
    assert quote_text("');DROP TABLE s;-- ") == "'\\');DROP TABLE s;-- '"


def test_text_in_other_charsets_goes_as_hex_with_introducer():
    utf8 = col(0, T.VARCHAR, collation=45, encoding="utf-8")
    latin1 = col(1, T.VARCHAR, collation=8, encoding="mysql_latin1")
    gbk = col(2, T.VARCHAR, collation=28, encoding="gbk")
    assert text_literal("é😀'", utf8) == "'é😀\\''"
    assert text_literal("caf\u00e9 \x81", latin1) == "_latin1 X'636166e92081'"
    assert text_literal("plain ascii'", latin1) == "'plain ascii\\''"
    # a GBK character whose second byte is 0x5C never reaches the server as a quoted string
    assert text_literal("乗'", gbk) == "_gbk X'815c27'"
    binary = col(3, T.VARCHAR, collation=63)
    assert literal(b"\xff'\x00", binary) == "X'ff2700'"
    assert literal(b"", binary) == "X''"
    unknown = col(4, T.BLOB)           # no charset in the binlog: bytes as they are
    assert literal(b"\xc3\xa9", unknown) == "X'c3a9'"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_doubles_round_trip(value):
    lit = literal(value, col(0, T.DOUBLE))
    assert "e" in lit and float(lit) == value and repr(float(lit)) == repr(value)


def test_numbers_temporals_and_oddities():
    f = struct.unpack("<f", struct.pack("<f", 3.14159))[0]
    lit = literal(f, col(0, T.FLOAT))
    assert struct.unpack("<f", struct.pack("<f", float(lit)))[0] == f
    assert literal(Decimal("-12345678901234567890.0123456789"), col(0, T.NEWDECIMAL)) == \
        "-12345678901234567890.0123456789"
    assert literal(Decimal("0E-30"), col(0, T.NEWDECIMAL)) == "0." + "0" * 30
    assert literal(0, col(0, T.YEAR)) == "'0000'"          # a bare 0 would be 2000
    assert literal(2155, col(0, T.YEAR)) == "2155"
    assert literal(5, col(0, T.BIT)) == "b'101'"
    assert literal(18446744073709551615, col(0, T.LONGLONG, unsigned=True)) == "18446744073709551615"
    assert literal("-838:59:59.99", col(0, T.TIME2, precision=2)) == "'-838:59:59.99'"
    assert literal("0000-00-00 00:00:00.000", col(0, T.DATETIME2, precision=3)) == \
        "'0000-00-00 00:00:00.000'"
    assert literal({"a": [1, "x'"]}, col(0, T.JSON)) == "'{\\\"a\\\": [1, \\\"x\\'\\\"]}'"
    assert literal(None, col(0, T.LONG)) == "NULL"
    assert literal(b"\x00\x00\x00\x00\x01\x01", col(0, T.GEOMETRY)) == "X'000000000101'"
    with pytest.raises(SqlRenderError):
        literal(float("nan"), col(0, T.DOUBLE))


# -- split updates (seed 001) -----------------------------------------------------------------

PLAN = DecodePlan("test", "t", [col(0, T.LONG, "a"), col(1, T.LONG, "b")], [None, None], [])
KEYS = TableKeys((0,), ((0,),))


def rc(op, before=None, after=None, pos=100):
    row = lambda v: None if v is None else {"a": v[0], "b": v[1]}  # noqa: E731
    return RowChange("f", pos, 0, 1, "0-1-1", "test", "t", op, row(before), row(after), PLAN)


def net(changes):
    deletes, passthrough, puts = split_transaction(changes, lambda ch: KEYS)
    assert not passthrough
    return ([(c.op, c.before and tuple(c.before.values())) for c in deletes],
            [(c.op, c.before and tuple(c.before.values()), c.after and tuple(c.after.values()))
             for c in puts])


def apply_rows(state: dict, changes):
    """Replay DELETE/INSERT/UPDATE on a dict keyed by a (plain statements: a duplicate
    key or a missing row is an error, as on a server without safe mode)."""
    for c in changes:
        if c.op == "delete":
            assert state.pop(c.before["a"]) == c.before["b"]
        elif c.op == "insert":
            assert c.after["a"] not in state, f"duplicate key {c.after['a']}"
            state[c.after["a"]] = c.after["b"]
        else:
            assert state.pop(c.before["a"]) == c.before["b"]
            assert c.after["a"] not in state, f"duplicate key {c.after['a']}"
            state[c.after["a"]] = c.after["b"]
    return state


def test_seed_swap_becomes_deletes_then_inserts():
    # UPDATE t SET a = 3 WHERE a = 1; ... a = 1 WHERE a = 2; ... a = 2 WHERE a = 3
    tx = [rc("update", (1, 1), (3, 1)), rc("update", (2, 2), (1, 2)), rc("update", (3, 1), (2, 1))]
    deletes, puts = net(tx)
    assert deletes == [("delete", (1, 1)), ("delete", (2, 2))]
    assert sorted(puts) == [("insert", None, (1, 2)), ("insert", None, (2, 1))]
    # whatever order a consumer sees the two updates of TiCDC in, the split replays
    state = apply_rows({1: 1, 2: 2}, split_changes(tx, lambda ch: KEYS))
    assert state == {1: 2, 2: 1}


def test_seed_reordered_updates_replay_after_splitting():
    tx = [rc("update", (2, 2), (3, 2)), rc("update", (1, 1), (2, 1))]
    assert apply_rows({1: 1, 2: 2}, split_changes(tx, lambda ch: KEYS)) == {2: 1, 3: 2}
    # in the order TiCDC may receive them, unsplit they would collide
    with pytest.raises(AssertionError):
        apply_rows({1: 1, 2: 2}, list(reversed(tx)))


def test_chains_inside_a_transaction_keep_the_net_effect():
    tx = [rc("insert", None, (5, 50)), rc("update", (5, 50), (6, 60)),   # insert then move
          rc("update", (1, 10), (2, 10)), rc("update", (2, 10), (3, 11)),  # moved twice
          rc("delete", (3, 11)), rc("insert", None, (3, 12)),              # deleted, re-inserted
          rc("update", (4, 40), (4, 41)),                                   # plain update
          rc("insert", None, (9, 9)), rc("delete", (9, 9))]                 # vanished
    deletes, puts = net(tx)
    assert deletes == [("delete", (1, 10))]
    assert puts == [("insert", None, (6, 60)), ("insert", None, (3, 12)), ("update", (4, 40), (4, 41))]
    assert apply_rows({1: 10, 4: 40}, split_changes(tx, lambda ch: KEYS)) == {6: 60, 3: 12, 4: 41}


def test_unique_key_change_splits_and_keyless_tables_pass_through():
    plan = DecodePlan("test", "u", [col(0, T.LONG, "id"), col(1, T.LONG, "code")], [None, None], [])
    keys = TableKeys((0,), ((0,), (1,)))
    ch = RowChange("f", 1, 0, 1, None, "test", "u", "update", {"id": 1, "code": 5},
                   {"id": 1, "code": 6}, plan)
    deletes, passthrough, puts = split_transaction([ch], lambda c: keys)
    assert [c.op for c in deletes] == ["delete"] and [c.op for c in puts] == ["insert"]
    keyless = TableKeys(None)
    deletes, passthrough, puts = split_transaction([ch, ch], lambda c: keyless)
    assert not deletes and not puts and passthrough == [ch, ch]


# -- transactions -----------------------------------------------------------------------------

def units(path):
    reader = BinlogReader([path])
    asm = TxAssembler()
    out = []
    for item in reader.items():
        out.extend(asm.feed(item))
    return out + asm.finish()


def test_transactions_of_events_misc():
    got = units(SAMPLES / "events_misc")
    txs = [u for u in got if isinstance(u, Transaction)]
    ddl = [u for u in got if isinstance(u, Statement)]
    assert all(u.kind == "ddl" for u in ddl) and len(ddl) == 8
    # XA: prepared, then committed in a group of its own: the changes come out at the COMMIT
    xa1 = [t for t in txs if t.gtid == "0-1-15"]
    assert len(xa1) == 1 and len(xa1[0].changes) == 2 and xa1[0].start[1] == 3520
    assert xa1[0].end == ("mariadb-bin.000001", 4199)
    assert not any(c.after and c.after.get("v") == "xa two, rolled back" for t in txs for c in t.changes)
    # statement-based changes stay visible as statements inside their transaction
    stmt_txs = [t for t in txs if t.statements]
    assert stmt_txs and all(s.kind == "dml" for t in stmt_txs for s in t.statements)
    ends = [t.end for t in txs]
    assert all(e is not None for e in ends)


def test_classify_query():
    assert classify_query("CREATE TABLE t (a int)") == "ddl"
    assert classify_query("/* c */ create or replace table t (a int)") == "ddl"
    assert classify_query("CREATE DEFINER=`root`@`%` TRIGGER x BEFORE INSERT ON t FOR EACH ROW SET @a=1") == "ddl"
    assert classify_query("TRUNCATE TABLE big") == "ddl"
    assert classify_query("RENAME TABLE a TO b") == "ddl"
    assert classify_query("CREATE USER x") == "admin"
    assert classify_query("GRANT ALL ON *.* TO x") == "admin"
    assert classify_query("INSERT INTO t VALUES (1)") == "dml"
    assert classify_query("XA COMMIT X'01',X'',1") == "control"


# -- checksums (seed 000) ---------------------------------------------------------------------

def test_checksum_encoding_rules():
    u64 = lambda v: struct.pack("<Q", v & (2 ** 64 - 1))  # noqa: E731
    assert encode_value(-1, col(0, T.LONG)) == b"\xff" * 8
    assert encode_value(0x0123456789ABCDEF, col(0, T.LONGLONG, unsigned=True)) == u64(0x0123456789ABCDEF)
    assert encode_value(2024, col(0, T.YEAR)) == u64(2024)
    assert encode_value(1.5, col(0, T.FLOAT)) == struct.pack("<d", 1.5)
    assert encode_value("a,c", col(0, T.SET, set_values=("a", "b", "c"))) == u64(0b101)
    assert encode_value("b", col(0, T.ENUM, enum_values=("a", "b"))) == u64(2)
    assert encode_value(5, col(0, T.BIT)) == u64(5)
    assert encode_value(Decimal("-0.00"), col(0, T.NEWDECIMAL)) == b"0.00"
    assert encode_value("2022-11-02 11:11:22.326", col(0, T.DATETIME2, precision=3)) == \
        b"2022-11-02 11:11:22.326"
    assert encode_value("é", col(0, T.VARCHAR, collation=8, encoding="mysql_latin1")) == b"\xe9"
    assert encode_value(b"\x00\x01", col(0, T.GEOMETRY)) == b""
    assert encode_value(None, col(0, T.LONG)) == b""
    cols = [col(0, T.LONG, "id"), col(1, T.VARCHAR, "v", collation=45, encoding="utf-8"),
            col(2, T.LONG, "n")]
    expected = zlib.crc32(b"abc", zlib.crc32(u64(7)))
    assert row_checksum({"id": 7, "v": "abc", "n": None}, cols) == expected
    assert row_checksum({"id": 7, "v": "abd", "n": None}, cols) != expected
    assert row_checksum({"id": 7}, cols) is None          # a partial image has none


def test_dump_checksum_and_split_updates_json():
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--checksum",
                           str(SAMPLES / "types_full.binlog")], capture_output=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr.decode()
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {r["op"] for r in records if "checksum" not in r} == {"ddl"}
    records = [r for r in records if r["op"] in ("insert", "update", "delete")]
    for r in records:
        assert set(r["checksum"]) == {"current", "previous"}
        assert (r["checksum"]["current"] is None) == (r["op"] == "delete")
        assert (r["checksum"]["previous"] is None) == (r["op"] == "insert")
    # an UPDATE that leaves a row's image as it was keeps its checksum
    same = [r for r in records if r["op"] == "update" and r["before"] == r["after"]]
    assert all(r["checksum"]["current"] == r["checksum"]["previous"] for r in same)
    changed = [r for r in records if r["op"] == "update" and r["before"] != r["after"]]
    # GEOMETRY is left out of the checksum (seed 000): a change of a point alone keeps it
    geometry_only = [r for r in changed if r["table"] == "geoms"]
    assert geometry_only and all(r["checksum"]["current"] == r["checksum"]["previous"]
                                 for r in geometry_only)
    others = [r for r in changed if r["table"] != "geoms"]
    assert others and all(r["checksum"]["current"] != r["checksum"]["previous"] for r in others)


def test_sql_output_of_a_sample_is_one_transaction_per_source_transaction():
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql",
                           str(SAMPLES / "types_full.binlog")], capture_output=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert text.count("BEGIN;") == text.count("COMMIT;") > 20
    assert "SET SESSION time_zone = '+00:00';" in text
    gtids = re.findall(r"-- transaction (\S+) ", text)
    assert len(gtids) == len(set(gtids)) == text.count("BEGIN;")
    # the binlog's names and primary keys (TABLE_MAP metadata) make DELETE by key
    assert "DELETE FROM `tf`.`ints` WHERE `id` = 1 LIMIT 1;" in text
