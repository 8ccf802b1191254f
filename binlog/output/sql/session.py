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

