"""The batch path of ``binlog ingest`` and the data source: a rows event's
rows taken at once (``reader.RowBatch``) into the Arrow columns of changes/ and of the
typed tables/ give exactly what the row-by-row path gives.

The references are the per-row pieces the batch path replaced and which stay: the
``RowChange``s of ``BinlogReader.records()``, ``BatchBuilder.add`` for the change records,
and for a typed value the documented steps (``render_row``, then ``typed_value``: the
text Spark's ``from_json`` gives, cast like ``try_cast``).  Every sample binlog is read;
the typed columns are checked for every column of every table as every Spark type (not
only the type its schema gives), and the shortcuts of the column casters on generated
values.  No JVM: the Spark engine's own comparison is tests/spark_ingest/test_local_engine.py.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

import math
from decimal import Decimal
from pathlib import Path

import orjson
import pyarrow as pa
from hypothesis import given, settings, strategies as st
from spark_helpers import SAMPLES, SCHEMA_DDL
from support.compiled import require_compiled

from binlog.output.values import bytes_renderer, render_row
from binlog.reader import BinlogReader, RowBatch, RowChange
from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore
from spark_ingest import arrow_typed
from spark_ingest.arrow_typed import TableRows, caster, table_schema, typed_value
from spark_ingest.records import BatchBuilder, EncodedImages, ImagesEncoder

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
BINLOGS = sorted(SAMPLES.glob("*.binlog")) + sorted((REPO / "samples" / "mysql-test").glob("*.0000*"))
KINDS = ("tinyint", "smallint", "int", "bigint", "decimal(20,0)", "decimal(12,2)", "decimal(38,10)",
         "float", "double", "date", "timestamp_ntz", "timestamp", "binary", "string")


def _reader(path: Path) -> BinlogReader:
    store = SchemaStore()
    for ddl in SCHEMA_DDL:
        store.import_ddl(Path(ddl).read_text(encoding="utf-8"), source=f"ddl:{ddl}")
    return BinlogReader([str(path)], schema=SchemaResolver(store), on_error="skip")


def _table(path: Path, encoding: str, batches: bool, encoded: bool = False, size: int = 50) -> pa.Table:
    """The change records of a binlog as ``records.read_split`` builds them: row by row
    (``BatchBuilder.add``), by rows event (``add_rows``), or, with ``encoded``, from the
    images the compiled encoder writes (``add_encoded``; events it leaves: ``add_rows``)."""
    from binlog.replay.keys import KeyCatalog

    reader = _reader(path)
    builder = BatchBuilder(encoding, keys=KeyCatalog(schema=reader.schema), with_types=True)
    if encoded:
        reader.set_output_paths(row_encoder=ImagesEncoder(builder))
    out = []
    for item in reader.items(statements=True, batches=batches):
        builder.take(item)
        if builder.complete() >= size:
            out.append(builder.batch())
    out.append(builder.batch(final=True))
    return pa.Table.from_batches(out)


def test_the_samples_are_found():
    assert len(BINLOGS) > 15


@pytest.mark.parametrize("encoding", ["hex", "base64"])
@pytest.mark.parametrize("path", BINLOGS, ids=lambda p: p.name)
def test_change_records_of_batches_equal_the_per_row_records(path, encoding):
    per_row = _table(path, encoding, batches=False)
    batched = _table(path, encoding, batches=True)
    assert batched.num_rows == per_row.num_rows
    assert batched.equals(per_row)
    encoded = _table(path, encoding, batches=True, encoded=True)
    assert encoded.equals(per_row)


@pytest.mark.parametrize("size", [1, 7, 10_000])
@pytest.mark.parametrize("path", BINLOGS, ids=lambda p: p.name)
def test_change_records_equal_the_dump_records(path, size):
    """The batches' rows, cut at any row (a transaction's last row carried over to the
    next batch, its commit fields filled in there), are the records ``binlog dump
    --format json`` prints."""
    from spark_helpers import arrow_key, dump_records, record_key

    got = [arrow_key(r) for r in _table(path, "hex", batches=True, encoded=True, size=size).to_pylist()]
    want = [record_key(r) for r in dump_records([path], SCHEMA_DDL, with_types=True, on_error="skip")]
    assert got == want


def test_the_encoder_writes_the_images_of_the_samples():
    """The compiled encoder is what the data source's images come from (not every
    event left to the Python path), unless there is no compiled module."""
    require_compiled()

    encoded = decoded = 0
    for path in BINLOGS:
        reader = _reader(path)
        reader.set_output_paths(row_encoder=ImagesEncoder(BatchBuilder()))
        for item in reader.items(statements=True, batches=True):
            encoded += isinstance(item, EncodedImages)
            decoded += isinstance(item, RowBatch)
    assert encoded > decoded > 0


def test_a_batch_gives_the_row_changes_of_its_event():
    path = SAMPLES / "signedness.binlog"
    changes = [c for c in _reader(path).records() if isinstance(c, RowChange)]
    batches = [b for b in _reader(path).records(batches=True) if isinstance(b, RowBatch)]
    assert len(batches) < len(changes)

    def fields(change):             # the plan: one object per reader
        return (change.file, change.pos, change.ts, change.server_id, change.gtid, change.db,
                change.table, change.op, change.before, change.after, change.row,
                change.plan.qualified_name)
    assert [fields(c) for b in batches for c in b.changes()] == [fields(c) for c in changes]


def _reference(changes, name: str, kind: str, render, *, before: bool) -> list:
    """The typed values of one column, row by row: render_row, then typed_value."""
    cast = caster(kind, binary_encoding=render.tag.split("_")[1])
    out = []
    for change in changes:
        if before:
            image = change.before if change.op == "update" else None
        else:
            image = change.before if change.op == "delete" else change.after
        rendered = render_row(image, change.plan, render)
        out.append(None if rendered is None else typed_value(rendered.get(name), cast))
    return out


def _same(got: list, want: list) -> bool:
    # NaN is not equal to itself; Decimal('1.0') == Decimal('1.00') hides a scale change
    return len(got) == len(want) and all(
        (isinstance(g, float) and isinstance(w, float) and math.isnan(g) and math.isnan(w))
        or (type(g) is type(w) and g == w and str(g) == str(w)) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("encoding", ["hex", "base64"])
@pytest.mark.parametrize("path", BINLOGS, ids=lambda p: p.name)
def test_typed_columns_equal_the_per_value_steps(path, encoding):
    """Every column of every table, typed as each Spark type, from the batches of each
    table: the values the per-row steps give, value for value."""
    render = bytes_renderer(encoding)
    tables: dict = {}
    for batch in _reader(path).records(batches=True):
        if isinstance(batch, RowBatch) and batch.op in arrow_typed.TYPED_OPS:
            tables.setdefault((batch.db, batch.table), []).append(batch)
    checked = 0
    for batches in tables.values():
        keys = list(dict.fromkeys(c.key for b in batches for c in b.plan.columns))
        changes = [c for b in batches for c in b.changes()]
        for kind in KINDS:
            columns = [(key, kind) for key in keys]
            casts = [caster(kind, binary_encoding=encoding) for _ in columns]
            rows = TableRows(columns, table_schema([]), casts, render_bytes=render)
            for batch in batches:
                rows.add_rows(batch)
            for (key, _), column_cast in zip(columns, rows.casts, strict=True):
                for before, images in ((False, rows.images), (True, rows.befores)):
                    got = rows._values(images, key, kind, column_cast)
                    want = _reference(changes, key, kind, render, before=before)
                    assert _same(got, want), (path.name, key, kind, before)
                    checked += len(got)
    assert checked or not tables


@pytest.mark.parametrize("path", [SAMPLES / "signedness.binlog", SAMPLES / "temporal_predump.binlog"],
                         ids=lambda p: p.name)
def test_typed_table_of_batches_equals_the_one_of_row_changes(path):
    """A whole typed table (its Arrow types, _before struct) made from RowBatches equals
    the one made from each RowChange (``TypedWriter.add``)."""
    from spark_ingest.tasks import table_columns_of  # noqa: F401  (the engines' source)
    from spark_ingest.typed import table_columns

    store = SchemaStore()
    for ddl in SCHEMA_DDL:
        store.import_ddl(Path(ddl).read_text(encoding="utf-8"), source=f"ddl:{ddl}")
    render = bytes_renderer("hex")
    by_table: dict = {}
    for batch in _reader(path).records(batches=True):
        if isinstance(batch, RowBatch) and batch.op in arrow_typed.TYPED_OPS:
            by_table.setdefault((batch.db, batch.table), []).append(batch)
    assert by_table
    for (db, table), batches in by_table.items():
        columns = table_columns(store, db, table) or [
            (c.key, "string") for c in batches[0].plan.columns]
        casts = [caster(kind) for _, kind in columns]
        schema = table_schema(columns)
        whole, single = (TableRows(columns, schema, casts, render_bytes=render) for _ in range(2))
        for batch in batches:
            whole.add_rows(batch)
            for change in batch.changes():
                single.add(change, change.before, change.after, change.plan)
        assert whole.table().equals(single.table()), (db, table)


# -- the column casters' shortcuts, on generated values -----------------------------------

_TEXTS = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\A[ \t]?[+-]?\d{1,20}(\.\d{0,8})?[ \n]?\Z"),
    st.from_regex(r"\A\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{0,7})?)?\Z"),
    st.from_regex(r"\A[0-9a-fA-F]{0,12}\Z"))
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(allow_nan=True, allow_infinity=True), _TEXTS,
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.lists(st.floats(allow_nan=False), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, max_size=8), st.sampled_from(KINDS))
def test_column_casters_equal_the_per_value_steps(values, kind):
    cast = caster(kind)
    got = arrow_typed._column_caster(kind, cast)(values)
    assert _same(got, [typed_value(v, cast) for v in values])


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_canonical_shortcuts_equal_the_patterns(text):
    assert arrow_typed._micros(text) == arrow_typed._micros_pattern(arrow_typed._trim(text))
    assert arrow_typed.cast_date(text) == arrow_typed._date_pattern(arrow_typed._trim(text))


def test_canonical_texts_take_the_shortcut():
    for text in ("2024-01-02 03:04:05", "2024-01-02 03:04:05.5", "2024-01-02T03:04:05.123456"):
        assert arrow_typed._canonical(text, 19)
        assert arrow_typed._micros(text) == arrow_typed._micros_pattern(text)
    for text in ("2024-01-02 03:04:05.", "2024-01-02 03:04:05.1234567", "２024-01-02 03:04:05",
                 "2024-1-02 03:04:05"):
        assert not arrow_typed._canonical(text, 19)
    assert arrow_typed.cast_date("0000-00-00") is None
    assert arrow_typed.cast_date("2024-02-29") == arrow_typed._date_pattern("2024-02-29")
    assert Decimal("1.5") == arrow_typed.caster("decimal(5,2)")("1.5")


def test_a_decimal_38_value_is_cast_not_an_error():
    """28 digits and more: the default decimal context made quantize raise (the local
    engine's ingest stopped); Spark's try_cast keeps the value."""
    cast = caster("decimal(38,10)")
    assert cast("1234567890123456789012345678.5") == Decimal("1234567890123456789012345678.5")
    assert cast("12345678901234567890123456789.5") is None


def _shortest_by_decimal(value: float):
    """The first form of ``_shortest``: the digits of Decimal(repr(value))."""
    _, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits))
    return text.rstrip("0") or "0", len(digits) + exponent - 1


@settings(max_examples=500, deadline=None)
@given(st.floats(min_value=0, exclude_min=True, allow_infinity=False))
def test_shortest_digits_equal_decimals(value):
    assert arrow_typed._shortest(value) == _shortest_by_decimal(value)


def test_shortest_digits_of_edge_values():
    for value in (5e-324, 1.7976931348623157e308, 0.001, 1e-3, 100.0, 1e20, 1.5e-5, 123.45, 1e16, 0.1):
        assert arrow_typed._shortest(value) == _shortest_by_decimal(value), value


def _split_tables(paths, on_rows=None) -> pa.Table:
    from spark_ingest.options import parse_options
    from spark_ingest.plan import build_plan
    from spark_ingest.records import read_split

    plan = build_plan(parse_options({"paths": [str(p) for p in paths], "schema-ddl": SCHEMA_DDL,
                                     "with-types": "true", "include-errors": "true"}))
    batches = [b for split in plan.splits
               for b in read_split(split, plan.options, plan.snapshots[split.group],
                                   keys=plan.key_ring(), on_rows=on_rows)]
    return pa.Table.from_batches(batches)


def test_read_split_images_equal_with_and_without_the_encoder(monkeypatch):
    """The data source's records with the compiled images, with BINLOG_BATCH=0 (the
    Python images) and with decoded rows asked for (the local engine's typed tables)."""
    require_compiled()
    paths = sorted(SAMPLES.glob("*.binlog"))
    encoded = _split_tables(paths)
    seen: list = []
    decoded = _split_tables(paths, on_rows=seen.append)
    assert seen and encoded.num_rows > 100
    assert encoded.equals(decoded)
    monkeypatch.setenv("BINLOG_BATCH", "0")
    assert _split_tables(paths).equals(encoded)


_IMAGE = st.one_of(st.none(), st.text(max_size=12).map(lambda t: orjson.dumps({"k": t})))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.lists(st.tuples(_IMAGE, _IMAGE), max_size=20),
                          st.integers(0, 30)), max_size=12))
def test_image_columns_hand_over_their_first_rows_and_keep_the_rest(steps):
    """The compiled image columns (``images_put``, ``images_finish`` of a prefix: the rows
    after it stay for the next batch) give the columns the pure ones (lists) give."""
    require_compiled()
    from spark_ingest.records import ImageColumns

    compiled, pure = ImageColumns(), ImageColumns()
    pure.builder = None                 # (the lists of a run without the compiled module)
    held = 0
    for step in steps:
        if isinstance(step, list):
            for columns in (compiled, pure):
                columns.put([b for b, _ in step], [a for _, a in step])
            held += len(step)
            continue
        rows = min(step, held)
        got, want = compiled.finish(rows), pure.finish(rows)
        held -= rows
        for g, w in zip(got, want, strict=True):
            g.validate(full=True)
            assert g.equals(w) and g.null_count == w.null_count
    assert compiled.finish(held)[1].equals(pure.finish(held)[1])


def test_images_put_refuses_what_is_not_utf8_and_adds_nothing():
    require_compiled()
    from binlog import rows as rows_module
    from spark_ingest.records import ImageColumns

    columns = ImageColumns()
    columns.put([None], [b'{"a":1}'])
    with pytest.raises(ValueError, match="UTF-8"):
        columns.put([None, None], [b'{"a":2}', b'{"a":"\xff"}'])
    with pytest.raises(TypeError):
        columns.put([None], ["text"])
    assert rows_module._speedups.images_rows(columns.builder) == 1
    assert [c.to_pylist() for c in columns.finish(1)] == [[None], ['{"a":1}']]


def test_an_event_the_typed_columns_refuse_leaves_no_image_behind():
    """``also`` (the typed tables) saying no makes the encoder give None, and the images
    it wrote are taken out again: the reader decodes the event, whose rows come again."""
    require_compiled()

    from binlog.replay.keys import KeyCatalog

    path = SAMPLES / "signedness.binlog"
    want = _table(path, "hex", batches=True)
    reader = _reader(path)
    builder = BatchBuilder("hex", keys=KeyCatalog(schema=reader.schema), with_types=True)
    calls = []

    def also(change, event):
        calls.append(event)
        return len(calls) % 2 == 0      # every other event refused
    reader.set_output_paths(row_encoder=ImagesEncoder(builder, also))
    out = []
    for item in reader.items(statements=True, batches=True):
        builder.take(item)
        if builder.complete() >= 7:
            out.append(builder.batch())
    out.append(builder.batch(final=True))
    assert len(calls) > 2
    assert pa.Table.from_batches(out).equals(want)
