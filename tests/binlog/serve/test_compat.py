"""Clients below @mariadb_slave_capability 4 get the MariaDB events they do not know
replaced or left out as a MariaDB primary does (binlog/serve/compat.py,
sql/sql_repl.cc send_event_to_slave): checked on a real server's binlogs served to a
client that asks with capability 0 (no holes: every event there, at its own position)
and 2 (holes allowed: those events left out)."""
from __future__ import annotations

import struct
import time
import zlib

import pytest
from support.serve_process import PASSWORD, Serve, copy_binlogs, workload

from binlog.constants import LOG_EVENT_SUPPRESS_USE_F, EventType
from binlog.protocol import client_side as m, constants as pc
from binlog.serve import compat
from binlog.sources.wire import WireConnection

MARIADB_ONLY = {EventType.ANNOTATE_ROWS_EVENT, EventType.BINLOG_CHECKPOINT_EVENT, EventType.GTID_EVENT,
                EventType.GTID_LIST_EVENT}


def dump_events(port: int, name: str, capability: int | None) -> list[bytes]:
    conn = WireConnection({"host": "127.0.0.1", "port": port, "user": "repl", "password": PASSWORD},
                          on_error=lambda code, text, step: AssertionError(f"{code} {text}")).open()
    try:
        conn.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
        if capability is not None:
            conn.execute(f"SET @mariadb_slave_capability = {capability}")
        deadline = time.monotonic() + 30
        conn.send_command(pc.COM_BINLOG_DUMP, struct.pack("<IHI", 4, 1, 77) + name.encode(), deadline)
        conn.reader.limit = 1 << 30
        events = []
        while True:
            payload = conn.read_payload(deadline, "dump")
            if m.is_eof(payload):
                return events
            assert payload[:1] == b"\x00", payload[:40]
            events.append(payload[1:])
    finally:
        conn.close()


@pytest.mark.server
@pytest.mark.parametrize("capability", [None, 0, 2])
def test_old_clients_get_events_they_know_at_the_same_positions(mariadb_factory, tmp_path, capability):
    source = mariadb_factory({"server_id": 1, "binlog_annotate_row_events": "ON"})
    workload(source)
    copy_binlogs(source, tmp_path / "served")
    first = source.binlog_names()[0]
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        events = dump_events(serve.port, first, capability)
    finally:
        serve.stop()
    file_events = [e for e in events if e[4] not in (EventType.ROTATE_EVENT,) or
                   int.from_bytes(e[13:17], "little")]           # the fake ROTATE has log_pos 0
    types = [e[4] for e in file_events]
    for event in file_events:
        assert struct.unpack("<I", event[-4:])[0] == zlib.crc32(event[:-4])
    if capability in (None, 0):
        assert not MARIADB_ONLY.intersection(types)
        position = 4            # no holes: each event starts where the one before ended
        for event in file_events:
            if event[4] == EventType.FORMAT_DESCRIPTION_EVENT:
                position = 4    # a new file
            end = int.from_bytes(event[13:17], "little")
            assert end - len(event) == position, (event[4], end, len(event), position)
            position = end
        begins = [e for e in file_events if e[4] == EventType.QUERY_EVENT and e[-9:-4] == b"BEGIN"]
        assert begins, "GTID events became BEGIN queries"
    else:
        assert not {EventType.ANNOTATE_ROWS_EVENT, EventType.GTID_LIST_EVENT,
                    EventType.BINLOG_CHECKPOINT_EVENT}.intersection(types)
        assert EventType.QUERY_EVENT in types


def _event(type_code: int, body: bytes, checksum: bool = True) -> bytes:
    size = 19 + len(body) + (4 if checksum else 0)
    data = struct.pack("<IBIIIH", 1, type_code, 1, size, 1000, 0x4) + body
    return data + struct.pack("<I", zlib.crc32(data)) if checksum else data


@pytest.mark.parametrize("extra", [0, 2])
def test_begin_keeps_the_length_and_the_checksum(extra):
    gtid = _event(EventType.GTID_EVENT, struct.pack("<QIB", 7, 0, 0) + b"\0" * (6 + extra))
    out = compat.begin(gtid, True)
    assert len(out) == len(gtid) and out[4] == EventType.QUERY_EVENT and out[-9:-4] == b"BEGIN"
    assert struct.unpack("<H", out[17:19])[0] & LOG_EVENT_SUPPRESS_USE_F
    assert struct.unpack("<I", out[-4:])[0] == zlib.crc32(out[:-4])
    assert out[13:17] == gtid[13:17]        # the position stays


@pytest.mark.parametrize("body_len", [6, 10, 14, 15, 40, 120])
def test_dummy_events_of_every_length(body_len):
    event = _event(EventType.ANNOTATE_ROWS_EVENT, b"q" * body_len, checksum=False)
    out = compat.dummy(event, False)
    assert len(out) == len(event)
    if len(event) < compat.MIN_QUERY:
        assert out[4] == EventType.USER_VAR_EVENT and out[-1:] == b"\x01"
    else:
        assert out[4] == EventType.QUERY_EVENT and out[19 + 13:19 + 14] == b"\0"
        assert out[19 + 14:].startswith(b"# Dummy event replacing event type 160"[:len(out) - 33])


def test_too_short_events_and_odd_gtids_are_refused():
    with pytest.raises(compat.CompatError):
        compat.dummy(_event(EventType.ANNOTATE_ROWS_EVENT, b"abc", checksum=False), False)
    with pytest.raises(compat.CompatError):
        compat.begin(_event(EventType.GTID_EVENT, b"\0" * 30), True)


@pytest.mark.parametrize("checksum", [False, True])
@pytest.mark.parametrize("annotate", [False, True])
@pytest.mark.parametrize("capability", range(6))
def test_the_passing_table_is_what_for_client_gives_unchanged(capability, annotate, checksum):
    """compat.passing (what the dump's compiled framer sends without looking) marks
    exactly the type codes whose events for_client gives to such a client as they are."""
    table = compat.passing(capability, annotate=annotate)
    for code in range(256):
        data = bytearray(19 + 40 + (4 if checksum else 0))
        data[4] = code
        data[9:13] = len(data).to_bytes(4, "little")
        event = bytes(data)
        try:
            unchanged = compat.for_client(event, capability, annotate=annotate, checksum=checksum) is event
        except compat.CompatError:
            unchanged = False
        assert bool(table[code]) == unchanged, code
