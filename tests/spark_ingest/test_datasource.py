"""spark.read.format("binlog"): the rows of `binlog dump --format json`, split or not,
and the typed per-table output."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import json
from decimal import Decimal

from spark_helpers import SAMPLES, SCHEMA_DDL, dump_records, record_key, row_key

from binlog.sources.file import discover

pytestmark = pytest.mark.spark


def _read(spark, paths, **options):
    reader = spark.read.format("binlog").option("paths", json.dumps([str(p) for p in paths]))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_dataframe_rows_equal_dump_records(spark):
    """The whole sample directory in one read (each sample its own sequence), against
    `binlog dump` of each sample."""
    want = []
    for _, files in discover([str(SAMPLES)]):
        want += [record_key(r) for r in dump_records(files, SCHEMA_DDL)]
    df = _read(spark, [SAMPLES], **{"schema-ddl": ",".join(SCHEMA_DDL)})
    assert [f.name for f in df.schema.fields] == ["file", "pos", "ts", "server_id", "gtid", "db",
                                                  "table", "op", "before", "after", "row", "pk",
                                                  "commit", "xid", "end_pos", "types"]
    got = [row_key(r) for r in df.collect()]
    assert len(got) == len(want) > 500
    assert got == want


def test_split_read_equals_unsplit_read(spark):
    files = [SAMPLES / "types_full.binlog", SAMPLES / "temporal_cells.binlog"]
    unsplit = _read(spark, files, **{"split-size": "0"})
    split = _read(spark, files, **{"split-size": "6k"})
    assert unsplit.rdd.getNumPartitions() == 2
    assert split.rdd.getNumPartitions() >= 8
    want = [record_key(r) for r in dump_records(files)]
    assert [row_key(r) for r in unsplit.collect()] == want
    assert [row_key(r) for r in split.collect()] == want


def test_options_mirror_the_cli(spark):
    path = SAMPLES / "types_full.binlog"
    df = _read(spark, [path], table="tf.dec%", **{"exclude-table": "tf.nothing"})
    from binlog.filters import TableFilter

    # the records `binlog dump --table tf.dec% --exclude-table tf.nothing` prints: the rows
    # of tf.decimals and the statements the filter keeps (CREATE DATABASE tf...)
    kept = TableFilter(["tf.dec%"], ["tf.nothing"])
    want = [record_key(r) for r in dump_records([path], table_filter=kept)]
    assert {r[6] for r in want if r[7] in ("insert", "update", "delete")} == {"decimals"}
    assert [row_key(r) for r in df.collect()] == want
    df = _read(spark, [path], database="tf", **{"binary_encoding": "base64"})
    blobs = [r for r in df.collect() if r.table == "blobs" and r.op == "insert"]
    assert json.loads(blobs[0].after)["tb"] == "AP8="          # 00 ff in base64
    # the documented way to reach one value of an image from Spark SQL
    one = df.where("`table` = 'blobs' AND op = 'insert'").selectExpr("get_json_object(after, '$.tb') AS tb")
    assert one.first().tb == "AP8="
    try:
        _read(spark, [path], **{"on-error": "sometimes"}).collect()
    except Exception as exc:                      # planning fails with the option's name
        assert "on-error" in str(exc)
    else:
        raise AssertionError("a bad option value must fail")


def test_typed_tables_have_real_spark_types(spark):
    from spark_ingest import read_binlog

    read = read_binlog(spark, [SAMPLES / "types_full.binlog"])
    assert ("tf", "decimals") in read.tables()
    dec = read.table("tf", "decimals")
    types = dict(dec.dtypes)
    assert types["d10_2"] == "decimal(10,2)" and types["d65_30"] == "string"
    row = dec.where("_op = 'insert'").orderBy("_pos", "id").first()
    assert row.d10_2 == Decimal("1234567.89") and row.d18_9 == Decimal("123456789.123456789")
    ts = read.table("tf", "timestamps")
    assert dict(ts.dtypes)["ts6"] == "timestamp"
    last = ts.where("_op = 'insert'").orderBy("id").collect()[1]
    assert last.ts6.microsecond == 999999 and last.ts3.microsecond == 999000
    dt = read.table("tf", "datetimes")
    assert dict(dt.dtypes)["dt6"] == "timestamp_ntz"
    dates = read.table("tf", "dates")
    assert dict(dates.dtypes)["d"] == "date"
    blobs = read.table("tf", "blobs")
    assert dict(blobs.dtypes)["tb"] == "binary"
    first = blobs.where("_op = 'insert'").orderBy("id").first()
    assert bytes(first.tb) == b"\x00\xff"
    upd = read.table("tf", "ints").where("_op = 'update'").first()
    assert upd._before is not None and upd._before.id == upd.id
