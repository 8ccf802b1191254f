"""The change records of one split written as Parquet by the task itself (``binlog ingest``).

Why not ``DataFrame.write``: the records already are Arrow batches in the Python worker.
Handing them to the JVM means Arrow -> Spark rows -> Parquet, and that path cost more CPU
than the whole decoding (168 MB of binlogs on one core: JVM 35 s, of it ~15 s JIT
compilation, against 23 s of Python; BENCHMARKS.md).  Arrow's own Parquet writer takes
the batches as they are; Spark still schedules one task per split and the driver gets
back a few counters per task.

Layout, as Spark's partitioned writer would make it (so ``spark.read.parquet`` sees the
same table): ``<run dir>/db=<db>/table=<table>/date=<YYYY-MM-DD>/part-<split>-<i>.parquet``,
partition values escaped as Spark escapes them (``partitions``; with pyarrow's hive
partitioning, which URI-encodes, ``café`` would come back garbled and ``a/b`` as
``a%2Fb``).  ``date`` is the UTC day of ``ts``.  A file is written
under a hidden name (readers skip names starting with ".") and renamed when complete;
names depend only on the split, so a retried task replaces what a failed attempt left.
Error records (``op = 'error'``) are not written; they go back to the driver, which
writes ``errors/``.
"""
from __future__ import annotations

import json
import os
from collections import Counter, OrderedDict

import pyarrow as pa
import pyarrow.compute as pc

from binlog.output.paths import inside

from .background import COMPRESSION, Background, Inline, parquet_writer
from .partitions import partition_dir
from .prescan import ERROR_KEYS

# rows buffered per partition before a row group is written: ~10-40 MB of JSON images
MIN_ROWS_PER_GROUP = 65_536
# and at most this much buffered over all partitions (the largest buffer is written first):
# with the typed tables' buffers (arrow_typed) a task's memory stays bounded by row
# groups, not by its input
MAX_BUFFERED_BYTES = 32 << 20
MAX_OPEN_FILES = 256
# fewer rows per buffered chunk than this on average: a row group's chunks are joined first
SMALL_CHUNK_ROWS = 1_000
# more runs of one (db, table, day) than this in a batch: its rows are sorted by key
MAX_RUNS = 64


# the day of a row without ts (never a day of a uint32 timestamp)
_NO_DAY = -(1 << 26)
_US_PER_DAY = 86_400 * 1_000_000


def _days(ts: pa.Array):
    """The UTC day (days since 1970-01-01) of each instant; _NO_DAY for null."""
    import numpy as np

    micros = pc.fill_null(ts.view(pa.int64()), _NO_DAY * _US_PER_DAY).to_numpy()
    return np.floor_divide(micros, _US_PER_DAY)


def _codes(names: pa.Array):
    """A number per row, the same for the same name (null its own)."""
    return pc.fill_null(names.dictionary_encode().indices, -1).to_numpy()


def _changes(keys: list):
    """The rows where any key differs from the row before."""
    import numpy as np

    differs = np.zeros(len(keys[0]) - 1, bool)
    for key in keys:
        differs |= key[1:] != key[:-1]
    return np.flatnonzero(differs) + 1


class PartitionedWriter:
    """Parquet files of the change records, one directory per (db, table, date).

    Buffers each partition's rows up to MIN_ROWS_PER_GROUP (one row group), keeps at most
    MAX_OPEN_FILES files open (the least recently used is closed; the partition's next
    rows go to a new file) and at most MAX_BUFFERED_BYTES buffered in all.  ``tap(db,
    table, day, rows)`` is given each partition's rows of a batch as they are buffered
    (``shredded.ShreddedTables.add_part``); ``codec``: the files' compression."""

    def __init__(self, target: str, index: int, background=None, tap=None, codec: str = COMPRESSION):
        from .records import ARROW_SCHEMA

        self.codec = codec
        self.target = target
        self.index = index
        self.background = background or Inline()   # runs the writes (background.Background)
        self.tap = tap
        self.columns = [n for n in ARROW_SCHEMA.names if n not in ("db", "table")]
        self.schema = pa.schema([ARROW_SCHEMA.field(n) for n in self.columns])
        self.buffers: dict[str, list] = {}
        self.buffered: Counter = Counter()        # rows per partition
        self.sizes: Counter = Counter()           # bytes per partition
        self.buffered_bytes = 0
        self.open: OrderedDict = OrderedDict()    # partition -> (writer, temp path, final path)
        self.opened = 0                           # files, for their names

    def add(self, batch: pa.RecordBatch, counts: Counter | None = None) -> None:
        """Buffer a batch's rows in their partitions; ``counts`` gets the rows per (db,
        table, op)."""
        # a partition per (db, table, UTC day of ts): numbers per row (the names'
        # dictionary codes, the day since the epoch), compared by numpy.  A rows event's
        # rows share them: runs of one partition are sliced as they are (no copy); rows
        # of partitions interleaved are sorted first.  The names are read from the rows
        # themselves (a hostile binlog's can hold NUL: KB "Identifier Names")
        import numpy as np

        from .arrow_columns import numpy_array

        keys = [_codes(batch.column("db")), _codes(batch.column("table")), _days(batch.column("ts"))]
        ops = batch.column("op").dictionary_encode()
        op_names = ops.dictionary.to_pylist() + [None]          # a null op: the last code
        op_codes = pc.fill_null(ops.indices, len(op_names) - 1).to_numpy()
        starts = _changes(keys)
        if len(starts) >= MAX_RUNS:
            order = np.lexsort(keys[::-1])            # stable: the rows' order within a partition
            batch = batch.take(numpy_array(order, pa.int64()))
            keys = [key[order] for key in keys]
            op_codes = op_codes[order]
            starts = _changes(keys)
        dbs, tables, days = batch.column("db"), batch.column("table"), keys[2]
        data = batch.select(self.columns)
        # a part's bytes as its share of the rows (a slice's own nbytes walks its buffers:
        # ~50 us a slice, 1.7 s of 23 on the Spark bench's interleaved tables)
        row_bytes = data.nbytes / max(1, data.num_rows)
        bounds = [0, *starts.tolist(), batch.num_rows]
        for start, stop in zip(bounds, bounds[1:], strict=False):
            day = None if days[start] == _NO_DAY else str(np.datetime64(int(days[start]), "D"))
            db, table, part = dbs[start].as_py(), tables[start].as_py(), data.slice(start, stop - start)
            if counts is not None:
                # a part is one (db, table): its rows per op counted by their codes
                per_op = np.bincount(op_codes[start:stop], minlength=len(op_names))
                for code in np.flatnonzero(per_op).tolist():
                    counts[(db, table, op_names[code])] += int(per_op[code])
            self._buffer(partition_dir(db, table, day), part, int(row_bytes * (stop - start)))
            if self.tap is not None:
                self.tap(db, table, day, part)

    def _buffer(self, key: str, part: pa.RecordBatch, size: int) -> None:
        self.buffers.setdefault(key, []).append(part)
        self.buffered[key] += part.num_rows
        self.sizes[key] += size
        self.buffered_bytes += size
        if self.buffered[key] >= MIN_ROWS_PER_GROUP:
            self._flush(key)
        while self.buffered_bytes > MAX_BUFFERED_BYTES:
            self._flush(max(self.buffers, key=lambda k: self.buffered[k]))

    def _flush(self, key: str) -> None:
        parts = self.buffers.pop(key)
        self.buffered.pop(key)
        self.buffered_bytes -= self.sizes.pop(key)
        table = pa.Table.from_batches(parts, self.schema)
        if table.num_rows < SMALL_CHUNK_ROWS * len(parts):
            # small chunks (rows of partitions interleaved) as one: the writer takes many
            # small ones slower than the copy costs (bench cut, changes/ in chunks of 52
            # rows: 0.31 s of CPU against 0.20 s; chunks of 1,000 rows or more: the same as
            # one); large ones as they are (copying them cost 0.22 s on 204.7 MB)
            table = table.combine_chunks()
        self.background.submit(self._writer(key).write_table, table)

    def _writer(self, key: str):
        if key in self.open:
            self.open.move_to_end(key)
            return self.open[key][0]
        if len(self.open) >= MAX_OPEN_FILES:
            self._close(next(iter(self.open)))
        # the key is made of escaped names (no separator, never "." or ".."); checked anyway
        directory = str(inside(self.target, os.path.join(self.target, key)))
        os.makedirs(directory, exist_ok=True)
        name = f"part-{self.index:05d}-{self.opened}.parquet"
        self.opened += 1
        temp, final = os.path.join(directory, "." + name + ".tmp"), os.path.join(directory, name)
        # neither a dictionary for the JSON images (no two alike) nor min/max statistics
        # (no reader filters JSON text by range; a minimum and maximum image per page
        # would be up to 4 KB each in the footer; comparing every image cost ~1% of the CPU)
        others = [n for n in self.schema.names if n not in ("before", "after")]
        self.open[key] = (parquet_writer(temp, self.schema, others, others, self.codec), temp, final)
        return self.open[key][0]

    def _close(self, key: str) -> None:
        self.background.submit(finish_file, *self.open.pop(key))

    def close(self) -> None:
        for key in list(self.buffers):
            self._flush(key)
        for key in list(self.open):
            self._close(key)


def finish_file(writer, temp: str, final: str) -> None:
    """A file's last write: closed, then renamed to its visible name."""
    writer.close()
    os.replace(temp, final)


class SplitWriter:
    """A split's record batches: error records kept aside, the rest counted and written
    (``tap``, ``codec``: as ``PartitionedWriter``'s)."""

    def __init__(self, target: str, index: int, background=None, tap=None, codec: str = COMPRESSION):
        self.files = PartitionedWriter(target, index, background, tap, codec)
        self.counts: Counter = Counter()
        self.errors: list[dict] = []
        self.rows = 0

    def _take_errors(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        is_error = pc.equal(batch.column("op"), "error")
        if not pc.any(is_error).as_py():
            return batch
        for rec in batch.filter(is_error).select(["file", "pos", "after"]).to_pylist():
            info = json.loads(rec["after"]) if rec["after"] else {}
            self.errors.append({"file": rec["file"], "pos": rec["pos"], **{k: info.get(k) for k in ERROR_KEYS}})
        return batch.filter(pc.invert(is_error))

    def add(self, batch: pa.RecordBatch) -> None:
        batch = self._take_errors(batch)
        if batch.num_rows:
            self.rows += batch.num_rows
            self.files.add(batch, self.counts)

    def result(self) -> dict:
        return {"rows": self.rows, "errors": self.errors, "files": self.files.opened,
                "counts": [[db, table, op, n] for (db, table, op), n in sorted(self.counts.items(), key=repr)]}


def write_records(batches, target: str, index: int) -> dict:
    """Write record batches (``records.ARROW_SCHEMA``) under ``target``, file names
    ``part-<index>-<i>.parquet``.  Returns {"rows", "files", "counts": [[db, table, op,
    n], ...], "errors": [...]}."""
    background = Background()
    try:
        writer = SplitWriter(target, index, background)
        for batch in batches:
            writer.add(batch)
        writer.files.close()
    finally:
        background.close()
    return writer.result()


def write_split(split, opts, snapshot: str | None, target: str, keys=None) -> dict:
    """Decode one split and write its records under ``target`` (the run's directory of
    ``changes/``); see ``write_records``.  ``keys``: the plan's key ring."""
    from .records import read_split

    return write_records(read_split(split, opts, snapshot, keys=keys), target, split.index)
