"""MySQL GTID sets for ``--start-gtid`` / ``--stop-gtid`` on real MySQL binlogs
(samples/mysql-test, written by MySQL 5.6 - 8.0 servers).

The semantics (binlog/gtids.py): a start set is what the reader already has
(mysqlbinlog --exclude-gtids), a stop set what it asks for (--include-gtids); the first
PREVIOUS_GTIDS event must lie inside the start set.  Which transaction carries which GTID
is taken from outside this project: ``mariadb-binlog`` lists where each event starts
("# at N", "Ignorable event type 33 (MySQL Gtid)"), and the SID and GNO are read from
the file's bytes at that offset by the layout of MySQL's Gtid_event
(libs/mysql/binlog/event/control_events.h: after the 19-byte header, u8 flags, 16-byte
SID, i64 GNO).  The expected selections are written out by hand from the semantics.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from binlog.errors import UsageError
from binlog.gtids import GtidSet, GtidWindow

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "mysql-test"
HEADER = 19


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def ignorable_events(path: Path) -> list[tuple[int, int]]:
    """(offset, type code) of the MySQL-only events mariadb-binlog lists in the file."""
    from support.mariadb_server import require_tool

    tool = require_tool("mariadb-binlog", "mysqlbinlog")
    # it exits 1 at a MySQL 8 TRANSACTION_PAYLOAD event, after listing the events before it
    out = subprocess.run([tool, str(path)], capture_output=True, text=True).stdout
    found, at = [], None
    for line in out.splitlines():
        if line.startswith("# at "):
            at = int(line[5:])
        elif line.startswith("# Ignorable event type "):
            found.append((at, int(line.split()[4])))
    assert found, f"mariadb-binlog listed no MySQL event in {path.name}"
    return found


def gtids_in(path: Path) -> list[str]:
    """The GTIDs of the file's transactions, in order: mariadb-binlog's GTID event
    offsets, SID and GNO read from the bytes there."""
    data = path.read_bytes()
    out = []
    for offset, code in ignorable_events(path):
        if code == 33:
            body = offset + HEADER
            sid = uuid.UUID(bytes=data[body + 1:body + 17])
            gno, = struct.unpack_from("<q", data, body + 17)
            out.append(f"{sid}:{gno}")
    return out


def selected(path: Path, *options) -> list[str]:
    """The distinct GTIDs of the records ``binlog dump`` gives out, in order."""
    done = cli("dump", *options, path)
    assert done.returncode == 0, done.stderr
    seen: list[str] = []
    for record in map(json.loads, done.stdout.splitlines()):
        if not seen or seen[-1] != record["gtid"]:
            seen.append(record["gtid"])
    return seen


INVISIBLE = "binlog-invisible-columns.000001"           # 8.0: 97c7af02-...:1-5
U80 = "97c7af02-4c50-11ec-acd8-681842034964"
RESERVED = "binlog_56_gtid_reserved_word.000001"        # 5.6: 11111111-...:1-6
U56 = "11111111-1111-1111-1111-111111111111"
TWO_SIDS = "rpl_atomic_ddl_rollback_table.000001"       # 7f6766f1-...:1, aaaaaaaa-...:1
A = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

# (file, --start-gtid, --stop-gtid, (sid, gno) of the transactions read)
WINDOWS = [
    (INVISIBLE, f"{U80}:1-2", None, [(U80, 3), (U80, 4), (U80, 5)]),
    (INVISIBLE, None, f"{U80}:2-3", [(U80, 2), (U80, 3)]),
    (INVISIBLE, f"{U80}:1:3", f"{U80}:1-4", [(U80, 2), (U80, 4)]),
    (INVISIBLE, f"{A}:1-100", None, [(U80, n) for n in range(1, 6)]),
    (RESERVED, f"{U56}:1-2:5", None, [(U56, 3), (U56, 4), (U56, 6)]),
    (RESERVED, f"{U56}:1-3", f"{U56}:1-5", [(U56, 4), (U56, 5)]),
    # upper case, no dashes, overlapping intervals: the same set
    (RESERVED, None, f" {U56.upper().replace('-', '')}:4-4:4 ", [(U56, 4)]),
    (TWO_SIDS, "7f6766f1-daa1-11e7-86f3-340286faf52d:1", None, [(A, 1)]),
    (TWO_SIDS, None, f"{A}:1,{U80}:1-9", [(A, 1)]),
]


@pytest.mark.parametrize("name,start,stop,expected", WINDOWS)
def test_sets_select_the_transactions_by_their_gtids(name, start, stop, expected):
    path = SAMPLES / name
    in_file = gtids_in(path)
    want = [f"{sid}:{gno}" for sid, gno in expected]
    assert set(want) <= set(in_file), f"{want} not all in {in_file}"
    want.sort(key=in_file.index)
    options = (["--start-gtid", start] if start else []) + (["--stop-gtid", stop] if stop else [])
    assert selected(path, *options) == want


def test_the_stop_set_ends_reading_once_read_whole():
    # --stop-gtid U:2 is read whole at the end of the second transaction: reading stops
    # there, before the third GTID event (its offset as mariadb-binlog lists it); --stats
    # counts the bytes of the events read, from offset 4
    path = SAMPLES / INVISIBLE
    third = [offset for offset, code in ignorable_events(path) if code == 33][2]
    done = cli("dump", "--stop-gtid", f"{U80}:2", "--stats", path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["gtid"] for line in done.stdout.splitlines()] == [f"{U80}:2"]
    assert f" events, {third - 4} bytes" in done.stderr


def test_anonymous_transactions_are_in_no_set():
    path = SAMPLES / "binlog_transaction_with_anonymous_GTID.000001"
    anonymous = [offset for offset, code in ignorable_events(path) if code == 34]
    assert len(anonymous) == 2
    done = cli("dump", "--stop-gtid", f"{U80}:1-9", path)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    done = cli("dump", "--start-gtid", f"{U80}:1-9", path)
    positions = [json.loads(line)["pos"] for line in done.stdout.splitlines()]
    # each anonymous transaction (from its GTID event to the next) is read
    bounds = anonymous + [path.stat().st_size]
    for begin, end in zip(bounds, bounds[1:], strict=False):
        assert any(begin < pos < end for pos in positions), (begin, end, positions)


def previous_gtids(path: Path) -> str:
    """The set of the file's PREVIOUS_GTIDS event, from its bytes (one SID, one
    interval here: u64 n_sids, 16-byte SID, u64 n_intervals, i64 start, i64 end+1)."""
    offset = next(o for o, code in ignorable_events(path) if code == 35)
    n_sids, = struct.unpack_from("<Q", path.read_bytes(), offset + HEADER)
    assert n_sids == 1
    body = path.read_bytes()[offset + HEADER + 8:]
    sid = uuid.UUID(bytes=body[:16])
    n, lo, hi = struct.unpack_from("<Qqq", body, 16)
    assert n == 1
    return f"{sid}:{lo}-{hi - 1}" if hi - 1 > lo else f"{sid}:{lo}"


def test_previous_gtids_outside_the_start_set_are_a_gap():
    path = SAMPLES / "transaction_compression.000001"
    before = previous_gtids(path)                       # 357df524-...:1
    assert cli("dump", "--start-gtid", before, path).returncode == 0
    done = cli("dump", "--start-gtid", f"{U80}:1", path)
    assert done.returncode == 1
    assert f"transactions {before} were written before transaction_compression.000001" in done.stderr
    assert "--allow-gaps" in done.stderr
    done = cli("dump", "--stop-gtid", before, path)     # asked for, but before the input
    assert done.returncode == 1 and before in done.stderr
    assert cli("dump", "--stop-gtid", f"{U80}:1", path).returncode == 0   # not asked for
    done = cli("dump", "--allow-gaps", "--start-gtid", f"{U80}:1", path)
    assert done.returncode == 0 and "warning" in done.stderr and before in done.stderr


@pytest.mark.parametrize("start,stop,message", [
    (f"{U80}:1-3", f"{U80}:2-3", "holds nothing that --start-gtid"),
    (f"{U80}:1", "0-1-5", "must both be MariaDB GTID lists"),
    (f"{U80}:0-3", None, "must be 1 <= N <= M"),
    (f"{U80}:5-3", None, "must be 1 <= N <= M"),
    (f"{U80}:x-y", None, "neither an interval"),
    (f"{U80}:tag1", None, "has no interval"),
    ("97c7af02-4c50:1", None, "is not uuid:interval"),
])
def test_bad_sets_are_usage_errors(start, stop, message):
    with pytest.raises(UsageError, match=message):
        GtidWindow(start, stop)


def test_mariadb_lists_on_mysql_binlogs_and_back():
    done = cli("dump", "--start-gtid", "0-1-5", SAMPLES / INVISIBLE)
    assert done.returncode == 2 and "this binlog has MySQL GTIDs" in done.stderr
    done = cli("dump", "--start-gtid", f"{U80}:1", REPO / "samples" / "mysql-test" / "mariadb-bin.000001")
    assert done.returncode == 2 and "this binlog has MariaDB GTIDs" in done.stderr


def test_set_arithmetic_and_text():
    s = GtidSet.parse(f"{U80}:1-5:7:9-10, {U80}:6,{A}:TagA:3-4:tag_b:1")
    assert str(s) == f"{U80}:1-7:9-10,{A}:tag_b:1:taga:3-4"
    assert ((U80, ""), 8) not in s and ((U80, ""), 10) in s and ((A, "taga"), 4) in s
    assert str(s - GtidSet.parse(f"{U80}:2-9")) == f"{U80}:1:10,{A}:tag_b:1:taga:3-4"
    s.remove((U80, ""), 1)
    assert str(GtidSet.parse(str(s))) == str(s)
