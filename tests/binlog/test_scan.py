"""Length-only walks (binlog.scan, binlog/_scan.c): row counts without decoding
(binlog stats) and runs of unwanted rows events stepped over by length.

The compiled module and the pure-Python reference must agree on every input (they are
compared on the samples and on hypothesis-made bytes), and counting must give what
decoding gives."""
from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from support.paths import CORPUS, REPO

from binlog import column_kinds, scan
from binlog.column_kinds import K_LONG
from binlog.errors import BinlogError
from binlog.reader import BinlogReader, RowChange, RowCount

SAMPLES = sorted((REPO / "samples" / "mariadb-10.11").glob("*.binlog")) + sorted(
    p for p in CORPUS.glob("*") if p.name != "README.md")

needs_compiled = pytest.mark.usefixtures("compiled")


def outcome(path: Path, *, count: bool) -> tuple[Counter, tuple | None]:
    """Rows per (db, table, op) and the error (type, offset, event type) that ended the read."""
    rows: Counter = Counter()
    reader = BinlogReader([path], count_rows=count, infer_precision=True)
    try:
        for item in reader.items():
            if isinstance(item, RowCount):
                rows[(item.db, item.table, item.op)] += item.count
            elif isinstance(item, RowChange):
                rows[(item.db, item.table, item.op)] += 1
    except BinlogError as exc:
        return rows, (type(exc).__name__, exc.event_offset, exc.event_type)
    return rows, None


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_counting_gives_what_decoding_gives(path, scan_mode):
    counted, counted_error = outcome(path, count=True)
    decoded, decoded_error = outcome(path, count=False)
    assert counted == decoded
    assert counted_error == decoded_error


def test_count_falls_back_to_decoding_for_columns_of_unknown_length(scan_mode):
    # types_full has JSON and SET columns (no length from metadata alone): still counted
    path = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"
    counted, _ = outcome(path, count=True)
    assert counted[("tf", "ints", "insert")] == 4


# --- compiled == pure on any bytes ------------------------------------------------
K = column_kinds
SPECS = [
    (K.K_TINY, 0, 0, 0, 0), (K.K_LONGLONG, 0, 0, 0, 0), (K.K_DT2, 3, 0, 3, 0),
    (K.K_TIME2, 6, 0, 6, 0), (K.K_TS_HIRES, 4, 0, 4, 0), (K.K_VARCHAR, 0, 300, 0, 0),
    (K.K_STRING, 0, 8, 0, 0), (K.K_BLOB, 0, 2, 0, 0), (K.K_BLOB, 0, 7, 0, 0),
    (K.K_DECIMAL, 0, 0, 12, 2), (K.K_DECIMAL, 0, 0, 3, 9), (K.K_BIT, 0, 2, 0, 0),
    (K.K_ENUM, 0, 1, 0, 0), (K.K_PY, 0, 0, 0, 0), (K.K_TIME_HIRES, 9, 0, 9, 0),
]


def pack(columns: list[int]) -> tuple[bytes, int]:
    nbytes = (len(columns) + 7) >> 3
    return b"".join(scan.SPEC.pack(k >> 3, 1 << (k & 7), *SPECS[c]) for k, c in enumerate(columns)), nbytes


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=200), kind=st.integers(-1, 3),
       before=st.lists(st.integers(0, len(SPECS) - 1), max_size=9),
       after=st.lists(st.integers(0, len(SPECS) - 1), max_size=9),
       garbage=st.binary(max_size=40))
def test_count_rows_compiled_equals_pure(data, kind, before, after, garbage):
    b, nb = pack(before)
    a, na = pack(after)
    for specs in ((b, nb, a, na), (b + garbage, nb, a, na), (b, -1, a, na)):
        assert scan.compiled.count_rows(data, kind, *specs) == scan.count_rows_py(data, kind, *specs)


def widths() -> bytes:
    table = bytearray(256)
    for code in (23, 24, 25, 30, 31, 32):
        table[code] = 6
    table[20] = 4
    return bytes(table)


def event(code: int, size: int, log_pos: int, table_id: int, ts: int = 100, crc: int = 0) -> bytes:
    head = ts.to_bytes(4, "little") + bytes([code]) + (1).to_bytes(4, "little") + \
        size.to_bytes(4, "little") + log_pos.to_bytes(4, "little") + b"\0\0"
    body = (head + table_id.to_bytes(6, "little")).ljust(size - crc, b"\x01")[:size - crc]
    return body + zlib.crc32(body).to_bytes(4, "little")[:crc]


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(sizes=st.lists(st.integers(0, 120), min_size=1, max_size=12),
       codes=st.lists(st.sampled_from([2, 16, 19, 20, 23, 24, 25, 30, 32, 166]), min_size=12, max_size=12),
       ids=st.lists(st.integers(0, 4), min_size=12, max_size=12),
       chain=st.booleans(), cut=st.integers(0, 2000), flips=st.lists(st.integers(0, 2000), max_size=4),
       args=st.tuples(st.booleans(), st.integers(-1, 200), st.integers(-1, 200),
                      st.integers(-1, 2000), st.integers(-1, 3000), st.integers(0, 3),
                      st.booleans(), st.sampled_from([0, 4]), st.sampled_from([19, 21]),
                      st.booleans()))
def test_skip_run_compiled_equals_pure(sizes, codes, ids, chain, cut, flips, args):
    (all_rows, before_ts, stop_ts, stop_offset, last_log_pos, chain_run, strict, crc, common,
     verify) = args
    buf, at = bytearray(), 4
    for i, size in enumerate(sizes):
        size += 19
        buf += event(codes[i], size, at + size if chain else 7, ids[i], ts=i * 20, crc=crc)
        at += size
    for flip in flips:
        if flip < len(buf):
            buf[flip] ^= 0x5A
    end = min(cut, len(buf))
    for table_ids in (None, {1, 3}, frozenset()):
        call = (bytes(buf), 0, end, 4, widths(), common, crc, table_ids, all_rows, before_ts,
                stop_ts, stop_offset, last_log_pos, chain_run, strict, verify)
        assert scan.compiled.skip_run(*call) == scan.skip_run_py(*call)


# --- count_run: runs of rows events counted in one call (binlog stats) ---------------

_INT_SPEC = scan.SPEC.pack(0, 1, K_LONG, 0, 0, 0, 0)     # one INT column, NULL bit 0


def rows_event(code: int, table_id: int, rows: list, log_pos: int, at: int, *, crc: int,
               ts: int, ncols_form: bytes = b"\x01") -> bytes:
    """A WRITE/UPDATE/DELETE rows event (v1 23-25, v2 30-32) of one INT column whose rows
    are ``rows`` (None: NULL); an UPDATE takes each value as its before and after image."""
    update = code in (24, 31)
    image = b"".join(b"\x01" if v is None else b"\x00" + v.to_bytes(4, "little", signed=True)
                     for v in rows for _ in range(2 if update else 1))
    body = table_id.to_bytes(6, "little") + b"\x01\x00" + (b"\x02\x00" if code >= 30 else b"")
    body += ncols_form + b"\x01" * (2 if update else 1) + image
    size = 19 + len(body) + crc
    head = (ts.to_bytes(4, "little") + bytes([code]) + (1).to_bytes(4, "little")
            + size.to_bytes(4, "little") + (log_pos if log_pos >= 0 else at + size).to_bytes(4, "little")
            + b"\0\0")
    raw = head + body
    return raw + zlib.crc32(raw).to_bytes(4, "little")[:crc]


def int_walks(table_ids) -> dict:
    """The walks the reader registers for those tables' one-INT-column events."""
    walks: dict = {}
    for table_id in table_ids:
        for code in (23, 24, 25, 30, 31, 32):
            after = b"\x01" if code in (24, 31) else None
            walks.setdefault(table_id, {})[scan.count_key(code, 1, b"\x01", after)] = (
                _INT_SPEC, 1, _INT_SPEC, 1)
    return walks


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from([2, 16, 20, 23, 24, 25, 30, 31, 32, 166]),
                                 st.integers(0, 3), st.lists(st.one_of(st.none(), st.integers(-5, 5)),
                                                             max_size=4),
                                 st.sampled_from([b"\x01", b"\xfc\x01\x00", b"\xfb", b"\x02"])),
                       min_size=1, max_size=8),
       cut=st.integers(0, 600), flips=st.lists(st.integers(0, 600), max_size=3),
       args=st.tuples(st.integers(-1, 200), st.integers(-1, 600), st.integers(-1, 600),
                      st.integers(0, 3), st.booleans(), st.sampled_from([0, 4]), st.booleans(),
                      st.booleans()))
def test_count_run_compiled_equals_pure(events, cut, flips, args):
    stop_ts, stop_offset, last_log_pos, chain_run, strict, crc, chain, verify = args
    buf, at = bytearray(), 4
    for i, (code, table_id, rows, ncols) in enumerate(events):
        raw = rows_event(code, table_id, rows, -1 if chain else 9, at, crc=crc, ts=i * 30,
                         ncols_form=ncols)
        buf += raw
        at += len(raw)
    for flip in flips:
        if flip < len(buf):
            buf[flip] ^= 0x5A
    end = min(cut, len(buf))
    for walks in ({}, int_walks([1, 2]), int_walks(range(4))):
        call = (bytes(buf), 0, end, 4, widths(), 19, crc, walks, stop_ts, stop_offset,
                last_log_pos, chain_run, strict, verify)
        assert scan.compiled.count_run(*call) == scan.count_run_py(*call)


def test_count_run_counts_and_stops_where_it_cannot(scan_mode):
    buf = bytearray()
    for code, table_id, rows in ((23, 1, [1, 2, None]), (31, 1, [5]), (25, 1, []), (24, 2, [7]),
                                 (23, 1, [3])):
        buf += rows_event(code, table_id, rows, -1, 4 + len(buf), crc=4, ts=100)
    got = scan.count_run(bytes(buf), 0, len(buf), 4, widths(), 19, 4, int_walks([1]), -1, -1, -1,
                         0, False, True)
    pos, counted, *_ = got
    assert [(code, table_id, rows) for _, code, table_id, rows, *_ in counted] == [
        (23, 1, 3), (31, 1, 1), (25, 1, 0)]          # table 2 has no walk: the run ends there
    assert counted[0][0] == 4 and pos == counted[2][0] - 4 + counted[2][4]
    buf[30] ^= 0xFF                                 # the first event's CRC fails: nothing counted
    assert scan.count_run(bytes(buf), 0, len(buf), 4, widths(), 19, 4, int_walks([1]), -1, -1, -1,
                          0, False, True) is None


STATS_SAMPLES = SAMPLES + sorted((REPO / "samples" / "mysql-test").glob("*"))[:40]


@needs_compiled
@pytest.mark.parametrize("path", [p for p in STATS_SAMPLES if p.is_file()], ids=lambda p: p.name)
def test_stats_with_counted_runs_equal_event_by_event(path, monkeypatch, capsys):
    """binlog stats' whole output (counts, bytes, largest transactions, time range, exit
    code) is the same with the compiled runs, the pure runs and no runs at all."""
    from binlog.cli import main

    def stats(batch: str, compiled):
        monkeypatch.setenv("BINLOG_BATCH", batch)
        monkeypatch.setattr(scan, "compiled", compiled)
        code = main(["stats", "--json", "--infer-precision", str(path)])
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    native = scan.compiled
    reference = stats("0", native)
    assert stats("1", native) == reference
    assert stats("1", None) == reference


@needs_compiled
@pytest.mark.parametrize("offset", [0, 1, 3, 8, 15])
def test_crc32_of_the_runs_is_zlibs(offset):
    """The CRC32 the compiled runs check and write (binlog/_rows_frame.h frame_crc32: a
    carry-less multiplication kernel for the 16-byte blocks where the CPU has PCLMULQDQ,
    zlib for the rest) is zlib's, at every length around the kernel's block and minimum
    sizes, from any alignment."""
    import random

    rng = random.Random(offset)
    data = bytes(rng.getrandbits(8) for _ in range(70000))
    for n in [*range(0, 300), 1023, 1024, 4096, 8191, 65535, 69000]:
        chunk = data[offset:offset + n]
        assert scan.compiled.crc32(chunk) == zlib.crc32(chunk), n
    assert scan.compiled.crc32(b"\xff" * 64) == zlib.crc32(b"\xff" * 64)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(0, 200), st.sampled_from([2, 4, 15, 16, 19, 23, 160, 162, 163])),
                      min_size=1, max_size=10),
       pos=st.integers(0, 40), cut=st.integers(0, 3000), flips=st.lists(st.integers(0, 3000), max_size=3),
       seq=st.integers(0, 255), blocked=st.sets(st.sampled_from([2, 4, 15, 16, 160, 162, 163]), max_size=3),
       max_out=st.sampled_from([1, 64, 500, 1 << 20]))
def test_frame_packets_compiled_equals_pure(sizes, pos, cut, flips, seq, blocked, max_out):
    """binlog serve's packet framer (binlog/_scan.c frame_packets) gives what its pure
    reference gives, on events of any size and type, damaged sizes, cut buffers, any
    sequence number, type codes left to the dump, any output bound."""
    buf = bytearray(b"\xfebin")
    for body, code in sizes:
        size = 19 + body
        buf += b"\0" * 4 + bytes([code]) + b"\1\0\0\0" + size.to_bytes(4, "little") + b"\0" * 6
        buf += bytes((i * 7 + code) & 0xFF for i in range(body))
    for flip in flips:
        if flip < len(buf):
            buf[flip] ^= 0xA5
    passing = bytes(0 if code in blocked else 1 for code in range(256))
    call = (bytes(buf), min(pos, len(buf)), min(max(cut, pos), len(buf)), seq, passing, max_out)
    assert scan.compiled.frame_packets(*call) == scan.frame_packets_py(*call)


def test_frame_packets_frames_whole_events_up_to_one_the_dump_takes(scan_mode):
    """Each event as one packet (length, sequence number, 0x00, the event), numbered on
    from ``seq``; it stops before a type code not passing, and frames nothing from there."""
    events = [b"\0" * 4 + bytes([code]) + b"\0" * 4 + (19 + n).to_bytes(4, "little") + b"\0" * 6 + b"x" * n
              for code, n in ((2, 5), (16, 8), (162, 3), (2, 1))]
    data = b"".join(events)
    passing = bytes(0 if code == 162 else 1 for code in range(256))
    packets, pos, seq, count = scan.frame_packets(data, 0, len(data), 255, passing, 1 << 20)
    assert (pos, seq, count) == (len(events[0]) + len(events[1]), 1, 2)
    assert packets == (len(events[0]) + 1).to_bytes(3, "little") + b"\xff\0" + events[0] + \
        (len(events[1]) + 1).to_bytes(3, "little") + b"\x00\0" + events[1]
    assert scan.frame_packets(data, pos, len(data), seq, passing, 1 << 20) is None


@pytest.mark.parametrize("size", [0xFFFFFE, 0xFFFFFF])
def test_frame_packets_leaves_an_event_of_a_full_packet_to_the_dump(scan_mode, size):
    """An event whose packet (0x00 and the event) fills a packet's 0xFFFFFF bytes or more
    is not framed as one packet: the protocol sends such a payload in several, ended by a
    shorter one (sql/net_serv.cc my_net_write), which the dump does.  The event before
    it is framed; it stops there."""
    small = b"\0" * 4 + b"\2" + b"\0" * 4 + (19 + 4).to_bytes(4, "little") + b"\0" * 6 + b"abcd"
    large = b"\0" * 4 + b"\2" + b"\0" * 4 + size.to_bytes(4, "little") + b"\0" * 6
    data = small + large + b"x" * (size - 19)
    passing = b"\1" * 256
    assert scan.frame_packets(data, 0, len(data), 7, passing, 1 << 30) == \
        ((len(small) + 1).to_bytes(3, "little") + b"\x07\0" + small, len(small), 8, 1)
    assert scan.frame_packets(data, len(small), len(data), 8, passing, 1 << 30) is None
