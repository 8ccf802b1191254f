"""``binlog ingest --format delta``: the same tables as Delta Lake tables (``deltalake``).

``changes/``, ``errors/`` and each ``tables/<db>.<table>/`` are Delta tables (Parquet
files plus ``_delta_log/``), partitioned as the Parquet layout is (``run``/``db``/
``table``/``date``; ``_run``/``_date``), so Spark (with delta-spark), DuckDB, Trino or
``deltalake`` itself read them with the log's snapshot isolation.  Written by the
``deltalake`` package from Arrow, without a JVM.

How a run is published: the tasks write their Parquet files under
``_staging/run=<N>/`` exactly as for ``--format parquet``; after the tasks, the driver
appends them to each Delta table (one Delta commit per table), then the checkpoint
commits the run.  A run that stopped before the checkpoint's commit is undone by the
next one (``discard_run``): its staging directory is removed and its rows are deleted
from every Delta table (``DELETE WHERE run = N``, itself a Delta commit), so readers
never see a row twice.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.dataset as ds

# The Delta writer keeps each partition's open file in memory up to its target size:
# small files and row groups bound a run's memory by its partitions, not by its input
# (bench file x3, one worker: 651 MB peak RSS with deltalake's defaults), compressed as
# the Parquet layout is (background.COMPRESSION)
TARGET_FILE_BYTES = 16 << 20
ROW_GROUP_ROWS = 65_536


# pyarrow's codec names (background.COMPRESSION) as deltalake's WriterProperties spells them
_DELTA_CODECS: dict[str, Literal["UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "LZ4", "ZSTD"]] = {
    "none": "UNCOMPRESSED", "snappy": "SNAPPY", "gzip": "GZIP", "brotli": "BROTLI", "lz4": "LZ4",
    "zstd": "ZSTD"}


def _writer_options() -> dict:
    from deltalake import WriterProperties

    from .background import COMPRESSION, COMPRESSION_LEVEL

    return {"target_file_size": TARGET_FILE_BYTES,
            "writer_properties": WriterProperties(compression=_DELTA_CODECS[COMPRESSION],
                                                  compression_level=COMPRESSION_LEVEL,
                                                  max_row_group_size=ROW_GROUP_ROWS)}


CHANGE_PARTITIONS = pa.schema([("db", pa.string()), ("table", pa.string()), ("date", pa.string())])
TABLE_PARTITIONS = pa.schema([("_run", pa.int64()), ("_date", pa.string())])


def require_deltalake():
    from binlog.errors import UsageError

    try:
        import deltalake
    except ImportError:
        raise UsageError("--format delta needs the deltalake package",
                         hint="pip install 'binlog-temporal[delta]'") from None
    return deltalake


def is_delta(path: Path) -> bool:
    return (Path(path) / "_delta_log").is_dir()


def staging_dir(out: Path, run: int) -> Path:
    return Path(out) / "_staging" / f"run={run}"


def _with_constant(dataset, name: str, value: int):
    """The dataset's batches with a constant int64 column ``name`` added."""
    schema = dataset.schema.append(pa.field(name, pa.int64()))

    def batches():
        # a file at a time (the scanner's default reads ahead 4 files and 16 batches)
        for batch in dataset.to_batches(batch_readahead=0, fragment_readahead=0):
            column = pa.array([value] * batch.num_rows, pa.int64())
            yield pa.RecordBatch.from_arrays(batch.columns + [column], schema=schema)
    return pa.RecordBatchReader.from_batches(schema, batches())


def publish_changes(out: Path, run: int) -> None:
    from deltalake import write_deltalake

    source = staging_dir(out, run) / "changes"
    if not source.is_dir():
        return
    # the tasks' directory names escape values as Spark does (%XX of ASCII): URI decoding
    # gives them back; __HIVE_DEFAULT_PARTITION__ is null
    dataset = ds.dataset(str(source), format="parquet",
                         partitioning=ds.partitioning(CHANGE_PARTITIONS, flavor="hive"))
    reader = _with_constant(dataset, "run", run)
    # a lake begun before the CDC columns (row, pk, commit...) existed: merge the schemas
    write_deltalake(str(Path(out) / "changes"), reader, mode="append",
                    partition_by=["run", "db", "table", "date"], schema_mode="merge", **_writer_options())


def publish_tables(out: Path, run: int) -> None:
    from deltalake import write_deltalake

    source = staging_dir(out, run) / "tables"
    if not source.is_dir():
        return
    for table_dir in sorted(source.iterdir()):
        # ignore only hidden files: the partition directories start with "_"
        dataset = ds.dataset(str(table_dir), format="parquet", ignore_prefixes=["."],
                             partitioning=ds.partitioning(TABLE_PARTITIONS, flavor="hive"))
        # a table's columns can change between runs (ALTER TABLE): merge the schemas
        write_deltalake(str(Path(out) / "tables" / table_dir.name), dataset.scanner(batch_readahead=0, fragment_readahead=0).to_reader(),
                        mode="append", partition_by=["_run", "_date"], schema_mode="merge", **_writer_options())


def publish_errors(out: Path, run: int, table: pa.Table) -> None:
    from deltalake import write_deltalake

    table = table.append_column("run", pa.array([run] * table.num_rows, pa.int64()))
    write_deltalake(str(Path(out) / "errors"), table, mode="append", partition_by=["run"])


def discard_run(out: Path, run: int) -> list[str]:
    """Undo a run that did not commit: its staging files, and its rows in every Delta table."""
    removed = []
    staging = staging_dir(out, run)
    if staging.exists():
        shutil.rmtree(staging)
        removed.append(str(staging))
    targets = [(Path(out) / "changes", "run"), (Path(out) / "errors", "run")]
    tables = Path(out) / "tables"
    if tables.is_dir():
        targets += [(d, "_run") for d in sorted(tables.iterdir())]
    for path, column in targets:
        if is_delta(path):
            from deltalake import DeltaTable

            metrics = DeltaTable(str(path)).delete(f"{column} = {int(run)}")
            if metrics.get("num_deleted_rows"):
                removed.append(f"{path} ({column} = {run})")
    return removed
