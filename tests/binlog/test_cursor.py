from __future__ import annotations

import pytest

from binlog.cursor import Cursor, bit_set
from binlog.errors import MalformedEventError, TruncatedError


@pytest.mark.parametrize("raw, value", [
    ("00", 0), ("fa", 250), ("fb", None), ("fc fb 00", 251), ("fc ff ff", 0xFFFF),
    ("fd 00 00 01", 0x10000), ("fe 01 00 00 00 00 00 00 00", 1),
])
def test_lenenc(raw, value):
    cur = Cursor(bytes.fromhex(raw))
    assert cur.lenenc() == value
    assert cur.at_end()


def test_lenenc_ff_is_malformed():
    with pytest.raises(MalformedEventError):
        Cursor(b"\xff").lenenc()


@pytest.mark.parametrize("raw", ["fc 01", "fd 01 02", "fe 01 02 03 04 05 06 07", ""])
def test_lenenc_truncated(raw):
    with pytest.raises(TruncatedError):
        Cursor(bytes.fromhex(raw)).lenenc()


def test_reads_are_bounded_by_window_and_report_absolute_offset():
    cur = Cursor(b"\x01\x02\x03\x04\x05", 1, 3, base=100)
    assert cur.u16() == 0x0302
    with pytest.raises(TruncatedError) as info:
        cur.u8("x")
    assert info.value.field_offset == 103
    assert "need 1 bytes for x, 0 left" in str(info.value)


def test_integers_and_bitmaps():
    cur = Cursor(bytes.fromhex("01 02 03 04 05 06 07 08 a1"))
    assert cur.uint_be(2) == 0x0102
    assert cur.u24() == 0x050403
    assert cur.sint(1) == 6
    assert cur.bytes(2) == b"\x07\x08"
    assert bit_set(b"\xa1", 0) and not bit_set(b"\xa1", 1) and bit_set(b"\xa1", 7)


def test_sub_and_expect_end():
    cur = Cursor(b"abcdef")
    sub = cur.sub(3)
    assert sub.rest() == b"abc"
    assert cur.remaining == 3
    with pytest.raises(MalformedEventError):
        cur.expect_end("test")
    with pytest.raises(TruncatedError):
        cur.sub(4)


@pytest.mark.parametrize("n", [0, 250, 251, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000, 2**64 - 1])
def test_pack_lenenc_is_read_back(n):
    from binlog.cursor import pack_lenenc

    data = pack_lenenc(n) + b"tail"
    cur = Cursor(data)
    assert cur.lenenc() == n and cur.rest() == b"tail"
