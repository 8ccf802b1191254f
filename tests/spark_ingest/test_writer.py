"""The tasks' own Parquet writer (spark_ingest.writer) against Spark's partitioned writer."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import datetime as dt
from collections import Counter
from pathlib import Path

import pyarrow as pa

from spark_ingest import writer
from spark_ingest.partitions import DEFAULT_PARTITION, escape_path_name
from spark_ingest.records import ARROW_SCHEMA, BatchBuilder
from spark_ingest.writer import write_records

pytestmark = pytest.mark.spark

# names MariaDB allows in quoted identifiers, with every kind of character Spark escapes
NAMES = ["plain", "a/b", "x=y", "per%cent", "q?u:o\"te's", "hash#star*", "br[ack]{et}^", "café 東京",
         "tab\there", "back\\slash"]


def _partition_dirs(root: Path, column: str) -> set[str]:
    return {p.name for p in root.rglob(f"{column}=*") if p.is_dir()}


def test_partition_directories_are_named_as_spark_names_them(spark, tmp_path):
    values = NAMES + [""]
    df = spark.createDataFrame([(v, 1) for v in values] + [(None, 2)], "t STRING, n INT")
    df.write.partitionBy("t").parquet(str(tmp_path / "spark"))
    theirs = _partition_dirs(tmp_path / "spark", "t")
    ours = {f"t={escape_path_name(v) if v else DEFAULT_PARTITION}" for v in values + [None]}
    assert ours == theirs


def _batch(rows: list[tuple]) -> pa.RecordBatch:
    """Records (db, table, op, ts seconds) as the data source would make them, the CDC
    fields (row, pk, commit...) null, as for statements."""
    records = [{"file": "f.000001", "pos": 100 + i, "ts": ts * 1_000_000, "server_id": 1, "db": db,
                "table": table, "op": op, "after": '{"id":%d}' % i}
               for i, (db, table, op, ts) in enumerate(rows)]
    return pa.RecordBatch.from_pylist(records, schema=ARROW_SCHEMA)


def test_written_records_read_back_in_spark_with_their_names_and_days(spark, tmp_path):
    day1 = int(dt.datetime(2024, 2, 29, 23, 59, 59, tzinfo=dt.timezone.utc).timestamp())
    rows = [("shop", name, "insert", day1 + i) for i, name in enumerate(NAMES)]
    rows += [("we/ird db", "t", "delete", day1), ("shop", "plain", "update", day1 + 5)]
    result = write_records(iter([_batch(rows)]), str(tmp_path / "run=1"), 7)
    assert result["rows"] == len(rows) and result["errors"] == []
    assert ["shop", "plain", "update", 1] in result["counts"]
    assert ["we/ird db", "t", "delete", 1] in result["counts"]
    assert all(p.name.startswith("part-00007-") for p in tmp_path.rglob("*.parquet"))

    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        got = spark.read.option("basePath", str(tmp_path)).parquet(str(tmp_path / "run=1")).collect()
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")
    assert sorted((r.db, r.table, r.op, r.pos) for r in got) == sorted(
        (db, table, op, 100 + i) for i, (db, table, op, _) in enumerate(rows))
    days = {r.table: r.date for r in got if r.db == "shop"}
    assert days["plain"] == "2024-02-29" and days["a/b"] == "2024-03-01"     # UTC days
    assert {r.run for r in got} == {"1"}


def test_error_records_go_back_to_the_driver_not_to_parquet(tmp_path):
    builder = BatchBuilder()
    builder.add_error({"file": "f.000001", "pos": 4, "error": "ChecksumMismatchError",
                       "message": "bad CRC", "event_type": "WRITE_ROWS_EVENT"}, resumed_at=900)
    result = write_records(iter([builder.batch()]), str(tmp_path / "run=1"), 0)
    assert result["rows"] == 0 and result["counts"] == []
    [err] = result["errors"]
    assert (err["file"], err["pos"], err["error"], err["resumed_at"]) == ("f.000001", 4, "ChecksumMismatchError", "900")
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_retried_split_replaces_its_files(spark, tmp_path):
    rows = [("shop", "orders", "insert", 1_700_000_000 + i) for i in range(10)]
    target = str(tmp_path / "run=1")
    for _ in range(2):                                   # a failed attempt, then the retry
        write_records(iter([_batch(rows)]), target, 3)
    write_records(iter([_batch(rows[:4])]), target, 4)   # another split beside it
    assert spark.read.parquet(target).count() == 14


def test_many_partitions_with_few_open_files_and_small_buffers(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "MAX_OPEN_FILES", 2)
    monkeypatch.setattr(writer, "MIN_ROWS_PER_GROUP", 3)
    monkeypatch.setattr(writer, "MAX_BUFFERED_BYTES", 2000)
    batches = [_batch([("db", f"t{(b + i) % 5}", "insert", 1_700_000_000 + i) for i in range(7)])
               for b in range(6)]
    result = write_records(iter(batches), str(tmp_path / "run=1"), 0)
    files = list(tmp_path.rglob("*.parquet"))
    assert result["rows"] == 42 and result["files"] == len(files) > 5          # files were closed and reopened
    assert not list(tmp_path.rglob(".*"))                                   # no temporary file left
    got = spark.read.parquet(str(tmp_path / "run=1")).groupBy("table").count().collect()
    assert {r.table: r["count"] for r in got} == dict(Counter(f"t{(b + i) % 5}" for b in range(6) for i in range(7)))
