"""Answers to what replicas and CDC clients ask before the dump, in a table of patterns.

Read from what each client sends: the MariaDB replica (sql/slave.cc
get_master_version_and_clock, request_dump), ``mariadb-binlog --read-from-remote-server``
(client/mysqlbinlog.cc), python-mysql-replication (binlogstream.py), go-mysql
(replication/binlogsyncer.go), mysql-binlog-connector-java (BinaryLogClient.java), Canal
(MysqlConnection.java): ``SELECT UNIX_TIMESTAMP()``, ``SELECT @@x``, ``SHOW [GLOBAL]
VARIABLES LIKE 'x'``, ``SHOW MASTER STATUS``, ``SHOW BINARY LOGS``, ``SELECT VERSION()``,
``SELECT binlog_gtid_pos(...)``, ``SET @x = ...`` (kept per session: the dump reads
@master_binlog_checksum, @mariadb_slave_capability, @master_heartbeat_period,
@slave_connect_state...).  Anything else is refused with an error the client shows, and
logged, so a new client's needs are seen.

Every answer is computed from the served binlogs (positions, sizes, GTIDs in their own
coordinates) and the serve options; nothing a client sends is executed.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..protocol import constants as pc, server_side as s


@dataclass
class ServeState:
    """What the answers need: the served binlogs' facts (refreshed by the caller)."""
    server_id: int
    version: str
    checksum: bool
    files: list[tuple[str, int]]                        # (name, size of whole events)
    gtid_state: dict[int, tuple[int, int]]              # domain -> (server id, seq_no)
    gtid_pos_at: Callable[[str, int], str] = lambda name, pos: ""
    replicas: list[tuple] = field(default_factory=list)
    clients: list[tuple] = field(default_factory=list)     # (id, user, host, command, file, pos, seconds)
    full_metadata: bool = False         # the TABLE_MAPs carry binlog_row_metadata=FULL's metadata
    status: Callable[[], str] = lambda: "{}"            # serve/status.py's object, as JSON
    max_clients: int = 64

    def behind(self, file: str, pos: int) -> int:
        """Bytes of the served binlogs after ``file``:``pos``."""
        names = [n for n, _ in self.files]
        if file not in names:
            return 0
        i = names.index(file)
        return max(self.files[i][1] - pos, 0) + sum(size - 4 for _, size in self.files[i + 1:])

    @property
    def gtid_text(self) -> str:
        return ",".join(f"{d}-{srv}-{seq}" for d, (srv, seq) in sorted(self.gtid_state.items()))

    def variables(self) -> dict[str, str]:
        last = self.files[-1] if self.files else ("", 4)
        return {
            "server_id": str(self.server_id), "version": self.version,
            "version_comment": "binlog serve", "binlog_checksum": "CRC32" if self.checksum else "NONE",
            "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL" if self.full_metadata else "NO_LOG",
            "log_bin": "ON", "log_slave_updates": "ON", "gtid_domain_id": "0",
            "gtid_binlog_pos": self.gtid_text, "gtid_current_pos": self.gtid_text,
            "gtid_binlog_state": self.gtid_text, "gtid_slave_pos": "", "gtid_strict_mode": "OFF",
            "gtid_mode": "OFF", "server_uuid": "", "binlog_gtid_index": "OFF",
            "max_allowed_packet": "1073741824", "net_write_timeout": "60", "net_read_timeout": "30",
            "wait_timeout": "28800", "interactive_timeout": "28800", "time_zone": "SYSTEM",
            "system_time_zone": "UTC", "lower_case_table_names": "0", "sql_mode": "",
            "character_set_server": "utf8mb4", "collation_server": "utf8mb4_general_ci",
            "character_set_client": "utf8mb4", "character_set_results": "utf8mb4",
            "character_set_connection": "utf8mb4", "collation_connection": "utf8mb4_general_ci",
            "autocommit": "1", "tx_isolation": "REPEATABLE-READ", "transaction_isolation": "REPEATABLE-READ",
            "rpl_semi_sync_master_enabled": "OFF", "server_id_bits": "32",
            "binlog_file": last[0], "hostname": "binlog-serve", "timestamp": f"{time.time():.6f}",
            "max_connections": str(self.max_clients),
        }


Answer = list[bytes]


class Answers:
    """One client's session: its user variables and the answer to each query."""

    def __init__(self, state: ServeState, user: str = ""):
        self.state = state
        self.user = user            # the --users account the client logged in with
        self.user_vars: dict[str, str | None] = {}
        self.table: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Answer]]] = [
            (re.compile(r"SET\s+(.*)", re.I | re.S), self._set),
            (re.compile(r"SELECT\s+UNIX_TIMESTAMP\(\)\s*", re.I), self._unix_timestamp),
            (re.compile(r"SELECT\s+VERSION\(\)\s*(?:AS\s+\w+\s*)?", re.I), self._version),
            (re.compile(r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES\s+LIKE\s+'([^']*)'\s*", re.I), self._show_variables),
            (re.compile(r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES\s*()", re.I), self._show_variables),
            (re.compile(r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES\s+WHERE\s+Variable_name\s+IN\s*\(([^)]*)\)\s*",
                        re.I), self._variables_in),
            (re.compile(r"SHOW\s+(?:MASTER|BINLOG)\s+STATUS\s*", re.I), self._master_status),
            (re.compile(r"SHOW\s+(?:BINARY|MASTER)\s+LOGS\s*", re.I), self._binary_logs),
            (re.compile(r"SHOW\s+(?:SLAVE|REPLICA)\s+HOSTS\s*", re.I), self._replica_hosts),
            (re.compile(r"SHOW\s+(?:FULL\s+)?PROCESSLIST\s*", re.I), self._processlist),
            (re.compile(r"SHOW\s+BINLOG\s+SERVE\s+STATUS\s*", re.I), self._serve_status),
            (re.compile(_OWN_GRANTS, re.I), self._grants),
            (re.compile(_UTC_OFFSET, re.I), self._utc_offset),
            (re.compile(r"SELECT\s+binlog_gtid_pos\(\s*'([^']*)'\s*,\s*(\d+)\s*\)\s*", re.I), self._gtid_pos),
            (re.compile(r"SELECT\s+(.+?)\s*(?:LIMIT\s+1\s*)?", re.I | re.S), self._select_values),
        ]

    def answer(self, sql: str) -> Answer:
        text = statement_of(sql)
        for pattern, handler in self.table:
            match = pattern.fullmatch(text)
            if match:
                return handler(match)
        return [s.error(pc.ER_PARSE_ERROR, "binlog serve answers replication queries only")]

    # -- handlers -----------------------------------------------------------------------
    def _set(self, match: re.Match[str]) -> Answer:
        if re.match(r"(NAMES|CHARACTER\s+SET|CHARSET|(SESSION\s+|GLOBAL\s+)?TRANSACTION)\b",
                    match.group(1), re.I):
            return [s.ok()]         # the connection's charset, isolation: nothing served changes
        for item in _split_commas(match.group(1)):
            if re.match(r"(NAMES|CHARACTER\s+SET|CHARSET)\b", item, re.I):
                continue    # JDBC's MariaDB driver: "set sql_mode=...,time_zone='+00:00',NAMES utf8mb4"
            name, eq, value = item.partition("=")
            name = name.strip()
            if not eq:
                return [s.error(pc.ER_PARSE_ERROR, "SET: expected name = value")]
            if name.startswith("@") and not name.startswith("@@"):
                self.user_vars[name[1:].lower()] = self._value(value.strip())
            # session and global variables (SET NAMES, @@session.x, wait_timeout...) change
            # nothing served: accepted
        return [s.ok()]

    def _value(self, text: str) -> str | None:
        if text.upper() == "NULL":
            return None
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return text[1:-1].replace("\\'", "'").replace("''", "'")
        ref = re.fullmatch(r"@@(?:global\.|session\.)?(\w+)", text, re.I)
        if ref:
            return self.state.variables().get(ref.group(1).lower())
        return text

    def _unix_timestamp(self, match) -> Answer:
        return s.result_set(["UNIX_TIMESTAMP()"], [(int(time.time()),)], numeric=frozenset({0}))

    def _utc_offset(self, match: re.Match[str]) -> Answer:
        """TiDB DM's upstream time zone (pingcap/tidb util/dbutil GetTimeZoneOffset, from
        dm/syncer/util.go str2TimezoneOrFromDB), without an upstream to ask: serve's zone,
        UTC (system_time_zone)."""
        return s.result_set([match.group("name") or match.group("expr")], [("00:00:00",)])

    def _version(self, match) -> Answer:
        return s.result_set(["VERSION()"], [(self.state.version,)])

    def _show_variables(self, match: re.Match[str]) -> Answer:
        """``SHOW VARIABLES LIKE 'x'``, or every variable without LIKE (as Debezium's
        MariaDB connector reads them at start)."""
        pattern = match.group(1).lower() or "%"
        like = re.compile(re.escape(pattern).replace("%", ".*").replace("_", "."))
        rows = [(k, v) for k, v in sorted(self.state.variables().items()) if like.fullmatch(k)]
        return s.result_set(["Variable_name", "Value"], rows)

    def _variables_in(self, match: re.Match[str]) -> Answer:
        """``SHOW VARIABLES WHERE Variable_name IN ('a', 'b')``."""
        names = {self._value(item.strip()) for item in _split_commas(match.group(1))}
        rows = [(k, v) for k, v in sorted(self.state.variables().items()) if k in names]
        return s.result_set(["Variable_name", "Value"], rows)

    def _master_status(self, match) -> Answer:
        rows = [(*self.state.files[-1], "", "")] if self.state.files else []
        return s.result_set(["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"], rows,
                            numeric=frozenset({1}))

    def _binary_logs(self, match) -> Answer:
        return s.result_set(["Log_name", "File_size"], list(self.state.files), numeric=frozenset({1}))

    def _replica_hosts(self, match) -> Answer:
        return s.result_set(["Server_id", "Host", "Port", "Master_id"], self.state.replicas)

    def _processlist(self, match) -> Answer:
        """Every client: what it does, where its dump is and how many bytes of the served
        binlogs it has still to read (its lag)."""
        rows = []
        for cid, user, host, command, file, pos, seconds in self.state.clients:
            state = f"at {file}:{pos}, {self.state.behind(file, pos)} bytes behind" if file else ""
            rows.append((cid, user, host, None, command, seconds, state, None))
        return s.result_set(["Id", "User", "Host", "db", "Command", "Time", "State", "Info"], rows,
                            numeric=frozenset({0, 5}))

    def _serve_status(self, match) -> Answer:
        """serve/status.py's object, as one JSON text (monitoring polls it)."""
        return s.result_set(["Status"], [(self.state.status(),)])

    def _grants(self, match) -> Answer:
        """The account's grants as the server shows them (sql/sql_acl.cc mysql_show_grants),
        without a password hash: what a replication client needs, the dump (REPLICATION
        SLAVE) and SHOW MASTER STATUS / BINARY LOGS (REPLICATION CLIENT, BINLOG MONITOR
        since MariaDB 10.5, which TiDB DM's precheck cannot parse: dm/pkg/checker
        privilege.go parses the grants with TiDB's parser).  Nothing else is served."""
        quoted = self.user.replace("`", "``")
        return s.result_set([f"Grants for {self.user}@%"],
                            [(f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `{quoted}`@`%`",)])

    def _gtid_pos(self, match: re.Match[str]) -> Answer:
        name, pos = match.group(1), int(match.group(2))
        return s.result_set([f"binlog_gtid_pos('{name}',{pos})"], [(self.state.gtid_pos_at(name, pos),)])

    def _select_values(self, match: re.Match[str]) -> Answer:
        """``SELECT @@x, @y, 'literal', 1 [AS name]...``: one row."""
        names, values = [], []
        for item in _split_commas(match.group(1)):
            parts = re.split(r"\s+AS\s+", item, maxsplit=1, flags=re.I)
            expr = parts[0].strip()
            alias = parts[1].strip().strip("`'\"") if len(parts) > 1 else ""
            value = self._expression(expr)
            if value is _UNKNOWN:
                return [s.error(pc.ER_UNKNOWN_SYSTEM_VARIABLE, f"binlog serve does not answer {expr[:64]!r}")]
            names.append(alias or expr)
            values.append(value)
        return s.result_set(names, [tuple(values)])

    def _expression(self, expr: str):
        system = re.fullmatch(r"@@(?:global\.|session\.)?(\w+)", expr, re.I)
        if system:
            value = self.state.variables().get(system.group(1).lower(), _UNKNOWN)
            # a boolean reads ON/OFF in SHOW VARIABLES but 1/0 in SELECT @@x
            return {"ON": "1", "OFF": "0"}.get(value, value) if isinstance(value, str) else value
        user = re.fullmatch(r"@(\w+)", expr)
        if user:
            return self.user_vars.get(user.group(1).lower())
        if re.fullmatch(r"-?\d+", expr):
            return expr
        if len(expr) >= 2 and expr[0] == expr[-1] == "'":
            return expr[1:-1]
        if expr.upper() in ("VERSION()", "@@VERSION"):
            return self.state.version
        if expr.upper() == "UNIX_TIMESTAMP()":
            return str(int(time.time()))
        return _UNKNOWN


_UNKNOWN = object()
#: Asked of the upstream, when serve has one, before serve answers them itself: its UTC
#: offset (TiDB DM replays a DDL logged with time_zone SYSTEM in it: dm/pkg/binlog/event
#: util.go GetTimezoneByStatusVars).
UPSTREAM_FIRST: list[re.Pattern[str]] = []
_UTC_OFFSET = (r"SELECT\s+(?P<expr>CAST\(\s*TIMEDIFF\(\s*NOW\(\d?\)\s*,\s*UTC_TIMESTAMP\(\d?\)\s*\)\s+AS\s+TIME\s*\))"
               r"(?:\s+(?:AS\s+)?`?(?P<name>\w+)`?)?\s*")
UPSTREAM_FIRST.append(re.compile(_UTC_OFFSET + r";?\s*", re.I))
#: the client's own grants (DM's precheck, Debezium): an upstream account's are the upstream's
_OWN_GRANTS = r"SHOW\s+GRANTS(?:\s+FOR\s+CURRENT_USER(?:\s*\(\s*\))?)?\s*"
UPSTREAM_FIRST.append(re.compile(_OWN_GRANTS, re.I))
_SET_STATEMENT = re.compile(r"SET\s+STATEMENT\s", re.I)


def statement_of(sql: str) -> str:
    """The statement a query runs, without a leading comment, the trailing ``;`` and a
    ``SET STATEMENT var = value [, ...] FOR`` prefix (MariaDB 10.1.2+, sql/sql_yacc.yy
    ``SET STATEMENT_SYM ... FOR_SYM``): JDBC's MariaDB driver wraps every query that has a
    timeout in one (``max_statement_time``), and those variables change nothing served."""
    text = sql.strip().rstrip(";").strip()
    text = re.sub(r"^/\*.*?\*/\s*", "", text, flags=re.S)
    if not _SET_STATEMENT.match(text):
        return text
    for i, c in _top_level(text, "'\"`"):
        if c.isspace() and re.match(r"\sFOR\s", text[i:i + 5], re.I):
            return text[i + 4:].strip()
    return text


def _top_level(text: str, quotes: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of text outside quotes (any of ``quotes``,
    each closed by the same character) and parentheses, the quotes and parentheses
    themselves left out."""
    depth, quote = 0, ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in quotes:
            quote = c
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif depth == 0:
            yield i, c


def _split_commas(text: str) -> list[str]:
    """Comma-separated items, commas inside quotes or parentheses kept."""
    items, start = [], 0
    for i, c in _top_level(text, "'\""):
        if c == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]
