"""The change records as Spark rows: the fixed schema and Arrow batches of one split.

Schema (the JSON record of ``binlog dump --format json``, field for field)::

    file STRING, pos BIGINT, ts TIMESTAMP, server_id BIGINT, gtid STRING, db STRING,
    table STRING, op STRING, before STRING, after STRING,
    row INT, pk ARRAY<STRING>, commit BOOLEAN, xid DECIMAL(20,0), end_pos BIGINT, types STRING

``before`` / ``after`` hold the **JSON text of the row image**, byte for byte the
``"before"`` / ``"after"`` objects of ``binlog dump --format json`` (column names, or
``@1``, ``@2``... without names, as keys; SQL NULL as JSON null; DECIMAL as a string
so no digit is lost); a missing image (the before of an insert) is a null.  Read them
with Spark's JSON functions: ``get_json_object(after, '$.amount')`` gives ``'12.50'``, ``from_json(after, 'id BIGINT, amount DECIMAL(12,2)')`` types a whole
image; the typed per-table output (``spark_ingest.typed``) does that from the schema
store.

Why JSON text and not MAP<STRING,STRING>: measured on 168 MB of generated binlogs
(BENCHMARKS.md), Arrow maps cost the JVM (Arrow to rows, Parquet key/value groups) more
than the whole decode costs Python; one string per image made the decode stage
1.35-1.8x faster on one core, and the images are then exactly what ``binlog dump``
prints.

Statement-logged changes and DDL (``binlog dump``'s ``op: "statement"`` / ``op: "ddl"``
records) are rows with that ``op``, ``db`` (the statement's default database) and
``table`` (DDL: the first table it names, when known), a null ``before``, and ``after``
= the JSON object {sql, sql_hex (only when the text is not valid in its charset),
session, schema (DDL only)} of the JSON record.

The change-data-capture fields are those of the JSON record (``binlog.output.cdc``):
``row`` (the row's index in its rows event), ``pk`` (primary key column names),
``commit`` / ``xid`` / ``end_pos`` (set on the last row of each transaction: the XID -
DECIMAL(20,0), as the event holds 64 unsigned bits - and the offset just past the
transaction's end) and ``types`` (with ``with-types``: the JSON text of ``{column: SQL
type}``, else null).  Statement, DDL and error rows have them null.  A transaction never
spans two splits (splits start at transaction starts), so a split's last row of a
transaction is marked there; a row whose transaction the split (or input) ends inside
has ``commit`` false, as in ``binlog dump``.

With ``include-errors``, damaged input also gives a row with ``op = 'error'``: file and
pos of the damage, the rest null but ``after`` = the JSON object {error, message,
event_type, table, column, detail, resumed_at}.
"""
from __future__ import annotations

import os

import orjson
import pyarrow as pa

from binlog.errors import BinlogError
from binlog.output.cdc import PlanFields, transaction_end
from binlog.output.json_lines import image_json, images_json, statement_record
from binlog.output.values import bytes_renderer, json_default

from .prescan import ERROR_KEYS

CHANGE_SCHEMA_DDL = ("file STRING, pos BIGINT, ts TIMESTAMP, server_id BIGINT, gtid STRING, "
                     "db STRING, `table` STRING, op STRING, before STRING, after STRING, "
                     "`row` INT, pk ARRAY<STRING>, `commit` BOOLEAN, xid DECIMAL(20,0), "
                     "end_pos BIGINT, types STRING")
COLUMNS = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op", "before", "after",
           "row", "pk", "commit", "xid", "end_pos", "types")
XID_TYPE = pa.decimal128(20, 0)
ARROW_SCHEMA = pa.schema([
    ("file", pa.string()), ("pos", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")),
    ("server_id", pa.int64()), ("gtid", pa.string()), ("db", pa.string()),
    ("table", pa.string()), ("op", pa.string()), ("before", pa.string()), ("after", pa.string()),
    ("row", pa.int32()), ("pk", pa.list_(pa.string())), ("commit", pa.bool_()),
    ("xid", XID_TYPE), ("end_pos", pa.int64()), ("types", pa.string()),
])
_dumps = orjson.dumps
# The keys of a JSON record that are columns of their own
_HEAD_KEYS = frozenset(("file", "pos", "ts", "server_id", "gtid", "db", "table", "op"))


def spark_schema():
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        DecimalType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    return StructType([
        StructField("file", StringType()), StructField("pos", LongType()),
        StructField("ts", TimestampType()), StructField("server_id", LongType()),
        StructField("gtid", StringType()), StructField("db", StringType()),
        StructField("table", StringType()), StructField("op", StringType()),
        StructField("before", StringType()), StructField("after", StringType()),
        StructField("row", IntegerType()), StructField("pk", ArrayType(StringType())),
        StructField("commit", BooleanType()), StructField("xid", DecimalType(20, 0)),
        StructField("end_pos", LongType()), StructField("types", StringType())])


class BatchBuilder:
    """Accumulates records and hands out ``pyarrow.RecordBatch``es.
    Give it every item of the reader: rows (``add``), statements (``add_statement``) and
    events (``event``: transaction ends and TABLE_MAPs for the CDC fields).  ``keys``: a
    ``replay.keys.KeyCatalog`` for ``pk``; ``with_types``: fill ``types``.

    The fields a rows event's rows share (file, pos, ts, gtid, table, op, pk...) are kept
    once per event (a *segment* of rows) and repeated by Arrow (``take``) when a batch is
    made; the images go into ``images`` (``ImageColumns``) in row order, where the
    compiled encoder writes them itself (``ImagesEncoder``): no Python object per row
    or field."""

    def __init__(self, binary_encoding: str = "hex", *, keys=None, with_types: bool = False):
        self.binary_encoding = binary_encoding
        self.render_bytes = bytes_renderer(binary_encoding)
        self.images = ImageColumns()
        self.claimed = 0          # rows given to segments, all batches (images_rows counts the same)
        self.keys = keys
        self.fields = PlanFields(keys)
        self.with_types = with_types
        self._types: dict = {}
        self.pending: int | None = None   # index of the row whose commit fields are not known yet
        self.carry: pa.RecordBatch | None = None   # rows of the last batch from ``pending`` on
        self.reset()

    def reset(self) -> None:
        # per segment (a rows event, or one record): (file, pos, ts in us, server_id,
        # gtid, db, table, op, row, pk, types); its rows' images are the next rows of
        # ``images``.  ``row``: that of its first row, None for records without the CDC
        # fields (statements, errors)
        self.segments: list[tuple] = []
        self.counts: list[int] = []
        self.rows = 0 if self.carry is None else self.carry.num_rows
        self.ends: dict[int, tuple] = {}  # row -> (commit, xid, end_pos) of a transaction's last row

    def __len__(self) -> int:
        return self.rows

    def complete(self) -> int:
        """Rows whose every field is known (the rest wait for their transaction's end)."""
        return self.rows if self.pending is None else self.pending

    def _types_json(self, change):
        if not self.with_types:
            return None
        types = self.fields.types(change)
        text = self._types.get(id(types))
        if text is None or text[0] is not types:
            text = self._types[id(types)] = (types, _dumps(types))
        return text[1]

    def event(self, item) -> None:
        """An event of the reader (``SourceEvent``): TABLE_MAPs (primary keys) and the
        transaction's end (the commit fields of its last row)."""
        event = getattr(item, "event", None)
        if event is None:
            return
        if self.keys is not None:
            self.keys.observe(event)
        end = transaction_end(event)
        if end is not None:
            if self.pending is not None:
                self.ends[self.pending] = end
            self.pending = None

    def broken(self) -> None:
        """The read restarts elsewhere (damage): the row waiting for its transaction's
        end never sees it."""
        self.pending = None

    def _segment(self, change, op, n: int, row, cdc: bool) -> None:
        extra: tuple = (row, self.fields.pk(change), self._types_json(change)) if cdc else (None, None, None)
        self.segments.append((change.file, change.pos, None if change.ts is None else change.ts * 1_000_000,
                              change.server_id, change.gtid, change.db, change.table, op) + extra)
        self.counts.append(n)
        self.rows += n
        self.claimed += n

    def add(self, change) -> None:
        self.images.put([None if change.before is None else image_json(change.before, change.plan, self.render_bytes)],
                        [None if change.after is None else image_json(change.after, change.plan, self.render_bytes)])
        self._segment(change, change.op, 1, change.row, True)
        self.pending = self.rows - 1

    def add_rows(self, batch) -> None:
        """A ``reader.RowBatch``: the rows of one rows event, as ``add`` takes each (the
        event's fields once, the images' JSON made in one pass)."""
        rows = batch.rows
        if not rows:
            return
        self.images.put(images_json([before for before, _ in rows], batch.plan, self.render_bytes),
                        images_json([after for _, after in rows], batch.plan, self.render_bytes))
        self._segment(batch, batch.op, len(rows), 0, True)
        self.pending = self.rows - 1

    def add_encoded(self, item: "EncodedImages") -> None:
        """An ``EncodedImages``: a rows event whose images the compiled encoder wrote
        into ``images`` (``ImagesEncoder``)."""
        if not item.count:
            return
        if item.first != self.claimed:
            # the encoder writes an event's images just before the reader gives the event
            # out: any row taken in between would have put its images after them
            raise RuntimeError(f"images of rows {item.first}.. taken in at row {self.claimed}")
        self._segment(item.change, item.change.op, item.count, 0, True)
        self.pending = self.rows - 1

    def add_run(self, item, heads: dict) -> None:
        """A run of rows events the stream wrote (``ImagesEncoder``'s runs: an
        ``EncodedRows`` with ``events``) into ``images``: a segment per event, with the
        fields of ``heads[(table_id, type code)]`` and the event's own."""
        for at, code, table_id, count, _size, ts, server_id, first in item.events:
            if first != self.claimed:       # (as add_encoded)
                raise RuntimeError(f"images of rows {first}.. taken in at row {self.claimed}")
            head = heads[(table_id, code)]
            self._segment(_RunEvent(head, at, ts, server_id), head.op, count, 0, True)
        self.pending = self.rows - 1

    def take(self, item, heads: dict | None = None) -> None:
        """One item of ``reader.items(statements=True)``: a rows event's rows (``RowBatch``
        or one ``RowChange``), its images the compiled encoder wrote, a run of events
        it wrote (``heads``: ``ImagesEncoder.heads``), a statement record, or another
        event (transaction ends, positions)."""
        from binlog.reader import RowBatch, RowChange, StatementChange
        from binlog.rows import EncodedRows

        if isinstance(item, RowBatch):
            self.add_rows(item)
        elif isinstance(item, EncodedImages):
            self.add_encoded(item)
        elif isinstance(item, EncodedRows):
            if heads is None:       # (a reader with ImagesEncoder as its run writer gives both)
                raise RuntimeError("a run of rows events came without the fields of its events")
            self.add_run(item, heads)
        elif isinstance(item, RowChange):
            self.add(item)
        elif isinstance(item, StatementChange):
            self.add_statement(item)
        else:
            self.event(item)

    def add_statement(self, record) -> None:
        """A ``reader.StatementChange``: its JSON record's extra keys go in ``after``."""
        full = statement_record(record, self.render_bytes)
        self.images.put([None], [_dumps({k: v for k, v in full.items() if k not in _HEAD_KEYS},
                                        default=json_default)])
        self._segment(record, record.op, 1, None, False)
        self.pending = None       # statement records end the row before them (cdc.py)

    def add_error(self, error: dict, resumed_at=None) -> None:
        if resumed_at is None:
            resumed_at = error.get("resumed_at")
        info = dict(error, resumed_at=None if resumed_at is None else str(resumed_at))
        self.images.put([None], [_dumps({key: None if info.get(key) is None else str(info[key])
                                         for key in ERROR_KEYS})])
        place = _ErrorPlace(error.get("file"), error.get("pos"))
        self._segment(place, "error", 1, None, False)

    def batch(self, *, final: bool = False) -> pa.RecordBatch:
        """The rows gathered; unless ``final``, the rows from the one waiting for its
        transaction's end on stay for the next batch."""
        out = self._arrays()
        cut = out.num_rows if final else self.complete()
        self.carry = out.slice(cut) if cut < out.num_rows else None
        if self.pending is not None:
            self.pending = None if final else self.pending - cut
        self.reset()
        return out.slice(0, cut)

    def _arrays(self) -> pa.RecordBatch:
        """Every row gathered (the carried ones first) as one batch."""
        import numpy as np

        from .arrow_columns import numpy_array

        carried = 0 if self.carry is None else self.carry.num_rows
        counts = np.array(self.counts, np.int64)
        n = int(counts.sum())
        segment_of = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        starts = np.cumsum(counts) - counts
        within = np.arange(n, dtype=np.int64) - np.repeat(starts, counts)

        # the fields the rows of a segment share: a small batch of a row per segment,
        # repeated by one take (a take per column cost ~0.1 ms each, in pyarrow.compute)
        fields = list(zip(*self.segments, strict=True)) or [()] * 11
        shared = pa.RecordBatch.from_arrays(
            [pa.array(fields[i], arrow_type) for i, arrow_type in _SHARED],
            names=[str(i) for i, _ in _SHARED]).take(numpy_array(segment_of, pa.int32())).columns
        before, after = self.images.finish(n)
        cdc = np.repeat(np.array([s[8] is not None for s in self.segments], bool), counts)
        row_base = np.repeat(np.array([s[8] or 0 for s in self.segments], np.int64), counts)
        # the last rows of transactions: commit, xid, end_pos from a small array by index
        # (0: a change's false/null/null, 1: a statement's nulls, 2 on: the ends)
        ends = sorted((r - carried, e) for r, e in self.ends.items() if r >= carried)
        pick = np.where(cdc, 0, 1).astype(np.int32)
        pick[[r for r, _ in ends]] = np.arange(2, 2 + len(ends), dtype=np.int32)
        pick = numpy_array(pick, pa.int32())
        commits = pa.RecordBatch.from_arrays(
            [pa.array([False, None] + [e[0] for _, e in ends], pa.bool_()),
             pa.array([None, None] + [e[1] for _, e in ends], XID_TYPE),
             pa.array([None, None] + [e[2] for _, e in ends], pa.int64())],
            names=["commit", "xid", "end_pos"]).take(pick).columns
        arrays = [*shared[:8], before, after, numpy_array(within + row_base, pa.int32(), ~cdc),
                  shared[8], *commits, shared[9]]
        out = pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)
        if self.carry is None:
            return out
        return pa.concat_batches([self._carried(), out])

    def _carried(self) -> pa.RecordBatch:
        """The rows carried from the last batch, the commit fields of the one that was
        waiting for its transaction's end filled in."""
        carry = self.carry
        assert carry is not None        # (called only when there is one)
        end = self.ends.get(0)
        if end is None:
            return carry
        columns = dict(zip(carry.schema.names, carry.columns, strict=True))
        for name, value, arrow_type in zip(("commit", "xid", "end_pos"), end,
                                           (pa.bool_(), XID_TYPE, pa.int64()), strict=True):
            values = columns[name].to_pylist()
            values[0] = value
            columns[name] = pa.array(values, arrow_type)
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=ARROW_SCHEMA)


# the segments' fields of every row (BatchBuilder.reset: all but ``row``), by position
_SHARED = ((0, pa.string()), (1, pa.int64()), (2, pa.timestamp("us", tz="UTC")), (3, pa.int64()),
           (4, pa.string()), (5, pa.string()), (6, pa.string()), (7, pa.string()),
           (9, pa.list_(pa.string())), (10, pa.string()))


class _RunEvent:
    """The fields of one event of a run: its own (pos, ts, server_id), the rest those
    of the event registered for the run (``head``: same file, transaction, table)."""

    __slots__ = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op", "plan")

    def __init__(self, head, pos: int, ts: int, server_id: int):
        self.file, self.pos, self.ts, self.server_id = head.file, pos, ts, server_id
        self.gtid, self.db, self.table, self.op, self.plan = head.gtid, head.db, head.table, head.op, head.plan


class _ErrorPlace:
    """The fields of an error record's segment (no change: only file and pos)."""

    __slots__ = ("file", "pos", "ts", "server_id", "gtid", "db", "table")

    def __init__(self, file, pos):
        self.file, self.pos = file, pos
        self.ts = self.server_id = self.gtid = self.db = self.table = None


class ImageColumns:
    """The ``before`` and ``after`` columns of a batch of changes/: per row the JSON text
    of its images (``binlog dump --format json``'s, byte for byte), null where the row
    has none, added in the batch's row order.  With the compiled module they are Arrow
    buffers filled in C (``_speedups.images_builder``): ``ImagesEncoder`` writes a rows
    event's images into them straight from the row bytes, ``put`` adds images made in
    Python, and ``finish`` hands them to pyarrow without a copy; without it, lists."""

    def __init__(self):
        from binlog import rows as rows_module

        self._speedups = rows_module._speedups
        self.builder = None if self._speedups is None else self._speedups.images_builder()
        self._befores: list = []
        self._afters: list = []

    def put(self, befores: list, afters: list) -> None:
        """Rows of images (JSON bytes or None), as many befores as afters."""
        if self.builder is not None:
            self._speedups.images_put(self.builder, befores, afters)
        else:
            self._befores += befores
            self._afters += afters

    def finish(self, rows: int) -> tuple[pa.Array, pa.Array]:
        """The first ``rows`` rows' before and after columns; the rest stay."""
        if self.builder is None:
            befores, self._befores = self._befores[:rows], self._befores[rows:]
            afters, self._afters = self._afters[:rows], self._afters[rows:]
            return pa.array(befores, pa.string()), pa.array(afters, pa.string())
        owner, before, after = self._speedups.images_finish(self.builder, rows)
        return _string_column(owner, *before), _string_column(owner, *after)


_NO_BYTES = pa.py_buffer(b"")


def _string_column(owner, rows, nulls, validity, validity_size, offsets, offsets_size, data,
                   data_size) -> pa.Array:
    """An Arrow string column over buffers of ``images_finish`` (addresses, sizes), kept
    alive by ``owner``."""
    def wrap(address, size):
        return pa.foreign_buffer(address, size, owner) if size else _NO_BYTES

    return pa.Array.from_buffers(pa.string(), rows, [wrap(validity, validity_size) if nulls else None,
                                                     wrap(offsets, offsets_size), wrap(data, data_size)],
                                 null_count=nulls)


class EncodedImages:
    """A rows event whose images the compiled encoder wrote into a batch's
    ``ImageColumns`` (``_speedups.images_encode``, the JSON of ``encode_rows``) without a
    Python object per row or value: what the reader gives out for the event when
    ``ImagesEncoder`` is its ``row_encoder``.  ``change``: the event's fields (a
    RowChange without images); ``kind``: insert, update or delete; ``count``: rows;
    ``first``: the number of its first row in the columns (``images_rows``)."""

    __slots__ = ("change", "kind", "count", "first")

    def __init__(self, change, kind: str, count: int, first: int):
        self.change, self.kind, self.count, self.first = change, kind, count, first


class ImagesEncoder:
    """A reader's ``row_encoder`` writing each rows event's images into ``builder``'s
    ``images`` and giving an ``EncodedImages`` for it, or None when the encoder cannot
    (no compiled module, partial JSON, anything it falls back on): the reader then
    decodes the event and gives a RowBatch (or the typed error).  ``also``: ``(change,
    event) -> bool``, called with each event encoded (the typed tables' compiled
    columns, ``TypedWriter.add_event``); False makes it None too (the images written
    are taken out again).  The reader gives the event out right after encoding it, so
    its images are the next rows the builder takes.

    Also the reader's ``run_writer``: once an event was encoded, the stream writes the
    next events like it (same table, kind and columns, in the same transaction) in one
    compiled call per run (``_speedups.encode_run``, flags 48): their images into the
    same columns, and their typed columns through ``typed_part(change, event)``
    (``TypedWriter.run_part``: the part its builder takes, None for no typed rows, False
    for none of it in runs); the run comes out as one ``EncodedRows`` with ``events``
    (``BatchBuilder.add_run``), no Python call per event."""

    run_tail = b""
    # a run ends after this many bytes of images (~200 rows of the bench's tables):
    # longer runs saved no CPU and raised the peak RSS (bench cut: 290 MB against 236 at
    # 1 MB, the batches of changes/ growing past their size: a batch is cut between items)
    run_output = 1 << 16

    def __init__(self, builder: BatchBuilder, also=None, typed_part=None):
        self.render_bytes = builder.render_bytes
        self.target = builder.images.builder
        self.flags = 2 if builder.binary_encoding == "base64" else 0
        self.also = also
        self.typed_part = typed_part
        self.renders: dict = {}
        # (table_id, type code) -> the fields of the last event registered for runs
        # (the runs' events are like it: same transaction, table and kind)
        self.heads: dict = {}

    @property
    def run_flags(self) -> int:
        return self.flags | 48

    def _parts(self, change, event):
        """(walk, walk_after, render) of the event, None when the compiled encoder does
        not take it."""
        plan = change.plan
        if self.target is None or event.partial or not event.data or event.width != len(plan.columns):
            return None
        walk = plan.walk(event.present)
        walk_after = plan.walk(event.after_present) if event.kind == "update" else walk
        if walk[2] is None or walk_after[2] is None:
            return None
        render = self.renders.get(id(plan))
        if render is None or render[0] is not plan:
            from binlog.output.json_lines import value_json

            render = self.renders[id(plan)] = (plan, value_json(plan, self.render_bytes))
        return walk, walk_after, render[1]

    def __call__(self, change, event):
        from binlog import rows as rows_module

        speedups = rows_module._speedups
        parts = None if speedups is None else self._parts(change, event)
        if parts is None:
            return None
        walk, walk_after, render = parts
        try:
            first, count = speedups.images_encode(self.target, event.data, rows_module._KIND_CODES[event.kind],
                                                  walk[2], walk_after[2], walk[1], walk_after[1],
                                                  self.flags, render)
        except speedups.Fallback:
            return None
        taken = False
        try:
            taken = self.also is None or self.also(change, event)
        finally:
            if not taken:
                speedups.images_truncate(self.target, first)
        return EncodedImages(change, event.kind, count, first) if taken else None

    def run_parts(self, change, event) -> tuple | None:
        """(prefix, entry) of ``encode_run`` for events like ``event``, just encoded."""
        from binlog import rows as rows_module

        parts = self._parts(change, event)
        typed = None if self.typed_part is None else self.typed_part(change, event)
        if parts is None or typed is False:
            return None
        walk, walk_after, render = parts
        self.heads[(event.table_id, event.header.type_code)] = change
        return b"", (rows_module._KIND_CODES[event.kind], walk[2], walk_after[2], walk[1],
                     walk_after[1], b"", b"", render, typed, self.target)


class SplitFailed(Exception):
    """A decoding error with on-error=fail, re-raised in a Spark task.  Its message starts
    with a marker line the driver looks for to report the error without the traceback."""

    MARKER = "binlog-split-error: "

    def __init__(self, exc: BaseException, split_name: str):
        super().__init__(f"{self.MARKER}{exc}".replace("\n", " | ") + f"\n(split of {split_name})")


def damage_record(damage) -> dict:
    """A ``binlog.stream.Damage`` (skip mode) as an error record."""
    from .prescan import error_record

    rec = error_record(damage.error, source=damage.source, offset=damage.start)
    rec["pos"] = damage.start
    rec["detail"] = damage.describe() if hasattr(damage, "describe") else rec["detail"]
    rec["resumed_at"] = None if getattr(damage, "to_end", False) else damage.end
    return rec


class _TrackFrom:
    """The split's schema resolver, following DDL itself from ``offset`` on: the part of
    the file the pre-scan could not walk (damaged framing), which only this split reads."""

    def __init__(self, resolver, name: str, offset: int):
        self.resolver = resolver
        self.name = name
        self.offset = offset

    def attributes(self, table_map, position):
        return self.resolver.attributes(table_map, position)

    def observe_query(self, event, position):
        if position[0] == self.name and position[1] >= self.offset:
            self.resolver.track_ddl = True
            try:
                self.resolver.observe_query(event, position)
            finally:
                self.resolver.track_ddl = False

    def record_inferred(self, *args, **kw):
        return self.resolver.record_inferred(*args, **kw)


def make_schema(snapshot: str | None):
    """A task's schema resolver: a fresh in-memory store from the plan's snapshot, DDL
    tracking off (the snapshot has every DDL version at its binlog position)."""
    if snapshot is None:
        return None
    from schema_store.resolver import SchemaResolver
    from schema_store.snapshot import store_from_json

    return SchemaResolver(store_from_json(snapshot), track_ddl=False)


def read_split(split, opts, snapshot: str | None, *, batch_size: int | None = None, keys=None,
               on_rows=None, typed=None):
    """Arrow batches of the change records of one split (see plan.Split).  ``keys``: the
    plan's key ring (``ReadPlan.key_ring()``) for encrypted binlogs; ``on_rows`` is given
    every rows event's ``reader.RowBatch`` (the compiled encoder is then not used).
    ``typed``: an ``arrow_typed.TypedWriter`` given the same rows: each event the
    compiled encoder writes (``add_event``: when it returns False, the event is decoded
    and goes to ``add_batch``) and each run of events the stream writes in one compiled
    call (``add_run``)."""
    from binlog.reader import BinlogReader, RowBatch
    from binlog.reader_options import ReaderHooks, reader_options
    from binlog.replay.keys import KeyCatalog
    from binlog.rows import EncodedRows
    from binlog.sources.file import FileSource

    size = batch_size or opts.batch_size
    schema = make_schema(snapshot)
    builder = BatchBuilder(opts.binary_encoding, keys=KeyCatalog(schema=schema),
                           with_types=opts.with_types)
    if schema is not None and getattr(split, "track_from", None) is not None:
        schema = _TrackFrom(schema, split.name, split.track_from)
    table_filter = opts.table_filter()

    def on_damage(damage):
        if opts.include_errors:
            builder.add_error(damage_record(damage))

    skip_damage = on_damage if opts.on_error == "skip" else None
    position = split.start if split.read else None
    while position is not None:
        options = reader_options(opts, start_position=position if position > 4 else None,
                                 stop_position=split.stop, table_filter=table_filter, keys=keys)
        reader = BinlogReader(FileSource([split.path]), options, schema=schema,
                              hooks=ReaderHooks(on_damage=skip_damage))
        heads = None
        if on_rows is None and os.environ.get("BINLOG_BATCH", "1") != "0":
            # the images (and the typed columns) are written by compiled code
            # (BINLOG_BATCH=0 turns it off, as for binlog dump)
            encoder = ImagesEncoder(builder, None if typed is None else typed.add_event,
                                    None if typed is None else typed.run_part)
            reader.set_output_paths(row_encoder=encoder, run_writer=encoder)
            heads = encoder.heads
        position = None
        builder.broken()
        try:
            for item in reader.items(statements=True, batches=True):
                builder.take(item, heads)
                if isinstance(item, RowBatch):
                    if on_rows is not None:
                        on_rows(item)
                    if typed is not None:
                        typed.add_batch(item)
                elif typed is not None and isinstance(item, EncodedRows) and item.events and heads:
                    typed.add_run(item, heads)
                if builder.complete() >= size:
                    yield builder.batch()
        except BinlogError as exc:
            where = exc.event_offset
            if split.stop is not None and where is not None and where >= split.stop:
                pass                      # the pre-scan's error at the split's end: reported below
            elif opts.on_error == "fail":
                raise SplitFailed(exc, f"{split.name} [{split.start}, {split.stop or 'end'})") from None
            else:
                # what the reader itself cannot skip: go on at the next transaction
                later = [b for b in split.boundaries if where is not None and b > where]
                position = later[0] if later else None
                if opts.include_errors:
                    from .prescan import error_record

                    rec = error_record(exc, source=split.name, offset=where)
                    builder.add_error(rec, position)
    if split.error is not None and opts.include_errors:
        builder.add_error(split.error)
    if len(builder):
        yield builder.batch(final=True)
