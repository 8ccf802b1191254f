"""Type codes and flags, named as in the server sources.

Event types: MySQL ``libs/mysql/binlog/event/binlog_event.h`` enum Log_event_type and
MariaDB ``sql/log_event.h`` (160+).  Column types: ``include/mysql_com.h`` /
``include/field_types.h`` enum_field_types.
"""
from __future__ import annotations

from enum import IntEnum


class EventType(IntEnum):
    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    # MariaDB
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171


def event_type_name(code: int) -> str:
    name = _EVENT_NAMES.get(code)
    return name if name is not None else f"UNKNOWN_EVENT_TYPE_{code}"


# code -> name: every event's header asks (EventType(code) costs microseconds)
_EVENT_NAMES = {int(e): e.name for e in EventType}


class ColumnType(IntEnum):
    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    BLOB_COMPRESSED = 140   # MariaDB
    VARCHAR_COMPRESSED = 141  # MariaDB
    VECTOR = 242            # MySQL 9
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


#: MariaDB's compressed events (log_bin_compress) and the plain type each is the
#: compressed form of (sql/log_event.h: the compressed rows types are their plain ones
#: moved by a constant).
UNCOMPRESSED_TYPES: dict[int, int] = {
    EventType.QUERY_COMPRESSED_EVENT: EventType.QUERY_EVENT,
    EventType.WRITE_ROWS_COMPRESSED_EVENT_V1: EventType.WRITE_ROWS_EVENT_V1,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1: EventType.UPDATE_ROWS_EVENT_V1,
    EventType.DELETE_ROWS_COMPRESSED_EVENT_V1: EventType.DELETE_ROWS_EVENT_V1,
    EventType.WRITE_ROWS_COMPRESSED_EVENT: EventType.WRITE_ROWS_EVENT,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT: EventType.UPDATE_ROWS_EVENT,
    EventType.DELETE_ROWS_COMPRESSED_EVENT: EventType.DELETE_ROWS_EVENT,
}


#: The legacy temporal types (MariaDB 5.3 format and older: TABLE_MAP carries no
#: fraction digits for them) and their SQL names; the *2 types (17/18/19) carry theirs.
LEGACY_TEMPORAL_TYPES: dict[int, str] = {
    ColumnType.TIMESTAMP: "timestamp", ColumnType.DATETIME: "datetime", ColumnType.TIME: "time"}


# Integer types whose signedness the SIGNEDNESS optional metadata covers, together
# with FLOAT/DOUBLE/NEWDECIMAL/DECIMAL (MySQL rows_event.h is_numeric_type).
NUMERIC_TYPES = frozenset({
    ColumnType.TINY, ColumnType.SHORT, ColumnType.INT24, ColumnType.LONG,
    ColumnType.LONGLONG, ColumnType.NEWDECIMAL, ColumnType.FLOAT, ColumnType.DOUBLE,
    ColumnType.DECIMAL,
})

# MariaDB's SIGNEDNESS bitmap has one bit per column whose Binlog_type_info carries a
# signedness (log_event_server.cc init_signedness_field): every Field_num, and YEAR is
# one (Field_year derives from Field_tiny, UNSIGNED ZEROFILL).  MySQL's
# is_numeric_type() leaves YEAR out.  Checked on MariaDB 10.11 (samples: signedness).
MARIADB_NUMERIC_TYPES = NUMERIC_TYPES | {ColumnType.YEAR}

# Collation id of the binary pseudo-charset.
BINARY_COLLATION = 63
# The spatial types by their code in a TABLE_MAP's GEOMETRY_TYPE metadata
# (sql/field.h Field::geometry_type: GEOM_GEOMETRY = 0, GEOM_POINT = 1, ...)
GEOMETRY_TYPES = ("geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                  "multipolygon", "geometrycollection")
GEOMETRY_POINT = GEOMETRY_TYPES.index("point")

# Rows event flags (post-header).
STMT_END_F = 0x1
NO_FOREIGN_KEY_CHECKS_F = 0x2
RELAXED_UNIQUE_CHECKS_F = 0x4
COMPLETE_ROWS_F = 0x8

# Common header flags (sql/log_event.h).
LOG_EVENT_BINLOG_IN_USE_F = 0x1
LOG_EVENT_THREAD_SPECIFIC_F = 0x4      # the statement uses temporary tables (pseudo_thread_id)
LOG_EVENT_SUPPRESS_USE_F = 0x8         # no USE before the statement (CREATE/DROP DATABASE...)
LOG_EVENT_ARTIFICIAL_F = 0x20
LOG_EVENT_IGNORABLE_F = 0x80

BINLOG_MAGIC = b"\xfebin"
HEADER_LEN = 19
CHECKSUM_LEN = 4
#: The largest event read: max_allowed_packet's ceiling (1 GiB) and room for a header
#: (binlog/_rows_frame.h FRAME_MAX_EVENT says it again for the C walks: tests/binlog/
#: test_c_constants.py holds the two together).
MAX_EVENT_SIZE = (1 << 30) + 4096

# FORMAT_DESCRIPTION checksum_alg byte.
CHECKSUM_OFF = 0
CHECKSUM_CRC32 = 1
CHECKSUM_UNDEF = 255
