"""The one event framer (``header.frame_event``, ``set_checksum``, ``event_crc``) against
the server's bytes: every event of the sample binlogs framed again from its parsed header
and its body is the server's event byte for byte, and the CRC rule of an open binlog's
FORMAT_DESCRIPTION (LOG_EVENT_BINLOG_IN_USE_F set, its CRC computed without it) is the
one the stream checks."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from support.paths import REPO

from binlog.constants import HEADER_LEN, LOG_EVENT_BINLOG_IN_USE_F, EventType as E
from binlog.errors import ChecksumMismatchError
from binlog.header import FLAGS_AT, event_crc, frame_event, parse_header, set_checksum
from binlog.stream import EventStream, verify_crc

SAMPLES = REPO / "samples" / "mariadb-10.11"
BINLOGS = sorted(SAMPLES.glob("*.binlog")) + sorted((SAMPLES / "events_misc").glob("*.0*"))


def events(path: Path):
    """(event bytes, has a CRC32 footer) of every event of a sample, in order."""
    data, pos, checksum = path.read_bytes(), 4, False
    while pos + HEADER_LEN <= len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        event = data[pos:pos + size]
        if event[4] == E.FORMAT_DESCRIPTION_EVENT:
            checksum = event[-5] == 1
        yield event, checksum
        pos += size


@pytest.mark.parametrize("path", BINLOGS, ids=lambda p: p.name)
def test_server_events_framed_again(path):
    count = 0
    for event, checksum in events(path):
        h = parse_header(event, 0, 0)
        body = event[HEADER_LEN:len(event) - (4 if checksum else 0)]
        again = frame_event(h.type_code, body, checksum=checksum, timestamp=h.timestamp,
                            server_id=h.server_id, log_pos=h.log_pos, flags=h.flags)
        assert again == event, (path.name, h.offset, h.type_name)
        count += 1
    assert count > 3


def _fde() -> bytes:
    return next(events(SAMPLES / "types_full.binlog"))[0]


def test_open_binlog_fde():
    """A server sets IN_USE in the FDE of the binlog it writes and computes the CRC
    without it; closing the file clears the flag and leaves the CRC as it is."""
    closed = bytearray(_fde())
    assert not closed[FLAGS_AT] & LOG_EVENT_BINLOG_IN_USE_F
    open_ = bytearray(closed)
    open_[FLAGS_AT] |= LOG_EVENT_BINLOG_IN_USE_F
    assert event_crc(open_) == event_crc(closed) == int.from_bytes(closed[-4:], "little")
    verify_crc(bytes(open_), parse_header(open_, 0, 4))          # accepted as it is
    h = parse_header(open_, 0, 4)
    framed = frame_event(h.type_code, open_[HEADER_LEN:-4], checksum=True, timestamp=h.timestamp,
                         server_id=h.server_id, log_pos=h.log_pos, flags=h.flags)
    assert framed == bytes(open_)
    stream = EventStream("open")
    stream.feed(b"\xfebin" + framed)
    assert stream.next_event().header.flags & LOG_EVENT_BINLOG_IN_USE_F


def test_in_use_is_dropped_only_for_the_fde():
    """Any other event's CRC covers its flags as they are."""
    one = frame_event(E.QUERY_EVENT, b"x" * 20, checksum=True, flags=LOG_EVENT_BINLOG_IN_USE_F)
    other = frame_event(E.QUERY_EVENT, b"x" * 20, checksum=True, flags=0)
    assert one[-4:] != other[-4:]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([int(t) for t in E if t]), st.binary(max_size=200), st.integers(0, 2**32 - 1),
       st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF), st.booleans())
def test_frame_then_parse(type_code, body, timestamp, server_id, log_pos, flags, checksum):
    data = frame_event(type_code, body, checksum=checksum, timestamp=timestamp,
                       server_id=server_id, log_pos=log_pos, flags=flags)
    h = parse_header(data, 0, 0)
    assert (h.type_code, h.timestamp, h.server_id, h.log_pos, h.flags) == (
        type_code, timestamp, server_id, log_pos, flags)
    assert h.event_size == len(data) == HEADER_LEN + len(body) + (4 if checksum else 0)
    assert data[HEADER_LEN:HEADER_LEN + len(body)] == body
    if checksum:
        verify_crc(data, h)
        edited = bytearray(data)
        edited[HEADER_LEN - 1] ^= 0x40          # a flag bit (not IN_USE) changed in place
        with pytest.raises(ChecksumMismatchError):
            verify_crc(bytes(edited), parse_header(edited, 0, 0))
        verify_crc(bytes(set_checksum(edited)), parse_header(edited, 0, 0))
