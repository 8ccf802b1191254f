"""`binlog ingest --compression`: every Parquet file a run writes (changes/, tables/,
errors/; Parquet or Delta; either engine) is compressed with the codec asked for, the
lake holds the same rows whatever the codec, and a file written again (the driver's
conforming of tables no schema describes, --reprocess) keeps the codec it had.

The samples ingested without their schema dumps give error records (legacy TIMESTAMP
columns of unknown precision), so errors/ is written too."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from spark_helpers import SAMPLES

from binlog.cli import main
from binlog.exitcodes import Exit
from spark_ingest.background import codec_of

# pyarrow's name in Parquet metadata of each codec ("LZ4": the LZ4_RAW codec, which its "lz4" writes)
METADATA_NAMES = {"zstd": "ZSTD", "snappy": "SNAPPY", "lz4": "LZ4", "gzip": "GZIP", "none": "UNCOMPRESSED"}


def ingest(*args) -> None:
    """A run that reports the samples' error records (exit 3, SKIPPED) and writes the rest."""
    assert main(["ingest", "--no-progress", *map(str, args)]) == Exit.SKIPPED


def codecs(lake: Path) -> dict[str, set[str]]:
    """{output: the codecs of its column chunks}, over every Parquet file of the lake."""
    found: dict[str, set[str]] = {}
    for path in lake.rglob("*.parquet"):
        part = path.relative_to(lake).parts[0]
        meta = pq.read_metadata(path)
        found.setdefault(part, set()).update(meta.row_group(g).column(c).compression
                                             for g in range(meta.num_row_groups) for c in range(meta.num_columns))
    return found


def rows(lake: Path, part: str) -> list:
    """The rows of one output, in a stable order (pyarrow reads each file as it is)."""
    out = []
    for path in sorted((lake / part).rglob("*.parquet")):
        relative = path.relative_to(lake / part)
        out.extend((str(relative.parent), repr(r)) for r in pq.read_table(path, partitioning=None).to_pylist())
    return sorted(out)


@pytest.fixture(scope="module")
def default_lake(tmp_path_factory) -> Path:
    lake = tmp_path_factory.mktemp("compression") / "default"
    ingest(SAMPLES, "--to", lake)
    return lake


def test_the_default_is_zstd(default_lake):
    assert codecs(default_lake) == {part: {"ZSTD"} for part in ("changes", "tables", "errors")}


@pytest.mark.parametrize("codec", ["snappy", "lz4", "none"])
def test_every_file_of_a_local_run_takes_the_codec(codec, default_lake, tmp_path):
    lake = tmp_path / codec
    ingest(SAMPLES, "--to", lake, "--compression", codec)
    assert codecs(lake) == {part: {METADATA_NAMES[codec]} for part in ("changes", "tables", "errors")}
    for part in ("changes", "tables", "errors"):
        assert rows(lake, part) == rows(default_lake, part), part


def test_delta_tables_take_the_codec(tmp_path):
    pytest.importorskip("deltalake")
    lake = tmp_path / "delta"
    ingest(SAMPLES, "--to", lake, "--format", "delta", "--compression", "gzip")
    assert codecs(lake) == {part: {"GZIP"} for part in ("changes", "tables", "errors")}


@pytest.mark.spark
def test_every_file_of_a_spark_run_takes_the_codec(spark, tmp_path):
    lake = tmp_path / "spark"
    ingest(SAMPLES, "--to", lake, "--engine", "spark", "--compression", "lz4")
    assert codecs(lake) == {part: {"LZ4"} for part in ("changes", "tables", "errors")}
    # Spark reads what pyarrow's lz4 wrote (LZ4_RAW, not Hadoop's framed LZ4)
    assert spark.read.parquet(str(lake / "changes")).count() == len(rows(lake, "changes"))


@pytest.mark.parametrize("codec", sorted(METADATA_NAMES))
def test_a_file_written_again_keeps_its_codec(codec, tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path, compression=codec)
    assert codec_of(pq.read_metadata(path)) == codec


def test_reprocessing_keeps_the_codec(tmp_path):
    from spark_ingest.reprocess import _rewrite_parquet

    path = tmp_path / "changes" / "run=1" / "part-00000-0.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"file": ["a.000001", "b.000002", "a.000001"], "pos": [4, 8, 12]}), path,
                   compression="lz4")
    # run 2 reads a.000001 again: its rows leave run 1's file, which is written again
    assert _rewrite_parquet(tmp_path / "changes", "file", "run", 2, ["a.000001"]) == [str(path)]
    assert pq.read_table(path, partitioning=None).to_pydict() == {"file": ["b.000002"], "pos": [8]}
    assert codec_of(pq.read_metadata(path)) == "lz4"


def test_conforming_a_file_keeps_its_codec(tmp_path):
    from spark_ingest.arrow_typed import table_schema
    from spark_ingest.shredded import _rewrite

    schema = table_schema([("a", "string")])
    path = tmp_path / "part-00000-0.parquet"
    pq.write_table(pa.Table.from_arrays([pa.nulls(2, f.type) for f in schema], schema=schema), path,
                   compression="gzip")
    # a key another split saw: this file is written again with it
    _rewrite(str(path), ["a", "b"])
    assert pq.read_schema(path).names == table_schema([("a", "string"), ("b", "string")]).names
    assert codec_of(pq.read_metadata(path)) == "gzip"
