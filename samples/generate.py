#!/usr/bin/env python3
"""Regenerate the binlog sample corpus from a real MariaDB server.

    python samples/generate.py [--out DIR] [--case NAME ...] [--keep] [--no-check]
    python samples/generate.py --server docker:mariadb:10.0 [--case NAME ...]
    python samples/generate.py --add-server-info [--case NAME ...]

For every case (see CASES) a fresh server is started with the case's server options -
by default a private local ``mariadbd`` (tests/support/mariadb_server.py); with
``--server docker:IMAGE`` (or ``--docker IMAGE``) one service of docker/compose.yml through
testcontainers (tests/support/docker_server.py), output in ``samples/<flavor>-<x.y>/`` -
``samples/sql/<case>.sql`` is run statement by statement, and the following are written
to ``--out`` (default ``samples/mariadb-10.11``):

``<case>.binlog``            the binlog the case wrote (or ``<case>/`` with every file plus
                             ``mariadb-bin.index`` when the case spans several files)
(the SQL that made it stays in ``samples/sql/<case>.sql``, the one copy)
``<case>.events.txt``        ``SHOW BINLOG EVENTS`` of every stored file (server truth of
                             event positions and types), tab separated
``<case>.expected.json``     ground truth taken from the SERVER after every statement
                             (never from a parser); format in samples/README.md
``<case>.schema.sql``        only with ``--! dump-schema``: real ``mariadb-dump --no-data``
``<case>.schema-nomarkers.sql``  the same without the ``/* mariadb-5.3 */`` comments

SQL script syntax: statements end with ``;`` at the end of a line (quotes, backticks and
comments are honoured). Comment lines before a statement are dropped. Directive lines:

``--! restart``              clean shutdown (the current binlog ends with STOP_EVENT) and
                             start again on the same datadir (a new binlog file); the
                             session is re-initialised (time_zone, NAMES) - session
                             variables set by the script must be set again after it.
``--! set-global NAME=VALUE``  ``SET GLOBAL NAME = VALUE`` on the script's session (a step
                             with the new value); skipped, and recorded as skipped, when the
                             server has no such variable (mysql56_temporal_format on 10.0).
``--! if-variable NAME`` ... ``--! end-if``  the lines between run only when the server
                             has the global variable NAME (else listed in ``skipped``).
``--! dump-schema [DB ...]``  ``mariadb-dump --no-data --skip-dump-date --databases DB...``
                             (default: every non-system database) to ``<case>.schema.sql``
                             and the marker-free copy; recorded as ``schema_files`` and
                             ``schema_dump`` (not a step). One per case.
``--! start-binlog``         everything before it is setup: ``FLUSH BINARY LOGS`` and
                             ``PURGE BINARY LOGS TO`` the new file, so the stored binlog
                             starts here; the setup's steps go to ``setup_steps``, the
                             tables and rows at this point to ``binlog_start``.

The generator needs only PyMySQL and a local MariaDB server (or Docker + testcontainers);
it never imports the parser.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))       # corpus_readme beside it, also when loaded by path

import pymysql  # noqa: E402
from corpus_readme import event_counts, write_readme  # noqa: E402
from support.mariadb_server import MariaDBServer, find_tool, split_version  # noqa: E402

SQL_DIR = HERE / "sql"
DEFAULT_OUT = HERE / "mariadb-10.11"
SESSION_INIT = ["SET time_zone = '+00:00'", "SET NAMES utf8mb4"]
SYSTEM_DBS = ("mysql", "information_schema", "performance_schema", "sys")

HEX_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob",
             "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
             "multipolygon", "geometrycollection"}


@dataclass
class Case:
    description: str
    options: dict[str, Any] = field(default_factory=dict)
    #: the binlogs cannot be decoded without an external schema (legacy temporals):
    #: mariadb-binlog -v misreads them, so the generator does not run it as a check.
    legacy: bool = False
    #: oldest server version the script runs on (other servers skip the case)
    min_version: tuple[int, ...] | None = None


CASES: dict[str, Case] = {
    "types_full": Case(
        "Every MariaDB 10.11 column type family, one table each, with INSERT/UPDATE/DELETE, "
        "min/max/edge values and NULLs; TABLE_MAP carries full optional metadata "
        "(names, signedness, charsets, ENUM/SET labels, geometry types, PK).",
        {"binlog_row_metadata": "FULL"}, min_version=(10, 10)),
    "signedness": Case(
        "SIGNEDNESS metadata with YEAR columns between signed and unsigned integers, "
        "DECIMAL and FLOAT (MariaDB gives YEAR a bit, MySQL does not), BIT and ENUM in "
        "between; negative values after every YEAR. binlog_row_metadata=FULL.",
        {"binlog_row_metadata": "FULL"}, min_version=(10, 5)),
    "types_nometa": Case(
        "Numbers, dates/times, ASCII text, ENUM/SET, BIT, BLOB with the default "
        "binlog_row_metadata=NO_LOG: column names and signedness are not in the binlog.",
        {}),
    "row_image_minimal": Case(
        "binlog_row_image=MINIMAL: before images hold only the PK, after images only the "
        "changed columns; table with PK + BLOB + other columns, updates and deletes.",
        {"binlog_row_image": "MINIMAL", "binlog_row_metadata": "FULL"}),
    "row_image_noblob": Case(
        "binlog_row_image=NOBLOB: BLOB/TEXT columns are left out of the images unless "
        "changed; same table shape as row_image_minimal.",
        {"binlog_row_image": "NOBLOB", "binlog_row_metadata": "FULL"}),
    "compressed": Case(
        "log_bin_compress=ON (min_len 10): QUERY_COMPRESSED_EVENT for long DDL/queries and "
        "WRITE/UPDATE/DELETE_ROWS_COMPRESSED_EVENT_V1 for row events with long values.",
        {"log_bin_compress": "ON", "log_bin_compress_min_len": 10,
         "binlog_row_metadata": "FULL"}, min_version=(10, 2, 3)),
    "checksum_none": Case(
        "binlog_checksum=NONE: no CRC32 footer on any event (FDE checksum_alg = 0).",
        {"binlog_checksum": "NONE", "binlog_row_metadata": "FULL"}),
    "compressed_columns": Case(
        "MariaDB column compression: TEXT / VARCHAR(500) / BLOB COMPRESSED (binlog types "
        "BLOB_COMPRESSED 140 and VARCHAR_COMPRESSED 141), short (stored uncompressed) and "
        "long values.",
        {"binlog_row_metadata": "FULL"}, min_version=(10, 3, 2)),
    "events_misc": Case(
        "Non-row event kinds: INTVAR, RAND and USER_VAR (STATEMENT format), XA "
        "PREPARE/COMMIT/ROLLBACK, multi-statement transactions, multi-table UPDATE, a "
        "large INSERT split into several rows events, TRUNCATE and DDL, ROTATE (FLUSH LOGS) "
        "and a STOP event (server restart): several binlog files.",
        {"binlog_row_metadata": "FULL"}, min_version=(10, 5)),
    "legacy_temporal": Case(
        "mysql56_temporal_format=OFF when the tables were created: legacy TIMESTAMP/"
        "DATETIME/TIME type codes 7/12/11 with fractional bytes but no precision in "
        "TABLE_MAP; N = 0..6, INSERT/UPDATE/DELETE, edge values. Not decodable without an "
        "external schema. At the end the global is switched ON: a new table gets TIMESTAMP2, "
        "and an ALTER of tm_legacy converts ALL its columns to TIME2 (see tables_after).",
        {"mysql56_temporal_format": "OFF", "binlog_row_metadata": "FULL"}, legacy=True),
    "seed_tt_test2": Case(
        "The seed report's tables test.tt (TIMESTAMP(6) NOT NULL, VARCHAR(30), "
        "VARCHAR(621), utf8) and test.test2 (TIMESTAMP(2)), created with "
        "mysql56_temporal_format=OFF, default NO_LOG metadata, as on the reporter's server.",
        {"mysql56_temporal_format": "OFF"}, legacy=True),
    "temporal_cells": Case(
        "The seed's four cells, mysql56_temporal_format at CREATE time x at INSERT time "
        "(tables <create>_<insert>_ts/_dt/_tm): TIMESTAMP/DATETIME/TIME(N), N = 0..6, edge "
        "values (zero dates, 1000-01-01, 9999-12-31 23:59:59.999999, TIMESTAMP 1970/2038 "
        "limits, TIME +-838:59:59.999999, -00:00:00.5), NULLs, UPDATEs, DELETEs; the "
        "CREATE-time value alone decides the format (off_* legacy, on_* MySQL 5.6). "
        "binlog_row_metadata=FULL.",
        {"mysql56_temporal_format": "OFF", "binlog_row_metadata": "FULL"}, legacy=True),
    "temporal_alter": Case(
        "Legacy tables whose precision changes mid-binlog (ALTER ... MODIFY TIME(2)->TIME(5), "
        "DATETIME(6)->DATETIME(3), DATETIME->DATETIME(6) same size other encoding), then "
        "SET GLOBAL mysql56_temporal_format=ON + ALTER TABLE ... FORCE converting every "
        "temporal column to MySQL 5.6 format, then OFF + ALTER converting back; rows, "
        "updates and deletes before and after every change (see tables_after). "
        "binlog_row_metadata=FULL.",
        {"mysql56_temporal_format": "OFF", "binlog_row_metadata": "FULL"}, legacy=True),
    "temporal_predump": Case(
        "Legacy and MySQL-5.6-format tables (all N) and a seed-shaped tt created and filled "
        "BEFORE the stored binlog (setup_steps), a real mariadb-dump --no-data of them "
        "(schema_files; rows and metadata at the binlog start in binlog_start), then "
        "inserts, updates and deletes of pre-existing rows. Default binlog_row_metadata="
        "NO_LOG: names and legacy precisions come only from the schema dump.",
        {"mysql56_temporal_format": "OFF"}, legacy=True),
}


# --------------------------------------------------------------------------- SQL splitter

@dataclass
class Item:
    sql: str | None = None          # a statement (no trailing ';')
    directive: str | None = None    # e.g. "restart"
    line: int = 0


def split_sql(text: str) -> list[Item]:
    """Split a script into statements and ``--!`` directives.

    A statement ends at a ``;`` outside quotes/comments that is followed only by spaces up
    to the end of the line (or the end of the text). Comments before a statement's first
    token are dropped; comments inside a statement are kept.
    """
    items: list[Item] = []
    buf: list[str] = []
    i, n, line = 0, len(text), 1
    start_line = 1

    def blank() -> bool:
        return not "".join(buf).strip()

    while i < n:
        c = text[i]
        if blank():
            # between statements: directives and leading comments
            if c in " \t\r\n":
                if c == "\n":
                    line += 1
                i += 1
                buf.clear()
                continue
            if text.startswith("--!", i) or text.startswith("--", i) and (
                    i + 2 >= n or text[i + 2] in " \t\r\n") or c == "#":
                end = text.find("\n", i)
                end = n if end < 0 else end
                comment = text[i:end]
                if comment.startswith("--!"):
                    items.append(Item(directive=comment[3:].strip(), line=line))
                i = end
                continue
            start_line = line
        if c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:   # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            chunk = text[i:j + 1]
            line += chunk.count("\n")
            buf.append(chunk)
            i = j + 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            buf.append(text[i:j])
            i = j
            continue
        if c == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n")):
            j = text.find("\n", i)
            j = n if j < 0 else j
            buf.append(text[i:j])
            i = j
            continue
        if c == ";":
            m = re.match(r"[ \t\r]*(\n|$)", text[i + 1:])
            if m:
                items.append(Item(sql="".join(buf).strip(), line=start_line))
                buf.clear()
                i += 1
                continue
        if c == "\n":
            line += 1
        buf.append(c)
        i += 1
    if not blank():
        items.append(Item(sql="".join(buf).strip(), line=start_line))
    return items


# --------------------------------------------------------------------- server-side truth

def qi(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def render_kind(col: dict) -> str:
    dt = col["data_type"].lower()
    if dt == "bit":
        return "bit"
    if dt in HEX_TYPES or (col.get("charset") or "").lower() == "binary":
        return "hex"
    return "char"


def render_expr(col: dict) -> str:
    c = qi(col["name"])
    kind = col["render"]
    if kind == "hex":
        return f"LOWER(HEX({c}))"
    if kind == "bit":
        return f"CAST({c}+0 AS CHAR)"
    return f"CAST({c} AS CHAR)"


def legacy_rule_marker(data_type: str, column_type: str) -> bool | None:
    """10.5.1+: legacy (MariaDB 5.3 format) temporal columns carry /* mariadb-5.3 */."""
    return "mariadb-5.3" in column_type


def legacy_rule(version: str, has_mysql56_variable: bool):
    """How ``columns[].legacy_temporal`` is known on this server: from the
    ``/* mariadb-5.3 */`` marker (10.5.1+); every TIME/DATETIME/TIMESTAMP is legacy on a
    server without mysql56_temporal_format (< 10.1.2); unknown (null) in between."""
    if split_version(version) >= (10, 5, 1):
        return legacy_rule_marker
    temporal = ("time", "datetime", "timestamp")
    if not has_mysql56_variable:
        return lambda data_type, column_type: data_type.lower() in temporal
    return lambda data_type, column_type: None if data_type.lower() in temporal else False


class Observer:
    """Reads the server's view (tables, rows, GTIDs, positions) on its own connection,
    READ UNCOMMITTED so rows of the script's open (XA) transactions are visible."""

    def __init__(self, srv: MariaDBServer, legacy_rule: Any = None):
        self.srv = srv
        self.legacy_rule = legacy_rule or legacy_rule_marker
        self.conn = srv.connect()
        with self.conn.cursor() as cur:
            for s in SESSION_INIT:
                cur.execute(s)
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")

    def close(self) -> None:
        self.conn.close()

    def q(self, sql: str, args: Any = None) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def has_variable(self, name: str) -> bool:
        return bool(self.q("SELECT COUNT(*) FROM information_schema.GLOBAL_VARIABLES "
                           "WHERE VARIABLE_NAME = %s", (name.upper(),))[0][0])

    def gtid_binlog_pos(self) -> str:
        return self.q("SELECT @@GLOBAL.gtid_binlog_pos")[0][0] or ""

    def master_status(self) -> list:
        f, p = self.q("SHOW MASTER STATUS")[0][:2]
        return [f, int(p)]

    def tables(self) -> list[tuple[str, str]]:
        marks = ",".join(["%s"] * len(SYSTEM_DBS))
        return [(d, t) for d, t in self.q(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
            f"WHERE TABLE_SCHEMA NOT IN ({marks}) AND TABLE_TYPE = 'BASE TABLE' "
            "ORDER BY TABLE_SCHEMA, TABLE_NAME", SYSTEM_DBS)]

    def table_meta(self, db: str, tbl: str) -> dict:
        cols = []
        for (name, ordinal, data_type, column_type, charset, collation, dtp, nullable,
             num_prec, num_scale, char_len, octet_len) in self.q(
                "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, "
                "CHARACTER_SET_NAME, COLLATION_NAME, DATETIME_PRECISION, IS_NULLABLE, "
                "NUMERIC_PRECISION, NUMERIC_SCALE, CHARACTER_MAXIMUM_LENGTH, "
                "CHARACTER_OCTET_LENGTH FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                (db, tbl)):
            col = {"name": name, "ordinal": int(ordinal), "data_type": data_type,
                   "column_type": column_type, "charset": charset, "collation": collation,
                   "datetime_precision": None if dtp is None else int(dtp),
                   "nullable": nullable == "YES",
                   "numeric_precision": None if num_prec is None else int(num_prec),
                   "numeric_scale": None if num_scale is None else int(num_scale),
                   "character_maximum_length": None if char_len is None else int(char_len),
                   "character_octet_length": None if octet_len is None else int(octet_len),
                   "legacy_temporal": self.legacy_rule(data_type, column_type)}
            col["render"] = render_kind(col)
            cols.append(col)
        pk = [r[0] for r in self.q(
            "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
            "AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", (db, tbl))]
        create = self.q(f"SHOW CREATE TABLE {qi(db)}.{qi(tbl)}")[0][1]
        # the AUTO_INCREMENT=N table option changes with every insert: not schema
        create = re.sub(r" AUTO_INCREMENT=\d+", "", create)
        return {"columns": cols, "primary_key": pk, "create_table": create}

    def snapshot(self, db: str, tbl: str, meta: dict) -> list[list]:
        exprs = ", ".join(render_expr(c) for c in meta["columns"])
        if meta["primary_key"]:
            order = ", ".join(qi(c) for c in meta["primary_key"])
        else:
            order = ", ".join(str(i + 1) for i in range(len(meta["columns"])))
        rows = self.q(f"SELECT {exprs} FROM {qi(db)}.{qi(tbl)} ORDER BY {order}")
        out = []
        for row in rows:
            vals = []
            for v in row:
                if isinstance(v, (bytes, bytearray)):
                    v = v.decode("utf-8")
                elif v is not None and not isinstance(v, str):
                    v = str(v)
                vals.append(v)
            out.append(vals)
        return out


# ----------------------------------------------------------------------------- the runner

class CaseSkipped(Exception):
    """The case does not apply to this server (too old, or no such feature)."""


#: Global variables recorded in ``expected.json`` ``server.variables`` when the server has
#: them (the values in force when the script starts; ``--! set-global`` steps record changes).
SERVER_VARIABLES = (
    "server_id", "binlog_format", "binlog_row_image", "binlog_row_metadata",
    "binlog_checksum", "binlog_annotate_row_events", "log_bin_compress",
    "log_bin_compress_min_len", "mysql56_temporal_format", "explicit_defaults_for_timestamp",
    "sql_mode", "gtid_domain_id", "character_set_server", "collation_server",
    "version_comment")

MARKER_RE = re.compile(r" /\* mariadb-5\.3 \*/")


def series_dir(version: str) -> str:
    """``10.0.38-MariaDB-log`` -> ``mariadb-10.0``; ``8.0.36`` -> ``mysql-8.0``."""
    head = split_version(version)
    flavor = "mariadb" if "mariadb" in version.lower() else "mysql"
    return f"{flavor}-{head[0]}.{head[1]}"


class CaseRunner:
    def __init__(self, name: str, case: Case, out: Path | None, keep: bool = False,
                 server_spec: str = "local"):
        self.name, self.case, self.out, self.keep = name, case, out, keep
        self.server_spec = server_spec
        self.sql_path = SQL_DIR / f"{name}.sql"

    def make_server(self):
        if self.server_spec == "local":
            return MariaDBServer(self.case.options, keep=self.keep)
        from support.docker_server import DockerServer
        return DockerServer(self.server_spec, self.case.options, keep=self.keep)

    def _session(self) -> pymysql.connections.Connection:
        conn = self.srv.connect()
        with conn.cursor() as cur:
            for s in SESSION_INIT:
                cur.execute(s)
        return conn

    def run(self) -> dict:
        """Run the case; raises CaseSkipped when it does not apply to the server."""
        text = self.sql_path.read_text(encoding="utf-8")
        items = split_sql(text)
        self.srv = self.make_server()
        with self.srv:
            version = self.srv.version
            if self.case.min_version and split_version(version) < self.case.min_version:
                raise CaseSkipped(f"needs server >= {'.'.join(map(str, self.case.min_version))}"
                                  f", this is {version}")
            if self.out is None:
                self.out = HERE / series_dir(version)
            return self._run(items, text)

    # -- server facts ------------------------------------------------------------------

    def _server_info(self, obs: "Observer") -> dict:
        rows = obs.q("SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM "
                     "information_schema.GLOBAL_VARIABLES WHERE LOWER(VARIABLE_NAME) IN ("
                     + ",".join(["%s"] * len(SERVER_VARIABLES)) + ")", SERVER_VARIABLES)
        found = dict(rows)
        info: dict[str, Any] = {
            "version": self.srv.version,
            "source": self.srv.source,
            "variables": {k: found[k] for k in SERVER_VARIABLES if k in found},
        }
        unsupported = getattr(self.srv, "unsupported_options", None)
        if unsupported:
            info["unsupported_options"] = dict(unsupported)
        return info

    # -- the script --------------------------------------------------------------------

    def _run(self, items: list[Item], text: str) -> dict:
        srv = self.srv
        conn = self._session()
        obs = Observer(srv)
        server_info = self._server_info(obs)
        obs.legacy_rule = legacy_rule(srv.version, "mysql56_temporal_format"
                                      in server_info["variables"] or obs.has_variable(
                                          "mysql56_temporal_format"))
        tables_meta: dict[str, dict] = {}
        data: dict[str, list] = {}
        captured = not any(i.directive and i.directive.split()[0] == "start-binlog"
                           for i in items)
        setup_steps: list[dict] = []
        steps: list[dict] = setup_steps if not captured else []
        main_steps: list[dict] = [] if not captured else steps
        conditions: list[bool] = []            # --! if-variable stack
        skipped: list[dict] = []
        schema_files: list[str] = []
        binlog_start: dict | None = None
        schema_dump: dict | None = None
        try:
            for item in items:
                active = all(conditions)
                if item.directive:
                    kind, _, arg = item.directive.partition(" ")
                    arg = arg.strip()
                    where = f"{self.sql_path}:{item.line}"
                    if kind == "if-variable":
                        conditions.append(active and obs.has_variable(arg))
                        if active and not conditions[-1]:
                            skipped.append({"line": item.line, "sql": "--! " + item.directive,
                                            "reason": f"no variable {arg}"})
                        continue
                    if kind == "end-if":
                        if not conditions:
                            raise SystemExit(f"{where}: --! end-if without --! if-variable")
                        conditions.pop()
                        continue
                    if not active:
                        skipped.append({"line": item.line, "sql": "--! " + item.directive,
                                        "reason": "inside a false --! if-variable"})
                        continue
                    if kind == "restart":
                        conn.close()
                        obs.close()
                        srv.restart()
                        conn = self._session()
                        obs = Observer(srv, obs.legacy_rule)
                        steps.append({"sql": "--! restart", "directive": "restart",
                                      "gtid": "", "binlog_pos": obs.master_status(),
                                      "snapshot": {}})
                    elif kind == "set-global":
                        steps.append(self._set_global(conn, obs, arg, where))
                    elif kind == "dump-schema":
                        if schema_files:
                            raise SystemExit(f"{where}: one --! dump-schema per case")
                        dbs = arg.split() or sorted({d for d, _ in obs.tables()})
                        schema_files = self._dump_schema(dbs)
                        # not a step: steps stay what the binlog holds
                        schema_dump = {"databases": dbs, "binlog_pos": obs.master_status(),
                                       "gtid_binlog_pos": obs.gtid_binlog_pos()}
                    elif kind == "start-binlog":
                        if steps is main_steps:
                            raise SystemExit(f"{where}: one --! start-binlog per case")
                        srv.flush_logs()
                        first = obs.master_status()[0]
                        obs.q(f"PURGE BINARY LOGS TO '{first}'")
                        binlog_start = {
                            "binlog_pos": obs.master_status(),
                            "gtid_binlog_pos": obs.gtid_binlog_pos(),
                            "tables": json.loads(json.dumps(tables_meta)),
                            "snapshot": {k: v for k, v in data.items()
                                         if tables_meta.get(k) is not None},
                        }
                        steps = main_steps
                    else:
                        raise SystemExit(f"{where}: unknown directive --! {item.directive}")
                    continue
                if not active:
                    skipped.append({"line": item.line, "sql": item.sql,
                                    "reason": "inside a false --! if-variable"})
                    continue
                steps.append(self._statement(conn, obs, item, tables_meta, data))
            if conditions:
                raise SystemExit(f"{self.sql_path}: --! if-variable without --! end-if")
            # close the last file so every stored file ends with ROTATE (or STOP)
            srv.flush_logs()
            names = srv.binlog_names()[:-1]
            version = srv.version
            events = []
            for nm in names:
                for row in obs.q(f"SHOW BINLOG EVENTS IN '{nm}'"):
                    events.append(row)
        finally:
            conn.close()
            obs.close()
        extra: dict[str, Any] = {}
        if schema_files:
            extra["schema_files"] = schema_files
            extra["schema_dump"] = schema_dump
        if binlog_start is not None:
            extra["binlog_start"] = binlog_start
        return self._store(names, version, tables_meta, main_steps, events,
                           server_info, extra, setup_steps if binlog_start else None, skipped)

    def _set_global(self, conn, obs: "Observer", arg: str, where: str) -> dict:
        m = re.fullmatch(r"(\w+)\s*=\s*(.+)", arg)
        if not m:
            raise SystemExit(f"{where}: --! set-global NAME=VALUE, got {arg!r}")
        name, value = m.group(1).lower(), m.group(2).strip()
        step: dict[str, Any] = {"sql": f"--! set-global {arg}", "directive": "set-global",
                                "gtid": ""}
        if obs.has_variable(name):
            with conn.cursor() as cur:
                try:
                    cur.execute(f"SET GLOBAL {name} = {value}")
                except pymysql.err.MySQLError as exc:
                    raise SystemExit(f"{where}: {exc}") from exc
            # the text form SHOW GLOBAL VARIABLES gives (ON/OFF, not 1/0)
            step["value"] = obs.q("SELECT VARIABLE_VALUE FROM information_schema."
                                  "GLOBAL_VARIABLES WHERE VARIABLE_NAME = %s",
                                  (name.upper(),))[0][0]
        else:
            step["skipped"] = f"this server has no variable {name}"
        step["binlog_pos"] = obs.master_status()
        step["snapshot"] = {}
        return step

    def _dump_schema(self, dbs: list[str]) -> list[str]:
        self.out.mkdir(parents=True, exist_ok=True)
        text = self.srv.dump_schema(dbs)
        full = f"{self.name}.schema.sql"
        (self.out / full).write_text(text, encoding="utf-8")
        files = [full]
        if MARKER_RE.search(text):
            bare = f"{self.name}.schema-nomarkers.sql"
            (self.out / bare).write_text(MARKER_RE.sub("", text), encoding="utf-8")
            files.append(bare)
        return files

    def _statement(self, conn, obs: "Observer", item: Item, tables_meta: dict,
                   data: dict) -> dict:
        before = obs.gtid_binlog_pos()
        try:
            with conn.cursor() as cur:
                cur.execute(item.sql)
                if cur.description:
                    cur.fetchall()
        except pymysql.err.MySQLError as exc:
            raise SystemExit(f"{self.sql_path}:{item.line}: {exc}\n{item.sql[:500]}") from exc
        after = obs.gtid_binlog_pos()
        gtid = ""
        if after != before:
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT @@last_gtid")
                    gtid = cur.fetchone()[0] or ""
            except pymysql.err.MySQLError:   # e.g. XA IDLE/PREPARED state
                gtid = ""
            if not gtid or gtid not in after.split(","):
                gtid = after  # single writer, single domain: the same GTID
        step: dict[str, Any] = {"sql": item.sql, "gtid": gtid,
                                "binlog_pos": obs.master_status()}
        # which tables exist now, did their shape or content change?
        now = {f"{d}.{t}": (d, t) for d, t in obs.tables()}
        changed_meta: dict[str, Any] = {}
        for key in list(tables_meta):
            if key not in now and tables_meta[key] is not None and key in data:
                changed_meta[key] = None        # dropped
                data.pop(key, None)
        snapshot: dict[str, list] = {}
        for key, (d, t) in now.items():
            meta = obs.table_meta(d, t)
            if tables_meta.get(key) != meta:
                changed_meta[key] = meta
                tables_meta[key] = meta
            rows = obs.snapshot(d, t, meta)
            named = re.search(r"(?<![\w$])`?" + re.escape(t) + r"`?(?![\w$])",
                              item.sql, re.I) is not None
            if named or data.get(key) != rows or key in changed_meta:
                snapshot[key] = rows
            data[key] = rows
        step["snapshot"] = snapshot
        if changed_meta:
            step["tables_after"] = changed_meta
        return step

    def _store(self, names, version, tables_meta, steps, events, server_info,
               extra, setup_steps, skipped) -> dict:
        out = self.out
        out.mkdir(parents=True, exist_ok=True)
        for old in [out / f"{self.name}.binlog", out / self.name]:
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        if "schema_files" not in extra:
            for old in [out / f"{self.name}.schema.sql",
                        out / f"{self.name}.schema-nomarkers.sql"]:
                if old.exists():
                    old.unlink()
        if len(names) == 1:
            self.srv.copy_binlog(names[0], out / f"{self.name}.binlog")
            paths = [f"{self.name}.binlog"]
        else:
            d = out / self.name
            d.mkdir()
            for nm in names:
                self.srv.copy_binlog(nm, d / nm)
            (d / f"{self.srv.binlog_basename}.index").write_text(
                "".join(nm + "\n" for nm in names))
            paths = [f"{self.name}/{nm}" for nm in names]
        with open(out / f"{self.name}.events.txt", "w", encoding="utf-8") as f:
            f.write("Log_name\tPos\tEvent_type\tServer_id\tEnd_log_pos\tInfo\n")
            for row in events:
                info = (row[5] or "").replace("\\", "\\\\").replace("\n", "\\n").replace(
                    "\t", "\\t")
                f.write("\t".join(str(x) for x in row[:5]) + "\t" + info + "\n")
        expected = {
            "server_version": version,
            "case": self.name,
            "description": self.case.description,
            "options": {k: v for k, v in self.srv.options.items()},
            "server": server_info,
            "session_init": SESSION_INIT,
            "binlog": names,
            "binlog_paths": paths,
            **{k: extra[k] for k in ("schema_files", "schema_dump") if k in extra},
            "tables": tables_meta,
            **{k: extra[k] for k in ("binlog_start",) if k in extra},
            **({"setup_steps": setup_steps} if setup_steps is not None else {}),
            "steps": steps,
            **({"skipped": skipped} if skipped else {}),
        }
        (out / f"{self.name}.expected.json").write_text(dump_json(expected), encoding="utf-8")
        return expected


def dump_json(obj: Any) -> str:
    """Indented JSON, but each snapshot row on one line (keeps big cases readable)."""
    rows: list[str] = []

    def one_line(r: Any) -> str:
        rows.append(json.dumps(r, ensure_ascii=False))
        return f"\x00ROW{len(rows) - 1}\x00"

    def scalar(o: Any) -> bool:
        return o is None or isinstance(o, (str, int, float, bool))

    def mark(o: Any, key: str = "") -> Any:
        if key == "snapshot":
            return {k: [one_line(r) for r in v] for k, v in o.items()}
        if key == "columns":
            return [one_line(c) for c in o]
        if isinstance(o, dict):
            return {k: mark(v, k) for k, v in o.items()}
        if isinstance(o, list):
            if o and all(scalar(v) for v in o):
                return one_line(o)
            return [mark(v) for v in o]
        return o

    text = json.dumps(mark(obj), indent=1, ensure_ascii=False)
    text = re.sub(r'"\\u0000ROW(\d+)\\u0000"', lambda m: rows[int(m.group(1))], text)
    return text + "\n"


# ------------------------------------------------------- checks (the README: corpus_readme)

def check_with_mariadb_binlog(out: Path, expected: dict) -> str:
    """Decode with ``mariadb-binlog -v`` to be sure the server's own tool reads it."""
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    files = [str(out / p) for p in expected["binlog_paths"]]
    proc = subprocess.run([tool, "--no-defaults", "-v", "--base64-output=decode-rows", *files],
                          capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        at = re.findall(r"^# at (\d+)$", proc.stdout, re.M)
        return (f"mariadb-binlog failed ({proc.returncode})"
                + (f" after offset {at[-1]}" if at else "") + f": {proc.stderr[-800:]}")
    return ""


def add_server_info(name: str, case: Case, out: Path, keep: bool = False) -> str:
    """Add ``server`` to an existing expected.json without re-running the case: a fresh
    server with the case's options tells the values in force at the start of a run.
    Everything else in the file stays byte for byte."""
    path = out / f"{name}.expected.json"
    if not path.exists():
        return "no expected.json"
    text = path.read_text(encoding="utf-8")
    exp = json.loads(text)
    if "server" in exp:
        return "has server already"
    runner = CaseRunner(name, case, out, keep=keep)
    runner.srv = runner.make_server()
    with runner.srv:
        if runner.srv.version != exp["server_version"]:
            raise SystemExit(f"{name}: recorded by {exp['server_version']}, this server is "
                             f"{runner.srv.version}: regenerate the case instead")
        obs = Observer(runner.srv)
        try:
            info = runner._server_info(obs)
        finally:
            obs.close()
    new: dict[str, Any] = {}
    for k, v in exp.items():
        new[k] = v
        if k == "options":
            new["server"] = info
    if dump_json(exp) != text:
        raise SystemExit(f"{path}: not in the generator's JSON layout, not touched")
    path.write_text(dump_json(new), encoding="utf-8")
    return "server info added"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="output directory (default: samples/mariadb-10.11 for the local "
                         "server, samples/<flavor>-<major.minor> of the server otherwise)")
    ap.add_argument("--case", action="append", choices=sorted(CASES),
                    help="only this case (repeatable); default: all")
    ap.add_argument("--server", default="local",
                    help="'local' (default: a private mariadbd from this machine) or "
                         "'docker:IMAGE' / 'docker:SERVICE' of docker/compose.yml, e.g. "
                         "docker:mariadb:10.0 (needs a Docker engine and testcontainers)")
    ap.add_argument("--docker", metavar="IMAGE",
                    help="same as --server docker:IMAGE")
    ap.add_argument("--keep", action="store_true", help="keep the servers' temp dirs")
    ap.add_argument("--no-check", action="store_true",
                    help="do not decode the results with mariadb-binlog")
    ap.add_argument("--add-server-info", action="store_true",
                    help="only add the 'server' key to existing expected.json files "
                         "(no case is re-run; the binlogs stay as they are)")
    args = ap.parse_args(argv)
    spec = f"docker:{args.docker}" if args.docker else args.server
    if spec != "local":
        if not spec.startswith("docker:"):
            ap.error(f"--server {spec!r}: use 'local' or 'docker:IMAGE'")
        from support.docker_server import DockerServerError, check_docker, resolve_service
        try:
            resolve_service(spec)
            check_docker()
        except DockerServerError as exc:
            print(f"generate.py: {spec}: {exc}", file=sys.stderr)
            return 2
    out = args.out or (DEFAULT_OUT if spec == "local" else None)
    names = args.case or list(CASES)
    if args.add_server_info:
        if spec != "local":
            ap.error("--add-server-info works with the local server only")
        for name in names:
            print(f"{name}: {add_server_info(name, CASES[name], out, keep=args.keep)}")
        return 0
    failed = 0
    for name in names:
        case = CASES[name]
        runner = CaseRunner(name, case, out, keep=args.keep, server_spec=spec)
        try:
            exp = runner.run()
        except CaseSkipped as exc:
            print(f"{name}: skipped ({exc})")
            continue
        out = runner.out
        msg = note = ""
        if not args.no_check:
            msg = check_with_mariadb_binlog(out, exp)
            if case.legacy and msg:
                # expected: it misreads legacy hires columns (see samples/README.md)
                note, msg = msg.splitlines()[0], ""
        counts = event_counts(out, name)
        print(f"{name}: {len(exp['steps'])} steps, files {exp['binlog']}, "
              f"{sum(counts.values())} events"
              + (f"  (legacy, as expected {note})" if note else "")
              + (f"  CHECK FAILED: {msg}" if msg else ""))
        failed += bool(msg)
    if out is not None:
        write_readme(out, CASES, HERE / "README.md" if out.resolve() == DEFAULT_OUT else out / "README.md")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
