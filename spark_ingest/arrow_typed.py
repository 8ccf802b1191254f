"""Typed per-table output written from decoded rows with Arrow (the local engine).

The same tables as ``typed`` (which Spark projects from the JSON images of changes/ with
``from_json`` and ``try_cast``), made from the rows the reader decoded, without a JVM:
the column list and types come from ``typed.table_columns`` (one definition for both
engines), and each value goes through the steps Spark's expression takes, so the two
outputs hold the same values:

1. the value as ``binlog dump`` renders it (``render_row``): what the JSON image holds;
2. its text as Spark's ``from_json`` gives it to a STRING field: a JSON string as
   itself, any other value as Jackson writes it (``1.0E20``, ``{"a":1}``);
3. that text cast like Spark's ``try_cast``: NULL where the cast fails (a zero date, a
   DECIMAL wider than its column).

Files: ``tables/<db>.<table>/_run=<N>/_date=<YYYY-MM-DD>/part-<split>-<i>.parquet``,
written under a hidden name and renamed when complete, as ``writer`` does for changes/.
"""
from __future__ import annotations

import math
import os
import re
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from functools import lru_cache

import orjson
import pyarrow as pa

from binlog.output.paths import inside, table_dir_name
from binlog.output.values import _render_bytes, _render_keys, json_default

from .arrow_columns import ArrowRows
from .background import COMPRESSION, parquet_writer
from .partitions import DEFAULT_PARTITION, escape_path_name
from .writer import finish_file

META_COLUMNS = (("_file", pa.string()), ("_pos", pa.int64()), ("_ts", pa.timestamp("us", tz="UTC")),
                ("_server_id", pa.int64()), ("_gtid", pa.string()), ("_op", pa.string()))
TYPED_OPS = ("insert", "update", "delete")
# A table's rows are written as a row group at this many rows, or at GROUP_BYTES of
# typed columns, whichever comes first; past MAX_BUFFERED_BYTES over all of a split's
# tables the largest is written (memory bounded by row groups, not by the input).  8 MB:
# the string columns of a table no schema describes reach it long before 65,536 rows
# (peak RSS of the 204.7 MB bench binlog without a schema: 374 MiB at 32 MB, 285 at 16;
# written with binlog_row_metadata=NO_LOG, its text as {"bytes_hex": ...}: 301-319 MiB at
# 16 MB, 287 at 8 and at 4, as with a schema; the same CPU)
ROWS_PER_GROUP = 65_536
GROUP_BYTES = 8 << 20
MAX_BUFFERED_BYTES = 32 << 20
# a row held as Python values (its image dicts, the typed values): ~4 KiB measured for
# the bench tables' 12 mixed columns (65,536 such rows held ~270 MiB), for that bound
_PYTHON_ROW_BYTES = 4096
_INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


def arrow_type(spark_type: str) -> pa.DataType:
    """The Arrow type Spark reads back as ``spark_type`` (typed.spark_type_sql's names)."""
    simple = {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
              "float": pa.float32(), "double": pa.float64(), "date": pa.date32(),
              "timestamp_ntz": pa.timestamp("us"), "timestamp": pa.timestamp("us", tz="UTC"),
              "binary": pa.binary(), "string": pa.string()}
    if spark_type in simple:
        return simple[spark_type]
    m = _DECIMAL.match(spark_type)
    if m is None:
        raise ValueError(f"no Arrow type for Spark type {spark_type!r}")
    return pa.decimal128(int(m.group(1)), int(m.group(2)))


def table_schema(columns) -> pa.Schema:
    fields = [pa.field(name, arrow_type(kind)) for name, kind in columns]
    out = [pa.field(n, t) for n, t in META_COLUMNS] + fields
    if columns:
        out.append(pa.field("_before", pa.struct(fields)))
    return pa.schema(out)


# -- step 2: the text from_json gives a STRING field ------------------------------------

def java_double(value: float) -> str:
    """``Double.toString``: what Jackson writes for a JSON number read as a double."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exp = _shortest(abs(value))
    if 1e-3 <= abs(value) < 1e7:
        point = exp + 1                     # digits before the decimal point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp}"


def _shortest(value: float) -> tuple[str, int]:
    """The shortest round-tripping digits of a positive finite ``value`` (``repr``'s)
    and the exponent of the first."""
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # leading zeros (0.001) move the first digit right of the point
    first = len(whole) - 1 - (len(whole) + len(fraction) - len(digits)) + int(exponent or 0)
    return digits.rstrip("0") or "0", first


def jackson_text(value) -> str | None:
    """A rendered value as the string Spark's JSON reader gives a STRING field."""
    return None if value is None else _jackson_scalar(value)


def _jackson_scalar(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    return _jackson_json(value)


def _jackson_json(value) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(orjson.dumps(str(k)).decode() + ":" + _jackson_json(v)
                              for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_jackson_json(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    return _jackson_scalar(value)


# -- step 3: try_cast -------------------------------------------------------------------

_INTEGER = re.compile(r"^[+-]?\d+$")
_HEX = re.compile(r"[0-9A-Fa-f]*")
_DATE = re.compile(r"^([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[ T].*)?$")
_DATETIME = re.compile(r"^(\d{4,7})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?)?$")
_EPOCH = datetime(1970, 1, 1)


# UTF8String.trimAll: every character <= U+0020 at either end
_TRIMMED = "".join(chr(c) for c in range(0x21))


def _trim(text: str) -> str:
    return text.strip(_TRIMMED)


@lru_cache(maxsize=4096)        # rows of a batch mostly share a few days
def _days(year: int, month: int, day: int) -> int | None:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 included, as Java's
    LocalDate); None for an invalid date (0000-00-00, 2024-02-30)."""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day > (29 if leap else 28) if month == 2 else day > (30 if month in (4, 6, 9, 11) else 31):
        return None
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def cast_int(bits: int):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def cast(text):
        text = _trim(text)
        if not _INTEGER.match(text):
            return None
        value = int(text)
        return value if lo <= value <= hi else None
    return cast


def cast_decimal(precision: int, scale: int):
    quantum = Decimal(1).scaleb(-scale)
    limit = Decimal(10) ** (precision - scale)

    def cast(text):
        try:
            value = Decimal(_trim(text))
        except InvalidOperation:
            return None
        if not value.is_finite() or value.adjusted() > precision - scale:
            return None             # (also what would not fit _WIDE's digits)
        value = value.quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE)
        return value if value.copy_abs() < limit else None
    return cast


# Room for DECIMAL(38,s)'s digits: the default context's 28 made quantize raise on them
_WIDE = Context(prec=80)


def cast_float(text):
    try:
        return float(_trim(text))
    except ValueError:
        return None


def _canonical(text: str, size: int) -> bool:
    """``YYYY-MM-DD`` (size 10) or ``YYYY-MM-DD HH:MM:SS`` (19), ASCII digits, optionally
    followed by ``.`` and 1-6 digits: the text ``binlog dump`` gives, which the regular
    expressions below read the same way as these slices."""
    n = len(text)
    if not (n == size or (size == 19 and 21 <= n <= 26 and text[19] == ".")):
        return False
    if text[4] != "-" or text[7] != "-" or not text.isascii():
        return False
    if size == 10:
        return (text[:4] + text[5:7] + text[8:]).isdigit()
    return (text[10] in " T" and text[13] == ":" and text[16] == ":"
            and (text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
                 + text[20:]).isdigit())


def cast_date(text):
    text = _trim(text)
    if _canonical(text, 10):
        return _days(int(text[:4]), int(text[5:7]), int(text[8:]))
    return _date_pattern(text)


def _date_pattern(text: str) -> int | None:
    m = _DATE.match(text)
    if m is None:
        return None
    return _days(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))


def _micros(text) -> int | None:
    text = text.strip(_TRIMMED)
    if not _canonical(text, 19):
        return _micros_pattern(text)
    # the 14 digits read as one number (a column's values: one int() each, not six)
    fields = int(text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19])
    date, time = divmod(fields, 1_000_000)
    days = _days(date // 10_000, date // 100 % 100, date % 100)
    h, mi, s = time // 10_000, time // 100 % 100, time % 100
    if days is None or h > 23 or mi > 59 or s > 59:
        return None
    frac = text[20:]
    return (days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000 + (int(frac.ljust(6, "0")) if frac else 0)


def _micros_pattern(text: str) -> int | None:
    m = _DATETIME.match(text)
    return None if m is None else _micros_of(*m.groups())


def _micros_of(y, mo, d, h, mi, s, frac) -> int | None:
    days = _days(int(y), int(mo), int(d))
    h, mi, s = int(h or 0), int(mi or 0), int(s or 0)
    if days is None or h > 23 or mi > 59 or s > 59:
        return None
    usec = int((frac or "").ljust(6, "0")[:6] or 0)
    return ((days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000) + usec


def cast_timestamp(zone):
    def cast(text):
        local = _micros(text)
        if local is None or zone is None:
            return local
        wall = _EPOCH + _delta(local)
        # a wall-clock time in a zone: the earlier offset in an overlap, the offset
        # before the change in a gap (fold=0), as java.time's ZonedDateTime.of
        offset = wall.replace(tzinfo=zone).utcoffset()
        return local - (offset.days * 86400 + offset.seconds) * 1_000_000
    return cast


def _delta(micros: int):
    from datetime import timedelta

    return timedelta(microseconds=micros)


def cast_binary(encoding: str):
    import binascii

    def unhex(text):
        if not _HEX.fullmatch(text):
            return None
        return bytes.fromhex(("0" + text) if len(text) % 2 else text)

    def unbase64(text):
        try:
            return binascii.a2b_base64(text, strict_mode=True)
        except (binascii.Error, ValueError):
            return None
    return unhex if encoding == "hex" else unbase64


def caster(spark_type: str, *, zone=None, binary_encoding: str = "hex"):
    """text -> the value ``try_cast(text AS spark_type)`` gives (None where it fails)."""
    if spark_type in _INT_RANGES:
        return cast_int(_INT_RANGES[spark_type])
    if spark_type in ("float", "double"):
        return cast_float
    if spark_type == "date":
        return cast_date
    if spark_type == "timestamp_ntz":
        return cast_timestamp(None)
    if spark_type == "timestamp":
        return cast_timestamp(zone)
    if spark_type == "binary":
        return cast_binary(binary_encoding)
    if spark_type == "string":
        return lambda text: text
    m = _DECIMAL.match(spark_type)
    if m is None:           # (typed.table_columns maps every column kind to one of the above)
        raise ValueError(f"no cast to the Spark type {spark_type!r}")
    return cast_decimal(int(m.group(1)), int(m.group(2)))


def _text_value(value) -> str | None:
    # what the JSON image holds for a value render_row left alone (DECIMAL, partial JSON)
    if value is None or isinstance(value, (str, int, float, bool, dict, list)):
        return jackson_text(value)
    return jackson_text(json_default(value))


def typed_value(value, cast):
    """One rendered image value as its typed column holds it: steps 2 and 3."""
    text = _text_value(value)
    return None if text is None else cast(text)


# -- a whole column at once ---------------------------------------------------------------
#
# The steps above for every value of a column, with shortcuts where a value's Python type
# says what they give (each one equal to the full steps; tests/spark_ingest/test_batch_path.py
# checks them against ``typed_value``): a string is its own text, so only the cast runs;
# an int in an integer column's range is itself; a float is itself in a FLOAT or DOUBLE
# column (Jackson's shortest digits read back give the same double).

def _column_caster(spark_type: str, cast):
    """values -> typed values of a column of ``spark_type`` (``cast``: ``caster``'s)."""
    def general(values):
        return [cast(v) if type(v) is str else (None if v is None else typed_value(v, cast))
                for v in values]

    if spark_type == "string":
        # jackson_text: an int as str(); a float as Double.toString
        return lambda values: [v if type(v) is str or v is None else str(v) if type(v) is int
                               else java_double(v) if type(v) is float else typed_value(v, cast)
                               for v in values]
    if spark_type in _INT_RANGES:
        bits = _INT_RANGES[spark_type]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return lambda values: [v if type(v) is int and lo <= v <= hi else
                               None if v is None else typed_value(v, cast) for v in values]
    if spark_type in ("float", "double"):
        return lambda values: [v if type(v) is float or v is None else typed_value(v, cast)
                               for v in values]
    if _DECIMAL.match(spark_type):
        # a DECIMAL value's text is its exact digits (json_default)
        return lambda values: [cast(v) if type(v) is str else cast(format(v, "f"))
                               if type(v) is Decimal else None if v is None else typed_value(v, cast)
                               for v in values]
    return general


def _render_columns(plan) -> dict:
    """{key: Column} of the columns whose values ``render_row`` changes (bytes, DECIMAL,
    partial JSON), cached on the plan."""
    cols = getattr(plan, "_typed_render", None)
    if cols is None:
        cols = plan._typed_render = dict(_render_keys(plan))
    return cols


def _rendered(value, col, render_bytes, binary: bool):
    """A decoded value as ``render_row`` renders it in column ``col``; for a BINARY
    column the bytes themselves (what the hex or base64 text casts back to)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        if binary and not col.charset_unknown:
            return _Typed(bytes(value))
        return _render_bytes(value, col, render_bytes)
    if isinstance(value, Decimal):
        return format(value, "f")
    if hasattr(value, "as_json"):
        return value.as_json()
    return value


class _Typed:
    """A value already typed (the bytes of a BINARY column): passed through the casts."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# -- the rows of one table --------------------------------------------------------------

class TableRows:
    """Typed rows of one table, for one (table, day): the changes' fields and their row
    images as they come, typed column by column when the rows are written."""

    def __init__(self, columns, schema: pa.Schema, casts, render_bytes=None):
        self.columns = columns
        self.schema = schema
        self.casts = [_column_caster(kind, cast) for (_, kind), cast in zip(columns, casts, strict=True)]
        self.render_bytes = render_bytes
        self.meta: list[list] = [[] for _ in META_COLUMNS]
        self.images: list = []           # the image typed into the columns, per row
        self.befores: list = []          # the before image of an update, else None
        self.plans: list = []            # the decode plan of raw images; None: rendered
        self.plan_set: dict = {}         # id -> each plan in plans
        self._plan = None
        self.some_rendered = False       # rows added with rendered images

    def __len__(self) -> int:
        return len(self.meta[0])

    def nbytes(self) -> int:
        return _PYTHON_ROW_BYTES * len(self.meta[0])

    def add(self, change, before: dict | None, after: dict | None, plan=None) -> None:
        """A row change; ``before``/``after`` decoded by ``plan``, or rendered images
        (``render_row``'s, or JSON read back) when ``plan`` is None."""
        for column, value in zip(self.meta, (change.file, change.pos, change.ts * 1_000_000,
                                             change.server_id, change.gtid, change.op), strict=True):
            column.append(value)
        self.images.append(before if change.op == "delete" else after)
        self.befores.append(before if change.op == "update" and self.columns else None)
        self.plans.append(plan)
        if plan is None:
            self.some_rendered = True
        elif plan is not self._plan:
            self._plan = plan
            self.plan_set[id(plan)] = plan

    def add_rows(self, batch) -> None:
        """The rows of a ``reader.RowBatch`` (decoded images, its plan), as ``add``."""
        rows, n, op, plan = batch.rows, len(batch.rows), batch.op, batch.plan
        for column, value in zip(self.meta, (batch.file, batch.pos, batch.ts * 1_000_000,
                                             batch.server_id, batch.gtid, op), strict=True):
            column += [value] * n
        if op == "delete":
            self.images += [before for before, _ in rows]
        else:
            self.images += [after for _, after in rows]
        if op == "update" and self.columns:
            self.befores += [before for before, _ in rows]
        else:
            self.befores += [None] * n
        self.plans += [plan] * n
        if plan is not self._plan:
            self._plan = plan
            self.plan_set[id(plan)] = plan

    def _values(self, images, name: str, kind: str, column_cast) -> list:
        values = [None if image is None else image.get(name) for image in images]
        renders = {key: _render_columns(plan).get(name) for key, plan in self.plan_set.items()}
        if any(col is not None for col in renders.values()):
            binary, render = kind == "binary", self.render_bytes
            if len(self.plan_set) == 1 and not self.some_rendered:
                col = renders.popitem()[1]
                values = [_rendered(v, col, render, binary) for v in values]
            else:
                cols = [None if plan is None else renders[id(plan)] for plan in self.plans]
                values = [v if col is None else _rendered(v, col, render, binary)
                          for v, col in zip(values, cols, strict=True)]
            typed = [v for v in values if type(v) is _Typed]
            if typed:
                out = column_cast([None if type(v) is _Typed else v for v in values])
                return [v.value if type(v) is _Typed else o for v, o in zip(values, out, strict=True)]
        return column_cast(values)

    def _arrays(self, images) -> list:
        return [pa.array(self._values(images, name, kind, cast), field.type)
                for (name, kind), cast, field in zip(self.columns, self.casts,
                                                     list(self.schema)[len(META_COLUMNS):], strict=False)]

    def table(self) -> pa.Table:
        arrays = [pa.array(values, field.type) for values, field in zip(self.meta, self.schema, strict=False)]
        arrays += self._arrays(self.images)
        if self.columns:
            struct = self.schema.field("_before").type
            mask = pa.array([b is None for b in self.befores], pa.bool_())
            arrays.append(pa.StructArray.from_arrays(self._arrays(self.befores), fields=list(struct),
                                                     mask=mask))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _columns_of(schema: pa.Schema) -> list[str]:
    """The table's own columns in a typed table's schema (no META_COLUMNS, no _before)."""
    names = schema.names[len(META_COLUMNS):]
    return names[:-1] if names else names


def _utc_day(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d")


class TypedWriter:
    """The typed rows of one split (or of one table on the driver), written under
    ``tables_dir``; ``columns_of(db, table)`` gives [(name, Spark type)]."""

    def __init__(self, tables_dir: str, run: int, index: int, columns_of, *, zone=None,
                 binary_encoding: str = "hex", background=None, codec: str = COMPRESSION):
        from binlog.output.values import bytes_renderer

        from .background import Inline

        self.background = background or Inline()   # runs the writes (background.Background)
        self.codec = codec                          # the files' compression
        self.tables_dir = tables_dir
        self.run = run
        self.index = index
        self.columns_of = columns_of
        self.zone = zone
        self.binary_encoding = binary_encoding
        self.render_bytes = bytes_renderer(binary_encoding)
        # (db, table) -> (columns, schema, casts), None: columns_of does not know it
        self.tables: dict[tuple[str, str], tuple[list, pa.Schema, list] | None] = {}
        self.rows: dict = {}             # (db, table, day) -> TableRows or arrow_columns.ArrowRows
        self.pieces: dict = {}           # (db, table, day) -> [pa.Table]: rows set aside, not written yet
        self._events = 0                 # events added, for the check of all buffers' size
        self.writers: dict = {}          # (db, table, day) -> (ParquetWriter, temp, final)
        self.opened = 0
        self.schemaless: set = set()     # tables columns_of does not know
        self.files: dict = {}            # (db, table) -> [(final path, its table's columns)]
        self._last_ts: int | None = None
        self._last_day = ""

    def _table(self, db, table):
        key = (db, table)
        if key not in self.tables:
            columns = self.columns_of(db, table)
            if columns is None:
                self.tables[key] = None
                return None
            casts = [caster(kind, zone=self.zone, binary_encoding=self.binary_encoding)
                     for _, kind in columns]
            self.tables[key] = (columns, table_schema(columns), casts)
        return self.tables[key]

    def add(self, change) -> None:
        """A decoded row change (``reader.RowChange``; with ``plan`` None, its images
        already rendered, as JSON read back gives them): its images are rendered and typed
        column by column when its rows are written."""
        if change.op not in TYPED_OPS:
            return
        self._add(change, change.before, change.after, change.plan)

    def add_batch(self, batch) -> None:
        """The rows of one rows event (``reader.RowBatch``), as ``add`` takes each."""
        if batch.op not in TYPED_OPS:
            return
        key = (batch.db, batch.table, self._day(batch.ts))
        rows = self._python_rows(key, batch.db, batch.table)
        if rows is None:
            return
        rows.add_rows(batch)
        self._written(key, rows)

    def add_event(self, change, event) -> bool:
        """The rows of one rows event typed by the compiled walk (``arrow_columns``)
        straight from its bytes; ``change``: the event's fields.  False (nothing added)
        when the compiled code cannot: the caller decodes the event and gives the rows
        to ``add_batch``."""
        if change.op not in TYPED_OPS:
            return True
        ts = change.ts
        key = (change.db, change.table, self._last_day if ts == self._last_ts else self._day(ts))
        rows = self.rows.get(key)
        if type(rows) is not ArrowRows:
            table = self._table(change.db, change.table)
            if table is None:
                self.schemaless.add((change.db, change.table))
                return True
            columns, schema, _ = table
            fresh = ArrowRows(columns, schema, self.zone, len(META_COLUMNS))
            if fresh.builder is None:
                return False
            self._set_aside(key)
            rows = self.rows[key] = fresh
        if not rows.add_event(change, event):
            return False
        self._written(key, rows)
        return True

    def run_part(self, change, event):
        """The typed part of ``records.ImagesEncoder.run_parts`` for events like ``event``,
        which ``add_event`` just took: what the compiled run fills (``ArrowRows.run_part``),
        None when such events add no typed rows (a table no schema describes), False when
        they cannot go in runs (typed the Python way)."""
        if change.op not in TYPED_OPS:
            return None
        rows = self.rows.get((change.db, change.table, self._day(change.ts)))
        if type(rows) is ArrowRows:
            start = change.ts - change.ts % 86_400          # its UTC day (_utc_day)
            part = rows.run_part(change, event, (start, start + 86_400), ROWS_PER_GROUP, GROUP_BYTES)
            return False if part is None else part
        if rows is None and (change.db, change.table) in self.schemaless:
            return None
        return False

    def add_run(self, item, heads: dict) -> None:
        """A run of events whose rows ``_speedups.encode_run`` typed into the builders of
        ``run_part``: their fields (``heads``: ``records.ImagesEncoder.heads``)."""
        touched: dict = {}
        for at, code, table_id, count, _size, ts, server_id, _first in item.events:
            head = heads[(table_id, code)]
            if head.op not in TYPED_OPS or (head.db, head.table) in self.schemaless:
                continue
            key = (head.db, head.table, self._day(ts))
            rows = self.rows.get(key)
            if type(rows) is not ArrowRows:       # (run_part gave the run its builder)
                raise RuntimeError(f"typed rows of {key} missing for a run at {head.file}:{at}")
            rows.add_fields(head.file, at, ts, server_id, head.gtid, head.op, count)
            touched[key] = rows
        self._events += len(item.events) - len(touched)   # (each _written below counts one)
        for key, rows in touched.items():
            self._written(key, rows)

    def known(self, db, table) -> bool:
        """Whether ``columns_of`` gives the table's columns."""
        return self._table(db, table) is not None

    def rows_of(self, key, make):
        """The rows held for ``key`` (db, table, day), made by ``make()`` when none are:
        rows of another kind (``shredded.ShreddedRows``) written with the others."""
        rows = self.rows.get(key)
        if rows is None:
            rows = self.rows[key] = make()
        return rows

    def written(self, key, rows) -> None:
        """``rows`` (``rows_of``'s) took rows: a row group is written when they fill one."""
        self._written(key, rows)

    def _python_rows(self, key, db, table):
        rows = self.rows.get(key)
        if type(rows) is not TableRows:
            found = self._table(db, table)
            if found is None:
                self.schemaless.add((db, table))
                return None
            self._set_aside(key)
            columns, schema, casts = found
            rows = self.rows[key] = TableRows(columns, schema, casts, render_bytes=self.render_bytes)
        return rows

    def _set_aside(self, key) -> None:
        """The rows of ``key`` gathered the other way (compiled or Python) become a table
        of their own, written before the rows that follow (rows stay in order)."""
        rows = self.rows.pop(key, None)
        if rows is not None and len(rows):
            self.pieces.setdefault(key, []).append(rows.table())

    def _written(self, key, rows) -> None:
        if len(rows) >= ROWS_PER_GROUP or rows.nbytes() >= GROUP_BYTES:
            self._flush(key)
            return
        self._events += 1
        if self._events % 64 == 0 and len(self.rows) > 1:      # the sum over tables, now and then
            sizes = {k: r.nbytes() for k, r in self.rows.items()}
            if sum(sizes.values()) > MAX_BUFFERED_BYTES:
                self._flush(max(sizes, key=sizes.__getitem__))

    def _day(self, ts: int) -> str:
        if ts != self._last_ts:
            self._last_ts, self._last_day = ts, _utc_day(ts)
        return self._last_day

    def _add(self, change, before, after, plan) -> None:
        key = (change.db, change.table, self._day(change.ts))
        rows = self._python_rows(key, change.db, change.table)
        if rows is None:
            return
        rows.add(change, before, after, plan)
        self._written(key, rows)

    def _flush(self, key) -> None:
        self._set_aside(key)
        tables = self.pieces.pop(key, None)
        if not tables:
            return
        writer = self.writers.get(key)
        if writer is not None and writer[0].schema != tables[0].schema:
            # a table no schema describes showed keys its file does not have: a new file
            self.background.submit(finish_file, *writer)
            writer = None
        if writer is None:
            db, table, day = key
            # the directory is named from untrusted identifiers: encoded, then checked (paths.py)
            table_dir = inside(self.tables_dir, os.path.join(self.tables_dir, table_dir_name(db, table)))
            directory = os.path.join(table_dir, f"_run={self.run}",
                                     f"_date={escape_path_name(day) if day else DEFAULT_PARTITION}")
            os.makedirs(directory, exist_ok=True)
            name = f"part-{self.index:05d}-{self.opened}.parquet"
            self.opened += 1
            temp, final = os.path.join(directory, "." + name + ".tmp"), os.path.join(directory, name)
            schema = tables[0].schema
            writer = self.writers[key] = (parquet_writer(temp, schema, False, codec=self.codec), temp, final)
            self.files.setdefault(key[:2], []).append((final, _columns_of(schema)))
        self.background.submit(writer[0].write_table,
                               tables[0] if len(tables) == 1 else pa.concat_tables(tables))

    def close(self) -> None:
        for key in list(self.rows) + list(self.pieces):
            if key in self.rows or key in self.pieces:
                self._flush(key)
        for writer, temp, final in self.writers.values():
            self.background.submit(finish_file, writer, temp, final)
        self.writers.clear()
