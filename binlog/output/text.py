"""``--format text``: close to ``mariadb-binlog -v --base64-output=decode-rows``.

Each event gets its ``# at`` line and a header comment; rows are printed as the
``###`` pseudo-SQL of mysqlbinlog's verbose mode, with decoded values."""
from __future__ import annotations

import json
import re
import secrets
from datetime import datetime, timezone
from decimal import Decimal

from ..constants import LOG_EVENT_IGNORABLE_F
from ..events import (
    BinlogCheckpointEvent,
    FormatDescriptionEvent,
    GtidListEvent,
    IntvarEvent,
    MariaGtidEvent,
    MysqlGtidEvent,
    PreviousGtidsEvent,
    QueryEvent,
    RandEvent,
    RotateEvent,
    RowsEvent,
    RowsQueryEvent,
    StartEncryptionEvent,
    TableMapEvent,
    UnknownEvent,
    UserVarEvent,
    XaPrepareEvent,
    XidEvent,
)
from ..interrupts import deferred
from ..rows import EncodedRows, encode_rows
from ..types.strings import LargeText
from .base import Writer
from .routing import SAFE_INTEGER
from .values import RawBytes, bytes_pieces, bytes_renderer, is_large, large_values, render_row

_SQL_VERB = {"insert": "INSERT INTO", "update": "UPDATE", "delete": "DELETE FROM"}


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%y%m%d %H:%M:%S")


def _describe(event) -> str:
    if isinstance(event, FormatDescriptionEvent):
        return f"Start: binlog v {event.fde.binlog_version}, server v {event.fde.server_version}"
    if isinstance(event, QueryEvent):
        return f"Query\tthread_id={event.thread_id}\texec_time={event.exec_time}\terror_code={event.error_code}"
    if isinstance(event, TableMapEvent):
        return f"Table_map: `{event.db}`.`{event.table}` mapped to number {event.table_id}"
    if isinstance(event, RowsEvent):
        flags = " flags: STMT_END_F" if event.statement_end else ""
        return f"{event.type_name}: table id {event.table_id}{flags}"
    if isinstance(event, MariaGtidEvent):
        return f"GTID {event.gtid}" + (f" cid={event.commit_id}" if event.commit_id else "")
    if isinstance(event, MysqlGtidEvent):
        return f"GTID {event.gtid or 'ANONYMOUS'}"
    if isinstance(event, GtidListEvent):
        return "Gtid list [" + ",\n# ".join(f"{d}-{s}-{n}" for d, s, n in event.gtids) + "]"
    if isinstance(event, BinlogCheckpointEvent):
        return f"Binlog checkpoint {event.log_file}"
    if isinstance(event, PreviousGtidsEvent):
        return f"Previous-GTIDs {event.gtid_set}"
    if isinstance(event, XidEvent):
        return f"Xid = {event.xid}"
    if isinstance(event, RotateEvent):
        return f"Rotate to {event.next_file}  pos: {event.position}"
    if isinstance(event, IntvarEvent):
        return f"Intvar {'LAST_INSERT_ID' if event.kind == 1 else 'INSERT_ID'}={event.value}"
    if isinstance(event, RandEvent):
        return f"Rand seeds {event.seed1},{event.seed2}"
    if isinstance(event, UserVarEvent):
        return f"User_var @`{event.name}`" + ("=NULL" if event.is_null else "")
    if isinstance(event, XaPrepareEvent):
        return f"XA PREPARE X'{event.gtrid.hex()}',X'{event.bqual.hex()}',{event.format_id}"
    if isinstance(event, StartEncryptionEvent):
        # mariadb-binlog: "# Encryption scheme: 1, key_version: 1, nonce: ..."
        how = ("sent decrypted by the server" if event.header.flags & LOG_EVENT_IGNORABLE_F
               else "decrypted with the key file")
        return (f"Encryption scheme: {event.scheme}, key_version: {event.key_version}; "
                f"the events after it were {how}")
    if isinstance(event, UnknownEvent):
        return f"Unknown event type {event.header.type_code} ({len(event.body)} bytes, not decoded)"
    return event.type_name


def _literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, RawBytes):
        # Unquoted: the same object as in JSON, never mistaken for a quoted JSON value.
        return json.dumps(value, separators=(",", ":"))
    if hasattr(value, "as_json"):
        value = value.as_json()
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return f"'{_escape(str(value))}'"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def value_text(plan, render_bytes, bigint_as_string: bool = False):
    """``render(value, column) -> bytes``: one decoded value as its literal in the text
    format (render_row + _literal, routing.BigintsAsStrings with ``bigint_as_string``);
    the compiled batch path calls it for the columns it leaves to Python decoders."""
    def render(value, col) -> bytes:
        if bigint_as_string and type(value) is int and not -SAFE_INTEGER <= value <= SAFE_INTEGER:
            value = str(value)
        elif is_large(value):
            raise ValueError("a large value: written in pieces by the per-row path")
        row = render_row({col.key: value}, plan, render_bytes) or {}
        return _literal(row[col.key]).encode("utf-8", "surrogateescape")
    return render


def _session_line(event) -> str | None:
    """``# session: sql_mode=..., time_zone=...``: what the status vars say the statement
    ran under (a damaged status block is named, not hidden)."""
    from ..errors import BinlogError

    try:
        values = event.session().as_dict()
    except BinlogError as exc:
        return f"# session: unreadable status vars: {exc.message}"
    if not values:
        return None
    return "# session: " + ", ".join(f"{k}={v}" for k, v in values.items())


class TextWriter(Writer):
    def __init__(self, out, binary_encoding: str = "hex", *, bigint_as_string: bool = False,
                 rewrite_db=None):
        self.out = out
        self.render_bytes = bytes_renderer(binary_encoding)
        # for the batch path (encode_rows); the rows given one by one come through
        # routing.BigintsAsStrings and routing.RewriteDb instead
        self.bigint_as_string = bigint_as_string
        self.rewrite = rewrite_db      # a assembly.rewrite_db.DbRewrite, or None
        self._flags = (1 if bigint_as_string else 0) | (2 if binary_encoding == "base64" else 0)
        self._batch: dict = {}      # (id(plan), op, db) -> (plan, head line, renderer)

    def _emit(self, text: str) -> None:
        self.out.write(text.encode("utf-8", "surrogateescape"))

    def event(self, item) -> None:
        event = item.event
        h = event.header
        lines = [f"# at {h.offset}",
                 f"#{_when(h.timestamp)} server id {h.server_id}  end_log_pos {h.log_pos} \t{_describe(event)}"]
        if isinstance(event, (QueryEvent,)):
            session = _session_line(event)
            if session:
                lines.append(session)
            if event.db:
                lines.append(f"use `{event.db}`/*!*/;")
            lines.append(f"{event.query}\n/*!*/;")
        elif isinstance(event, RowsQueryEvent):
            lines.append("#Q> " + event.query.replace("\n", "\n#Q> "))
        self._emit("\n".join(lines) + "\n")

    def write(self, change) -> None:
        name = f"`{change.db}`.`{change.table}`"
        lines = [f"### {_SQL_VERB[change.op]} {name}"]
        plan = change.plan
        large = {} if not (large_values(change.before, plan) or large_values(change.after, plan)) \
            else self._tokens()
        before = render_row(self._stand_in(change.before, plan, large), plan, self.render_bytes)
        after = render_row(self._stand_in(change.after, plan, large), plan, self.render_bytes)
        if before is not None:
            lines.append("### WHERE")
            lines.extend(self._assignments(before))
        if after is not None:
            lines.append("### SET")
            lines.extend(self._assignments(after))
        text = "\n".join(lines) + "\n"
        if large:
            self._write_pieces(text, large)
        else:
            self._emit(text)

    # Large values: a binary or text value of LARGE_VALUE bytes or more
    # stands as a token (NUL, a random nonce, a number: no decoded value can forge it) in
    # the record's text and is written in pieces in its literal's place.

    @staticmethod
    def _tokens() -> dict:
        return {"": secrets.token_hex(8)}       # "": the nonce; token -> (value, column)

    def _stand_in(self, row, plan, large: dict):
        if not large or row is None:
            return row
        row = dict(row)
        for key, col in large_values(row, plan):
            token = f"\0{large['']}:{len(large)}\0"
            large[token] = (row[key], col)
            row[key] = token
        return row

    def _write_pieces(self, text: str, large: dict) -> None:
        nonce = large.pop("")
        values = {f"'{token}'": value for token, value in large.items()}
        with deferred():
            for part in re.split("('\0" + nonce + ":[0-9]+\0')", text):
                if part in values:
                    for piece in self._literal_pieces(*values[part]):
                        self.out.write(piece)
                else:
                    self._emit(part)

    def _literal_pieces(self, value, col):
        """``_literal`` of ``render_row``'s form of a large value, in pieces."""
        if isinstance(value, LargeText):
            yield b"'"
            for piece in value.pieces():
                yield _escape(piece).encode("utf-8", "surrogateescape")
            yield b"'"
            return
        raw = col is not None and col.charset_unknown
        tag = getattr(self.render_bytes, "tag", "bytes_hex")
        yield f'{{"{tag}":"'.encode("ascii") if raw else b"'"
        yield from bytes_pieces(value, self.render_bytes)
        yield b'"}' if raw else b"'"

    def row_encoder(self):
        return self.encode_rows

    def run_writer(self):
        return self

    def encode_rows(self, change, event):
        """The batch path (the reader's ``row_encoder``): every row of the rows event
        ``event`` as ``write`` would write it, by the compiled encoder (rows.encode_rows);
        a rows.EncodedRows, or None when the encoder leaves the event to ``write``."""
        plan = change.plan
        key = (id(plan), change.op, change.db)
        cached = self._batch.get(key)
        if cached is None or cached[0] is not plan:
            db = self.rewrite.db(change.db) if self.rewrite else change.db
            head = f"### {_SQL_VERB[change.op]} `{db}`.`{change.table}`\n"
            cached = self._batch[key] = (plan, head.encode("utf-8", "surrogateescape"),
                                         value_text(plan, self.render_bytes, self.bigint_as_string))
        encoded = encode_rows(event, plan, True, self._flags, cached[1], b"", b"", cached[2])
        return None if encoded is None else EncodedRows(change, *encoded)

    def write_encoded(self, item) -> None:
        self.out.write(item.data)

    run_tail = b""       # (encode_run: nothing between the rows of a run)

    @property
    def run_flags(self) -> int:
        """encode_rows' flags, and 4: the text format."""
        return self._flags | 4

    def run_parts(self, change, event) -> tuple | None:
        """(prefix, entry) for ``rows._speedups.encode_run`` in the text format: events
        like ``event`` written by one compiled call per run, each as ``event`` and
        ``encode_rows`` write one (its '# at' lines, then its rows).  The entry: (kind,
        walk, walk_after, steps, steps_after, the rows' head line, b"", the value renderer,
        the event's name).  Call after ``encode_rows`` wrote ``event``."""
        plan = change.plan
        cached = self._batch.get((id(plan), change.op, change.db))
        walk = plan.walk(event.present)
        walk_after = plan.walk(event.after_present) if event.kind == "update" else walk
        if cached is None or cached[0] is not plan or walk[2] is None or walk_after[2] is None:
            return None
        kind = {"insert": 0, "update": 1, "delete": 2}[event.kind]
        return b"", (kind, walk[2], walk_after[2], walk[1], walk_after[1], cached[1], b"",
                     cached[2], event.type_name.encode("ascii"))

    @staticmethod
    def _assignments(row: dict) -> list[str]:
        return [f"###   {key if key.startswith('@') else '@`' + key + '`'}={_literal(value)}"
                for key, value in row.items()]
