"""The typed tables of tables no schema describes as ``binlog ingest`` made them before
the tasks typed them from their images (``spark_ingest/shredded.py``): on the driver,
after the tasks, from the run's changes/ read back - the keys of every image (the after
image, else the before image), then each row's images read by ``orjson.loads`` and typed
by ``arrow_typed.TypedWriter.add`` (a Python object per value).  Kept here as the
reference of the differential tests, with one change: the keys are those of the row
changes only (the old path also took the keys of a DDL record's JSON - sql, session,
schema - when the DDL named the table).  Its files: ``part-00000-<i>.parquet``."""
from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from spark_ingest.arrow_typed import TypedWriter
from spark_ingest.partitions import partition_dir
from spark_ingest.typed import image_key_order

TYPED_OPS = ("insert", "update", "delete")


class Change:
    """A change record read back from changes/ in the shape TypedWriter.add takes (no
    plan: its images are rendered)."""

    __slots__ = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op", "before", "after", "plan")

    def __init__(self, file, pos, ts, server_id, gtid, op, db: str, table: str, before, after):
        self.file, self.pos, self.ts, self.server_id = file, pos, ts, server_id
        self.gtid, self.op, self.db, self.table = gtid, op, db, table
        self.before, self.after, self.plan = before, after, None


def write_schemaless_table(changes_dir: Path, tables_dir: Path, run: int, db: str, table: str,
                           binary_encoding: str = "hex") -> None:
    where = changes_dir / partition_dir(db, table, "x").rsplit("/", 1)[0]
    if not where.is_dir():
        return
    data = ds.dataset(str(where), format="parquet")
    names = ["file", "pos", "ts", "server_id", "gtid", "op", "before", "after"]

    def batches(columns):
        return data.to_batches(columns=columns, batch_size=8192, batch_readahead=0, fragment_readahead=0)

    loads = orjson.loads
    keys: set = set()
    for batch in batches(["op", "before", "after"]):
        for op, before, after in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            image = after if after is not None else before
            if image is not None and op in TYPED_OPS:
                keys.update(loads(image))
    columns = [(k, "string") for k in sorted(keys, key=image_key_order)]
    writer = TypedWriter(str(tables_dir), run, 0, lambda *_: columns, zone=None, binary_encoding=binary_encoding)
    for batch in batches(names):
        batch = batch.set_column(2, "ts", pc.divide(batch.column(2).cast(pa.int64()), 1_000_000))
        files, poss, tss, server_ids, gtids, ops, befores, afters = (c.to_pylist() for c in batch.columns)
        for i, op in enumerate(ops):
            if op not in TYPED_OPS:
                continue
            before, after = befores[i], afters[i]
            writer.add(Change(files[i], poss[i], tss[i], server_ids[i], gtids[i], op, db, table,
                              None if before is None else loads(before), None if after is None else loads(after)))
    writer.close()
