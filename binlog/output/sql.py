"""``--format sql`` and ``--format flashback``: statements that replay (or undo) changes.

Literals are exact and cannot break out of their quotes, whatever the bytes:

- integers as decimal digits; DECIMAL with its exact digits (``format(d, 'f')``);
  FLOAT/DOUBLE as Python's shortest round-trip ``repr`` of the double, always with an
  exponent so the server parses a double (a FLOAT's value widened to double reads back to
  the same float32); YEAR 0 as ``'0000'`` (a bare 0
  would mean 2000); BIT as ``b'1010'``.
- temporals as the decoded text with exactly the column's N fraction digits; TIMESTAMP in
  UTC, with the session's ``time_zone`` set to ``'+00:00'`` by the header.
- text: quoted when the column's charset is utf8mb3/utf8mb4 or the text is pure ASCII
  (the stream's connection charset is utf8mb4), with every special byte escaped as
  ``mysql_real_escape_string`` does - NUL ``\\0``, newline ``\\n``, CR ``\\r``, ctrl-Z
  ``\\Z``, quotes ``\\'`` ``\\"``, backslash ``\\\\`` - under a session ``sql_mode``
  the header sets (so ``NO_BACKSLASH_ESCAPES`` cannot be on); any other text as its bytes
  in the column's charset with an introducer, ``_latin1 X'e9ff'``: never re-encoded.
- binary strings, BLOBs, GEOMETRY (SRID + WKB, what the server stores) and text whose
  charset the binlog does not give: hex ``X'..'``.

The script is inert for any SQL client, whatever the binlog holds (statement text and
names are attacker-controlled; docs/security.md):

- its first line is the sandbox-mode line ``mariadb-dump`` writes (MariaDB 10.5.25+,
  client/mysqldump.cc): from there the ``mariadb`` client refuses ``\\!``, ``system``,
  ``source``/``\\.`` and the other commands that reach the shell or the file system;
- ``/*!\\C utf8mb4 */`` then sets the client's own charset (as ``mariadb-binlog`` does), so
  no multi-byte character of another charset can swallow a quote or backslash;
- statement text (DDL) is never written raw: the client's lexer is not the server's (the
  server takes ``--`` followed by a control character as a comment, the client does not;
  ``NO_BACKSLASH_ESCAPES``...), so raw text can leave the client outside a string where
  the server is inside one, and a ``\\!`` there runs.  The text goes into a quoted,
  escaped literal on one line (``SET @binlog_ddl = '...'``) and runs with ``PREPARE``/
  ``EXECUTE``: whatever it holds - a ``-- comment`` at its end, ``;``, ``DELIMITER`` - it
  ends where the literal ends;
- ``USE`db``` has no space after ``USE``: the client does not take it for its own ``use``
  command (which parses the name its own way and could select another database);
- comments hold no control character (they are written escaped, ``\\x01``).

Pipe with ``mariadb --binary-mode`` too: in batch mode it turns off every client command
but ``\\C`` and ``DELIMITER`` (and lets NUL bytes through), for clients older than the
sandbox mode.

Safe mode (the default): INSERT as REPLACE, UPDATE as DELETE by key + REPLACE, DELETE by
key - each statement sets a row to the state the source gave it, so replaying a range
twice, or after a crash in the middle, ends in the same contents.  The key is the primary
key, else a NOT NULL unique key, else every column (NULL-safe, byte-exact for strings,
``LIMIT 1``); see ``binlog.replay.keys``.
"""
from __future__ import annotations

import math
import re
import secrets
import struct
import sys
import tempfile
from array import array
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Iterator

from ..charsets import CHARSET_CODECS, charset_of
from ..constants import LOG_EVENT_SUPPRESS_USE_F, ColumnType as T
from ..errors import BinlogError
from ..events import QueryEvent
from ..inert import escape
from ..interrupts import deferred
from ..rows import EncodedRows, sql_values
from ..statements import statement_kept
from ..types.json_binary import json_text
from ..types.strings import LARGE_VALUE, LargeText
from .base import Writer

INT_TYPES = frozenset({T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG})
TEMPORAL_TYPES = frozenset({T.DATE, T.NEWDATE, T.TIME, T.TIME2, T.DATETIME, T.DATETIME2,
                            T.TIMESTAMP, T.TIMESTAMP2})
UTF8_CHARSETS = frozenset({"utf8mb4", "utf8mb3", "utf8"})
#: Columns a row's WHERE (without a key) cannot compare: MySQL binary JSON, VECTOR.
NOT_COMPARABLE = frozenset({T.JSON, T.VECTOR})

#: The session a replay runs in: backslash escapes on, AUTO_INCREMENT 0 kept, zero dates
#: allowed and not strict - like a replica applying row events, since every value comes from
#: a row the source holds (ENUM's '' error value, zero dates, ... exist only non-strict).
SESSION_SQL_MODE = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION"
SESSION_SETUP = (
    "SET NAMES utf8mb4",
    f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'",
    "SET SESSION time_zone = '+00:00'",
    "SET SESSION foreign_key_checks = 0",
)

_ESCAPES = str.maketrans({"\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z",
                          "'": "\\'", '"': '\\"', "\\": "\\\\"})
_SPECIAL = re.compile("[\0\n\r\x1a'\"\\\\]")


#: What mariadb-dump writes first (client/mysqldump.cc, MariaDB 10.5.25+): the client
#: enters sandbox mode; older clients and the server read an executable comment for a
#: version that never comes.  Byte for byte, trailing space included.
SANDBOX_LINE = "/*M!999999\\- enable the sandbox mode */ "
#: The client's charset for the rest of the script (as mariadb-binlog writes it).
CLIENT_CHARSET_LINE = "/*!\\C utf8mb4 */;"


class SqlRenderError(BinlogError):
    """A change that cannot be written as SQL (no column names, a partial image...)."""


def quote_ident(name: str) -> str:
    # No server identifier holds NUL (KB "Identifier Names"); a hostile binlog's can, and
    # the client stops a script at a NUL byte (or, in --binary-mode, passes it on).
    if "\0" in name:
        raise SqlRenderError(f"an identifier holds a NUL byte: {printable(name)}")
    return "`" + name.replace("`", "``") + "`"


def keys_condition(cols: list[str], keys) -> str:
    """The rows with these keys: ``k IN (...)`` for a one-column key; ``(a = 1 AND b = 2)
    OR ...`` for a longer one (a range union for the optimizer).  ``cols``: the key
    columns quoted; ``keys``: each row's key literals, in ``cols`` order."""
    if len(cols) == 1:
        return f"{cols[0]} IN ({', '.join(k[0] for k in keys)})"
    return " OR ".join("(" + " AND ".join(f"{c} = {v}" for c, v in zip(cols, k, strict=True)) + ")"
                       for k in keys)


def printable(text: str) -> str:
    """``text`` for a comment line or a message: control and other non-printable
    characters escaped (``\\x01``, ``\\u2028``), so nothing ends the line, starts a client
    command or reaches the terminal as an escape sequence."""
    return escape(text)


def quote_text(text: str) -> str:
    # the search is ~5x faster than translate, and most text has nothing to escape
    if _SPECIAL.search(text) is None:
        return "'" + text + "'"
    return "'" + text.translate(_ESCAPES) + "'"


def text_literal(text: str, col) -> str:
    charset = charset_of(col)
    if charset in UTF8_CHARSETS or text.isascii() or (charset is None and col.encoding is None):
        return quote_text(text)
    codec = col.encoding or CHARSET_CODECS.get(charset or "")
    if codec is None:
        raise SqlRenderError(f"no codec for the {charset} text of column {col.label}", column=col.label)
    data = text.encode(codec)
    return f"_{charset} X'{data.hex()}'"


# A binary value at least LARGE_VALUE large is not rendered into the statement text: the
# writer that set ``_LARGE`` gets a token (NUL, which SQL text here never holds raw, a
# random nonce and a number) and writes the value's hex in pieces in its place, so a
# 200 MiB BLOB is not held as bytes, hex, statement, block and UTF-8 at once.
#: --extended-insert: the size a multi-row statement grows to (mysqldump's net_buffer_length
#: is the same idea; well under the default max_allowed_packet of 16 MiB).
EXTENDED_INSERT = 1 << 20
_PIECE = 1 << 20
_LARGE: ContextVar = ContextVar("binlog_sql_large_values", default=None)


class LargeValues:
    """The large values of the blocks a SqlWriter has rendered but not yet written: each
    a literal's bytes in pieces (an iterator, consumed when its block is written)."""

    def __init__(self):
        self.nonce = secrets.token_hex(8)
        self.values: dict[str, Iterator[bytes]] = {}

    def token(self, pieces: Iterator[bytes]) -> str:
        token = f"\0{self.nonce}:{len(self.values)}\0"
        self.values[token] = pieces
        return token

    def pattern(self):
        return re.compile("(\0" + self.nonce + ":[0-9]+\0)")


def hex_literal(data) -> str:
    large = _LARGE.get()
    if large is not None and len(data) >= LARGE_VALUE:
        return large.token(_hex_pieces(memoryview(data).cast("B")))
    return f"X'{bytes(data).hex()}'"


def _hex_pieces(view: memoryview) -> Iterator[bytes]:
    yield b"X'"
    for i in range(0, len(view), _PIECE):
        yield view[i:i + _PIECE].hex().encode("ascii")
    yield b"'"


def large_text_literal(value: LargeText, col) -> str:
    """``text_literal`` of a LargeText: a token whose pieces the writer writes (the same
    bytes as the whole str's literal: quoting and escaping are per character), or the
    whole literal where no writer takes pieces."""
    large = _LARGE.get()
    if large is None:
        return text_literal(value.text(), col)
    charset = charset_of(col)
    if charset in UTF8_CHARSETS or (charset is None and col.encoding is None) or value.isascii():
        return large.token(_quoted_pieces(value))
    codec = col.encoding or CHARSET_CODECS.get(charset or "")
    if codec is None:
        raise SqlRenderError(f"no codec for the {charset} text of column {col.label}", column=col.label)
    return large.token(_introduced_pieces(value, f"{charset}", codec))   # as text_literal


def _quoted_pieces(value: LargeText) -> Iterator[bytes]:
    yield b"'"
    for piece in value.pieces():
        if _SPECIAL.search(piece) is not None:
            piece = piece.translate(_ESCAPES)
        yield piece.encode("utf-8", "surrogateescape")
    yield b"'"


def _introduced_pieces(value: LargeText, charset: str, codec: str) -> Iterator[bytes]:
    yield f"_{charset} X'".encode("ascii")
    for piece in value.pieces():
        yield piece.encode(codec).hex().encode("ascii")
    yield b"'"


def float_literal(value: float) -> str:
    value = float(value)
    if not math.isfinite(value):
        raise SqlRenderError(f"{value!r} cannot be stored by MySQL/MariaDB")
    text = repr(value)
    # An exponent makes the server read a double literal (no DECIMAL detour; -0.0 stays -0).
    return text if "e" in text else text + "e0"


def _number_literal(value) -> str | None:
    """The literal of a Python number (bool as 1/0), or None for any other value."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_literal(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    return None


def literal(value, col) -> str:
    """The SQL literal of a decoded value of ``col`` (binlog.column.Column)."""
    if value is None:
        return "NULL"
    t = col.type
    if hasattr(value, "as_json"):
        raise SqlRenderError("a JSON partial update whose base document is not in the binlog "
                             "(binlog_row_image=MINIMAL) cannot be replayed as SQL",
                             column=col.label)
    if t in INT_TYPES:
        return str(int(value))
    if t == T.YEAR:
        return "'0000'" if value == 0 else str(int(value))
    if t == T.BIT:
        return f"b'{int(value):b}'"
    if t in (T.FLOAT, T.DOUBLE):
        return float_literal(value)
    if t == T.NEWDECIMAL:
        return format(value, "f") if isinstance(value, Decimal) else str(Decimal(str(value)))
    if t == T.JSON:
        return quote_text(json_text(value))
    if t == T.VECTOR:
        return hex_literal(struct.pack(f"<{len(value)}f", *value))
    if t in (T.ENUM, T.SET) and isinstance(value, int):
        return str(value)
    number = _number_literal(value)
    if number is not None:
        return number
    if isinstance(value, (bytes, bytearray, memoryview)):
        return hex_literal(value)
    if isinstance(value, str):
        if t in TEMPORAL_TYPES:
            return quote_text(value)
        return text_literal(value, col)
    if isinstance(value, LargeText):
        return large_text_literal(value, col)
    if isinstance(value, (dict, list)):
        return quote_text(json_text(value))
    raise SqlRenderError(f"no SQL literal for a {type(value).__name__} value", column=col.label)


def literal_function(col):
    """``literal(value, col)`` as a function of the value alone, chosen once per column:
    the values the decoder gives for the column's type (an ``int`` of an INT column, a
    ``str`` of a utf8 text column...) take a direct path; any other value (None, a
    surprise type) goes through ``literal`` itself, so the text is always the same."""
    t = col.type
    slow = (lambda value: literal(value, col))
    if t in INT_TYPES:
        return lambda value: str(value) if value.__class__ is int else literal(value, col)
    if t in (T.FLOAT, T.DOUBLE):
        return lambda value: float_literal(value) if value.__class__ is float else literal(value, col)
    if t == T.NEWDECIMAL:
        return lambda value: format(value, "f") if value.__class__ is Decimal else literal(value, col)
    if t in TEMPORAL_TYPES:
        return lambda value: quote_text(value) if value.__class__ is str else literal(value, col)
    if t in (T.JSON, T.VECTOR, T.YEAR, T.BIT):
        return slow
    utf8 = charset_of(col) in UTF8_CHARSETS

    def text_or_bytes(value):
        if value.__class__ is str and utf8:
            return quote_text(value)
        if value.__class__ is bytes and len(value) < LARGE_VALUE:
            return "X'" + value.hex() + "'"
        return literal(value, col)

    def enum_or_set(value):
        if value.__class__ is int:
            return str(value)
        if value.__class__ is str and utf8:
            return quote_text(value)
        return literal(value, col)
    return enum_or_set if t in (T.ENUM, T.SET) else text_or_bytes


def _inline(col, i: int) -> str:
    """An expression for the literal of value ``v{i}`` of ``col`` with the decoder's
    usual type written out (the code RowValues compiles), falling back to ``f{i}``, the
    column's literal_function, for anything else."""
    v, f, t = f"v{i}", f"f{i}", col.type
    if t in INT_TYPES:
        return f"(str({v}) if {v}.__class__ is int else {f}({v}))"
    if t == T.NEWDECIMAL:
        return f"(format({v}, 'f') if {v}.__class__ is Decimal else {f}({v}))"
    if t in TEMPORAL_TYPES or (t in (T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB,
                                     T.MEDIUM_BLOB, T.LONG_BLOB, T.ENUM, T.SET)
                               and charset_of(col) in UTF8_CHARSETS):
        return f"(Q + {v} + Q if {v}.__class__ is str and search({v}) is None else {f}({v}))"
    return f"{f}({v})"


_STRING_TYPES = frozenset({T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB,
                           T.LONG_BLOB})


def value_code(col) -> str:
    """How ``_speedups.sql_values`` writes a value of ``col`` as ``literal`` does: q utf8
    text quoted, x bytes as hex (binary strings, GEOMETRY, text of unknown charset), p
    by its Python decoder and ``literal`` (text of another charset, ENUM labels of one),
    v by its type."""
    t = col.type
    if t == T.GEOMETRY or (t in _STRING_TYPES and col.encoding is None):
        return "x"
    if t in _STRING_TYPES:
        # the codec the decoder uses, not the charset's name: a schema can give one
        # without the other (the C code writes the bytes as they are)
        return "q" if col.encoding == "utf-8" else "p"
    if t == T.ENUM and col.enum_values is not None:
        return "q" if charset_of(col) in UTF8_CHARSETS else "p"
    return "v"


def _literal_bytes(value, col) -> bytes:
    """``literal`` as bytes: what ``_speedups.sql_values`` writes for a value it leaves
    to its Python decoder."""
    return literal(value, col).encode("utf-8", "surrogateescape")


class RowValues:
    """``(v1, v2, ...)`` of complete row images of one table version.  The function that
    writes them is compiled once per table version: one expression per column, the
    decoder's usual value type written out (``_inline``), ``literal_function`` for the
    rest, so the text is always ``literal``'s.  Only generated names go into the code;
    column keys (names from the binlog) are passed in as values."""

    __slots__ = ("many", "spec")

    def __init__(self, items, spec: bytes = b""):
        self.spec = spec            # _speedups.sql_values' codes over the table's columns
        env: dict = {"Decimal": Decimal, "Q": "'", "search": _SPECIAL.search}
        loads, parts = [], []
        for i, col in enumerate(items):
            env[f"k{i}"] = col.key
            env[f"f{i}"] = literal_function(col)
            loads.append(f"(v{i} := row[k{i}])")
            parts.append("{" + _inline(col, i) + "}")
        # the loads run first, in a tuple whose value is dropped; then one f-string
        body = (f"def many(rows):\n    return [f\"({', '.join(parts)})\" "
                f"for row in rows if ({', '.join(loads)},)]\n")
        exec(compile(body, "<binlog.output.sql.RowValues>", "exec"), env)   # noqa: S102
        self.many = env["many"]

    def __call__(self, row) -> str:
        return self.many((row,))[0]


def _string_bytes(value, col) -> bytes | memoryview | None:
    """The stored bytes of a string value (for byte-exact comparison), else None."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, memoryview):
        return value                # a large value's view: hex_literal writes it in pieces
    if isinstance(value, LargeText):
        return value.data
    if isinstance(value, str) and col.type not in TEMPORAL_TYPES | {T.ENUM, T.SET, T.JSON}:
        codec = col.encoding or CHARSET_CODECS.get(charset_of(col) or "")
        if codec:
            return value.encode(codec)
    return None


class SqlRenderer:
    """SQL statements for row changes; ``keys`` is a binlog.replay.keys.KeyCatalog."""

    def __init__(self, keys, *, safe: bool = True, rewrite_db: dict | None = None):
        self.keys = keys
        self.safe = safe
        self.rewrite_db = rewrite_db or {}      # --rewrite-db: names in the SQL only
        self._templates: dict = {}
        self._literals: dict = {}       # id(column) -> (column, literal_function(column))
        # (file, offset) -> [plan, rows event, (RowValues, [text per row] | None)]: the
        # events of the transaction being rendered (note_event), whose after images the
        # compiled walk writes; None: not kept (flashback and split changes are not the
        # events' own images)
        self.events: dict | None = None
        self._current: tuple | None = None      # the event whose rows are rendered now

    def note_event(self, name, event, plan) -> None:
        if self.events is not None and event.kind in ("insert", "update"):
            self.events[(name, event.header.offset)] = [plan, event, None]

    def row_values(self, change, row, values: RowValues) -> str:
        """``values(row)``: from the compiled walk of the change's event when ``row`` is
        its after image and the event was noted, else rendered from the decoded row."""
        events, key = self.events, (change.file, change.pos)
        entry = events.get(key) if events else None
        if events and entry is not None and row is change.after and entry[0] is change.plan:
            texts = entry[2]
            if texts is None or texts[0] is not values:
                texts = entry[2] = (values, sql_values(entry[1], change.plan, values.spec,
                                                       _literal_bytes))
            if self._current != key:
                # rows are rendered in event order: the previous event is done (a batch
                # that goes back to it renders from the decoded rows), so a transaction
                # sent before its COMMIT does not hold all its events
                events.pop(self._current, None)
                self._current = key
            if texts[1] is not None and change.row < len(texts[1]):
                return texts[1][change.row]
        return values(row)

    # -- names ---------------------------------------------------------------------------
    def table(self, change) -> str:
        db = self.rewrite_db.get(change.db, change.db)
        return f"{quote_ident(db)}.{quote_ident(change.table)}"

    def _names(self, change, tk) -> list[str]:
        cols = change.plan.columns
        if tk.names is not None:
            return list(tk.names)
        names = [c.name for c in cols]
        if not all(names):
            raise SqlRenderError(
                "the binlog does not carry column names (binlog_row_metadata is not FULL) and "
                "no schema gives them", table=f"{change.db}.{change.table}",
                source=change.file, event_offset=change.pos,
                hint="pass --schema-ddl FILE, --schema-from DSN or --schema-store PATH")
        return names

    def _present(self, row, change, tk):
        """(column, name, value) of the image's columns that are written."""
        names = self._names(change, tk)
        out = []
        for col in change.plan.columns:
            if col.index in tk.skip:
                continue
            key = col.key
            if key in row:
                out.append((col, names[col.index], row[key]))
        return out

    # -- multi-row statements (binlog apply) -------------------------------------------
    def insert_template(self, change, replace: bool | None = None):
        """(head, RowValues) of complete after images of the change's table version,
        cached by plan and key choice (a DDL gives new ones); ``head`` is what ``insert``
        writes before ``VALUES``."""
        tk = self.keys.keys(change)
        plan = change.plan
        verb = "REPLACE" if (self.safe if replace is None else replace) else "INSERT"
        ckey = (id(plan), verb)
        entry = self._templates.get(ckey)
        if entry is not None and entry[0] is plan and entry[1] is tk:
            return entry[2], entry[3]
        names = self._names(change, tk)
        cols = [c for c in plan.columns if c.index not in tk.skip]
        head = (f"{verb} INTO {self.table(change)} ("
                + ", ".join(quote_ident(names[c.index]) for c in cols) + ")")
        if len(self._templates) > 4096:
            self._templates.clear()
        # the plan itself is held: its id cannot be taken by another while cached
        spec = "".join("s" if c.index in tk.skip else value_code(c) for c in plan.columns)
        values = RowValues(cols, spec.encode("ascii"))
        self._templates[ckey] = (plan, tk, head, values)
        return head, values

    def event_values(self, change, event) -> tuple[str, list] | None:
        """(head, each row's VALUES text) of an insert event, by the compiled walk from its
        bytes (``change``: its RowChange without images); None when the walk leaves it
        to the decoded rows (or the names are not known: ``insert`` raises that)."""
        try:
            head, values = self.insert_template(change)
        except SqlRenderError:
            return None
        texts = sql_values(event, change.plan, values.spec, _literal_bytes)
        return (head, texts) if texts else None

    def insert_parts(self, change, row, *, replace: bool | None = None) -> tuple[str, str]:
        """(head, values): ``insert`` is ``head + " VALUES " + values``."""
        if len(row) == len(change.plan.columns):
            head, values = self.insert_template(change, replace)
            return head, self.row_values(change, row, values)
        head, _, values = self.insert(change, row, replace=replace).partition(" VALUES ")
        return head, values

    def key_literals(self, change, row) -> list[str]:
        """The literals of the row's identity key values, in key order."""
        tk = self.keys.keys(change)
        cols = change.plan.columns
        return [literal(row[cols[i].key], cols[i]) for i in tk.identity]

    def set_names(self, change) -> tuple:
        """Each column's quoted name as bytes (b"" for one not written): the ``names`` of
        rows.sql_values for ``update``'s SET list."""
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        return tuple(b"" if c.index in tk.skip else quote_ident(names[c.index]).encode("utf-8", "surrogateescape")
                     for c in change.plan.columns)

    def key_conditions(self, change, event) -> list[str] | None:
        """``where``'s condition by key of each row's before image of a delete or update
        event, from the event's bytes (``key_literal_rows``); None when the table has no
        key, a key value is NULL, or the compiled walk cannot take the event: ``where`` of
        the decoded rows then."""
        rows = self.key_literal_rows(change, event, before=True)
        if rows is None:
            return None
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        heads = [f"{quote_ident(names[i])} = " for i in tk.identity]
        return [" AND ".join(h + v for h, v in zip(heads, row, strict=True)) for row in rows]

    def by_key_statements(self, change, event) -> list[list[str]] | None:
        """Each row's statements of a delete or update event, from its bytes, as
        ``statements`` renders the decoded row: DELETE by key; an update's DELETE by key +
        REPLACE of the whole after image (safe mode) or ``UPDATE ... SET`` every column of
        it; None when ``key_conditions`` or the after images cannot be had so."""
        conditions = self.key_conditions(change, event)
        if not conditions:
            return None
        table = self.table(change)
        deletes = [f"DELETE FROM {table} WHERE {c} LIMIT 1" for c in conditions]
        if event.kind == "delete":
            return [[d] for d in deletes]
        head, values = self.insert_template(change)
        if not self.safe:
            sets = sql_values(event, change.plan, values.spec, _literal_bytes,
                              names=self.set_names(change))
            if sets is None or len(sets) != len(conditions):
                return None
            return [[f"UPDATE {table} SET {s} WHERE {c} LIMIT 1"]
                    for s, c in zip(sets, conditions, strict=True)]
        texts = sql_values(event, change.plan, values.spec, _literal_bytes)
        if texts is None or len(texts) != len(deletes):
            return None
        return [[d, f"{head} VALUES {v}"] for d, v in zip(deletes, texts, strict=True)]

    def key_literal_rows(self, change, event, before: bool) -> list[list[str]] | None:
        """Each row's identity key literals (``key_literals``), of its before or after
        image, from the event's bytes (rows.sql_values, a key column at a time); None when
        the table has no key, a key value is NULL, or the compiled walk cannot take it."""
        tk = self.keys.keys(change)
        if not tk.identity:
            return None
        self._names(change, tk)     # (raises SqlRenderError when the names are unknown)
        cols = change.plan.columns
        columns = []
        for i in tk.identity:
            spec = bytearray(b"s" * len(cols))
            spec[i] = ord(value_code(cols[i]))
            texts = sql_values(event, change.plan, bytes(spec), _literal_bytes, before=before)
            if texts is None:
                return None
            columns.append(texts)
        rows = [[texts[row][1:-1] for texts in columns] for row in range(len(columns[0]))]  # "(v)" -> v
        if any("NULL" in literals for literals in rows):
            return None
        return rows

    def _literal(self, col):
        """``literal_function(col)``, made once per column (the column object is held:
        its id is not reused while cached)."""
        entry = self._literals.get(id(col))
        if entry is None or entry[0] is not col:
            if len(self._literals) > 65536:
                self._literals.clear()
            entry = self._literals[id(col)] = (col, literal_function(col))
        return entry[1]

    # -- statements ----------------------------------------------------------------------
    def insert(self, change, row, *, replace: bool | None = None) -> str:
        if len(row) == len(change.plan.columns):
            # a complete image: the compiled VALUES of its table version (RowValues)
            head, values = self.insert_template(change, replace)
            return f"{head} VALUES {self.row_values(change, row, values)}"
        tk = self.keys.keys(change)
        items = self._present(row, change, tk)
        verb = "REPLACE" if (self.safe if replace is None else replace) else "INSERT"
        cols = ", ".join(quote_ident(n) for _, n, _ in items)
        vals = ", ".join(literal(v, c) for c, _, v in items)
        return f"{verb} INTO {self.table(change)} ({cols}) VALUES ({vals})"

    def where(self, change, row) -> tuple[str, bool]:
        """(condition, by_key): the row's key, or every comparable column."""
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        cols = change.plan.columns
        identity = tk.identity
        if identity and all(cols[i].key in row and row[cols[i].key] is not None for i in identity):
            return " AND ".join(f"{quote_ident(names[i])} = {self._literal(cols[i])(row[cols[i].key])}"
                                for i in identity), True
        parts = []
        for col in cols:
            if col.key not in row or col.type in NOT_COMPARABLE or col.index in tk.skip:
                continue
            value = row[col.key]
            name = quote_ident(names[col.index])
            if value is None:
                parts.append(f"{name} IS NULL")
                continue
            raw = _string_bytes(value, col)
            if raw is not None:
                parts.append(f"CAST({name} AS BINARY) = {hex_literal(raw)}")
            else:
                parts.append(f"{name} = {literal(value, col)}")
        if not parts:
            raise SqlRenderError("the row image has no column a WHERE clause can compare",
                                 table=f"{change.db}.{change.table}", source=change.file,
                                 event_offset=change.pos)
        return " AND ".join(parts), False

    def delete(self, change, row) -> str:
        cond, _ = self.where(change, row)
        return f"DELETE FROM {self.table(change)} WHERE {cond} LIMIT 1"

    def update(self, change, before, after) -> str:
        tk = self.keys.keys(change)
        items = self._present(after, change, tk)
        sets = ", ".join(f"{quote_ident(n)} = {self._literal(c)(v)}" for c, n, v in items)
        cond, _ = self.where(change, before)
        return f"UPDATE {self.table(change)} SET {sets} WHERE {cond} LIMIT 1"

    def complete(self, change, row) -> bool:
        return row is not None and len(row) == len(change.plan.columns)

    def statements(self, change) -> list[str]:
        """The statements replaying one change, in order."""
        op = change.op
        if op == "insert":
            return [self.insert(change, change.after)]
        if op == "delete":
            return [self.delete(change, change.before)]
        if self.safe and self.complete(change, change.after):
            return [self.delete(change, change.before), self.insert(change, change.after)]
        return [self.update(change, change.before, change.after)]

    def split_statements(self, deletes, passthrough, puts) -> list[tuple[object, str]]:
        """Statements of a split transaction: every DELETE first (the DELETE half of a safe
        UPDATE included), the unchainable tables in order, then REPLACE/INSERT/UPDATE."""
        out = [(ch, self.delete(ch, ch.before)) for ch in deletes]
        late = []
        for ch in puts:
            if ch.op == "update" and self.safe and self.complete(ch, ch.after):
                out.append((ch, self.delete(ch, ch.before)))
                late.append((ch, self.insert(ch, ch.after)))
            elif ch.op == "update":
                late.append((ch, self.update(ch, ch.before, ch.after)))
            else:
                late.append((ch, self.insert(ch, ch.after)))
        for ch in passthrough:
            out.extend((ch, s) for s in self.statements(ch))
        return out + late


def _check_whole(ch, renderer) -> None:
    for image in (ch.before, ch.after):
        if image is not None and not renderer.complete(ch, image):
            raise SqlRenderError(
                "flashback needs whole row images; this one is partial "
                "(binlog_row_image=MINIMAL or NOBLOB)", table=f"{ch.db}.{ch.table}",
                source=ch.file, event_offset=ch.pos,
                hint="only ranges written with binlog_row_image=FULL can be undone")


def invert(change):
    """The change that undoes ``change`` (flashback)."""
    from dataclasses import replace

    if change.op == "insert":
        return replace(change, op="delete", before=change.after, after=None)
    if change.op == "delete":
        return replace(change, op="insert", before=None, after=change.before)
    return replace(change, op="update", before=change.after, after=change.before)


# -- sql_mode of DDL replay --------------------------------------------------------------------

_SQL_MODE_BITS = {
    0: "REAL_AS_FLOAT", 1: "PIPES_AS_CONCAT", 2: "ANSI_QUOTES", 3: "IGNORE_SPACE",
    6: "NO_UNSIGNED_SUBTRACTION", 19: "NO_AUTO_VALUE_ON_ZERO", 20: "NO_BACKSLASH_ESCAPES",
    21: "STRICT_TRANS_TABLES", 22: "STRICT_ALL_TABLES", 23: "NO_ZERO_IN_DATE",
    24: "NO_ZERO_DATE", 25: "ALLOW_INVALID_DATES", 26: "ERROR_FOR_DIVISION_BY_ZERO",
    29: "HIGH_NOT_PRECEDENCE", 30: "NO_ENGINE_SUBSTITUTION", 31: "PAD_CHAR_TO_FULL_LENGTH",
}


def query_sql_mode(event) -> str | None:
    """The sql_mode the source ran a QUERY event under (status var Q_SQL_MODE_CODE),
    as the portable mode names, or None when the event does not say."""
    data = getattr(event, "status_vars", b"") or b""
    pos = 0
    fixed = {0: 4, 3: 4, 4: 6, 7: 2, 8: 2, 9: 8, 10: 4, 13: 3, 16: 1, 17: 8, 18: 2, 19: 1,
             20: 1, 128: 3, 129: 8, 130: 1}
    while pos < len(data):
        code = data[pos]
        pos += 1
        if code == 1:
            if pos + 8 > len(data):
                return None
            mask = int.from_bytes(data[pos:pos + 8], "little")
            return ",".join(name for bit, name in sorted(_SQL_MODE_BITS.items()) if mask >> bit & 1)
        if code in fixed:
            pos += fixed[code]
        elif code in (5, 6):          # time zone / catalog: u8 length + text
            if pos >= len(data):
                return None
            pos += 1 + data[pos]
        elif code == 2:               # old catalog: u8 length + text + NUL
            if pos >= len(data):
                return None
            pos += 2 + data[pos]
        else:
            return None               # a code whose length we do not know: stop
    return None


def ddl_statements(statement) -> list[str]:
    """What replays a DDL statement: USE its database, its sql_mode, the text, our mode."""
    out = []
    # LOG_EVENT_SUPPRESS_USE_F: CREATE/DROP DATABASE carry the database they create
    # or drop as their db, not one to USE.
    if statement.db and not statement.event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE {quote_ident(statement.db)}")
    mode = query_sql_mode(statement.event)
    if mode is not None:
        out.append(f"SET SESSION sql_mode = '{mode}'")
    out.append(statement.query)
    if mode is not None:
        out.append(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
    return out


# -- statement-logged changes ---------------------------------------------------------------

class NotReplayableError(BinlogError):
    """A statement-logged change that cannot be executed on a target (exit code 1)."""


#: Session variables a statement may set (statement_sql), back to the replay's own.
STATEMENT_RESET = (
    "SET TIMESTAMP = DEFAULT",
    "SET @@session.unique_checks = 1, @@session.sql_auto_is_null = 0",
    "SET @@session.auto_increment_increment = DEFAULT, @@session.auto_increment_offset = DEFAULT",
    "SET @@session.lc_time_names = DEFAULT, @@session.collation_database = DEFAULT, "
    "@@session.collation_server = DEFAULT",
) + SESSION_SETUP


def statement_sql(statement) -> list:
    """What executes a statement-logged change as the source ran it, in order: USE its
    database, then its session (mysqlbinlog's order, ``client/mysqlbinlog.cc`` /
    ``Query_log_event::print_query_header``): the statement's time (``SET TIMESTAMP``,
    for NOW()), the option bits, sql_mode (as the source's number: exact, whatever its
    modes are called), auto_increment, time zone, lc_time_names, collation_database,
    INSERT_ID / LAST_INSERT_ID, the RAND seeds and the user variables it reads, the
    charsets last (every statement before is ASCII); then the statement itself as its
    bytes in the client charset (``bytes``: never re-encoded).  ``STATEMENT_RESET`` sets
    the replay's session back afterwards.  NotReplayableError for what a statement
    cannot do again (LOAD DATA needs the client's file, which the binlog holds in other
    events)."""
    from ..constants import EventType
    from ..events.status_vars import (
        OPTION_AUTO_IS_NULL,
        OPTION_NO_FOREIGN_KEY_CHECKS,
        OPTION_RELAXED_UNIQUE_CHECKS,
        context_values,
    )

    event = statement.event
    if event.header.type_code == EventType.EXECUTE_LOAD_QUERY_EVENT or \
            statement.query.lstrip()[:4].upper() == "LOAD":
        raise NotReplayableError(
            f"LOAD DATA cannot be executed on a target: {_short(statement.query)}",
            source=statement.file, event_offset=statement.pos, event_type=event.type_name,
            hint="replay its rows from a binlog written with binlog_format=ROW, or load the "
                 "file on the target and start after this statement")
    s = event.session()
    out: list = []
    if statement.db and not event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE{quote_ident(statement.db)}")   # no space: not the client's `use`
    micro = s.microseconds
    out.append(f"SET TIMESTAMP = {statement.ts}" + (f".{micro:06d}" if micro else ""))
    if s.flags2 is not None:
        out.append(f"SET @@session.foreign_key_checks = {int(not s.flags2 & OPTION_NO_FOREIGN_KEY_CHECKS)}, "
                   f"@@session.unique_checks = {int(not s.flags2 & OPTION_RELAXED_UNIQUE_CHECKS)}, "
                   f"@@session.sql_auto_is_null = {int(bool(s.flags2 & OPTION_AUTO_IS_NULL))}")
    if s.sql_mode is not None:
        out.append(f"SET @@session.sql_mode = {s.sql_mode}")
    if s.auto_increment_increment is not None:
        out.append(f"SET @@session.auto_increment_increment = {s.auto_increment_increment}, "
                   f"@@session.auto_increment_offset = {s.auto_increment_offset}")
    if s.time_zone is not None:
        out.append(f"SET @@session.time_zone = {quote_text(s.time_zone)}")
    if s.lc_time_names is not None:
        out.append(f"SET @@session.lc_time_names = {s.lc_time_names}")
    if s.collation_database is not None:
        out.append(f"SET @@session.collation_database = {s.collation_database}")
    values = context_values(statement.context)
    for name, var in (("insert_id", "INSERT_ID"), ("last_insert_id", "LAST_INSERT_ID")):
        if name in values:
            out.append(f"SET {var} = {int(values[name])}")
    if "rand_seed1" in values:
        out.append(f"SET @@RAND_SEED1 = {values['rand_seed1']}, @@RAND_SEED2 = {values['rand_seed2']}")
    for name, (value, collation) in values.get("user_vars", {}).items():
        if not name.isprintable():
            raise NotReplayableError(f"user variable name {printable(name)!r} holds control "
                                     f"characters: not written into SQL",
                                     source=statement.file, event_offset=statement.pos,
                                     event_type=event.type_name)
        out.append(f"SET @{quote_ident(name)} := {_user_var_literal(value, collation)}")
    if s.character_set_client is not None:
        out.append(f"SET @@session.character_set_client = {s.character_set_client}, "
                   f"@@session.collation_connection = {s.collation_connection}, "
                   f"@@session.collation_server = {s.collation_server}")
    out.append(bytes(event.raw_query))
    return out


def _user_var_literal(value, collation) -> str:
    from ..charsets import COLLATIONS
    from ..constants import BINARY_COLLATION

    if value is None:
        return "NULL"
    number = _number_literal(value)
    if number is not None:
        return number
    charset = "binary" if collation == BINARY_COLLATION else COLLATIONS.get(collation)
    if charset is None:
        return hex_literal(value)
    return f"_{charset} {hex_literal(value)}"


def ddl_kept(statement, table_filter) -> bool:
    """Whether a DDL statement concerns a table the filter keeps (binlog.statements)."""
    return statement_kept(statement.query, statement.db, table_filter)


# -- the writer --------------------------------------------------------------------------------

def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _comment(text: str) -> str:
    return "-- " + printable(text)


def _short(query: str, n: int = 80) -> str:
    text = printable(" ".join(query.split()))
    return text if len(text) <= n else text[:n] + "..."


def ddl_script(statement) -> list[str]:
    """The lines of a ``--format sql`` script that replay a DDL statement: its text as an
    escaped literal run by PREPARE (module docstring), in its database and sql_mode.
    The literal is set while the session has our sql_mode (backslash escapes on)."""
    query = statement.query
    try:
        query.encode("utf-8")
        text = quote_text(query)
    except UnicodeEncodeError:      # bytes that are no UTF-8: passed on as they are
        text = hex_literal(query.encode("utf-8", "surrogateescape"))
    out = [f"SET @binlog_ddl = {text};"]
    if statement.db and not statement.event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE{quote_ident(statement.db)};")
    mode = query_sql_mode(statement.event)
    if mode is not None:
        out.append(f"SET SESSION sql_mode = '{mode}';")
    out += ["PREPARE binlog_ddl FROM @binlog_ddl;", "EXECUTE binlog_ddl;",
            "DEALLOCATE PREPARE binlog_ddl;"]
    if mode is not None:
        out.append(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}';")
    return out


@dataclass(slots=True)
class _EncodedSql(EncodedRows):
    """The rows of a rows event rendered from its bytes (SqlWriter.encode_rows): of an
    insert event ``head``, the INSERT (REPLACE) before ``VALUES``, and ``values``, each
    row's ``(v1, v2, ...)``; of any other, its ``statements``, in order."""
    head: str = ""
    values: list = field(default_factory=list)
    statements: list = field(default_factory=list)


class _InsertRun:
    """--extended-insert, one change at a time: ``add`` gives the statements that are
    complete (a run of complete-image INSERTs/REPLACEs of one table version grows into a
    multi-row statement of up to EXTENDED_INSERT bytes; any other change ends it and
    comes as ``statements`` gives it); ``flush`` the run's statement.  A row holding a
    large value (a token: written in pieces) is a statement of its own."""

    def __init__(self, renderer):
        self.renderer = renderer
        self.head = ""
        self.values: list[str] = []
        self.size = 0

    def add(self, ch) -> list[str]:
        renderer = self.renderer
        if ch.op != "insert" or not renderer.complete(ch, ch.after):
            return self.flush() + renderer.statements(ch)
        head, row_values = renderer.insert_template(ch)
        return self.add_value(head, renderer.row_values(ch, ch.after, row_values))

    def add_value(self, head: str, value: str) -> list[str]:
        """``add`` for an INSERT (REPLACE) ``head`` and its row's VALUES text."""
        large = "\0" in value
        out = []
        if head != self.head or self.size + len(value) > EXTENDED_INSERT or large:
            out = self.flush()
            self.head, self.size = head, len(head)
        self.values.append(value)
        self.size += len(value) + 1
        return out + self.flush() if large else out

    def flush(self) -> list[str]:
        if not self.values:
            return []
        statement = f"{self.head} VALUES {','.join(self.values)}"
        self.values.clear()
        return [statement]


class _Spool:
    """The statements of one source transaction of ``--format sql`` rendered so far, in
    order: in memory up to ``MEMORY`` bytes, then in an unnamed temporary file.  ``marks``:
    (file, offset) of each QUERY event read inside it -> the spool's size then (where a
    statement-logged change goes); ``run``: the --extended-insert statement growing."""

    MEMORY = 4 << 20

    def __init__(self, tx, renderer):
        self.tx = tx
        self.file = tempfile.SpooledTemporaryFile(max_size=self.MEMORY)
        self.marks: dict = {}
        self.run = _InsertRun(renderer)
        # flashback: where each change's undo starts, and its kind: 0 statements; else
        # the VALUES of an INSERT into heads' entry (kind - 1) // 2, alone when even
        self.starts = array("q")
        self.kinds = array("q")
        self.heads: dict[str, int] = {}

    def copy(self, out, start: int, end: int | None) -> int:
        return _copy(self.file, out, start, end)


def _copy(file, out, start: int, end: int | None) -> int:
    """Write bytes ``start`` .. ``end`` (None: the end) of ``file`` to ``out``; gives
    where it stopped.  The file is left at its end (what comes later is appended)."""
    file.seek(start)
    left = None if end is None else end - start
    while left is None or left > 0:
        piece = file.read(_PIECE if left is None else min(left, _PIECE))
        if not piece:
            break
        out.write(piece)
        start += len(piece)
        if left is not None:
            left -= len(piece)
    file.seek(0, 2)
    return start


def _newest_first(file, starts) -> Iterator[bytes]:
    """The pieces of ``file`` that start at ``starts`` (in order; the last ends at the
    file's end), last first: read backwards a window of at least _PIECE bytes at a time."""
    end = file.tell()
    window, window_start = b"", end
    for start in reversed(starts):
        if start < window_start:
            window_start = max(0, min(start, end - _PIECE))
            file.seek(window_start)
            window = file.read(end - window_start)
        yield window[start - window_start:end - window_start]
        end = start
    file.seek(0, 2)


class _Blocks:
    """Flashback's blocks, oldest first, in memory up to _Spool.MEMORY bytes and then in an
    unnamed temporary file (a range's undo is not held in memory until its end); given
    out newest first.  ``write(out, text)``: SqlWriter._write (large values' pieces)."""

    def __init__(self, write):
        self.file = tempfile.SpooledTemporaryFile(max_size=_Spool.MEMORY)
        self.starts = array("q")
        self._write = write

    def append(self, text: str) -> None:
        self._write(self.begin(), text)

    def begin(self):
        """A block starts: the file to write it to."""
        self.starts.append(self.file.tell())
        return self.file

    def write_reversed(self, out) -> None:
        end = self.file.tell()
        for start in reversed(self.starts):
            _copy(self.file, out, start, end)
            end = start
        self.file.close()


class SqlWriter(Writer):
    """Writer for ``binlog dump --format sql|flashback``: ``event(item)`` and
    ``write(change)`` in stream order, ``close()`` at the end (flashback writes
    everything then, newest transaction first)."""

    def __init__(self, out, *, keys, safe: bool = True, flashback: bool = False,
                 split_updates: bool = False, on_warning=None, table_filter=None,
                 routines: bool = False, strip_definer: bool = False,
                 rewrite_db: dict | None = None, extended_insert: bool = False):
        from ..assembly.rewrite_db import DbRewrite
        from ..assembly.transactions import TxAssembler

        self.out = out
        self.keys = keys
        self.renderer = SqlRenderer(keys, safe=safe, rewrite_db=rewrite_db)
        self.flashback = flashback
        self.split_updates = split_updates
        self.table_filter = table_filter
        self.routines = routines                 # replay trigger/routine definitions
        self.strip_definer = strip_definer
        self.extended_insert = extended_insert
        self._routines_warned = False
        self.warn = on_warning or (lambda message: sys.stderr.write(f"binlog: warning: {message}\n"))
        self.rewrite = DbRewrite(rewrite_db, self.warn)   # statements' default database
        self.assembler = TxAssembler(on_warning=self.warn)
        self.pending = _Blocks(self._write)     # flashback: blocks, oldest first
        self._not_replayed: list = []     # NotReplayableError of statements left out
        self.transactions = 0
        self.large = LargeValues()        # values of rendered blocks not yet written
        # the reader's rows_hook: the rows events of the transaction being read, whose row
        # images the compiled walk writes as VALUES (not for flashback and split changes,
        # whose images are not their events' own)
        self._rows_hook = None
        # sql and flashback (not split, which reorders whole transactions): each change is
        # rendered when it comes, into its transaction's spool (memory, then a temporary
        # file), so a transaction of millions of rows is not held decoded
        self.streaming = not split_updates
        self._spools: dict[int, _Spool] = {}    # id(Transaction) -> its spool
        if self.streaming and not flashback:
            self.renderer.events = {}
            self._rows_hook = self.renderer.note_event
        self._header()

    def _emit(self, text: str) -> None:
        self._write(self.out, text)

    def _write(self, out, text: str) -> None:
        if "\0" not in text:
            out.write(text.encode("utf-8", "surrogateescape"))
            return
        # large values stand as tokens: hex in pieces, each value written once, then dropped
        with deferred():
            for part in self.large.pattern().split(text):
                pieces = self.large.values.pop(part, None)
                if pieces is None:
                    out.write(part.encode("utf-8", "surrogateescape"))
                    continue
                for piece in pieces:
                    out.write(piece)

    def _header(self) -> None:
        kind = "flashback (undo, newest first)" if self.flashback else "replay"
        lines = [SANDBOX_LINE,
                 f"-- binlog dump --format {'flashback' if self.flashback else 'sql'}: {kind}; "
                 f"{'safe mode (REPLACE / DELETE by key)' if self.renderer.safe else 'plain INSERT/UPDATE/DELETE'}",
                 CLIENT_CHARSET_LINE]
        lines += [s + ";" for s in SESSION_SETUP]
        self._emit("\n".join(lines) + "\n")

    # -- writer interface ----------------------------------------------------------------
    def event(self, item) -> None:
        self.keys.observe(item.event)
        if self.streaming and isinstance(item.event, QueryEvent):
            spool = self._spools.get(id(self.assembler.current))
            if spool is not None:
                # a statement-logged change may be taken into the transaction here: the
                # rows rendered so far come before it (_mixed_transaction)
                self._flush_values(spool)
                spool.marks[(item.file, item.event.header.offset)] = spool.file.tell()
        for unit in self.assembler.feed(item):
            self._unit(unit)

    def write(self, change) -> None:
        if self.streaming:
            self._stream(change)
            return
        for unit in self.assembler.feed(change):
            self._unit(unit)

    def row_encoder(self):
        return self.encode_rows

    def rows_hook(self):
        return self._rows_hook

    @property
    def not_replayed(self) -> list:
        return self._not_replayed

    # -- sql: each change rendered as it comes (_Spool) ----------------------------------
    def encode_rows(self, change, event):
        """The batch path (the reader's ``row_encoder``) of --format sql: an insert event
        whose rows the compiled walk gives as VALUES text (``rows.sql_values``: complete
        images, nothing large) is rendered from its bytes, no row decoded; ``change`` is
        its RowChange without images; a delete or update event whose rows' keys and after
        images it gives likewise becomes its statements (DELETE by key, and REPLACE or
        UPDATE ... SET).  An _EncodedSql, or None: ``write`` takes each row of the event."""
        kind = event.kind
        if not self.streaming or self.flashback:
            return None
        try:
            if kind == "insert":
                got = self.renderer.event_values(change, event)
                return _EncodedSql(change, b"", 0, len(got[1]), *got) if got else None
            return self._by_key(change, event)
        except SqlRenderError:
            return None     # raised by ``write``, after any error decoding the rows gives

    def _by_key(self, change, event):
        """A delete event's DELETEs by key, or an update event's DELETE by key + REPLACE
        (safe mode) or UPDATE ... SET per row (SqlRenderer.by_key_statements)."""
        rows = self.renderer.by_key_statements(change, event)
        if not rows:
            return None
        return _EncodedSql(change, b"", 0, len(rows), statements=[s for row in rows for s in row])

    def write_encoded(self, item) -> None:
        """An _EncodedSql (``encode_rows``), as ``write`` of each of its rows renders it."""
        spool = self._spool_for(item.change, item.count)
        if item.statements:
            statements = spool.run.flush() + item.statements
        elif self.extended_insert:
            statements = [s for value in item.values for s in spool.run.add_value(item.head, value)]
        else:
            statements = [f"{item.head} VALUES {value}" for value in item.values]
        self._statements(spool.file, statements)

    def _spool_for(self, change, rows: int):
        """The spool of the change's transaction (the assembler does not keep the rows:
        TxAssembler.feed_row)."""
        tx = self.assembler.feed_row(change, rows)
        spool = self._spools.get(id(tx))
        if spool is None or spool.tx is not tx:
            self._drop_spools()
            spool = self._spools[id(tx)] = _Spool(tx, self.renderer)
        return spool

    def _stream(self, change) -> None:
        """The change's statements go to its transaction's spool now."""
        spool = self._spool_for(change, 1)
        reset = _LARGE.set(self.large)
        try:
            (self._spool_undo if self.flashback else self._spool_change)(spool, change)
        finally:
            _LARGE.reset(reset)

    def _drop_spools(self) -> None:
        """Forget the spools of transactions the assembler dropped (no COMMIT before a new
        GTID or BEGIN: it warned); XA-prepared ones wait for their XA COMMIT."""
        for key in [k for k, spool in self._spools.items() if not self.assembler.holds(spool.tx)]:
            self._spools.pop(key).file.close()

    def _statements(self, out, statements: list[str]) -> None:
        if statements:
            self._write(out, "".join(s + ";\n" for s in statements))

    def _spool_change(self, spool, ch) -> None:
        self._statements(spool.file, spool.run.add(ch) if self.extended_insert
                         else self.renderer.statements(ch))

    def _spool_undo(self, spool, ch) -> None:
        """Flashback: the change's undo, in its transaction's spool; ``undo_block`` gives
        them newest first.  An undo INSERT of a complete image keeps its VALUES alone
        (with --extended-insert, runs are joined then, in the reversed order)."""
        _check_whole(ch, self.renderer)
        inv = invert(ch)
        renderer, start = self.renderer, spool.file.tell()
        if self.extended_insert and inv.op == "insert" and renderer.complete(inv, inv.after):
            head, values = renderer.insert_template(inv)
            value = renderer.row_values(inv, inv.after, values)
            index = spool.heads.setdefault(head, len(spool.heads))
            self._write(spool.file, value)
            # a row with a large value (a token, written in pieces) is a statement alone
            spool.kinds.append(2 * index + 2 if "\0" in value else 2 * index + 1)
        else:
            self._statements(spool.file, renderer.statements(inv))
            spool.kinds.append(0)
        spool.starts.append(start)

    def _undo_block(self, spool, label: str) -> None:
        """The transaction's undo block, its changes newest first, into ``pending``."""
        out = self.pending.begin()
        self._write(out, f"{_comment('undo of ' + label)}\nBEGIN;\n")
        heads = list(spool.heads)           # in index order
        run = _InsertRun(self.renderer)
        texts = _newest_first(spool.file, spool.starts)
        for text, kind in zip(texts, reversed(spool.kinds), strict=True):
            head = heads[(kind - 1) // 2] if kind else ""
            if kind % 2:                    # VALUES that may join a run
                self._statements(out, run.add_value(head, text.decode("utf-8", "surrogateescape")))
                continue
            self._statements(out, run.flush())
            if kind:        # a row with a large value: a statement alone, its text not copied
                self._write(out, f"{head} VALUES ")
                out.write(text)
                out.write(b";\n")
            else:
                out.write(text)
        self._statements(out, run.flush())
        out.write(b"COMMIT;\n")
        spool.file.close()

    def _flush_values(self, spool) -> None:
        self._statements(spool.file, spool.run.flush())

    def _spooled_transaction(self, tx, head) -> None:
        """BEGIN, what the spool holds with the statement-logged changes at their places,
        COMMIT: written as one block (a signal does not cut it)."""
        spool = self._spools.pop(id(tx), None)
        if spool is not None and spool.tx is not tx:
            spool = None
        if self.flashback:
            self._not_undone(tx)
            if spool is not None:
                self._undo_block(spool, head)
                self.transactions += 1
            return
        if spool is None and not tx.statements:
            return
        if spool is not None:
            self._flush_values(spool)
        with deferred():
            self.out.write(f"{_comment(head)}\nBEGIN;\n".encode("utf-8", "surrogateescape"))
            done = 0
            for statement in tx.statements:
                mark = spool.marks.get((statement.file, statement.pos), done) if spool else 0
                if spool is not None:
                    done = spool.copy(self.out, done, mark)
                self._emit("\n".join(self._statement_lines(statement)) + "\n")
            if spool is not None:
                spool.copy(self.out, done, None)
                spool.file.close()
            self.out.write(b"COMMIT;\n")
        self.transactions += 1

    def close(self) -> None:
        for unit in self.assembler.finish():
            self._unit(unit)
        if self.flashback:
            self.pending.write_reversed(self.out)

    # -- units ---------------------------------------------------------------------------
    def _unit(self, unit) -> None:
        from dataclasses import replace

        from ..assembly.routines import routine_kind, strip_definer
        from ..assembly.transactions import DDL, Statement

        if isinstance(unit, Statement):
            where = f"{unit.file} @ {unit.pos}" + (f" GTID {unit.gtid}" if unit.gtid else "")
            if self.flashback:
                if unit.kind in (DDL, "dml"):
                    self.warn(f"{where}: {unit.kind.upper()} cannot be undone by flashback: "
                              f"{_short(unit.query)}")
                    self.pending.append(_comment(f"not undone ({where}): {_short(unit.query, 200)}") + "\n")
                return
            if unit.kind == DDL and not ddl_kept(unit, self.table_filter):
                self._emit(_comment(f"DDL of a filtered table not replayed ({where}): "
                                    f"{_short(unit.query, 200)}") + "\n")
            elif unit.kind == DDL and not self.routines and routine_kind(unit.query):
                self._routine_not_replayed(unit, where)
            elif unit.kind == DDL:
                body = [_comment(f"DDL at {where}, {_when(unit.ts)}: {_short(unit.query, 200)}")]
                if self.strip_definer:
                    unit = replace(unit, query=strip_definer(unit.query))
                body += ddl_script(self.rewrite.statement(unit))
                self._emit("\n".join(body) + "\n")
            elif unit.kind == "dml":
                body = [_comment(f"statement-logged change at {where}, {_when(unit.ts)}")]
                body += self._statement_lines(unit)
                self._emit("\n".join(body) + "\n")
            else:
                self._emit(_comment(f"not replayed ({where}): {_short(unit.query, 200)}") + "\n")
            return
        self._transaction(unit)
        if self.renderer.events:
            self.renderer.events.clear()    # the transaction's events are rendered

    def _routine_not_replayed(self, unit, where: str) -> None:
        """Row events hold the rows triggers wrote: a replayed trigger would write them
        again (binlog.assembly.routines)."""
        from ..assembly.routines import routine_kind

        kind = routine_kind(unit.query)
        if not self._routines_warned:
            self._routines_warned = True
            self.warn(f"{where}: trigger, procedure, function and event definitions are not "
                      f"replayed (the row events already hold the rows they wrote); "
                      f"--routines includes them: {_short(unit.query)}")
        self._emit(_comment(f"{kind} definition not replayed ({where}): "
                            f"{_short(unit.query, 200)}") + "\n")

    def _statement_lines(self, statement) -> list[str]:
        """A statement-logged change in its session (statement_sql), then ours again; one
        that cannot be executed is a comment, a warning and ``not_replayed`` (exit 1)."""
        try:
            steps = statement_sql(self.rewrite.statement(statement))
        except NotReplayableError as exc:
            self._not_replayed.append(exc)
            self.warn(str(exc).splitlines()[0])
            return [_comment(f"NOT replayed ({statement.file} @ {statement.pos}): "
                             f"{_short(statement.query, 200)}")]
        # the statement's bytes as a hex literal (inert for any client, passed to the
        # server as they are) run by PREPARE in the source's session, as DDL is (module
        # docstring); set before the session's charsets change
        lines = [f"SET @binlog_statement = {hex_literal(steps[-1])};"]
        lines += [step + ";" for step in steps[:-1]]
        lines += ["PREPARE binlog_statement FROM @binlog_statement;", "EXECUTE binlog_statement;",
                  "DEALLOCATE PREPARE binlog_statement;"]
        lines += [s + ";" for s in STATEMENT_RESET]
        return lines

    def _mixed_transaction(self, tx, head) -> None:
        """A transaction with statement-logged changes: rows and statements in binlog order."""
        from ..assembly.transactions import in_binlog_order

        lines = [_comment(head), "BEGIN;"]
        for part in in_binlog_order(tx):
            if isinstance(part, list):
                lines += [s + ";" for ch in part for s in self.renderer.statements(ch)]
            else:
                lines += self._statement_lines(part)
        lines.append("COMMIT;")
        self.transactions += 1
        self._emit("\n".join(lines) + "\n")

    def _transaction(self, tx) -> None:
        head = f"{tx.label}, {_when(tx.ts)}, server {tx.server_id}, {tx.rows} row change(s)"
        if tx.statements:
            head += f", {len(tx.statements)} statement-logged change(s)"
        if tx.incomplete:
            self.warn(f"{tx.label}: the input ends before its COMMIT: not replayed")
            text = _comment(f"incomplete {head}: the input ends before its COMMIT, not replayed") + "\n"
            (self.pending.append if self.flashback else self._emit)(text)
            self._drop_spools()
            return
        if self.streaming:
            self._spooled_transaction(tx, head)
        else:
            self._split_transaction(tx, head)

    def _not_undone(self, tx) -> None:
        for statement in tx.statements:
            self.warn(f"{statement.file} @ {statement.pos}: statement-based change inside "
                      f"{tx.label} cannot be undone by flashback: {_short(statement.query)}")

    def _split_transaction(self, tx, head) -> None:
        """--split-updates: the transaction's changes (undone, newest first, for flashback)
        in TiCDC's order (assembly.split), written as one block."""
        from ..assembly.split import split_transaction

        if tx.statements and not self.flashback:
            self._mixed_transaction(tx, head)
            return
        self._not_undone(tx)
        changes = tx.changes
        if self.flashback:
            for ch in changes:
                _check_whole(ch, self.renderer)
            changes = [invert(ch) for ch in reversed(changes)]
        if not changes:
            return
        reset = _LARGE.set(self.large)
        try:
            parts = split_transaction(changes, self.keys.keys)
            statements = [s for _, s in self.renderer.split_statements(*parts)]
        finally:
            _LARGE.reset(reset)
        lines = [_comment(("undo of " if self.flashback else "") + head), "BEGIN;"]
        lines += [s + ";" for s in statements]
        lines.append("COMMIT;")
        block = "\n".join(lines) + "\n"
        self.transactions += 1
        if self.flashback:
            self.pending.append(block)
        else:
            self._emit(block)
