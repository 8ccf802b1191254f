"""``--format debezium``: Debezium's change-event envelope, one JSON object per line.

The value of a Debezium MySQL connector's change event as Kafka Connect's JsonConverter
writes it without schemas (``value.converter.schemas.enable=false``), with the
connector's default settings (Debezium documentation, "Debezium connector for MySQL",
sections "Change events" and "Data type mappings")::

    {"before": {...} | null, "after": {...} | null,
     "source": {"version", "connector": "mysql", "name", "ts_ms", "snapshot": "false",
                "db", "sequence": null, "table", "server_id", "gtid", "file", "pos",
                "row", "thread": null, "query": null},
     "op": "c" | "u" | "d", "ts_ms",
     "transaction": {"id", "total_order", "data_collection_order"} | null}

Values (defaults: ``decimal.handling.mode=precise``, ``time.precision.mode=
adaptive_time_microseconds``, ``bigint.unsigned.handling.mode=long``,
``binary.handling.mode=bytes``):

=============================  ===================================================
INTEGER types, YEAR            number (BIGINT UNSIGNED: the 64-bit value as a signed
                               long, as the connector's ``long`` mode gives it)
FLOAT, DOUBLE                  number
DECIMAL                        base64 of the unscaled value, big-endian two's
                               complement (Kafka Connect ``Decimal``)
BIT(1) / BIT(n)                boolean / base64 of the bits, little-endian bytes
DATE                           days since 1970-01-01 (``io.debezium.time.Date``)
DATETIME(0-3) / DATETIME(4-6)  ms / µs since the epoch of the wall-clock value
                               (``Timestamp`` / ``MicroTimestamp``)
TIMESTAMP                      ISO 8601 in UTC, ``2021-06-30T12:00:00.654321Z``
                               (``ZonedTimestamp``)
TIME                           µs (``MicroTime``)
CHAR, VARCHAR, TEXT, ENUM,     string (SET: the labels joined by commas; JSON: its
SET, JSON                      text, ``io.debezium.data.Json``)
BINARY, VARBINARY, BLOB        base64
GEOMETRY                       {"wkb": base64, "srid": number}
zero dates (0000-00-00)        null
=============================  ===================================================

``source.row`` is the row's index inside its rows event; ``transaction.id`` is the GTID
(as the connector gives it with GTIDs), ``total_order`` the event's rank in its
transaction and ``data_collection_order`` its rank among the transaction's events of the
same table, both from 1.
"""
from __future__ import annotations

import base64
from datetime import datetime, timezone
from decimal import Decimal

import orjson

from ..constants import ColumnType as T

CONNECTOR_VERSION = "2.7.0.Final"
OPS = {"insert": "c", "update": "u", "delete": "d"}
_EPOCH_ORDINAL = 719163         # date(1970, 1, 1).toordinal()


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _decimal(value, col):
    d = Decimal(value) if not isinstance(value, Decimal) else value
    scale = col.scale or 0
    unscaled = int(d.scaleb(scale).to_integral_value())
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return _b64(unscaled.to_bytes(size, "big", signed=True))


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
        return None
    if col.tz is not None:      # rendered in the read's zone: back to the instant
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
    from .values import json_text

    if hasattr(value, "as_json"):
        value = value.as_json()
    return value if isinstance(value, str) else json_text(value)


def _geometry(value, col):
    raw = bytes(value)
    return {"wkb": _b64(raw[4:]), "srid": int.from_bytes(raw[:4], "little")}


def _same(value, col):
    return value


ENCODERS = {
    T.TINY: _same, T.SHORT: _same, T.INT24: _same, T.LONG: _same, T.LONGLONG: _bigint,
    T.YEAR: _same, T.FLOAT: _same, T.DOUBLE: _same,
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


def encode_row(row: dict | None, plan) -> dict | None:
    if row is None:
        return None
    out = {}
    for key, value in row.items():
        col = plan.column_by_key(key)
        out[key] = encode_value(value, col) if col is not None else value
    return out


class DebeziumWriter:
    """``--format debezium``: one envelope per row change (``write``); ``server_name`` is
    the connector's logical name (``source.name``, the topic prefix)."""

    def __init__(self, out, server_name: str = "binlog"):
        self.out = out
        self.server_name = server_name
        self._trx = None              # GTID of the current transaction
        self._total = 0
        self._per_table: dict = {}

    def envelope(self, change) -> dict:
        transaction = None
        if change.gtid is not None:
            if change.gtid != self._trx:
                self._trx, self._total, self._per_table = change.gtid, 0, {}
            self._total += 1
            name = f"{change.db}.{change.table}"
            self._per_table[name] = self._per_table.get(name, 0) + 1
            transaction = {"id": change.gtid, "total_order": self._total,
                           "data_collection_order": self._per_table[name]}
        ts_ms = change.ts * 1000
        return {
            "before": encode_row(change.before, change.plan),
            "after": encode_row(change.after, change.plan),
            "source": {"version": CONNECTOR_VERSION, "connector": "mysql", "name": self.server_name,
                       "ts_ms": ts_ms, "snapshot": "false", "db": change.db, "sequence": None,
                       "table": change.table, "server_id": change.server_id, "gtid": change.gtid,
                       "file": change.file, "pos": change.pos, "row": change.row, "thread": None,
                       "query": None},
            "op": OPS[change.op], "ts_ms": ts_ms, "transaction": transaction,
        }

    def write(self, change) -> None:
        if change.op not in OPS:
            return
        self.out.write(orjson.dumps(self.envelope(change), option=orjson.OPT_APPEND_NEWLINE))

    def event(self, item) -> None:
        """Events are not part of the Debezium output (DDL goes to a schema-change topic)."""
