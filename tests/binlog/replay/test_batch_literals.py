"""apply's compiled row literals (output.sql.literals.RowValues / literal_function) write exactly
the text of ``literal`` for every value of every sample binlog, and its multi-row INSERTs
are the single-row statements' VALUES joined; verify-rows' compiled row checksum
(checksum.RowChecksum) gives row_checksum's value for every image.  Every sample is read
as ``binlog dump`` and ``apply`` read it (the binlog's DDL followed, the case's schema
dump for tables older than the binlog): every row of it is checked, none left out."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from replay_helpers import apply_transactions, assert_encoded_statements_match
from support.corpus import DAMAGED

from binlog.errors import IncompleteEventError
from binlog.output.sql.literals import literal, literal_function
from binlog.output.sql.renderer import SqlRenderer
from binlog.reader import BinlogReader, RowChange
from binlog.replay import batch as batch_module
from binlog.replay.batch import EncodedInsert, LazyRows, row_statements
from binlog.replay.keys import KeyCatalog
from schema_store.loading import load_resolver

REPO = Path(__file__).resolve().parents[3]
SAMPLE_DIR = REPO / "samples" / "mariadb-10.11"
SAMPLES = sorted(SAMPLE_DIR.glob("*.binlog"))


def _schema_ddl(path: Path) -> str | None:
    """The schema dump of a case whose tables predate its binlog (its expected.json)."""
    expected = orjson.loads(path.with_suffix(".expected.json").read_bytes())
    files = expected.get("schema_files") or []
    return str(path.parent / files[0]) if files else None


def _changes(path):
    """Every row change of a sample; of a mysql-test binlog, those before the place a
    damaged one stops at (support.corpus.DAMAGED), which must be where it stops."""
    if path.parent != SAMPLE_DIR:
        return _corpus_changes(path)
    ddl = _schema_ddl(path)
    schema = load_resolver(ddl_paths=[ddl] if ddl else [], required=True)
    out = [item for item in BinlogReader([path], schema=schema).items() if isinstance(item, RowChange)]
    assert out, f"{path.name} gives no row change"
    return out


def _corpus_changes(path):
    out: list = []
    error, offset, _ = DAMAGED.get(path.name, (None, None, None))
    reader = BinlogReader([path])
    items = (item for item in reader.items() if isinstance(item, RowChange))
    if error is None or error is IncompleteEventError:
        out.extend(items)
        assert (reader.stats.incomplete is None) == (error is None), path.name
        return out
    with pytest.raises(error) as info:
        out.extend(items)
    assert info.value.event_offset == offset
    return out


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_row_literals_equal_literal(path):
    changes = _changes(path)
    checked = 0
    for ch in changes:
        for image in (ch.before, ch.after):
            for col in ch.plan.columns:
                if image is None or col.key not in image:
                    continue
                value = image[col.key]
                assert literal_function(col)(value) == literal(value, col), (col.label, value)
                checked += 1
    assert checked


@pytest.mark.parametrize("safe", [True, False])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_multi_row_inserts_are_the_single_statements_joined(path, safe):
    renderer = SqlRenderer(KeyCatalog(), safe=safe)
    inserts = [ch for ch in _changes(path) if ch.op == "insert"]
    index = {id(ch): i for i, ch in enumerate(inserts)}
    batches = list(row_statements(renderer, inserts, index))
    assert bool(batches) == bool(inserts)
    for batch in batches:
        singles = [renderer.insert(ch, ch.after) for _, ch in batch.rows]
        head = singles[0].partition(" VALUES ")[0]
        assert batch.sql == head + " VALUES " + ", ".join(s.partition(" VALUES ")[2] for s in singles)
        assert [batch.row_sql(ch) for _, ch in batch.rows] == singles


def _items(path, renderer):
    """The sample's row changes as apply reads them (replay_helpers.apply_transactions)."""
    return [item for tx in apply_transactions([path], renderer, schema_ddl=_schema_ddl(path))
            for item in tx[0]]


@pytest.mark.parametrize("safe", [True, False], ids=["safe", "no-safe"])
@pytest.mark.parametrize("limit", [None, 120])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_encoded_inserts_make_the_decoded_rows_statements(path, limit, safe, monkeypatch):
    """Statements from EncodedInserts/EncodedKeyeds (no row decoded) are those of the
    decoded rows, cut at the same rows (``limit``: statements of ~120 bytes, so most events
    are cut inside), and their LazyRows give the same rows, numbered alike."""
    if limit:
        monkeypatch.setattr(batch_module, "MAX_STATEMENT_BYTES", limit)
    assert assert_encoded_statements_match([path], safe, schema_ddl=_schema_ddl(path))


def test_lazy_rows_decode_only_the_event_asked_for():
    path = next(p for p in SAMPLES if p.stem == "types_full")
    items = [ch for ch in _items(path, SqlRenderer(KeyCatalog(), safe=True))
             if isinstance(ch, EncodedInsert)]
    assert len(items) >= 2
    rows = LazyRows([(0, items[0], 0, items[0].count), (items[0].count, items[1], 0, 1)])
    assert len(rows) == items[0].count + 1
    last = rows[-1]
    assert last[0] == items[0].count and last[1].pos == items[1].pos
    assert list(rows._decoded) == [id(items[1])]
    assert rows[0][1].after == items[0].changes()[0].after
    with pytest.raises(IndexError):
        rows[len(rows)]


def test_surprise_values_take_the_literal_path():
    from binlog.column import Column
    from binlog.constants import ColumnType as T

    for type_, value in ((T.LONG, True), (T.DOUBLE, 3), (T.NEWDECIMAL, 1.5), (T.VARCHAR, 7),
                         (T.LONG, None), (T.DATETIME2, None), (T.BLOB, bytearray(b"\0'")),
                         (T.NEWDECIMAL, Decimal("-0.00"))):
        col = Column(index=0, binlog_type=type_, type=type_, name="c")
        assert literal_function(col)(value) == literal(value, col)


@pytest.mark.parametrize("path", SAMPLES + sorted((REPO / "samples" / "mysql-test").glob("*.0*")),
                         ids=lambda p: p.name)
def test_compiled_row_checksum_equals_row_checksum(path):
    """verify-rows' RowChecksum gives row_checksum's value for every image, and every whole
    image has one: no value of the corpus is one a checksum cannot encode (a ChecksumError
    fails the test, none is caught); only a partial image (minimal, noblob) has none."""
    from binlog.checksum import RowChecksum, row_checksum

    for ch in _changes(path):
        compiled = RowChecksum(ch.plan.columns)
        keys = {col.key for col in ch.plan.columns}
        for image in (ch.before, ch.after):
            value = row_checksum(image, ch.plan.columns)
            assert compiled(image) == value, (path.name, ch.pos)
            assert (value is not None) == (image is not None and set(image) == keys), (path.name, ch.pos)
