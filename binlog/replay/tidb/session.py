"""The source's session as TiDB takes it: for a statement-logged change, the settings of
its QUERY event (output.sql.session.Dialect: MariaDB takes the binlog's numbers) named,
or a clear stop where TiDB has nothing that does the same; for a DDL, its collations
made explicit (``tidb.ddl``).  Found by running TiDB 8.5
(tests/binlog/replay/test_apply_tidb_sessions.py):

- ``SET TIMESTAMP`` (NOW(6)): TiDB truncates its float64 to the microsecond, half a
  microsecond is added (``TiDBDialect.timestamp``);
- ``sql_mode``: TiDB refuses a number (1231) and takes the names - MariaDB's all but
  IGNORE_BAD_TABLE_OPTIONS, EMPTY_STRING_IS_NULL, SIMULTANEOUS_ASSIGNMENT and
  TIME_ROUND_FRACTIONAL (1231).  ORACLE it takes and ignores (TiDB docs, "SQL mode"),
  where MariaDB parses PL/SQL.  Those stop the run, but TIME_ROUND_FRACTIONAL, which
  is what TiDB does anyway (it rounds a fraction a column cannot hold, as MySQL does):
  left out;
- ``lc_time_names``: read-only on TiDB (1238), which has only en_US: left out when the
  source had en_US (locale number 0, sql/sql_locale.cc), a stop otherwise;
- ``INSERT_ID``: TiDB takes ``SET INSERT_ID`` and ignores it (its auto-increment ids come
  from ranges of its own): a statement that generated ids on the source stops the run;
- ``LAST_INSERT_ID``: TiDB takes ``SET LAST_INSERT_ID`` and ignores it;
  ``SELECT LAST_INSERT_ID(N)`` sets it, on TiDB as on MariaDB;
- collations by id (TiDB: "Unknown charset 33"): by name where TiDB has the collation or
  ``--map-collation`` maps it.  ``character_set_client`` and ``collation_connection``
  (how the statement's text and literals are read) stop the run otherwise.  A latin1
  client's bytes above 0x7F stop it too: TiDB takes ``character_set_client = latin1`` and
  reads the bytes as UTF-8 (error 1366 for 'caf\\xE9'; gbk it does convert);
  ``collation_server`` and ``collation_database`` (the defaults of CREATE DATABASE and
  CREATE TABLE, which a statement-logged change does not run: DDL goes its own way) are
  then left out.
"""
from __future__ import annotations

from ...charsets import COLLATIONS, collation_name
from ...errors import TargetError
from ...output.sql.literals import quote_text, short
from ...output.sql.session import LC_TIME_NAMES_RESET, STATEMENT_RESET, Dialect
from .collations import CHARSETS, CollationMap, tidb_charset
from .ddl import translate

#: sql_mode names TiDB 8.5 refuses (1231), or takes without doing what MariaDB does.
REFUSED_SQL_MODES = frozenset({"IGNORE_BAD_TABLE_OPTIONS", "EMPTY_STRING_IS_NULL",
                               "SIMULTANEOUS_ASSIGNMENT", "ORACLE"})
#: What TiDB does anyway: rounding a fraction the column cannot hold.
TIDB_SQL_MODES = frozenset({"TIME_ROUND_FRACTIONAL"})
EN_US = 0           # MariaDB's locale number of en_US (sql/sql_locale.cc my_locale_en_US)


def refuse(statement, message: str, hint: str) -> TargetError:
    """The stop for a statement-logged change TiDB cannot run as the source ran it
    (exit 5), naming it."""
    error = TargetError(f"{message}: {short(statement.query, 200)}", hint)
    error.add_context(source=statement.file, event_offset=statement.pos,
                      event_type=statement.event.type_name)
    return error


class TiDBDialect(Dialect):
    def __init__(self, collations: CollationMap, warn):
        self.collations = collations
        self.warn = warn

    def timestamp(self, seconds: int, micro: int | None) -> str:
        """TiDB reads ``SET TIMESTAMP`` as a float64 and truncates it to the microsecond
        (1764300290.102134 gave NOW(6) .102133: 144 of 300 random times wrong); half a
        microsecond more gives the source's microsecond (300 of 300)."""
        return f"SET TIMESTAMP = {seconds}" + (f".{micro:06d}5" if micro else "")

    def sql_mode(self, s, statement) -> str:
        names = [n for n in (s.sql_mode_names or "").split(",") if n and n not in TIDB_SQL_MODES]
        refused = [n for n in names if n in REFUSED_SQL_MODES or n.startswith("0x")]
        if refused:
            raise refuse(statement, f"TiDB has no sql_mode {', '.join(refused)} (the source ran the "
                         f"statement with it)", "log the changes as rows (binlog_format=ROW) or "
                         "skip statement-based changes with --skip-statements")
        return f"SET @@session.sql_mode = {quote_text(','.join(names))}"

    def lc_time_names(self, number: int, statement) -> str | None:
        if number == EN_US:
            return None
        raise refuse(statement, f"the source ran the statement with lc_time_names number {number} "
                     f"(sql/sql_locale.cc), TiDB has only en_US (read-only there)",
                     "log the changes as rows (binlog_format=ROW) or skip statement-based "
                     "changes with --skip-statements")

    def intvar(self, name: str, value: int, statement) -> str:
        if name == "LAST_INSERT_ID":
            return f"SELECT LAST_INSERT_ID({value})"
        raise refuse(statement, f"the statement generated auto-increment values on the source "
                     f"(INSERT_ID {value}); TiDB ignores SET INSERT_ID and would give others",
                     "log the changes as rows (binlog_format=ROW), which carry the values")

    def collation_database(self, cid: int, statement) -> str | None:
        name = self._name(cid)
        return f"SET @@session.collation_database = {quote_text(name)}" if name else None

    def charsets(self, s, statement) -> str | None:
        client = tidb_charset(COLLATIONS.get(s.character_set_client or 0, ""))
        if client not in CHARSETS:
            raise refuse(statement, f"the source ran the statement with character_set_client "
                         f"{client or s.character_set_client}, which TiDB does not have",
                         "log the changes as rows (binlog_format=ROW)")
        if client == "latin1" and any(b >= 0x80 for b in statement.event.raw_query):
            raise refuse(statement, "the source's client sent this statement in latin1 with "
                         "bytes above 0x7F, which TiDB reads as UTF-8 (its latin1 is UTF-8 "
                         "inside: pkg/parser/charset/encoding_latin1.go): the text would change",
                         "log the changes as rows (binlog_format=ROW)")
        connection = self._needed(s.collation_connection, "collation_connection", statement)
        server = self._name(s.collation_server)
        sets = [f"@@session.character_set_client = {quote_text(client)}",
                f"@@session.collation_connection = {quote_text(connection)}"]
        if server:
            sets.append(f"@@session.collation_server = {quote_text(server)}")
        return "SET " + ", ".join(sets)

    @property
    def reset(self) -> tuple[str, ...]:
        return tuple(step for step in STATEMENT_RESET if step != LC_TIME_NAMES_RESET)

    def ddl_collations(self, s) -> tuple[list[str], list[str]]:
        """None: on TiDB a DDL's collations are in its text (``ddl_text``)."""
        return [], []

    def ddl_text(self, statement) -> str:
        text, mapped = translate(statement, self.collations)
        if mapped:
            self.warn(f"{statement.file} @ {statement.pos}: created on TiDB with "
                      f"{', '.join(mapped)} (--map-collation), which compare(s) otherwise than "
                      f"on the source: {short(statement.query)}")
        return text

    # -- collations -------------------------------------------------------------------
    def _name(self, cid: int | None) -> str | None:
        """TiDB's name for a collation id: its own, or the mapped one; None if neither."""
        name = collation_name(cid)
        return self.collations.get(name) if name else None

    def _needed(self, cid: int | None, variable: str, statement) -> str:
        name = self._name(cid)
        if name is not None:
            return name
        known = collation_name(cid) or f"id {cid} ({COLLATIONS.get(cid or 0, 'unknown')})"
        raise refuse(statement, f"the source ran the statement with {variable} {known}, which "
                     f"TiDB does not have", f"--map-collation {known}=<a TiDB collation of the "
                     f"same character set> to run it with that one, or log the changes as rows "
                     f"(binlog_format=ROW)")
