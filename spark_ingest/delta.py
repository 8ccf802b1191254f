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

CHANGE_PARTITIONS = pa.schema([("db", pa.string()), ("table", pa.string()), ("date", pa.string())])
TABLE_PARTITIONS = pa.schema([("_run", pa.int64()), ("_date", pa.string())])


def require_deltalake() -> None:
    """A usage error when the deltalake package is missing.  Found, not imported: its
    library (16 MiB resident) is loaded only to publish, after the tasks, when their
    memory is given back, so it does not add to the run's peak."""
    from importlib.util import find_spec

    from binlog.errors import UsageError

    if find_spec("deltalake") is None:
        raise UsageError("--format delta needs the deltalake package",
                         hint="pip install 'binlog-temporal[delta]'")


def is_delta(path: Path) -> bool:
    return (Path(path) / "_delta_log").is_dir()


def staging_dir(out: Path, run: int) -> Path:
    return Path(out) / "_staging" / f"run={run}"


def _staged(source: Path, partitioning: pa.Schema, extra: dict) -> list[tuple[Path, str, dict]]:
    """The Parquet files under ``source``: each one's path, its path under ``source``,
    and its partition values (Delta's text form; None: null), read from the directory
    names as ``--format parquet`` readers do: ``partitioning``'s hive keys, URI-decoded
    (the tasks escape names as Spark does, %XX of ASCII), __HIVE_DEFAULT_PARTITION__
    null; ``extra`` added to each."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(source), format="parquet", ignore_prefixes=["."],
                         partitioning=ds.partitioning(partitioning, flavor="hive"))
    out = []
    for fragment in dataset.get_fragments():
        keys = ds.get_partition_keys(fragment.partition_expression)
        values = {name: None if keys.get(name) is None else str(keys[name]) for name in partitioning.names}
        path = Path(fragment.path)
        out.append((path, path.relative_to(source).as_posix(), {**values, **extra}))
    return out


def _stats(path: Path) -> str:
    """The Delta statistics of a data file: its row count (from the Parquet footer)."""
    import json

    import pyarrow.parquet as pq

    return json.dumps({"numRecords": pq.ParquetFile(str(path)).metadata.num_rows})


def _commit_files(table: Path, files: list[tuple[Path, str, dict]], partitions: pa.Schema, prefix: str,
                  partition_by: list[str]) -> bool:
    """The tasks' Parquet files added to the Delta table at ``table`` as they are: moved
    into it (``prefix`` + their path under the staging directory, a name of their own:
    readers of the files find the partitions in their path, as deltalake writes them;
    the log's paths are URI-encoded by deltalake) and committed in one transaction of add
    actions, so no file is read or written again and memory stays that of the tasks'
    row groups.  False (nothing moved): the files' columns differ between them or from
    the table's (ALTER TABLE, a lake begun by an older version), which the caller
    leaves to ``write_deltalake``'s schema merge."""
    import time
    import uuid

    import pyarrow.parquet as pq
    from deltalake import DeltaTable, Schema
    from deltalake.transaction import AddAction, create_table_with_add_actions

    schemas = {pq.read_schema(str(path)).remove_metadata() for path, _, _ in files}
    if len(schemas) != 1:
        return False
    [schema] = schemas
    for field in partitions:
        schema = schema.append(field)
    exists = is_delta(table)
    if exists and DeltaTable(str(table)).schema() != Schema.from_arrow(schema):
        return False
    token = uuid.uuid4().hex
    actions: list = []     # AddAction (deltalake's list parameter is of AddAction | RemoveAction)
    for path, relative, values in files:
        name = f"{prefix}{relative.removesuffix('.parquet')}-{token}.parquet"
        target = table / name
        target.parent.mkdir(parents=True, exist_ok=True)
        size = path.stat().st_size
        stats = _stats(path)
        path.replace(target)
        actions.append(AddAction(name, size, values, int(time.time() * 1000), True, stats))
    if exists:
        DeltaTable(str(table)).create_write_transaction(actions, "append", schema, partition_by=partition_by)
    else:
        create_table_with_add_actions(str(table), Schema.from_arrow(schema), actions, partition_by=partition_by)
    return True


# What write_deltalake writes when the files cannot be committed as they are (a schema
# to merge): small files and row groups bound its memory by its partitions, not by its
# input (bench file x3, one worker: 651 MB peak RSS with deltalake's defaults),
# compressed as the run's Parquet files are (--compression)
TARGET_FILE_BYTES = 16 << 20
ROW_GROUP_ROWS = 65_536


# pyarrow's codec names (binlog.options.INGEST_COMPRESSIONS) as deltalake's WriterProperties spells them
_DELTA_CODECS: dict[str, Literal["UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "LZ4", "ZSTD"]] = {
    "none": "UNCOMPRESSED", "snappy": "SNAPPY", "gzip": "GZIP", "brotli": "BROTLI", "lz4": "LZ4",
    "zstd": "ZSTD"}


def _writer_options(codec: str) -> dict:
    return {"target_file_size": TARGET_FILE_BYTES, "writer_properties": _writer_properties(codec)}


def _writer_properties(codec: str):
    from deltalake import WriterProperties

    from .background import LEVELS

    return WriterProperties(compression=_DELTA_CODECS[codec], compression_level=LEVELS.get(codec),
                            max_row_group_size=ROW_GROUP_ROWS)


def _with_constant(dataset, name: str, value: int):
    """The dataset's batches with a constant int64 column ``name`` added."""
    schema = dataset.schema.append(pa.field(name, pa.int64()))

    def batches():
        # a file at a time (the scanner's default reads ahead 4 files and 16 batches)
        for batch in dataset.to_batches(batch_readahead=0, fragment_readahead=0):
            column = pa.array([value] * batch.num_rows, pa.int64())
            yield pa.RecordBatch.from_arrays(batch.columns + [column], schema=schema)
    return pa.RecordBatchReader.from_batches(schema, batches())


def publish_changes(out: Path, run: int, codec: str) -> None:
    import pyarrow.dataset as ds
    from deltalake import write_deltalake

    source = staging_dir(out, run) / "changes"
    if not source.is_dir():
        return
    target = Path(out) / "changes"
    partitions = CHANGE_PARTITIONS.append(pa.field("run", pa.int64()))
    files = _staged(source, CHANGE_PARTITIONS, {"run": str(run)})
    if not files or _commit_files(target, files, partitions, f"run={run}/", ["run", "db", "table", "date"]):
        return
    # the tasks' directory names escape values as Spark does (%XX of ASCII): URI decoding
    # gives them back; __HIVE_DEFAULT_PARTITION__ is null
    dataset = ds.dataset(str(source), format="parquet",
                         partitioning=ds.partitioning(CHANGE_PARTITIONS, flavor="hive"))
    reader = _with_constant(dataset, "run", run)
    # a lake begun before the CDC columns (row, pk, commit...) existed: merge the schemas
    write_deltalake(str(target), reader, mode="append",
                    partition_by=["run", "db", "table", "date"], schema_mode="merge", **_writer_options(codec))


def publish_tables(out: Path, run: int, codec: str) -> None:
    import pyarrow.dataset as ds
    from deltalake import write_deltalake

    source = staging_dir(out, run) / "tables"
    if not source.is_dir():
        return
    for table_dir in sorted(source.iterdir()):
        target = Path(out) / "tables" / table_dir.name
        files = _staged(table_dir, TABLE_PARTITIONS, {})
        if not files or _commit_files(target, files, TABLE_PARTITIONS, "", ["_run", "_date"]):
            continue
        # ignore only hidden files: the partition directories start with "_"
        dataset = ds.dataset(str(table_dir), format="parquet", ignore_prefixes=["."],
                             partitioning=ds.partitioning(TABLE_PARTITIONS, flavor="hive"))
        # a table's columns can change between runs (ALTER TABLE): merge the schemas
        write_deltalake(str(target), dataset.scanner(batch_readahead=0, fragment_readahead=0).to_reader(),
                        mode="append", partition_by=["_run", "_date"], schema_mode="merge", **_writer_options(codec))


def publish_errors(out: Path, run: int, table: pa.Table, codec: str) -> None:
    from deltalake import write_deltalake

    table = table.append_column("run", pa.array([run] * table.num_rows, pa.int64()))
    write_deltalake(str(Path(out) / "errors"), table, mode="append", partition_by=["run"],
                    writer_properties=_writer_properties(codec))


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
