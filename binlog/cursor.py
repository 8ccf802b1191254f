"""Bounds-checked reader over a bytes object.

Every read checks ``pos + n <= end`` first and raises ``TruncatedError`` naming the
absolute offset (``base + pos``) of the field, so an error points at the byte in the
file.  Integers are little-endian unless the name ends in ``be`` (the server's
``mi_*korr`` macros).  Packed integers follow ``sql-common/pack.c`` net_field_length.
"""
from __future__ import annotations

import builtins

from .errors import MalformedEventError, TruncatedError

_from_bytes = int.from_bytes


class Cursor:
    __slots__ = ("data", "pos", "end", "base")

    def __init__(self, data: bytes | bytearray, pos: int = 0, end: int | None = None, base: int = 0):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end
        self.base = base  # absolute offset of data[0] in the source, for messages
        if not 0 <= self.pos <= self.end <= len(data):
            raise TruncatedError(f"bad window {pos}..{end} over {len(data)} bytes",
                                 field_offset=base + pos)

    # --- bookkeeping -------------------------------------------------------
    @property
    def remaining(self) -> int:
        return self.end - self.pos

    @property
    def offset(self) -> int:
        """Absolute offset of the next byte to read."""
        return self.base + self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def need(self, n: int, what: str = "") -> int:
        """Check that n bytes are left; return the current position."""
        pos = self.pos
        if n < 0 or pos + n > self.end:
            label = f" for {what}" if what else ""
            raise TruncatedError(f"need {n} bytes{label}, {self.end - pos} left",
                                 field_offset=self.base + pos)
        return pos

    def skip(self, n: int, what: str = "") -> None:
        self.pos = self.need(n, what) + n

    def expect_end(self, what: str) -> None:
        if self.pos != self.end:
            raise MalformedEventError(f"{self.end - self.pos} unexpected bytes left after {what}",
                                      field_offset=self.base + self.pos)

    # --- raw bytes ---------------------------------------------------------
    def bytes(self, n: int, what: str = "") -> bytes:
        pos = self.need(n, what)
        self.pos = pos + n
        return bytes(self.data[pos:pos + n])

    def rest(self) -> builtins.bytes:
        pos, self.pos = self.pos, self.end
        return bytes(self.data[pos:self.end])

    def sub(self, n: int, what: str = "") -> "Cursor":
        """A cursor over the next n bytes; this one moves past them."""
        pos = self.need(n, what)
        self.pos = pos + n
        return Cursor(self.data, pos, pos + n, self.base)

    def cstring(self, what: str = "") -> builtins.bytes:
        """Bytes up to a NUL (consumed, not returned)."""
        nul = self.data.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise TruncatedError(f"no NUL terminator{' for ' + what if what else ''}",
                                 field_offset=self.base + self.pos)
        value = bytes(self.data[self.pos:nul])
        self.pos = nul + 1
        return value

    # --- integers ----------------------------------------------------------
    def uint(self, n: int, what: str = "") -> int:
        pos = self.need(n, what)
        self.pos = pos + n
        return _from_bytes(self.data[pos:pos + n], "little")

    def sint(self, n: int, what: str = "") -> int:
        pos = self.need(n, what)
        self.pos = pos + n
        return _from_bytes(self.data[pos:pos + n], "little", signed=True)

    def uint_be(self, n: int, what: str = "") -> int:
        pos = self.need(n, what)
        self.pos = pos + n
        return _from_bytes(self.data[pos:pos + n], "big")

    def u8(self, what: str = "") -> int:
        pos = self.need(1, what)
        self.pos = pos + 1
        return self.data[pos]

    def u16(self, what: str = "") -> int:
        return self.uint(2, what)

    def u24(self, what: str = "") -> int:
        return self.uint(3, what)

    def u32(self, what: str = "") -> int:
        return self.uint(4, what)

    def u48(self, what: str = "") -> int:
        return self.uint(6, what)

    def u64(self, what: str = "") -> int:
        return self.uint(8, what)

    def lenenc(self, what: str = "") -> int | None:
        """Packed integer; None for the NULL marker 0xFB."""
        first = self.u8(what)
        if first < 0xFB:
            return first
        if first == 0xFB:
            return None
        if first == 0xFC:
            return self.uint(2, what)
        if first == 0xFD:
            return self.uint(3, what)
        if first == 0xFE:
            return self.uint(8, what)
        raise MalformedEventError(f"invalid packed integer prefix 0xFF{' in ' + what if what else ''}",
                                  field_offset=self.base + self.pos - 1)

    def count(self, what: str = "") -> int:
        """A packed integer that must be present (not NULL)."""
        value = self.lenenc(what)
        if value is None:
            raise MalformedEventError(f"NULL packed integer{' for ' + what if what else ''}",
                                      field_offset=self.base + self.pos - 1)
        return value

    def lenenc_bytes(self, what: str = "") -> builtins.bytes:
        return self.bytes(self.count(what), what)

    def bitmap(self, nbits: int, what: str = "") -> builtins.bytes:
        """A bitmap of nbits bits, LSB first, as raw bytes (see bit_set)."""
        return self.bytes((nbits + 7) // 8, what)


def pack_lenenc(n: int) -> bytes:
    """``n`` as a length-encoded integer, the mirror of ``Cursor.lenenc`` (sql/pack.cc
    net_store_length)."""
    if n < 0xFB:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def bit_set(bitmap: bytes, i: int) -> bool:
    """Bit i of an LSB-first bitmap (sql/log_event.cc, my_bitmap.h)."""
    return bool((bitmap[i >> 3] >> (i & 7)) & 1)


def bits_list(bitmap: bytes, nbits: int) -> list[bool]:
    return [bool((bitmap[i >> 3] >> (i & 7)) & 1) for i in range(nbits)]
