"""Event decoders with no real sample in the corpora, checked against their specs."""
from __future__ import annotations

import uuid

import pytest

from binlog.constants import EventType
from binlog.cursor import Cursor
from binlog.errors import MalformedEventError, TruncatedError
from binlog.events.gtid import decode_tagged_gtid, read_varlen
from binlog.header import EventHeader, FormatDescription


class Ctx:
    fde = FormatDescription(server_version="9.1.0")


def varlen(value: int) -> bytes:
    """Encoder of the MySQL serialization library's unsigned varlen integers
    (libs/mysql/serialization/variable_length_integers.h): n bytes hold n-1 trailing
    one-bits in the first byte, a zero bit, then the value, little-endian."""
    for n in range(1, 9):
        if value < 1 << (7 * n):
            word = (value << n) | ((1 << (n - 1)) - 1)
            return word.to_bytes(n, "little")
    return b"\xff" + value.to_bytes(8, "little")


def signed(value: int) -> bytes:
    return varlen(value << 1 if value >= 0 else ((-value - 1) << 1) | 1)


@pytest.mark.parametrize("value", [0, 1, 127, 128, 16383, 16384, 2**32, 2**56 - 1, 2**56, 2**64 - 1])
def test_varlen_round_trip(value):
    cur = Cursor(varlen(value) + b"rest")
    assert read_varlen(cur) == value
    assert cur.rest() == b"rest"


def tagged_gtid(sid: uuid.UUID, tag: str, gno: int) -> bytes:
    fields = (varlen(0) + varlen(0)                                   # flags
              + varlen(1) + b"".join(varlen(b) for b in sid.bytes)   # sid
              + varlen(2) + signed(gno)                               # gno
              + varlen(3) + varlen(len(tag)) + tag.encode()           # tag
              + varlen(4) + signed(7) + varlen(5) + signed(8))        # ordering
    last_non_ignorable = varlen(5)
    size = 1 + len(last_non_ignorable) + len(fields)
    size += len(varlen(size + 1))
    return bytes([2]) + varlen(size) + last_non_ignorable + fields


def test_tagged_gtid_event():
    sid = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
    body = tagged_gtid(sid, "blue", 23)
    header = EventHeader(0, EventType.GTID_TAGGED_LOG_EVENT, 1, 19 + len(body), 0, 0, 4)
    event = decode_tagged_gtid(Cursor(body), Ctx(), header)
    assert event.gtid == f"{sid}:blue:23"
    assert (event.last_committed, event.sequence_number) == (7, 8)


def test_tagged_gtid_truncated_and_bad_size():
    sid = uuid.uuid4()
    body = tagged_gtid(sid, "t", 1)
    header = EventHeader(0, EventType.GTID_TAGGED_LOG_EVENT, 1, 0, 0, 0, 4)
    for cut in range(len(body)):
        with pytest.raises((TruncatedError, MalformedEventError)):
            decode_tagged_gtid(Cursor(body[:cut]), Ctx(), header)
