"""Free skipping: rows events of filtered tables, before --start-datetime and
inside event groups outside the GTID window are stepped over in runs by length
(binlog.scan.skip_run, compiled in binlog/_scan.c).  Whatever is skipped, the reader
gives out exactly what it gives when each event goes through the one-event path of the
stream (skip runs off), with the compiled walk and with the pure-Python one: the same
items, the same counts, the same errors - on every sample, encrypted, compressed and
damaged inputs included."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from support.paths import CORPUS, REPO

from binlog.errors import BinlogError
from binlog.events import MariaGtidEvent
from binlog.filters import TableFilter
from binlog.reader import BinlogReader, RowChange, SourceEvent, StatementChange
from binlog.sources.keys import load_key_ring
from binlog.stream_runs import RunModes

MARIADB = REPO / "samples" / "mariadb-10.11"
SAMPLES = sorted(MARIADB.glob("*.binlog")) + [MARIADB / "events_misc"] + sorted(
    p for p in CORPUS.glob("*") if p.name != "README.md")
ENCRYPTED = REPO / "samples" / "encrypted"


def tracking():
    """A schema store fed by the binlog's own DDL (as binlog dump reads)."""
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    return SchemaResolver(SchemaStore())


def run(paths, *, runs: bool, track: bool = False, **settings):
    """What a reader gives out (items, comparable), its counts, and the error it ended
    with; ``runs=False``: every event through the stream's one-event path."""
    original = RunModes._skip
    if not runs:
        RunModes._skip = lambda self, *args: None     # type: ignore[method-assign]
    reader = BinlogReader(paths, schema=tracking() if track else None, **settings)
    items, error = [], None
    try:
        for item in reader.items(statements=True):
            if isinstance(item, RowChange):
                items.append(("row", item.file, item.pos, item.row, item.op, item.gtid,
                              item.before, item.after))
            elif isinstance(item, StatementChange):
                items.append(("statement", item.file, item.pos, item.sql, item.gtid))
            elif isinstance(item, SourceEvent):
                h = item.event.header
                items.append(("event", item.file, h.offset, h.type_code))
    except BinlogError as exc:
        error = (type(exc).__name__, exc.source, exc.event_offset, exc.event_type)
    finally:
        RunModes._skip = original     # type: ignore[method-assign]
    s = reader.stats
    counts = (dict(s.events), dict(s.rows), s.bytes, s.skipped_events, s.skipped_bytes,
              [(d.start, d.end, type(d.error).__name__) for d in s.damage],
              None if s.incomplete is None else s.incomplete.event_offset)
    return items, counts, error


def same(paths, *, track: bool = False, **settings):
    with_runs = run(paths, runs=True, track=track, **settings)
    without = run(paths, runs=False, track=track, **settings)
    assert with_runs == without
    return with_runs


def facts(path: Path, *, track: bool = False, **settings):
    """The tables, event timestamps and MariaDB GTIDs of a sample (to aim options at)."""
    tables, stamps, gtids = set(), [], []
    try:
        for item in BinlogReader([path], schema=tracking() if track else None, **settings).items():
            if isinstance(item, RowChange):
                tables.add(f"{item.db}.{item.table}")
            elif isinstance(item, SourceEvent):
                stamps.append(item.event.header.timestamp)
                if isinstance(item.event, MariaGtidEvent):
                    gtids.append(item.event.gtid)
    except BinlogError:
        pass
    return sorted(tables), sorted(stamps), gtids


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_skipping_gives_what_reading_gives(path, scan_mode):
    tables, stamps, gtids = facts(path)
    one = TableFilter(include=tables[:1]) if tables else None
    if tables:
        same([path], table_filter=one)
        same([path], table_filter=TableFilter(exclude=tables[-1:]), on_error="skip")
    if stamps:
        middle = stamps[len(stamps) // 2]
        same([path], start_datetime=middle, stop_datetime=stamps[-1])
        same([path], start_datetime=stamps[-1] + 1)
    if len(gtids) > 1:
        same([path], start_gtid=gtids[len(gtids) // 2])
        same([path], start_gtid=gtids[0], stop_gtid=gtids[-1], table_filter=one)
    size = path.stat().st_size if path.is_file() else 0
    if size and tables:
        same([path], stop_position=size // 2, table_filter=one)


def test_runs_do_skip(scan_mode):
    """Not a vacuous comparison: the runs happen, and they count what the one-event path
    counts (filtered events as skipped, the others as read)."""
    path = MARIADB / "events_misc"
    items, counts, _ = same([path], table_filter=TableFilter(include=["em.big"]))
    assert counts[3] > 0          # filtered rows events skipped
    seen = []
    original = RunModes._skip

    def spy(self, *args):
        got = original(self, *args)
        if got is not None:
            seen.append(got[0])
        return got
    RunModes._skip = spy     # type: ignore[method-assign]
    try:
        run([path], runs=True, start_datetime=2**31 - 1)
    finally:
        RunModes._skip = original     # type: ignore[method-assign]
    assert seen and sum(sum(r.counted.values()) for r in seen) > 0


def test_compressed_inputs(tmp_path, scan_mode):
    for source in (MARIADB / "compressed.binlog", MARIADB / "types_full.binlog"):
        target = tmp_path / (source.name + ".gz")
        with open(source, "rb") as src, gzip.open(target, "wb") as out:
            shutil.copyfileobj(src, out)
        tables, stamps, _ = facts(source)
        plain = run([source], runs=True, table_filter=TableFilter(include=tables[:1]))
        packed = same([target], table_filter=TableFilter(include=tables[:1]))
        assert packed[0] == plain[0]
        same([target], start_datetime=stamps[len(stamps) // 2])


def test_encrypted_inputs(tmp_path, scan_mode):
    for name in ("keys.txt",):
        shutil.copy(ENCRYPTED / name, tmp_path / name)
        (tmp_path / name).chmod(0o600)
    keys = load_key_ring([tmp_path / "keys.txt"])
    for path in sorted(ENCRYPTED.glob("*.binlog")):
        tables, stamps, _ = facts(path, keys=keys, track=True)
        assert tables
        items, _, error = same([path], keys=keys, track=True, table_filter=TableFilter(include=tables[:1]))
        assert error is None and any(i[0] == "row" for i in items)
        same([path], keys=keys, track=True, start_datetime=stamps[len(stamps) // 2])
        same([path])      # without the key: the same error


@pytest.mark.parametrize("flip", ["size", "crc", "log_pos", "body", "table_id"])
def test_damaged_rows_events(tmp_path, scan_mode, flip):
    """A damaged event inside a run: the run stops before it, the one-event path says
    what is wrong (fail) or resynchronises (skip), the same way as without runs."""
    source = MARIADB / "events_misc" / "mariadb-bin.000002"
    data = bytearray(source.read_bytes())
    offsets, pos = [], 4
    while pos + 19 <= len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        if data[pos + 4] in (23, 24, 25, 30, 31, 32):
            offsets.append(pos)
        pos += size
    assert len(offsets) >= 3
    at = offsets[len(offsets) // 2]
    field = {"size": 9, "crc": None, "log_pos": 13, "body": 40, "table_id": 19}[flip]
    if field is None:
        size = int.from_bytes(data[at + 9:at + 13], "little")
        data[at + size - 1] ^= 0xFF
    else:
        data[at + field] ^= 0x21
    damaged = tmp_path / "mariadb-bin.000002"
    damaged.write_bytes(bytes(data))
    tables, stamps, _ = facts(source)
    for on_error in ("fail", "skip"):
        for table in tables:
            same([damaged], on_error=on_error, table_filter=TableFilter(include=[table]))
        same([damaged], on_error=on_error, start_datetime=stamps[-1] + 1)
        same([damaged], on_error=on_error, start_datetime=stamps[-1] + 1, verify_checksums=False)
