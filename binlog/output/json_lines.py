"""``--format json``: one object per changed row, one per line (docs/output-formats.md).

All rows of one rows event share file, pos, ts, server_id, gtid, db, table and op: that
part of the line is serialised once per event and reused, so a row costs two orjson
calls on its images.  ``record(change)`` gives the same object as a dict."""
from __future__ import annotations

import re

import orjson

from ..interrupts import deferred
from ..types.strings import LargeText
from .base import Writer
from .routing import SAFE_INTEGER
from .values import _render_keys, bytes_pieces, bytes_renderer, is_large, iso_ts, json_default, large_values, render_row

_PIECE = 3 << 18            # raw bytes per piece: a multiple of 3, so base64 pieces join

_dumps = orjson.dumps
# PartialJson is a dataclass: let json_default render it instead of orjson's own walk.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS


def image_json(row, plan, render_bytes) -> bytes:
    """One row image as the JSON object of a line (``null`` for no image); the Spark
    records carry the same bytes (spark_ingest.records)."""
    return _dumps(render_row(row, plan, render_bytes), default=json_default, option=_OPTIONS)


class _LargeValue(Exception):
    """A value the batch path leaves to the per-row writer (it is written in pieces)."""


def value_json(plan, render_bytes, bigint_as_string: bool = False):
    """``render(value, column) -> bytes``: one decoded value as its JSON text in a line
    (render_row + json_default, and routing.BigintsAsStrings with ``bigint_as_string``);
    the compiled batch path (``rows.encode_rows``) calls it for the values of columns
    it leaves to their Python decoders."""
    def render(value, col) -> bytes:
        if bigint_as_string and type(value) is int and not -SAFE_INTEGER <= value <= SAFE_INTEGER:
            value = str(value)
        elif is_large(value):
            raise _LargeValue()
        row = render_row({col.key: value}, plan, render_bytes) or {}
        return _dumps(row[col.key], default=json_default, option=_OPTIONS)
    return render


def images_json(rows, plan, render_bytes) -> list:
    """``image_json`` of each row image of a list (None stays None): the rows of one
    rows event, which share ``plan``."""
    if not _render_keys(plan):
        # render_row leaves such rows as they are (DECIMAL and partial JSON: json_default)
        return [None if row is None else _dumps(row, default=json_default, option=_OPTIONS)
                for row in rows]
    return [None if row is None else _dumps(render_row(row, plan, render_bytes), default=json_default,
                                            option=_OPTIONS) for row in rows]


def statement_record(record, render_bytes) -> dict:
    """The JSON object of a statement-logged change (``op: "statement"``) or DDL (``op:
    "ddl"``): the statement's text (``sql``; ``sql_hex`` too when its bytes are not valid
    in the client charset), its default database, and the session it ran in (``session``:
    the QUERY event's status vars and the INTVAR/RAND/USER_VAR events before it); DDL adds
    ``schema``, each named table's columns right after it (null: unknown)."""
    session = session_json(record, render_bytes)
    out = {"file": record.file, "pos": record.pos, "ts": iso_ts(record.ts),
           "server_id": record.server_id, "gtid": record.gtid, "db": record.db,
           "table": record.table, "op": record.op, "sql": record.sql}
    if not record.sql_exact:
        out["sql_hex"] = bytes(record.query_event.raw_query).hex()
    out["session"] = session
    if record.op == "ddl":
        out["schema"] = record.schema
    return out


def watermark_record(mark) -> dict:
    """A watermark's line: ``{"op": "watermark", "ts", "file", "pos", "gtid", "idle"}``:
    every change committed up to file:pos is on the lines before it (binlog.watermarks)."""
    return {"op": "watermark", "ts": iso_ts(mark.ts), "file": mark.file, "pos": mark.pos,
            "gtid": mark.gtid, "idle": mark.idle}


def session_json(record, render_bytes) -> dict:
    from ..charsets import codec_for_collation
    from ..events.status_vars import context_values

    session = record.session.as_dict()
    values = context_values(record.context)
    user_vars = values.pop("user_vars", None)
    session.update(values)
    if user_vars:
        rendered = {}
        for name, (value, collation) in user_vars.items():
            if isinstance(value, bytes):
                codec = codec_for_collation(collation)
                try:
                    value = value.decode(codec) if codec else render_bytes(value)
                except UnicodeDecodeError:
                    value = render_bytes(value)
            rendered[name] = value
        session["user_vars"] = rendered
    return session


class JsonLinesWriter(Writer):
    takes_statements = True
    takes_watermarks = True

    def __init__(self, out, binary_encoding: str = "hex"):
        self.out = out            # a binary stream
        self.render_bytes = bytes_renderer(binary_encoding)
        self._head_key: tuple | None = None
        self._ts: tuple = (None, "")
        self._head = b""

    def record(self, change) -> dict:
        """The JSON object of one row change, as plain JSON values (what `write` prints)."""
        return orjson.loads(_dumps(self._record(change), default=json_default, option=_OPTIONS))

    def _record(self, change) -> dict:
        plan = change.plan
        return {
            "file": change.file, "pos": change.pos, "ts": iso_ts(change.ts),
            "server_id": change.server_id, "gtid": change.gtid, "db": change.db,
            "table": change.table, "op": change.op,
            "before": render_row(change.before, plan, self.render_bytes),
            "after": render_row(change.after, plan, self.render_bytes),
        }

    def _prefix(self, change) -> bytes:
        key = (change.file, change.pos, change.op, change.gtid, change.db, change.table)
        if key != self._head_key:
            if change.ts != self._ts[0]:     # events of one second share their text
                self._ts = (change.ts, iso_ts(change.ts))
            head = {"file": change.file, "pos": change.pos, "ts": self._ts[1],
                    "server_id": change.server_id, "gtid": change.gtid, "db": change.db,
                    "table": change.table, "op": change.op}
            self._head = _dumps(head)[:-1] + b',"before":'
            self._head_key = key
        return self._head

    def write(self, change) -> None:
        plan, render = change.plan, self.render_bytes
        if large_values(change.before, plan) or large_values(change.after, plan):
            self._write_pieces(change)
            return
        self.out.write(b"".join((
            self._prefix(change), image_json(change.before, plan, render),
            b',"after":', image_json(change.after, plan, render), self._tail(change))))

    def _tail(self, change) -> bytes:
        """What ends a row record's line (a subclass adds fields before the brace)."""
        return b"}\n"

    def _write_pieces(self, change) -> None:
        """A record holding large binary or text values: each such value stands as a token in
        the line (NUL + a random nonce: no decoded value can forge it) and is written
        in pieces in its place.  The whole record is one block no signal cuts."""
        import secrets  # (here: it loads hashlib's OpenSSL, ~2 ms of every dump's start-up)

        plan, render = change.plan, self.render_bytes
        nonce = secrets.token_hex(8)
        values: dict[bytes, tuple] = {}      # token in the line -> (value, column)

        def image(row):
            if row is None:
                return b"null"
            row = dict(row)
            for key, col in large_values(row, plan):
                token = f"\x00{nonce}{len(values)}\x00"
                values[orjson.dumps(token)] = (row[key], col)
                row[key] = token
            return image_json(row, plan, render)

        line = b"".join((self._prefix(change), image(change.before), b',"after":',
                         image(change.after), self._tail(change)))
        pattern = re.compile(b"(" + b"|".join(re.escape(t) for t in values) + b")")
        with deferred():
            for part in pattern.split(line):
                if part in values:
                    self._write_value(*values[part])
                else:
                    self.out.write(part)

    def _write_value(self, value, col) -> None:
        """One large value as ``values._render_bytes`` renders it: hex/base64, inside the
        raw-bytes object ``{"bytes_hex": ...}`` when its column's charset is unknown; a
        LargeText as the JSON string orjson makes of the whole str (escaping is per
        character, so the pieces' texts join into the whole's)."""
        if isinstance(value, LargeText):
            self.out.write(b'"')
            for text in value.pieces():
                self.out.write(_dumps(text)[1:-1])
            self.out.write(b'"')
            return
        tag = getattr(self.render_bytes, "tag", "bytes_hex")
        raw = col is not None and col.charset_unknown
        self.out.write(b'{"' + tag.encode("ascii") + b'":"' if raw else b'"')
        for piece in bytes_pieces(value, self.render_bytes, _PIECE):
            self.out.write(piece)
        self.out.write(b'"}' if raw else b'"')

    def statement(self, record) -> None:
        """A statement-logged change or DDL (``reader.StatementChange``): one line."""
        self.out.write(_dumps(statement_record(record, self.render_bytes), default=json_default,
                              option=_OPTIONS | orjson.OPT_APPEND_NEWLINE))

    def watermark(self, mark) -> None:
        """A ``watermarks.Watermark``: its line (``watermark_record``)."""
        self.out.write(_dumps(watermark_record(mark), option=_OPTIONS | orjson.OPT_APPEND_NEWLINE))

    def event(self, item) -> None:
        """Events are in the JSON output through their records (rows, statements, DDL)."""
