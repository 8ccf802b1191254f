"""changes/ partitions (``writer.PartitionedWriter``): rows of one (db, table, UTC day)
in runs are written as they are, rows of partitions interleaved row by row are sorted
first; either way each partition directory holds its rows, in their order."""
from __future__ import annotations

import datetime as dt

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.dataset as ds

from spark_ingest.records import ARROW_SCHEMA
from spark_ingest.writer import MAX_RUNS, write_records

DAY = int(dt.datetime(2024, 2, 29, 23, 59, 0, tzinfo=dt.timezone.utc).timestamp())
# (db, table, ts): two tables, a null db, and ts on both sides of a UTC midnight
KEYS = [("shop", "a", DAY), ("shop", "b", DAY), (None, "a", DAY), ("shop", "a", DAY + 120)]


def _batch(keys: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"file": "f.1", "pos": i, "ts": ts * 1_000_000, "db": db, "table": table, "op": "insert"}
         for i, (db, table, ts) in enumerate(keys)], schema=ARROW_SCHEMA)


@pytest.mark.parametrize("interleaved", [False, True])
def test_each_partition_holds_its_rows_in_order(tmp_path, interleaved):
    rows = 4 * MAX_RUNS
    keys = [KEYS[i % 4] for i in range(rows)] if interleaved else [KEYS[i * 4 // rows] for i in range(rows)]
    result = write_records(iter([_batch(keys)]), str(tmp_path), 0)
    assert result["rows"] == rows
    want: dict = {}
    for pos, (db, table, ts) in enumerate(keys):
        day = dt.datetime.fromtimestamp(ts, dt.timezone.utc).date().isoformat()
        part = f"db={db or '__HIVE_DEFAULT_PARTITION__'}/table={table}/date={day}"
        want.setdefault(part, []).append(pos)
    got = {}
    for part in want:
        table = ds.dataset(str(tmp_path / part), format="parquet").to_table()
        got[part] = table.column("pos").to_pylist()
    assert got == want
    assert want.keys() >= {"db=shop/table=a/date=2024-02-29", "db=shop/table=a/date=2024-03-01",
                           "db=__HIVE_DEFAULT_PARTITION__/table=a/date=2024-02-29"}
    counts = {(db, table, op): n for db, table, op, n in result["counts"]}
    assert counts == {("shop", "a", "insert"): rows // 2, ("shop", "b", "insert"): rows // 4,
                      (None, "a", "insert"): rows // 4}


@pytest.mark.parametrize("interleaved", [False, True])
def test_rows_are_counted_per_db_table_and_op_across_partitions(tmp_path, interleaved):
    # ops mixed within each run of one partition; a table over two UTC days counted once
    rows = 4 * MAX_RUNS
    keys = [KEYS[i % 4] for i in range(rows)] if interleaved else [KEYS[i * 4 // rows] for i in range(rows)]
    ops = ["insert", "update", "delete", "update", None]
    batch = pa.RecordBatch.from_pylist(
        [{"file": "f.1", "pos": i, "ts": ts * 1_000_000, "db": db, "table": table, "op": ops[i % 5]}
         for i, (db, table, ts) in enumerate(keys)], schema=ARROW_SCHEMA)
    want: dict = {}
    for i, (db, table, _) in enumerate(keys):
        want[(db, table, ops[i % 5])] = want.get((db, table, ops[i % 5]), 0) + 1
    result = write_records(iter([batch, batch.slice(3, 7)]), str(tmp_path), 0)
    for i, (db, table, _) in enumerate(keys[3:10], start=3):
        want[(db, table, ops[i % 5])] += 1
    assert {(db, table, op): n for db, table, op, n in result["counts"]} == want
    assert result["rows"] == rows + 7
