"""Statements replayed as the source ran them: the replay's own session
(``SESSION_SETUP``), a DDL in its database and sql_mode (``ddl_statements`` for a target,
``ddl_script`` for a ``--format sql`` script), a statement-logged change in the source's
session (``statement_sql``, ``STATEMENT_RESET`` after it)."""
from __future__ import annotations

from ...constants import LOG_EVENT_SUPPRESS_USE_F
from ...errors import BinlogError
from ...statements import statement_kept
from .literals import hex_literal, number_literal, printable, quote_ident, quote_text, short

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


# -- how a target is given the source's session -------------------------------------------------

#: The sql_mode names a DDL is replayed with (those of the source's modes every MySQL-like
#: server knows: MySQL 8 has no NO_AUTO_CREATE_USER, TiDB none of MariaDB's own).
PORTABLE_SQL_MODES = frozenset({
    "REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "NO_UNSIGNED_SUBTRACTION",
    "NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE", "NO_ZERO_DATE", "ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO",
    "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH",
})


def portable_sql_mode(session) -> str | None:
    """The source's sql_mode (status var Q_SQL_MODE_CODE) as its portable mode names,
    or None when the event does not say."""
    names = session.sql_mode_names
    if names is None:
        return None
    return ",".join(n for n in names.split(",") if n in PORTABLE_SQL_MODES)


def collation_literal(cid: int) -> str:
    """A collation id for SET: its name (``'utf8_general_ci'``, as MariaDB, MySQL and TiDB
    all take it), or the id itself where this tool has no name (MariaDB 10.10+'s uca1400
    ids, which only MariaDB has)."""
    from ...charsets import collation_name

    name = collation_name(cid)
    return quote_text(name) if name else str(cid)


class Dialect:
    """How a target is given the source's session.  This one is MariaDB's, the target a
    replica is: the numbers the binlog holds, exactly as the replica sets them
    (``Query_log_event::do_apply_event``, sql/log_event_server.cc).  A target that takes
    other names (replay.tidb.session.TiDBDialect) overrides the parts it needs; each
    part is one ``SET`` (or None: nothing to set), ``statement`` the change it is for."""

    def timestamp(self, seconds: int, micro: int | None) -> str:
        """The statement's time (NOW(), status var Q_MICROSECONDS for NOW(6))."""
        return f"SET TIMESTAMP = {seconds}" + (f".{micro:06d}" if micro else "")

    def sql_mode(self, s, statement) -> str:
        return f"SET @@session.sql_mode = {s.sql_mode}"

    def lc_time_names(self, number: int, statement) -> str | None:
        return f"SET @@session.lc_time_names = {number}"

    def collation_database(self, cid: int, statement) -> str | None:
        return f"SET @@session.collation_database = {cid}"

    def intvar(self, name: str, value: int, statement) -> str:
        """``INSERT_ID`` or ``LAST_INSERT_ID``: what the statement's auto-increment and
        LAST_INSERT_ID() gave on the source (an INTVAR event)."""
        return f"SET {name} = {value}"

    def charsets(self, s, statement) -> str | None:
        return (f"SET @@session.character_set_client = {s.character_set_client}, "
                f"@@session.collation_connection = {s.collation_connection}, "
                f"@@session.collation_server = {s.collation_server}")

    @property
    def reset(self) -> tuple[str, ...]:
        """What sets the replay's session back after a statement-logged change."""
        return STATEMENT_RESET

    # -- DDL ---------------------------------------------------------------------------
    def ddl_session(self, statement) -> tuple[list[str], list[str]]:
        """(before, after) a DDL: the source's sql_mode and collations (``ddl_collations``),
        then the replay's own again."""
        s = statement.event.session()
        before, after = self.ddl_collations(s)
        mode = portable_sql_mode(s)
        if mode is not None:
            before.insert(0, f"SET SESSION sql_mode = '{mode}'")
            after.insert(0, f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
        return before, after

    def ddl_collations(self, s) -> tuple[list[str], list[str]]:
        """The source's collation_server (what a CREATE DATABASE without a charset gets;
        status var Q_CHARSET_CODE) and collation_database (when the source had set it:
        Q_CHARSET_DATABASE_CODE), by name, and back to the target's defaults after."""
        names = [(var, cid) for var, cid in (("collation_server", s.collation_server),
                                             ("collation_database", s.collation_database))
                 if cid is not None]
        if not names:
            return [], []
        return (["SET " + ", ".join(f"@@session.{var} = {collation_literal(cid)}" for var, cid in names)],
                ["SET " + ", ".join(f"@@session.{var} = DEFAULT" for var, _ in names)])

    def ddl_text(self, statement) -> str:
        return statement.query


MARIADB = Dialect()


def ddl_statements(statement, dialect: Dialect = MARIADB) -> list[str]:
    """What replays a DDL statement: USE its database, its session, the text, ours."""
    out = []
    # LOG_EVENT_SUPPRESS_USE_F: CREATE/DROP DATABASE carry the database they create
    # or drop as their db, not one to USE.
    if statement.db and not statement.event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE {quote_ident(statement.db)}")
    text = dialect.ddl_text(statement)
    before, after = dialect.ddl_session(statement)
    return out + before + [text] + after


# -- statement-logged changes ---------------------------------------------------------------

class NotReplayableError(BinlogError):
    """A statement-logged change that cannot be executed on a target (exit code 1)."""


#: Session variables a statement may set (statement_sql), back to the replay's own.
LC_TIME_NAMES_RESET = "SET @@session.lc_time_names = DEFAULT"
STATEMENT_RESET = (
    "SET TIMESTAMP = DEFAULT",
    "SET @@session.unique_checks = 1, @@session.sql_auto_is_null = 0",
    "SET @@session.auto_increment_increment = DEFAULT, @@session.auto_increment_offset = DEFAULT",
    LC_TIME_NAMES_RESET,
    "SET @@session.collation_database = DEFAULT, @@session.collation_server = DEFAULT",
) + SESSION_SETUP


def statement_sql(statement, dialect: Dialect = MARIADB) -> list:
    """What executes a statement-logged change as the source ran it, in order: USE its
    database, then its session (mysqlbinlog's order, ``client/mysqlbinlog.cc`` /
    ``Query_log_event::print_query_header``): the statement's time (``SET TIMESTAMP``,
    for NOW()), the option bits, sql_mode (for MariaDB as the source's number: exact,
    whatever its modes are called), auto_increment, time zone, lc_time_names,
    collation_database, INSERT_ID / LAST_INSERT_ID, the RAND seeds and the user variables
    it reads, the charsets last (every statement before is ASCII); then the statement
    itself as its bytes in the client charset (``bytes``: never re-encoded).
    ``dialect.reset`` sets the replay's session back afterwards; ``dialect`` says how the
    target takes each setting (``Dialect``).  NotReplayableError for what a statement
    cannot do again (LOAD DATA needs the client's file, which the binlog holds in other
    events); the dialect's error for what the target cannot take."""
    from ...constants import EventType
    from ...events.status_vars import (
        OPTION_AUTO_IS_NULL,
        OPTION_NO_FOREIGN_KEY_CHECKS,
        OPTION_RELAXED_UNIQUE_CHECKS,
        context_values,
    )

    event = statement.event
    if event.header.type_code == EventType.EXECUTE_LOAD_QUERY_EVENT or \
            statement.query.lstrip()[:4].upper() == "LOAD":
        raise NotReplayableError(
            f"LOAD DATA cannot be executed on a target: {short(statement.query)}",
            source=statement.file, event_offset=statement.pos, event_type=event.type_name,
            hint="replay its rows from a binlog written with binlog_format=ROW, or load the "
                 "file on the target and start after this statement")
    s = event.session()
    out: list = []
    if statement.db and not event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE{quote_ident(statement.db)}")   # no space: not the client's `use`
    out.append(dialect.timestamp(statement.ts, s.microseconds))
    if s.flags2 is not None:
        out.append(f"SET @@session.foreign_key_checks = {int(not s.flags2 & OPTION_NO_FOREIGN_KEY_CHECKS)}, "
                   f"@@session.unique_checks = {int(not s.flags2 & OPTION_RELAXED_UNIQUE_CHECKS)}, "
                   f"@@session.sql_auto_is_null = {int(bool(s.flags2 & OPTION_AUTO_IS_NULL))}")
    if s.sql_mode is not None:
        out.append(dialect.sql_mode(s, statement))
    if s.auto_increment_increment is not None:
        out.append(f"SET @@session.auto_increment_increment = {s.auto_increment_increment}, "
                   f"@@session.auto_increment_offset = {s.auto_increment_offset}")
    if s.time_zone is not None:
        out.append(f"SET @@session.time_zone = {quote_text(s.time_zone)}")
    if s.lc_time_names is not None:
        out.append(dialect.lc_time_names(s.lc_time_names, statement))
    if s.collation_database is not None:
        out.append(dialect.collation_database(s.collation_database, statement))
    values = context_values(statement.context)
    for name, var in (("insert_id", "INSERT_ID"), ("last_insert_id", "LAST_INSERT_ID")):
        if name in values:
            out.append(dialect.intvar(var, int(values[name]), statement))
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
        out.append(dialect.charsets(s, statement))
    out.append(bytes(event.raw_query))
    return [step for step in out if step is not None]


def _user_var_literal(value, collation) -> str:
    from ...charsets import COLLATIONS
    from ...constants import BINARY_COLLATION

    if value is None:
        return "NULL"
    number = number_literal(value)
    if number is not None:
        return number
    charset = "binary" if collation == BINARY_COLLATION else COLLATIONS.get(collation)
    if charset is None:
        return hex_literal(value)
    return f"_{charset} {hex_literal(value)}"


def ddl_kept(statement, table_filter) -> bool:
    """Whether a DDL statement concerns a table the filter keeps (binlog.statements)."""
    return statement_kept(statement.query, statement.db, table_filter)



def ddl_script(statement) -> list[str]:
    """The lines of a ``--format sql`` script that replay a DDL statement: its text as an
    escaped literal run by PREPARE (module docstring), in its database and the source's
    session (``Dialect.ddl_session``: sql_mode, collation_server by name).  The literal
    is set while the session has our sql_mode (backslash escapes on)."""
    query = statement.query
    try:
        query.encode("utf-8")
        text = quote_text(query)
    except UnicodeEncodeError:      # bytes that are no UTF-8: passed on as they are
        text = hex_literal(query.encode("utf-8", "surrogateescape"))
    out = [f"SET @binlog_ddl = {text};"]
    if statement.db and not statement.event.header.flags & LOG_EVENT_SUPPRESS_USE_F:
        out.append(f"USE{quote_ident(statement.db)};")
    before, after = MARIADB.ddl_session(statement)
    out += [f"{line};" for line in before]
    out += ["PREPARE binlog_ddl FROM @binlog_ddl;", "EXECUTE binlog_ddl;",
            "DEALLOCATE PREPARE binlog_ddl;"]
    return out + [f"{line};" for line in after]

