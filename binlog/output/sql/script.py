"""The writer of ``binlog dump --format sql`` and ``--format flashback``: a script of
statements that replay (or undo, newest first) the changes.

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
"""
from __future__ import annotations

import sys
import tempfile
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator

from ...events import QueryEvent
from ...interrupts import deferred
from ...rows import EncodedRows
from ..base import Writer
from .literals import LARGE_SINK, PIECE, LargeValues, SqlRenderError, hex_literal, printable, short
from .renderer import SqlRenderer, check_whole, invert
from .session import (
    SESSION_SETUP,
    STATEMENT_RESET,
    NotReplayableError,
    ddl_kept,
    ddl_script,
    statement_sql,
)

#: What mariadb-dump writes first (client/mysqldump.cc, MariaDB 10.5.25+): the client
#: enters sandbox mode; older clients and the server read an executable comment for a
#: version that never comes.  Byte for byte, trailing space included.
SANDBOX_LINE = "/*M!999999\\- enable the sandbox mode */ "
#: The client's charset for the rest of the script (as mariadb-binlog writes it).
CLIENT_CHARSET_LINE = "/*!\\C utf8mb4 */;"
#: --extended-insert: the size a multi-row statement grows to (mysqldump's net_buffer_length
#: is the same idea; well under the default max_allowed_packet of 16 MiB).
EXTENDED_INSERT = 1 << 20


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _comment(text: str) -> str:
    return "-- " + printable(text)



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
        piece = file.read(PIECE if left is None else min(left, PIECE))
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
    file's end), last first: read backwards a window of at least PIECE bytes at a time."""
    end = file.tell()
    window, window_start = b"", end
    for start in reversed(starts):
        if start < window_start:
            window_start = max(0, min(start, end - PIECE))
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
        from ...assembly.rewrite_db import DbRewrite
        from ...assembly.transactions import TxAssembler

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
        reset = LARGE_SINK.set(self.large)
        try:
            (self._spool_undo if self.flashback else self._spool_change)(spool, change)
        finally:
            LARGE_SINK.reset(reset)

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
        check_whole(ch, self.renderer)
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

        from ...assembly.routines import routine_kind, strip_definer
        from ...assembly.transactions import DDL, Statement

        if isinstance(unit, Statement):
            where = f"{unit.file} @ {unit.pos}" + (f" GTID {unit.gtid}" if unit.gtid else "")
            if self.flashback:
                if unit.kind in (DDL, "dml"):
                    self.warn(f"{where}: {unit.kind.upper()} cannot be undone by flashback: "
                              f"{short(unit.query)}")
                    self.pending.append(_comment(f"not undone ({where}): {short(unit.query, 200)}") + "\n")
                return
            if unit.kind == DDL and not ddl_kept(unit, self.table_filter):
                self._emit(_comment(f"DDL of a filtered table not replayed ({where}): "
                                    f"{short(unit.query, 200)}") + "\n")
            elif unit.kind == DDL and not self.routines and routine_kind(unit.query):
                self._routine_not_replayed(unit, where)
            elif unit.kind == DDL:
                body = [_comment(f"DDL at {where}, {_when(unit.ts)}: {short(unit.query, 200)}")]
                if self.strip_definer:
                    unit = replace(unit, query=strip_definer(unit.query))
                body += ddl_script(self.rewrite.statement(unit))
                self._emit("\n".join(body) + "\n")
            elif unit.kind == "dml":
                body = [_comment(f"statement-logged change at {where}, {_when(unit.ts)}")]
                body += self._statement_lines(unit)
                self._emit("\n".join(body) + "\n")
            else:
                self._emit(_comment(f"not replayed ({where}): {short(unit.query, 200)}") + "\n")
            return
        self._transaction(unit)
        if self.renderer.events:
            self.renderer.events.clear()    # the transaction's events are rendered

    def _routine_not_replayed(self, unit, where: str) -> None:
        """Row events hold the rows triggers wrote: a replayed trigger would write them
        again (binlog.assembly.routines)."""
        from ...assembly.routines import routine_kind

        kind = routine_kind(unit.query)
        if not self._routines_warned:
            self._routines_warned = True
            self.warn(f"{where}: trigger, procedure, function and event definitions are not "
                      f"replayed (the row events already hold the rows they wrote); "
                      f"--routines includes them: {short(unit.query)}")
        self._emit(_comment(f"{kind} definition not replayed ({where}): "
                            f"{short(unit.query, 200)}") + "\n")

    def _statement_lines(self, statement) -> list[str]:
        """A statement-logged change in its session (statement_sql), then ours again; one
        that cannot be executed is a comment, a warning and ``not_replayed`` (exit 1)."""
        try:
            steps = statement_sql(self.rewrite.statement(statement))
        except NotReplayableError as exc:
            self._not_replayed.append(exc)
            self.warn(str(exc).splitlines()[0])
            return [_comment(f"NOT replayed ({statement.file} @ {statement.pos}): "
                             f"{short(statement.query, 200)}")]
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
        from ...assembly.transactions import in_binlog_order

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
                      f"{tx.label} cannot be undone by flashback: {short(statement.query)}")

    def _split_transaction(self, tx, head) -> None:
        """--split-updates: the transaction's changes (undone, newest first, for flashback)
        in TiCDC's order (assembly.split), written as one block."""
        from ...assembly.split import split_transaction

        if tx.statements and not self.flashback:
            self._mixed_transaction(tx, head)
            return
        self._not_undone(tx)
        changes = tx.changes
        if self.flashback:
            for ch in changes:
                check_whole(ch, self.renderer)
            changes = [invert(ch) for ch in reversed(changes)]
        if not changes:
            return
        reset = LARGE_SINK.set(self.large)
        try:
            parts = split_transaction(changes, self.keys.keys)
            statements = [s for _, s in self.renderer.split_statements(*parts)]
        finally:
            LARGE_SINK.reset(reset)
        lines = [_comment(("undo of " if self.flashback else "") + head), "BEGIN;"]
        lines += [s + ";" for s in statements]
        lines.append("COMMIT;")
        block = "\n".join(lines) + "\n"
        self.transactions += 1
        if self.flashback:
            self.pending.append(block)
        else:
            self._emit(block)
