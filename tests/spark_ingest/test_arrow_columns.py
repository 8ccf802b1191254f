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

pytestmark = pytest.mark.skipif(rows._speedups is None, reason="no compiled module")

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
