"""The typed columns of tables no schema describes (``spark_ingest.shredded``): the
compiled shredder (``_speedups.shred_add``) against the Python one (``orjson.loads`` and
``arrow_typed.jackson_text`` per value, the steps ``binlog ingest`` took before), on
images of every kind of JSON value - nested objects, doubles of any exponent, integers
past 64 bits, escapes, whitespace, a key given twice - and on bytes that are no JSON
object (both refuse them)."""
from __future__ import annotations

import json

import pytest

pa = pytest.importorskip("pyarrow")

import orjson  # noqa: E402
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from binlog import rows  # noqa: E402
from spark_ingest import shredded  # noqa: E402
from spark_ingest.arrow_typed import java_double  # noqa: E402

pytestmark = [pytest.mark.skipif(rows._speedups is None, reason="no compiled module"), pytest.mark.fuzz]

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)
KEYS = st.sampled_from(["@1", "@2", "@10", "id", "a", "é", 'q"uote', "back\\slash", "ctl\x01", "", "@07", "@7"])


def _text(pairs: list, style: int) -> str:
    """An image with ``pairs`` as its members (a key may come twice): as our writers write
    it (orjson, compact), or as Python's json writes it (spaces, ASCII escapes)."""
    def dumps(value):
        if style == 0 and not _wide(value):
            return orjson.dumps(value).decode()
        return json.dumps(value, ensure_ascii=style == 1)
    sep = "," if style == 0 else ", "
    return "{" + sep.join(f"{dumps(k)}:{dumps(v)}" for k, v in pairs) + "}"


def _wide(value) -> bool:
    """An integer orjson.dumps refuses (past 64 bits), anywhere in ``value``."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -(2**63) <= value < 2**64
    if isinstance(value, dict):
        return any(_wide(v) for v in value.values())
    if isinstance(value, list):
        return any(_wide(v) for v in value)
    return False


IMAGES = st.builds(_text, st.lists(st.tuples(KEYS, VALUES), max_size=5), st.integers(0, 2))
ROWS = st.lists(st.tuples(st.sampled_from(["insert", "update", "delete"]), st.none() | IMAGES,
                          st.none() | IMAGES), min_size=1, max_size=12)


def _batch(rows_: list) -> pa.RecordBatch:
    n = len(rows_)
    return pa.RecordBatch.from_arrays(
        [pa.array(["f"] * n), pa.array(range(n), pa.int64()), pa.array([0] * n, pa.timestamp("us", tz="UTC")),
         pa.array([1] * n, pa.int64()), pa.array([None] * n, pa.string()),
         pa.array([r[0] for r in rows_]), pa.array([r[1] for r in rows_], pa.string()),
         pa.array([r[2] for r in rows_], pa.string())],
        names=["file", "pos", "ts", "server_id", "gtid", "op", "before", "after"])


def _shredded(parts: list, compiled: bool, monkeypatch):
    """The table ``ShreddedRows`` makes of the batches (``compiled``: shred_add, else
    _PythonShred), or the exception it raises."""
    with monkeypatch.context() as patch:
        if not compiled:
            patch.setattr(rows, "_speedups", None)
        try:
            keys = shredded.TableKeys()
            rows_ = shredded.ShreddedRows(keys)
            for part in parts:
                rows_.add(part)
            return rows_.table(), sorted(key for key, seen in keys.primary.items() if seen)
        except (ValueError, AttributeError, TypeError) as exc:
            return type(exc)


def _same(parts: list, monkeypatch) -> None:
    got, want = _shredded(parts, True, monkeypatch), _shredded(parts, False, monkeypatch)
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, ValueError), (got, want)
        return
    assert not isinstance(got, type), (got, want)
    assert got[1] == want[1]
    assert got[0].schema == want[0].schema
    assert got[0].to_pylist() == want[0].to_pylist()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ROWS, st.integers(0, 11))
def test_compiled_shredder_equals_the_python_one(monkeypatch, rows_, cut):
    batch = _batch(rows_)
    # two parts, the second a slice (an array offset, as a partition's rows are)
    _same([batch.slice(0, cut), batch.slice(cut)], monkeypatch)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["insert", "delete"]), st.text(max_size=20), st.text(max_size=20)),
                min_size=1, max_size=4))
def test_what_is_no_json_object_is_refused_both_ways(monkeypatch, rows_):
    _same([_batch(rows_)], monkeypatch)


@pytest.mark.parametrize("text", [
    "0.0", "-0.0", "1e7", "1E+7", "1e-3", "0.001", "9.999e-4", "123456.789", "1e21", "5e-324", "-5e-324",
    "1.7976931348623157e308", "0.1", "100.0", "1e16", "12345678.9", "1e-400", "0.30000000000000004",
    "1.000000000000000000001", "18446744073709551616", "-9223372036854775809", "-0", "0", "007e1",
])
def test_numbers_are_written_as_java_does(monkeypatch, text):
    """Each number's text: an integer within 64 bits as its digits, any other number as
    Java's Double.toString (java_double) of the double orjson reads."""
    image = '{"v":' + text + "}"
    try:
        value = orjson.loads(image)["v"]
    except orjson.JSONDecodeError:
        value = ValueError
    got = _shredded([_batch([("insert", None, image)])], True, monkeypatch)
    if value is ValueError:
        assert got is ValueError
        return
    want = str(value) if type(value) is int else java_double(value)
    assert got[0].column("v").to_pylist() == [want]


def test_a_key_given_twice_keeps_its_last_value(monkeypatch):
    image = '{"a":1,"b":"x","a":null,"b":"y"}'
    table, _ = _shredded([_batch([("update", image, image)])], True, monkeypatch)
    assert table.column("a").to_pylist() == [None] and table.column("b").to_pylist() == ["y"]
    assert table.column("_before").to_pylist() == [{"a": None, "b": "y"}]


def test_an_image_that_is_no_json_object_names_its_row(tmp_path):
    """Our writers never write one; if one came, the error names the row's file, position
    and table (the third row of the part here)."""
    from spark_ingest.arrow_typed import TypedWriter

    tables = shredded.ShreddedTables(TypedWriter(str(tmp_path), 1, 0, lambda *_: None))
    part = _batch([("insert", None, '{"a":1}'), ("insert", None, '{"a":2}'), ("insert", None, '{"a":[1,}')])
    with pytest.raises(RuntimeError, match=r"^f @ 2 d\.t: its typed table cannot be made from its image: "
                                           r"value expected at byte 8 of the image"):
        tables.add_part("d", "t", "2023-11-14", part)
