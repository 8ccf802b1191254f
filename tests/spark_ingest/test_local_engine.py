"""`binlog ingest --engine local`: the same output as the Spark engine, and its crash semantics.

The Spark engine is the reference: both engines ingest the same binlogs and Spark reads
both outputs back (changes/, tables/ with their Spark schemas, errors/).  The typed
values are also checked cast by cast against Spark's own ``try_cast`` / ``from_json``.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import json
import shutil
from pathlib import Path

import orjson
from spark_helpers import SAMPLES, SCHEMA_DDL, dump_records, record_key, row_key

from binlog.cli import main

pytestmark = pytest.mark.spark


def ingest(*args) -> int:
    return main(["ingest", "--no-progress", *map(str, args)])


def _rows(df) -> list[str]:
    return sorted(repr(r) for r in df.collect())


def _read(spark, path: Path):
    return spark.read.parquet(str(path))


@pytest.fixture(scope="module")
def both(spark, tmp_path_factory):
    """The samples ingested by each engine, with the schema dumps of the legacy tables."""
    base = tmp_path_factory.mktemp("engines")
    extra = [arg for path in SCHEMA_DDL for arg in ("--schema-ddl", path)]
    assert ingest(SAMPLES, "--to", base / "spark", "--engine", "spark", *extra) == 0
    assert ingest(SAMPLES, "--to", base / "local", *extra) == 0          # the default engine
    return base / "spark", base / "local"


def test_changes_and_errors_equal_the_spark_engines(spark, both):
    ref, local = both
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    assert (ref / "errors").exists() == (local / "errors").exists()
    for part in ("changes", "errors"):
        if not (ref / part).exists():
            continue
        a, b = _read(spark, ref / part), _read(spark, local / part)
        assert a.schema == b.schema, part
        assert _rows(a) == _rows(b), part
    summary = json.loads(sorted((local / "_checkpoint" / "runs").iterdir())[-1].read_text())
    assert summary["engine"] == "local"
    ref_state = json.loads((ref / "_checkpoint" / "state.json").read_text())
    local_state = json.loads((local / "_checkpoint" / "state.json").read_text())
    assert ref_state == local_state


def test_typed_tables_equal_the_spark_engines(spark, both):
    ref, local = both
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    names = sorted(p.name for p in (ref / "tables").iterdir())
    assert names == sorted(p.name for p in (local / "tables").iterdir())
    assert len(names) > 20
    for name in names:
        a, b = _read(spark, ref / "tables" / name), _read(spark, local / "tables" / name)
        assert a.schema == b.schema, name
        assert _rows(a) == _rows(b), name


def test_typed_tables_equal_spark_from_json(spark, both):
    """Both engines' tasks write tables/ from the rows they decode (the compiled walk's
    Arrow columns): each table equals Spark's own projection of its changes/
    (``typed.typed_table``: ``from_json`` and ``try_cast`` over the JSON images), the
    columns and types those of the table read back."""
    from binlog.output.paths import table_dir_name
    from spark_ingest.typed import typed_table

    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    for engine in both:
        changes = _read(spark, engine / "changes").drop("run")
        names = {table_dir_name(r.db, r.table): (r.db, r.table)
                 for r in changes.select("db", "table").distinct().collect() if r.db is not None}
        checked = 0
        for path in sorted((engine / "tables").iterdir()):
            got = _read(spark, path).drop("_run", "_date")
            columns = [(f.name, f.dataType.simpleString()) for f in got.schema.fields
                       if not f.name.startswith("_")]
            db, table = names[path.name]
            want = typed_table(changes, db, table, columns)
            assert got.schema == want.schema, path.name
            assert _rows(got) == _rows(want), path.name
            checked += got.count()
        assert checked == changes.where("op IN ('insert', 'update', 'delete')").count() > 500


def test_changes_equal_dump(spark, both):
    _, local = both
    rows = _read(spark, local / "changes").where("op != 'error'").collect()
    from binlog.sources.file import discover

    want = [record_key(r) for _, files in discover([SAMPLES]) for r in dump_records(files, SCHEMA_DDL)]
    got = [row_key(r) for r in rows]
    assert sorted(got, key=repr) == sorted(want, key=repr)


# Texts as they reach try_cast, including the ones a cast must refuse.
CAST_CASES = {
    "tinyint": ["0", "127", "128", "-128", " 7 ", "+3", "1.5", "x", ""],
    "smallint": ["32767", "32768", "-32769"],
    "int": ["2147483647", "2147483648", "-2147483648"],
    "bigint": ["9223372036854775807", "9223372036854775808", "-9223372036854775808"],
    "decimal(20,0)": ["18446744073709551615", "99999999999999999999", "100000000000000000000"],
    "decimal(5,2)": ["12.345", "12.344", "-12.345", "999.994", "999.995", "1e2", "0E-30", "abc",
                     "NaN", " 1.5 "],
    "decimal(38,10)": ["1234567890123456789012345678.5", "12345678901234567890123456789.5",
                       "-0.00000000005", "1e400", "99999999999999999999999999999"],
    "float": ["3.4028235E38", "1.17549435E-38", "0.1", "-0.0", "1e3"],
    "double": ["1.7976931348623157E308", "4.9E-324", "0.1", "x"],
    "date": ["2024-02-29", "2023-02-29", "0000-00-00", "0000-01-01", "2024-00-10", "9999-12-31",
             "1000-01-01"],
    "timestamp_ntz": ["2024-01-02 03:04:05.123456", "2024-01-02 03:04:05", "0000-00-00 00:00:00",
                      "2024-01-02 24:00:00", "1000-01-01 00:00:00.5", "2024-13-01 00:00:00"],
    "timestamp": ["2024-01-02 03:04:05.123456", "1970-01-01 00:00:00", "0000-00-00 00:00:00",
                  "2038-01-19 03:14:07.999999"],
    "binary": ["00ff", "abc", "", "zz", "c3a9"],
    "string": ["café", "", "x"],
}


def test_casts_equal_spark_try_cast(spark):
    from pyspark.sql import functions as F

    from spark_ingest.arrow_typed import arrow_type, caster
    from spark_ingest.typed import convert

    spark.conf.set("spark.sql.session.timeZone", "UTC")
    for kind, texts in CAST_CASES.items():
        df = spark.createDataFrame([(t,) for t in texts], "v STRING")
        column = convert(F.col("v"), kind)
        if kind == "date":                 # year 0 is a Spark date, not a Python one: as days
            column = F.unix_date(column)
        want = [r.c for r in df.select(column.alias("c")).collect()]
        cast = caster(kind)
        got = [cast(t) for t in texts]
        import pyarrow as pa

        got = pa.array(got, arrow_type(kind))
        got = got.cast(pa.int32()).to_pylist() if kind == "date" else got.to_pylist()
        if kind == "timestamp":
            got = [None if g is None else g.replace(tzinfo=None) for g in got]
        if kind == "binary":
            want = [None if w is None else bytes(w) for w in want]
        assert got == want, kind


def test_json_text_equals_spark_from_json(spark):
    """Non-string JSON values read into a STRING field: Jackson's text of them."""
    from pyspark.sql import functions as F

    from spark_ingest.arrow_typed import jackson_text

    values = [1, -7, 18446744073709551615, 1.5, 0.1, 1e20, 1.5e-5, 1234567.0, 12345678.0, 1e-3,
              True, False, {"a": [1, 2.5, None, "é"], "b": {}}, [], "text"]
    images = [orjson.dumps({"v": v}).decode() for v in values]
    df = spark.createDataFrame([(i,) for i in images], "j STRING")
    want = [r.v for r in df.select(F.from_json("j", "v STRING").getField("v").alias("v")).collect()]
    assert [jackson_text(v) for v in values] == want


def test_a_run_that_failed_is_removed_by_the_next(tmp_path):
    """A run stopped half-way (here by on-error=fail; a crash leaves the same state:
    inflight.json and part of the output) is deleted by the next run, which writes it
    again: no row lost, none twice."""
    import pyarrow.dataset as ds

    src = tmp_path / "binlogs"
    src.mkdir()
    shutil.copy(SAMPLES / "compressed.binlog", src / "a.binlog")
    shutil.copy(SAMPLES / "types_full.binlog", src / "b.binlog")
    data = bytearray((SAMPLES / "types_full.binlog").read_bytes())
    data[-60] ^= 0xFF                                # a CRC32 fails near the end
    (src / "c.binlog").write_bytes(bytes(data))
    out = tmp_path / "out"
    assert ingest(src, "--to", out, "--on-error", "fail", "--parallelism", "1", "--split-size", "0") == 1
    assert (out / "_checkpoint" / "inflight.json").exists()
    assert not (out / "_checkpoint" / "state.json").exists()
    assert list((out / "changes" / "run=1").rglob("*.parquet"))     # a and b were written
    (src / "c.binlog").unlink()
    assert ingest(src, "--to", out) == 0
    assert not (out / "_checkpoint" / "inflight.json").exists()
    table = ds.dataset(str(out / "changes"), format="parquet", partitioning="hive").to_table()
    got = sorted(((r["file"], r["pos"], r["before"], r["after"]) for r in table.to_pylist()), key=repr)
    want = sorted(((r["file"], r["pos"], _text(r["before"]), _text(r["after"]))
                   for name in ("a.binlog", "b.binlog") for r in dump_records([src / name])), key=repr)
    assert [(f, p) for f, p, _, _ in got] == [(f, p) for f, p, _, _ in want]


def _text(image):
    return None if image is None else orjson.dumps(image).decode()


def test_master_selects_spark_and_cannot_go_with_local(tmp_path):
    from binlog.commands._common import Parser
    from spark_ingest.command import add_arguments, engine_of

    parser = Parser(prog="binlog ingest")
    add_arguments(parser)
    assert engine_of(parser.parse_args(["x", "--to", "o"])) == "local"
    assert engine_of(parser.parse_args(["x", "--to", "o", "--master", "local[2]"])) == "spark"
    assert engine_of(parser.parse_args(["x", "--to", "o", "--engine", "spark"])) == "spark"
    assert ingest(SAMPLES, "--to", tmp_path / "o", "--engine", "local", "--master", "local[2]") == 2
