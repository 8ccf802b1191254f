"""verify-rows' target side: ``_speedups.checksum_text`` (the checksum of a row of
text-protocol values) gives what the Python path gives - ``target_converter`` then
``RowChecksum`` - or falls back; values of the forms a server writes never fall back."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from binlog.checksum import RowChecksum
from binlog.commands.verify import pseudo_columns, target_converter, text_checksum

pytestmark = pytest.mark.usefixtures("compiled")

# (information_schema DATA_TYPE, COLUMN_TYPE, charset) -> texts a server writes (must
# compile) and other forms (may fall back, must not differ)
CASES = {
    ("bigint", "bigint(20)", None): (
        [b"0", b"-1", b"-9223372036854775808", b"9223372036854775807", b"42"],
        [b"", b"-", b"1.5", b" 1", b"+1", b"1_0", b"-9223372036854775809"]),
    ("bigint", "bigint(20) unsigned", None): (
        [b"18446744073709551615", b"0"], [b"18446744073709551616", b"99999999999999999999999"]),
    ("enum", "enum('a','b')", "utf8mb4"): ([b"1", b"2", b"0"], [b"a"]),
    ("double", "double", None): (
        [b"0", b"-0", b"1.5", b"-2.25e-300", b"1.7976931348623157e308", b"5e-324", b"0.1",
         b"123456789012345680000", b"1e22", b"3.4028234663852886e38"],
        [b"1e400", b"nan", b"inf", b"-inf", b"0x10", b"1_0", b"", b"e", b"."]),
    ("decimal", "decimal(20,6)", None): (
        [b"0.000000", b"-0.000000", b"12.340000", b"-12345678901234.000001", b"0.000001"],
        [b"007", b"1.", b".5", b"-", b"1e5", b"", b"-0", b"00.1", b"1.2.3", b"--1"]),
    ("bit", "bit(64)", None): ([b"", b"\x01", b"\xff" * 8, b"\x00\x80"], [b"\xff" * 9]),
    ("datetime", "datetime(6)", None): ([b"2024-01-01 00:00:00.500000", b"0000-00-00 00:00:00"],
                                        ["é".encode()]),
    ("json", "longtext", "utf8mb4"): ([b'{"a": [1, 2.5]}', "\u2603".encode()], [b"\xff"]),
    ("varchar", "varchar(10)", "latin1"): ([b"abc", b"\xe9\x00", b""], []),
    ("geometry", "geometry", None): ([b"\x00\x01"], []),
}


def columns(data_type, column_type, charset):
    live = SimpleNamespace(columns=["id", "v"], data_types=["int", data_type],
                           charsets=[None, charset], column_types=["int(11)", column_type],
                           datetime_precision=[None, 6 if data_type == "datetime" else None])
    return pseudo_columns(live)


def python_checksum(pcols, raw):
    try:
        values = {c.key: None if v is None else target_converter(c)(v)
                  for c, v in zip(pcols, raw, strict=True)}
        return RowChecksum(pcols)(values)
    except (ValueError, ArithmeticError) as exc:    # ChecksumError is a ValueError
        return type(exc).__name__


def compiled_checksum(pcols, raw):
    crc = text_checksum(pcols)(raw)
    return "fallback" if crc is None else crc


@pytest.mark.parametrize("spec", CASES, ids=lambda s: s[1])
def test_server_forms_compile_and_agree(spec):
    pcols = columns(*spec)
    compiled, other = CASES[spec]
    for text in compiled:
        raw = (b"7", text)
        assert compiled_checksum(pcols, raw) == python_checksum(pcols, raw), text
    for text in other:
        raw = (b"7", text)
        got = compiled_checksum(pcols, raw)
        assert got in ("fallback", python_checksum(pcols, raw)), text
    assert compiled_checksum(pcols, (b"7", None)) == python_checksum(pcols, (b"7", None))


@settings(max_examples=300, deadline=None)
@given(spec=st.sampled_from(sorted(CASES)), text=st.binary(max_size=24)
       | st.from_regex(rb"\A-?[0-9]{0,22}(\.[0-9]{0,8})?(e[-+]?[0-9]{1,3})?\Z"))
def test_any_text_agrees_or_falls_back(spec, text):
    pcols = columns(*spec)
    got = compiled_checksum(pcols, (b"1", text))
    assert got in ("fallback", python_checksum(pcols, (b"1", text)))
