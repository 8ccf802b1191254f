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
    made; the images stay the bytes the compiled encoder wrote (each followed by a NUL),
    joined per batch into one string column: no Python object per row or field."""

    def __init__(self, binary_encoding: str = "hex", *, keys=None, with_types: bool = False):
        self.render_bytes = bytes_renderer(binary_encoding)
        self.keys = keys
        self.fields = PlanFields(keys)
        self.with_types = with_types
        self._types: dict = {}
        self.pending: int | None = None   # index of the row whose commit fields are not known yet
        self.carry: pa.RecordBatch | None = None   # rows of the last batch from ``pending`` on
        self.reset()

    def reset(self) -> None:
        # per segment (a rows event, or one record): (file, pos, ts in us, server_id,
        # gtid, db, table, op, layout, first, row, pk, types): ``layout`` says where its
        # images are in ``blobs``: from index ``first`` on, after each other (_INSERT,
        # _DELETE) or before and after alternating (_UPDATE); _LISTS: ``first`` is
        # (before indexes, after indexes), -1 for none.  ``row``: that of its first
        # row, None for records without the CDC fields (statements, errors)
        self.segments: list[tuple] = []
        self.counts: list[int] = []
        self.rows = 0 if self.carry is None else self.carry.num_rows
        self.blobs: list[bytes] = []      # the images, each followed by a NUL
        self.images = 0
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

    def _listed(self, images: list) -> list[int]:
        """The images (JSON bytes or None) into ``blobs``; their indexes (-1: None)."""
        out = []
        for image in images:
            if image is None:
                out.append(-1)
            else:
                self.blobs += (image, b"\0")
                out.append(self.images)
                self.images += 1
        return out

    def _segment(self, change, op, n: int, row, layout: int, first, cdc: bool) -> None:
        extra: tuple = (row, self.fields.pk(change), self._types_json(change)) if cdc else (None, None, None)
        self.segments.append((change.file, change.pos, None if change.ts is None else change.ts * 1_000_000,
                              change.server_id, change.gtid, change.db, change.table, op,
                              layout, first) + extra)
        self.counts.append(n)
        self.rows += n

    def add(self, change) -> None:
        images = self._listed([None if change.before is None else image_json(change.before, change.plan, self.render_bytes),
                               None if change.after is None else image_json(change.after, change.plan, self.render_bytes)])
        self._segment(change, change.op, 1, change.row, _LISTS, ([images[0]], [images[1]]), True)
        self.pending = self.rows - 1

    def add_rows(self, batch) -> None:
        """A ``reader.RowBatch``: the rows of one rows event, as ``add`` takes each (the
        event's fields once, the images' JSON made in one pass)."""
        rows = batch.rows
        if not rows:
            return
        befores = self._listed(images_json([before for before, _ in rows], batch.plan, self.render_bytes))
        afters = self._listed(images_json([after for _, after in rows], batch.plan, self.render_bytes))
        self._segment(batch, batch.op, len(rows), 0, _LISTS, (befores, afters), True)
        self.pending = self.rows - 1

    def add_encoded(self, item: "EncodedImages") -> None:
        """An ``EncodedImages``: a rows event's images written by the compiled encoder,
        kept as they are."""
        if not item.count:
            return
        self.blobs.append(item.data)
        layout = _LAYOUTS[item.kind]
        self._segment(item.change, item.change.op, item.count, 0, layout, self.images, True)
        self.images += 2 * item.count if layout == _UPDATE else item.count
        self.pending = self.rows - 1

    def add_run(self, item, heads: dict) -> None:
        """A run of rows events the stream wrote (``ImagesEncoder``'s runs: an
        ``EncodedRows`` with ``events``): their images as they are, a segment per event
        with the fields of ``heads[(table_id, type code)]`` and the event's own."""
        if not item.count:
            return
        self.blobs.append(item.data)
        for at, code, table_id, count, _size, ts, server_id in item.events:
            head = heads[(table_id, code)]
            change = _RunEvent(head, at, ts, server_id)
            layout = _LAYOUTS[head.op]
            self._segment(change, head.op, count, 0, layout, self.images, True)
            self.images += 2 * count if layout == _UPDATE else count
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
        elif isinstance(item, EncodedRows) and heads is not None:
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
        after = self._listed([_dumps({k: v for k, v in full.items() if k not in _HEAD_KEYS},
                                     default=json_default)])
        self._segment(record, record.op, 1, None, _LISTS, ([-1], after), False)
        self.pending = None       # statement records end the row before them (cdc.py)

    def add_error(self, error: dict, resumed_at=None) -> None:
        if resumed_at is None:
            resumed_at = error.get("resumed_at")
        info = dict(error, resumed_at=None if resumed_at is None else str(resumed_at))
        after = self._listed([_dumps({key: None if info.get(key) is None else str(info[key])
                                      for key in ERROR_KEYS})])
        place = _ErrorPlace(error.get("file"), error.get("pos"))
        self._segment(place, "error", 1, None, _LISTS, ([-1], after), False)

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

        # (an Arrow index made once: take converts a numpy one each call, 0.1 ms)
        segment_index = numpy_array(segment_of, pa.int32())

        def shared(i, arrow_type):
            return pa.array([s[i] for s in self.segments], arrow_type).take(segment_index)

        layout = np.repeat(np.array([s[8] for s in self.segments], np.int8), counts)
        first = np.repeat(np.array([s[9] if s[8] != _LISTS else 0 for s in self.segments], np.int64), counts)
        before = np.where(layout == _DELETE, first + within,
                          np.where(layout == _UPDATE, first + 2 * within, -1))
        after = np.where(layout == _INSERT, first + within,
                         np.where(layout == _UPDATE, first + 2 * within + 1, -1))
        for s, start, count in zip(self.segments, starts, counts, strict=True):
            if s[8] == _LISTS:
                before[start:start + count], after[start:start + count] = s[9]
        images = self._images()
        cdc = np.repeat(np.array([s[10] is not None for s in self.segments], bool), counts)
        row_base = np.repeat(np.array([s[10] or 0 for s in self.segments], np.int64), counts)
        # the last rows of transactions: commit, xid, end_pos from a small array by index
        # (0: a change's false/null/null, 1: a statement's nulls, 2 on: the ends)
        ends = sorted((r - carried, e) for r, e in self.ends.items() if r >= carried)
        pick = np.where(cdc, 0, 1).astype(np.int32)
        pick[[r for r, _ in ends]] = np.arange(2, 2 + len(ends), dtype=np.int32)
        pick = numpy_array(pick, pa.int32())
        arrays = [
            shared(0, pa.string()), shared(1, pa.int64()),
            shared(2, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            shared(3, pa.int64()), shared(4, pa.string()), shared(5, pa.string()),
            shared(6, pa.string()), shared(7, pa.string()),
            _pick(images, before), _pick(images, after),
            numpy_array(within + row_base, pa.int32(), ~cdc),
            shared(11, pa.list_(pa.string())),
            pa.array([False, None] + [e[0] for _, e in ends], pa.bool_()).take(pick),
            pa.array([None, None] + [e[1] for _, e in ends], XID_TYPE).take(pick),
            pa.array([None, None] + [e[2] for _, e in ends], pa.int64()).take(pick),
            shared(12, pa.string()),
        ]
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

    def _images(self) -> pa.Array:
        """The images of ``blobs`` as one string column (the NULs taken out)."""
        import numpy as np

        blob = b"".join(self.blobs)
        nuls = np.flatnonzero(np.frombuffer(blob, np.uint8) == 0)
        if len(nuls) != self.images:
            # JSON text never holds a raw NUL (control characters are escaped)
            raise ValueError(f"{len(nuls)} image ends for {self.images} images")
        offsets = np.empty(self.images + 1, np.int32)
        offsets[0] = 0
        offsets[1:] = nuls - np.arange(self.images)      # the NULs before each end, taken out
        images = pa.Array.from_buffers(pa.string(), self.images,
                                       [None, pa.py_buffer(offsets), pa.py_buffer(blob.replace(b"\0", b""))])
        images.validate(full=True)       # UTF-8, as pa.array of the bytes checked it
        return images


# how a segment's images lie in BatchBuilder.blobs
_INSERT, _DELETE, _UPDATE, _LISTS = 0, 1, 2, 3
_LAYOUTS = {"insert": _INSERT, "delete": _DELETE, "update": _UPDATE}


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


def _pick(images: pa.Array, index) -> pa.Array:
    """The images at ``index`` (-1: null)."""
    import numpy as np

    from .arrow_columns import numpy_array

    missing = index < 0
    if missing.all():
        return pa.nulls(len(index), pa.string())
    if len(index) == len(images) and not missing.any() and (index == np.arange(len(index))).all():
        return images         # every image, in order (a batch of inserts): no copy
    return images.take(numpy_array(np.where(missing, 0, index), pa.int64(), missing))


class EncodedImages:
    """The row images of one rows event as JSON, written by the compiled encoder
    (``_speedups.encode_rows``, the batch path of ``binlog dump --format json``) without
    a Python object per row or value: what the reader gives out for the event when
    ``images_encoder`` is its ``row_encoder``.  ``change``: the event's fields (a
    RowChange without images); ``data``: the images, each followed by a NUL (an update's
    before and after alternate); ``kind``: insert, update or delete; ``count``: rows."""

    __slots__ = ("change", "data", "kind", "count")

    def __init__(self, change, data: bytes, kind: str, count: int):
        self.change, self.data, self.kind, self.count = change, data, kind, count

    def _images(self) -> list:
        images = self.data.split(b"\0")
        images.pop()                  # after the last NUL
        return images

    @property
    def befores(self) -> list:
        """Per row, the before image's JSON bytes or None."""
        if self.kind == "insert":
            return [None] * self.count
        images = self._images()
        return images if self.kind == "delete" else images[0::2]

    @property
    def afters(self) -> list:
        """Per row, the after image's JSON bytes or None."""
        if self.kind == "delete":
            return [None] * self.count
        images = self._images()
        return images if self.kind == "insert" else images[1::2]


class ImagesEncoder:
    """A reader's ``row_encoder`` giving an ``EncodedImages`` per rows event, or None
    when the encoder cannot (no compiled module, partial JSON, anything it falls back
    on): the reader then decodes the event and gives a RowBatch (or the typed error).
    ``also``: ``(change, event) -> bool``, called with each event encoded (the typed
    tables' compiled columns, ``TypedWriter.add_event``); False makes it None too.

    Also the reader's ``run_writer``: once an event was encoded, the stream writes the
    next events like it (same table, kind and columns, in the same transaction) in one
    compiled call per run (``_speedups.encode_run``, flags 48: the images, and the typed
    columns through ``typed_part(change, event)`` - ``TypedWriter.run_part``: the part
    its builder takes, None for no typed rows, False for none of it in runs); the run
    comes out as one ``EncodedRows`` with ``events`` (``BatchBuilder.add_run``), no
    Python call per event."""

    run_tail = b""
    # a run's images end after this many bytes (~200 rows of the bench's tables): the
    # batches of changes/ stay near their size (a batch is cut between items)
    run_output = 1 << 16

    def __init__(self, binary_encoding: str = "hex", also=None, typed_part=None):
        self.render_bytes = bytes_renderer(binary_encoding)
        # 16: each image alone and a NUL after it, a byte JSON text never holds (the
        # encoder, like orjson, escapes every control character)
        self.flags = (2 if binary_encoding == "base64" else 0) | 16
        self.also = also
        self.typed_part = typed_part
        self.renders: dict = {}
        # (table_id, type code) -> the fields of the last event registered for runs
        # (the runs' events are like it: same transaction, table and kind)
        self.heads: dict = {}

    @property
    def run_flags(self) -> int:
        return self.flags | 32

    def _parts(self, change, event):
        """(walk, walk_after, render) of the event, None when the compiled encoder does
        not take it."""
        plan = change.plan
        if event.partial or not event.data or event.width != len(plan.columns):
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
            data, _, count = speedups.encode_rows(event.data, rows_module._KIND_CODES[event.kind],
                                                  walk[2], walk_after[2], walk[1], walk_after[1],
                                                  0, self.flags, b"", b"", b"", render)
        except speedups.Fallback:
            return None
        # (a NUL after each image: BatchBuilder._images checks their number per batch)
        if self.also is not None and not self.also(change, event):
            return None
        return EncodedImages(change, data, event.kind, count)

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
                     walk_after[1], b"", b"", render, typed)


def images_encoder(binary_encoding: str = "hex", also=None) -> ImagesEncoder:
    """The row encoder alone (``ImagesEncoder``), for a reader without runs."""
    return ImagesEncoder(binary_encoding, also)


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
    from binlog.reader import BinlogReader, ReaderHooks, ReaderOptions, RowBatch
    from binlog.replay.keys import KeyCatalog
    from binlog.rows import EncodedRows
    from binlog.sources.file import FileSource

    size = batch_size or opts.batch_size
    start_dt, stop_dt = opts.epochs()
    zone = opts.zone
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
        options = ReaderOptions(verify_checksums=opts.verify_checksums,
                                start_position=position if position > 4 else None,
                                stop_position=split.stop, start_datetime=start_dt,
                                stop_datetime=stop_dt, tz=zone, table_filter=table_filter,
                                infer_precision=opts.infer_precision, on_error=opts.on_error,
                                keys=keys)
        reader = BinlogReader(FileSource([split.path]), options, schema=schema,
                              hooks=ReaderHooks(on_damage=skip_damage))
        heads = None
        if on_rows is None and os.environ.get("BINLOG_BATCH", "1") != "0":
            # the images (and the typed columns) are written by compiled code
            # (BINLOG_BATCH=0 turns it off, as for binlog dump)
            encoder = ImagesEncoder(opts.binary_encoding, None if typed is None else typed.add_event,
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
