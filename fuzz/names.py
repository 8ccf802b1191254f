"""Fuzz target for attacker-chosen names and statement text (`make fuzz`, option byte 0x80).

An input is split into five fields - database, table and column names, a DDL
statement's text and a string value - and becomes a binlog: a QUERY event with that DDL
(``CREATE TABLE `` + the text), a TABLE_MAP naming the table with full metadata (column
names), a WRITE_ROWS event and an XID.  Then:

- ``binlog dump --format sql`` of it (the real SqlWriter) must be inert for the
  ``mariadb`` client: it starts with the sandbox line, and ``client_commands`` - a model
  of how client/mysql.cc (``add_line``, ``read_and_execute``, ``find_command``) splits
  a script - finds no client command but the header's ``\\-`` (the sandbox line is
  that command) and ``\\C utf8mb4``;
- every output path ``binlog ingest`` would make from the names (``tables/<db>.<table>``,
  ``changes/run=N/db=../table=../date=..``) is made under a scratch ``--to`` and must
  resolve to exactly its place there.

``run_names(data, root)`` may raise only a BinlogError (a name the SQL output refuses, a
DDL the schema tracker rejects); an unsafe script or path raises AssertionError.
"""
from __future__ import annotations

import io
import os
import shutil
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FDE_SOURCE = ROOT / "samples" / "mariadb-10.11" / "types_full.binlog"
QUERY, TABLE_MAP, WRITE_ROWS_V1, XID = 2, 19, 23, 16

# mysql.cc's commands[] with a name (the ones reached by a word at a statement's start)
NAMED_COMMANDS = frozenset({
    "?", "clear", "connect", "delimiter", "edit", "ego", "exit", "go", "help", "nopager",
    "notee", "pager", "print", "prompt", "quit", "rehash", "source", "status", "system",
    "tee", "use", "charset", "warnings", "nowarning"})
SANDBOX_LINE = b"/*M!999999\\- enable the sandbox mode */ \n"


def client_commands(script: bytes) -> list[str]:
    """The client commands the ``mariadb`` client would run in ``script`` (batch mode,
    delimiter ';', backslash escapes on in strings): ``\\X`` outside strings and
    comments anywhere, and a statement whose first word (up to a space or tab) names a
    command.  A model of client/mysql.cc, deliberately strict: ``/*!`` and ``/*M!``
    comments are read as code, as the client does."""
    found = []
    in_string = None
    ml_comment = False
    statement = bytearray()
    for line in script.split(b"\n"):
        i = 0
        while i < len(line):
            c = line[i:i + 1]
            if ml_comment:
                if line[i:i + 2] == b"*/":
                    ml_comment = False
                    i += 2
                else:
                    i += 1
                continue
            if in_string:
                if c == b"\\" and in_string != b"`":
                    statement += line[i:i + 2]
                    i += 2
                    continue
                if c == in_string:
                    in_string = None
                statement += c
                i += 1
                continue
            if c == b"\\":
                found.append("\\" + line[i + 1:i + 2].decode("latin-1"))
                i += 2
                continue
            if c == b";":
                _named(statement, found)
                statement.clear()
                i += 1
                continue
            if c == b"#" or (line[i:i + 2] == b"--" and (i + 2 == len(line) or line[i + 2:i + 3].isspace())):
                break
            if line[i:i + 2] == b"/*" and line[i + 2:i + 3] not in (b"!", b"+") and line[i + 2:i + 4] != b"M!":
                ml_comment = True
                i += 2
                continue
            if c in (b"'", b'"', b"`"):
                in_string = c
            statement += c
            i += 1
        statement += b"\n"
    _named(statement, found)
    return found


def _named(statement: bytearray, found: list) -> None:
    text = bytes(statement).lstrip(b" \t\n\r")
    word = text.split(b" ")[0].split(b"\t")[0].decode("latin-1").lower()
    if word in NAMED_COMMANDS:
        found.append(word)


def _fde() -> bytes:
    data = FDE_SOURCE.read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")
    return data[:4 + size]


_FDE = None


def _event(type_code: int, body: bytes, pos: int) -> bytes:
    size = 19 + len(body) + 4
    raw = struct.pack("<IBIIIH", 1700000000, type_code, 1, size, pos + size, 0) + body
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def _lenenc(n: int) -> bytes:
    return bytes([n]) if n < 251 else b"\xfc" + n.to_bytes(2, "little")


def build(db: bytes, table: bytes, column: bytes, ddl: bytes, value: bytes) -> bytes:
    global _FDE
    if _FDE is None:
        _FDE = _fde()
    db, table, column, value = db[:64], table[:64], column[:64], value[:200]
    query = (db[:255] and (struct.pack("<IIBHH", 1, 0, len(db), 0, 0) + db + b"\0")
             or struct.pack("<IIBHH", 1, 0, 0, 0, 0) + b"\0") + b"CREATE TABLE " + ddl
    types, meta = bytes([3, 15]), b"\xff\x00"                # INT, VARCHAR(255)
    names = _lenenc(len(b"id")) + b"id" + _lenenc(len(column)) + column
    tmap = (b"\x05\x00\x00\x00\x00\x00\x01\x00" + bytes([len(db)]) + db + b"\0"
            + bytes([len(table)]) + table + b"\0" + _lenenc(2) + types + _lenenc(len(meta)) + meta
            + b"\x03" + b"\x04" + _lenenc(len(names)) + names)
    row = b"\x00" + (7).to_bytes(4, "little") + bytes([len(value)]) + value
    rows = b"\x05\x00\x00\x00\x00\x00\x01\x00" + _lenenc(2) + b"\x03" + row
    out = bytearray(_FDE)
    for code, body in ((QUERY, query), (TABLE_MAP, tmap), (WRITE_ROWS_V1, rows), (XID, (9).to_bytes(8, "little"))):
        out += _event(code, body, len(out))
    return bytes(out)


def fields(data: bytes) -> list[bytes]:
    parts = data.split(b"\xfe", 4)
    return (parts + [b""] * 5)[:5]


def run_names(data: bytes, root: Path) -> None:
    from binlog.errors import BinlogError
    from binlog.output.sql.script import SqlWriter
    from binlog.reader import BinlogReader, RowChange
    from binlog.replay.keys import KeyCatalog
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    db, table, column, ddl, value = fields(data)
    root.mkdir(parents=True, exist_ok=True)
    path = root / "names.binlog"
    path.write_bytes(build(db, table, column, ddl, value))
    schema = SchemaResolver(SchemaStore(None), track_ddl=True, on_warning=lambda message: None)
    sink = io.BytesIO()
    names = []
    try:
        writer = SqlWriter(sink, keys=KeyCatalog(schema=schema), on_warning=lambda message: None)
        for item in BinlogReader([path], schema=schema).items():
            if isinstance(item, RowChange):
                names.append((item.db, item.table))
                writer.write(item)
            else:
                writer.event(item)
        writer.close()
    except BinlogError:
        pass
    script = sink.getvalue()
    assert script.startswith(SANDBOX_LINE), script[:80]
    commands = client_commands(script)
    # the header's own two: the sandbox command and the client charset
    assert commands == ["\\-", "\\C"], (commands, script)
    for db_name, table_name in names:
        check_paths(db_name, table_name, root / "to")


def check_paths(db: str, table: str, to: Path) -> None:
    """The directories ingest makes for (db, table) land exactly where they belong."""
    from binlog.output.paths import inside, table_dir_name
    from spark_ingest.writer import partition_dir

    to.mkdir(parents=True, exist_ok=True)
    try:
        tables = to / "tables"
        target = inside(to, tables / table_dir_name(db, table))
        assert target.parent == tables.resolve(), target
        os.makedirs(target, exist_ok=True)
        run_dir = to / "changes" / "run=1"
        part = inside(to, os.path.join(run_dir, partition_dir(db, table, "2023-11-14")))
        assert part.parent.parent.parent == run_dir.resolve(), part
        os.makedirs(part, exist_ok=True)
        for base, dirs, files in os.walk(to):
            for name in dirs + files:
                inside(to, os.path.join(base, name))
    finally:
        shutil.rmtree(to)
