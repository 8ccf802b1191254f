"""The sans-IO stream gives the same events fed whole, byte by byte, or in odd chunks
(h11's tr() pattern), and reports a cut-off tail."""
from __future__ import annotations

import pytest
from support.paths import CORPUS

from binlog.errors import BadMagicError, IncompleteEventError
from binlog.stream import NEED_DATA, EventStream

SAMPLES = ["mysql_type_bit.000001", "mariadb-bin.000001", "transaction_compression.000001",
           "json.binlog.000001"]


def events_of(data: bytes, chunk: int) -> list:
    stream = EventStream("t")
    out = []
    for i in range(0, len(data), chunk):
        stream.feed(data[i:i + chunk])
        while (event := stream.next_event()) is not NEED_DATA:
            out.append(event)
    stream.close()
    return out


def summary(events):
    return [(e.header.offset, e.header.type_code, e.header.event_size) for e in events]


@pytest.mark.parametrize("name", SAMPLES)
def test_whole_bytewise_and_chunked_agree(name):
    data = (CORPUS / name).read_bytes()
    whole = summary(events_of(data, len(data)))
    assert whole
    assert summary(events_of(data, 1)) == whole
    assert summary(events_of(data, 7)) == whole


def test_trailing_partial_event_is_reported_with_its_offset():
    data = (CORPUS / "mysql_type_bit.000001").read_bytes()
    with pytest.raises(IncompleteEventError) as info:
        events_of(data + data[4:20], 4096)
    assert info.value.event_offset == len(data)


def test_bad_magic():
    stream = EventStream("x")
    stream.feed(b"GIF89a")
    with pytest.raises(BadMagicError):
        stream.next_event()
