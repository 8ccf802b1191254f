"""Caps on what hostile input can make the parser allocate or do: declared uncompressed
sizes are checked before anything is inflated, zstd frames never get to size their own
output buffer, JSON nesting and value counts are bounded, and every such refusal is a
typed error naming the file, event, table and column."""
from __future__ import annotations

import tracemalloc
import zlib

import pytest
import zstandard

from binlog.compression import MAX_UNCOMPRESSED, mariadb_uncompress, zlib_exact, zstd_exact
from binlog.errors import MalformedEventError
from binlog.reader import BinlogReader
from binlog.types.json_binary import MAX_DEPTH, parse_json_binary
from binlog.types.strings import uncompress_column

from .build import json_nested, json_shared_offsets, json_table, no_column_present


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    except MalformedEventError:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_mariadb_block_declaring_a_huge_size_is_refused_before_inflating():
    block = b"\x84" + (MAX_UNCOMPRESSED + 1).to_bytes(4, "big") + zlib.compress(b"x")
    with pytest.raises(MalformedEventError, match="over the"):
        mariadb_uncompress(block, 0, len(block), "rows data")
    # within the cap but more than the compressed bytes could ever give
    block = b"\x84" + (100 << 20).to_bytes(4, "big") + zlib.compress(b"x" * 100)
    with pytest.raises(MalformedEventError, match="compressed bytes can hold"):
        mariadb_uncompress(block, 0, len(block), "rows data")
    assert _peak(lambda: mariadb_uncompress(block, 0, len(block), "rows data")) < 1 << 20


def test_zlib_output_never_exceeds_the_declared_size():
    bomb = zlib.compress(b"\0" * (8 << 20))           # 8 MiB from ~8 KiB
    with pytest.raises(MalformedEventError, match="header says 1000"):
        zlib_exact(bomb, 1000, "rows data")
    assert _peak(lambda: zlib_exact(bomb, 1000, "rows data")) < 1 << 20


def test_zstd_frame_cannot_size_its_own_buffer():
    # A frame without content size: zstandard would allocate max_output_size (1 GiB) at
    # once if asked to decompress it in one call.
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"a" * 10)
    assert _peak(lambda: zstd_exact(frame, None, "transaction payload")) < 8 << 20
    bomb = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))
    with pytest.raises(MalformedEventError, match="frame says"):
        zstd_exact(bomb, 100, "transaction payload")
    with pytest.raises(MalformedEventError, match="more than"):
        zstd_exact(bomb, None, "transaction payload", limit=1 << 20)
    assert _peak(lambda: zstd_exact(bomb, None, "transaction payload", limit=1 << 20)) < 8 << 20
    with pytest.raises(MalformedEventError, match="corrupt zstd"):
        zstd_exact(b"not zstd at all", 10, "transaction payload")


def test_compressed_column_with_zero_declared_length_is_bounded():
    # header 0x88: zlib method, raw deflate, 0-byte length -> an original length of 0;
    # zlib's max_length=0 would mean "no limit".
    payload = b"\x88" + zlib.compressobj(9, zlib.DEFLATED, -15).compress(b"\0" * (1 << 20))
    with pytest.raises(MalformedEventError):
        uncompress_column(payload)


def test_json_nesting_is_bounded():
    assert parse_json_binary(json_nested(MAX_DEPTH)) is not None
    with pytest.raises(MalformedEventError, match="nested deeper"):
        parse_json_binary(json_nested(MAX_DEPTH + 1))


def test_json_shared_offsets_cannot_multiply_work(tmp_path):
    with pytest.raises(MalformedEventError, match="offsets overlap"):
        parse_json_binary(json_shared_offsets(30))
    path = tmp_path / "j.binlog"
    path.write_bytes(json_table(json_shared_offsets(30)))
    with pytest.raises(MalformedEventError) as info:
        list(BinlogReader([path]).items())
    err = info.value
    assert (err.source, err.event_type, err.table, err.column) == ("j.binlog", "WRITE_ROWS_EVENT_V1", "h.j", "@1")
    assert err.event_offset is not None and err.field_offset > err.event_offset


def test_rows_event_with_no_present_column_does_not_loop(tmp_path):
    path = tmp_path / "n.binlog"
    path.write_bytes(no_column_present())
    with pytest.raises(MalformedEventError, match="no column is present"):
        list(BinlogReader([path]).items())
