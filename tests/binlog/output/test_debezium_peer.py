"""``binlog dump --format debezium`` against Debezium itself (the ``debezium`` peer:
Debezium's MariaDB connector in the embedded engine) on the same binlogs:

- ``types_full`` (every column type family, MySQL 5.6-format temporals, as the server
  wrote it), served unchanged by ``binlog serve --binlogs``;
- ``temporal_cells`` (TIMESTAMP/DATETIME/TIME(0..6) in the four mysql56_temporal_format
  cells): Debezium cannot read the legacy cells from the server's binlog (see the
  compatibility page), so it reads the binlog ``binlog rewrite`` makes of it through
  serve, and ours reads the server's; the rows events of the MySQL 5.6-format cells are
  the server's bytes in both (checked), and positions are compared through the rewrite's
  position map;
- ``live``: what the samples lack, written by the test's server: UPDATEs that change the
  primary key (one row, several rows, a composite key), a table with only a unique key,
  DECIMALs whose unscaled value is a power of two (two's complement in fewest bytes),
  FLOATs at the ends of their range.

Debezium reads each from its start without a snapshot (its schema from the binlog's own
DDL), with ``provide.transaction.metadata=true`` (the transaction block, which ours always
has) and ``topic.prefix=binlog`` (ours' ``source.name``).  For every change, the key
(Debezium's record key; ours: the image's primary key columns as our schema change events
name them), op, before, after, the source block and the transaction block are equal,
except the differences docs/output-formats.md lists ("Debezium itself"), each checked to
be exactly that, against the server's own value where a value differs.
"""
from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.debezium import Debezium, properties, read_to_end
from support.serve_process import PASSWORD, Serve

from binlog.rewrite.position_map import lookup, parse_map

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / "mariadb-10.11"
SERVED = "mariadb-bin.000001"       # the name the server gave both files
TABLE_TOPIC = "binlog.{db}."        # topic.prefix "binlog": ours' source.name


@dataclass(frozen=True)
class Case:
    db: str
    rewritten: bool                 # Debezium reads the rewrite (ours the server's binlog)
    extra: dict = field(default_factory=dict)
    sql: tuple[str, ...] = ()       # the live case's statements (else: the sample <name>.binlog)


LIVE = (
    "CREATE DATABASE lv CHARACTER SET utf8mb4",
    "CREATE TABLE lv.k (id INT NOT NULL PRIMARY KEY, v VARCHAR(10), d DECIMAL(10,2), f FLOAT)",
    "CREATE TABLE lv.k2 (a INT NOT NULL, b VARCHAR(5) NOT NULL, n INT, PRIMARY KEY (a, b))",
    "CREATE TABLE lv.u (id INT NOT NULL, n INT, UNIQUE KEY (id))",
    "INSERT INTO lv.k VALUES (1, 'a', -1.28, 1.4e-45), (2, 'b', -327.68, 3.40282e38), (3, 'c', 0, 0.1),"
    " (4, 'd', 1.28, 16777216), (5, 'e', -0.01, -1.17549435e-38), (6, 'f', 99999999.99, 0.333333343)",
    "UPDATE lv.k SET id = 10 WHERE id = 1",
    "UPDATE lv.k SET v = 'same key' WHERE id = 2",
    "UPDATE lv.k SET id = id + 100, v = 'moved' WHERE id IN (3, 4)",
    "INSERT INTO lv.k2 VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', 3)",
    "UPDATE lv.k2 SET b = 'z' WHERE a = 1 AND b = 'y'",
    "UPDATE lv.k2 SET n = 30 WHERE a = 2",
    "INSERT INTO lv.u VALUES (1, 1), (2, 2)",
    "UPDATE lv.u SET id = 3 WHERE id = 1",
    "DELETE FROM lv.k WHERE id = 10",
)


CASES = {
    # Debezium's DDL parser refuses MariaDB's INET6/INET4/UUID types ("DDL statement
    # couldn't be parsed"): that statement skipped, that table left out (documented)
    "types_full": Case("tf", False, {"schema.history.internal.skip.unparseable.ddl": "true",
                                     "table.exclude.list": "tf.net_ids"}),
    "temporal_cells": Case("tc", True),
    "live": Case("lv", False, sql=LIVE),
}
UNREAD = {"types_full": {"net_ids"}}     # tables Debezium cannot read, left out of its run


@dataclass
class Compared:
    case: str
    debezium: list[dict]            # its lines (topic, offset, key, value), schemas included
    ours: list[dict]                # ours: change events and schema change events
    expected: dict                  # the server's own values (<case>.expected.json; live: {})
    to_original: list | None        # the rewrite's position map (None: the same binlog)
    log: str                        # Debezium's log
    binlogs: tuple[Path, Path]      # the server's binlog, the one Debezium read


def run_debezium(jar: Path, binlog: Path, tmp: Path, case: Case) -> tuple[list[dict], str]:
    folder = tmp / "served"
    folder.mkdir()
    shutil.copyfile(binlog, folder / SERVED)
    (folder / "mariadb-bin.index").write_text(f"./{SERVED}\n")
    (tmp / "serve").mkdir()
    serve = Serve(folder, tmp / "serve")
    extra = {"topic.prefix": "binlog", "database.include.list": case.db,
             "snapshot.mode": "configuration_based",
             "snapshot.mode.configuration.based.snapshot.schema": "false",
             "snapshot.mode.configuration.based.snapshot.data": "false",
             "snapshot.mode.configuration.based.start.stream": "true",
             "provide.transaction.metadata": "true",
             "heartbeat.interval.ms": "300", "connect.keep.alive.interval.ms": "1500", **case.extra}
    engine = Debezium(jar, properties(port=serve.port, user="repl", password=PASSWORD, workdir=tmp / "dbz",
                                      server_id=5701, **extra), tmp / "dbz", tmp / "dbz" / "events.jsonl")
    try:
        end = read_to_end(engine, SERVED, binlog.stat().st_size)
    finally:
        engine.kill()
        serve.stop()
    assert end["success"], (end, engine.log_tail())
    return engine.lines(), engine.log_path.read_text(errors="replace")


def dump_ours(binlog: Path, tmp: Path) -> list[dict]:
    (tmp / "ours").mkdir()
    path = tmp / "ours" / SERVED
    shutil.copyfile(binlog, path)
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "debezium", str(path)],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def live_binlog(server, case: Case, tmp: Path) -> Path:
    """The test server's binlog of the case's statements, alone in its file."""
    server.execute(f"DROP DATABASE IF EXISTS {case.db}")
    server.flush_logs()
    for sql in case.sql:
        server.execute(sql)
    name, _ = server.master_status()
    server.flush_logs()
    server.copy_binlog(name, tmp / "live.binlog")
    return tmp / "live.binlog"


@pytest.fixture(scope="module", params=sorted(CASES))
def compared(request, peers, mariadb_server, tmp_path_factory) -> Compared:
    name, case = request.param, CASES[request.param]
    jar = peers("debezium") / "debezium-runner.jar"
    tmp = tmp_path_factory.mktemp(name)
    original = live_binlog(mariadb_server, case, tmp) if case.sql else SAMPLES / f"{name}.binlog"
    read, to_original = original, None
    if case.rewritten:
        subprocess.run([sys.executable, "-m", "binlog.cli", "rewrite", "--quiet", "--to", str(tmp / "rewritten"),
                        str(original)], cwd=REPO, check=True, capture_output=True, timeout=300)
        read = tmp / "rewritten" / original.name
        to_original = parse_map(read.with_name(read.name + ".map").read_text(), str(read))
    lines, log = run_debezium(jar, read, tmp, case)
    expected = {} if case.sql else json.loads(original.with_name(f"{name}.expected.json").read_text())
    return Compared(name, lines, dump_ours(original, tmp), expected, to_original, log, (original, read))


# -- the two sides ---------------------------------------------------------------------------
def debezium_changes(c: Compared) -> list[dict]:
    """Debezium's change events: the payload, with the record's key beside it."""
    return [dict(line["value"]["payload"], key=line["key"] and line["key"]["payload"])
            for line in c.debezium
            if isinstance(line.get("value"), dict) and "op" in line["value"]["payload"]]


def our_changes(c: Compared) -> list[dict]:
    """Ours, with the key Debezium would give: the image's primary key columns, as the
    last of our schema change events for the table names them (None without a key)."""
    keys: dict[str, list[str]] = {}
    out = []
    for line in c.ours:
        for change in line.get("tableChanges") or ():
            if change["table"] is not None:
                keys[json.loads("[" + change["id"].replace('"."', '","') + "]")[1]] = \
                    change["table"]["primaryKeyColumnNames"]
        if line.get("op") not in ("c", "u", "d") or line["source"]["table"] in UNREAD.get(c.case, ()):
            continue
        image = line["after"] or line["before"]
        pk = keys.get(line["source"]["table"]) or []
        out.append(dict(line, key={k: image[k] for k in pk} or None))
    return out


def pairs(c: Compared) -> list[tuple[dict, dict]]:
    theirs, ours = debezium_changes(c), our_changes(c)
    assert len(theirs) == len(ours) > 10
    for dbz, mine in zip(theirs, ours, strict=True):
        assert (dbz["source"]["gtid"], dbz["source"]["table"], dbz["source"]["row"]) == \
            (mine["source"]["gtid"], mine["source"]["table"], mine["source"]["row"])
    return list(zip(theirs, ours, strict=True))


# -- the documented differences of values -------------------------------------------------
def server_value(c: Compared, change: dict, image: str, column: str) -> str | None:
    """The server's own text (``<case>.expected.json``: CAST(col AS CHAR), or HEX() for
    binary columns) of ``column`` in a change's ``image``: the table's rows after the
    change's transaction (after) or before it (before), found by the row's id."""
    table = f"{change['source']['db']}.{change['source']['table']}"
    columns = [col["name"] for col in c.expected["tables"][table]["columns"]]
    row_id = str((change[image])["id"])
    state, previous = None, None
    for step in c.expected["steps"]:
        if table in step.get("snapshot", {}):
            previous, state = state, step["snapshot"][table]
        if step["gtid"] == change["source"]["gtid"]:
            break
    rows = state if image == "after" else previous
    (row,) = [r for r in rows or () if r[0] == row_id]
    return row[columns.index(column)]


def _year(server: str, ours, theirs) -> bool:
    # YEAR 0000 is the byte 0 in the row; Debezium's binlog library reads YEAR as 1900 +
    # the byte (mysql-binlog-connector-java AbstractRowsEventDataDeserializer.deserializeYear)
    return server == "0000" and ours == 0 and theirs == 1900


def _char_binary(server: str, ours, theirs) -> bool:
    # CHAR(n) CHARACTER SET binary is BINARY(n) (SHOW CREATE TABLE says binary(4)); Debezium's
    # DDL parser keeps it a CHAR: text of the row's bytes, their zero padding stripped,
    # decoded as ISO-8859-1 (the Java charset the JDBC driver's table gives "binary")
    raw = bytes.fromhex(server)
    return base64.b64decode(ours) == raw and theirs == raw.rstrip(b"\0").decode("latin-1")


def _float_digits(server, ours, theirs) -> bool:
    # FLOAT: Java 17's Float.toString (the JVM here) writes a few float32s with more digits
    # than the fewest that read back as the same float32, which ours writes, as Java 19+'s
    # does (Float.MIN_NORMAL: 1.17549435E-38 on 17, 1.1754944E-38 on 19+)
    def float32(v):
        return struct.pack("<f", v)
    return float32(ours) == float32(theirs) and len(repr(ours)) < len(repr(theirs))


#: (case, table, column) -> the difference, as a check of (the server's text, ours, Debezium's)
VALUE_DIFFERENCES = {
    ("types_full", "dates", "y"): _year,
    ("types_full", "strings", "c4_bin"): _char_binary,
    ("live", "k", "f"): _float_digits,
}

#: (case, table) -> the columns of a UNIQUE key Debezium keys the table by: it has no PRIMARY
#: KEY, and MariaDB makes its first UNIQUE key of NOT NULL columns the primary key; our
#: schema change events list no primary key for it (the schema store knows PRIMARY KEY only)
KEY_DIFFERENCES = {("live", "u"): ("id",)}

#: source fields a consumer reads, compared as they are (``pos`` through the position map)
SOURCE_FIELDS = ("version", "connector", "name", "ts_ms", "ts_us", "ts_ns", "snapshot", "db", "sequence",
                 "table", "server_id", "gtid", "file", "row", "thread", "query")


def test_every_change_is_debeziums(compared):
    """Key, op, before, after, source and transaction of every change are Debezium's, but
    for the documented value differences, each checked against the server's value."""
    differing: set = set()
    for dbz, ours in pairs(compared):
        where = (dbz["source"]["gtid"], dbz["source"]["table"], dbz["source"]["row"])
        if (compared.case, dbz["source"]["table"]) in KEY_DIFFERENCES:
            unique = KEY_DIFFERENCES[compared.case, dbz["source"]["table"]]
            image = dbz["after"] or dbz["before"]
            assert ours["key"] is None and dbz["key"] == {c: image[c] for c in unique}, where
        else:
            assert ours["key"] == dbz["key"], where
        assert ours["op"] == dbz["op"], where
        assert ours["transaction"] == dbz["transaction"], where
        assert {f: ours["source"][f] for f in SOURCE_FIELDS} == {f: dbz["source"][f] for f in SOURCE_FIELDS}, where
        assert ours["source"]["pos"] == original_pos(compared, dbz["source"]["pos"]), where
        for image in ("before", "after"):
            assert (ours[image] is None) == (dbz[image] is None), (where, image)
            if dbz[image] is None:
                continue
            assert list(ours[image]) == list(dbz[image]), (where, image)       # the columns, in order
            for column, theirs in dbz[image].items():
                mine = ours[image][column]
                if mine == theirs:
                    continue
                check = VALUE_DIFFERENCES.get((compared.case, dbz["source"]["table"], column))
                assert check is not None, (where, image, column, mine, theirs)
                server = server_value(compared, dbz, image, column) if compared.expected else None
                assert check(server, mine, theirs), (where, image, column, server, mine, theirs)
                differing.add((dbz["source"]["table"], column))
    documented = {(table, column) for case, table, column in VALUE_DIFFERENCES if case == compared.case}
    assert differing == documented          # each documented difference is still seen


def original_pos(c: Compared, pos: int) -> int:
    return pos if c.to_original is None else lookup(c.to_original, pos, from_output=True)


def test_the_envelope_differs_in_the_processing_time_only(compared):
    """Debezium's top-level ts_ms/ts_us/ts_ns are when it processed the event (its clock);
    ours are the event's time (a dump has no processing time that means anything)."""
    for dbz, ours in pairs(compared):
        assert list(ours) == list(dbz)                      # the same fields, in the same order
        for unit in ("ts_ms", "ts_us", "ts_ns"):
            assert ours[unit] == ours["source"][unit] <= dbz[unit]


def test_debezium_adds_a_tombstone_after_each_delete(compared):
    """Its record of null value after each delete (tombstones.on.delete, Kafka's log
    compaction) has no line in ours: a JSON line has no key for it to tombstone."""
    records = [line for line in compared.debezium
               if (line.get("topic") or "").startswith(TABLE_TOPIC.format(db=CASES[compared.case].db))]
    for i, line in enumerate(records):
        if line["value"] is None:
            assert records[i - 1]["value"]["payload"]["op"] == "d" and records[i - 1]["key"] == line["key"]
    deletes = sum(dbz["op"] == "d" for dbz, _ in pairs(compared))
    assert sum(line["value"] is None for line in records) == deletes > 5
    assert not any(line.get("op") in ("c", "u", "d") and line["after"] is line["before"] is None
                   for line in compared.ours)


def test_what_debezium_cannot_read_is_only_what_is_documented(compared):
    """types_full: Debezium's DDL parser refuses the INET6/INET4/UUID table (its log
    says so); ours has its changes.  temporal_cells: nothing left out."""
    unread = UNREAD.get(compared.case, set())
    ours = {line["source"]["table"] for line in compared.ours if line.get("op") in ("c", "u", "d")}
    assert unread <= ours
    for table in unread:
        assert f"Ignoring unparseable DDL statement 'CREATE TABLE {table} (" in compared.log


@pytest.mark.parametrize("compared", ["temporal_cells"], indirect=True)
def test_the_mysql56_cells_debezium_read_are_the_servers_bytes(compared):
    """temporal_cells: the rows events of the tables created in the MySQL 5.6 format
    (on_*) are byte for byte the server's in the rewrite Debezium read (their headers
    aside: positions move), so there Debezium read the server's binlog."""
    original, rewritten = (p.read_bytes() for p in compared.binlogs)
    entries = {e.out_start: e for e in compared.to_original}
    seen = 0
    for dbz in debezium_changes(compared):
        if dbz["source"]["table"].startswith("on_"):
            e = entries[dbz["source"]["pos"]]
            assert original[e.in_start + 19:e.in_end - 4] == rewritten[e.out_start + 19:e.out_end - 4]
            seen += 1
    assert seen > 30


#: the fields of a schema change event's column compared with Debezium's; its others are
#: not tracked (docs/output-formats.md): charsetName, length, scale (its DDL parser's own
#: readings of the statement), autoIncremented, generated, defaultValueExpression
COLUMN_FIELDS = ("name", "jdbcType", "nativeType", "typeName", "typeExpression", "position", "optional",
                 "comment", "enumValues")
#: (case, table, column) -> Debezium's typeName where its DDL parser reads the type otherwise
#: (CHAR(4) CHARACTER SET binary: it keeps CHAR, the server makes it BINARY(4))
TYPE_DIFFERENCES = {("types_full", "strings", "c4_bin"): "CHAR"}


def test_every_schema_change_is_debeziums(compared):
    """Each DDL statement: its schema change event (ddl, database, source, and each table
    change: type, id, primary key, columns) is Debezium's, but for what is documented."""
    theirs = [line["value"]["payload"] for line in compared.debezium if line.get("topic") == "binlog"]
    ours = [line for line in compared.ours if "ddl" in line]
    assert len(theirs) == len(ours) > 2
    for dbz, mine in zip(theirs, ours, strict=True):
        where = dbz["ddl"][:60]
        assert [mine[f] for f in ("ddl", "databaseName", "schemaName")] == \
            [dbz[f] for f in ("ddl", "databaseName", "schemaName")], where
        assert mine["ts_ms"] == mine["source"]["ts_ms"] <= dbz["ts_ms"], where     # its clock, as for changes
        assert mine["source"]["pos"] == original_pos(compared, dbz["source"]["pos"]), where
        unread = [t for t in UNREAD.get(compared.case, ()) if dbz["ddl"].startswith(f"CREATE TABLE {t} (")]
        if unread:      # the statement its parser refused: no table change, no table
            assert dbz["tableChanges"] == [] and dbz["source"]["table"] == "", where
            assert [c["id"] for c in mine["tableChanges"]] == [f'"{dbz["databaseName"]}"."{unread[0]}"']
            continue
        fields = [f for f in SOURCE_FIELDS if f != "row"]
        assert {f: mine["source"][f] for f in fields} == {f: dbz["source"][f] for f in fields}, where
        assert len(mine["tableChanges"]) == len(dbz["tableChanges"]), where
        for theirs_change, our_change in zip(dbz["tableChanges"], mine["tableChanges"], strict=True):
            assert list(our_change) == list(theirs_change), where
            assert [our_change[f] for f in ("type", "id")] == [theirs_change[f] for f in ("type", "id")], where
            if theirs_change["table"] is None:
                assert our_change["table"] is None, where
                continue
            table = json.loads("[" + theirs_change["id"].replace('"."', '","') + "]")[1]
            assert list(our_change["table"]) == list(theirs_change["table"]), where
            pk = theirs_change["table"]["primaryKeyColumnNames"]
            if (compared.case, table) in KEY_DIFFERENCES:
                assert our_change["table"]["primaryKeyColumnNames"] == [] and \
                    pk == list(KEY_DIFFERENCES[compared.case, table]), where
            else:
                assert our_change["table"]["primaryKeyColumnNames"] == pk, where
            for a, b in zip(our_change["table"]["columns"], theirs_change["table"]["columns"], strict=True):
                assert list(a) == list(b), where
                want = dict(b)
                if (compared.case, table, b["name"]) in TYPE_DIFFERENCES:
                    assert b["typeName"] == TYPE_DIFFERENCES[compared.case, table, b["name"]], where
                    want.update({f: a[f] for f in ("jdbcType", "typeName", "typeExpression")})
                assert {f: a[f] for f in COLUMN_FIELDS} == {f: want[f] for f in COLUMN_FIELDS}, (where, b["name"])
