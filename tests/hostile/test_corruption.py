"""Corruption: bytes flipped inside one event of a binlog with checksums.

- Detected every time: the default (fail) mode raises a typed error at that event.
- With skip, the damaged event is reported and skipped and every row of the other
  events comes out unchanged, except what the damage makes unknowable, which is
  reported, never guessed: rows events whose TABLE_MAP was the damaged event are
  skipped too (and listed), and the rows of a transaction whose GTID event was damaged
  come out with gtid null.
"""
from __future__ import annotations

import random

import pytest

from binlog.constants import EventType
from binlog.errors import BinlogError, ChecksumMismatchError
from binlog.events import RowsEvent, TableMapEvent
from binlog.sources.file import read_events

from .conftest import SAMPLES
from .decode import decode

GTID_TYPES = {EventType.GTID_EVENT, EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT}
CASES = ["types_full.binlog", "compressed.binlog", "row_image_minimal.binlog",
         "compressed_columns.binlog", "events_misc/mariadb-bin.000001"]


def flip(data: bytes, offset: int, positions, rng) -> bytes:
    out = bytearray(data)
    for k in positions:
        out[offset + k] ^= rng.randrange(1, 256)
    return bytes(out)


MAX_EVENTS = 60       # events of one file that get damaged (each kind at least once)


def sample_events(events, rng):
    if len(events) <= MAX_EVENTS:
        return events
    first_of_kind = {}
    for e in events:
        first_of_kind.setdefault(e.header.type_code, e)
    chosen = {e.offset: e for e in first_of_kind.values()}
    rest = [e for e in events if e.offset not in chosen]
    for e in rng.sample(rest, MAX_EVENTS - len(chosen)):
        chosen[e.offset] = e
    return [chosen[k] for k in sorted(chosen)]


def expected_rows(full_rows, events, damaged):
    """The rows a skip-mode read must give when only event ``damaged`` is lost."""
    lost_maps = damaged.header.type_code != EventType.FORMAT_DESCRIPTION_EVENT and not isinstance(damaged, RowsEvent)
    mapped, lost_events = set(), {damaged.offset}
    no_gtid_from, no_gtid_to = None, None
    if damaged.header.type_code in GTID_TYPES:
        no_gtid_from = damaged.offset
        no_gtid_to = next((e.offset for e in events if e.offset > damaged.offset
                           and e.header.type_code in GTID_TYPES), float("inf"))
    for event in events:
        if event.offset <= damaged.offset or not lost_maps:
            continue
        if isinstance(event, TableMapEvent):
            mapped.add(event.table_id)
        elif isinstance(event, RowsEvent) and event.table_id not in mapped:
            lost_events.add(event.offset)
    rows = []
    for pos, gtid, op, before, after in full_rows:
        if pos in lost_events:
            continue
        if no_gtid_from is not None and no_gtid_from < pos < no_gtid_to:
            gtid = None
        rows.append((pos, gtid, op, before, after))
    return rows, lost_events


@pytest.mark.parametrize("name", CASES)
def test_flipped_body_bytes_are_detected_and_only_that_event_is_lost(name, tmp_path):
    path = SAMPLES / name
    data = path.read_bytes()
    events = list(read_events(path))
    assert events[0].fde.checksum_alg == 1, "a sample with checksums"
    # Without a schema store: what the binlog alone says (see the DDL test below).
    full = decode(path, schema=None)
    assert full.error is None and full.rows
    rng = random.Random(name)
    broken = tmp_path / path.name
    for event in sample_events(events, rng):
        h = event.header
        body = range(19, h.event_size)                    # everything after the header
        positions = rng.sample(body, min(len(body), rng.choice((1, 1, 2, 3))))
        broken.write_bytes(flip(data, h.offset, positions, rng))
        where = f"{name}: {h.type_name} @ {h.offset} bytes {positions} flipped"

        failed = decode(broken, schema=None)
        assert isinstance(failed.error, ChecksumMismatchError), where
        err = failed.error
        assert err.event_offset == h.offset and err.source == path.name, where
        assert err.stored != err.computed
        assert f"stored 0x{err.stored:08x}, computed 0x{err.computed:08x}" in str(err), where
        assert failed.rows == full.rows[:len(failed.rows)], where

        skipped = decode(broken, on_error="skip", schema=None)
        assert skipped.error is None, where
        damage = skipped.damage
        assert damage and damage[0].start == h.offset and damage[0].end == h.end, where
        assert isinstance(damage[0].error, ChecksumMismatchError), where
        want, lost_events = expected_rows(full.rows, events, event)
        assert skipped.rows == want, where
        # every event whose rows were lost is listed as skipped
        listed = {d.start for d in damage}
        assert lost_events <= listed | {h.offset}, where


@pytest.mark.parametrize("name", CASES[:2])
def test_flipped_header_bytes_never_give_a_wrong_row(name, tmp_path):
    """A damaged header (size, type, log_pos...) is resynchronised past: whatever comes
    out is a row of the whole file, and every transaction after the damage is whole."""
    path = SAMPLES / name
    data = path.read_bytes()
    events = list(read_events(path))
    full = decode(path, schema=None)
    known = set(full.rows)
    without_gtid = {r[:1] + (None,) + r[2:] for r in full.rows}
    rng = random.Random("header" + name)
    broken = tmp_path / path.name
    for event in sample_events(events[1:], rng):
        h = event.header
        positions = [rng.randrange(19)]
        broken.write_bytes(flip(data, h.offset, positions, rng))
        where = f"{name}: {h.type_name} @ {h.offset} header byte {positions} flipped"
        failed = decode(broken, schema=None)
        assert isinstance(failed.error, BinlogError) or failed.incomplete is not None, where
        skipped = decode(broken, on_error="skip", schema=None)
        assert skipped.error is None, where
        assert skipped.damage or skipped.incomplete, where
        for row in skipped.rows:
            assert row in known or row in without_gtid, f"{where}: wrong row {row}"
        end = max(d.end for d in skipped.damage) if skipped.damage else h.offset
        after = next((e.offset for e in events if e.offset >= end
                      and e.header.type_code in GTID_TYPES), None)
        if after is not None:
            assert [r for r in skipped.rows if r[0] > after] == [r for r in full.rows if r[0] > after], where


def test_damaged_ddl_with_ddl_tracking_loses_rows_visibly_never_wrongly(tmp_path):
    """compressed.binlog's ALTER TABLE ADD COLUMN (a QUERY_COMPRESSED at 2820) damaged:
    the schema followed from the binlog misses the column, so the next rows events of
    the table do not match it; they are skipped and listed, not decoded against the old
    schema."""
    path = SAMPLES / "compressed.binlog"
    data = path.read_bytes()
    full = decode(path)
    broken = tmp_path / path.name
    broken.write_bytes(flip(data, 2820, [60], random.Random(1)))
    skipped = decode(broken, on_error="skip")
    assert skipped.error is None
    assert skipped.damage[0].start == 2820
    assert all(row in full.rows for row in skipped.rows)
    listed = {d.start for d in skipped.damage}
    assert {row[0] for row in full.rows if row not in skipped.rows} <= listed
