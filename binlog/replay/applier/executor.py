"""The executor: one session on the target (a connection of its own) executing a source
transaction's parts in binlog order - multi-row statements, --method binlog's BINLOG
statements, statement-logged changes - and stopping on anything the target refused or
changed, with the row named (failures.translate)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pymysql

from ...errors import TargetError, UsageError
from ...output.sql.literals import short
from ...output.sql.session import MARIADB, SESSION_SETUP, Dialect, statement_sql
from ..tidb import SESSION_SETUP as TIDB_SESSION_SETUP, is_tidb
from ..tidb.collations import CollationMap
from ..tidb.session import TiDBDialect
from .context import Run
from .failures import CONNECTION_ERRORS, GONE, RETRYABLE_ERRORS, close_quietly, error_code, translate
from .options import ApplyInput, ApplyOptions


class Replaced:
    """Safe mode: REPLACE found rows already on the target (same primary or unique key)
    and deleted them first - the target had diverged.  Counted per open batch (what its
    commit adds to the stats) and reported, the first ten times."""

    def __init__(self, warn):
        self.warn = warn
        self.batch = 0
        self.warned = 0

    def add(self, count: int, tx) -> None:
        self.batch += count
        self.warned += 1
        if self.warned <= 10:
            self.warn(f"{tx.label if tx is not None else 'a change'}: {count} row(s) already on the "
                      f"target with the same key were deleted and replaced (safe mode REPLACE)"
                      + ("; further such warnings are only counted" if self.warned == 10 else ""))


class Executor:
    """A target session of a run: ``apply`` executes a transaction's parts (as the
    pipeline rendered them, or rendered here), ``translate`` makes a failure a
    ConnectionLost or a TargetError naming the row."""

    def __init__(self, conn, run: Run, options: ApplyOptions, stats: dict, replaced: Replaced,
                 warn):
        self.conn: Any = conn       # PyMySQL's (untyped)
        self.run = run
        self.options = options
        self.stats = stats          # the run's (or its worker's): statements executed
        self.replaced = replaced
        self.warn = warn
        self.sent_fde: bytes | None = None     # the FORMAT_DESCRIPTION this session's BINLOGs read with
        self.tidb = False           # the target is TiDB (replay.tidb): set by connect
        self.dialect: Dialect = MARIADB     # how it takes the source's session (output.sql.session)

    @classmethod
    def connect(cls, io: ApplyInput, options: ApplyOptions, run: Run, stats: dict,
                replaced: Replaced, client_flag: int = 0) -> Executor:
        # the client's own packet limit (PyMySQL: 16 MiB) is not the one that matters:
        # the target's max_allowed_packet is (checked before a BINLOG statement is sent)
        conn = io.connect(options.to, autocommit=False, max_allowed_packet=1 << 30,
                          client_flag=client_flag)
        try:
            with conn.cursor() as cur:
                for stmt in SESSION_SETUP:
                    cur.execute(stmt)
                cur.execute("SELECT VERSION()")
                tidb = is_tidb(str(cur.fetchone()[0]))
                for stmt in TIDB_SESSION_SETUP if tidb else ():
                    cur.execute(stmt)
        except Exception as exc:
            raise translate(exc, None) from exc
        session = cls(conn, run, options, stats, replaced, io.warn)
        session.tidb = tidb
        if tidb:
            session.dialect = TiDBDialect(CollationMap.of(options.map_collation), io.warn)
        elif options.map_collation:
            close_quietly(conn)
            raise UsageError("--map-collation is for a TiDB target (a collation TiDB lacks); "
                             "this target has the source's collations")
        return session

    def rollback(self) -> None:
        """Roll the open batch back (on a connection already broken the server does)."""
        self.replaced.batch = 0
        try:
            self.conn.rollback()
        except GONE:
            pass            # the connection is already broken: the server rolls back

    def close(self) -> None:
        if self.conn is not None:
            close_quietly(self.conn)
            self.conn = None

    # -- a transaction's parts --------------------------------------------------------
    def apply(self, tx, parts=None) -> None:
        """The transaction's row changes and statement-logged changes, in binlog order:
        ``parts`` as the pipeline rendered them, else rendered here (the pipeline is
        stopped, or the transaction has no rows)."""
        for kind, item in (self.run.parts(tx) if parts is None else parts):
            if kind == "rows":
                self.execute_rows(item, tx)
            elif kind == "binlog":
                self.execute_binlog(item, tx)
            else:
                self.execute_statement(item, tx)

    def execute_rows(self, batch, tx) -> None:
        sql, rows = batch.sql, batch.rows
        first = batch.first
        self.check_triggers(self.run.rewrite.db(first.db), first.table)
        try:
            with self.conn.cursor() as cur:
                affected = cur.execute(sql)
                if cur.warning_count:
                    self._check_warnings(cur, batch, tx)
            if sql.startswith("REPLACE ") and affected > len(rows):
                self.replaced.add(affected - len(rows), tx)
            return
        except pymysql.err.MySQLError as exc:
            error = exc
        except Exception as exc:   # socket errors, broken pipes...
            raise self.translate(exc, tx) from exc
        code = error_code(error)
        if code in CONNECTION_ERRORS or code in RETRYABLE_ERRORS or len(rows) == 1:
            raise self.translate(error, tx, rows[0] if len(rows) == 1 else None, sql) from error
        # A multi-row statement failed (and was rolled back alone): find the row.
        for row in rows:
            one = batch.row_sql(row[1])
            try:
                with self.conn.cursor() as cur:
                    cur.execute(one)
            except pymysql.err.MySQLError as exc:
                raise self.translate(exc, tx, row, one) from exc
        raise self.translate(error, tx, None, sql) from error

    def execute_binlog(self, chunk, tx) -> None:
        """A BINLOG statement (replay.binlog_statements.Chunk), after the FORMAT_DESCRIPTION
        it is read with when the session has not been given that one."""
        if self.run.binlog is None:
            raise RuntimeError("a BINLOG statement executed in a run without --method binlog")
        max_packet = self.run.binlog.max_packet
        if len(chunk.sql) > max_packet or len(chunk.fde) > max_packet:
            raise TargetError(
                f"{tx.label}: a BINLOG statement of {len(chunk.sql)} bytes (the rows event at "
                f"{chunk.events[0][0]} @ {chunk.events[0][1]} alone is that large) exceeds the "
                f"target's max_allowed_packet ({max_packet}); nothing of it was applied",
                hint="raise max_allowed_packet on the target (SET GLOBAL max_allowed_packet = "
                     "1073741824), or apply with --method sql")
        try:
            with self.conn.cursor() as cur:
                if self.sent_fde != chunk.fde:
                    cur.execute(chunk.fde)
                    self.sent_fde = chunk.fde
                cur.execute(chunk.sql)
                if cur.warning_count:
                    self._binlog_warnings(cur, chunk, tx)
        except pymysql.err.MySQLError as exc:
            error = self.translate(exc, tx)
            if isinstance(error, TargetError):
                error.message += f"\n  in the rows events at {_events_text(chunk.events)}"
                if exc.args and exc.args[0] in (1227, 1370):
                    error.hint = ("--method binlog needs the BINLOG REPLAY privilege (MariaDB "
                                  "10.5.2 and later; SUPER before): GRANT BINLOG REPLAY ON *.* "
                                  "TO the user, or use --method sql")
            raise error from exc
        except Exception as exc:   # socket errors, broken pipes...
            raise self.translate(exc, tx) from exc

    def execute_statement(self, statement, tx) -> None:
        """A statement-logged change, executed as the source ran it: in its database and
        session (output.sql.session.statement_sql), then the replay's session is restored.  An
        error the source itself logged for the statement (its error_code) is expected."""
        where = f"{statement.file} @ {statement.pos}"
        if self.options.skip_statements:
            self.warn(f"{where}: statement-based change skipped (--skip-statements): "
                      f"{short(statement.query, 200)}")
            return
        # NotReplayableError (exit 1) or the dialect's TargetError (exit 5) names it
        steps = statement_sql(self.run.rewrite.statement(statement), self.dialect)
        expected = statement.event.error_code
        try:
            with self.conn.cursor() as cur:
                try:
                    for step in steps[:-1]:
                        cur.execute(step)
                    try:
                        cur.execute(steps[-1])
                    except pymysql.err.MySQLError as exc:
                        if not (expected and exc.args and exc.args[0] == expected):
                            raise
                finally:
                    for step in self.dialect.reset:
                        cur.execute(step)
        except Exception as exc:
            error = self.translate(exc, tx, None, f"{where}: {short(statement.query, 300)}")
            raise error from exc
        self.stats["statements"] += 1

    def check_triggers(self, db: str, table: str) -> None:
        """Row events hold the rows the source's triggers wrote; a target trigger would
        write them again.  Refuse a table with triggers unless --allow-triggers."""
        checked = self.run.triggers
        if self.options.allow_triggers or (db, table) in checked:
            return
        with self.conn.cursor() as cur:
            cur.execute("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS "
                        "WHERE EVENT_OBJECT_SCHEMA = %s AND EVENT_OBJECT_TABLE = %s "
                        "ORDER BY TRIGGER_NAME", (db, table))
            names = [r[0] for r in cur.fetchall()]
        if names:
            raise TargetError(
                f"target table {db}.{table} has trigger(s) {', '.join(names)}: the binlog's "
                f"row events already hold the rows the source's triggers wrote, and applying "
                f"them here would fire these again",
                hint="drop the triggers on the target for the replay, or give --allow-triggers "
                     "if they must fire")
        checked.add((db, table))

    # -- warnings: a value the target changed ------------------------------------------
    def _binlog_warnings(self, cur, chunk, tx) -> None:
        """A value the target stored changed (a warning): stop, as for SQL statements."""
        for code, message in _warnings(cur):
            error = self.translate(pymysql.err.DataError(code, message), tx)
            error.message += f"\n  in the rows events at {_events_text(chunk.events)}"
            raise error

    def _check_warnings(self, cur, batch, tx) -> None:
        """The session is not strict (values come from rows the source holds, and some
        of those - ENUM's '' error value, zero dates - only exist non-strict), so a value
        the target cannot hold (a narrower column, out of range) is a warning: stop on
        it with the row named instead of committing a changed value."""
        for code, message in _warnings(cur):
            row = _warned_row(message, batch.rows)
            if row is not None and self._enum_error_value(code, message, row[1]):
                continue
            raise self.translate(pymysql.err.DataError(code, message), tx, row, batch.sql)

    def _enum_error_value(self, code, message: str, change) -> bool:
        """Warning 1265 for an ENUM column given '': the source row holds ENUM's error
        value (index 0), which a non-strict server stores with exactly this warning."""
        from ...constants import ColumnType

        m = re.search(r"column '([^']*)'", message)
        image = change.after if change is not None and change.after is not None else None
        if code != 1265 or not m or not image:
            return False
        names = self.run.keys.keys(change).names
        for col in change.plan.columns:
            name = names[col.index] if names and col.index < len(names) else col.name
            if col.type == ColumnType.ENUM and name == m.group(1):
                return image.get(col.key) in ("", 0)
        return False

    # -- failures ----------------------------------------------------------------------
    def translate(self, exc, tx, row=None, sql=None, what=None):
        return translate(exc, tx, row, sql, what, row_key=self.row_key)

    def row_key(self, change) -> str:
        keys = self.run.keys.keys(change)
        image = change.before if change.before is not None else change.after
        cols = change.plan.columns
        identity = keys.identity or tuple(c.index for c in cols[:4])
        parts = []
        for i in identity:
            col = cols[i]
            name = keys.names[i] if keys.names else (col.name or f"@{i + 1}")
            value = image.get(col.key) if image else None
            parts.append(f"{name}={value!r}")
        return "(" + ", ".join(parts) + ")"


def _events_text(events) -> str:
    shown = ", ".join(f"{f} @ {p}" for f, p in events[:3])
    return shown + (f" and {len(events) - 3} more" if len(events) > 3 else "")


def _warnings(cur) -> Iterator[tuple[int, str]]:
    """(code, message) of the session's last statement's warnings and errors (its Notes
    left out: they change no value)."""
    cur.execute("SHOW WARNINGS")
    for level, code, message in cur.fetchall():
        if level != "Note":
            yield code, message.decode("utf-8", "replace") if isinstance(message, bytes) else message


def _warned_row(message: str, rows):
    """The statement row a warning names ("... at row 3"), or the only row."""
    m = re.search(r"\bat row (\d+)", message)
    if m and 1 <= int(m.group(1)) <= len(rows):
        return rows[int(m.group(1)) - 1]
    return rows[0] if len(rows) == 1 else None
