"""EventStream decodes a TABLE_MAP body once (a server writes the same one before every
transaction on a table): the repeats are the first event with their own header."""
from __future__ import annotations

from pathlib import Path

from binlog.constants import EventType
from binlog.events import TableMapEvent
from binlog.registry import EVENT_DECODERS
from binlog.stream import NEED_DATA, EventStream

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11" / "types_full.binlog"


def table_maps(monkeypatch) -> tuple[list[TableMapEvent], int]:
    calls = []
    decode = EVENT_DECODERS[EventType.TABLE_MAP_EVENT]

    def counted(cur, ctx, header):
        calls.append(header.offset)
        return decode(cur, ctx, header)

    monkeypatch.setitem(EVENT_DECODERS, EventType.TABLE_MAP_EVENT, counted)
    stream = EventStream(str(SAMPLE))
    stream.feed(SAMPLE.read_bytes())
    stream.close()
    found = []
    while (event := stream.next_event()) is not NEED_DATA and event is not None:
        if isinstance(event, TableMapEvent):
            found.append(event)
    return found, len(calls)


def test_a_repeated_table_map_is_decoded_once_and_keeps_its_own_offset(monkeypatch):
    maps, decoded = table_maps(monkeypatch)
    bodies = {(m.table_id, m.db, m.table, tuple((c.type, c.meta, c.name) for c in m.columns)) for m in maps}
    assert len(maps) > decoded == len(bodies), (len(maps), decoded, len(bodies))
    assert len({m.offset for m in maps}) == len(maps)       # each at its own position
    first = {}
    for m in maps:
        twin = first.setdefault(m.table_id, m)
        assert (m.db, m.table, m.columns, m.primary_key) == (twin.db, twin.table, twin.columns, twin.primary_key)
