"""Golden tests: `binlog dump --format json` of every sample reproduces what the server holds.

The expected files (samples/*/<case>.expected.json) come from the server's own SELECTs
after every statement (samples/generate.py), never from this parser.  The test replays
the JSON records of the dump onto an in-memory copy of each table and, after each
statement that wrote a transaction, compares the copy with the server's snapshot.
That checks every after image (inserts, updates) and every before image (an update or
delete must find exactly the row it names).
"""
from __future__ import annotations

import io
import ipaddress
import math
import re
import struct
from pathlib import Path

import orjson
import pytest

from binlog.errors import PrecisionUnknownError
from binlog.events import MariaGtidEvent, MysqlGtidEvent, QueryEvent
from binlog.output.json_lines import JsonLinesWriter
from binlog.reader import BinlogReader, RowChange
from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CASES = sorted(SAMPLES.glob("*/*.expected.json"))
# Cases with legacy (MariaDB 5.3 format) temporal columns: decoded with the schema the
# binlog's own DDL gives, or the case's schema dump; without either they must stop.
def has_legacy(expected: dict) -> bool:
    tables = list(expected["tables"].values()) + list(expected.get("binlog_start", {}).get("tables", {}).values())
    tables += [m for s in expected["steps"] for m in (s.get("tables_after") or {}).values() if m]
    return any(c.get("legacy_temporal") for t in tables for c in t["columns"])


UNKNOWN = object()   # a column absent from a MINIMAL/NOBLOB image: matches anything
_STATEMENT_DML = re.compile(r"^\s*(?:(?:insert|replace|update|delete)\s+(?:ignore\s+)?(?:into\s+|from\s+)?"
                            r"|load\s+data\s.*?\sinto\s+table\s+)"
                            r"`?(\w+)`?(?:\.`?(\w+)`?)?", re.I | re.S)
_TRUNCATE = re.compile(r"^\s*truncate\s+(?:table\s+)?`?(\w+)`?(?:\.`?(\w+)`?)?", re.I)
_RENAME = re.compile(r"\brename\s+table\s+`?([\w.]+)`?\s+to\s+`?([\w.]+)`?", re.I)
_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}


def load(path: Path) -> dict:
    return orjson.loads(path.read_bytes())


def binlog_paths(path: Path, expected: dict) -> list[Path]:
    return [path.parent / p for p in expected["binlog_paths"]]


def resolver(schema_files=(), track_ddl=True):
    """What `binlog dump` uses by default: an in-memory store following the binlog's DDL,
    plus --schema-ddl files."""
    store = SchemaStore()
    for path in schema_files:
        store.import_ddl(Path(path).read_text(encoding="utf-8"), source=f"ddl:{Path(path).name}")
    return SchemaResolver(store, track_ddl=track_ddl)


def dump_records(paths, schema=None) -> tuple[list[dict], set[str]]:
    """The JSON records exactly as `binlog dump --format json` writes them, and the
    tables changed by statement-format events (their rows are not in the binlog)."""
    if schema is None:
        schema = resolver()
    out = io.BytesIO()
    writer = JsonLinesWriter(out)
    statement_tables = set()
    truncates = []      # (index of the next record, gtid, table) for TRUNCATE TABLE
    db = gtid = None
    count = 0
    for item in BinlogReader(paths, schema=schema).items():
        if isinstance(item, RowChange):
            writer.write(item)
            count += 1
        elif isinstance(item.event, (MariaGtidEvent, MysqlGtidEvent)):
            gtid = item.event.gtid
        elif isinstance(item.event, QueryEvent):
            db = item.event.db or db
            for pattern, into in ((_STATEMENT_DML, statement_tables), (_TRUNCATE, None)):
                m = pattern.match(item.event.query)
                if m:
                    table = f"{m.group(1)}.{m.group(2)}" if m.group(2) else f"{db}.{m.group(1)}"
                    if into is None:
                        truncates.append((count, gtid, table))
                    else:
                        into.add(table)
    records = [orjson.loads(line) for line in out.getvalue().splitlines()]
    for index, gtid, table in reversed(truncates):
        db_name, table_name = table.split(".", 1)
        records.insert(index, {"op": "truncate", "gtid": gtid, "db": db_name, "table": table_name})
    return records, statement_tables


class Table:
    def __init__(self, meta: dict, carry: "Table | None" = None):
        self.columns = meta["columns"]
        self.by_name = {c["name"]: c for c in self.columns}
        self.rows: list[list] = []
        if carry is not None:
            # ALTER TABLE: keep the rows, by column name; a new column's value (its
            # default) is not in the binlog, so it is UNKNOWN until a row image sets it.
            old = {c["name"]: i for i, c in enumerate(carry.columns)}
            self.rows = [[row[old[c["name"]]] if c["name"] in old else UNKNOWN
                          for c in self.columns] for row in carry.rows]

    def column(self, key: str) -> dict:
        if key.startswith("@"):
            return self.columns[int(key[1:]) - 1]
        return self.by_name[key]

    def image(self, values: dict) -> dict[int, object]:
        out = {}
        for key, value in values.items():
            col = self.column(key)
            out[col["ordinal"] - 1] = normalise(value, col)
        return out

    def find(self, image: dict[int, object]) -> int:
        for i, row in enumerate(self.rows):
            if all(same(row[k], v, self.columns[k]) for k, v in image.items()):
                return i
        raise AssertionError(f"no row matches before image {image}")

    def apply(self, record: dict) -> None:
        if record["op"] == "truncate":
            self.rows.clear()
            return
        if record["op"] in ("update", "delete"):
            i = self.find(self.image(record["before"]))
            if record["op"] == "delete":
                del self.rows[i]
                return
            row = self.rows[i]
            for k, v in self.image(record["after"]).items():
                row[k] = v
        else:
            row = [UNKNOWN] * len(self.columns)
            for k, v in self.image(record["after"]).items():
                row[k] = v
            self.rows.append(row)


def normalise(value, col: dict):
    """Our JSON value in the server's text form (see samples/README.md)."""
    if value is None or isinstance(value, float):
        return value
    kind = col["data_type"]
    if kind == "year" and isinstance(value, int):
        return f"{value:04d}"
    if isinstance(value, int) and kind in ("enum", "set"):
        labels = re.findall(r"'((?:[^']|'')*)'", col["column_type"])
        if kind == "enum":
            return labels[value - 1] if value else ""
        return ",".join(l for i, l in enumerate(labels) if value >> i & 1)
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


def stored_form(server: str, col: dict) -> str:
    """INET6/INET4/UUID are rendered as text by the server but logged as BINARY(16)/(4)."""
    kind = col["data_type"]
    if kind in ("inet6", "inet4"):
        return ipaddress.ip_address(server).packed.hex()
    if kind == "uuid":
        return server.replace("-", "")
    return server


def same(ours, server, col: dict) -> bool:
    if ours is UNKNOWN or server is UNKNOWN:
        return True
    if ours is None or server is None:
        return ours is None and server is None
    if col["data_type"] in ("float", "double"):
        a, b = float(ours), float(server)
        if col["data_type"] == "float":
            # The server prints FLOAT with 6 significant digits; compare as float32.
            return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-44) or \
                struct.pack("<f", a) == struct.pack("<f", b)
        return a == b or math.isclose(a, b, rel_tol=1e-14)
    return ours == server


def compare(table: Table, snapshot: list[list], where: str) -> None:
    remaining = list(table.rows)
    for server_row in snapshot:
        server_row = [v if v is None else stored_form(v, c) for v, c in zip(server_row, table.columns, strict=True)]
        for i, row in enumerate(remaining):
            if all(same(row[k], server_row[k], table.columns[k]) for k in range(len(server_row))):
                del remaining[i]
                break
        else:
            raise AssertionError(f"{where}: server row {server_row} not in decoded rows {table.rows}")
    assert not remaining, f"{where}: decoded rows not on the server: {remaining}"


def _changes_rendering(sql: str) -> bool:
    return bool(re.match(r"\s*alter\s+table", sql, re.I))


def case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name.removesuffix('.expected.json')}"


def variants():
    """(expected file, schema files): every case as `binlog dump` reads it by default, and
    the cases whose tables predate the binlog once per schema dump (with and without the
    /* mariadb-5.3 */ markers)."""
    for path in CASES:
        expected = load(path)
        files = expected.get("schema_files") or []
        if "binlog_start" in expected:
            for name in files:
                yield pytest.param(path, [path.parent / name], id=f"{case_id(path)}+{name}")
        else:
            yield pytest.param(path, [], id=case_id(path))


@pytest.mark.parametrize("path, schema_files", list(variants()))
def test_dump_reproduces_server_rows(path, schema_files):
    expected = load(path)
    records, statement_tables = dump_records(binlog_paths(path, expected), resolver(schema_files))
    start = expected.get("binlog_start")
    tables = {name: Table(meta) for name, meta in (start or expected)["tables"].items()}
    if start:   # tables filled before the binlog: start from the server's rows then
        for name, rows in start["snapshot"].items():
            tables[name].rows = server_rows(tables[name], rows)
    by_gtid: dict[str, int] = {}
    for i, record in enumerate(records):
        by_gtid[record["gtid"]] = i
    applied = 0
    checked = 0
    for number, step in enumerate(expected["steps"]):
        for old, new in _RENAME.findall(step["sql"]):
            db = next(n.split(".")[0] for n in (step.get("tables_after") or {"x.y": 0}))
            old_name, new_name = (n if "." in n else f"{db}.{n}" for n in (old, new))
            if old_name in tables:
                tables[new_name] = tables.pop(old_name)
        for name, meta in (step.get("tables_after") or {}).items():
            if meta is None:
                tables.pop(name, None)
            elif name not in tables or tables[name].columns != meta["columns"]:
                tables[name] = Table(meta, carry=tables.get(name))
                if name in step["snapshot"] and _changes_rendering(step["sql"]):
                    # ALTER ... MODIFY of a temporal precision: the server now shows the
                    # old rows at the new precision; the binlog has no rows for that.
                    tables[name].rows = server_rows(tables[name], step["snapshot"][name])
        if not step["gtid"]:
            continue
        last = by_gtid.get(step["gtid"])
        while last is not None and applied <= last:
            record = records[applied]
            name = f"{record['db']}.{record['table']}"
            if name not in statement_tables and name in tables:   # else its rows are not all in the binlog
                tables[name].apply(record)
            applied += 1
        for name, snapshot in step["snapshot"].items():
            if name in statement_tables or name not in tables:
                continue
            compare(tables[name], snapshot, f"step {number} ({step['sql'][:60]!r}) {name}")
            checked += 1
    assert applied == len(records), f"{len(records) - applied} records belong to no statement's GTID"
    assert checked, "no snapshot was compared"


def server_rows(table: Table, rows: list[list]) -> list[list]:
    return [[v if v is None else stored_form(v, c) for v, c in zip(row, table.columns, strict=True)] for row in rows]


@pytest.mark.parametrize("path", [p for p in CASES if has_legacy(load(p))], ids=case_id)
def test_legacy_temporal_without_schema_stops_with_remedy(path):
    expected = load(path)
    with pytest.raises(PrecisionUnknownError) as info:
        dump_records(binlog_paths(path, expected), resolver(track_ddl=False))
    exc = info.value
    text = str(exc)
    assert exc.source and exc.event_offset and exc.table and exc.column, text
    assert "--schema-ddl" in text and exc.table in text
