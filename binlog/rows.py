"""Row images: a rows event decoded against its TABLE_MAP.

A ``DecodePlan`` is built once per table layout (the TABLE_MAP's types and metadata,
plus what the schema adds) and reused for every row: it holds the column descriptions
and one decoder per column, so a row is a straight walk.  Columns whose decoder cannot
be chosen (a legacy temporal with unknown precision) get a decoder that raises when -
and only when - a non-NULL value of that column has to be read.

Row image layout (``sql/log_event_client.cc`` print_verbose_one_row; MySQL
``sql/rpl_record.cc`` unpack_row): a NULL bitmap with one bit per *present* column,
then the values of the present non-NULL columns in column order.  UPDATE rows are a
before image then an after image.  PARTIAL_UPDATE_ROWS puts between them a packed
value_options and, when it is 1, one bit per JSON column of the table saying which
after-image JSON values are diffs.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import timezone
from typing import Any

from .column import Column
from .column_kinds import (
    K_BIT,
    K_BLOB,
    K_DATE,
    K_DECIMAL,
    K_DOUBLE,
    K_DT0,
    K_DT2,
    K_DT_HIRES,
    K_ENUM,
    K_FLOAT,
    K_INT24,
    K_LONG,
    K_LONGLONG,
    K_PY,
    K_SHORT,
    K_STRING,
    K_TIME0,
    K_TIME2,
    K_TIME_HIRES,
    K_TINY,
    K_TS0,
    K_TS2,
    K_TS_HIRES,
    K_VARCHAR,
    K_YEAR,
)
from .constants import LEGACY_TEMPORAL_TYPES, ColumnType as T
from .errors import BinlogError, MalformedEventError, PrecisionUnknownError, TruncatedError
from .events.rows import UPDATE, RowsEvent
from .events.table_map import TableMapEvent
from .extensions import load_extension
from .types.strings import LARGE_VIEWS

# The optional compiled walk (binlog/_speedups*.c); BINLOG_PURE=1 forces pure Python.
_speedups = load_extension("_speedups")

_KIND_CODES = {"insert": 0, "update": 1, "delete": 2}

REMEDY = ("MariaDB 5.3+ does not write the precision N of legacy TIMESTAMP/DATETIME/TIME "
          "columns (mysql56_temporal_format=OFF) into the binlog, and no schema known here "
          "gives it. Pass the table's schema as of the binlog's start: --schema-ddl FILE "
          "(mariadb-dump --no-data), --schema-from mysql://user:pw@host/db, or a "
          "--schema-store kept up to date; or set it by hand with `binlog schema set "
          "DB.TABLE @N TYPE N --schema-store PATH`; or try --infer-precision")


@dataclass(frozen=True)
class PartialJson:
    """JSON diffs of a PARTIAL_UPDATE_ROWS after image whose base document is not in
    the before image (binlog_row_image=MINIMAL): rendered as {"$json_diffs": [...]}."""
    diffs: tuple

    def as_json(self) -> dict:
        ops = {0: "replace", 1: "insert", 2: "remove"}
        return {"$json_diffs": [{"op": ops.get(d[0], d[0]), "path": d[1],
                                 **({"value": d[2]} if d[0] != 2 else {})} for d in self.diffs]}


@dataclass
class DecodePlan:
    db: str
    table: str
    columns: list[Column]
    decoders: list
    json_columns: list[int]
    mariadb: bool = False           # written by MariaDB (the FDE's server version)
    by_key: dict = field(default_factory=dict)
    _walks: dict = field(default_factory=dict, repr=False)
    _counts: dict = field(default_factory=dict, repr=False)   # count_rows' packed walks

    def __post_init__(self):
        self.by_key = {c.key: c for c in self.columns}
        if len(self.by_key) != len(self.columns):
            # A server never names two columns alike; a hostile TABLE_MAP (or schema) can,
            # and one value would silently replace the other in every row.
            twice = next(key for key, n in Counter(c.key for c in self.columns).items() if n > 1)
            raise MalformedEventError(f"two columns are named {twice!r}: rows would lose one of them",
                                      table=f"{self.db}.{self.table}")

    def column_by_key(self, key):
        return self.by_key.get(key)

    def walk(self, present_bitmap: bytes, large: bool = False):
        """The precomputed walk of a row image with these present columns, cached:
        (NULL-bitmap size, [(null byte, null mask, key, decoder, column), ...], compiled).
        ``large`` (``large_event``): the compiled walk leaves MEDIUM/LONG BLOB/TEXT columns
        to their Python decoders, which give large values as views (``LARGE_VIEWS``)."""
        walk = self._walks.get((present_bitmap, large))
        if walk is None:
            present = present_columns(present_bitmap, len(self.columns))
            steps = tuple((k >> 3, 1 << (k & 7), self.columns[ci].key, self.decoders[ci],
                           self.columns[ci]) for k, ci in enumerate(present))
            nbytes = (len(present) + 7) >> 3
            compiled = None
            if _speedups is not None:
                compiled = _speedups.compile_walk(nbytes, tuple(
                    (byte, mask, key) + speed_spec(col, large) + (decode, col)
                    for byte, mask, key, decode, col in steps), len(present) == len(self.columns))
            walk = (nbytes, steps, compiled)
            self._walks[(present_bitmap, large)] = walk
        return walk

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.table}"


def _deferred_error(error: BinlogError):
    """A decoder that fails with ``error`` - a fresh copy each time: the copy gets the
    event's context (offset, type), and a plan serves many events, so one shared error
    object would keep naming the first event it failed in."""
    import copy

    def decode(buf, pos, end, col):
        raise copy.copy(error)
    return decode


def build_plan(table_map: TableMapEvent, *, legacy_precision_known_zero: bool, tz=None,
               schema=None, ts_offset: bool = False, mariadb: bool = False) -> DecodePlan:
    """Plan for a TABLE_MAP.  ``legacy_precision_known_zero``: the writer cannot produce
    MariaDB hires legacy columns (MySQL, or MariaDB < 5.3), so 7/12/11 mean N = 0.
    ``schema`` (optional) maps column index -> dict of known attributes (precision,
    name, unsigned...), supplied by the schema store.  ``ts_offset``: TIMESTAMP values
    in ISO 8601 with ``tz``'s offset (UTC when None); the Python decoders then render them
    (the compiled walk runs only for UTC wall-clock text)."""
    from .types import decoder_for

    columns, decoders = [], []
    for col in table_map.columns:
        col = replace(col, extra=dict(col.extra))
        if tz is not None:
            col.tz = tz
        if ts_offset and col.type in (T.TIMESTAMP, T.TIMESTAMP2):
            col.tz = tz or timezone.utc
            col.ts_offset = True
        if schema and col.index in schema:
            for key, value in schema[col.index].items():
                if value is not None:
                    setattr(col, key, value)
        if col.type in LEGACY_TEMPORAL_TYPES and col.precision is None and legacy_precision_known_zero:
            col.precision = 0
        try:
            decoder = decoder_for(col)
        except PrecisionUnknownError as exc:
            exc.add_context(table=table_map.qualified_name, column=col.label)
            exc.hint = exc.hint or REMEDY
            decoder = _deferred_error(exc)
        except BinlogError as exc:
            exc.add_context(table=table_map.qualified_name, column=col.label)
            decoder = _deferred_error(exc)
        columns.append(col)
        decoders.append(decoder)
    json_columns = [c.index for c in columns if c.type == T.JSON]
    return DecodePlan(table_map.db, table_map.table, columns, decoders, json_columns, mariadb)


# Kinds of the compiled walks (column_kinds, binlog/_column_kinds.h), by real column type.
_FIXED_KINDS: dict[int, int] = {T.TINY: K_TINY, T.SHORT: K_SHORT, T.INT24: K_INT24, T.LONG: K_LONG,
                T.LONGLONG: K_LONGLONG, T.FLOAT: K_FLOAT, T.DOUBLE: K_DOUBLE, T.YEAR: K_YEAR,
                T.DATE: K_DATE, T.DATETIME2: K_DT2, T.TIME2: K_TIME2, T.VARCHAR: K_VARCHAR,
                T.VAR_STRING: K_VARCHAR, T.STRING: K_STRING, T.BLOB: K_BLOB,
                T.TINY_BLOB: K_BLOB, T.MEDIUM_BLOB: K_BLOB, T.LONG_BLOB: K_BLOB,
                T.GEOMETRY: K_BLOB, T.NEWDECIMAL: K_DECIMAL, T.BIT: K_BIT, T.ENUM: K_ENUM}
_LEGACY_KINDS: dict[int, tuple[int, int]] = {T.TIMESTAMP: (K_TS0, K_TS_HIRES), T.DATETIME: (K_DT0, K_DT_HIRES),
                 T.TIME: (K_TIME0, K_TIME_HIRES)}


def large_event(event: RowsEvent) -> bool:
    """Whether a rows event is large enough to hold a ``LARGE_VIEWS`` value: only such
    events take the walk that gives large values as views (the output writers that set
    ``LARGE_VIEWS`` write them in pieces); every other event keeps the compiled decoders
    (a value is never larger than its event's rows data, compressed columns aside, which
    always have a Python decoder)."""
    threshold = LARGE_VIEWS.get()
    return threshold is not None and len(event.data) >= threshold


def speed_spec(col: Column, large: bool = False) -> tuple:
    """(kind, n, length, unsigned, precision, scale, pad_binary, encoding, labels) of a
    column for the compiled walk; kind K_PY calls the column's Python decoder."""
    t, n = col.type, col.precision
    kind = _FIXED_KINDS.get(t, K_PY)
    if t in _LEGACY_KINDS and n is not None and col.tz is None:
        kind = _LEGACY_KINDS[t][0 if n == 0 else 1]
    elif t == T.TIMESTAMP2 and col.tz is None:
        kind = K_TS2
    if kind in (K_DT2, K_TIME2, K_TS2, K_TS_HIRES, K_DT_HIRES, K_TIME_HIRES) and not (
            isinstance(n, int) and 0 <= n <= 6):
        kind = K_PY
    if kind == K_BLOB and t != T.GEOMETRY and col.length >= 3 and large:
        kind = K_PY      # MEDIUM/LONG BLOB/TEXT: decode_blob gives large values as views
    encoding = None if t == T.GEOMETRY else col.encoding
    labels = col.enum_values if t == T.ENUM else None
    precision = n if isinstance(n, int) else 0
    return (kind, precision if kind != K_DECIMAL else 0, col.length, int(col.unsigned),
            precision, col.scale, int(t == T.STRING and col.is_binary), encoding, labels)


def present_columns(bitmap: bytes, width: int) -> list[int]:
    return [i for i in range(width) if bitmap[i >> 3] >> (i & 7) & 1]


def decode_rows(event: RowsEvent, plan: DecodePlan) -> list:
    """(before, after) per row, dicts keyed by column key (name or @n); the whole event
    is decoded and must be consumed exactly."""
    if event.width != len(plan.columns):
        raise MalformedEventError(
            f"rows event has {event.width} columns, its TABLE_MAP has {len(plan.columns)}",
            table=plan.qualified_name)
    if event.partial:
        return list(_decode_partial(event, plan))
    data, end = event.data, len(event.data)
    large = large_event(event)
    walk = plan.walk(event.present, large)
    if end and not walk[0] and (event.kind != UPDATE or not plan.walk(event.after_present)[0]):
        # No column present: row images take no bytes, so the loop below would never advance.
        raise _at(MalformedEventError(f"{end} bytes of rows data but no column is present"),
                  event, plan, 0)
    if walk[2] is not None:
        walk_after = plan.walk(event.after_present, large) if event.kind == UPDATE else walk
        try:
            return _speedups.decode_event(data, _KIND_CODES[event.kind], walk[2], walk_after[2],
                                          walk[1], walk_after[1])
        except _speedups.Fallback:
            pass     # decode again in Python: it raises the typed error with its context
    out: list[tuple[dict | None, dict | None]] = []
    append = out.append
    pos = 0
    try:
        if event.kind == UPDATE:
            walk_after = plan.walk(event.after_present, large)
            while pos < end:
                before, pos = _image_fast(data, pos, end, walk)
                after, pos = _image_fast(data, pos, end, walk_after)
                append((before, after))
        elif event.kind == "insert":
            while pos < end:
                after, pos = _image_fast(data, pos, end, walk)
                append((None, after))
        else:
            while pos < end:
                before, pos = _image_fast(data, pos, end, walk)
                append((before, None))
    except _ValueError as failure:
        # the typed error the walk carried out, with where it happened (and its own cause)
        error = _at(failure.error, event, plan, failure.pos, failure.col)
        raise error from error.__cause__
    return out


@dataclass(slots=True)
class EncodedRows:
    """All rows of one rows event as output bytes (``encode_rows``): what a writer's
    ``encode_rows`` gives the reader and gets back, in item order, in ``write_encoded``.
    ``change``: the event's RowChange with no images (file, pos, db, table, op...);
    ``last_start``: where the last row's output starts; ``count``: rows.  A run of
    events the stream wrote in one call (``BinlogReader.set_output_paths``' run_writer)
    has no change but ``events``: (offset, type code, table_id, rows, size[, timestamp,
    server id]) of each, in order."""
    change: Any
    data: bytes
    last_start: int
    count: int
    events: list | None = field(default=None, kw_only=True)


def encode_rows(event: RowsEvent, plan: DecodePlan, text: bool, flags: int, head: bytes,
                mid: bytes, tail: bytes, render, crc_update=None) -> tuple | None:
    """The batch path: every row of ``event`` straight into output lines by the compiled
    encoder (``_speedups.encode_rows``: its docstring gives the layout, ``flags`` and
    ``render``), as (bytes, last_start, count); None when it cannot - no compiled module,
    a partial-JSON or empty event, or anything the encoder leaves to Python (it falls
    back): then ``decode_rows`` decodes the event and raises the typed error if any."""
    walks = _compiled_walks(event, plan)
    if walks is None:
        return None     # (a large event: its large values are written in pieces, per row)
    walk, walk_after = walks
    try:
        return _speedups.encode_rows(event.data, _KIND_CODES[event.kind], walk[2], walk_after[2],
                                     walk[1], walk_after[1], int(text), flags, head, mid, tail,
                                     render, crc_update)
    except _speedups.Fallback:
        return None


def _compiled_walks(event: RowsEvent, plan: DecodePlan) -> tuple | None:
    """(walk, walk after) of an event the compiled walks can take whole: not partial JSON,
    rows data present, as wide as the plan, not large (``large_event``: its large values
    are views written in pieces), some column present; None for any other."""
    if _speedups is None or event.partial or not event.data or event.width != len(plan.columns) \
            or large_event(event):
        return None
    walk = plan.walk(event.present)
    walk_after = plan.walk(event.after_present) if event.kind == UPDATE else walk
    if walk[2] is None or walk_after[2] is None or not (walk[0] or walk_after[0]):
        return None
    return walk, walk_after


def compiled_module():
    """binlog._speedups, or None (not built, or BINLOG_PURE=1)."""
    return _speedups


def after_checksums(event: RowsEvent, plan: DecodePlan, crc_update) -> list | None:
    """The TiCDC checksum (``binlog.checksum``) of each row's after image, None for a
    delete or a partial image, computed by the compiled walk from the event's bytes
    (``_speedups.checksum_rows``); None when it cannot - no compiled module, a partial-JSON
    or large event, anything it leaves to Python: the caller checksums the decoded rows."""
    walks = _compiled_walks(event, plan)
    if walks is None:
        return None
    walk, walk_after = walks
    try:
        return _speedups.checksum_rows(event.data, _KIND_CODES[event.kind], walk[2], walk_after[2],
                                       walk[1], walk_after[1], crc_update)
    except _speedups.Fallback:
        return None


def sql_values(event: RowsEvent, plan: DecodePlan, spec: bytes, render,
               before: bool = False, names: tuple | None = None) -> list | None:
    """The ``(v1, v2, ...)`` text of each row's image, as ``output.sql.literals.RowValues`` writes
    it (``spec``: one code per column, see ``_speedups.sql_values``): the after image of
    an insert or update event, the before image of an update (``before``) or a delete
    event, by the compiled walk from the event's bytes (with ``names``, one quoted name
    per column as bytes: ``n1 = v1, n2 = v2, ...``); None when it cannot (no compiled
    module, a partial image, a large or partial-JSON event, anything it leaves to Python):
    the caller renders the decoded rows."""
    width = len(plan.columns)
    kind = event.kind
    if len(spec) != width or (kind == "insert" and before) or (kind == "delete" and not before):
        return None
    walks = _compiled_walks(event, plan)
    if walks is None:
        return None
    walk, walk_after = walks
    if len(walk[1]) != width or len(walk_after[1]) != width:
        return None
    update = kind == UPDATE
    try:
        return _speedups.sql_values(event.data, int(update), walk[2], walk_after[2], walk[1],
                                    walk_after[1], spec, render, int(before and update), names)
    except _speedups.Fallback:
        return None


class _ValueError(Exception):
    """Carries a decoder's BinlogError out of the hot loop with where it happened."""

    def __init__(self, error, pos, col):
        self.error, self.pos, self.col = error, pos, col


def _image_fast(data, pos, end, walk):
    """One row image along a precomputed walk: (null byte, mask, key, decoder, column)."""
    nbytes, steps, _ = walk
    if pos + nbytes > end:
        raise _ValueError(TruncatedError(f"need {nbytes} bytes for the NULL bitmap, "
                                         f"{end - pos} left"), pos, None)
    nulls = data[pos:pos + nbytes]
    pos += nbytes
    row: dict[str, Any] = {}
    for byte, mask, key, decode, col in steps:
        if nulls[byte] & mask:
            row[key] = None
        else:
            try:
                row[key], pos = decode(data, pos, end, col)
            except BinlogError as exc:
                raise _ValueError(exc, pos, col) from exc
    return row, pos


def _decode_partial(event, plan):
    end = len(event.data)
    present = present_columns(event.present, event.width)
    present_after = present_columns(event.after_present, event.width)
    pos = 0
    while pos < end:
        before, pos = _image(event, plan, present, pos, end)
        partial_bits, pos = _partial_bits(event, plan, pos, end)
        after, pos = _image(event, plan, present_after, pos, end, partial_bits, before)
        yield before, after


def _image(event, plan, present, pos, end, partial_bits=None, before=None):
    nbytes = (len(present) + 7) >> 3
    if pos + nbytes > end:
        raise _at(TruncatedError(f"need {nbytes} bytes for the NULL bitmap, {end - pos} left"),
                  event, plan, pos)
    data = event.data
    nulls = data[pos:pos + nbytes]
    pos += nbytes
    columns, decoders = plan.columns, plan.decoders
    row: dict[str, Any] = {}
    for k, ci in enumerate(present):
        col = columns[ci]
        if nulls[k >> 3] >> (k & 7) & 1:
            row[col.key] = None
            continue
        start = pos
        try:
            if partial_bits is not None and ci in partial_bits:
                value, pos = _json_diff_value(data, pos, end, col, before)
            else:
                value, pos = decoders[ci](data, pos, end, col)
        except BinlogError as exc:
            _at(exc, event, plan, start, col)
            raise
        row[col.key] = value
    return row, pos


def _partial_bits(event, plan, pos, end):
    from .cursor import Cursor

    cur = Cursor(event.data, pos, end)
    options = cur.count("value_options")
    if options > 1:
        raise _at(MalformedEventError(f"value_options {options} is not 0 or 1"), event, plan, pos)
    if not options:
        return set(), cur.pos
    bits = cur.bitmap(len(plan.json_columns), "partial JSON bits")
    partial = {ci for k, ci in enumerate(plan.json_columns) if bits[k >> 3] >> (k & 7) & 1}
    return partial, cur.pos


def _json_diff_value(data, pos, end, col, before):
    from .types import apply_json_diffs, decode_json_diffs

    diffs, pos = decode_json_diffs(data, pos, end, col)
    if before is None or before.get(col.key) is None:
        # MINIMAL images: the document the diffs apply to is not in the binlog.
        return PartialJson(tuple(diffs)), pos
    return apply_json_diffs(before[col.key], diffs), pos


def _at(exc: BinlogError, event: RowsEvent, plan: DecodePlan, pos: int, col: Column | None = None):
    """Add where in the file (or in the decompressed rows block) the failure is."""
    exc.add_context(table=plan.qualified_name, column=col.label if col else None,
                    event_offset=event.offset, event_type=event.type_name)
    if event.compressed:
        exc.message += f" (byte {pos} of the decompressed rows data)"
        exc.add_context(field_offset=event.data_offset)
    else:
        exc.add_context(field_offset=event.data_offset + pos)
    return exc


def count_rows(event: RowsEvent, plan: DecodePlan) -> int:
    """How many rows ``event`` holds, from the value lengths alone (binlog stats): the
    images' framing is checked (every length, the exact end), the values are not
    decoded, so a value the decoder would reject is not an error here.  Events it cannot
    walk (PARTIAL_UPDATE_ROWS, columns of unknown length such as JSON or SET, bytes that
    do not frame) are decoded instead, which counts them or raises the typed error."""
    from . import scan

    if event.width == len(plan.columns) and not event.partial:
        before = _count_walk(plan, event.present)
        after = _count_walk(plan, event.after_present) if event.kind == UPDATE else before
        if before is not None and after is not None and (before[0] or not event.data):
            n = scan.count_rows(event.data, _KIND_CODES[event.kind], before[1], before[0],
                                after[1], after[0])
            if n >= 0:
                return n
    return len(decode_rows(event, plan))


def count_walk(event: RowsEvent, plan: DecodePlan) -> tuple | None:
    """(specs, nbytes, specs_after, nbytes_after): the walk ``scan.count_run`` counts
    events like ``event`` along (``count_rows``' walk), or None when it has none."""
    if event.width != len(plan.columns) or event.partial:
        return None
    before = _count_walk(plan, event.present)
    after = _count_walk(plan, event.after_present) if event.kind == UPDATE else before
    if before is None or after is None or not before[0]:
        return None
    return before[1], before[0], after[1], after[0]


def _count_walk(plan: DecodePlan, present: bytes):
    """(NULL-bitmap size, packed specs) of row images with these present columns, or
    None when a column's value length is not known without decoding it."""
    from .scan import SPEC

    walk = plan._counts.get(present, False)
    if walk is False:
        nbytes, steps, _ = plan.walk(present)
        packed = []
        for byte, mask, _key, _decode, col in steps:
            kind, n, length, _unsigned, precision, scale, *_ = speed_spec(col)
            if kind == K_PY:
                break
            packed.append(SPEC.pack(byte, mask, kind, n, length or 0, precision, scale or 0))
        walk = (nbytes, b"".join(packed)) if len(packed) == len(steps) else None
        plan._counts[present] = walk
    return walk
