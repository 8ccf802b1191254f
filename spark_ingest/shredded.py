"""The typed tables of tables no schema describes, made in the tasks from the JSON images.

A table no schema describes (no DDL in the binlogs, no ``--schema-ddl``: the usual case
in forensics) has a STRING column per key of its images (``@1``, ``@2``... or the
names of ``binlog_row_metadata=FULL``; ``typed.image_keys``), each value what Spark's
``from_json`` gives a STRING field (``arrow_typed.jackson_text``), then ``_before`` with
an update's before image.  The keys are those of each row's after image (a delete's
before image), over the whole run.

Each task shreds the ``before``/``after`` columns of its batches of changes/ into those
columns as the batches are written (``ShreddedRows``): ``_speedups.shred_add`` parses the
JSON our own writers made and writes each value's text into Arrow buffers, no Python
object per row or value; without the compiled module, ``orjson.loads`` and
``jackson_text`` per row.  A task only knows the keys it has seen: each of its files
holds the keys its table had when the file was opened (``TableKeys``).  At the end of
the run the driver (``conform_files``) rewrites the files whose columns are not the
run's keys: none when every split saw every key, as with full row images.
"""
from __future__ import annotations

import os

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from binlog import rows as rows_module

from .arrow_columns import arrays_of
from .typed import image_key_order

# the changes' fields of a typed table's row (arrow_typed.META_COLUMNS), named as in changes/
META_FIELDS = ("file", "pos", "ts", "server_id", "gtid", "op")
# their bytes per row, about (three 8-byte numbers, three short strings): a slice's own
# nbytes walks its buffers, ~50 us each time
_META_ROW_BYTES = 64
_TYPED_OPS = pa.array(["insert", "update", "delete"])


def _parts(array: pa.Array) -> tuple:
    """(validity or None, offsets, data, offset, length) of a string array (shred_add)."""
    validity, offsets, data = array.buffers()
    return (validity if array.null_count else None, offsets, b"" if data is None else data,
            array.offset, len(array))


class _PythonShred:
    """``_speedups.shred_*`` without the compiled module: each image read by
    ``orjson.loads``, each value written by ``jackson_text``."""

    def __init__(self):
        self.index: dict[str, int] = {}       # key -> its column
        self.primary: list[bool] = []
        self.columns: list[tuple[list, list]] = []    # (typed image, _before) values per key
        self.rows = 0

    def _column(self, key: str) -> int:
        at = self.index.get(key)
        if at is None:
            at = self.index[key] = len(self.columns)
            self.primary.append(False)
            self.columns.append(([None] * self.rows, [None] * self.rows))
        return at

    def add(self, ops: list, befores: list, afters: list) -> None:
        from .arrow_typed import jackson_text

        loads = orjson.loads
        for op, before, after in zip(ops, befores, afters, strict=True):
            old = None if before is None else loads(before)
            new = None if after is None else loads(after)
            # as shred_row: the typed image, _before, and the image whose keys count
            images = (old if op == "delete" else new, old if op == "update" else None)
            for key in (new if new is not None else old) or ():
                self.primary[self._column(key)] = True
            for image in images:
                for key in image or ():
                    self._column(key)
            for key, at in self.index.items():
                for side, image in zip(self.columns[at], images, strict=True):
                    side.append(None if image is None else jackson_text(image.get(key)))
            self.rows += 1

    def finish(self) -> tuple[int, list]:
        out = [(key.encode(), self.primary[at], pa.array(self.columns[at][0], pa.string()),
                pa.array(self.columns[at][1], pa.string())) for key, at in self.index.items()]
        rows, self.rows = self.rows, 0
        self.columns = [([], []) for _ in self.columns]
        return rows, out

    def size(self) -> int:
        return 64 * self.rows * (len(self.columns) + 1)     # (the bound, not the exact bytes)


class TableKeys:
    """The keys a task has seen of one table no schema describes."""

    def __init__(self):
        self.primary: dict[str, bool] = {}    # key -> seen in a row's typed image

    def merge(self, columns) -> None:
        for key, primary, _, _ in columns:
            self.primary[key] = self.primary.get(key, False) or primary

    def names(self) -> list[str]:
        return sorted(self.primary, key=image_key_order)


class ShreddedTables:
    """A task's tables no schema describes: ``add_part`` is ``writer.PartitionedWriter``'s
    tap (each partition's rows of a batch of changes/); their rows go into ``typed``'s
    (an ``arrow_typed.TypedWriter``) row groups and files with its other tables'."""

    def __init__(self, typed):
        self.typed = typed
        self.keys: dict[tuple[str, str], TableKeys] = {}

    def add_part(self, db, table, day, part: pa.RecordBatch) -> None:
        if self.typed.known(db, table):
            return                   # (typed from its events: arrow_typed)
        typed = pc.is_in(part.column("op"), value_set=_TYPED_OPS)
        if not pc.all(typed).as_py():
            part = part.filter(typed)
            if not part.num_rows:
                return
        keys = self.keys.get((db, table))
        if keys is None:
            keys = self.keys[(db, table)] = TableKeys()
        key = (db, table, day)
        rows = self.typed.rows_of(key, lambda: ShreddedRows(keys))
        try:
            rows.add(part)
        except ValueError as exc:
            # not the JSON our writers write (a bug here, not bad input): the row named
            at = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
            raise RuntimeError(f"{part.column('file')[at]} @ {part.column('pos')[at]} {db}.{table}: "
                               f"its typed table cannot be made from its image: {exc.args[0]}") from exc
        self.typed.written(key, rows)

    def result(self) -> list:
        """[(db, table, {"keys": the keys of rows' typed images, "files": [(path, columns)]})]
        per table, for the driver (``conform_files``), once ``typed`` is closed."""
        return [(db, table, {"keys": sorted(k for k, seen in keys.primary.items() if seen),
                             "files": self.typed.files.get((db, table), [])})
                for (db, table), keys in sorted(self.keys.items(), key=repr)]


class ShreddedRows:
    """Typed rows of one (table, day) no schema describes: the changes' fields of its
    rows (Arrow slices of the batches) and its keys' STRING columns (``shred_add``'s
    builder, or ``_PythonShred``); ``keys``: its table's ``TableKeys``."""

    def __init__(self, keys: TableKeys):
        speedups = rows_module._speedups
        self.keys = keys
        self.builder = speedups.shred_builder() if speedups is not None else _PythonShred()
        self.meta: list[pa.RecordBatch] = []
        self.masks: list[pa.Array] = []       # per part: True where a row has no _before
        self.rows = 0

    def __len__(self) -> int:
        return self.rows

    def nbytes(self) -> int:
        speedups = rows_module._speedups
        held = speedups.shred_size(self.builder) if speedups is not None else self.builder.size()
        return held + _META_ROW_BYTES * self.rows

    def add(self, part: pa.RecordBatch) -> None:
        """Rows of a batch of changes/ (``records.ARROW_SCHEMA``'s columns): inserts,
        updates and deletes."""
        ops, befores, afters = part.column("op"), part.column("before"), part.column("after")
        speedups = rows_module._speedups
        if speedups is not None:
            speedups.shred_add(self.builder, _parts(ops), _parts(befores), _parts(afters))
        else:
            self.builder.add(ops.to_pylist(), befores.to_pylist(), afters.to_pylist())
        self.meta.append(part.select(list(META_FIELDS)))
        self.masks.append(pc.or_(pc.not_equal(ops, "update"), pc.is_null(befores)))
        self.rows += part.num_rows

    def _take(self) -> list:
        speedups = rows_module._speedups
        if speedups is None:
            rows, columns = self.builder.finish()
        else:
            rows, found = speedups.shred_finish(self.builder)
            columns = [(key, primary, *arrays_of([after, before], [pa.string(), pa.string()]))
                       for key, primary, after, before in found]
        if rows != self.rows:
            raise RuntimeError(f"{rows} rows shredded, {self.rows} taken in")
        return [(key.decode(), primary, after, before) for key, primary, after, before in columns]

    def table(self) -> pa.Table:
        """The rows held as a table of the keys its table has now (``TableKeys.names``),
        handed over."""
        from .arrow_typed import table_schema

        columns = self._take()
        self.keys.merge(columns)
        names = self.keys.names()
        schema = table_schema([(name, "string") for name in names])
        meta = pa.Table.from_batches(self.meta)
        rows = meta.num_rows
        found = {key: (after, before) for key, _, after, before in columns}
        empty = pa.nulls(rows, pa.string())
        arrays = list(meta.columns) + [found[n][0] if n in found else empty for n in names]
        if names:
            struct = schema.field("_before").type
            arrays.append(pa.StructArray.from_arrays([found[n][1] if n in found else empty for n in names],
                                                     fields=list(struct), mask=pa.concat_arrays(self.masks)))
        self.meta, self.masks, self.rows = [], [], 0
        return pa.Table.from_arrays(arrays, schema=schema)


def conform_files(results: list[dict]) -> None:
    """The tables no schema describes, once every task is done: each file whose columns
    are not the run's keys of its table (the union of the tasks' ``TableKeys.result``)
    is written again with them, row group by row group (a key it lacks: NULL)."""
    tables: dict[tuple, list] = {}
    for result in results:
        for db, table, found in result.get("schemaless", ()):
            tables.setdefault((db, table), []).append(found)
    for found in tables.values():
        names = sorted({key for f in found for key in f["keys"]}, key=image_key_order)
        for path, columns in (entry for f in found for entry in f["files"]):
            if list(columns) != names:
                _rewrite(path, names)


def _rewrite(path: str, names: list[str]) -> None:
    import pyarrow.parquet as pq

    from .arrow_typed import META_COLUMNS, table_schema
    from .background import codec_of, parquet_writer

    schema = table_schema([(name, "string") for name in names])
    directory, name = os.path.split(path)
    temp = os.path.join(directory, "." + name + ".tmp")
    source = pq.ParquetFile(path)
    writer = parquet_writer(temp, schema, False, codec=codec_of(source.metadata))
    try:
        for group in range(source.num_row_groups):
            writer.write_table(_conformed(source.read_row_group(group), names, schema, len(META_COLUMNS)))
    finally:
        writer.close()
        source.close()
    os.replace(temp, path)


def _conformed(table: pa.Table, names: list[str], schema: pa.Schema, meta: int) -> pa.Table:
    table = table.combine_chunks()
    rows = table.num_rows
    empty = pa.nulls(rows, pa.string())
    have = set(table.column_names[meta:])
    arrays = table.columns[:meta] + [table.column(n) if n in have else empty for n in names]
    if names:
        if "_before" in table.column_names:
            before = table.column("_before").chunk(0) if rows else pa.nulls(0, schema.field("_before").type)
            inner = {f.name: before.field(i) for i, f in enumerate(before.type)}
            mask = before.is_null()
        else:
            inner, mask = {}, pa.repeat(True, rows) if rows else pa.array([], pa.bool_())
        struct = schema.field("_before").type
        arrays.append(pa.StructArray.from_arrays([inner.get(n, empty) for n in names], fields=list(struct),
                                                 mask=mask))
    return pa.Table.from_arrays(arrays, schema=schema)
