"""The JSON record's change-data-capture fields (``binlog dump --format json``).

Each row record carries, after the fields of ``json_lines`` (which it keeps as they are):

- ``row``: the row's index inside its rows event (several rows share one file+pos);
- ``pk``: the primary key column names, from the TABLE_MAP (binlog_row_metadata=FULL) or
  the schema store (``replay.keys.KeyCatalog``, as --split-updates and apply choose
  keys); [] when neither knows one;
- ``commit``: true on the last row of its transaction, with ``xid`` (the XID event's id;
  null when a COMMIT statement ends it, as for non-transactional tables) and ``end_pos``
  (the offset just past the event ending the transaction: where a reader resumes);
  false, null, null on the others - and on the last row of an XA transaction, whose
  rows end at XA PREPARE (its XA COMMIT is an event group of its own, later);
- with ``--with-types``, ``types``: each column's SQL type as the TABLE_MAP (and the
  schema) give it, e.g. ``"decimal(12,2)"``, ``"datetime(6)"``, ``"int unsigned"``;
- with ``--checksum``, ``checksum``: ``{"current": N, "previous": N}``, the TiCDC CRC32 of
  the after and before images (``binlog.checksum``; null for no image or a partial one).

Only the last row seen is held back (until the next row or the end of its transaction),
so memory does not grow with the transaction.
"""
from __future__ import annotations

import io
from dataclasses import replace

import orjson

from ..checksum import PlanChecksums, change_checksums, crc_update
from ..constants import ColumnType as T
from ..events import QueryEvent, XidEvent
from ..events.gtid import XaPrepareEvent
from ..events.query import COMMIT, XA_COMMIT, transaction_control
from ..rows import EncodedRows, encode_rows
from .base import Writer
from .json_lines import JsonLinesWriter, value_json
from .values import large_values

# what _flush adds to a row that is not the last of its transaction
_NOT_LAST = b',"commit":false,"xid":null,"end_pos":null}\n'
_RUN_KINDS = {"insert": 0, "update": 1, "delete": 2}

_NAMES = {
    T.TINY: "tinyint", T.SHORT: "smallint", T.INT24: "mediumint", T.LONG: "int",
    T.LONGLONG: "bigint", T.FLOAT: "float", T.DOUBLE: "double", T.YEAR: "year",
    T.DATE: "date", T.NEWDATE: "date", T.TIMESTAMP: "timestamp", T.TIMESTAMP2: "timestamp",
    T.DATETIME: "datetime", T.DATETIME2: "datetime", T.TIME: "time", T.TIME2: "time",
    T.JSON: "json", T.GEOMETRY: "geometry", T.ENUM: "enum", T.SET: "set",
    T.TINY_BLOB: "tinyblob", T.BLOB: "blob", T.MEDIUM_BLOB: "mediumblob", T.LONG_BLOB: "longblob",
}


def sql_type(col) -> str:
    """A column's SQL type from what the binlog (and schema) say about it."""
    t = col.type
    binary = col.is_binary
    if t in (T.NEWDECIMAL, T.DECIMAL):
        name = f"decimal({col.precision},{col.scale})"
    elif t == T.BIT:
        bits = (col.meta >> 8) * 8 + (col.meta & 0xFF) if col.meta else 1
        name = f"bit({bits})"
    elif t in (T.VARCHAR, T.VAR_STRING):
        name = f"{'varbinary' if binary else 'varchar'}({col.length})"
    elif t == T.STRING:
        name = f"{'binary' if binary else 'char'}({col.length})"
    elif t in (T.TINY_BLOB, T.BLOB, T.MEDIUM_BLOB, T.LONG_BLOB) and not binary and col.encoding:
        name = _NAMES[t].replace("blob", "text")
    else:
        name = _NAMES.get(t, f"type{int(t)}")
    if t in (T.TIMESTAMP2, T.DATETIME2, T.TIME2, T.TIMESTAMP, T.DATETIME, T.TIME) and col.precision:
        name += f"({col.precision})"
    if col.unsigned and t in (T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.NEWDECIMAL, T.FLOAT, T.DOUBLE):
        name += " unsigned"
    return name


def transaction_end(event) -> tuple | None:
    """``(commit, xid, end_pos)`` when ``event`` ends a transaction's rows: an XID event
    (its id), or a COMMIT / XA COMMIT statement (xid None, as for non-transactional
    tables); XA PREPARE ends the rows of an XA transaction uncommitted (false, None, None:
    its XA COMMIT or ROLLBACK is a later event group, after other transactions maybe);
    else None."""
    if isinstance(event, XidEvent):
        return True, event.xid, event.header.end
    if isinstance(event, XaPrepareEvent):
        return False, None, None
    if isinstance(event, QueryEvent) and transaction_control(event.query) in (COMMIT, XA_COMMIT):
        return True, None, event.header.end
    return None


class PlanFields:
    """The per-table CDC fields of a row change (``pk`` names, ``--with-types`` types),
    worked out once per decode plan; ``keys`` is a ``replay.keys.KeyCatalog`` (None: no
    key source, ``pk`` is [])."""

    def __init__(self, keys=None):
        self.keys = keys
        self._pk: dict = {}
        self._types: dict = {}

    def pk(self, change) -> list:
        if self.keys is None:
            return []
        plan = change.plan
        cached = self._pk.get(id(plan))
        if cached is None or cached[0] is not plan:
            found = self.keys.keys(change).primary or ()
            cached = self._pk[id(plan)] = (plan, [plan.columns[i].key for i in found])
        return cached[1]

    def types(self, change) -> dict:
        plan = change.plan
        cached = self._types.get(id(plan))
        if cached is None or cached[0] is not plan:
            cached = self._types[id(plan)] = (plan, {c.key: sql_type(c) for c in plan.columns})
        return cached[1]


class _Open:
    """A stream for one record's pieces that keeps back its last two bytes (the closing
    brace and newline), so the record can be continued."""

    def __init__(self, out):
        self.out = out
        self.tail = b""

    def write(self, data) -> None:
        data = self.tail + bytes(data)
        if len(data) > 2:
            self.out.write(data[:-2])
        self.tail = data[-2:]

    def finish(self) -> None:
        if self.tail != b"}\n":
            raise ValueError(f"a JSON record ends in {self.tail!r}")


class CdcJsonWriter(Writer):
    """``--format json``: the records of ``JsonLinesWriter`` plus the fields above.
    Give it every item of the reader (``write`` for rows, ``event`` for the rest)."""

    takes_statements = True
    takes_watermarks = True

    def __init__(self, out, binary_encoding: str = "hex", *, keys=None, with_types: bool = False,
                 rewrite_db=None, bigint_as_string: bool = False, checksum: bool = False):
        from ..assembly.rewrite_db import DbRewrite

        self.out = out
        # the batch path writes integers as --bigint-as-string does (routing.BigintsAsStrings
        # does it for the rows given one by one)
        self.bigint_as_string = bigint_as_string
        self.binary_encoding = binary_encoding
        # --rewrite-db ({FROM: TO} or a DbRewrite): after the key lookup (binlog names)
        self.rewrite = rewrite_db if isinstance(rewrite_db, DbRewrite) else DbRewrite(rewrite_db)
        self.lines = JsonLinesWriter(io.BytesIO(), binary_encoding)
        self.keys = keys
        self.fields = PlanFields(keys)
        self.with_types = with_types
        self.checksum = checksum
        self._row_checksum = PlanChecksums()
        self._held: bytes | None = None   # the record held back, without its commit fields
        self._batch: dict = {}            # id(plan) -> what encode_rows prepares per plan

    def write(self, change) -> None:
        self._flush(False, None, None)
        pk = self.fields.pk(change)
        db = self.rewrite.db(change.db)
        shown = change if db == change.db else replace(change, db=db)
        extra = {"row": change.row, "pk": pk}
        if self.with_types:
            extra["types"] = self.fields.types(change)
        if self.checksum:
            extra["checksum"] = change_checksums(change, self._row_checksum(change.plan))
        fields = b"," + orjson.dumps(extra)[1:-1]
        if large_values(change.before, change.plan) or large_values(change.after, change.plan):
            # a record with a large value is not held in memory: written now, in pieces,
            # and left open until its commit fields are known
            self.lines.out = _Open(self.out)
            self._held = b""                 # open from here on (end_open_record closes it)
            try:
                self.lines.write(shown)      # a signal ends it whole (interrupts.deferred)
            finally:
                self.lines.out.finish()
                self.out.write(fields)
            return
        buffer = self.lines.out = io.BytesIO()
        self.lines.write(shown)
        self._held = buffer.getvalue()[:-2] + fields      # without its closing "}\n"

    run_tail = _NOT_LAST          # what encode_run writes between the rows of a run

    @property
    def run_flags(self) -> int:
        """encode_rows' flags: 1 --bigint-as-string, 2 --binary-encoding base64, 8 --checksum
        (the compiled encoder computes each row's checksums from the row's bytes)."""
        return ((1 if self.bigint_as_string else 0) | (2 if self.binary_encoding == "base64" else 0)
                | (8 if self.checksum else 0))

    def row_encoder(self):
        return self.encode_rows

    def run_writer(self):
        return self

    def encode_rows(self, change, event):
        """The batch path (the reader's ``row_encoder``): every row of the rows event
        ``event`` as the lines ``write`` would write for them, built by the compiled
        encoder (rows.encode_rows); ``change`` is the event's RowChange without images.
        A rows.EncodedRows, or None when the encoder leaves the event to ``write``."""
        plan = change.plan
        db = self.rewrite.db(change.db)
        head = self.lines._prefix(change if db == change.db else replace(change, db=db))
        pk = self.fields.pk(change)
        cached = self._batch.get(id(plan))
        if cached is None or cached[0] is not plan or cached[1] is not pk:
            # per plan (and its pk list): the fields after "row" and the value renderer
            extra: dict = {"pk": pk}
            if self.with_types:
                extra["types"] = self.fields.types(change)
            cached = self._batch[id(plan)] = (
                plan, pk, b"," + orjson.dumps(extra)[1:-1],
                value_json(plan, self.lines.render_bytes, self.bigint_as_string))
        encoded = encode_rows(event, plan, False, self.run_flags, head, cached[2], _NOT_LAST,
                              cached[3], crc_update if self.checksum else None)
        return None if encoded is None else EncodedRows(change, *encoded)

    def run_parts(self, change, event) -> tuple | None:
        """(prefix, entry) for ``rows._speedups.encode_run``: events like ``event`` (its
        table, kind, columns and bitmaps, in its transaction) written by one compiled call
        per run as ``encode_rows`` writes them.  ``prefix``: the records' head up to the
        offset (the file); ``entry``: (kind, walk, walk_after, steps, steps_after, the
        head after server_id, the fields after "row", the value renderer).  Call after
        ``encode_rows`` wrote ``event`` (its per-plan parts are cached then)."""
        plan = change.plan
        cached = self._batch.get(id(plan))
        walk = plan.walk(event.present)
        walk_after = plan.walk(event.after_present) if event.kind == "update" else walk
        if cached is None or cached[0] is not plan or walk[2] is None or walk_after[2] is None:
            return None
        db = self.rewrite.db(change.db)
        head = self.lines._prefix(change if db == change.db else replace(change, db=db))
        prefix = head[:head.index(b'"pos":') + 6]        # (file names are JSON-escaped:
        rest = head[head.index(b',"gtid":'):]            # no raw quote inside them)
        entry = (_RUN_KINDS[event.kind], walk[2], walk_after[2], walk[1], walk_after[1],
                 rest, cached[2], cached[3])
        return prefix, (entry + (crc_update,) if self.checksum else entry)

    def write_encoded(self, item) -> None:
        """The lines of ``encode_rows``: all but the last written, the last held back
        (without its closing brace) until its commit fields are known."""
        held, self._held = self._held, None
        if held is None and not item.last_start:
            pass
        elif held is None:
            self.out.write(memoryview(item.data)[:item.last_start])
        else:       # the row held back is not the last of its transaction; two writes
            # (each ends a line) rather than one joined copy of a whole run's lines
            self.out.write(held + _NOT_LAST)
            self.out.write(memoryview(item.data)[:item.last_start])
        self._held = item.data[item.last_start:]

    def statement(self, record) -> None:
        """A statement-logged change or DDL: its line (json_lines.statement_record), after
        the row held back (which it follows in the transaction; statement records carry
        no commit fields)."""
        self._flush(False, None, None)
        self.lines.out = self.out
        self.lines.statement(self.rewrite.statement(record))

    def watermark(self, mark) -> None:
        """A watermark's line (json_lines.watermark_record), after the row held back: a
        row is never held past a watermark (its transaction ended before it, unless
        without a COMMIT this writer knows, e.g. ROLLBACK: then it is not the last)."""
        self._flush(False, None, None)
        self.lines.out = self.out
        self.lines.watermark(mark)

    def _flush(self, commit: bool, xid, end_pos) -> None:
        if self._held is None:
            return
        tail = orjson.dumps({"commit": commit, "xid": xid, "end_pos": end_pos})
        self.out.write(self._held + b"," + tail[1:] + b"\n")
        self._held = None

    def event(self, item) -> None:
        event = getattr(item, "event", None)
        if self.keys is not None and event is not None:
            self.keys.observe(event)
        end = transaction_end(event)
        if end is not None:
            self._flush(*end)

    def end_open_record(self) -> None:
        """On an interrupt: the record written so far ends here, as one whose transaction's
        end was not read (a large one is already out up to its commit fields)."""
        self._flush(False, None, None)

    def release(self) -> None:
        """Write the row held back: a later row (in another writer) follows it."""
        self._flush(False, None, None)

    def close(self) -> None:
        self._flush(False, None, None)     # a transaction the input ends inside
