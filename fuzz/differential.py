"""Differential fuzzing: the compiled paths against the pure-Python reference.

The compiled modules (``binlog._speedups`` today; every ``binlog._*`` extension bound
to a module attribute, with None meaning "pure Python", is found the same way) must
give, for every input, exactly what the pure path gives: the same rows (same values of
the same types, same column order) or the same typed error - same class and the same
source, offsets, event type, table and column in it.  Two levels:

* ``check_rows(case)``: one TABLE_MAP and one rows event (``RowsCase``, built from a
  spec so that every column type, legacy temporal precisions from a schema, metadata
  and row bytes can be generated and mutated), decoded by ``binlog.rows.decode_rows``
  on both paths; the compiled walk itself (``_speedups.decode_event``) may only return
  what the pure walk returns, or raise ``_speedups.Fallback``: never another exception,
  never a value where the pure walk raises.
* ``check_dump(data)`` (fuzz/differential_dump.py): a whole ``binlog dump`` of a binlog
  (the option byte of fuzz/target.py and the file's bytes) on both paths: byte-identical
  output in JSON and text, the same error, the same damage records in ``--on-error skip``.
* ``check_rewrite(data)`` (fuzz/differential_rewrite.py): a whole ``binlog rewrite``: the
  same output binlog and position map byte for byte, the same exit status and messages.

How the compiled paths are switched off and what two outcomes must agree on:
fuzz/pure_paths.py.  A difference raises ``Difference`` (an AssertionError: a finding).  Used by
tests/hostile/test_differential.py (hypothesis, CI), fuzz/fuzz_differential.py (atheris)
and ``make fuzz`` (under AddressSanitizer/UBSan, fuzz/sanitize.py).
"""
from __future__ import annotations

import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from binlog import rows
from binlog.constants import LEGACY_TEMPORAL_TYPES, ColumnType as T
from binlog.cursor import pack_lenenc as packed
from binlog.errors import BinlogError
from binlog.stream import NEED_DATA, EventStream

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from differential_dump import check_dump, cli_dump  # noqa: E402
from pure_paths import Difference, error_key, pure, rows_key, short, value_key  # noqa: E402

MAGIC = b"\xfebin"


# --- level 1: one rows event --------------------------------------------------------

# Rows event type codes (binlog/events/rows.py): v1, v2 and MariaDB compressed v1/v2.
WRITE_V1, UPDATE_V1, DELETE_V1, WRITE_V2, UPDATE_V2, DELETE_V2 = 23, 24, 25, 30, 31, 32
ROWS_TYPES = (WRITE_V1, UPDATE_V1, DELETE_V1, WRITE_V2, UPDATE_V2, DELETE_V2,
              166, 167, 168, 169, 170, 171)
TABLE_MAP = 19
XID = 16


@dataclass
class RowsCase:
    """One TABLE_MAP and one rows event after a real server's FORMAT_DESCRIPTION.

    fde: the FORMAT_DESCRIPTION event, whole; crc: whether it says CRC32 (the other two
    events get footers).  table_map / rows: the two event bodies (after the 19-byte
    header), from a sample or built by ``table_map_body`` / ``rows_body``.  schema:
    column index -> attributes, as the schema store gives them to build_plan (legacy
    temporal precision, unsigned, encoding, enum labels); known_zero: the writer cannot
    write legacy hires temporals (build_plan's legacy_precision_known_zero)."""
    fde: bytes
    crc: bool
    table_map: bytes
    rows_type: int
    rows: bytes
    schema: dict = field(default_factory=dict)
    known_zero: bool = False

    def binlog(self) -> bytes:
        return (MAGIC + self.fde + event_bytes(TABLE_MAP, self.table_map, self.crc)
                + event_bytes(self.rows_type, self.rows, self.crc))


def event_bytes(type_code: int, body: bytes, crc: bool) -> bytes:
    """header (timestamp, type, server_id, event_size, log_pos 0 = not checked, flags),
    body, CRC32 footer."""
    size = 19 + len(body) + (4 if crc else 0)
    raw = (b"\x00\x00\x00\x00" + bytes([type_code & 0xFF]) + b"\x01\x00\x00\x00"
           + (size & 0xFFFFFFFF).to_bytes(4, "little") + b"\x00\x00\x00\x00\x00\x00" + body)
    return raw + zlib.crc32(raw).to_bytes(4, "little") if crc else raw


def table_map_body(columns: list[tuple[int, bytes]], optional: list[tuple[int, bytes]] = (),
                   nullable: bytes | None = None) -> bytes:
    """TABLE_MAP body of table db.t (table id 42): columns are (type code, metadata
    bytes as written), optional the (TLV type, value) optional metadata fields."""
    n = len(columns)
    meta = b"".join(m for _, m in columns)
    body = (b"\x2a\x00\x00\x00\x00\x00" + b"\x01\x00" + b"\x02db\x00" + b"\x01t\x00"
            + packed(n) + bytes(t for t, _ in columns) + packed(len(meta)) + meta
            + (b"\xff" * ((n + 7) // 8) if nullable is None else nullable))
    for kind, value in optional:
        body += bytes([kind]) + packed(len(value)) + value
    return body


def rows_body(rows_type: int, width: int, present: bytes, present_after: bytes, data: bytes,
              flags: int = 1) -> bytes:
    """Rows event body for table id 42 (v2: an empty extra-info block)."""
    body = b"\x2a\x00\x00\x00\x00\x00" + flags.to_bytes(2, "little")
    if rows_type >= WRITE_V2:
        body += b"\x02\x00"
    body += packed(width) + present
    if rows_type in (UPDATE_V1, UPDATE_V2):
        body += present_after
    return body + data


def case_events(case: RowsCase):
    """(table_map, rows_event) decoded by the real event stream; None when the stream
    rejects the bytes (a BinlogError: both paths share that code)."""
    stream = EventStream("case.binlog")
    stream.feed(case.binlog())
    found = []
    try:
        stream.close()
        while (event := stream.next_event()) is not NEED_DATA and event is not None:
            found.append(event)
    except BinlogError:
        return None
    by_type = {e.header.type_code: e for e in found if hasattr(e, "header")}
    table_map, rows_event = by_type.get(TABLE_MAP), by_type.get(case.rows_type)
    if table_map is None or not hasattr(rows_event, "data"):
        return None
    return table_map, rows_event


def _plan(case: RowsCase, table_map):
    try:
        return rows.build_plan(table_map, legacy_precision_known_zero=case.known_zero,
                               schema=case.schema)
    except BinlogError as exc:
        return exc


def _decode(event, plan) -> tuple:
    if isinstance(plan, BinlogError):
        return ("error", error_key(plan))
    try:
        return ("rows", rows_key(rows.decode_rows(event, plan)))
    except BinlogError as exc:
        return ("error", error_key(exc))


def check_rows(case: RowsCase) -> str:
    """Decode the case on both paths; raise Difference if they disagree.  Returns what
    the compiled walk did: "compiled" (it decoded the event), "fallback" (it handed the
    event to the pure path), "error" / "skipped" (no walk: the TABLE_MAP or the plan
    failed, or no compiled module)."""
    events = case_events(case)
    if events is None:
        return "skipped"
    table_map, event = events
    with pure():
        reference = _decode(event, _plan(case, table_map))
    if rows._speedups is None:
        return "skipped"
    plan = _plan(case, table_map)
    got = _decode(event, plan)
    if got != reference:
        raise Difference(f"decode_rows differs:\n  compiled {got}\n  pure     {reference}")
    _check_counts(event, plan, case, table_map, reference)
    _check_case_dump(case)
    _check_typed(event, plan, case, table_map, reference)
    _check_images(event, plan, case, table_map)
    walked = _walk(event, plan)
    if walked is None:
        return "error" if reference[0] == "error" else "fallback"
    if reference[0] == "error":
        raise Difference(f"the compiled walk decoded what the pure walk rejects:\n  compiled "
                         f"{walked}\n  pure     {reference}")
    if walked != reference[1]:
        raise Difference(f"_speedups.decode_event differs:\n  compiled {walked}\n  pure     {reference}")
    _check_checksums(event, plan)
    _check_sql_values(event, plan)
    return "compiled"


# The typed tables' column types (spark_ingest.typed's names) of a binlog column: what
# the schema store would give (spark_type_sql), and two more ways a store can disagree
# with the binlog (every column a narrow integer, every column text).
_NATURAL = {T.TINY: ("tinyint", "smallint"), T.SHORT: ("smallint", "int"), T.INT24: ("int", "int"),
            T.LONG: ("int", "bigint"), T.LONGLONG: ("bigint", "decimal(20,0)"),
            T.YEAR: ("smallint", "smallint"), T.FLOAT: ("float", "float"),
            T.DOUBLE: ("double", "double"), T.DATE: ("date", "date"), T.NEWDATE: ("date", "date"),
            T.TIMESTAMP: ("timestamp", "timestamp"), T.TIMESTAMP2: ("timestamp", "timestamp"),
            T.DATETIME: ("timestamp_ntz", "timestamp_ntz"),
            T.DATETIME2: ("timestamp_ntz", "timestamp_ntz")}
_BYTES = (T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB,
          T.GEOMETRY)


def typed_columns(plan, variant: int = 0) -> list[tuple[str, str]]:
    out = []
    for col in plan.columns:
        if variant:
            kind = "tinyint" if variant == 1 else "string"
        elif col.type in _NATURAL:
            kind = _NATURAL[col.type][1 if col.unsigned else 0]
        elif col.type == T.NEWDECIMAL:
            p, s = col.precision or 10, col.scale or 0
            kind = f"decimal({p},{s})" if 0 < p <= 38 and s <= p else "string"
        elif col.type == T.BIT:
            kind = "bigint" if (col.length or 0) < 8 else "decimal(20,0)"
        elif col.type in _BYTES and col.encoding is None:
            kind = "binary"
        else:
            kind = "string"
        out.append((col.key, kind))
    return out


def _typed_tables(event, plan, columns, case: RowsCase, table_map):
    """The typed table of the event's rows: the Python way (arrow_typed.TableRows over
    the pure decoder's rows), and the compiled way (arrow_columns.ArrowRows, None when
    it falls back)."""
    from binlog.output.values import bytes_renderer
    from binlog.reader import RowBatch, RowChange
    from spark_ingest.arrow_columns import ArrowRows
    from spark_ingest.arrow_typed import META_COLUMNS, TableRows, caster, table_schema

    schema = table_schema(columns)
    args = ("case.binlog", 4, 1_700_000_000, 1, "0-1-1", plan.db, plan.table, event.kind)
    compiled = ArrowRows(columns, schema, None, len(META_COLUMNS))
    got = compiled.table() if compiled.add_event(RowChange(*args, None, None, plan), event) else None
    with pure():
        plan = _plan(case, table_map)          # a plan without compiled walks
        try:
            decoded = rows.decode_rows(event, plan)
        except BinlogError:
            return None, got
        python = TableRows(columns, schema, [caster(k) for _, k in columns], render_bytes=bytes_renderer("hex"))
        python.add_rows(RowBatch(*args, decoded, plan))
        return python.table(), got


# rows whose changes/ image columns _check_images compared (tests assert the seeds reach it)
IMAGES_CHECKED = [0]


def _check_images(event, plan, case: RowsCase, table_map) -> int:
    """The before/after columns of ``binlog ingest``'s changes/ that the compiled encoder
    writes into the batch's Arrow buffers (``records.ImagesEncoder``:
    ``_speedups.images_encode``) against those the Python way gives (``images_json`` of
    the pure decoder's rows), put into the compiled builder (``images_put``, the
    fallback's entry) and into the pure one (lists, ``pa.array``), in hex and base64:
    every byte of every image, and every null.  None (a fallback) leaves the event to
    the Python way, and must add no row.  Returns the rows checked."""
    from binlog.output.json_lines import images_json
    from binlog.output.values import bytes_renderer
    from binlog.reader import RowChange
    from spark_ingest.records import BatchBuilder, ImagesEncoder

    if isinstance(plan, BinlogError):
        return 0
    checked = 0
    for encoding in ("hex", "base64"):
        change = RowChange("case.binlog", 4, 1, 1, None, plan.db, plan.table, event.kind, None, None, plan)
        builder = BatchBuilder(encoding)
        try:
            got = ImagesEncoder(builder)(change, event)
        except BinlogError:
            got = None          # a value the JSON writer refuses: the decoding way raises it too
        except Exception as exc:
            raise Difference(f"ImagesEncoder raised {type(exc).__name__}: {exc}") from exc
        if got is None:
            # nothing may stay behind, not even the bytes of an image begun
            builder.images.put([None], [b"{}"])
            left = [c.to_pylist() for c in builder.images.finish(1)]
            if rows._speedups.images_rows(builder.images.builder) != 1 or left != [[None], ["{}"]]:
                raise Difference(f"ImagesEncoder fell back and left {left}")
            continue
        columns = builder.images.finish(got.count)
        with pure():
            pure_plan = _plan(case, table_map)
            try:
                decoded = rows.decode_rows(event, pure_plan)
                render = bytes_renderer(encoding)
                befores = images_json([b for b, _ in decoded], pure_plan, render)
                afters = images_json([a for _, a in decoded], pure_plan, render)
            except BinlogError as exc:
                raise Difference(f"ImagesEncoder wrote what the pure way rejects ({exc})") from exc
            pure_builder = BatchBuilder(encoding)
            pure_builder.images.put(befores, afters)
            listed = pure_builder.images.finish(len(befores))
        fallback = BatchBuilder(encoding)
        fallback.images.put(befores, afters)
        put = fallback.images.finish(len(befores))
        want = ([None if b is None else b.decode() for b in befores],
                [None if a is None else a.decode() for a in afters])
        for name, other in (("pure builder", listed), ("images_put", put)):
            for column in columns + other:
                column.validate(full=True)
            if not all(a.equals(b) for a, b in zip(columns, other, strict=True)) or \
                    tuple(c.to_pylist() for c in columns) != want:
                raise Difference(f"image columns differ from the {name}'s ({encoding}):\n"
                                 f"  compiled {[c.to_pylist() for c in columns]}\n  pure     {want}")
        checked += got.count
    IMAGES_CHECKED[0] += checked
    return checked


# rows whose typed columns the compiled walk filled and _check_typed compared (tests
# assert the seeds reach it)
TYPED_CHECKED = [0]


def _check_typed(event, plan, case: RowsCase, table_map, reference: tuple) -> int:
    """The typed tables' columns the compiled walk fills from the event's bytes
    (``_speedups.typed_append``, ``binlog ingest``'s tables/) against the Python way's
    (``arrow_typed``: the decoded values rendered and cast as Spark does), for three
    column typings; a fallback leaves the event to that way, and must where the pure
    decoder raises.  Returns the rows checked."""
    if isinstance(plan, BinlogError) or event.partial or event.width != len(plan.columns) \
            or not event.data:
        return 0
    checked = 0
    for variant in range(3):
        columns = typed_columns(plan, variant)
        try:
            expected, got = _typed_tables(event, plan, columns, case, table_map)
        except Difference:
            raise
        except Exception as exc:
            raise Difference(f"typed columns ({columns}) raised {type(exc).__name__}: {exc}") from exc
        if got is None:
            continue
        if reference[0] == "error" or expected is None:
            raise Difference(f"typed_append took an event the pure decoder rejects: {reference}")
        got.validate(full=True)
        if got.schema != expected.schema or _typed_key(got) != _typed_key(expected):
            raise Difference(f"typed columns differ ({columns}):\n  compiled {got.to_pylist()}\n"
                             f"  pure     {expected.to_pylist()}")
        checked += got.num_rows
    TYPED_CHECKED[0] += checked
    return checked


def _typed_key(table) -> tuple:
    """The table's values, dates and timestamps as their integers (Python's date types
    cannot hold year 0 or 10000+), the _before struct's nulls beside its fields."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for column in table.columns:
        if pa.types.is_struct(column.type):
            columns.append(pc.is_null(column).to_pylist())
    for column in table.flatten().columns:
        if pa.types.is_date32(column.type):
            column = column.cast(pa.int32())
        elif pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        columns.append(column.to_pylist())
    return tuple(value_key(values) for values in columns)


def _check_sql_values(event, plan) -> int:
    """The ``(v1, v2, ...)`` texts the compiled walk writes from the event's bytes
    (``rows.sql_values``: dump --format sql) against ``output.sql.literals.RowValues`` over the
    decoded images (equal to the pure decoder's: checked before): the after image of
    inserts and updates, the before image of updates and deletes (the keys of DELETE and
    UPDATE), with every column and with columns left out ('s': walked, not written, as
    a key column alone is written); a Fallback leaves the event to that path, and must
    where ``literal`` refuses a value.  Returns the rows checked."""
    from binlog.output.sql.literals import RowValues, literal_bytes, value_code

    codes = [value_code(c) for c in plan.columns]
    images = {"insert": [False], "update": [False, True], "delete": [True]}[event.kind]
    masks = [[True] * len(codes), [i % 2 == 0 for i in range(len(codes))],
             [i == len(codes) // 2 for i in range(len(codes))]]
    checked = 0
    for before in images:
        for mask in masks:
            spec = "".join(c if kept else "s" for c, kept in zip(codes, mask, strict=True)).encode()
            try:
                got = rows.sql_values(event, plan, spec, literal_bytes, before=before)
            except Exception as exc:
                raise Difference(f"_speedups.sql_values raised {type(exc).__name__}: {exc}") from exc
            if got is None:
                continue
            values = RowValues([c for c, kept in zip(plan.columns, mask, strict=True) if kept], spec)
            try:
                expected = [values(image[0] if before else image[1])
                            for image in rows.decode_rows(event, plan)]
            except BinlogError as exc:
                raise Difference(f"sql_values wrote what literal() refuses ({exc}): {got}") from exc
            if got != expected:
                raise Difference(f"sql_values differs (before={before}, spec {spec!r}):\n"
                                 f"  compiled {got}\n  pure     {expected}")
            checked += len(got)
    if event.kind != "delete":
        checked += _check_set_lists(event, plan, codes)
    return checked


def _check_set_lists(event, plan, codes) -> int:
    """``n1 = v1, ...`` of each row's after image (``names``: an UPDATE's SET, --no-safe)
    against ``literal`` of each decoded value, as ``SqlRenderer.update`` writes them."""
    from binlog.output.sql.literals import literal, literal_bytes

    names = tuple(f"`c{i}`".encode() for i in range(len(codes)))
    try:
        got = rows.sql_values(event, plan, "".join(codes).encode(), literal_bytes, names=names)
    except Exception as exc:
        raise Difference(f"_speedups.sql_values (names) raised {type(exc).__name__}: {exc}") from exc
    if got is None:
        return 0
    try:
        expected = [", ".join(f"`c{c.index}` = {literal(after[c.key], c)}" for c in plan.columns)
                    for _, after in rows.decode_rows(event, plan)]
    except BinlogError as exc:
        raise Difference(f"sql_values wrote what literal() refuses ({exc}): {got}") from exc
    if got != expected:
        raise Difference(f"sql_values (names) differs:\n  compiled {got}\n  pure     {expected}")
    return len(got)


_CHECKSUM_FIELD = re.compile(rb',"checksum":(\{"current":(?:[0-9]+|null),"previous":(?:[0-9]+|null)\})')


def _check_checksums(event, plan) -> int:
    """The row checksums the compiled walk computes from the event's bytes - in the JSON
    lines of ``encode_rows`` flag 8 (``dump --checksum``) and by ``checksum_rows``
    (``verify-rows``) - against ``checksum.RowChecksum`` over the decoded rows (equal to
    the pure decoder's: checked before); a Fallback leaves the event to that path.
    Returns the rows checked."""
    from binlog.checksum import RowChecksum, crc_update
    from binlog.output.json_lines import value_json
    from binlog.output.values import bytes_renderer

    decoded = rows.decode_rows(event, plan)
    checksum = RowChecksum(plan.columns)
    try:
        expected = [{"current": checksum(after), "previous": checksum(before)} for before, after in decoded]
    except ValueError:              # checksum.ChecksumError: the compiled paths must fall back
        expected = None
    try:
        after = rows.after_checksums(event, plan, crc_update)
    except Exception as exc:
        raise Difference(f"_speedups.checksum_rows raised {type(exc).__name__}: {exc}") from exc
    if after is not None and (expected is None or after != [e["current"] for e in expected]):
        raise Difference(f"checksum_rows differs:\n  compiled {after}\n  pure     {expected}")
    render = value_json(plan, bytes_renderer("hex"))
    try:
        encoded = rows.encode_rows(event, plan, False, 8, b"{", b"", b"\n", render, crc_update)
    except BinlogError:
        return 0    # a value the JSON writer refuses: the per-row path raises it too
    except Exception as exc:
        raise Difference(f"_speedups.encode_rows (checksums) raised {type(exc).__name__}: {exc}") from exc
    if encoded is None:
        return 0
    got = [orjson.loads(m) for m in _CHECKSUM_FIELD.findall(encoded[0])]
    if expected is None:
        raise Difference(f"the compiled checksum took a row the pure one rejects: {got}")
    if got != expected:
        raise Difference(f"encode_rows checksums differ:\n  compiled {got}\n  pure     {expected}")
    return len(got)

_case_dir: list[Path] = []


def _check_case_dump(case: RowsCase) -> None:
    """The case's binlog through ``binlog dump`` (JSON or text: the batch encoders of
    every column type), both paths; without the case's schema (legacy temporals of
    unknown precision fail alike on both)."""
    if not _case_dir:
        import tempfile

        _case_dir.append(Path(tempfile.mkdtemp(prefix="binlog-case-")))
    options = 0x20 if zlib.crc32(case.rows) & 1 else 0x00
    data, path = bytes([options]) + case.binlog(), _case_dir[0] / "case.binlog"
    with pure():
        reference = cli_dump(data, path)
    got = cli_dump(data, path)
    if got != reference:
        raise Difference(f"binlog dump of the case differs:\n  compiled {short(got)}\n  pure     {short(reference)}")


def _count(event, plan) -> tuple:
    if isinstance(plan, BinlogError):
        return ("error", error_key(plan))
    try:
        return ("count", rows.count_rows(event, plan))
    except BinlogError as exc:
        return ("error", error_key(exc))


def _check_counts(event, plan, case: RowsCase, table_map, reference: tuple) -> None:
    """``binlog stats``' row count (rows.count_rows: binlog/_scan.c count_rows over the
    value lengths, else a decode) on both paths; and the count of an event that
    decodes is its number of rows.  (An event whose values the decoder rejects may
    still count: count_rows frames, it does not validate values.)"""
    if not hasattr(rows, "count_rows"):
        return
    with pure():
        expected = _count(event, _plan(case, table_map))
    got = _count(event, plan)
    if got != expected:
        raise Difference(f"count_rows differs:\n  compiled {got}\n  pure     {expected}")
    if reference[0] == "rows" and expected != ("count", len(reference[1])):
        raise Difference(f"count_rows says {expected}, the event decodes to {len(reference[1])} rows")
    scan = sys.modules.get("binlog.scan")
    if scan is None or scan.compiled is None or isinstance(plan, BinlogError) or event.partial \
            or event.width != len(plan.columns):
        return
    before = rows._count_walk(plan, event.present)
    after = rows._count_walk(plan, event.after_present) if event.kind == "update" else before
    if before is None or after is None:
        return
    args = (event.data, rows._KIND_CODES[event.kind], before[1], before[0], after[1], after[0])
    if scan.compiled.count_rows(*args) != scan.count_rows_py(*args):
        raise Difference(f"_scan.count_rows {scan.compiled.count_rows(*args)}, "
                         f"count_rows_py {scan.count_rows_py(*args)}")


def _walk(event, plan):
    """The compiled walk alone, as decode_rows calls it: its rows, or None when it falls
    back (or is not used for this event).  Anything but Fallback escaping is a finding."""
    if isinstance(plan, BinlogError) or event.partial or event.width != len(plan.columns):
        return None
    walk = plan.walk(event.present)
    if walk[2] is None:
        return None
    walk_after = plan.walk(event.after_present) if event.kind == "update" else walk
    if len(event.data) and not walk[0] and (event.kind != "update" or not walk_after[0]):
        return None
    speedups = rows._speedups
    try:
        decoded = speedups.decode_event(event.data, rows._KIND_CODES[event.kind], walk[2],
                                        walk_after[2], walk[1], walk_after[1])
    except speedups.Fallback:
        return None
    except Exception as exc:
        raise Difference(f"_speedups.decode_event raised {type(exc).__name__}: {exc}") from exc
    return rows_key(decoded)


# --- seeds: the rows events of real binlogs ------------------------------------------

def sample_cases(path: Path) -> list[RowsCase]:
    """A RowsCase per rows event of a real binlog (its TABLE_MAP, its FDE), with the
    legacy temporal precisions the schema store (DDL in the binlog) gives."""
    import make_seeds

    from binlog.header import CHECKSUM_CRC32
    from binlog.reader import BinlogReader, RowChange
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    data = path.read_bytes()
    frames = make_seeds.frames(path)
    if not frames or frames[0][2] != 15:
        return []
    plans = {}
    try:
        reader = BinlogReader([path], schema=SchemaResolver(SchemaStore(None), track_ddl=True,
                                                            on_warning=lambda message: None))
        for item in reader.items():
            if isinstance(item, RowChange):
                plans[item.pos] = item.plan
    except BinlogError:
        pass
    stream = EventStream(path.name)
    offset, size, _ = frames[0]
    stream.feed(data[:offset + size])
    stream.close()
    while stream.next_event() not in (NEED_DATA, None):
        pass
    fde = stream.fde
    crc = fde.checksum_alg == CHECKSUM_CRC32
    known_zero = not fde.writes_legacy_hires
    tail = 4 if crc else 0
    cases, table_map = [], None
    for offset, size, type_code in frames[1:]:
        body = data[offset + 19:offset + size - tail]
        if type_code == TABLE_MAP:
            table_map = body
        elif type_code in ROWS_TYPES and table_map is not None:
            plan = plans.get(offset)
            schema = {c.index: {"precision": c.precision} for c in plan.columns
                      if c.type in LEGACY_TEMPORAL_TYPES and c.precision is not None} if plan else {}
            cases.append(RowsCase(data[frames[0][0]:frames[0][0] + frames[0][1]], crc, table_map,
                                  type_code, body, schema, known_zero))
    return cases


# --- one input as bytes (atheris, the regression corpus) -----------------------------
#
# byte 0 >= 0x80: a dump: the rest is fuzz/target.py's option byte and a binlog file.
# byte 0 in 0x40-0x7F: a skip_run case (skip_case_from_bytes).
# byte 0 in 0x20-0x3F: a rewrite: the rest is cli_rewrite's option byte and a binlog file.
# byte 0 < 0x20: a RowsCase: bit 0 known_zero; byte 1 the FORMAT_DESCRIPTION (index in
# SAMPLES); byte 2 the rows event type; byte 3 the number n of schema attributes,
# then n x (column index, attribute, value) - attribute 0 precision, 1 unsigned,
# 2 encoding (ENCODINGS[value]), 3 enum_values (a list - as a schema object may give
# them - of the first value % 8 of LABELS); then u16 LE the TABLE_MAP body's length, the TABLE_MAP
# body, and the rows event body to the end.

DUMP = 0x80
SKIP_RUN = 0x40
REWRITE = 0x20
# Samples whose rows events seed the RowsCase inputs and whose FORMAT_DESCRIPTIONs a case
# picks from: every column type of MariaDB 10.11 (with and without checksums), legacy
# temporals with their DDL, MySQL 5.1/5.6/8.0 (JSON, BIT, v1/v2 rows).
SAMPLES = ["samples/mariadb-10.11/types_full.binlog", "samples/mariadb-10.11/checksum_none.binlog",
           "samples/mysql-test/json.binlog.000001", "samples/mysql-test/ver_5_1_23.001",
           "samples/mysql-test/mariadb-bin.000001", "samples/mariadb-10.11/legacy_temporal.binlog",
           "samples/mariadb-10.11/temporal_cells.binlog", "samples/mariadb-10.11/temporal_alter.binlog",
           "samples/mariadb-10.11/compressed.binlog", "samples/mariadb-10.11/compressed_columns.binlog",
           "samples/mariadb-10.11/signedness.binlog", "samples/mariadb-10.11/types_nometa.binlog",
           "samples/mariadb-10.11/row_image_minimal.binlog", "samples/mysql-test/mysql_type_bit.000001",
           "samples/mysql-test/ver_trunk_row_v2.001", "samples/mysql-test/bug32407.001"]
ENCODINGS = ("utf-8", "latin-1", "cp1251", "utf-16-be", "ascii", "gbk", "sjis", "cp1252")
LABELS = ("a", "bb", "é", "", "d e", "\u2603", "x" * 40, "z")
_ATTRS = ("precision", "unsigned", "encoding", "enum_values")
_fdes: list[tuple[bytes, bool]] = []


def fdes() -> list[tuple[bytes, bool]]:
    """(FORMAT_DESCRIPTION event, CRC32) of each SAMPLES file."""
    from binlog.header import CHECKSUM_CRC32

    if not _fdes:
        for name in SAMPLES:
            data = (HERE.parent / name).read_bytes()
            size = int.from_bytes(data[4 + 9:4 + 13], "little")
            stream = EventStream(name)
            stream.feed(data[:4 + size])
            stream.close()
            while stream.next_event() not in (NEED_DATA, None):
                pass
            _fdes.append((data[4:4 + size], stream.fde.checksum_alg == CHECKSUM_CRC32))
    return _fdes


def case_to_bytes(case: RowsCase) -> bytes:
    index = next((i for i, (fde, _) in enumerate(fdes()) if fde == case.fde), None)
    if index is None:
        raise ValueError("the case's FORMAT_DESCRIPTION is not one of SAMPLES")
    attrs = []
    for col, values in sorted(case.schema.items()):
        for name, value in values.items():
            code = _ATTRS.index(name)
            value = (ENCODINGS.index(value) if name == "encoding" else len(value) if name == "enum_values"
                     else int(value))
            attrs.append(bytes([col & 0xFF, code, value & 0xFF]))
    return (bytes([int(case.known_zero), index, case.rows_type, len(attrs)]) + b"".join(attrs)
            + len(case.table_map).to_bytes(2, "little") + case.table_map + case.rows)


def case_from_bytes(data: bytes) -> RowsCase | None:
    if len(data) < 4:
        return None
    known_zero, index, rows_type, count = data[0] & 1, data[1], data[2], data[3]
    fde, crc = fdes()[index % len(fdes())]
    pos, schema = 4, {}
    for _ in range(count):
        if pos + 3 > len(data):
            return None
        col, code, value = data[pos:pos + 3]
        pos += 3
        name = _ATTRS[code % len(_ATTRS)]
        schema.setdefault(col, {})[name] = (ENCODINGS[value % len(ENCODINGS)] if name == "encoding"
                                            else bool(value & 1) if name == "unsigned"
                                            else list(LABELS[:value % 8]) if name == "enum_values" else value)
    if pos + 2 > len(data):
        return None
    size = int.from_bytes(data[pos:pos + 2], "little")
    pos += 2
    table_map = data[pos:pos + size]
    return RowsCase(fde, crc, table_map, rows_type, data[pos + size:], schema, bool(known_zero))


def check_bytes(data: bytes, path: Path) -> None:
    """One fuzz input (the format above) on both paths; Difference if they disagree."""
    if data and data[0] & DUMP:
        check_dump(data[1:], path)
        return
    if data and data[0] & SKIP_RUN:
        case = skip_case_from_bytes(data[1:])
        if case is not None:
            check_skip_run(case)
        return
    if data and data[0] & REWRITE:
        from differential_rewrite import check_rewrite

        check_rewrite(data[1:], path)
        return
    case = case_from_bytes(data)
    if case is not None:
        check_rows(case)


def runs_binlog(checksums: bool = True) -> bytes:
    """A binlog of long runs of rows events (``_speedups.encode_run``, ``_scan.count_run``):
    two transactions, each a TABLE_MAP of (INT, VARCHAR(60)) and 24 WRITE, 8 UPDATE and 8
    DELETE rows events of a few rows (NULLs, quotes, control bytes in the text), v1 and
    v2, then an XID."""
    from differential_rewrite import BinlogBuilder

    made = BinlogBuilder(checksums)
    add = made.add
    table_map = (b"\x2a\x00\x00\x00\x00\x00\x01\x00" + b"\x02ru\x00" + b"\x01t\x00" + packed(2)
                 + bytes([3, 15]) + packed(2) + (60).to_bytes(2, "little") + b"\x03")

    def image(i: int) -> bytes:
        text = (b"a'\"\\\x01" * (i % 5))[:60]
        null = 0x02 if i % 7 == 0 else 0
        return bytes([null]) + i.to_bytes(4, "little") + (b"" if null else bytes([len(text)]) + text)

    for tx in range(2):
        add(TABLE_MAP, table_map)
        for n, (v1, v2) in enumerate(((WRITE_V1, WRITE_V2), (UPDATE_V1, UPDATE_V2), (DELETE_V1, DELETE_V2))):
            for k in range(24 if n == 0 else 8):
                code = v2 if (k // 4) % 2 else v1
                rows = b"".join(image(tx * 1000 + k * 3 + r) * (2 if code in (UPDATE_V1, UPDATE_V2) else 1)
                                for r in range(1 + k % 3))
                add(code, rows_body(code, 2, b"\x03", b"\x03", rows))
        add(XID, (tx + 1).to_bytes(8, "little"))
    return bytes(made.out)


def seed_inputs() -> list[bytes]:
    """Seeds: every rows event of the samples as a RowsCase input, and fuzz/make_seeds.py's
    binlog windows as dump inputs."""
    import make_seeds
    from differential_rewrite import legacy_runs_binlog

    out = []
    for name in SAMPLES:
        for case in sample_cases(HERE.parent / name):
            out.append(case_to_bytes(case))
    for path in make_seeds.sources():
        out.extend(bytes([DUMP]) + seed for seed in make_seeds.seeds_of(path)[::4])
    for name in SAMPLES:
        out.extend(skip_seeds(HERE.parent / name))
    out += [bytes([DUMP, options]) + runs_binlog(crc) for options in (0x00, 0x04, 0x20)
            for crc in (True, False)]
    out += [bytes([REWRITE, options]) + legacy_runs_binlog(crc) for options in (0x00, 0x02, 0x05)
            for crc in (True, False)]
    return out


def skip_seeds(path: Path, limit: int = 16384) -> list[bytes]:
    """skip_run inputs over a sample's events after its FORMAT_DESCRIPTION: table ids
    of its rows events filtered, or every rows event skipped, with and without a
    timestamp limit and the strict chain."""
    import make_seeds

    from binlog.events.rows import ROWS_EVENT_TYPES

    frames = make_seeds.frames(path)
    if len(frames) < 2 or frames[0][2] != 15:
        return []
    data = path.read_bytes()
    start = frames[1][0]
    buf = data[start:start + limit]
    crc = 0x01 if fdes()[SAMPLES.index(str(path.relative_to(HERE.parent)))][1] else 0
    tables = [int.from_bytes(data[o + 19:o + 21], "little") for o, _, t in frames if t in ROWS_EVENT_TYPES]
    firsts = [o - start for o, _, t in frames if t in ROWS_EVENT_TYPES and o - start < min(limit, 1 << 16)]
    out = []
    for k, flags in enumerate((0x00, 0x02 | 0x08, 0x40 | 0x08, 0x04 | 0x80 | 0x02, 0x20)):
        if not firsts:
            break
        at = firsts[k * 7 % len(firsts)]
        ts = int.from_bytes(buf[at:at + 4], "little") + 1
        head = bytes([SKIP_RUN, flags | crc, 2]) + ts.to_bytes(4, "little")
        head += tables[k % len(tables)].to_bytes(2, "little") + at.to_bytes(2, "little") + b"\xff\xff\xff\xff"
        out.append(head + buf)
    return out



# --- binlog/_scan.c skip_run: the compiled header walk against scan.skip_run_py --------

@dataclass
class SkipCase:
    """Arguments of ``scan.skip_run`` (see binlog/_scan.c) over ``buf``, within their
    documented ranges; the bytes are what a hostile binlog controls."""
    buf: bytes
    pos: int
    end: int
    offset: int
    widths: bytes
    checksum_len: int
    table_ids: frozenset | None
    all_rows: bool
    before_ts: int
    stop_ts: int
    stop_offset: int
    last_log_pos: int
    chain_run: int
    strict_chain: bool

    def args(self) -> tuple:
        return (self.buf, self.pos, self.end, self.offset, self.widths, 19, self.checksum_len,
                self.table_ids, self.all_rows, self.before_ts, self.stop_ts, self.stop_offset,
                self.last_log_pos, self.chain_run, self.strict_chain)


def rows_widths(width: int = 6) -> bytes:
    """skip_run's widths: the table_id width of every rows event type code, 0 elsewhere."""
    from binlog.events.rows import ROWS_EVENT_TYPES

    return bytes(width if code in ROWS_EVENT_TYPES else 0 for code in range(256))


def check_skip_run(case: SkipCase) -> str:
    """Compiled skip_run against skip_run_py: the same result, or the same exception
    type.  Returns "skipped" (no compiled module), "none" or "stepped"."""
    scan = sys.modules.get("binlog.scan")
    if scan is None:
        try:
            import binlog.scan as scan
        except ImportError:
            return "skipped"
    if scan.compiled is None:
        return "skipped"
    outcomes = []
    for walk in (scan.compiled.skip_run, scan.skip_run_py):
        try:
            outcomes.append(("result", walk(*case.args())))
        except Exception as exc:
            outcomes.append(("raised", type(exc).__name__))
    if outcomes[0] != outcomes[1]:
        raise Difference(f"skip_run differs:\n  compiled {outcomes[0]}\n  pure     {outcomes[1]}")
    return "none" if outcomes[0] == ("result", None) else "stepped"


def skip_case_from_bytes(data: bytes) -> SkipCase | None:
    """byte 0: flags (0x01 CRC, 0x02 all_rows, 0x04 strict_chain, 0x08 no table_ids,
    0x10 4-byte table ids, 0x20 stop_offset, 0x40 before_ts, 0x80 stop_ts); byte 1
    chain_run; bytes 2-5 u32 LE the timestamp both limits derive from; bytes 6-7 u16 LE
    a filtered table id (and the next one); bytes 8-9 u16 LE where the walk starts in
    the buffer; bytes 10-13 u32 LE last_log_pos (0xFFFFFFFF: none); the buffer."""
    if len(data) < 14:
        return None
    flags, chain_run = data[0], data[1]
    ts = int.from_bytes(data[2:6], "little")
    table = int.from_bytes(data[6:8], "little")
    buf = data[14:]
    pos = min(int.from_bytes(data[8:10], "little"), len(buf))
    last = int.from_bytes(data[10:14], "little")
    return SkipCase(buf, pos, len(buf), pos, rows_widths(4 if flags & 0x10 else 6),
                    4 if flags & 0x01 else 0, None if flags & 0x08 else frozenset({table, table + 1}),
                    bool(flags & 0x02), ts if flags & 0x40 else -1, ts + 60 if flags & 0x80 else -1,
                    pos + (ts & 0xFFFF) if flags & 0x20 else -1, -1 if last == 0xFFFFFFFF else last,
                    chain_run & 7, bool(flags & 0x04))
