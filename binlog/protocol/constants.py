"""The numbers of the MySQL/MariaDB client/server protocol that both sides use: the
client side (``client_side``: what a client or replica sends and parses; ``sources/``
speaks it) and the server side (``server_side``: what ``binlog serve`` sends and parses).

Sources: include/mysql_com.h (capabilities, commands, status flags), include/mysqld_error.h
and include/errmsg.h (error codes), sql/log_event.h (MariaDB replica capabilities),
sql/sql_repl.cc and include/mysql.h (COM_BINLOG_DUMP flags), sql/semisync.h (semi-sync).
"""
from __future__ import annotations

# -- capability flags (include/mysql_com.h) -------------------------------------------
CLIENT_LONG_PASSWORD = 1
CLIENT_LONG_FLAG = 4
CLIENT_CONNECT_WITH_DB = 8
CLIENT_PROTOCOL_41 = 0x200
CLIENT_SSL = 0x800
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_MULTI_RESULTS = 0x20000
CLIENT_PLUGIN_AUTH = 0x80000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000
CLIENT_DEPRECATE_EOF = 0x1000000

# -- server status flags (include/mysql_com.h SERVER_STATUS_*) -------------------------
SERVER_STATUS_AUTOCOMMIT = 2
SERVER_MORE_RESULTS_EXISTS = 8

UTF8MB4_GENERAL_CI = 45
NATIVE_PASSWORD = "mysql_native_password"

# -- commands (include/mysql_com.h enum_server_command) -------------------------------
COM_QUIT = 0x01
COM_INIT_DB = 0x02
COM_QUERY = 0x03
COM_PING = 0x0E
COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15

# -- the first byte of a reply payload -------------------------------------------------
OK, EOF, ERR, MORE_DATA, SWITCH = 0x00, 0xFE, 0xFF, 0x01, 0xFE
NULL_VALUE = 0xFB               # a NULL in a text row; also LOCAL INFILE's request

# -- COM_BINLOG_DUMP flags (sql/sql_repl.cc mysql_binlog_send) ------------------------
BINLOG_DUMP_NON_BLOCK = 1               # EOF at the end of the last binlog, not a wait
BINLOG_SEND_ANNOTATE_ROWS_EVENT = 2     # without it ANNOTATE_ROWS is left out

# -- @mariadb_slave_capability (sql/log_event.h MARIA_SLAVE_CAPABILITY_*) ------------
MARIA_SLAVE_CAPABILITY_ANNOTATE = 1
MARIA_SLAVE_CAPABILITY_TOLERATE_HOLES = 2
MARIA_SLAVE_CAPABILITY_BINLOG_CHECKPOINT = 3
MARIA_SLAVE_CAPABILITY_GTID = 4

# -- semi-sync (sql/semisync.h) --------------------------------------------------------
SEMI_SYNC_MAGIC = 0xEF          # k_packet_magic_num
SEMI_SYNC_NEED_ACK = 0x01       # k_packet_flag_sync

# -- server errors (include/mysqld_error.h) -------------------------------------------
ER_CON_COUNT_ERROR = 1040
ER_DBACCESS_DENIED_ERROR = 1044
ER_ACCESS_DENIED_ERROR = 1045
ER_UNKNOWN_COM_ERROR = 1047
ER_SERVER_SHUTDOWN = 1053
ER_PARSE_ERROR = 1064
ER_NO_SUCH_THREAD = 1094
ER_TABLEACCESS_DENIED_ERROR = 1142
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_SPECIFIC_ACCESS_DENIED_ERROR = 1227
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
ER_CONNECTION_KILLED = 1927
ER_ACCESS_DENIED_NO_PASSWORD_ERROR = 1698
#: MariaDB's GTID position errors (1945 ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG ...
#: 1955 ER_GTID_START_FROM_BINLOG_HOLE)
ER_GTID_ERRORS = frozenset({1945, 1947, 1948, 1950, 1951, 1955})
#: A login refused or a privilege missing.
ER_ACCESS_DENIED = frozenset({ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR,
                              ER_TABLEACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR,
                              ER_ACCESS_DENIED_NO_PASSWORD_ERROR})
#: A connection that failed or went away: the server's shutdown and kill, and the client
#: codes of include/errmsg.h (can't connect, gone away, lost, ...).
CONNECTION_ERRORS = frozenset({ER_SERVER_SHUTDOWN, ER_CONNECTION_KILLED, 2002, 2003, 2006,
                               2013, 2055})
