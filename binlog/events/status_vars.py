"""The session context a QUERY event carries in its status variables.

Layout (MariaDB ``sql/log_event.cc`` Query_log_event ctor, the loop over ``status_vars``;
MySQL ``libbinlogevents/src/statement_events.cpp``; KB "QUERY_EVENT"): a sequence of
``code u8`` + value, written in increasing code order.  A code the reader does not know
ends the walk, as in the server ("you must write status vars in growing order of code"),
and is reported in ``SessionContext.unknown_code``.

===  ==============================  =====================================================
0    Q_FLAGS2_CODE                   u32 option bits (autocommit, foreign/unique checks)
1    Q_SQL_MODE_CODE                 u64 sql_mode bits
2    Q_CATALOG_CODE                  u8 len, text, NUL (5.0.0-5.0.3)
3    Q_AUTO_INCREMENT                u16 increment, u16 offset
4    Q_CHARSET_CODE                  u16 character_set_client, collation_connection,
                                     collation_server (collation ids)
5    Q_TIME_ZONE_CODE                u8 len, text
6    Q_CATALOG_NZ_CODE               u8 len, text
7    Q_LC_TIME_NAMES_CODE            u16 locale number
8    Q_CHARSET_DATABASE_CODE         u16 collation_database
9    Q_TABLE_MAP_FOR_UPDATE_CODE     u64
10   Q_MASTER_DATA_WRITTEN_CODE      u32
11   Q_INVOKER                       u8 len, user, u8 len, host
12   Q_UPDATED_DB_NAMES (MySQL)      u8 count (254: too many), count NUL-terminated names
13   Q_MICROSECONDS (MySQL)          u24
14   Q_COMMIT_TS (MySQL, unused)     -
15   Q_COMMIT_TS2 (MySQL, unused)    -
16   Q_EXPLICIT_DEFAULTS_FOR_TS      u8
17   Q_DDL_LOGGED_WITH_XID (MySQL)   u64
18   Q_DEFAULT_COLLATION_FOR_UTF8MB4 u16
19   Q_SQL_REQUIRE_PRIMARY_KEY       u8
20   Q_DEFAULT_TABLE_ENCRYPTION      u8
128  Q_HRNOW (MariaDB)               u24 microseconds of the statement's start
129  Q_XID (MariaDB)                 u64
130  Q_GTID_FLAGS3 (MariaDB)         u8 flags, + u64 start-alter sequence number when the
                                     COMMIT_ALTER (4) or ROLLBACK_ALTER (8) bit is set
===  ==============================  =====================================================
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cursor import Cursor

# sql_mode bits (MariaDB sql/sql_class.h MODE_*; KB "QUERY_EVENT" table).
SQL_MODE_BITS = (
    "REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY", "NO_UNSIGNED_SUBTRACTION", "NO_DIR_IN_CREATE", "POSTGRESQL", "ORACLE",
    "MSSQL", "DB2", "MAXDB", "NO_KEY_OPTIONS", "NO_TABLE_OPTIONS", "NO_FIELD_OPTIONS",
    "MYSQL323", "MYSQL40", "ANSI", "NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL", "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL", "SIMULTANEOUS_ASSIGNMENT", "TIME_ROUND_FRACTIONAL",
)

# Q_FLAGS2 option bits (sql/sql_priv.h OPTION_*), as session variables.
OPTION_AUTO_IS_NULL = 0x4000
OPTION_NOT_AUTOCOMMIT = 0x80000
OPTION_NO_FOREIGN_KEY_CHECKS = 0x4000000
OPTION_RELAXED_UNIQUE_CHECKS = 0x8000000
OVER_MAX_DBS = 254
_ALTER_SEQUENCE_FLAGS = 4 | 8     # Gtid_log_event FL_COMMIT_ALTER_E1 | FL_ROLLBACK_ALTER_E1


@dataclass
class SessionContext:
    """What the source session looked like when it ran the statement (None: not logged)."""
    flags2: int | None = None
    sql_mode: int | None = None
    catalog: str | None = None
    auto_increment_increment: int | None = None
    auto_increment_offset: int | None = None
    character_set_client: int | None = None      # collation ids
    collation_connection: int | None = None
    collation_server: int | None = None
    time_zone: str | None = None
    lc_time_names: int | None = None
    collation_database: int | None = None
    table_map_for_update: int | None = None
    invoker: tuple[str, str] | None = None
    updated_db_names: list[str] | None = None
    microseconds: int | None = None
    explicit_defaults_for_timestamp: int | None = None
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: int | None = None
    default_table_encryption: int | None = None
    ddl_xid: int | None = None
    xid: int | None = None
    gtid_flags3: int | None = None
    start_alter_seq: int | None = None
    unknown_code: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def sql_mode_names(self) -> str | None:
        if self.sql_mode is None:
            return None
        names = [n for bit, n in enumerate(SQL_MODE_BITS) if self.sql_mode >> bit & 1]
        unknown = self.sql_mode >> len(SQL_MODE_BITS)
        if unknown:
            names.append(f"0x{unknown << len(SQL_MODE_BITS):x}")
        return ",".join(names)

    def as_dict(self) -> dict:
        """The JSON form (``session`` of a statement record): only what the event logged."""
        from ..charsets import COLLATIONS

        out: dict = {}
        if self.sql_mode is not None:
            out["sql_mode"] = self.sql_mode_names
        if self.flags2 is not None:
            out["autocommit"] = int(not self.flags2 & OPTION_NOT_AUTOCOMMIT)
            out["foreign_key_checks"] = int(not self.flags2 & OPTION_NO_FOREIGN_KEY_CHECKS)
            out["unique_checks"] = int(not self.flags2 & OPTION_RELAXED_UNIQUE_CHECKS)
            out["sql_auto_is_null"] = int(bool(self.flags2 & OPTION_AUTO_IS_NULL))
        if self.character_set_client is not None:
            out["character_set_client"] = COLLATIONS.get(self.character_set_client,
                                                         self.character_set_client)
            out["collation_connection"] = self.collation_connection
            out["collation_server"] = self.collation_server
        for name in ("time_zone", "lc_time_names", "collation_database",
                     "auto_increment_increment", "auto_increment_offset",
                     "explicit_defaults_for_timestamp", "catalog", "xid"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.invoker is not None:
            out["invoker"] = f"{self.invoker[0]}@{self.invoker[1]}"
        if self.unknown_code is not None:
            out["unknown_status_code"] = self.unknown_code
        return out


def _flags2(cur, s):
    s.flags2 = cur.u32("Q_FLAGS2")


def _sql_mode(cur, s):
    s.sql_mode = cur.u64("Q_SQL_MODE")


def _catalog(cur, s):
    s.catalog = _text(cur.bytes(cur.u8("catalog length"), "catalog"))
    cur.skip(1, "catalog NUL")


def _auto_increment(cur, s):
    s.auto_increment_increment = cur.u16("auto_increment_increment")
    s.auto_increment_offset = cur.u16("auto_increment_offset")


def _charset(cur, s):
    s.character_set_client = cur.u16("character_set_client")
    s.collation_connection = cur.u16("collation_connection")
    s.collation_server = cur.u16("collation_server")


def _time_zone(cur, s):
    s.time_zone = _text(cur.bytes(cur.u8("time zone length"), "time zone"))


def _catalog_nz(cur, s):
    s.catalog = _text(cur.bytes(cur.u8("catalog length"), "catalog"))


def _lc_time_names(cur, s):
    s.lc_time_names = cur.u16("lc_time_names")


def _charset_database(cur, s):
    s.collation_database = cur.u16("collation_database")


def _table_map_for_update(cur, s):
    s.table_map_for_update = cur.u64("table_map_for_update")


def _master_data_written(cur, s):
    s.extra["master_data_written"] = cur.u32("master_data_written")


def _invoker(cur, s):
    user = _text(cur.bytes(cur.u8("invoker user length"), "invoker user"))
    host = _text(cur.bytes(cur.u8("invoker host length"), "invoker host"))
    s.invoker = (user, host)


def _updated_db_names(cur, s):
    count = cur.u8("updated db count")
    names = []
    if count != OVER_MAX_DBS:
        for _ in range(count):
            names.append(_text(cur.cstring("updated db name")))
    s.updated_db_names = names


def _microseconds(cur, s):
    s.microseconds = cur.u24("microseconds")


def _explicit_defaults(cur, s):
    s.explicit_defaults_for_timestamp = cur.u8("explicit_defaults_for_timestamp")


def _ddl_xid(cur, s):
    s.ddl_xid = cur.u64("ddl xid")


def _default_utf8mb4(cur, s):
    s.default_collation_for_utf8mb4 = cur.u16("default_collation_for_utf8mb4")


def _require_pk(cur, s):
    s.sql_require_primary_key = cur.u8("sql_require_primary_key")


def _table_encryption(cur, s):
    s.default_table_encryption = cur.u8("default_table_encryption")


def _xid(cur, s):
    s.xid = cur.u64("Q_XID")


def _gtid_flags3(cur, s):
    s.gtid_flags3 = cur.u8("Q_GTID_FLAGS3")
    if s.gtid_flags3 & _ALTER_SEQUENCE_FLAGS:
        s.start_alter_seq = cur.u64("start alter sequence number")


STATUS_VAR_DECODERS = {
    0: _flags2, 1: _sql_mode, 2: _catalog, 3: _auto_increment, 4: _charset, 5: _time_zone,
    6: _catalog_nz, 7: _lc_time_names, 8: _charset_database, 9: _table_map_for_update,
    10: _master_data_written, 11: _invoker, 12: _updated_db_names, 13: _microseconds,
    16: _explicit_defaults, 17: _ddl_xid, 18: _default_utf8mb4, 19: _require_pk,
    20: _table_encryption, 128: _microseconds, 129: _xid, 130: _gtid_flags3,
}


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def parse_status_vars(data: bytes, base: int = 0) -> SessionContext:
    """The session context of a QUERY event's status variables; ``base`` is the absolute
    offset of ``data`` in the file (a truncated value raises TruncatedError there)."""
    s = SessionContext()
    cur = Cursor(data, base=base)
    while not cur.at_end():
        code = cur.u8("status var code")
        decode = STATUS_VAR_DECODERS.get(code)
        if decode is None:
            s.unknown_code = code       # the server skips the rest too
            break
        decode(cur, s)
    return s


# USER_VAR value types (Item_result: STRING_RESULT=0, REAL_RESULT=1, INT_RESULT=2,
# ROW_RESULT=3, DECIMAL_RESULT=4); flags bit 0: UNSIGNED (sql/log_event.h User_var_log_event).
USER_VAR_STRING, USER_VAR_REAL, USER_VAR_INT, USER_VAR_DECIMAL = 0, 1, 2, 4
USER_VAR_UNSIGNED_F = 1


def user_var_value(event):
    """The value of a USER_VAR event: None (NULL), int, float, Decimal, or bytes in the
    collation ``event.charset`` (strings are kept as their bytes: never re-encoded)."""
    import struct

    from ..errors import MalformedEventError
    from ..types.decimal import decimal_from_bin, decimal_layout

    if event.is_null:
        return None
    raw, kind = event.value, event.value_type
    where = {"source": None, "event_offset": event.header.offset, "event_type": event.type_name}
    if kind == USER_VAR_STRING:
        return bytes(raw)
    if kind in (USER_VAR_REAL, USER_VAR_INT) and len(raw) < 8:
        raise MalformedEventError(f"user variable @{event.name}: {len(raw)} value bytes, need 8",
                                  **where)
    if kind == USER_VAR_REAL:
        return struct.unpack("<d", raw[:8])[0]
    if kind == USER_VAR_INT:
        return int.from_bytes(raw[:8], "little", signed=not event.flags & USER_VAR_UNSIGNED_F)
    if kind == USER_VAR_DECIMAL and len(raw) >= 2 and 0 < raw[0] <= 65 and raw[1] <= min(raw[0], 38):
        precision, scale = raw[0], raw[1]
        size = decimal_layout(precision, scale)[0]
        return decimal_from_bin(bytes(raw[2:2 + size]), precision, scale)
    raise MalformedEventError(f"user variable @{event.name}: value type {kind} cannot be read",
                              **where)


def context_values(context) -> dict:
    """INTVAR, RAND and USER_VAR events before a statement, as session values:
    ``insert_id``, ``last_insert_id``, ``rand_seed1``/``rand_seed2``, ``user_vars``
    (name -> value as ``user_var_value`` gives it, with the collation id of strings)."""
    from .control import IntvarEvent, RandEvent, UserVarEvent

    out: dict = {}
    for event in context:
        if isinstance(event, IntvarEvent):
            out["last_insert_id" if event.kind == 1 else "insert_id"] = event.value
        elif isinstance(event, RandEvent):
            out["rand_seed1"], out["rand_seed2"] = event.seed1, event.seed2
        elif isinstance(event, UserVarEvent):
            out.setdefault("user_vars", {})[event.name] = (user_var_value(event), event.charset)
    return out


def statement_text(raw: bytes, session: SessionContext) -> tuple[str, bool]:
    """(text, exact): the statement decoded with the client's charset (Q_CHARSET_CODE;
    utf-8 when the event does not say); ``exact`` is False when its bytes are not valid
    in that charset and undecodable bytes were replaced."""
    from ..charsets import codec_for_collation

    codec = codec_for_collation(session.character_set_client) or "utf-8"
    try:
        return raw.decode(codec), True
    except (UnicodeDecodeError, LookupError):
        return raw.decode("utf-8", "replace"), False
