"""Writers around a record writer: integers as strings, one file per table.

- ``BigintsAsStrings(writer)`` (``--bigint-as-string``): integers beyond 2^53 - what a
  JavaScript number or jq holds exactly - in the row images become their decimal text,
  so ``18446744073709551615`` is not read back as ``18446744073709552000``.
- ``RewriteDb(writer, {FROM: TO})`` (``--rewrite-db FROM->TO``): records name TO.
- ``PerTableFiles`` (``--output-dir DIR``): one JSON Lines file per source table,
  ``DIR/<db>.<table>.<N>.jsonl`` (names encoded by the command, never a path as the
  binlog wrote them), a new file when one reaches ``max_bytes``; statement-logged
  changes and DDL, in binlog order, in ``DIR/_statements.<N>.jsonl`` (no table file is
  named so: a table's stem holds a "." or, hashed, a "~").
"""
from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import replace

from .base import Wrapping, Writer

SAFE_INTEGER = (1 << 53) - 1      # Number.MAX_SAFE_INTEGER
MAX_OPEN_FILES = 64
STATEMENTS = "_statements"        # --output-dir: the file stem of statement and DDL records


def _stringify(row: dict | None) -> dict | None:
    if row is None:
        return None
    if not any(type(v) is int and not -SAFE_INTEGER <= v <= SAFE_INTEGER for v in row.values()):
        return row
    return {k: str(v) if type(v) is int and not -SAFE_INTEGER <= v <= SAFE_INTEGER else v
            for k, v in row.items()}


class BigintsAsStrings(Wrapping):
    def write(self, change) -> None:
        self.writer.write(replace(change, before=_stringify(change.before), after=_stringify(change.after)))

class RewriteDb(Wrapping):
    """``--rewrite-db FROM->TO``: the records of FROM's tables name TO, and statement and
    DDL records their rewritten default database (``rewrite``: a
    ``assembly.rewrite_db.DbRewrite``, mariadb-binlog's semantics; the schema was looked up
    under the binlog's own name before this)."""

    def __init__(self, writer, rewrite):
        super().__init__(writer)
        self.rewrite = rewrite

    def write(self, change) -> None:
        db = self.rewrite.db(change.db)
        self.writer.write(change if db == change.db else replace(change, db=db))

    def statement(self, record) -> None:
        if self.writer.takes_statements:
            self.writer.statement(self.rewrite.statement(record))


class PerTableFiles(Writer):
    """``make_writer(stream)`` makes the record writer of one file; ``name_of(db, table)``
    gives a table's file name stem (one safe path component); ``inside(root, path)``
    checks a path before it is opened."""

    takes_statements = True

    def __init__(self, directory, make_writer, name_of, max_bytes: int, inside):
        self.directory = str(directory)
        self.make_writer = make_writer
        self.name_of = name_of
        self.max_bytes = max_bytes
        self.inside = inside
        self.sequence: dict = {}           # table -> number of its current file
        self.open: OrderedDict = OrderedDict()   # table -> (stream, writer)
        self.last: tuple | None = None     # the table of the last row written
        os.makedirs(self.directory, exist_ok=True)

    def _path(self, key) -> str:
        stem = STATEMENTS if key == STATEMENTS else self.name_of(*key)
        name = f"{stem}.{self.sequence[key]:06d}.jsonl"
        return str(self.inside(self.directory, os.path.join(self.directory, name)))

    def _writer(self, key):
        if key in self.open:
            self.open.move_to_end(key)
            return self.open[key]
        if len(self.open) >= MAX_OPEN_FILES:
            self._close(next(iter(self.open)))
        self.sequence.setdefault(key, 1)
        stream = open(self._path(key), "ab")
        self.open[key] = (stream, self.make_writer(stream))
        return self.open[key]

    def _close(self, key) -> None:
        stream, writer = self.open.pop(key)
        writer.close()
        stream.close()

    def _release_last(self, key) -> None:
        if self.last is not None and self.last != key and self.last in self.open:
            previous = self.open[self.last][1]
            previous.release()           # its held row is not its transaction's last

    def write(self, change) -> None:
        key = (change.db, change.table)
        self._release_last(key)
        self.last = key
        stream, writer = self._writer(key)
        # full: the next file.  Checked before a row, not after: a writer may hold its
        # last row back (cdc), and that row belongs to this file.
        if stream.tell() >= self.max_bytes:
            self._close(key)
            self.sequence[key] += 1
            stream, writer = self._writer(key)
        writer.write(change)

    def statement(self, record) -> None:
        """A statement-logged change or DDL: the statements file (its line carries file
        and pos); the row before it is not its transaction's last (as in one stream)."""
        self._release_last(STATEMENTS)
        self.last = None
        stream, writer = self._writer(STATEMENTS)
        if stream.tell() >= self.max_bytes:
            self._close(STATEMENTS)
            self.sequence[STATEMENTS] += 1
            stream, writer = self._writer(STATEMENTS)
        writer.statement(record)

    def event(self, item) -> None:
        """Events go to the writer of the last row (its transaction's end, for the
        commit marker); they are not written themselves."""
        if self.last is not None and self.last in self.open:
            self.open[self.last][1].event(item)

    def end_open_record(self) -> None:
        for _, writer in self.open.values():
            writer.end_open_record()

    def close(self) -> None:
        for key in list(self.open):
            self._close(key)
