"""The DDL policy: which of the source's DDL is replayed on the target (not with
--no-ddl, nor for tables the filters leave out, nor routine definitions without
--routines: each is reported instead) and how it runs (its own implicit commit; after a
resume, "already exists / does not exist" taken as applied before the interruption)."""
from __future__ import annotations

from dataclasses import replace

import pymysql

from ...assembly.routines import routine_kind, strip_definer
from ...errors import TargetError
from ...output.sql.literals import short
from ...output.sql.session import ddl_kept, ddl_statements
from ..tidb import ddl_hint, rebuild_only
from .executor import Executor
from .failures import error_code
from .options import ApplyOptions

# the target says a DDL was applied already: ER_TABLE_EXISTS_ERROR 1050, ER_BAD_TABLE_ERROR
# 1051, ER_DB_CREATE_EXISTS 1007, ER_DB_DROP_EXISTS 1008, ER_DUP_FIELDNAME 1060,
# ER_DUP_KEYNAME 1061, ER_CANT_DROP_FIELD_OR_KEY 1091, ER_NO_SUCH_TABLE 1146,
# ER_KEY_DOES_NOT_EXISTS 1176 (sql/share/errmsg-utf8.txt)
DDL_ALREADY_DONE = {1050, 1051, 1007, 1008, 1060, 1061, 1091, 1146, 1176}


def where(statement) -> str:
    return f"{statement.file} @ {statement.pos}" + (f" GTID {statement.gtid}" if statement.gtid else "")


class DdlPolicy:
    def __init__(self, options: ApplyOptions, warn):
        self.options = options
        self.warn = warn
        self.routines_warned = False

    def wanted(self, statement, table_filter) -> bool:
        """Whether the DDL is replayed (else it is reported: --no-ddl, filtered out,
        a routine without --routines)."""
        options = self.options
        kind = routine_kind(statement.query)
        if options.no_ddl or not ddl_kept(statement, table_filter) or (kind and not options.routines):
            if options.no_ddl:
                self.warn(f"{where(statement)}: DDL not replayed (--no-ddl): {short(statement.query)}")
            elif kind and not self.routines_warned:
                self.routines_warned = True
                self.warn(f"{where(statement)}: {kind} definitions (and those of triggers, "
                          f"procedures, functions, events) are not replayed: the row events "
                          f"already hold the rows they wrote; --routines replays them: "
                          f"{short(statement.query)}")
            return False
        return True

    def run(self, session: Executor, statement, tolerant: bool) -> None:
        """Execute the DDL on ``session`` (it commits implicitly); ``tolerant``: "already
        exists / does not exist" taken as applied before a crash.  A DDL commits by
        itself and its checkpoint row only after it, so a kill between the two leaves it
        applied and unrecorded, and the run that follows meets it before any transaction
        of its own (everything before a DDL is committed when it runs): every DDL a run
        meets before its first transaction is tolerant, not only the first - a target
        found holding all the leading DDLs and no checkpoint row resumes too."""
        at = where(statement)
        if session.tidb and rebuild_only(statement.query):
            self.warn(f"{at}: not replayed on TiDB, which refuses it (error 8200): a table "
                      f"rebuild that changes nothing TiDB holds: {short(statement.query)}")
            return
        if self.options.strip_definer:
            statement = replace(statement, query=strip_definer(statement.query))
        statement = session.run.rewrite.statement(statement)
        try:
            with session.conn.cursor() as cur:
                for stmt in ddl_statements(statement, session.dialect):
                    try:
                        cur.execute(stmt)
                        if cur.warning_count:
                            self._warnings(cur, at, statement)
                    except pymysql.err.MySQLError as exc:
                        code = exc.args[0] if exc.args else None
                        if tolerant and code in DDL_ALREADY_DONE:
                            self.warn(f"{at}: {exc.args[1] if len(exc.args) > 1 else exc} - taken as "
                                      f"applied before the interruption")
                            continue
                        raise
        except Exception as exc:
            error = session.translate(exc, None, what="the DDL")
            if isinstance(error, TargetError):
                error.message = f"{at}: DDL failed: {error.message}\n  statement: {statement.query.strip()[:300]}"
                hint = ddl_hint(error_code(exc)) if session.tidb else None
                if hint:
                    error.hint = hint
            raise error from exc
        finally:
            session.run.keys.invalidate()
            session.run.live.forget()
        session.stats["ddl"] += 1

    def _warnings(self, cur, at: str, statement) -> None:
        """A DDL the target took with warnings did not do all it says (TiDB leaves a
        FULLTEXT index out with warning 1214): each is reported, naming the statement."""
        cur.execute("SHOW WARNINGS")
        for level, code, message in cur.fetchall():
            if level != "Note":
                self.warn(f"{at}: the target took the DDL with {level.lower()} {code}: {message}: "
                          f"{short(statement.query)}")
