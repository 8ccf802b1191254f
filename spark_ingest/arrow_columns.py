"""The typed tables' Arrow columns filled by the compiled row walk (``_speedups.typed_*``).

``arrow_typed.TableRows`` types the rows the reader decoded, a Python object per value;
``ArrowRows`` has the compiled walk write the same values straight from a rows event's
bytes into Arrow buffers (validity bitmaps, fixed-width values, offsets and bytes), which
pyarrow then wraps without a copy.  Which column kinds go into which Arrow types is
decided here, once per walk (``column_map``): the pairs whose values the compiled code
types exactly as ``arrow_typed``'s steps do (checked by fuzz/differential.py over every
sample and mutated rows).  A walk with any other pair - a column decoded by Python (JSON,
SET, compressed columns, a zone other than UTC), a charset other than UTF-8, an unknown
charset - or any value the compiled code does not take (invalid UTF-8, a damaged image)
makes the event go the Python way, so the two paths always give the same table.
"""
from __future__ import annotations

from array import array

import pyarrow as pa

from binlog import rows as rows_module
from binlog.column_kinds import (
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

# Arrow type codes of binlog/_speedups.h (the A_* of typed_builder)
A_INT8, A_INT16, A_INT32, A_INT64, A_FLOAT32, A_FLOAT64, A_DATE32, A_TIMESTAMP = range(1, 9)
A_DECIMAL128, A_STRING, A_BINARY = 9, 10, 11
_CODES = {pa.int8(): A_INT8, pa.int16(): A_INT16, pa.int32(): A_INT32, pa.int64(): A_INT64,
          pa.float32(): A_FLOAT32, pa.float64(): A_FLOAT64, pa.date32(): A_DATE32,
          pa.timestamp("us"): A_TIMESTAMP, pa.timestamp("us", tz="UTC"): A_TIMESTAMP,
          pa.string(): A_STRING, pa.binary(): A_BINARY}
_VARIABLE = (A_STRING, A_BINARY)

_INTS = (K_TINY, K_SHORT, K_INT24, K_LONG, K_LONGLONG, K_YEAR, K_BIT)
_DATETIMES = (K_TS0, K_TS_HIRES, K_TS2, K_DT0, K_DT_HIRES, K_DT2)
_TEMPORALS = _DATETIMES + (K_DATE, K_TIME0, K_TIME_HIRES, K_TIME2)
_STRINGS = (K_VARCHAR, K_STRING, K_BLOB)
# kind -> the Arrow columns its values are typed into by the compiled code
_TAKES = {**{k: {A_INT8, A_INT16, A_INT32, A_INT64, A_DECIMAL128, A_STRING} for k in _INTS},
          K_FLOAT: {A_FLOAT32, A_FLOAT64}, K_DOUBLE: {A_FLOAT64},
          **{k: {A_STRING} for k in _TEMPORALS}, K_DATE: {A_DATE32, A_STRING},
          K_DECIMAL: {A_DECIMAL128, A_STRING}, K_ENUM: {A_STRING}}


def arrow_code(arrow_type: pa.DataType) -> tuple[int, int, int] | None:
    """(code, precision, scale) of a typed column's Arrow type; None: not one of them."""
    if pa.types.is_decimal128(arrow_type):
        return (A_DECIMAL128, arrow_type.precision, arrow_type.scale)
    code = _CODES.get(arrow_type)
    return None if code is None else (code, 0, 0)


def _takes(col, kind: int, code: tuple[int, int, int], zone) -> bool:
    """Whether the compiled code types a value of this column and kind into ``code``."""
    if kind in _STRINGS:
        if col.charset_unknown:
            return False
        if code[0] == A_STRING:
            return col.encoding == "utf-8"
        return code[0] == A_BINARY and (col.encoding is None or col.type == 255)
    if kind in _DATETIMES and code[0] == A_TIMESTAMP:
        return zone is None           # TIMESTAMP text in UTC, read back without a zone
    if kind == K_DECIMAL and code[0] == A_DECIMAL128:
        return (col.precision, col.scale) == code[1:]
    return code[0] in _TAKES.get(kind, ())


def column_map(walk, names: list[str], codes: list, zone) -> bytes | None:
    """int32 per step of ``walk`` (``DecodePlan.walk``): the typed column its value goes
    to, or -1; None when the compiled code cannot type this walk's images."""
    by_name = {name: i for i, name in enumerate(names)}
    out = array("i")
    for _, _, key, _, col in walk[1]:
        kind = rows_module.speed_spec(col)[0]
        if kind not in _TAKES and kind not in _STRINGS:
            return None                       # K_PY: a Python decoder (and a value to skip)
        target = by_name.get(key, -1)
        if target >= 0 and not _takes(col, kind, codes[target], zone):
            return None
        out.append(target)
    return out.tobytes()


def numpy_array(values, arrow_type: pa.DataType, missing=None) -> pa.Array:
    """A numpy array of fixed-width values as an Arrow array of ``arrow_type``, wrapped
    without a copy (``missing``: a bool array, True for null).  Not ``pa.array``: it
    imports numpy.ma for its first numpy argument, 10-30 ms of every run's start."""
    import numpy as np

    values = np.ascontiguousarray(values, dtype=arrow_type.to_pandas_dtype())
    bits, nulls = None, 0
    if missing is not None:
        nulls = int(np.count_nonzero(missing))
        if nulls:
            bits = pa.py_buffer(np.packbits(~missing, bitorder="little"))
    return pa.Array.from_buffers(arrow_type, len(values), [bits, pa.py_buffer(values)], null_count=nulls)


def repeated(values: list, counts, arrow_type: pa.DataType) -> pa.Array:
    """An Arrow array of ``values`` (one per rows event), each repeated its event's count
    of rows (``counts``: a numpy int64 array): an integer or timestamp column as one numpy
    repeat, a string column of one value (a file's name, no GTID) as that value's
    bytes repeated, else ``take``."""
    import numpy as np

    rows = int(counts.sum())
    if values and pa.types.is_string(arrow_type) and values.count(values[0]) == len(values):
        if values[0] is None:
            return pa.nulls(rows, arrow_type)
        one = values[0].encode()
        if len(one) * rows < 2**31:            # int32 offsets
            offsets = np.arange(rows + 1, dtype=np.int32) * np.int32(len(one))
            return pa.Array.from_buffers(arrow_type, rows, [None, pa.py_buffer(offsets), pa.py_buffer(one * rows)],
                                         null_count=0)
    if None not in values and (pa.types.is_int64(arrow_type) or pa.types.is_timestamp(arrow_type)):
        return pa.Array.from_buffers(arrow_type, rows, [None, pa.py_buffer(np.repeat(
            np.array(values, dtype=np.int64), counts))], null_count=0)
    return pa.array(values, arrow_type).take(numpy_array(np.repeat(
        np.arange(len(values), dtype=np.int32), counts), pa.int32()))


def arrays_of(buffers, types: list[pa.DataType]) -> list[pa.Array]:
    """The arrays of ``typed_finish``'s buffers, wrapped without a copy."""
    out = []
    for (rows, nulls, validity, values, data), arrow_type in zip(buffers, types, strict=True):
        bits = pa.py_buffer(validity) if nulls else None
        if pa.types.is_string(arrow_type) or pa.types.is_binary(arrow_type):
            parts = [bits, pa.py_buffer(values), pa.py_buffer(data)]
        else:
            parts = [bits, pa.py_buffer(values)]
        out.append(pa.Array.from_buffers(arrow_type, rows, parts, null_count=nulls))
    return out


class ArrowRows:
    """Typed rows of one (table, day) whose images the compiled walk wrote into Arrow
    buffers; the same table as ``arrow_typed.TableRows`` gives for them."""

    def __init__(self, columns, schema: pa.Schema, zone, meta_columns: int):
        self.schema = schema
        self.zone = zone
        self.names = [name for name, _ in columns]
        self.types = [schema.field(i + meta_columns).type for i in range(len(columns))]
        self.codes = [arrow_code(t) for t in self.types]
        # the changes' fields once per rows event (a tuple), and its rows: repeated when
        # the table is made (a list entry per row and field cost 2x the time, 15 MB more)
        self.meta_columns = meta_columns
        self.events: list[tuple] = []
        self.counts: list[int] = []
        self.rows = 0
        self.maps: dict = {}                  # id(walk) -> (walk, column map)
        # the last event's (plan, present, present_after, kind, width) and its
        # typed_append arguments: the events of a table mostly share them
        self._last: tuple = (None,)
        self._last_args = None
        # 1 while the builder is this table's: cleared when ``table`` hands its rows
        # over, so that a run (``run_part``) no longer fills it
        self.alive = bytearray(b"\x01")
        self.builder = None
        speedups = rows_module._speedups
        if columns and speedups is not None and None not in self.codes:
            self.builder = speedups.typed_builder(tuple(self.codes) * 2)

    def __len__(self) -> int:
        return self.rows

    def nbytes(self) -> int:
        return rows_module._speedups.typed_size(self.builder) + 64 * len(self.counts)

    def _map(self, walk):
        found = self.maps.get(id(walk))
        if found is None or found[0] is not walk:
            found = self.maps[id(walk)] = (walk, column_map(walk, self.names, self.codes, self.zone))
        return found[1]

    def _walk_args(self, plan, event):
        """typed_append's (walk, walk_after, map, map_after, kind) for an event of
        ``plan``; None when the compiled walk cannot type its images."""
        if event.width != len(plan.columns):
            return None
        walk = plan.walk(event.present)
        walk_after = plan.walk(event.after_present) if event.kind == "update" else walk
        if walk[2] is None or walk_after[2] is None:
            return None
        cmap, cmap_after = self._map(walk), self._map(walk_after)
        if cmap is None or cmap_after is None:
            return None
        return (walk[2], walk_after[2], cmap, cmap_after, rows_module._KIND_CODES[event.kind])

    def add_event(self, change, event) -> bool:
        """The rows of one rows event (``change``: its fields), typed by the compiled
        walk; False (nothing added) when it cannot: the caller takes the Python way."""
        if self.builder is None or event.partial or not event.data:
            return False
        plan, present, after, kind = change.plan, event.present, event.present_after, event.kind
        last = self._last
        if last[0] is plan and last[1] == present and last[2] == after and last[3] == kind \
                and last[4] == event.width:
            args = self._last_args
        else:
            args = self._walk_args(plan, event)
            self._last, self._last_args = (plan, present, after, kind, event.width), args
        if args is None:
            return False
        walk, walk_after, cmap, cmap_after, code = args
        speedups = rows_module._speedups
        try:
            n = speedups.typed_append(self.builder, event.data, code, walk, walk_after, cmap, cmap_after)
        except speedups.Fallback:
            return False
        self.add_fields(change.file, change.pos, change.ts, change.server_id, change.gtid, change.op, n)
        return True

    def add_fields(self, file, pos: int, ts: int, server_id: int, gtid, op: str, n: int) -> None:
        """The fields of an event whose ``n`` rows the builder took."""
        self.events.append((file, pos, ts, server_id, gtid, op))
        self.counts.append(n)
        self.rows += n

    def run_part(self, change, event, day: tuple[int, int], max_rows: int, max_bytes: int):
        """What ``_speedups.encode_run`` (flags 48) needs to type the rows of a run of
        events like ``event`` into this table: (builder, map, map_after, day start, day
        end, alive, max_rows, max_bytes); an event stamped outside the UTC day, or once
        the builder holds a row group, ends the run (the event goes the per-event way
        and the caller writes the group).  None when the compiled walk does not take it."""
        args = None if self.builder is None or event.partial or not event.data else \
            self._walk_args(change.plan, event)
        if args is None:
            return None
        return (self.builder, args[2], args[3], day[0], day[1], self.alive, max_rows, max_bytes)

    def table(self) -> pa.Table:
        import numpy as np
        import pyarrow.compute as pc

        self.alive[0] = 0
        counts = np.array(self.counts, dtype=np.int64)
        meta = [list(column) for column in zip(*self.events, strict=True)] or [[] for _ in range(self.meta_columns)]
        meta[2] = [ts * 1_000_000 for ts in meta[2]]                          # _ts
        arrays = [repeated(values, counts, field.type) for values, field in zip(meta, self.schema, strict=False)]
        buffers = rows_module._speedups.typed_finish(self.builder)
        half = len(self.types)
        arrays += arrays_of(buffers[:half], self.types)
        struct = self.schema.field("_before").type
        not_update = pc.not_equal(arrays[self.meta_columns - 1], "update")      # _op
        arrays.append(pa.StructArray.from_arrays(arrays_of(buffers[half:], self.types),
                                                 fields=list(struct), mask=not_update))
        return pa.Table.from_arrays(arrays, schema=self.schema)
