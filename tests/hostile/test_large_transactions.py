"""A large source transaction is not held decoded by ``binlog dump --format sql``: each
row change is rendered as it is read, into its transaction's spool (memory, then an
unnamed temporary file), and the block goes out at the COMMIT.  Before, the transaction's
RowChanges and their decoded rows were kept until then: ~3.2 KB per row, 327 MB of peak
RSS for one of the bench's 100,000-row transactions (13.7 MB of binlog)."""
from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from binlog.cli import main

from .build import GTID, TABLE_MAP, WRITE_ROWS_V1, XID, binlog, table_map, write_rows

UPDATE_ROWS_V1 = 24
from .test_large_values import MIB, _peak_rss

ROWS_PER_EVENT = 1000


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "schema.sql"
    path.write_text("CREATE DATABASE h;\nCREATE TABLE h.t (id INT PRIMARY KEY, v VARBINARY(32));\n")
    return path


def _rows(first: int, n: int) -> bytes:
    return b"".join(b"\x00" + struct.pack("<i", first + i) + b"\x08" + b"value%03d" % (i % 1000)
                    for i in range(n))


def _statement(first: int, n: int) -> list:
    """One INSERT statement's events: its TABLE_MAP, then its rows (STMT_END)."""
    return [(TABLE_MAP, table_map(5, "h", "t", bytes([3, 15]), (32).to_bytes(2, "little"), b"\x02")),
            (WRITE_ROWS_V1, write_rows(5, 2, b"\x03", _rows(first, n)))]


def _gtid(seq: int) -> tuple:
    # MariaDB GTID event: seq_no, domain_id, flags2 0 (a transaction), 6 bytes of padding
    return GTID, struct.pack("<QIB", seq, 0, 0) + bytes(6)


def _transaction_binlog(path, events: int):
    bodies = [_gtid(1)]
    for n in range(events):
        bodies += _statement(n * ROWS_PER_EVENT, ROWS_PER_EVENT)
    bodies.append((XID, (1).to_bytes(8, "little")))
    path.write_bytes(binlog(bodies))
    return path


@pytest.mark.parametrize("args", [["--format", "sql"], ["--format", "sql", "--extended-insert"],
                                  ["--format", "flashback"], ["--format", "flashback", "--extended-insert"]])
def test_a_large_transaction_is_not_held_decoded(tmp_path, schema, args):
    small = _peak_rss(*args, "--schema-ddl", schema, _transaction_binlog(tmp_path / "s.binlog", 2))
    big = _peak_rss(*args, "--schema-ddl", schema, _transaction_binlog(tmp_path / "b.binlog", 200))
    # 200,000 rows: held decoded they took ~600 MiB; the spool keeps at most 4 MiB in memory
    assert big - small < 24 * MIB, (args, (big - small) / MIB)


def test_a_spooled_transaction_is_written_whole_in_order(tmp_path, schema, capsysbinary):
    path = _transaction_binlog(tmp_path / "b.binlog", 60)       # ~5 MiB of SQL: on disk
    assert main(["dump", "--format", "sql", "--schema-ddl", str(schema), str(path)]) == 0
    text = capsysbinary.readouterr().out.decode()
    block = text.split("-- transaction 0-1-1 ", 1)[1]
    assert ", 60000 row change(s)\nBEGIN;\n" in block
    lines = block.split("BEGIN;\n", 1)[1].splitlines()
    assert lines[-1] == "COMMIT;" and len(lines) == 60001
    assert lines[0] == "REPLACE INTO `h`.`t` (`id`, `v`) VALUES (0, X'76616c7565303030');"
    ids = [int(line.split("VALUES (", 1)[1].split(",", 1)[0]) for line in lines[:-1]]
    assert ids == list(range(60000))


def test_a_transaction_without_commit_leaves_nothing(tmp_path, schema, capsysbinary):
    """The assembler drops a transaction a new GTID interrupts (with a warning): what
    was rendered of it is dropped too; the next one is written."""
    bodies = [_gtid(1), *_statement(1, 3), _gtid(2), *_statement(10, 2),
              (XID, (2).to_bytes(8, "little")), _gtid(3), *_statement(20, 1)]
    path = tmp_path / "cut.binlog"
    path.write_bytes(binlog(bodies))
    main(["dump", "--format", "sql", "--extended-insert", "--schema-ddl", str(schema), str(path)])
    out = capsysbinary.readouterr()
    text = out.out.decode()
    assert "transaction 0-1-1" not in text and "(1, X'" not in text
    assert "no COMMIT before a new GTID event starts; its 3 row changes are not replayed" in out.err.decode()
    assert "VALUES (10, X'76616c7565303030'),(11, X'76616c7565303031');\nCOMMIT;" in text
    # the last one has no COMMIT in the input: a comment, never its rows
    assert "incomplete transaction 0-1-3" in text and "(20, X'" not in text


def _transactions_binlog(path, count: int):
    bodies: list = []
    for n in range(count):
        bodies += [_gtid(n + 1), *_statement(n * ROWS_PER_EVENT, ROWS_PER_EVENT),
                   (XID, (n + 1).to_bytes(8, "little"))]
    path.write_bytes(binlog(bodies))
    return path


def test_flashback_does_not_hold_the_range_undo_in_memory(tmp_path, schema, capsysbinary):
    # the undo blocks go to a spool until the end, when they are written newest first
    args = ["--format", "flashback", "--schema-ddl", schema]
    small = _peak_rss(*args, _transactions_binlog(tmp_path / "s.binlog", 2))
    big = _peak_rss(*args, _transactions_binlog(tmp_path / "b.binlog", 600))
    assert big - small < 16 * MIB, (big - small) / MIB
    path = _transactions_binlog(tmp_path / "few.binlog", 3)
    assert main(["dump", "--format", "flashback", "--schema-ddl", str(schema), str(path)]) == 0
    text = capsysbinary.readouterr().out.decode()
    heads = [line.split(" (")[0] for line in text.splitlines() if line.startswith("-- undo of ")]
    assert heads == ["-- undo of transaction 0-1-3", "-- undo of transaction 0-1-2",
                     "-- undo of transaction 0-1-1"]
    block = text.split("-- undo of transaction 0-1-3", 1)[1].split("COMMIT;", 1)[0]
    assert block.count("DELETE FROM `h`.`t` WHERE `id` = ") == ROWS_PER_EVENT
    assert "WHERE `id` = 2999 LIMIT 1;" in block.split("\n")[2]       # newest row first


@pytest.mark.server
@pytest.mark.parametrize("method", ["sql", "binlog"])
def test_apply_holds_a_large_transaction_a_batch_at_a_time(tmp_path, mariadb_factory, method):
    """Apply sends a large transaction's changes before its COMMIT is read (_Early) and
    no longer holds them; before, all of them stayed decoded until the COMMIT (465 MB of
    peak RSS on one of the bench's 100,000-row transactions)."""
    target = mariadb_factory({"max_allowed_packet": "64M"})
    target.execute("CREATE DATABASE h")
    target.execute("CREATE TABLE h.t (id INT PRIMARY KEY, v VARBINARY(32))")
    dsn = f"mysql://root@127.0.0.1:{target.port}/"
    peaks = {}
    for name, events in (("small", 2), ("big", 200)):
        target.execute("DELETE FROM h.t")
        path = _transaction_binlog(tmp_path / f"{name}.binlog", events)
        peaks[name] = _peak_rss("--quiet", "--method", method, "--checkpoint-name", name, "--to", dsn, path,
                                command="apply")
        rows = target.query("SELECT COUNT(*), CAST(SUM(id) AS CHAR), MAX(HEX(v)) FROM h.t")
        n = events * ROWS_PER_EVENT
        assert rows == [(n, str(n * (n - 1) // 2), b"value999".hex().upper())]
    assert peaks["big"] - peaks["small"] < 48 * MIB, (peaks["big"] - peaks["small"]) / MIB


def _updates_binlog(path, events: int):
    """One transaction of ``events`` UPDATE events, each rewriting rows 0..999."""
    def image(n, k):
        return b"\x00" + struct.pack("<i", n) + b"\x08" + b"value%03d" % (k % 1000)

    bodies = [_gtid(1)]
    for k in range(events):
        rows = b"".join(image(n, k) + image(n, k + 1) for n in range(ROWS_PER_EVENT))
        bodies += [_statement(0, 0)[0],
                   (UPDATE_ROWS_V1, (5).to_bytes(6, "little") + b"\x01\x00\x02\x03\x03" + rows)]
    bodies.append((XID, (1).to_bytes(8, "little")))
    path.write_bytes(binlog(bodies))
    return path


@pytest.mark.server
def test_verify_rows_holds_a_transaction_by_the_rows_it_leaves(tmp_path, mariadb_factory):
    """verify-rows keeps what each row change leaves (one entry per key) as it reads;
    before, the transaction's changes were kept decoded until its COMMIT."""
    target = mariadb_factory({})
    target.execute("CREATE DATABASE h")
    target.execute("CREATE TABLE h.t (id INT PRIMARY KEY, v VARBINARY(32))")
    dsn = f"mysql://root@127.0.0.1:{target.port}/"
    peaks = {}
    for name, events in (("small", 2), ("big", 200)):
        path = _updates_binlog(tmp_path / f"{name}.binlog", events)
        target.execute("DELETE FROM h.t")
        target.execute("INSERT INTO h.t SELECT seq, CONCAT('value', LPAD(%s, 3, '0')) "
                       "FROM h.seq_0_to_999", (events % 1000,))
        peaks[name] = _peak_rss("--against", dsn, path, command="verify-rows")
        done = subprocess.run([sys.executable, "-m", "binlog.cli", "verify-rows", "--against", dsn,
                               str(path)], capture_output=True, text=True)
        assert done.returncode == 0 and "1000 row(s) checked, 1000 equal" in done.stdout, done
    assert peaks["big"] - peaks["small"] < 48 * MIB, (peaks["big"] - peaks["small"]) / MIB
