"""``protocol.packets``: ``frame`` and ``PacketReader`` (h11-style: whole, byte by byte,
odd chunks, trailing data), payloads of every length around the 16 MiB packet boundary
(a payload of exactly 0xFFFFFF bytes ends with an empty packet: sql-common/net_serv.cc
my_net_write), the sequence numbers, and the limits checked before anything is held."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from protocol_helpers import every_way, feed_in, framed

from binlog.errors import ServerProtocolError
from binlog.protocol.packets import MAX_PACKET, PacketReader, frame


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=6), st.lists(st.integers(0, 2000), max_size=12))
def test_any_payloads_any_cuts(payloads, cuts):
    every_way(payloads, cuts)


@pytest.mark.parametrize("size", [0, 1, 250, 251, MAX_PACKET - 1, MAX_PACKET, MAX_PACKET + 1,
                                  2 * MAX_PACKET, 2 * MAX_PACKET + 7])
def test_packet_boundaries(size):
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    data, seq = frame(payload, 3)
    packets = size // MAX_PACKET + 1
    assert len(data) == size + 4 * packets and seq == (3 + packets) & 0xFF
    if size >= MAX_PACKET:
        assert data[:3] == b"\xff\xff\xff"
    reader = PacketReader(1 << 30)
    reader.reset(3)
    for cut in range(0, len(data), 1 << 22):          # 4 MiB pieces
        reader.feed(data[cut:cut + (1 << 22)])
    assert reader.next() == payload and reader.seq == seq and reader.buffered == 0


def test_sequence_numbers():
    data = framed([b"a", b"b"])
    reader = PacketReader(100)
    reader.feed(data[5:])                       # the second packet first: sequence 1, not 0
    with pytest.raises(ServerProtocolError, match="out of order"):
        reader.next()
    reader = PacketReader(100)
    reader.reset(255)
    reader.feed(frame(b"x", 255)[0] + frame(b"y", 0)[0])
    assert (reader.next(), reader.next()) == (b"x", b"y")     # 255 wraps to 0


def test_limit_checked_at_the_header():
    """A payload over the limit is refused when its 4-byte header is in, before any of it."""
    reader = PacketReader(1000)
    reader.feed((1001).to_bytes(3, "little") + b"\0")
    with pytest.raises(ServerProtocolError, match="more than 1000"):
        reader.next()
    train = PacketReader(3 * MAX_PACKET)        # a multi-packet payload: counted as it comes
    train.bound, train.bound_bytes = (lambda first: 10), 4
    train.feed(b"\xff\xff\xff\x00" + b"abcd")
    with pytest.raises(ServerProtocolError, match="more than 10"):
        train.next()


def test_wanted():
    reader = PacketReader(100)
    assert reader.wanted() == 4
    data = frame(b"hello", 0)[0]
    reader.feed(data[:2])
    assert reader.wanted() == 2
    reader.feed(data[2:6])
    assert reader.wanted() == 3 and reader.next() is None
    reader.feed(data[6:])
    assert reader.wanted() == 0 and reader.next() == b"hello"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=4))
def test_byte_by_byte_gives_nothing_early(payloads):
    """No payload comes out before its last byte is in."""
    data = framed(payloads)
    ends = []
    at = 0
    for payload in payloads:
        at += 4 + len(payload)
        ends.append(at)
    got, _ = feed_in(data, list(range(len(data))))
    assert got == payloads
    reader = PacketReader(1000)
    for i in range(len(data)):
        reader.feed(data[i:i + 1])
        payload = reader.next()
        assert (payload is not None) == (i + 1 in ends)
