"""MySQL protocol packets, sans-IO: bytes in, payloads out, every length checked before
anything is accumulated.

A packet is a 3-byte little-endian payload length, a sequence number and the payload; a
payload of 0xFFFFFF bytes or more is sent as several packets, each full one followed by
the next, the last shorter (possibly empty) (KB "0 - Packet", sql-common/net_serv.cc
my_net_read).  The sequence number counts the packets of one exchange from 0 and must
come in order.

``PacketReader`` holds at most one packet and the bytes fed after it: a payload's
declared length is checked against the reader's limit as soon as its 4-byte header is
in, and, for a multi-packet payload, against what its first bytes say it holds
(``bound``: an event's own length), so a 1 GiB packet train behind a 200-byte event is
refused after its first header, not after 1 GiB.
"""
from __future__ import annotations

from collections.abc import Callable

from ..errors import ServerProtocolError

MAX_PACKET = 0xFFFFFF           # a payload this long continues in the next packet
HEAD = 4


class PacketReader:
    """Feed bytes with ``feed``; ``next()`` gives the next whole payload, or None until
    enough bytes are in.

    ``limit``: the longest payload accepted.  ``bound(first)``: given the first
    ``bound_bytes`` of a payload, the longest it may be (None: no tighter bound); asked
    once per payload, as soon as those bytes are in."""

    def __init__(self, limit: int, *, step: str = "reading"):
        self.limit = limit
        self.step = step
        self.seq = 0
        self.bound: Callable[[bytes], int | None] | None = None
        self.bound_bytes = 0
        self._buf = bytearray()
        # a payload of several packets, as its packets come: grown in place (a large
        # block grows by remapping, not copying), so a 1 GiB event is held once, not as
        # its packets and their join
        self._whole = bytearray()
        self._total = 0                 # payload bytes of the packets taken so far
        self._allowed: int | None = None

    def reset(self, seq: int = 0) -> None:
        """A new exchange: the next packet has sequence number ``seq``."""
        self.seq = seq

    def feed(self, data: bytes) -> None:
        self._buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def wanted(self) -> int:
        """How many more bytes the payload under way needs at least (for the I/O layer
        to read no further than it must)."""
        if len(self._buf) < HEAD:
            return HEAD - len(self._buf)
        length = int.from_bytes(self._buf[:3], "little")
        return max(HEAD + length - len(self._buf), 0)

    def next(self) -> bytes | bytearray | None:
        """The next whole payload: bytes, or a bytearray for one of several packets."""
        while len(self._buf) >= HEAD:
            length = int.from_bytes(self._buf[:3], "little")
            seq = self._buf[3]
            if seq != self.seq:
                raise ServerProtocolError(f"packet out of order (sequence {seq}, expected "
                                          f"{self.seq})", step=self.step)
            self._check(self._total + length)
            if self._allowed is None and self.bound is not None:
                if len(self._buf) < HEAD + min(length, self.bound_bytes):
                    return None
                self._allowed = self.bound(bytes(self._buf[HEAD:HEAD + min(length, self.bound_bytes)]))
                self._check(self._total + length)
            if len(self._buf) < HEAD + length:
                return None
            single = not self._total and length < MAX_PACKET
            if single:
                payload: bytes | bytearray = bytes(self._buf[HEAD:HEAD + length])
            else:
                with memoryview(self._buf) as view:
                    self._whole += view[HEAD:HEAD + length]
            del self._buf[:HEAD + length]
            self._total += length
            self.seq = (seq + 1) & 0xFF
            if length < MAX_PACKET:
                if not single:
                    payload, self._whole = self._whole, bytearray()
                self._total, self._allowed = 0, None
                return payload
        return None

    def _check(self, total: int) -> None:
        allowed = self.limit if self._allowed is None else min(self.limit, self._allowed)
        # A payload of exactly ``allowed`` bytes that is a multiple of MAX_PACKET ends
        # with an empty packet: that one may come.
        if total > allowed:
            raise ServerProtocolError(f"a payload of more than {allowed} bytes (at least "
                                      f"{total} announced)", step=self.step)


def frame(payload: bytes, seq: int) -> tuple[bytes, int]:
    """``payload`` as packets from sequence number ``seq``; also the next number."""
    out = bytearray()
    pos = 0
    while True:
        chunk = payload[pos:pos + MAX_PACKET]
        out += len(chunk).to_bytes(3, "little") + bytes([seq & 0xFF]) + chunk
        seq = (seq + 1) & 0xFF
        pos += len(chunk)
        if len(chunk) < MAX_PACKET:
            return bytes(out), seq
