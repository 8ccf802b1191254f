"""Differential test (CI, bounded): the compiled paths give exactly what the pure-Python
reference gives - the same rows of the same types, or the same typed error (class,
file, offsets, event type, table, column) - on rows events of every column type with
mutated metadata and row bytes, legacy temporals of every precision, and whole dumps of
mutated sample binlogs (through the reader and through ``binlog dump`` in-process: JSON,
text, SQL and Debezium output byte for byte, exit status and stderr, a table filter on
or off);
binlog stats' row counts (binlog/_scan.c count_rows) and the compiled header walk
(binlog/_scan.c skip_run) against their pure references (binlog/scan.py).

The long-running counterpart is fuzz/fuzz_differential.py (atheris, ``make fuzz``, also
under AddressSanitizer/UBSan); both run fuzz/differential.py (and
fuzz/differential_dump.py, its whole dumps).  Inputs that found a
difference are kept in tests/hostile/differential_regressions/ and replayed here.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fuzz"))

import differential as diff  # noqa: E402
import differential_dump as whole  # noqa: E402
import pure_paths  # noqa: E402
import target  # noqa: E402

from binlog import rows  # noqa: E402
from binlog.column_kinds import FSP_BYTES as _FSP_BYTES  # noqa: E402
from binlog.constants import MARIADB_NUMERIC_TYPES, NUMERIC_TYPES, ColumnType as T  # noqa: E402

pytestmark = [pytest.mark.usefixtures("compiled"), pytest.mark.fuzz]

REGRESSIONS = sorted((Path(__file__).parent / "differential_regressions").glob("*.bin"))
SEEDS = diff.seed_inputs()
ROWS_SEEDS = [s for s in SEEDS if not s[0] & (diff.DUMP | diff.SKIP_RUN)]
DUMP_SEEDS = [s[1:] for s in SEEDS if s[0] & diff.DUMP]
_TMP = Path(tempfile.mkdtemp(prefix="binlog-differential-"))
_SETTINGS = dict(deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.name)
def test_regressions(path):
    diff.check_bytes(path.read_bytes(), _TMP / "regression.binlog")


def test_seeds_reach_the_compiled_walk():
    """The seeds decode in the compiled walk (not all in the fallback): else the test
    below would compare the pure path with itself."""
    typed, images = diff.TYPED_CHECKED[0], diff.IMAGES_CHECKED[0]
    outcomes = [diff.check_rows(diff.case_from_bytes(s)) for s in ROWS_SEEDS]
    assert outcomes.count("compiled") > 0.8 * len(outcomes)
    # and the compiled typed columns (binlog ingest's tables/) and image columns
    # (changes/) were compared on them
    assert diff.TYPED_CHECKED[0] - typed > len(ROWS_SEEDS)
    assert diff.IMAGES_CHECKED[0] - images > len(ROWS_SEEDS)


# --- mutated rows events of the samples --------------------------------------------

_where = st.integers(0, 1 << 16)
_mutation = st.one_of(
    st.tuples(st.just("xor"), _where, st.integers(1, 255)),
    st.tuples(st.just("set"), _where, st.integers(0, 255)),
    st.tuples(st.just("insert"), _where, st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("delete"), _where, st.integers(1, 16)),
    st.tuples(st.just("dup"), _where, st.integers(1, 64)),
    st.tuples(st.just("cut"), _where, st.just(0)),
    st.tuples(st.just("int"), _where, st.sampled_from([0, 1, 6, 7, 0x7F, 0x80, 0xFF, 0xFFFF, 0xFFFFFF,
                                                       0xFFFFFFFF])),
)
_schema_attr = st.one_of(
    st.tuples(st.just("precision"), st.integers(0, 7)),
    st.tuples(st.just("unsigned"), st.booleans()),
    st.tuples(st.just("encoding"), st.sampled_from(diff.ENCODINGS)),
    st.tuples(st.just("enum_values"), st.lists(st.sampled_from(diff.LABELS), max_size=8)
              | st.lists(st.sampled_from(diff.LABELS), max_size=8).map(tuple)),
)


@settings(max_examples=400, **_SETTINGS)
@given(seed=st.sampled_from(ROWS_SEEDS), rows=st.lists(_mutation, max_size=4),
       table_map=st.lists(_mutation, max_size=2), schema=st.lists(st.tuples(st.integers(0, 12), _schema_attr),
                                                                 max_size=2),
       known_zero=st.booleans())
def test_mutated_sample_rows_events(seed, rows, table_map, schema, known_zero):
    case = diff.case_from_bytes(seed)
    case.rows = target.mutate(case.rows, rows)
    case.table_map = target.mutate(case.table_map, table_map)
    if known_zero:
        case.known_zero = not case.known_zero
    for col, (name, value) in schema:
        case.schema.setdefault(col, {})[name] = value
    event(diff.check_rows(case))


# --- generated TABLE_MAPs of every column type, rows built to fit -------------------

_FIXED = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8, T.YEAR: 1, T.DATE: 3,
          T.NEWDATE: 3}


def rare(draw) -> bool:
    """Mostly True: invalid metadata one time in ten (the TABLE_MAP rejects it, and the
    rows are never walked)."""
    return draw(st.integers(0, 9)) > 0


@st.composite
def column(draw):
    """(type code, metadata bytes, schema precision for legacy temporals or None)."""
    t = draw(st.sampled_from([T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.FLOAT, T.DOUBLE,
                              T.YEAR, T.DATE, T.TIMESTAMP, T.DATETIME, T.TIME, T.TIMESTAMP2,
                              T.DATETIME2, T.TIME2, T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB,
                              T.GEOMETRY, T.NEWDECIMAL, T.BIT, T.ENUM, T.SET, T.JSON, T.NULL,
                              T.BLOB_COMPRESSED, T.VARCHAR_COMPRESSED]))
    fsp = draw(st.integers(0, 6)) if rare(draw) else draw(st.integers(7, 255))
    if t == T.FLOAT:
        meta = bytes([draw(st.sampled_from([4, 4, 8, 0, 3]))])
    elif t == T.DOUBLE:
        meta = bytes([draw(st.sampled_from([8, 8, 4, 0]))])
    elif t in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        meta = bytes([fsp])
    elif t in (T.BLOB, T.GEOMETRY, T.JSON, T.BLOB_COMPRESSED):
        meta = bytes([draw(st.integers(1, 4)) if rare(draw) else draw(st.integers(0, 255))])
    elif t in (T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED):
        meta = draw(st.sampled_from([1, 10, 255, 256, 300, 65535]) | st.integers(0, 65535)).to_bytes(2, "little")
    elif t == T.NEWDECIMAL:
        precision = draw(st.integers(1, 65)) if rare(draw) else draw(st.integers(0, 255))
        meta = bytes([precision, draw(st.integers(0, min(precision, 30))) if rare(draw) else draw(st.integers(0, 255))])
    elif t == T.BIT:
        meta = bytes([draw(st.integers(0, 7)) if rare(draw) else draw(st.integers(0, 255)), draw(st.integers(0, 8))])
    elif t == T.STRING:
        real = draw(st.sampled_from([T.STRING, T.ENUM, T.SET])) if rare(draw) else draw(st.integers(0, 255))
        meta = bytes([real, draw(st.integers(0, 255))])
    elif t in (T.ENUM, T.SET):
        meta = bytes([t, draw(st.sampled_from([1, 2, 0, 3]))])
    else:
        meta = b""
    legacy = (draw(st.integers(0, 6)) if rare(draw) else draw(st.integers(7, 9))) if t in (T.TIMESTAMP, T.DATETIME, T.TIME) else None
    return t, meta, legacy


def value_shape(t: int, meta: bytes, n: int | None) -> tuple[int, int]:
    """(length-prefix bytes, fixed bytes) of one value as the server writes it (guessing
    where the metadata is nonsense)."""
    if t in _FIXED:
        return 0, _FIXED[t]
    if t in (T.FLOAT, T.DOUBLE):
        return 0, meta[0]
    legacy = {T.TIMESTAMP: (4, (4, 5, 5, 6, 6, 7, 7)), T.DATETIME: (8, (5, 6, 6, 7, 7, 7, 8)),
              T.TIME: (3, (3, 4, 4, 5, 5, 5, 6))}
    if t in legacy:
        zero, hires = legacy[t]
        return 0, zero if not n else hires[min(n, 6)]
    if t in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        base = {T.TIMESTAMP2: 4, T.DATETIME2: 5, T.TIME2: 3}[t]
        return 0, base + _FSP_BYTES[min(meta[0], 6)]
    if t in (T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED):
        return (1 if int.from_bytes(meta, "little") <= 255 else 2), 0
    if t == T.STRING:
        if meta[0] in (T.ENUM, T.SET):
            return 0, meta[1]
        length = (((meta[0] & 0x30) ^ 0x30) << 4) | meta[1]
        return (1 if length <= 255 else 2), 0
    if t in (T.ENUM, T.SET):
        return 0, meta[1]
    if t in (T.BLOB, T.GEOMETRY, T.JSON, T.BLOB_COMPRESSED):
        return min(max(meta[0], 1), 4), 0
    if t == T.NEWDECIMAL:
        from binlog.errors import BinlogError
        from binlog.types.decimal import decimal_layout
        try:
            return 0, decimal_layout(meta[0], meta[1])[0]
        except BinlogError:
            return 0, 4
    if t == T.BIT:
        return 0, meta[1] + (1 if meta[0] else 0)
    return 0, 0


# bytes that decode to valid values more often than random ones do
_PATTERNS = st.sampled_from([b"\x00", b"\xff", b"\x80", b"\x7f", b"\x01"])


@st.composite
def value(draw, shape):
    prefix, fixed = shape
    if prefix:
        length = draw(st.integers(0, 40) | st.sampled_from([255, 256, 300]))
        body = draw(st.binary(min_size=length, max_size=length) | st.text(max_size=length).map(
            lambda s: s.encode()[:length]))
        return (len(body) & (1 << 8 * prefix) - 1).to_bytes(prefix, "little") + body
    if draw(st.booleans()):
        return (draw(_PATTERNS) * fixed)[:fixed]
    return draw(st.binary(min_size=fixed, max_size=fixed))


@st.composite
def rows_case(draw):
    columns = draw(st.lists(column(), min_size=1, max_size=10))
    fde_index = draw(st.sampled_from([0, 2, 3]))        # MariaDB 10.11, MySQL 8.0, MySQL 5.1
    fde, crc = diff.fdes()[fde_index]
    optional = []
    numeric = sum(t in (MARIADB_NUMERIC_TYPES if fde_index == 0 else NUMERIC_TYPES) for t, _, _ in columns)
    if numeric and draw(st.booleans()):
        # SIGNEDNESS: one bit per numeric column (MSB first)
        size = (numeric + 7) // 8
        optional.append((1, draw(st.binary(min_size=size, max_size=size))))
    if draw(st.booleans()):
        optional.append((2, bytes([draw(st.sampled_from([8, 33, 45, 63, 11, 28, 95]))])))
    enums = [i for i, (t, m, _) in enumerate(columns) if t == T.ENUM or (t == T.STRING and m[0] == T.ENUM)]
    if enums and draw(st.booleans()):
        labels = b""
        for _ in enums:
            # labels given twice and the label '' too: checksums count them as
            # checksum._enum_number does (labels.index; '' is 0)
            names = draw(st.lists(st.sampled_from((b"a", b"bb", b"\xc3\xa9", b"")), max_size=4))
            labels += diff.packed(len(names)) + b"".join(diff.packed(len(x)) + x for x in names)
        optional.append((6, labels))
    rows_type = draw(st.sampled_from(diff.ROWS_TYPES[:6]))
    update = rows_type in (diff.UPDATE_V1, diff.UPDATE_V2)
    width = len(columns)
    nbytes = (width + 7) // 8
    all_present = bytes([0xFF] * nbytes)
    present = all_present if draw(st.booleans()) else draw(st.binary(min_size=nbytes, max_size=nbytes))
    present_after = all_present if draw(st.booleans()) else draw(st.binary(min_size=nbytes, max_size=nbytes))
    shapes = [value_shape(t, m, n) for t, m, n in columns]

    def image(bitmap):
        cols = [i for i in range(width) if bitmap[i >> 3] >> (i & 7) & 1]
        nulls = [draw(st.integers(0, 9)) == 0 for _ in cols]
        out = bytearray((len(cols) + 7) // 8)
        for k, null in enumerate(nulls):
            if null:
                out[k >> 3] |= 1 << (k & 7)
        for ci, null in zip(cols, nulls, strict=True):
            if not null:
                out += draw(value(shapes[ci]))
        return bytes(out)

    data = b""
    for _ in range(draw(st.integers(1, 3))):
        data += image(present)
        if update:
            data += image(present_after)
    data = target.mutate(data, draw(st.lists(_mutation, max_size=2)))
    schema = {i: {"precision": n} for i, (_, _, n) in enumerate(columns) if n is not None}
    return diff.RowsCase(fde, crc, diff.table_map_body([(t, m) for t, m, _ in columns], optional),
                         rows_type, diff.rows_body(rows_type, width, present, present_after, data),
                         schema, known_zero=draw(st.booleans()) if fde_index == 0 else True)


@settings(max_examples=300, **_SETTINGS)
@given(case=rows_case())
def test_generated_rows_events(case):
    event(diff.check_rows(case))


def _enum_case(labels):
    fde, crc = diff.fdes()[0]
    optional = [(6, diff.packed(len(labels)) + b"".join(diff.packed(len(x)) + x for x in labels))]
    columns = [(T.LONG, b""), (T.STRING, bytes([T.ENUM, 1]))]
    data = b"".join(b"\x00" + i.to_bytes(4, "little") + bytes([i]) for i in range(len(labels) + 1))
    return diff.RowsCase(fde, crc, diff.table_map_body(columns, optional), diff.WRITE_V2,
                         diff.rows_body(diff.WRITE_V2, 2, b"\x03", b"\x03", data))


def test_checksums_of_enum_labels_given_twice_or_empty():
    """The row checksums of the compiled walk (dump --checksum, verify-rows) for ENUM
    labels given twice, every index: as checksum.RowChecksum counts the decoded labels
    (labels.index).  With a member '', the value '' is also what the error value (index
    0) decodes to: those rows have no checksum (None) and the compiled walk leaves the
    event to the Python path."""
    from binlog.checksum import RowChecksum

    case = _enum_case([b"a", b"bb", b"a", b"b"])
    assert diff.check_rows(case) == "compiled"
    table_map, event_ = diff.case_events(case)
    assert diff._check_checksums(event_, diff._plan(case, table_map)) == 5
    case = _enum_case([b"a", b"", b"b"])
    assert diff.check_rows(case) == "compiled"      # the values decode in C; no checksum
    table_map, event_ = diff.case_events(case)
    plan = diff._plan(case, table_map)
    assert diff._check_checksums(event_, plan) == 0
    decoded = rows.decode_rows(event_, plan)
    checksums = [RowChecksum(plan.columns)(after) for _, after in decoded]
    assert [c is None for c in checksums] == [True, False, True, False]


def test_sql_values_escape_every_special_character():
    """utf8 text with each character quote_text escapes (NUL, LF, CR, ^Z, both quotes,
    backslash), YEAR 0, BIT, a double without an exponent: the compiled VALUES are
    output/sql/literals.py's, byte for byte."""
    fde, crc = diff.fdes()[0]
    columns = [(T.LONG, b""), (T.VARCHAR, (100).to_bytes(2, "little")), (T.YEAR, b""),
               (T.BIT, bytes([3, 1])), (T.DOUBLE, b"\x08")]
    text = "a\0b\nc\rd\x1ae'f\"g\\h \u2603".encode()
    import struct

    data = (b"\x00" + (1).to_bytes(4, "little") + bytes([len(text)]) + text + b"\x00"
            + b"\x01\x05" + struct.pack("<d", 1.5))
    case = diff.RowsCase(fde, crc, diff.table_map_body(columns, [(2, bytes([45]))]), diff.WRITE_V2,
                         diff.rows_body(diff.WRITE_V2, 5, b"\x1f", b"\x1f", data))
    assert diff.check_rows(case) == "compiled"
    table_map, event_ = diff.case_events(case)
    assert diff._check_sql_values(event_, diff._plan(case, table_map)) == 4     # 3 specs, SET


@pytest.mark.parametrize("rows_type", [diff.UPDATE_V2, diff.DELETE_V2])
def test_sql_values_of_before_images_with_columns_left_out(rows_type):
    """The keys of DELETE and UPDATE (dump --format sql): the before image's values, a
    column at a time (the others walked, not written: text too), equal to RowValues."""
    fde, crc = diff.fdes()[0]
    columns = [(T.LONG, b""), (T.VARCHAR, (100).to_bytes(2, "little")), (T.LONGLONG, b"")]
    row = lambda n, text: (b"\x00" + n.to_bytes(4, "little") + bytes([len(text)]) + text
                           + (n * 7).to_bytes(8, "little"))
    images = [row(1, b"it's"), row(1, b"new \\ text"), row(2, "\u2603".encode()), row(3, b"")]
    data = b"".join(images if rows_type == diff.UPDATE_V2 else images[::2])
    case = diff.RowsCase(fde, crc, diff.table_map_body(columns, [(2, bytes([45]))]), rows_type,
                         diff.rows_body(rows_type, 3, b"\x07", b"\x07", data))
    assert diff.check_rows(case) == "compiled"
    table_map, event_ = diff.case_events(case)
    # update: 2 images x 3 specs x 2 rows + the SET lists; delete: 1 image x 3 specs x 2 rows
    assert diff._check_sql_values(event_, diff._plan(case, table_map)) == (14 if rows_type == diff.UPDATE_V2 else 6)


def test_checksum_of_a_nan_double_is_a_typed_error(tmp_path):
    """A DOUBLE NaN (no server stores one): the compiled checksum falls back and the
    pure path's typed error names file, offset, table and column; exit 1, no traceback."""
    import subprocess

    fde, crc = diff.fdes()[0]
    columns = [(T.LONG, b""), (T.DOUBLE, b"\x08")]
    case = diff.RowsCase(fde, crc, diff.table_map_body(columns), diff.WRITE_V2,
                         diff.rows_body(diff.WRITE_V2, 2, b"\x03", b"\x03",
                                        b"\x00" + (1).to_bytes(4, "little") + b"\xff" * 8))
    table_map, event_ = diff.case_events(case)
    assert diff._check_checksums(event_, diff._plan(case, table_map)) == 0
    path = tmp_path / "nan.binlog"
    path.write_bytes(case.binlog())
    for env in ({}, {"BINLOG_PURE": "1"}):
        done = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--checksum", str(path)],
                              capture_output=True, text=True, env={**os.environ, **env})
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "nan.binlog @ 300 db.t column @2: a nan DOUBLE value has no row checksum" in done.stderr


# --- whole dumps of mutated sample windows: output bytes ------------------------------

@settings(max_examples=120, **_SETTINGS)
@given(seed=st.sampled_from(DUMP_SEEDS), options=st.integers(0, 255),
       mutations=st.lists(_mutation, min_size=1, max_size=4))
def test_dump_output_identical(seed, options, mutations):
    whole.check_dump(bytes([options]) + target.mutate(seed[1:], mutations), _TMP / "dump.binlog")


# --- binlog/_scan.c skip_run: mutated runs of sample events, every parameter -----------

SKIP_SEEDS = [s[1:] for s in SEEDS if not s[0] & diff.DUMP and s[0] & diff.SKIP_RUN]


@settings(max_examples=300, **_SETTINGS)
@given(seed=st.sampled_from(SKIP_SEEDS), head=st.lists(_mutation, max_size=2),
       buf=st.lists(_mutation, max_size=4))
def test_skip_run_compiled_equals_pure(seed, head, buf):
    head_bytes = target.mutate(seed[:14], head)[:14].ljust(14, b"\0")
    case = diff.skip_case_from_bytes(head_bytes + target.mutate(seed[14:], buf))
    event(diff.check_skip_run(case))


@pytest.mark.parametrize("run", [whole.dump, whole.cli_dump], ids=["reader", "cli"])
@pytest.mark.parametrize("options", [0x00, 0x20, 0x80 | 0x10, 0xA0 | 0x48 | 0x02],
                         ids=["json", "text", "count-or-sql", "debezium-ddl-skip"])
def test_pure_mode_calls_no_compiled_function(run, options):
    """pure() switches every compiled path off (else the tests above would compare a
    compiled path with itself), and the compiled runs do use them."""
    data = bytes([options]) + (REPO / "samples/mariadb-10.11/types_full.binlog").read_bytes()
    compiled = pure_paths.compiled_calls(lambda: run(data, _TMP / "calls.binlog"))
    with pure_paths.pure():
        assert pure_paths.compiled_calls(lambda: run(data, _TMP / "calls.binlog")) == set()
    assert compiled


# --- runs of rows events (_speedups.encode_run, _scan.count_run): mutated ---------------

@settings(max_examples=150, **_SETTINGS)
@given(checksums=st.booleans(), options=st.sampled_from([0x00, 0x01, 0x04, 0x20, 0x02, 0x05, 0x08, 0x09]),
       mutations=st.lists(_mutation, max_size=3))
def test_runs_output_identical(checksums, options, mutations):
    """A binlog of long runs of rows events, mutated: json dumps (encode_run), stats
    (count_run) and the other outputs equal the pure path's, errors included."""
    data = diff.runs_binlog(checksums)
    whole.check_dump(bytes([options]) + target.mutate(data, mutations), _TMP / "runs.binlog")


@settings(max_examples=60, **_SETTINGS)
@given(checksums=st.booleans(), mutations=st.lists(_mutation, max_size=3))
def test_ingest_runs_identical(checksums, mutations):
    """The same binlog, mutated: ``binlog ingest``'s records and typed table with runs of
    events in one compiled call equal those made event by event, errors included."""
    pytest.importorskip("pyarrow")
    whole.check_ingest_runs(target.mutate(diff.runs_binlog(checksums), mutations), _TMP / "ingest-runs.binlog")


def test_ingest_of_the_runs_binlog_goes_in_runs(monkeypatch):
    """test_ingest_runs_identical compares something: most events of the runs binlog go
    in runs, typed too."""
    pytest.importorskip("pyarrow")
    from spark_ingest import records

    events = []
    add_run = records.BatchBuilder.add_run
    monkeypatch.setattr(records.BatchBuilder, "add_run",
                        lambda self, item, heads: (events.extend(item.events), add_run(self, item, heads)))
    path = _TMP / "ingest-runs-plain.binlog"
    path.write_bytes(diff.runs_binlog())
    changes, tables = whole._ingest(path, _TMP / "ingest-runs-plain", True)
    assert len(events) >= 60 and len(changes) == sum(len(rows) for _, rows in tables) > 100


def test_runs_binlog_is_written_in_runs(monkeypatch, capsys):
    from binlog.cli import main
    from binlog.stream_runs import RunModes

    path = _TMP / "runs-plain.binlog"
    path.write_bytes(diff.runs_binlog())
    seen = []
    for name in ("_encode", "_count"):
        original = getattr(RunModes, name)

        def spy(self, *args, original=original, name=name):
            got = original(self, *args)
            if got is not None:
                seen.append((name, len(got[0].events)))
            return got
        monkeypatch.setattr(RunModes, name, spy)
    assert main(["dump", "--quiet", str(path)]) == 0
    assert main(["stats", "--json", str(path)]) == 0
    capsys.readouterr()
    assert {name for name, _ in seen} == {"_encode", "_count"}
    assert max(n for _, n in seen) >= 3
