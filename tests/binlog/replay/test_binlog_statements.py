"""binlog.replay.binlog_statements (``binlog apply --method binlog``), sans-IO: the BINLOG
statements' events are the server's own bytes (from a sample binlog the server wrote),
changed only where a statement needs it (STMT_END_F, --rewrite-db's name, the FDE's
``created``), each with a right CRC32."""
from __future__ import annotations

import base64
from pathlib import Path

import pytest

from binlog.assembly.transactions import Transaction, TxAssembler
from binlog.constants import STMT_END_F, EventType
from binlog.events import TableMapEvent
from binlog.header import parse_header, set_checksum
from binlog.reader import BinlogReader, RowCount
from binlog.replay.binlog_statements import (
    RawEvents,
    chunks,
    fde_statement,
    rewrite_table_map,
)
from binlog.stream import EventStream, verify_crc

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
ROWS = {23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 170, 171}


def _file_events(path: Path) -> dict[bytes, int]:
    """{event bytes: offset} of every event of the file (framed by its headers)."""
    data = path.read_bytes()
    out, pos = {}, 4
    while pos + 19 <= len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        out[data[pos:pos + size]] = pos
        pos += size
    return out


def _events(payload: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(payload):
        size = int.from_bytes(payload[pos + 9:pos + 13], "little")
        assert 19 <= size <= len(payload) - pos
        out.append(payload[pos:pos + size])
        pos += size
    return out


def _transactions(path: Path, **raw_options):
    reader = BinlogReader([str(path)], count_rows=True, keep_raw=True, count_runs=True)
    raw = RawEvents(lambda table_map, fde: True, **raw_options)
    assembler = TxAssembler()
    for item in reader.items():
        raw.feed(item)
        for unit in assembler.feed(item):
            if isinstance(unit, Transaction) and unit.changes:
                yield unit, raw
    assert raw.fde is not None


def _payloads(tx, raw, limit=8 << 20) -> list[bytes]:
    counted = [ch for ch in tx.changes if isinstance(ch, RowCount)]
    events = [raw.take(ch.file, ch.pos) for ch in counted]
    return [base64.b64decode(chunk.sql[len(b"BINLOG '"):-1])
            for chunk in chunks(events, [(ch.file, ch.pos) for ch in counted], limit)]


def _flags(event: bytes) -> int:
    return int.from_bytes(event[25:27], "little")


def _check_crc(event: bytes) -> None:
    verify_crc(event, parse_header(event, 0, 0))


@pytest.mark.parametrize("name", ["row_image_minimal.binlog", "signedness.binlog",
                                  "checksum_none.binlog", "compressed.binlog"])
def test_statements_hold_the_servers_own_events(name):
    path = SAMPLES / name
    own = _file_events(path)
    checksum = name != "checksum_none.binlog"
    seen = 0
    for tx, raw in _transactions(path):
        for payload in _payloads(tx, raw):
            events = _events(payload)
            assert events[0][4] == EventType.TABLE_MAP_EVENT
            assert events[-1][4] in ROWS and _flags(events[-1]) & STMT_END_F
            mapped = False
            for event in events:
                if checksum:
                    _check_crc(event)
                if event[4] == EventType.TABLE_MAP_EVENT:
                    mapped = True
                    assert event in own
                    continue
                assert mapped, "a rows event before any TABLE_MAP"
                if event not in own:       # only STMT_END_F added (and the CRC32 after it)
                    original = bytearray(event)
                    original[25] &= ~STMT_END_F
                    assert bytes(set_checksum(original) if checksum else original) in own
                seen += 1
    assert seen


@pytest.mark.parametrize("name", ["row_image_minimal.binlog", "compressed.binlog",
                                  "types_full.binlog"])
def test_a_small_limit_cuts_between_events_and_maps_each_statement(name):
    """compressed and types_full have statements of several rows events: cut between
    them, the first is flagged STMT_END_F and the next statement gets its maps again."""
    path = SAMPLES / name
    for tx, raw in _transactions(path):
        counted = [ch for ch in tx.changes if isinstance(ch, RowCount)]
        payloads = _payloads(tx, raw, limit=1)
        assert len(payloads) == len(counted)        # one rows event per statement
        for payload in payloads:
            events = _events(payload)
            assert [e[4] for e in events[:-1]] == [EventType.TABLE_MAP_EVENT] * (len(events) - 1)
            assert _flags(events[-1]) & STMT_END_F
            for event in events:
                _check_crc(event)


def _decode(fde_raw: bytes, event: bytes):
    stream = EventStream("<test>", expect_magic=False)
    stream.feed(fde_raw + event)
    stream.next_event()
    return stream.next_event()


def test_rewrite_db_renames_the_database_of_a_table_map():
    path = SAMPLES / "signedness.binlog"
    data = path.read_bytes()
    own = _file_events(path)
    fde_raw = next(e for e in own if e[4] == EventType.FORMAT_DESCRIPTION_EVENT)
    table_map = next(e for e in own if e[4] == EventType.TABLE_MAP_EVENT)
    before = _decode(fde_raw, table_map)
    renamed = rewrite_table_map(table_map, 8, "a_much_longer_database_name", True)
    _check_crc(renamed)
    after = _decode(fde_raw, renamed)
    assert isinstance(after, TableMapEvent)
    assert after.db == "a_much_longer_database_name"
    assert (after.table, after.table_id, after.layout_key()) == (before.table, before.table_id,
                                                                 before.layout_key())
    assert data        # the sample is read, not made up


def test_the_fde_goes_with_created_zeroed_and_its_crc_right():
    own = _file_events(SAMPLES / "signedness.binlog")
    fde_raw = next(e for e in own if e[4] == EventType.FORMAT_DESCRIPTION_EVENT)
    sql = fde_statement(fde_raw, True)
    assert sql.startswith(b"BINLOG '") and sql.endswith(b"'")
    sent = base64.b64decode(sql[8:-1])
    assert sent[19 + 52:19 + 56] == b"\0\0\0\0"
    assert sent[:19 + 52] == fde_raw[:19 + 52] and sent[19 + 56:-4] == fde_raw[19 + 56:-4]
    _check_crc(sent)


def test_rewrite_through_raw_events():
    path = SAMPLES / "signedness.binlog"
    for tx, raw in _transactions(path, rewrite={"sg": "renamed"}):
        for payload in _payloads(tx, raw):
            maps = [e for e in _events(payload) if e[4] == EventType.TABLE_MAP_EVENT]
            assert maps and all(m[19 + 8:19 + 8 + 9] == b"\x07renamed\x00" for m in maps)
        return
    raise AssertionError("no transaction")
