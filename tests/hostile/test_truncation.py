"""Truncation sweep: every prefix of every sample and mysql-test binlog ends in a typed
error or a clean stop, and the rows it gives are exactly the first rows of the whole
file - never one more, never a different one.

Small files are cut at every byte; larger ones at every event boundary and a few bytes
either side of it (where a reader is most likely to go wrong) plus a seeded random
sample of other cut points.
"""
from __future__ import annotations

import random

import pytest

from binlog.errors import BinlogError, IncompleteEventError
from binlog.sources.file import read_events

from .conftest import binlog_files
from .decode import decode

ALL_PREFIXES_UP_TO = 1100     # bytes: files up to this size are cut everywhere
AROUND_BOUNDARY = 2
RANDOM_CUTS = 30
MAX_BOUNDARIES = 50           # event boundaries of a larger file that are cut around
SKIP_EVERY = 3                # the skip-mode check runs on every third cut
# Samples whose legacy temporal columns only decode with the DDL followed (as the CLI
# does by default); the others are read without a schema store, which is much faster.
NEEDS_DDL = {"legacy_temporal.binlog", "temporal_alter.binlog"}

FILES = binlog_files()


def boundaries(path) -> list[int]:
    out = []
    try:
        for event in read_events(path):
            out.append(event.header.offset)
            out.append(event.header.end)
    except BinlogError as exc:
        if exc.event_offset is not None:
            out.append(exc.event_offset)
    return sorted(set(out))


def cut_points(path) -> list[int]:
    size = path.stat().st_size
    if size <= ALL_PREFIXES_UP_TO:
        return list(range(size))
    rng = random.Random(path.name)
    marks = boundaries(path)
    if len(marks) > MAX_BOUNDARIES:
        marks = sorted(rng.sample(marks, MAX_BOUNDARIES))
    cuts = {c for m in marks for c in range(m - AROUND_BOUNDARY, m + AROUND_BOUNDARY + 1)}
    cuts.update(rng.randrange(size) for _ in range(RANDOM_CUTS))
    cuts.update(range(0, 24))          # inside the magic and the first header
    return sorted(c for c in cuts if 0 <= c < size)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_prefix_gives_first_rows_or_typed_error(path, tmp_path):
    data = path.read_bytes()
    options = {} if path.name in NEEDS_DDL else {"schema": None}
    full = decode(path, **options)
    cut_file = tmp_path / path.name
    for n, cut in enumerate(cut_points(path)):
        cut_file.write_bytes(data[:cut])
        got = decode(cut_file, **options)
        where = f"{path.name} cut at {cut}"
        assert got.rows == full.rows[:len(got.rows)], f"{where}: rows differ from the whole file's"
        if got.error is not None:
            # A typed error, and one the whole file has too, or one about the cut.
            assert isinstance(got.error, BinlogError)
        elif got.incomplete is not None:
            inc = got.incomplete
            assert isinstance(inc, IncompleteEventError)
            assert inc.source == path.name and inc.event_offset is not None
            assert inc.event_offset <= cut, where
            assert str(inc.event_offset) in str(inc)
        if n % SKIP_EVERY:
            continue
        # Skip mode must see the same thing: a cut is not damage.
        skipped = decode(cut_file, on_error="skip", **options)
        assert skipped.rows[:len(got.rows)] == got.rows, where
        assert skipped.rows == full.rows[:len(skipped.rows)] or full.error is not None, where
        if full.error is None:
            assert not skipped.damage, f"{where}: {[d.describe() for d in skipped.damage]}"


def test_cut_inside_an_event_names_its_offset(tmp_path):
    path = FILES[0]
    events = list(read_events(path))
    middle = events[len(events) // 2].header
    cut_file = tmp_path / path.name
    cut_file.write_bytes(path.read_bytes()[:middle.offset + middle.event_size // 2])
    got = decode(cut_file)
    assert got.error is None
    assert got.incomplete.event_offset == middle.offset
    assert f"{path.name} @ {middle.offset}" in str(got.incomplete)
