"""spark_ingest.arrow_typed.TypedWriter's bound on rows held as Python values (the events
the compiled walk does not take, and rendered images): a table's rows are written as a
row group once they reach GROUP_BYTES by their estimated size, not only at ROWS_PER_GROUP
rows, so they are typed in memory bounded by that, whatever their number."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from support.schemaless_reference import Change

from spark_ingest import arrow_typed

COLUMNS = [("@1", "string"), ("@2", "string"), ("@3", "string")]


@pytest.mark.parametrize("rows", [100, 20_000])
def test_rows_held_as_python_values_stay_under_the_group_bytes(tmp_path, rows):
    writer = arrow_typed.TypedWriter(str(tmp_path), 1, 0, lambda *_: COLUMNS)
    limit = arrow_typed.GROUP_BYTES // arrow_typed._PYTHON_ROW_BYTES
    held = 0
    for i in range(rows):
        writer.add(Change("mariadb-bin.000001", 4 + i, 1_700_000_000, 1, None, "insert", "d", "t", None,
                          {"@1": str(i), "@2": "x" * 40, "@3": None}))
        held = max(held, sum(len(r) for r in writer.rows.values()))
    writer.close()
    assert held <= limit < arrow_typed.ROWS_PER_GROUP
    files = list(tmp_path.rglob("*.parquet"))
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == rows
    assert [r["@1"] for f in sorted(files) for r in pq.read_table(f).to_pylist()] == [str(i) for i in range(rows)]


def test_rows_typed_from_images_stay_under_the_group_bytes(tmp_path):
    """A table no schema describes (``shredded``): its string columns are written as a row
    group once they pass GROUP_BYTES, long before ROWS_PER_GROUP rows of wide values."""
    import pyarrow as pa

    from spark_ingest.shredded import ShreddedTables

    writer = arrow_typed.TypedWriter(str(tmp_path), 1, 0, lambda *_: None)
    tables = ShreddedTables(writer)
    rows, wide = 500, "x" * 4000
    part = pa.RecordBatch.from_arrays(
        [pa.array(["f"] * rows), pa.array(range(rows), pa.int64()),
         pa.array([1_700_000_000_000_000] * rows, pa.timestamp("us", tz="UTC")), pa.array([1] * rows, pa.int64()),
         pa.array([None] * rows, pa.string()), pa.array(["insert"] * rows), pa.array([None] * rows, pa.string()),
         pa.array(['{"@1":%d,"@2":"%s"}' % (i, wide) for i in range(rows)])],
        names=["file", "pos", "ts", "server_id", "gtid", "op", "before", "after"])
    held = 0
    for _ in range(40):                  # 20,000 rows of 4 KB: 80 MB
        tables.add_part("d", "t", "2023-11-14", part)
        held = max(held, sum(r.nbytes() for r in writer.rows.values()))
    writer.close()
    assert held < arrow_typed.GROUP_BYTES + 4 * rows * len(wide)
    files = list(tmp_path.rglob("*.parquet"))
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == 40 * rows
    assert max(pq.ParquetFile(f).metadata.num_row_groups for f in files) > 3
