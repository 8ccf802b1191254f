"""binlog.rewrite as a library: damaged rows name file, offset, table and column; the
compressed block and packed integers as the server writes them; the position map's
parser on damaged maps; a relay fed a byte at a time gives the same output."""
from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path

import pytest

from binlog.compression import mariadb_compress, mariadb_uncompress
from binlog.cursor import pack_lenenc
from binlog.errors import BinlogError, MalformedEventError, TruncatedError, UsageError
from binlog.events import RowsEvent
from binlog.rewrite import (
    MAP_HEADER,
    MapEntry,
    Rewriter,
    StreamRewriter,
    lookup,
    parse_map,
)
from binlog.sources.base import read_events
from binlog.sources.file import FileBinlog
from binlog.stream import NEED_DATA, EventStream
from schema_store.loading import load_resolver

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
PREDUMP = SAMPLES / "temporal_predump.binlog"


def _schema():
    return load_resolver(ddl_paths=[str(SAMPLES / "temporal_predump.schema.sql")], required=True)


def _rewrite_all(feed_size: int | None = None) -> bytes:
    data = PREDUMP.read_bytes()
    rw = StreamRewriter(PREDUMP.name, schema=_schema())
    out = [data[:4]]
    chunks = [data] if feed_size is None else [data[i:i + feed_size]
                                               for i in range(0, len(data), feed_size)]
    for chunk in chunks:
        rw.feed(chunk)
        while (event := rw.next()) is not NEED_DATA:
            out.append(event.data)
    rw.close()
    while (event := rw.next()) is not NEED_DATA:
        out.append(event.data)
    return b"".join(out)


def test_a_relay_fed_in_pieces_gives_the_same_output():
    whole = _rewrite_all()
    assert whole != PREDUMP.read_bytes()
    assert _rewrite_all(feed_size=1) == whole
    assert _rewrite_all(feed_size=977) == whole


def test_damaged_rows_name_table_and_column():
    """A rows event whose last legacy value is cut: a typed error with the place."""
    stream = EventStream(PREDUMP.name, keep_raw=True)
    rewriter = Rewriter(PREDUMP.name, schema=_schema())
    with FileBinlog(PREDUMP) as binlog:
        for event in read_events(binlog, stream):
            if isinstance(event, RowsEvent) and event.data[-1:]:
                cut = dataclasses.replace(event, data=event.data[:-1])
                with pytest.raises(BinlogError) as info:
                    rewriter.event(cut, stream.last_raw)
                error = info.value
                assert isinstance(error, TruncatedError)
                assert error.source == PREDUMP.name and error.event_offset == event.offset
                assert error.table == "tp.legacy_all" and error.column is not None
                assert event.data_offset <= error.field_offset < event.data_offset + len(event.data)
                assert rewriter.rollback_point[0] < event.offset      # its group's GTID
                return
            rewriter.event(event, stream.last_raw)
    pytest.fail("no rows event")


@pytest.mark.parametrize("n", [0, 1, 250, 251, 65535, 65536, 1 << 24, (1 << 24) + 1])
def test_pack_lenenc(n):
    from binlog.cursor import Cursor

    packed = pack_lenenc(n)
    cur = Cursor(packed)
    assert cur.lenenc() == n and cur.at_end()


@pytest.mark.parametrize("size", [0, 10, 255, 256, 70000, (1 << 24) + 5])
def test_mariadb_compress_reads_back(size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    block = mariadb_compress(data)
    assert mariadb_uncompress(block, 0, len(block), "rows") == data
    assert block[0] & 0x80 and zlib.decompress(block[1 + (block[0] & 7):]) == data


def test_map_parser():
    entries = [MapEntry(4, 256, 4, 256), MapEntry(256, 300, 256, 310)]
    text = MAP_HEADER + "".join(e.line() for e in entries)
    assert parse_map(text, "m") == entries
    assert parse_map(text + "310 40", "m") == entries           # a line a crash cut
    with pytest.raises(MalformedEventError, match="line 3"):
        parse_map(text.replace("256 300", "256 x"), "m")
    with pytest.raises(MalformedEventError, match="not a binlog rewrite position map"):
        parse_map("4 256 4 256\n", "m")
    assert lookup(entries, 300) == 310 and lookup(entries, 310, from_output=True) == 300
    assert lookup(entries, 256) == 256 and lookup(entries, 4) == 4
    with pytest.raises(UsageError):
        lookup(entries, 299)
    with pytest.raises(UsageError):
        lookup([], 4)
