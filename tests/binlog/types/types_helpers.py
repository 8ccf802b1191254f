"""Shared helpers for the column-decoder tests (tests/binlog/types)."""
from __future__ import annotations

import pytest

from binlog.errors import BinlogError, TruncatedError
from binlog.types import decoder_for, make_column


def col_for(binlog_type: int, meta: int = 0, **fields):
    col = make_column(0, binlog_type, meta)
    for name, value in fields.items():
        setattr(col, name, value)
    return col


def decode_hex(hexstr: str, col, *, trailing: bytes = b"\xAA\xBB"):
    """Decode a value placed after one junk byte and followed by junk; check that the
    decoder consumed exactly the value's bytes."""
    raw = bytes.fromhex(hexstr.replace(" ", ""))
    buf = b"\x99" + raw + trailing
    value, pos = decoder_for(col)(buf, 1, 1 + len(raw), col)
    assert pos == 1 + len(raw), f"consumed {pos - 1} of {len(raw)} bytes"
    # The same with bytes after the value inside the window: still stops at its end.
    value2, pos2 = decoder_for(col)(buf, 1, len(buf), col)
    assert pos2 == 1 + len(raw) and value2 == value
    return value


def assert_truncation(hexstr: str, col):
    """Every proper prefix raises TruncatedError and nothing else."""
    raw = bytes.fromhex(hexstr.replace(" ", ""))
    decode = decoder_for(col)
    for cut in range(len(raw)):
        buf = raw + b"\x00" * 4  # bytes exist past `end` but must not be read
        with pytest.raises(BinlogError) as info:
            decode(buf, 0, cut, col)
        assert isinstance(info.value, TruncatedError), (cut, info.value)
