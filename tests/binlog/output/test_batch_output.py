"""The compiled batch path of ``binlog dump --format json|text`` (``_speedups.encode_rows``)
writes exactly what the per-row writers write: byte for byte on every sample
binlog (real server files) with the options that change how values are written, against
the per-row path over the compiled walk (BINLOG_BATCH=0) and the pure-Python reference
(no compiled module); and, on rows events of real samples with mutated row bytes, the
same lines or - where the encoder leaves the event to Python - the pure path's error.
"""
from __future__ import annotations

import io
import struct
import sys
from dataclasses import replace
from pathlib import Path

import hypothesis
import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import binlog.rows as rows
from binlog.cli import main
from binlog.errors import BinlogError
from binlog.events import RowsEvent
from binlog.output.cdc import CdcJsonWriter
from binlog.output.text import TextWriter
from binlog.reader import BinlogReader, RowChange, SourceEvent

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"
SCHEMA = SAMPLES / "mariadb-10.11" / "seed_tt_test2.schema.sql"

pytestmark = pytest.mark.usefixtures("compiled")


def _binlogs() -> list[Path]:
    found = sorted(SAMPLES.glob("*/*.binlog")) + sorted((SAMPLES / "mysql-test").glob("*.0*"))
    return found + [SAMPLES / "mariadb-10.11" / "events_misc"]


def _dump(argv, mode, monkeypatch) -> tuple:
    """(exit code, stdout bytes, stderr) of ``binlog dump`` in this process; mode: batch,
    rows (per-row writers over the compiled walk) or pure."""
    with monkeypatch.context() as m:
        m.setenv("BINLOG_BATCH", "1" if mode == "batch" else "0")
        if mode == "pure":
            m.setattr(rows, "_speedups", None)
        out, err = io.BytesIO(), io.StringIO()
        m.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
        m.setattr(sys, "stderr", err)
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        sys.stdout.flush()
        return code, out.getvalue(), err.getvalue()


OPTIONS = {
    "json": [[], ["--bigint-as-string", "--with-types"], ["--binary-encoding", "base64",
                                                           "--timezone", "Europe/Berlin"]],
    "text": [[], ["--bigint-as-string", "--binary-encoding", "base64"],
             ["--timezone", "America/New_York", "--table", "*.t*"]],
    # sql: insert events' VALUES from the compiled walk (SqlWriter.encode_rows)
    "sql": [[], ["--no-safe", "--extended-insert"], ["--extended-insert", "--table", "*.t*"]],
}


@pytest.mark.parametrize("path", _binlogs(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["json", "text", "sql"])
def test_batch_output_equals_per_row_and_pure(path, fmt, monkeypatch):
    for options in OPTIONS[fmt]:
        argv = ["dump", "--format", fmt, *options, str(path)]
        if "legacy" in path.name or "seed_tt" in path.name:
            argv += ["--schema-ddl", str(SCHEMA)]
        batch = _dump(argv, "batch", monkeypatch)
        assert batch == _dump(argv, "rows", monkeypatch), argv
        assert batch == _dump(argv, "pure", monkeypatch), argv


def test_batch_path_is_taken(monkeypatch):
    """The samples above do go through the encoder (not all through its fallback)."""
    import binlog.output.cdc as cdc
    from binlog.stream_runs import RunModes

    taken, runs = [], []
    encode = rows.encode_rows
    monkeypatch.setattr(cdc, "encode_rows", lambda *a: taken.append(encode(*a)) or taken[-1])
    encode_run = RunModes._encode     # (runs of like events: one compiled call each)
    monkeypatch.setattr(RunModes, "_encode",
                        lambda self, *args: runs.append(encode_run(self, *args)) or runs[-1])
    code, out, _ = _dump(["dump", str(SAMPLES / "mariadb-10.11" / "types_full.binlog")], "batch",
                         monkeypatch)
    assert code == 0 and taken and all(t is not None for t in taken)
    assert sum(t[2] for t in taken) + sum(r[0].rows for r in runs if r) == sum(
        b'"op":"' in line and b'"row":' in line for line in out.splitlines())


def test_sql_rows_events_are_not_decoded(monkeypatch):
    """dump --format sql: an insert event's rows go from its bytes to VALUES, a delete's
    to DELETE by key and an update's to DELETE by key + REPLACE (--no-safe: UPDATE ...
    SET ... WHERE key); no row of them is decoded, but the rows of a table without a key
    (WHERE on every column) are."""
    import binlog.reader as reader

    decoded = []
    decode = reader.decode_rows
    monkeypatch.setattr(reader, "decode_rows", lambda event, plan: decoded.append(
        (event.kind, plan.qualified_name)) or decode(event, plan))
    path = str(SAMPLES / "mariadb-10.11" / "types_full.binlog")
    code, out, _ = _dump(["dump", "--format", "sql", path], "batch", monkeypatch)
    assert code == 0 and out.count(b"REPLACE INTO ") > 10 and b"DELETE FROM `tf`.`ints` WHERE `id` = 3 LIMIT 1;" in out
    assert sorted(set(decoded)) == [("delete", "tf.nopk"), ("update", "tf.nopk")]
    decoded.clear()
    code, out, _ = _dump(["dump", "--format", "sql", "--no-safe", path], "batch", monkeypatch)
    assert code == 0 and b"UPDATE `tf`.`ints` SET `id` = " in out
    assert sorted(set(decoded)) == [("delete", "tf.nopk"), ("update", "tf.nopk")]


# --- mutated row bytes of real rows events -----------------------------------------------

def _events(name, schema=None):
    """(RowsEvent, RowChange without images) of every rows event of a sample."""
    reader = BinlogReader([str(SAMPLES / "mariadb-10.11" / name)], schema=schema)
    found, event = [], None
    for item in reader.items():
        if isinstance(item, SourceEvent):
            event = item.event
        elif isinstance(item, RowChange) and item.row == 0 and isinstance(event, RowsEvent):
            found.append((event, replace(item, before=None, after=None)))
    return found


def _legacy_events():
    from schema_store.loading import load_resolver

    return _events("legacy_temporal.binlog", schema=load_resolver(ddl_paths=[str(SCHEMA)],
                                                                 required=True))


EVENTS = _events("types_full.binlog") + _events("signedness.binlog") + _legacy_events()


def _writer(fmt, flags):
    bigint, base64 = bool(flags & 1), "base64" if flags & 2 else "hex"
    if fmt == "json":
        return CdcJsonWriter(io.BytesIO(), base64, bigint_as_string=bigint)
    return TextWriter(io.BytesIO(), base64, bigint_as_string=bigint)


def _per_row(fmt, flags, event, head) -> bytes:
    """What the per-row writers print for the event, decoded by the pure reference."""
    from binlog.output.routing import BigintsAsStrings

    writer = _writer(fmt, flags)
    shown = BigintsAsStrings(writer) if flags & 1 else writer
    saved = rows._speedups
    rows._speedups = None
    try:
        decoded = rows.decode_rows(event, replace(head.plan, _walks={}))   # no compiled walk
    finally:
        rows._speedups = saved
    for index, (before, after) in enumerate(decoded):
        shown.write(replace(head, before=before, after=after, row=index))
    if fmt == "json":
        writer._flush(True, 7, 99)
    return writer.out.getvalue()


def _batch(fmt, flags, event, head) -> bytes | None:
    writer = _writer(fmt, flags)
    encoded = writer.encode_rows(head, event)
    if encoded is None:
        return None
    writer.write_encoded(encoded)
    if fmt == "json":
        writer._flush(True, 7, 99)
    return writer.out.getvalue()


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(range(len(EVENTS))), st.sampled_from(["json", "text"]), st.integers(0, 3),
       st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=6),
       st.integers(0, 8))
def test_mutated_rows_batch_equals_pure(index, fmt, flags, changes, cut):
    event, head = EVENTS[index]
    data = bytearray(event.data)
    for pos, value in changes:
        if data:
            data[pos % len(data)] = value
    data = bytes(data[:len(data) - cut] if cut < len(data) else data)
    event = replace(event, data=data)
    batch = _batch(fmt, flags, event, head)
    try:
        expected = _per_row(fmt, flags, event, head)
    except BinlogError:
        hypothesis.event("the pure path raised")
        assert batch is None     # the encoder fell back; the pure path raised
        return
    hypothesis.event("encoded" if batch is not None else "left to the per-row path")
    assert batch == expected or (batch is None and not data)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) |
                st.integers(0, (1 << 64) - 1).map(lambda n: struct.unpack("<d", n.to_bytes(8, "little"))[0]),
                min_size=1, max_size=50))
@settings(deadline=None, database=None)
def test_doubles_as_orjson_and_repr_write_them(values):
    """A DOUBLE column's values through the compiled encoder: orjson's text in JSON,
    repr's in the text format."""
    from types import SimpleNamespace

    speed = rows._speedups
    col = SimpleNamespace(charset_unknown=False)
    walk = speed.compile_walk(1, ((0, 1, "g", rows.K_DOUBLE, 0, 0, 0, 0, 0, 0, None, None, None, col),))
    steps = ((0, 1, "g", None, col),)
    data = b"".join(b"\0" + struct.pack("<d", v) for v in values)
    js, _, count = speed.encode_rows(data, 0, walk, walk, steps, steps, 0, 0, b"", b"", b"\n", None)
    text, _, _ = speed.encode_rows(data, 0, walk, walk, steps, steps, 1, 0, b"", b"", b"", None)
    assert count == len(values)
    assert js.split(b"\n") == [b'null,"after":{"g":' + orjson.dumps(v) + b'},"row":' + str(i).encode()
                               for i, v in enumerate(values)]
    assert text.decode().splitlines()[1::2] == [f"###   @`g`={v!r}" for v in values]
