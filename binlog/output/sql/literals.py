"""SQL literals of decoded values: exact, and unable to break out of their quotes,
whatever the bytes.

- integers as decimal digits; DECIMAL with its exact digits (``format(d, 'f')``);
  FLOAT/DOUBLE as Python's shortest round-trip ``repr`` of the double, always with an
  exponent so the server parses a double (a FLOAT's value widened to double reads back to
  the same float32); YEAR 0 as ``'0000'`` (a bare 0
  would mean 2000); BIT as ``b'1010'``.
- temporals as the decoded text with exactly the column's N fraction digits; TIMESTAMP in
  UTC, with the session's ``time_zone`` set to ``'+00:00'`` (session.SESSION_SETUP).
- text: quoted when the column's charset is utf8mb3/utf8mb4 or the text is pure ASCII
  (the stream's connection charset is utf8mb4), with every special byte escaped as
  ``mysql_real_escape_string`` does - NUL ``\\0``, newline ``\\n``, CR ``\\r``, ctrl-Z
  ``\\Z``, quotes ``\\'`` ``\\"``, backslash ``\\\\`` - under a session ``sql_mode``
  that session.SESSION_SETUP sets (so ``NO_BACKSLASH_ESCAPES`` cannot be on); any other
  text as its bytes in the column's charset with an introducer, ``_latin1 X'e9ff'``:
  never re-encoded.
- binary strings, BLOBs, GEOMETRY (SRID + WKB, what the server stores) and text whose
  charset the binlog does not give: hex ``X'..'``.
"""
from __future__ import annotations

import math
import re
import secrets
import struct
from contextvars import ContextVar
from decimal import Decimal
from typing import Iterator

from ...charsets import CHARSET_CODECS, charset_of
from ...constants import ColumnType as T
from ...errors import BinlogError
from ...inert import escape
from ...types.json_binary import json_text
from ...types.strings import LARGE_VALUE, LargeText

INT_TYPES = frozenset({T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG})
TEMPORAL_TYPES = frozenset({T.DATE, T.NEWDATE, T.TIME, T.TIME2, T.DATETIME, T.DATETIME2,
                            T.TIMESTAMP, T.TIMESTAMP2})
UTF8_CHARSETS = frozenset({"utf8mb4", "utf8mb3", "utf8"})

_ESCAPES = str.maketrans({"\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z",
                          "'": "\\'", '"': '\\"', "\\": "\\\\"})
_SPECIAL = re.compile("[\0\n\r\x1a'\"\\\\]")


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
# writer that set ``LARGE_SINK`` gets a token (NUL, which SQL text here never holds raw, a
# random nonce and a number) and writes the value's hex in pieces in its place, so a
# 200 MiB BLOB is not held as bytes, hex, statement, block and UTF-8 at once.
PIECE = 1 << 20
#: the LargeValues of the writer rendering now (None: no writer takes pieces)
LARGE_SINK: ContextVar = ContextVar("binlog_sql_large_values", default=None)


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
    large = LARGE_SINK.get()
    if large is not None and len(data) >= LARGE_VALUE:
        return large.token(_hex_pieces(memoryview(data).cast("B")))
    return f"X'{bytes(data).hex()}'"


def _hex_pieces(view: memoryview) -> Iterator[bytes]:
    yield b"X'"
    for i in range(0, len(view), PIECE):
        yield view[i:i + PIECE].hex().encode("ascii")
    yield b"'"


def large_text_literal(value: LargeText, col) -> str:
    """``text_literal`` of a LargeText: a token whose pieces the writer writes (the same
    bytes as the whole str's literal: quoting and escaping are per character), or the
    whole literal where no writer takes pieces."""
    large = LARGE_SINK.get()
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


def number_literal(value) -> str | None:
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
    number = number_literal(value)
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


def literal_bytes(value, col) -> bytes:
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




def short(query: str, n: int = 80) -> str:
    text = printable(" ".join(query.split()))
    return text if len(text) <= n else text[:n] + "..."

