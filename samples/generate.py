#!/usr/bin/env python3
"""Regenerate the binlog sample corpus from a real MariaDB server.

    python samples/generate.py [--out samples/mariadb-10.11] [--case NAME ...] [--keep]

For every case (see CASES) a fresh ``mariadbd`` is started with the case's server options
(tests/support/mariadb_server.py), ``samples/sql/<case>.sql`` is run statement by statement,
and the following are written to ``--out``:

``<case>.binlog``            the binlog the case wrote (or ``<case>/`` with every file plus
                             ``mariadb-bin.index`` when the case spans several files)
``<case>.sql``               the SQL that made it (a copy)
``<case>.events.txt``        ``SHOW BINLOG EVENTS`` of every stored file (server truth of
                             event positions and types), tab separated
``<case>.expected.json``     ground truth taken from the SERVER after every statement
                             (never from a parser); format in samples/README.md

SQL script syntax: statements end with ``;`` at the end of a line (quotes, backticks and
comments are honoured). Comment lines before a statement are dropped. Directive lines:

``--! restart``              clean shutdown (the current binlog ends with STOP_EVENT) and
                             start again on the same datadir (a new binlog file); the
                             session is re-initialised (time_zone, NAMES) - session
                             variables set by the script must be set again after it.

The generator needs only PyMySQL and a local MariaDB server; it never imports the parser.
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

from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402

import pymysql  # noqa: E402

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


CASES: dict[str, Case] = {
    "types_full": Case(
        "Every MariaDB 10.11 column type family, one table each, with INSERT/UPDATE/DELETE, "
        "min/max/edge values and NULLs; TABLE_MAP carries full optional metadata "
        "(names, signedness, charsets, ENUM/SET labels, geometry types, PK).",
        {"binlog_row_metadata": "FULL"}),
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
         "binlog_row_metadata": "FULL"}),
    "checksum_none": Case(
        "binlog_checksum=NONE: no CRC32 footer on any event (FDE checksum_alg = 0).",
        {"binlog_checksum": "NONE", "binlog_row_metadata": "FULL"}),
    "compressed_columns": Case(
        "MariaDB column compression: TEXT / VARCHAR(500) / BLOB COMPRESSED (binlog types "
        "BLOB_COMPRESSED 140 and VARCHAR_COMPRESSED 141), short (stored uncompressed) and "
        "long values.",
        {"binlog_row_metadata": "FULL"}),
    "events_misc": Case(
        "Non-row event kinds: INTVAR, RAND and USER_VAR (STATEMENT format), XA "
        "PREPARE/COMMIT/ROLLBACK, multi-statement transactions, multi-table UPDATE, a "
        "large INSERT split into several rows events, TRUNCATE and DDL, ROTATE (FLUSH LOGS) "
        "and a STOP event (server restart): several binlog files.",
        {"binlog_row_metadata": "FULL"}),
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


class Observer:
    """Reads the server's view (tables, rows, GTIDs, positions) on its own connection,
    READ UNCOMMITTED so rows of the script's open (XA) transactions are visible."""

    def __init__(self, srv: MariaDBServer):
        self.srv = srv
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
                   "legacy_temporal": "mariadb-5.3" in column_type}
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

class CaseRunner:
    def __init__(self, name: str, case: Case, out: Path, keep: bool = False):
        self.name, self.case, self.out, self.keep = name, case, out, keep
        self.sql_path = SQL_DIR / f"{name}.sql"

    def _session(self) -> pymysql.connections.Connection:
        conn = self.srv.connect()
        with conn.cursor() as cur:
            for s in SESSION_INIT:
                cur.execute(s)
        return conn

    def run(self) -> dict:
        text = self.sql_path.read_text(encoding="utf-8")
        items = split_sql(text)
        self.srv = MariaDBServer(self.case.options, keep=self.keep)
        with self.srv:
            return self._run(items, text)

    def _run(self, items: list[Item], text: str) -> dict:
        srv = self.srv
        conn = self._session()
        obs = Observer(srv)
        tables_meta: dict[str, dict] = {}
        data: dict[str, list] = {}
        steps: list[dict] = []
        try:
            for item in items:
                if item.directive:
                    if item.directive != "restart":
                        raise SystemExit(f"{self.sql_path}:{item.line}: unknown directive "
                                         f"--! {item.directive}")
                    conn.close()
                    obs.close()
                    srv.restart()
                    conn = self._session()
                    obs = Observer(srv)
                    steps.append({"sql": "--! restart", "directive": "restart", "gtid": "",
                                  "binlog_pos": obs.master_status(), "snapshot": {}})
                    continue
                before = obs.gtid_binlog_pos()
                try:
                    with conn.cursor() as cur:
                        cur.execute(item.sql)
                        if cur.description:
                            cur.fetchall()
                except pymysql.err.MySQLError as exc:
                    raise SystemExit(f"{self.sql_path}:{item.line}: {exc}\n{item.sql[:500]}")
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
                steps.append(step)
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
        return self._store(names, version, tables_meta, steps, events, text)

    def _store(self, names, version, tables_meta, steps, events, text) -> dict:
        out = self.out
        out.mkdir(parents=True, exist_ok=True)
        for old in [out / f"{self.name}.binlog", out / self.name]:
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        if len(names) == 1:
            shutil.copyfile(self.srv.binlog_dir / names[0], out / f"{self.name}.binlog")
            paths = [f"{self.name}.binlog"]
        else:
            d = out / self.name
            d.mkdir()
            for nm in names:
                shutil.copyfile(self.srv.binlog_dir / nm, d / nm)
            (d / f"{self.srv.binlog_basename}.index").write_text(
                "".join(nm + "\n" for nm in names))
            paths = [f"{self.name}/{nm}" for nm in names]
        (out / f"{self.name}.sql").write_text(text, encoding="utf-8")
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
            "session_init": SESSION_INIT,
            "binlog": names,
            "binlog_paths": paths,
            "tables": tables_meta,
            "steps": steps,
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


# ------------------------------------------------------------------------ checks, README

def check_with_mariadb_binlog(out: Path, expected: dict) -> str:
    """Decode with ``mariadb-binlog -v`` to be sure the server's own tool reads it."""
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    files = [str(out / p) for p in expected["binlog_paths"]]
    proc = subprocess.run([tool, "--no-defaults", "-v", "--base64-output=decode-rows", *files],
                          capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        return f"mariadb-binlog failed ({proc.returncode}): {proc.stderr[-800:]}"
    return ""


def event_counts(out: Path, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    path = out / f"{name}.events.txt"
    if not path.exists():
        return counts
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        kind = line.split("\t")[2]
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def column_types(expected: dict) -> list[str]:
    seen: list[str] = []
    for meta in expected["tables"].values():
        for c in meta["columns"]:
            t = c["column_type"]
            if t not in seen:
                seen.append(t)
    return seen


README_HEAD = """\
# Binlog sample corpus

Real binlog files written by a real MariaDB server, the SQL that made them, and the ground
truth the SERVER reported after every statement. Regenerate with

    python samples/generate.py [--out samples/mariadb-10.11] [--case NAME ...]

(needs a local `mariadbd`; see `tests/support/mariadb_server.py`). The SQL scripts live in
`samples/sql/`; each output directory is named after the server version series.

## Files per case (in `mariadb-10.11/`)

| file | what |
|---|---|
| `<case>.binlog` | the one binlog file of the case; cases spanning several files have a directory `<case>/` with `mariadb-bin.00000N` files and `mariadb-bin.index` (names in index order) instead |
| `<case>.sql` | copy of `sql/<case>.sql` as run |
| `<case>.events.txt` | `SHOW BINLOG EVENTS IN '<file>'` for every stored file, tab separated: `Log_name Pos Event_type Server_id End_log_pos Info` (newlines/tabs/backslashes in Info escaped as `\\n` `\\t` `\\\\`) |
| `<case>.expected.json` | server-side ground truth, below |

Every stored file is closed: it ends with ROTATE (the generator runs `FLUSH BINARY LOGS` at
the end and does not store the new, empty file) or with STOP (a `--! restart` in the script).

## `<case>.expected.json`

```
{
 "server_version": "10.11.19-MariaDB-0+deb12u1-log",      # SELECT VERSION()
 "case": "types_full",
 "description": "...",
 "options": {"server_id": 1, "binlog_format": "ROW", ...}, # server options (besides paths)
 "session_init": ["SET time_zone = '+00:00'", "SET NAMES utf8mb4"],
 "binlog": ["mariadb-bin.000001", ...],                    # original names, index order
 "binlog_paths": ["types_full.binlog"],                    # relative to this directory
 "tables": {"db.tbl": {                                    # latest metadata of every table
    "columns": [{"name", "ordinal", "data_type", "column_type", "charset", "collation",
                 "datetime_precision", "nullable", "numeric_precision", "numeric_scale",
                 "character_maximum_length", "character_octet_length",
                 "legacy_temporal", "render"}, ...],
    "primary_key": ["id"],
    "create_table": "CREATE TABLE ..."}},                   # SHOW CREATE TABLE
 "steps": [{
    "sql": "INSERT ...",                                   # statement text as run
    "gtid": "0-1-5",                                       # GTID it wrote ('' if none)
    "binlog_pos": ["mariadb-bin.000001", 1234],            # SHOW MASTER STATUS after it
    "snapshot": {"db.tbl": [["1", null, "abc"], ...]},     # tables it named or changed
    "tables_after": {"db.tbl": {...} | null}               # only when a table was created,
 }]}                                                       # altered (new metadata) or dropped (null)
```

- `columns[].data_type`, `column_type`, `charset`, `collation`, `datetime_precision` are
  `information_schema.COLUMNS` (`column_type` keeps MariaDB's comments, e.g.
  `timestamp(6) /* mariadb-5.3 */` marks a legacy temporal column - `legacy_temporal` is
  true then - and `text /*M!100301 COMPRESSED*/` a compressed column).
- Snapshot rows are ordered by the primary key (or by all rendered columns when there is
  none); every value is a string rendered by the server, or null:
  - `render: "char"`: `CAST(col AS CHAR)` in session time zone `+00:00` (TIMESTAMPs are
    UTC; temporals carry exactly N fractional digits; DECIMAL exact; FLOAT/DOUBLE as the
    server prints them - compare numerically using `data_type`; ENUM/SET labels; text
    converted to utf8mb4; CHAR without trailing spaces; INET6/UUID in their text form -
    note UUID is stored (and so logged) in a different byte order than its text).
  - `render: "hex"`: `LOWER(HEX(col))` for BINARY/VARBINARY/BLOBs, binary-charset strings
    and GEOMETRY (GEOMETRY hex is MariaDB's internal form: 4-byte LE SRID + WKB, which is
    what the row image carries).
  - `render: "bit"`: `CAST(col+0 AS CHAR)`, the unsigned integer value.
- `snapshot` is taken on a second connection at READ UNCOMMITTED right after the
  statement, so rows of an open transaction (also XA, prepared or not) are visible.
- `gtid` is `@@last_gtid` of the script's session when the statement changed
  `@@gtid_binlog_pos` (when the session cannot run a SELECT, e.g. XA IDLE/PREPARED, the new
  `@@gtid_binlog_pos`, identical with one writer and one domain); `''` when the statement
  wrote no transaction (SET, SELECT, a statement inside BEGIN..COMMIT before the COMMIT).
- A `--! restart` directive appears as a step `{"sql": "--! restart", "directive":
  "restart", "gtid": "", "binlog_pos": [new file, pos], "snapshot": {}}`.

## Cases
"""


README_TAIL = """
## Not covered (yet)

- START_ENCRYPTION_EVENT (needs `encrypt_binlog` and a key management plugin), INCIDENT,
  and MySQL-only events (MySQL GTID/PREVIOUS_GTIDS, ROWS v2, TRANSACTION_PAYLOAD, binary
  JSON): need other servers (see `docker/`).
- Binlogs written by MariaDB 10.0/10.1 themselves (legacy temporals there are made here
  with `mysql56_temporal_format=OFF` on 10.11, which writes the same row format).
- A TABLE_MAP mixing legacy and MySQL 5.6 temporal columns: 10.11 does not produce one
  (a table-copying ALTER converts every temporal column of the table to the format the
  global is set to at that moment, in both directions; INSTANT / INPLACE are refused).
- INET6/INET4/UUID are rendered in their text form; the row image carries them as
  BINARY(16)/BINARY(4) (STRING type code) bytes.
"""


def write_readme(out: Path) -> None:
    parts = [README_HEAD]
    for name, case in CASES.items():
        exp_path = out / f"{name}.expected.json"
        if not exp_path.exists():
            continue
        exp = json.loads(exp_path.read_text(encoding="utf-8"))
        counts = event_counts(out, name)
        opts = ", ".join(f"{k}={v}" for k, v in exp["options"].items())
        parts.append(f"\n### `{name}`\n\n{case.description}\n\n")
        parts.append(f"- server: `{exp['server_version']}`; options: `{opts}`\n")
        parts.append(f"- files: {', '.join('`' + p + '`' for p in exp['binlog_paths'])}; "
                     f"{len(exp['steps'])} steps\n")
        parts.append("- events (SHOW BINLOG EVENTS): "
                     + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())) + "\n")
        types = [t if len(t) <= 60 else t[:45] + "...)" for t in column_types(exp)]
        parts.append("- column types: " + ", ".join(f"`{t}`" for t in types) + "\n")
        if case.legacy:
            parts.append("- legacy temporal columns: decoding needs an external schema "
                         "(precision is not in the binlog); `mariadb-binlog -v` stops at "
                         "the first legacy rows event with exit code 1.\n")
    parts.append(README_TAIL)
    readme = HERE / "README.md" if out.resolve() == DEFAULT_OUT else out / "README.md"
    readme.write_text("".join(parts), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--case", action="append", choices=sorted(CASES),
                    help="only this case (repeatable); default: all")
    ap.add_argument("--keep", action="store_true", help="keep the servers' temp dirs")
    ap.add_argument("--no-check", action="store_true",
                    help="do not decode the results with mariadb-binlog")
    args = ap.parse_args(argv)
    names = args.case or list(CASES)
    failed = 0
    for name in names:
        case = CASES[name]
        runner = CaseRunner(name, case, args.out, keep=args.keep)
        exp = runner.run()
        msg = ""
        if not args.no_check and not case.legacy:
            msg = check_with_mariadb_binlog(args.out, exp)
        counts = event_counts(args.out, name)
        print(f"{name}: {len(exp['steps'])} steps, files {exp['binlog']}, "
              f"{sum(counts.values())} events" + (f"  CHECK FAILED: {msg}" if msg else ""))
        failed += bool(msg)
    write_readme(args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
