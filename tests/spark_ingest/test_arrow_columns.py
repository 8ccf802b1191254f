"""The typed tables' compiled columns (``spark_ingest.arrow_columns``) across events:
an event that falls back half-way leaves no trace in the columns of the events after it
(fuzz/differential.py checks each event alone against the Python way)."""
from __future__ import annotations

import sys

import pytest
from support.paths import REPO

pytest.importorskip("pyarrow")
sys.path.insert(0, str(REPO / "fuzz"))

import differential as diff  # noqa: E402

from binlog import rows  # noqa: E402
from binlog.reader import RowChange  # noqa: E402

pytestmark = pytest.mark.usefixtures("compiled")

INT, VARCHAR = 3, 15
COLUMNS = [(INT, b""), (VARCHAR, (20).to_bytes(2, "little"))]


def row(number: int | None, text: bytes) -> bytes:
    """One row image of (INT, VARCHAR(20)): the NULL bitmap, then the values."""
    if number is None:
        return b"\x01" + bytes([len(text)]) + text
    return b"\x00" + number.to_bytes(4, "little", signed=True) + bytes([len(text)]) + text


def event(*images: bytes):
    fde, crc = diff.fdes()[0]
    case = diff.RowsCase(fde, crc, diff.table_map_body(COLUMNS), diff.WRITE_V2,
                         diff.rows_body(diff.WRITE_V2, 2, b"\x03", b"\x03", b"".join(images)),
                         schema={1: {"encoding": "utf-8"}})
    table_map, rows_event = diff.case_events(case)
    return case, table_map, rows_event


def typed(events) -> tuple[list, list]:
    """(whether each event was taken, the table's rows) of one ArrowRows over the events."""
    from spark_ingest.arrow_columns import ArrowRows
    from spark_ingest.arrow_typed import META_COLUMNS, table_schema

    columns = [("@1", "int"), ("@2", "string")]
    out = ArrowRows(columns, table_schema(columns), None, len(META_COLUMNS))
    plan = rows.build_plan(events[0][1], legacy_precision_known_zero=False, schema=events[0][0].schema)
    taken = [out.add_event(RowChange("f", 4, 1, 1, None, "db", "t", "insert", None, None, plan), e)
             for _, _, e in events]
    table = out.table()
    table.validate(full=True)
    return taken, [(r["@1"], r["@2"]) for r in table.to_pylist()]


def test_an_event_that_falls_back_leaves_nothing_behind():
    first = event(row(1, b"a"), row(2, b"b"), row(3, b"c"))
    # its second row's text is not UTF-8: the compiled code stops after the first row
    broken = event(row(4, b"d"), row(5, b"\xff\xfe"))
    last = event(row(None, b"e"), row(6, b""), row(None, b"f"))
    taken, got = typed([first, broken, last])
    assert taken == [True, False, True]
    assert got == [(1, "a"), (2, "b"), (3, "c"), (None, "e"), (6, ""), (None, "f")]
    assert typed([first, last])[1] == got


def test_events_of_more_rows_than_a_reservation_with_nulls_and_a_fallback():
    """Rows events of 100 and 130 rows (the compiled columns reserve 64 rows at a time),
    NULLs among them, and an event that falls back at its 90th row: the validity bits
    and offsets of the rows after it are those of the rows alone."""
    def rows_of(first: int, count: int) -> list[tuple]:
        return [(None if i % 5 == 0 else i, b"t%d" % i) for i in range(first, first + count)]

    first, last = rows_of(0, 100), rows_of(1000, 130)
    broken = rows_of(500, 89) + [(589, b"\xc3")] + rows_of(590, 40)
    events = [event(*(row(n, t) for n, t in rows)) for rows in (first, broken, last)]
    taken, got = typed(events)
    assert taken == [True, False, True]
    assert got == [(n, t.decode()) for n, t in first + last]


NEWDECIMAL = 246
DIG2BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4]


def decimal_bytes(value: str, precision: int, scale: int, negative_zero: bool = False) -> bytes:
    """A DECIMAL's row bytes (strings/decimal.c decimal2bin): groups of 9 digits
    big-endian in 4 bytes, a partial group in DIG2BYTES; every byte inverted when
    negative, then the first byte's top bit flipped."""
    negative = value.startswith("-") or negative_zero
    whole, _, frac = value.lstrip("-").partition(".")
    ints, frac = whole.lstrip("0").rjust(precision - scale, "0"), frac.ljust(scale, "0")
    head, tail = len(ints) % 9, scale % 9
    groups = ([(ints[:head], DIG2BYTES[head])] if head else []) \
        + [(ints[i:i + 9], 4) for i in range(head, len(ints), 9)] \
        + [(frac[i:i + 9], 4) for i in range(0, scale - tail, 9)] \
        + ([(frac[scale - tail:], DIG2BYTES[tail])] if tail else [])
    raw = bytearray(b"".join(int(digits).to_bytes(size, "big") for digits, size in groups))
    if negative:
        raw = bytearray(b ^ 0xFF for b in raw)
    raw[0] ^= 0x80
    return bytes(raw)


@pytest.mark.parametrize("precision,scale", [(1, 0), (5, 5), (12, 2), (18, 9), (20, 0), (30, 10),
                                             (38, 0), (38, 30), (40, 2)])
def test_decimal_edge_values_both_ways(precision, scale):
    """DECIMAL images of the largest and smallest values of the precision, the smallest
    step either side of zero, zero and a negative zero (bytes no server writes but a
    damaged image can hold), through fuzz/differential's check: the compiled columns
    (decimal128 straight from the bytes, or the text past 38 digits) equal the Python
    way's, typed as decimal(p,s) and as string (as tinyint the event takes the Python
    way, which the check compares too)."""
    ints, frac = "9" * (precision - scale), "9" * scale
    big = (ints or "0") + ("." + frac if scale else "")
    tiny = "0." + "0" * (scale - 1) + "1" if scale else "1"
    zero = "0" + ("." + "0" * scale if scale else "")
    values = [(big, False), ("-" + big, False), (tiny, False), ("-" + tiny, False), (zero, False),
              (zero, True), ("-" + "1" * (precision - scale) + ("." + "5" * scale if scale else ""), False)]
    data = b"".join(b"\x00" + decimal_bytes(v, precision, scale, nz) for v, nz in values)
    fde, crc = diff.fdes()[0]
    case = diff.RowsCase(fde, crc, diff.table_map_body([(NEWDECIMAL, bytes([precision, scale]))]),
                         diff.WRITE_V2, diff.rows_body(diff.WRITE_V2, 1, b"\x01", b"\x01", data))
    before = diff.TYPED_CHECKED[0]
    assert diff.check_rows(case) == "compiled"
    assert diff.TYPED_CHECKED[0] - before == 2 * len(values)      # both typings compiled


def test_a_decimal_group_past_its_digits_falls_back():
    """A 9-digit group holding 10^9 (no server writes it): the compiled walk leaves the
    event to the Python way, which raises the typed error."""
    good = decimal_bytes("1.5", 12, 2)
    bad = bytearray(good)
    bad[1:5] = (10 ** 9).to_bytes(4, "big")        # the 9-digit group of the integer part
    fde, crc = diff.fdes()[0]
    for data in (b"\x00" + good + b"\x00" + bytes(bad),):
        case = diff.RowsCase(fde, crc, diff.table_map_body([(NEWDECIMAL, bytes([12, 2]))]),
                             diff.WRITE_V2, diff.rows_body(diff.WRITE_V2, 1, b"\x01", b"\x01", data))
        diff.check_rows(case)
        table_map, rows_event = diff.case_events(case)
        plan = rows.build_plan(table_map, legacy_precision_known_zero=False, schema={})
        from spark_ingest.arrow_columns import ArrowRows
        from spark_ingest.arrow_typed import META_COLUMNS, table_schema

        columns = [("@1", "decimal(12,2)")]
        out = ArrowRows(columns, table_schema(columns), None, len(META_COLUMNS))
        assert not out.add_event(RowChange("f", 4, 1, 1, None, "db", "t", "insert", None, None, plan), rows_event)
        assert len(out) == 0
