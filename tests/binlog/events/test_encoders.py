"""Every event the project writes, read back by its own decoder: decode(encode(x)) == x.

The encoders (``events.query.encode_query``, ``events.control.encode_rotate`` and
``encode_null_user_var``, ``events.table_map.full_metadata_tlvs``, rewrite's TABLE_MAP
body, serve's artificial events) framed by ``header.frame_event`` after the
FORMAT_DESCRIPTION of a real MariaDB 10.11 binlog, with and without checksums, and read by
``EventStream`` (which checks the sizes and the CRC32 footers)."""
from __future__ import annotations

from dataclasses import replace

from hostile.build import fde
from hypothesis import given, settings, strategies as st

from binlog.constants import HEADER_LEN, LEGACY_TEMPORAL_TYPES, ColumnType as T, EventType as E
from binlog.events import QueryEvent, RotateEvent, TableMapEvent, UserVarEvent
from binlog.events.control import HeartbeatEvent, encode_null_user_var, encode_rotate
from binlog.events.query import Q_TIME_ZONE_CODE, encode_query
from binlog.events.table_map import SIMPLE_PRIMARY_KEY, full_metadata_tlvs
from binlog.header import frame_event
from binlog.rewrite.converter import table_map_body
from binlog.serve import events as artificial
from binlog.stream import NEED_DATA, EventStream

CHECKSUMS = st.booleans()
NAMES = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)


def read_back(data: bytes, checksums: bool):
    """The event ``data`` (a whole event) as the stream decodes it after the FDE."""
    head = fde(checksums)
    stream = EventStream("encoded")
    stream.feed(head + data)
    stream.close()
    first = stream.next_event()
    assert first.header.type_code == E.FORMAT_DESCRIPTION_EVENT
    event = stream.next_event()
    assert event is not NEED_DATA and stream.next_event() is NEED_DATA
    assert event.header.offset == len(head) and event.header.event_size == len(data)
    return event


def framed(type_code: int, body: bytes, checksums: bool, **header) -> bytes:
    at = len(fde(checksums))
    size = HEADER_LEN + len(body) + (4 if checksums else 0)
    return frame_event(type_code, body, checksum=checksums, log_pos=at + size, **header)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=64), st.sampled_from([b"", bytes([Q_TIME_ZONE_CODE, 0]),
       bytes([Q_TIME_ZONE_CODE, 3]) + b"UTC"]), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
       st.integers(0, 2**16 - 1), st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF), CHECKSUMS)
def test_query(query, db, status, thread_id, exec_time, error_code, server_id, flags, checksums):
    db = db.replace(b"\0", b"")[:255]
    body = encode_query(query, db=db, status_vars=status, thread_id=thread_id,
                        exec_time=exec_time, error_code=error_code)
    event = read_back(framed(E.QUERY_EVENT, body, checksums, timestamp=1700000000,
                             server_id=server_id, flags=flags & ~0x1), checksums)
    assert isinstance(event, QueryEvent)
    assert (event.raw_query, event.db, event.status_vars) == (query, db.decode("utf-8", "replace"), status)
    assert (event.thread_id, event.exec_time, event.error_code) == (thread_id, exec_time, error_code)
    assert (event.header.timestamp, event.header.server_id) == (1700000000, server_id)


@settings(max_examples=100, deadline=None)
@given(st.integers(4, 2**64 - 1), NAMES, CHECKSUMS)
def test_rotate(position, name, checksums):
    event = read_back(framed(E.ROTATE_EVENT, encode_rotate(position, name), checksums), checksums)
    assert isinstance(event, RotateEvent) and (event.position, event.next_file) == (position, name)


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=64), CHECKSUMS)
def test_null_user_var(name, checksums):
    event = read_back(framed(E.USER_VAR_EVENT, encode_null_user_var(name), checksums), checksums)
    assert isinstance(event, UserVarEvent) and event.is_null
    assert event.name == name.decode("utf-8", "replace")


@settings(max_examples=100, deadline=None)
@given(NAMES, st.integers(4, 2**32 - 1), st.integers(1, 2**32 - 1), CHECKSUMS)
def test_serve_artificial_events(name, position, server_id, checksums):
    """The fake ROTATE and the HEARTBEAT of a dump (serve/events.py)."""
    rotate = read_back(artificial.fake_rotate(name, position, server_id, checksums), checksums)
    assert (rotate.position, rotate.next_file, rotate.header.log_pos) == (position, name, 0)
    beat = read_back(artificial.heartbeat(name, position, server_id, checksums), checksums)
    assert isinstance(beat, HeartbeatEvent) and beat.log_file == name
    assert (beat.header.log_pos, beat.header.server_id) == (position, server_id)


def test_resent_format_description():
    """The copy of the FDE a dump sends when it starts inside a file: log_pos and created
    0, IN_USE dropped, its CRC32 right (the stream checks it)."""
    for checksums in (True, False):
        original = fde(checksums)[4:]
        sent = artificial.format_description_for_client(original, resent=True, checksum=checksums)
        stream = EventStream("resent")
        stream.feed(b"\xfebin" + sent)
        event = stream.next_event()
        assert (event.header.log_pos, event.fde.create_timestamp) == (0, 0)
        assert event.fde.post_header_len == stream.fde.post_header_len


# --- TABLE_MAP: rewrite's body and --full-metadata's TLVs -----------------------------

COLUMN_TYPES = [
    (T.TINY, b""), (T.LONG, b""), (T.LONGLONG, b""), (T.NEWDECIMAL, bytes([10, 2])),
    (T.VARCHAR, (40).to_bytes(2, "little")), (T.STRING, bytes([T.STRING, 20])),
    (T.STRING, bytes([T.ENUM, 1])), (T.STRING, bytes([T.SET, 1])), (T.BLOB, bytes([2])),
    (T.TIMESTAMP, b""), (T.DATETIME, b""), (T.TIME, b""), (T.DATE, b""), (T.YEAR, b""),
]


def _table_map_body(columns: list[tuple[int, bytes]]) -> bytes:
    from hostile.build import table_map

    types = bytes(t for t, _ in columns)
    return table_map(7, "db", "t", types, b"".join(m for _, m in columns))


@st.composite
def tables(draw):
    picked = draw(st.lists(st.sampled_from(COLUMN_TYPES), min_size=1, max_size=12))
    specs = []
    for index, (t, meta) in enumerate(picked):
        real = meta[0] if t == T.STRING else t
        labels = draw(st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=4)) \
            if real in (T.ENUM, T.SET) else []
        specs.append({"name": draw(NAMES) + str(index), "unsigned": draw(st.booleans()),
                      "collation": draw(st.sampled_from([8, 33, 45, 63, 224])), "labels": labels})
    key = draw(st.lists(st.integers(0, len(picked) - 1), unique=True, max_size=3))
    return picked, {"columns": specs, "primary_key": key}


@settings(max_examples=150, deadline=None)
@given(tables(), CHECKSUMS)
def test_full_metadata_tlvs(table, checksums):
    """What --full-metadata adds is what the decoder reads back: names, signedness,
    charsets, ENUM/SET labels, the primary key."""
    columns, meta = table
    plain = read_back(framed(E.TABLE_MAP_EVENT, _table_map_body(columns), checksums), checksums)
    tlvs = full_metadata_tlvs(plain.columns, meta, set())
    event = read_back(framed(E.TABLE_MAP_EVENT, _table_map_body(columns) + tlvs, checksums), checksums)
    assert isinstance(event, TableMapEvent)
    specs = meta["columns"]
    assert [c.name for c in event.columns] == [s["name"] for s in specs]
    assert event.primary_key == (meta["primary_key"] or None)
    for col, spec in zip(event.columns, specs, strict=True):
        if col.type in (T.TINY, T.LONG, T.LONGLONG, T.NEWDECIMAL, T.YEAR):
            assert col.unsigned == spec["unsigned"], col.label
        if col.type in (T.VARCHAR, T.STRING, T.BLOB, T.ENUM, T.SET):
            assert col.collation == spec["collation"], col.label
        if col.type == T.ENUM:
            assert col.enum_values == tuple(x.decode(col.encoding or "utf-8", "replace") for x in spec["labels"])
        if col.type == T.SET:
            assert col.set_values == tuple(x.decode(col.encoding or "utf-8", "replace") for x in spec["labels"])


def test_full_metadata_leaves_out_what_is_there():
    """A TLV the TABLE_MAP has already is not written twice."""
    columns = [(T.LONG, b""), (T.VARCHAR, (40).to_bytes(2, "little"))]
    meta = {"columns": [{"name": "id", "unsigned": True, "collation": 63, "labels": []},
                        {"name": "v", "unsigned": False, "collation": 45, "labels": []}],
            "primary_key": [0]}
    event = read_back(framed(E.TABLE_MAP_EVENT, _table_map_body(columns), True), True)
    tlvs = full_metadata_tlvs(event.columns, meta, {SIMPLE_PRIMARY_KEY})
    again = read_back(framed(E.TABLE_MAP_EVENT, _table_map_body(columns) + tlvs, True), True)
    assert again.primary_key is None and [c.name for c in again.columns] == ["id", "v"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(COLUMN_TYPES), min_size=1, max_size=12), st.data(), CHECKSUMS)
def test_rewritten_table_map(columns, data, checksums):
    """Rewrite's TABLE_MAP body: each legacy column read back as its *2 type with its
    precision, every other column as it was."""
    raw = framed(E.TABLE_MAP_EVENT, _table_map_body(columns), checksums)
    event = read_back(raw, checksums)
    precise = [replace(c, precision=data.draw(st.integers(0, 6)))
               if c.type in LEGACY_TEMPORAL_TYPES else c for c in event.columns]
    body = table_map_body(raw, read_fde(checksums), precise)
    again = read_back(framed(E.TABLE_MAP_EVENT, body, checksums), checksums)
    v2 = {T.TIMESTAMP: T.TIMESTAMP2, T.DATETIME: T.DATETIME2, T.TIME: T.TIME2}
    for before, after in zip(precise, again.columns, strict=True):
        assert after.type == v2.get(before.type, before.type), before.label
        if before.type in v2:
            assert after.precision == before.precision
        else:
            assert (after.meta, after.length) == (before.meta, before.length)


def read_fde(checksums: bool):
    stream = EventStream("fde")
    stream.feed(fde(checksums))
    return stream.next_event().fde
