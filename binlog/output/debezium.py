"""``--format debezium``: Debezium's change-event envelope, one JSON object per line.

The value of a change event of Debezium's MariaDB connector (its MySQL connector's for a
binlog MySQL wrote: ``source.connector``) as Kafka Connect's JsonConverter writes it
without schemas (``value.converter.schemas.enable=false``), with the connector's default
settings (Debezium documentation, "Debezium connector for MariaDB", sections "Change
events" and "Data type mappings"), equal to what Debezium ``CONNECTOR_VERSION`` itself
gives for the same binlog but for the differences docs/output-formats.md lists
(tests/binlog/output/test_debezium_peer.py runs it)::

    {"before": {...} | null, "after": {...} | null,
     "source": {"version", "connector": "mariadb" | "mysql", "name", "ts_ms",
                "snapshot": "false", "db", "sequence": null, "ts_us", "ts_ns", "table",
                "server_id", "gtid", "file", "pos", "row", "thread": null, "query": null},
     "transaction": {"id", "total_order", "data_collection_order"} | null,
     "op": "c" | "u" | "d", "ts_ms", "ts_us", "ts_ns"}

Values (defaults: ``decimal.handling.mode=precise``, ``time.precision.mode=
adaptive_time_microseconds``, ``bigint.unsigned.handling.mode=long``,
``binary.handling.mode=bytes``):

=============================  ===================================================
INTEGER types, YEAR            number (BIGINT UNSIGNED: the 64-bit value as a signed
                               long, as the connector's ``long`` mode gives it)
FLOAT                          number: the fewest digits (at least two) that read
                               back as the same float32 (Java's Float.toString)
DOUBLE                         number
DECIMAL                        base64 of the unscaled value, big-endian two's
                               complement in fewest bytes (Kafka Connect ``Decimal``)
BIT(1) / BIT(n)                boolean / base64 of the bits, little-endian bytes
DATE                           days since 1970-01-01 (``io.debezium.time.Date``)
DATETIME(0-3) / DATETIME(4-6)  ms / µs since the epoch of the wall-clock value
                               (``Timestamp`` / ``MicroTimestamp``)
TIMESTAMP                      ISO 8601 in UTC, ``2021-06-30T12:00:00.654321Z``
                               (``ZonedTimestamp``); the zero TIMESTAMP is
                               ``1970-01-01T00:00:00Z`` (its value in the row)
TIME                           µs (``MicroTime``)
CHAR, VARCHAR, TEXT, ENUM,     string (SET: the labels joined by commas; JSON: its
SET, JSON                      text, ``io.debezium.data.Json``)
BINARY, VARBINARY, BLOB        base64
GEOMETRY                       {"wkb": base64, "srid": number | null (0)}; a POINT
                               column's (``Point``) adds "x" and "y" first
zero dates (0000-00-00)        null (DATE, DATETIME)
=============================  ===================================================

An UPDATE that changes the primary key is a delete of the old key's row and a create of
the new one, as the connector gives it (the key from the TABLE_MAP or the schema store).

``source.row`` is the row's index inside its rows event; ``transaction.id`` is the GTID
(as the connector gives it with GTIDs), ``total_order`` the event's rank in its
transaction and ``data_collection_order`` its rank among the transaction's events of the
same table, both from 1.

DDL is a **schema change event** in the same stream, in binlog order: the value the
connector writes to its schema change topic (Debezium documentation, "Schema change
topic"; io.debezium.relational.history.JsonTableChangeSerializer)::

    {"source": {...as above, "row": 0, "query": null}, "ts_ms", "databaseName",
     "schemaName": null, "ddl": "<the statement>",
     "tableChanges": [{"type": "CREATE" | "ALTER" | "DROP", "id": "\"db\".\"t\"",
                       "table": {"defaultCharsetName", "primaryKeyColumnNames",
                                 "columns": [{"name", "jdbcType", "nativeType": null,
                                              "typeName", "typeExpression", "charsetName",
                                              "length", "scale", "position", "optional",
                                              "autoIncremented", "generated", "comment",
                                              "defaultValueExpression": null,
                                              "enumValues": ["'a'", ...] | null}],
                                 "comment": null} | null}]}

Such a line has ``ddl`` and no ``op``: tell the two kinds apart by that.  The tables are
those the schema store has right after the statement (``tableChanges`` is [] when it
does not know them: ``--no-track-ddl``, DDL it does not parse, database statements);
``jdbcType`` is what the connector's DDL parser (MySqlAntlrDdlParser's data types) gives
each type; ``autoIncremented`` and ``generated`` are not tracked by the schema store and
are always false, ``defaultValueExpression`` and ``defaultCharsetName`` null; a dropped
table has ``table: null``; ``source.db`` is the statement's database (the table's when
it has no default database).

A **watermark** (``binlog.watermarks``: live streams) is the connector's **heartbeat
record** (io.debezium.heartbeat.HeartbeatImpl, MySqlOffsetContext), written whole as
Kafka Connect's SourceRecord holds it, since a line has no topic, key or offset of its
own::

    {"topic": "__debezium-heartbeat.<name>", "key": {"serverName": "<name>"},
     "value": {"ts_ms": ...}, "sourcePartition": {"server": "<name>"},
     "sourceOffset": {"ts_sec", "file", "pos", "gtids"}}

Such a line has ``topic`` (no ``op``, no ``ddl``).  ``value.ts_ms`` is the watermark's
time, the server's clock (the connector puts its own clock there); ``sourceOffset`` is
where every change committed before it ends: ``gtids`` the MariaDB GTID list (absent
when unknown).

A **statement-logged change** (binlog_format STATEMENT or MIXED) has no Debezium form: the
connector needs row events and skips DML it finds in QUERY events with a warning.  Here
it is an extension record, never dropped: the envelope with ``before``/``after`` null,
``"op": "statement"`` (not one of Debezium's c/u/d/r/t), ``source.query`` the statement
and ``statement`` = ``{"sql", "session"}`` as in the JSON record; the run warns on
stderr for each (``statements`` counts them), so a consumer that only knows Debezium's
ops can skip ``op == "statement"`` knowingly.
"""
from __future__ import annotations

import base64
import codecs
import re
import secrets
import struct
from dataclasses import replace
from datetime import datetime, timezone
from decimal import Context, Decimal

import orjson

from ..constants import GEOMETRY_POINT, ColumnType as T
from ..interrupts import deferred
from ..types.strings import LargeText
from .base import Writer
from .values import Base64Bytes, bytes_pieces, large_values

CONNECTOR_VERSION = "3.5.0.Final"
HEARTBEAT_TOPICS_PREFIX = "__debezium-heartbeat"    # HeartbeatImpl.DEFAULT_HEARTBEAT_TOPICS_PREFIX
OPS = {"insert": "c", "update": "u", "delete": "d"}
_EPOCH_ORDINAL = 719163         # date(1970, 1, 1).toordinal()
_WKB_POINT_SIZE = 1 + 4 + 8 + 8  # byte order, type, x, y: a 2D point (Point.parseWKBPoint)
_EXACT = Context(prec=200)      # DECIMAL has up to 65 digits: scaled exactly, never rounded


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _decimal(value, col):
    """Kafka Connect's Decimal: the unscaled value's two's complement, big-endian, in as
    few bytes as Java's BigInteger.toByteArray gives (bitLength / 8 + 1; bitLength leaves
    the sign bit out: -128 is one byte, 0x80)."""
    d = Decimal(value) if not isinstance(value, Decimal) else value
    unscaled = int(d.scaleb(col.scale or 0, _EXACT))
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return _b64(unscaled.to_bytes(bits // 8 + 1, "big", signed=True))


def _float(value, col):
    """FLOAT: Kafka Connect's float32, which the JSON converter writes as Java's
    Float.toString does: the decimal of fewest digits, but at least two, that reads back
    as the same float32, the closest to it of those (3.14159, not the double
    3.141590118408203 the float widens to; Float.MIN_VALUE 1.4E-45, not 1E-45)."""
    for digits in range(2, 10):
        text = f"{value:.{digits - 1}e}"        # the closest decimal of that many digits
        try:
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                return float(text)
        except OverflowError:       # rounded past the largest float32: more digits
            continue
    return value


def _days(text: str):
    y, m, d = (int(p) for p in text[:10].split("-"))
    if y == 0 or m == 0 or d == 0:
        return None
    from datetime import date

    return date(y, m, d).toordinal() - _EPOCH_ORDINAL


def _wall_micros(text: str):
    days = _days(text)
    if days is None:
        return None
    hh, mm, rest = text[11:].split(":") if len(text) > 10 else ("0", "0", "0")
    ss, _, frac = rest.partition(".")
    return (days * 86400 + int(hh) * 3600 + int(mm) * 60 + int(ss)) * 1_000_000 + int(frac.ljust(6, "0") or 0)


def _datetime(value, col):
    micros = _wall_micros(value)
    if micros is None:
        return None
    return micros // 1000 if (col.precision or 0) <= 3 else micros


def _timestamp(value, col):
    micros = _wall_micros(value)
    if micros is None:
        # the zero TIMESTAMP ('0000-00-00 00:00:00'): 0 seconds since the epoch in the
        # row (sql/field.cc Field_timestampf stores it so), which is what the connector
        # reads from a binlog: 1970-01-01T00:00:00Z (a zero DATE/DATETIME stays null)
        micros = 0
    elif col.tz is not None:
        # rendered in the read's zone: back to the instant (ambiguous in the hour a DST
        # change repeats; binlog dump reads debezium in UTC, where it is exact)
        wall = datetime(1970, 1, 1) + _delta(micros)
        micros = int(wall.replace(tzinfo=col.tz).timestamp() * 1_000_000)
    moment = datetime.fromtimestamp(micros // 1_000_000, timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    fsp = col.precision or 0
    if fsp:
        text += "." + f"{micros % 1_000_000:06d}"[:fsp]
    return text + "Z"


def _delta(micros: int):
    from datetime import timedelta

    return timedelta(microseconds=micros)


def _time(value, col):
    negative = value.startswith("-")
    hh, mm, rest = value.lstrip("-").split(":")
    ss, _, frac = rest.partition(".")
    micros = (int(hh) * 3600 + int(mm) * 60 + int(ss)) * 1_000_000 + int(frac.ljust(6, "0") or 0)
    return -micros if negative else micros


def _bit(value, col):
    bits = (col.meta >> 8) * 8 + (col.meta & 0xFF) if col.meta else 1
    if bits == 1:
        return bool(value)
    return _b64(int(value).to_bytes((bits + 7) // 8, "little"))


def _bigint(value, col):
    if col.unsigned and value >= 1 << 63:
        return value - (1 << 64)
    return value


def _string(value, col):
    if isinstance(value, (bytes, bytearray)):
        if col.encoding is None and col.collation is not None and col.is_binary:
            return _b64(bytes(value))
        try:
            return bytes(value).decode(col.encoding or "utf-8")
        except (UnicodeDecodeError, LookupError):
            return _b64(bytes(value))
    return value


def _binary(value, col):
    if isinstance(value, str):
        return value
    return _b64(bytes(value))


def _json(value, col):
    from ..types.json_binary import json_text

    if hasattr(value, "as_json"):
        value = value.as_json()
    return value if isinstance(value, str) else json_text(value)


def _geometry(value, col):
    """``io.debezium.data.geometry.Geometry`` (a POINT column's ``Point`` adds x and y):
    the WKB after the stored value's 4-byte SRID, and the SRID, null when 0
    (debezium-connector-binlog BinlogGeometry.fromBytes)."""
    raw = bytes(value)
    srid = int.from_bytes(raw[:4], "little") or None
    wkb = raw[4:]
    if col.geometry_type == GEOMETRY_POINT and len(wkb) == _WKB_POINT_SIZE:
        x, y = struct.unpack("<dd" if wkb[0] else ">dd", wkb[5:])
        return {"x": x, "y": y, "wkb": _b64(wkb), "srid": srid}
    return {"wkb": _b64(wkb), "srid": srid}


def _same(value, col):
    return value


ENCODERS = {
    T.TINY: _same, T.SHORT: _same, T.INT24: _same, T.LONG: _same, T.LONGLONG: _bigint,
    T.YEAR: _same, T.FLOAT: _float, T.DOUBLE: _same,
    T.NEWDECIMAL: _decimal, T.DECIMAL: _decimal,
    T.BIT: _bit, T.DATE: lambda v, c: _days(v), T.NEWDATE: lambda v, c: _days(v),
    T.DATETIME: _datetime, T.DATETIME2: _datetime,
    T.TIMESTAMP: _timestamp, T.TIMESTAMP2: _timestamp,
    T.TIME: _time, T.TIME2: _time,
    T.VARCHAR: _string, T.VAR_STRING: _string, T.STRING: _string, T.ENUM: _string, T.SET: _string,
    T.BLOB: _string, T.TINY_BLOB: _string, T.MEDIUM_BLOB: _string, T.LONG_BLOB: _string,
    T.JSON: _json, T.GEOMETRY: _geometry,
}


def encode_value(value, col):
    """One decoded value as the Debezium MySQL connector gives it."""
    if value is None:
        return None
    if col.type in (T.STRING, T.VARCHAR, T.VAR_STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB,
                    T.LONG_BLOB) and col.is_binary:
        return _binary(value, col)
    encode = ENCODERS.get(col.type, _same)
    if isinstance(value, (bytes, bytearray)) and encode is _same:
        return _b64(bytes(value))
    return encode(value, col)


# The types whose large values are written in pieces (their encoders pass a str through).
_PIECED = frozenset({T.STRING, T.VARCHAR, T.VAR_STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB})


def _value_pieces(value, col):
    """``orjson.dumps(encode_value(value, col))`` of a large string/blob value, in pieces."""
    yield b'"'
    if isinstance(value, LargeText):
        yield from (orjson.dumps(piece)[1:-1] for piece in value.pieces())
    elif col.is_binary or not _valid_utf8(value):
        yield from bytes_pieces(value, Base64Bytes())      # as _binary / _string give base64
    else:
        yield from (orjson.dumps(piece)[1:-1] for piece in LargeText(value, "utf-8").pieces())
    yield b'"'


def _valid_utf8(value) -> bool:
    """Whether ``bytes(value).decode("utf-8")`` would succeed (``_string``'s choice between
    text and base64), checked a piece at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(value).cast("B")
    try:
        for i in range(0, len(view), 1 << 20):
            decoder.decode(view[i:i + (1 << 20)])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def encode_row(row: dict | None, plan) -> dict | None:
    if row is None:
        return None
    out = {}
    for key, value in row.items():
        col = plan.column_by_key(key)
        out[key] = encode_value(value, col) if col is not None else value
    return out


# java.sql.Types of each MySQL type as the connector's DDL parser registers them
# (MySqlAntlrDdlParser.initializeDataTypeResolver): TINYINT is SMALLINT there, TIMESTAMP
# TIMESTAMP_WITH_TIMEZONE, the TEXTs VARCHAR, ENUM/SET CHAR, JSON/GEOMETRY OTHER.
JDBC_TYPES = {
    "bit": -7, "tinyint": 5, "smallint": 5, "mediumint": 4, "int": 4, "integer": 4,
    "bigint": -5, "float": 6, "double": 8, "real": 7, "decimal": 3, "numeric": 2,
    "date": 91, "time": 92, "datetime": 93, "timestamp": 2014, "year": 4,
    "char": 1, "varchar": 12, "tinytext": 12, "text": 12, "mediumtext": 12, "longtext": 12,
    "binary": -2, "varbinary": -3, "tinyblob": 2004, "blob": 2004, "mediumblob": 2004,
    "longblob": 2004, "enum": 1, "set": 1, "json": 1111, "geometry": 1111, "point": 1111,
    "linestring": 1111, "polygon": 1111, "multipoint": 1111, "multilinestring": 1111,
    "multipolygon": 1111, "geometrycollection": 1111, "bool": 16, "boolean": 16,
}
_TEMPORAL = ("time", "datetime", "timestamp")


def _column_change(col: dict, position: int) -> dict:
    """One column of a DDL record's schema (schema_store column_to_dict) as the
    connector's column document."""
    data_type = col.get("data_type", "")
    type_name = data_type.upper() + (" UNSIGNED" if col.get("unsigned") else "")
    length = col.get("length")
    scale = None
    if data_type in ("decimal", "numeric"):
        length, scale = col.get("numeric_precision"), col.get("numeric_scale")
    elif data_type in _TEMPORAL:
        length = col.get("datetime_precision")
    values = col.get("enum_values") or col.get("set_values")
    return {"name": col.get("name"), "jdbcType": JDBC_TYPES.get(data_type, 1111), "nativeType": None,
            "typeName": type_name, "typeExpression": type_name, "charsetName": col.get("charset"),
            "length": length, "scale": scale, "position": position,
            "optional": bool(col.get("nullable", True)), "autoIncremented": False,
            "generated": False, "comment": None, "defaultValueExpression": None,
            # the labels as the DDL quotes them (the connector keeps its parser's literals)
            "enumValues": None if values is None else ["'" + v.replace("'", "''") + "'" for v in values]}


def table_changes(record) -> list:
    """``tableChanges`` of a DDL record: each table its ``schema`` lists (the store's
    version right after the statement)."""
    keyword = record.sql.lstrip().split(None, 1)[0].upper() if record.sql.strip() else ""
    out: list[dict] = []
    for entry in record.schema or ():
        table_id = '"{}"."{}"'.format(entry["db"], entry["table"])
        if entry["columns"] is None:
            out.append({"type": "DROP", "id": table_id, "table": None})
            continue
        table: dict = {"defaultCharsetName": None,
                       "primaryKeyColumnNames": list(entry.get("primary_key") or ()),
                       "columns": [_column_change(c, i + 1) for i, c in enumerate(entry["columns"])],
                       "comment": None}
        out.append({"type": "CREATE" if keyword == "CREATE" else "ALTER", "id": table_id,
                    "table": table})
    return out


def _times(ts: int) -> dict:
    """``ts_ms``, ``ts_us`` and ``ts_ns`` of an event's timestamp (whole seconds)."""
    return {"ts_ms": ts * 1000, "ts_us": ts * 1_000_000, "ts_ns": ts * 1_000_000_000}


def _json_default(value):
    from .values import json_default

    return json_default(value)


class DebeziumWriter(Writer):
    """``--format debezium``: one envelope per row change (``write``); ``server_name`` is
    the connector's logical name (``source.name``, the topic prefix)."""

    takes_statements = True
    takes_watermarks = True

    def __init__(self, out, server_name: str = "binlog", *, on_warning=None, keys=None):
        self.out = out
        self.server_name = server_name
        self.warn = on_warning
        self.keys = keys              # a replay.keys.KeyCatalog: primary keys (None: unknown)
        self.statements = 0           # statement-logged changes written as extension records
        self._trx = None              # GTID of the current transaction
        self._total = 0
        self._per_table: dict = {}

    def envelope(self, change) -> dict:
        transaction = self._transaction(change.gtid, f"{change.db}.{change.table}")
        source = self._source(change, change.table, change.plan.mariadb)
        source["row"] = change.row
        return {"before": encode_row(change.before, change.plan),
                "after": encode_row(change.after, change.plan),
                "source": source, "transaction": transaction, "op": OPS[change.op], **_times(change.ts)}

    def write(self, change) -> None:
        if change.op not in OPS:
            return
        if change.op == "update" and self._key_changed(change):
            # the connector gives an UPDATE of the primary key as a delete of the old key
            # and a create of the new one (debezium-core RelationalChangeRecordEmitter
            # emitUpdateAsPrimaryKeyChangeRecord; the tombstone between has no line here)
            self._write_one(replace(change, op="delete", after=None))
            self._write_one(replace(change, op="insert", before=None))
            return
        self._write_one(change)

    def _key_changed(self, change) -> bool:
        if self.keys is None or change.before is None or change.after is None:
            return False
        columns, before, after = change.plan.columns, change.before, change.after
        names = [columns[i].key for i in self.keys.keys(change).primary or ()]
        # a column an image lacks (binlog_row_image MINIMAL: the after image has only the
        # changed columns) did not change
        return any(n in before and n in after and before[n] != after[n] for n in names)

    def _write_one(self, change) -> None:
        large = [(key, col) for row in (change.before, change.after)
                 for key, col in large_values(row, change.plan) if col is not None and col.type in _PIECED]
        if large:
            self._write_pieces(change, large)
            return
        self.out.write(orjson.dumps(self.envelope(change), option=orjson.OPT_APPEND_NEWLINE))

    def _write_pieces(self, change, large) -> None:
        """An envelope holding large string/blob values: each stands as a
        token (NUL, a random nonce, a number: no decoded value can forge it) that
        ``encode_value`` passes through, and is written in pieces in its place."""
        nonce = secrets.token_hex(8)
        values: dict[bytes, tuple] = {}

        def stand_in(row):
            if row is None:
                return None
            row = dict(row)
            for key, col in large:
                if row.get(key) is not None and not isinstance(row[key], str):
                    token = f"\0{nonce}:{len(values)}\0"
                    values[orjson.dumps(token)] = (row[key], col)
                    row[key] = token
            return row
        record = self.envelope(replace(change, before=stand_in(change.before), after=stand_in(change.after)))
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        with deferred():
            for part in re.split(b"(" + b"|".join(re.escape(t) for t in values) + b")", line):
                if part in values:
                    for piece in _value_pieces(*values[part]):
                        self.out.write(piece)
                else:
                    self.out.write(part)

    def _transaction(self, gtid, name: str):
        if gtid is None:
            return None
        if gtid != self._trx:
            self._trx, self._total, self._per_table = gtid, 0, {}
        self._total += 1
        self._per_table[name] = self._per_table.get(name, 0) + 1
        return {"id": gtid, "total_order": self._total, "data_collection_order": self._per_table[name]}

    def _source(self, record, table, mariadb: bool) -> dict:
        """The source block (io.debezium.connector.mariadb.Source, or the MySQL
        connector's for a binlog MySQL wrote), in the connector's order."""
        times = _times(record.ts)
        return {"version": CONNECTOR_VERSION, "connector": "mariadb" if mariadb else "mysql",
                "name": self.server_name, "ts_ms": times["ts_ms"], "snapshot": "false", "db": record.db,
                "sequence": None, "ts_us": times["ts_us"], "ts_ns": times["ts_ns"], "table": table,
                "server_id": record.server_id, "gtid": record.gtid, "file": record.file, "pos": record.pos,
                "row": 0, "thread": None, "query": None}

    def schema_change(self, record) -> dict:
        """A DDL record (``reader.StatementChange``, op ddl) as the connector's schema change
        event."""
        source = self._source(record, record.table, record.mariadb)
        first = (record.schema or [{}])[0]
        source["db"] = database = record.db or first.get("db")     # the table's, without a USE
        return {"source": source, "ts_ms": record.ts * 1000,
                "databaseName": database, "schemaName": None,
                "ddl": record.sql, "tableChanges": table_changes(record)}

    def statement_record(self, record) -> dict:
        """A statement-logged change as the documented extension record."""
        from .json_lines import session_json
        from .values import bytes_renderer

        source = self._source(record, record.table, record.mariadb)
        source["query"] = record.sql
        return {"before": None, "after": None, "source": source,
                "transaction": self._transaction(record.gtid, f"{record.db}.{record.table}"),
                "op": "statement", **_times(record.ts),
                "statement": {"sql": record.sql,
                              "session": session_json(record, bytes_renderer("base64"))}}

    def statement(self, record) -> None:
        """A statement or DDL record (``reader.StatementChange``), in binlog order."""
        if record.op == "ddl":
            if self.keys is not None:
                self.keys.invalidate()      # the table's key may be another from here on
            out = self.schema_change(record)
        else:
            self.statements += 1
            if self.warn is not None:
                self.warn(f"{record.file} @ {record.pos}: statement-logged change written as an "
                          f"extension record (op \"statement\"), not a Debezium change event: "
                          f"{' '.join(record.sql.split())[:120]}")
            out = self.statement_record(record)
        self.out.write(orjson.dumps(out, default=_json_default, option=orjson.OPT_APPEND_NEWLINE))

    def heartbeat_record(self, mark) -> dict:
        """A watermark as the connector's heartbeat record (see the module)."""
        offset: dict = {"ts_sec": mark.ts, "file": mark.file, "pos": mark.pos}
        if mark.gtid is not None:
            offset["gtids"] = mark.gtid
        return {"topic": f"{HEARTBEAT_TOPICS_PREFIX}.{self.server_name}",
                "key": {"serverName": self.server_name}, "value": {"ts_ms": mark.ts * 1000},
                "sourcePartition": {"server": self.server_name}, "sourceOffset": offset}

    def watermark(self, mark) -> None:
        self.out.write(orjson.dumps(self.heartbeat_record(mark), option=orjson.OPT_APPEND_NEWLINE))

    def event(self, item) -> None:
        """Events are in the Debezium output through their records (rows, DDL, statements);
        a TABLE_MAP tells the primary key (binlog_row_metadata=FULL)."""
        event = getattr(item, "event", None)
        if self.keys is not None and event is not None:
            self.keys.observe(event)
