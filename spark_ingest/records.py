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
    """Accumulates records column by column and hands out ``pyarrow.RecordBatch``es.
    Give it every item of the reader: rows (``add``), statements (``add_statement``) and
    events (``event``: transaction ends and TABLE_MAPs for the CDC fields).  ``keys``: a
    ``replay.keys.KeyCatalog`` for ``pk``; ``with_types``: fill ``types``."""

    def __init__(self, binary_encoding: str = "hex", *, keys=None, with_types: bool = False):
        self.render_bytes = bytes_renderer(binary_encoding)
        self.keys = keys
        self.fields = PlanFields(keys)
        self.with_types = with_types
        self._types: dict = {}
        self.pending: int | None = None   # index of the row whose commit fields are not known yet
        self.reset()

    def reset(self) -> None:
        # one list per column of the Arrow batch (None: null)
        self.file: list[str | None] = []
        self.pos: list[int | None] = []
        self.ts: list[int | None] = []
        self.server_id: list[int | None] = []
        self.gtid: list[str | None] = []
        self.db: list[str | None] = []
        self.table: list[str | None] = []
        self.op: list[str | None] = []
        self.before: list[bytes | None] = []      # JSON text (orjson)
        self.after: list[bytes | None] = []
        self.row: list[int | None] = []
        self.pk: list[list | None] = []           # the primary key's column names
        self.commit: list[bool | None] = []
        self.xid: list[int | None] = []
        self.end_pos: list[int | None] = []
        self.types: list[str | None] = []

    def __len__(self) -> int:
        return len(self.pos)

    def complete(self) -> int:
        """Rows whose every field is known (the rest wait for their transaction's end)."""
        return len(self.pos) if self.pending is None else self.pending

    def _no_cdc(self) -> None:
        self.row.append(None)
        self.pk.append(None)
        self.commit.append(None)
        self.xid.append(None)
        self.end_pos.append(None)
        self.types.append(None)

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
                i = self.pending
                self.commit[i], self.xid[i], self.end_pos[i] = end
            self.pending = None

    def broken(self) -> None:
        """The read restarts elsewhere (damage): the row waiting for its transaction's
        end never sees it."""
        self.pending = None

    def _image(self, row, plan):
        return None if row is None else image_json(row, plan, self.render_bytes)

    def add(self, change) -> None:
        self.file.append(change.file)
        self.pos.append(change.pos)
        self.ts.append(change.ts * 1_000_000)
        self.server_id.append(change.server_id)
        self.gtid.append(change.gtid)
        self.db.append(change.db)
        self.table.append(change.table)
        self.op.append(change.op)
        self.before.append(self._image(change.before, change.plan))
        self.after.append(self._image(change.after, change.plan))
        self.row.append(change.row)
        self.pk.append(self.fields.pk(change))
        self.commit.append(False)
        self.xid.append(None)
        self.end_pos.append(None)
        self.types.append(self._types_json(change))
        self.pending = len(self.pos) - 1

    def add_rows(self, batch, befores=None, afters=None) -> None:
        """A ``reader.RowBatch``: the rows of one rows event, as ``add`` takes each (the
        event's fields repeated, the images' JSON made in one pass); or, with
        ``befores``/``afters`` (their JSON, from ``EncodedImages``), ``batch`` holds the
        event's fields only."""
        if befores is None:
            rows = batch.rows
            befores = images_json([before for before, _ in rows], batch.plan, self.render_bytes)
            afters = images_json([after for _, after in rows], batch.plan, self.render_bytes)
        n = len(befores)
        if not n:
            return
        self.file += [batch.file] * n
        self.pos += [batch.pos] * n
        self.ts += [batch.ts * 1_000_000] * n
        self.server_id += [batch.server_id] * n
        self.gtid += [batch.gtid] * n
        self.db += [batch.db] * n
        self.table += [batch.table] * n
        self.op += [batch.op] * n
        self.before += befores
        self.after += afters
        self.row += range(n)
        self.pk += [self.fields.pk(batch)] * n
        self.commit += [False] * n
        self.xid += [None] * n
        self.end_pos += [None] * n
        self.types += [self._types_json(batch)] * n
        self.pending = len(self.pos) - 1

    def add_encoded(self, item: "EncodedImages") -> None:
        """An ``EncodedImages``: a rows event's images written by the compiled encoder."""
        self.add_rows(item.change, item.befores, item.afters)

    def add_statement(self, record) -> None:
        """A ``reader.StatementChange``: its JSON record's extra keys go in ``after``."""
        full = statement_record(record, self.render_bytes)
        self.file.append(record.file)
        self.pos.append(record.pos)
        self.ts.append(record.ts * 1_000_000)
        self.server_id.append(record.server_id)
        self.gtid.append(record.gtid)
        self.db.append(record.db)
        self.table.append(record.table)
        self.op.append(record.op)
        self.before.append(None)
        self.after.append(_dumps({k: v for k, v in full.items() if k not in _HEAD_KEYS},
                                 default=json_default))
        self._no_cdc()
        self.pending = None       # statement records end the row before them (cdc.py)

    def add_error(self, error: dict, resumed_at=None) -> None:
        if resumed_at is None:
            resumed_at = error.get("resumed_at")
        self.file.append(error.get("file"))
        self.pos.append(error.get("pos"))
        self.ts.append(None)
        self.server_id.append(None)
        self.gtid.append(None)
        self.db.append(None)
        self.table.append(None)
        self.op.append("error")
        self.before.append(None)
        info = dict(error, resumed_at=None if resumed_at is None else str(resumed_at))
        self.after.append(_dumps({key: None if info.get(key) is None else str(info[key])
                                  for key in ERROR_KEYS}))
        self._no_cdc()

    def batch(self, *, final: bool = False) -> pa.RecordBatch:
        """The rows gathered; unless ``final``, the rows from the one waiting for its
        transaction's end on stay for the next batch."""
        cut = len(self.pos) if final else self.complete()
        columns = [getattr(self, name) for name in COLUMNS]
        # orjson gives UTF-8 bytes: pa.string() takes them as they are
        arrays = [
            pa.array(self.file[:cut], pa.string()), pa.array(self.pos[:cut], pa.int64()),
            pa.array(self.ts[:cut], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            pa.array(self.server_id[:cut], pa.int64()), pa.array(self.gtid[:cut], pa.string()),
            pa.array(self.db[:cut], pa.string()), pa.array(self.table[:cut], pa.string()),
            pa.array(self.op[:cut], pa.string()), pa.array(self.before[:cut], pa.string()),
            pa.array(self.after[:cut], pa.string()),
            pa.array(self.row[:cut], pa.int32()), pa.array(self.pk[:cut], pa.list_(pa.string())),
            pa.array(self.commit[:cut], pa.bool_()), pa.array(self.xid[:cut], XID_TYPE),
            pa.array(self.end_pos[:cut], pa.int64()), pa.array(self.types[:cut], pa.string()),
        ]
        out = pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)
        rest = [column[cut:] for column in columns]
        self.reset()
        for name, column in zip(COLUMNS, rest, strict=True):
            getattr(self, name).extend(column)
        if self.pending is not None:
            self.pending = None if final else self.pending - cut
        return out


class EncodedImages:
    """The row images of one rows event as JSON, written by the compiled encoder
    (``_speedups.encode_rows``, the batch path of ``binlog dump --format json``) without
    a Python object per row or value: what the reader gives out for the event when
    ``images_encoder`` is its ``row_encoder``.  ``change``: the event's fields (a
    RowChange without images); ``befores``/``afters``: per row, JSON bytes or None."""

    __slots__ = ("change", "befores", "afters", "count")

    def __init__(self, change, befores: list, afters: list):
        self.change, self.befores, self.afters = change, befores, afters
        self.count = len(befores)


def images_encoder(binary_encoding: str = "hex", also=None):
    """A reader's ``row_encoder`` giving an ``EncodedImages`` per rows event, or None
    when the encoder cannot (no compiled module, partial JSON, anything it falls back
    on): the reader then decodes the event and gives a RowBatch (or the typed error).
    ``also``: ``(change, event) -> bool``, called with each event encoded (the typed
    tables' compiled columns, ``TypedWriter.add_event``); False makes it None too."""
    from binlog import rows as rows_module
    from binlog.output.json_lines import value_json

    render_bytes = bytes_renderer(binary_encoding)
    # 16: each image alone and a NUL after it, a byte JSON text never holds (the
    # encoder, like orjson, escapes every control character)
    flags = (2 if binary_encoding == "base64" else 0) | 16
    renders: dict = {}

    def encode(change, event):
        speedups = rows_module._speedups
        if speedups is None or event.partial or not event.data:
            return None
        plan = change.plan
        if event.width != len(plan.columns):
            return None
        update = event.kind == "update"
        walk = plan.walk(event.present)
        walk_after = plan.walk(event.after_present) if update else walk
        if walk[2] is None or walk_after[2] is None:
            return None
        render = renders.get(id(plan))
        if render is None or render[0] is not plan:
            render = renders[id(plan)] = (plan, value_json(plan, render_bytes))
        try:
            data, _, count = speedups.encode_rows(event.data, rows_module._KIND_CODES[event.kind],
                                                  walk[2], walk_after[2], walk[1], walk_after[1],
                                                  0, flags, b"", b"", b"", render[1])
        except speedups.Fallback:
            return None
        images = data.split(b"\0")
        images.pop()                  # after the last NUL
        if len(images) != (2 * count if update else count):
            return None
        if also is not None and not also(change, event):
            return None
        if event.kind == "insert":
            return EncodedImages(change, [None] * count, images)
        if event.kind == "delete":
            return EncodedImages(change, images, [None] * count)
        return EncodedImages(change, images[0::2], images[1::2])
    return encode


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
               on_rows=None, on_event=None):
    """Arrow batches of the change records of one split (see plan.Split).  ``keys``: the
    plan's key ring (``ReadPlan.key_ring()``) for encrypted binlogs; ``on_rows`` is also
    given every decoded rows event's ``reader.RowBatch`` (the typed tables), and
    ``on_event`` (``TypedWriter.add_event``) every rows event the compiled encoder
    writes: when it returns False, the event is decoded and goes to ``on_rows``."""
    from binlog.reader import BinlogReader, ReaderHooks, ReaderOptions, RowBatch, StatementChange
    from binlog.replay.keys import KeyCatalog
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
        if (on_rows is None or on_event is not None) and os.environ.get("BINLOG_BATCH", "1") != "0":
            # the images (and the typed columns) are written by compiled code
            # (BINLOG_BATCH=0 turns it off, as for binlog dump)
            reader.row_encoder = images_encoder(opts.binary_encoding, on_event)
        position = None
        builder.broken()
        try:
            for item in reader.items(statements=True, batches=True):
                if isinstance(item, RowBatch):
                    builder.add_rows(item)
                    if on_rows is not None:
                        on_rows(item)
                elif isinstance(item, EncodedImages):
                    builder.add_encoded(item)
                elif isinstance(item, StatementChange):
                    builder.add_statement(item)
                else:
                    builder.event(item)
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
