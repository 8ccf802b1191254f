"""Hypothesis mutation test of ``binlog.rewrite`` (bounded): legacy sample binlogs with
bytes flipped, overwritten, inserted, deleted or cut, CRC32s left wrong or not checked,
rewritten with and without --full-metadata and --keep-compressed: only BinlogError may
come out, and what was written before it frames (each event's size)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlog.errors import BinlogError
from binlog.rewrite import RewriteOptions, StreamRewriter
from binlog.stream import NEED_DATA
from schema_store.loading import load_resolver

pytestmark = pytest.mark.fuzz

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
SEEDS = [(SAMPLES / "temporal_predump.binlog").read_bytes(),
         (SAMPLES / "compressed.binlog").read_bytes(),
         (SAMPLES / "temporal_cells.binlog").read_bytes()]
SCHEMA = str(SAMPLES / "temporal_predump.schema.sql")


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        if len(data) < 6:
            break
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "cut"]))
        at = draw(st.integers(4, len(data) - 1))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 8))]
        else:
            del data[at:]
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.booleans(), st.booleans(), st.booleans())
def test_damaged_input_raises_binlog_errors_only(data, verify, full, keep):
    schema = load_resolver(ddl_paths=[SCHEMA], required=True)
    rw = StreamRewriter("x.binlog", schema=schema, verify_checksums=verify,
                        options=RewriteOptions(keep_compressed=keep, full_metadata=full))
    out = bytearray(data[:4])
    try:
        rw.feed(data)
        rw.close()
        while (event := rw.next()) is not NEED_DATA:
            assert event.out_offset == len(out)
            out += event.data
    except BinlogError:
        pass
    pos = 4
    while pos < len(out):
        size = int.from_bytes(out[pos + 9:pos + 13], "little")
        assert size >= 19 and pos + size <= len(out)
        pos += size
    assert pos == len(out)
