"""Reading framed payloads the ways a socket may deliver them (h11's tests/test_io.py
``tr``): whole, byte by byte, in chunks of any sizes, with the next packet's first bytes
behind them."""
from __future__ import annotations

from binlog.protocol.packets import PacketReader, frame


def feed_in(data: bytes, cuts: list[int], limit: int = 1 << 30) -> tuple[list[bytes], PacketReader]:
    """The payloads a reader gives when ``data`` arrives cut at ``cuts``, asking for the
    next payload after every piece."""
    reader = PacketReader(limit)
    out = []
    start = 0
    for end in [*sorted(set(cuts)), len(data)]:
        if not start <= end <= len(data):
            continue
        reader.feed(data[start:end])
        start = end
        while (payload := reader.next()) is not None:
            out.append(payload)
    return out, reader


def framed(payloads: list[bytes]) -> bytes:
    data, seq = b"", 0
    for payload in payloads:
        packets, seq = frame(payload, seq)
        data += packets
    return data


def every_way(payloads: list[bytes], cuts: list[int] = ()) -> list[bytes]:
    """The payloads read back whole, byte by byte (when short), at ``cuts``, and with a
    partial packet behind them (which the reader keeps): all must be ``payloads``."""
    data = framed(payloads)
    ways = {"whole": [], "cuts": list(cuts)}
    if len(data) <= 4096:
        ways["byte by byte"] = list(range(len(data)))
    for name, way in ways.items():
        got, reader = feed_in(data, way)
        assert got == payloads, name
        assert reader.buffered == 0, name
    trailing = frame(b"next", len(payloads) & 0xFF)[0][:6]
    got, reader = feed_in(data + trailing, list(cuts))
    assert got == payloads and reader.buffered == len(trailing), "trailing data"
    return payloads
