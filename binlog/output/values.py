"""Rendering decoded values for output (DESIGN.md "Outside contract")."""
from __future__ import annotations

import base64
from datetime import datetime, timezone
from decimal import Decimal


def bytes_renderer(encoding: str = "hex"):
    if encoding == "base64":
        return lambda raw: base64.b64encode(raw).decode("ascii")
    return lambda raw: raw.hex()


def render_row(row: dict | None, plan, render_bytes) -> dict | None:
    """JSON-ready copy of a row: bytes of binary columns as hex/base64; bytes of columns
    whose charset the binlog does not give as UTF-8 text when valid, else hex."""
    if row is None:
        return None
    out = {}
    for key, value in row.items():
        if isinstance(value, (bytes, bytearray)):
            value = _render_bytes(value, plan, key, render_bytes)
        elif isinstance(value, Decimal):
            value = format(value, "f")   # exact digits, never exponent form (0E-30)
        elif hasattr(value, "as_json"):
            value = value.as_json()
        out[key] = value
    return out


def _render_bytes(value, plan, key, render_bytes):
    col = plan.column_by_key(key) if hasattr(plan, "column_by_key") else None
    if col is not None and col.collation is None and col.type not in _ALWAYS_BINARY:
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            pass
    return render_bytes(bytes(value))


# GEOMETRY values are SRID + WKB: binary whatever the charset metadata says.
_ALWAYS_BINARY = {255}


def json_default(value):
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    raise TypeError(f"cannot render {type(value).__name__}")


def iso_ts(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
