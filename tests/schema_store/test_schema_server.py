"""schema_store against a real MariaDB: real ``mariadb-dump --no-data`` output and DDL
sequences must give exactly what INFORMATION_SCHEMA says, and so must the live snapshot."""
from __future__ import annotations

import re
import subprocess

import pytest
from support.mariadb_server import find_tool

from schema_store import SchemaStore, parse_script
from schema_store.ddl import Catalog
from schema_store.live import parse_dsn

pytestmark = pytest.mark.server

DB = "ss_types"

TYPES_SQL = [
    f"CREATE DATABASE {DB} CHARACTER SET latin1",
    # legacy (MariaDB 5.3 format) temporal columns
    "SET GLOBAL mysql56_temporal_format=OFF",
    f"""CREATE TABLE {DB}.legacy (
        id int unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
        ts3 timestamp(3) NULL DEFAULT NULL, dt6 datetime(6), t2 time(2),
        ts0 timestamp NULL, dt0 datetime, t0 time, d date,
        ts1 timestamp(1) NULL, dt4 datetime(4), t5 time(5))""",
    "SET GLOBAL mysql56_temporal_format=ON",
    f"""CREATE TABLE {DB}.`we ird``name;x` (
        a tinyint NOT NULL, b smallint unsigned zerofill, c mediumint NOT NULL,
        c2 mediumint unsigned, d bigint unsigned, d2 bigint, i int, iu int unsigned,
        e decimal(10,3), e2 numeric, f float, f2 float(7,2), g double, g2 double(8,3), bo bool,
        h bit(5), h1 bit, y year, dd date,
        ts timestamp(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
        dt datetime(6) DEFAULT '2020-01-01 00:00:00.5', t time(2), ts0 timestamp NULL,
        dt0 datetime, t0 time,
        v varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT 'x;y',
        ch char(3), chb char(5) binary, nc nchar(4), bi binary(4), vb varbinary(9),
        tt tinytext, tx text COMPRESSED, mt mediumtext, lt longtext COLLATE latin1_bin,
        tb tinyblob, bl blob COMPRESSED, mb mediumblob, lb longblob,
        vc varchar(100) COMPRESSED CHARACTER SET utf8mb4,
        en enum('a','b''c','d,e','f\\\\g','') COMMENT 'enum; with, stuff',
        st set('x','y z','q''r') CHARACTER SET utf8mb4 DEFAULT 'x',
        j json, g1 geometry, p point, ls linestring, pg polygon, ip inet6, ip4 inet4, u uuid,
        gen int AS (c + 1) VIRTUAL, gen2 varchar(10) GENERATED ALWAYS AS (concat(v, 'x')) STORED,
        inv int INVISIBLE,
        PRIMARY KEY (c, a), UNIQUE KEY uk (d), KEY k1 (v(5)),
        CONSTRAINT chk CHECK (c > 0)
    ) DEFAULT CHARSET=utf8mb3 COMMENT='tbl;comment'""",
    f"""CREATE TABLE {DB}.parent (id int NOT NULL, name varchar(10) CHARACTER SET ascii,
        PRIMARY KEY (id)) ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.child (id int NOT NULL AUTO_INCREMENT, pid int,
        PRIMARY KEY (id), CONSTRAINT fk FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL)""",
    f"CREATE TABLE {DB}.part (id int NOT NULL, v varchar(5), PRIMARY KEY (id)) "
    "PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
    f"CREATE TABLE {DB}.nopk (a int, b char(2) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci) "
    "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
    f"CREATE TABLE {DB}.sv (id int NOT NULL PRIMARY KEY, x int) WITH SYSTEM VERSIONING",
    f"CREATE SEQUENCE {DB}.seq1",
    f"CREATE VIEW {DB}.vw AS SELECT id FROM {DB}.parent",
    f"CREATE TRIGGER {DB}.trg BEFORE INSERT ON {DB}.parent FOR EACH ROW BEGIN SET NEW.name = 'a;b'; END",
    f"CREATE PROCEDURE {DB}.pr() BEGIN SELECT 1; SELECT 'x;'; END",
]

EXPECTED_LABELS = {
    "en": ("a", "b'c", "d,e", "f\\g", ""),
    "st": ("x", "y z", "q'r"),
}

COLUMNS_SQL = """
SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION,
       NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, COLLATION_NAME,
       CHARACTER_MAXIMUM_LENGTH
FROM information_schema.COLUMNS c
WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN (
    SELECT TABLE_NAME FROM information_schema.TABLES t
    WHERE t.TABLE_SCHEMA = c.TABLE_SCHEMA AND TABLE_TYPE <> 'VIEW')
ORDER BY TABLE_NAME, ORDINAL_POSITION"""


def information_schema(srv, db):
    """(table -> list of expected column dicts, table -> primary key) from the server."""
    cols: dict[str, list[dict]] = {}
    for (table, name, data_type, column_type, nullable, nprec, nscale, dtprec, cs, coll,
         maxlen) in srv.query(COLUMNS_SQL, (db,)):
        data_type = data_type.lower()
        cols.setdefault(table, []).append({
            "name": name, "data_type": data_type,
            "unsigned": " unsigned" in column_type,
            "nullable": nullable == "YES",
            "numeric_precision": nprec, "numeric_scale": nscale,
            "datetime_precision": dtprec if data_type in ("timestamp", "datetime", "time") else None,
            "legacy": ("/* mariadb-5.3 */" in column_type)
            if data_type in ("timestamp", "datetime", "time") else None,
            "charset": cs, "collation": coll,
            "length": (maxlen if data_type in ("char", "varchar", "binary", "varbinary")
                       else nprec if data_type == "bit" else None),
            "compressed": "COMPRESSED" in column_type,
        })
    pks: dict[str, tuple] = {}
    for table, col in srv.query(
            "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE "
            "TABLE_SCHEMA = %s AND INDEX_NAME = 'PRIMARY' ORDER BY TABLE_NAME, SEQ_IN_INDEX", (db,)):
        pks[table] = pks.get(table, ()) + (col,)
    return cols, pks


def as_expected_dict(col, *, legacy_known=True):
    d = {k: getattr(col, k) for k in ("name", "data_type", "unsigned", "nullable",
                                      "numeric_precision", "numeric_scale", "datetime_precision",
                                      "legacy", "charset", "collation", "length", "compressed")}
    return d


def assert_matches_server(store_or_catalog, srv, db, *, legacy_known=True, position=None):
    cols, pks = information_schema(srv, db)
    for table, expected in cols.items():
        if isinstance(store_or_catalog, Catalog):
            schema = store_or_catalog[(db, table)]
        else:
            schema = store_or_catalog.schema(db, table, position)
        assert schema is not None, f"{db}.{table} missing"
        got_cols = list(schema.columns)
        if table.startswith("sv"):      # implicit row_start/row_end: hidden from information_schema
            assert [c.name for c in got_cols[-2:]] == ["row_start", "row_end"]
            assert all(c.data_type == "timestamp" and c.datetime_precision == 6 for c in got_cols[-2:])
            got_cols = got_cols[:-2]
        got = [as_expected_dict(c) for c in got_cols]
        for g, e in zip(got, expected, strict=True):
            if e["data_type"] == "longtext" and g["data_type"] == "json":
                g["data_type"] = "longtext"       # MariaDB's JSON is LONGTEXT utf8mb4_bin
            if not legacy_known and e["legacy"] is not None:
                e = dict(e, legacy=None)
            assert g == e, f"{db}.{table}.{e['name']}"
        assert len(got) == len(expected), f"{db}.{table}: {[c['name'] for c in got]}"
        assert schema.primary_key == pks.get(table, ()), f"{db}.{table} primary key"
    return cols


def mariadb_dump(srv, *dbs, extra=()):
    dump = find_tool("mariadb-dump", "mysqldump")
    proc = subprocess.run([dump, "-S", srv.socket, "-uroot", "--no-data", "--routines", "--triggers",
                           *extra, "--databases", *dbs], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.fixture(scope="module")
def types_db(mariadb_server):
    srv = mariadb_server
    srv.execute(f"DROP DATABASE IF EXISTS {DB}")
    try:
        for sql in TYPES_SQL:
            srv.execute(sql)
    finally:
        srv.execute("SET GLOBAL mysql56_temporal_format=ON")
    yield srv
    srv.execute(f"DROP DATABASE IF EXISTS {DB}")


@pytest.fixture(scope="module")
def dump_text(types_db):
    return mariadb_dump(types_db, DB)


def test_dump_has_what_we_rely_on(dump_text):
    assert "/* mariadb-5.3 */" in dump_text
    assert "/*M!100301 COMPRESSED*/" in dump_text
    assert "DELIMITER ;;" in dump_text


def test_dump_import_matches_information_schema(types_db, dump_text):
    store = SchemaStore()
    changed = store.import_ddl(dump_text, source="types.sql")
    assert (DB, "legacy") in changed and (DB, "vw") not in changed
    assert_matches_server(store, types_db, DB)
    weird = store.schema(DB, "we ird`name;x")
    assert weird.column("en").enum_values == EXPECTED_LABELS["en"]
    assert weird.column("st").set_values == EXPECTED_LABELS["st"]
    assert weird.source == "ddl:types.sql"
    legacy = store.schema(DB, "legacy")
    assert [(c.name, c.datetime_precision, c.legacy) for c in legacy.columns if c.is_temporal_fsp] == [
        ("ts3", 3, True), ("dt6", 6, True), ("t2", 2, True), ("ts0", 0, True), ("dt0", 0, True),
        ("t0", 0, True), ("ts1", 1, True), ("dt4", 4, True), ("t5", 5, True)]
    assert weird.column("ts").legacy is False
    assert store.schema(DB, "vw") is None
    assert store.databases()[DB] == ("latin1", "latin1_swedish_ci")


def test_dump_without_markers_gives_unknown_legacy(types_db, dump_text):
    """10.0/10.1 dumps print no marker and an older server version."""
    old = dump_text.replace(" /* mariadb-5.3 */", "")
    old = re.sub(r"Server version\s+\S+", "Server version\t10.1.48-MariaDB", old)
    catalog = Catalog()
    catalog.apply_all(parse_script(old, source="old.sql"))
    assert_matches_server(catalog, types_db, DB, legacy_known=False)
    for c in catalog[(DB, "legacy")].columns:
        if c.is_temporal_fsp:
            assert c.legacy is None


def test_live_snapshot_matches_information_schema(types_db, dump_text):
    store = SchemaStore()
    dsn = f"mariadb://root@localhost/{DB}?unix_socket={types_db.socket}"
    keys = store.import_live(dsn)
    assert (DB, "vw") not in keys and (DB, "seq1") in keys
    assert_matches_server(store, types_db, DB)
    assert store.schema(DB, "legacy").source == "live:localhost"
    # the live snapshot and the dump agree on everything but the source
    ddl = SchemaStore()
    ddl.import_ddl(dump_text, source="types.sql")
    for key in keys:
        a, b = store.schema(*key), ddl.schema(*key)
        for ca, cb in zip(a.columns, b.columns, strict=True):
            if ca.data_type == "longtext" and cb.data_type == "json":
                continue
            assert ca == cb, (key, ca.name)
        assert (a.primary_key, len(a.columns)) == (b.primary_key, len(b.columns))
    assert store.databases()[DB] == ("latin1", "latin1_swedish_ci")


def test_live_snapshot_all_databases(types_db):
    store = SchemaStore()
    keys = store.import_live(f"mysql://root:@127.0.0.1:{types_db.port}/")
    assert (DB, "legacy") in keys
    assert not any(db in ("mysql", "information_schema", "performance_schema", "sys") for db, _ in keys)


def test_parse_dsn():
    assert parse_dsn("mysql://u:p%40ss@h:3307/db?unix_socket=/tmp/s.sock") == {
        "user": "u", "password": "p@ss", "host": "h", "port": 3307, "database": "db",
        "unix_socket": "/tmp/s.sock"}


SEQUENCE_DB = "ss_seq"
DDL_SEQUENCE = f"""
CREATE DATABASE {SEQUENCE_DB} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
USE {SEQUENCE_DB};
CREATE TABLE t1 (id int NOT NULL, a varchar(10), b datetime(3), c int, PRIMARY KEY (id));
ALTER TABLE t1 ADD COLUMN d time(4) AFTER a, ADD e char(2) CHARACTER SET latin1 FIRST;
ALTER TABLE t1 DROP COLUMN c;
ALTER TABLE t1 MODIFY a varchar(30) CHARACTER SET ascii NOT NULL;
ALTER TABLE t1 CHANGE b bb timestamp(6) NULL DEFAULT NULL FIRST;
ALTER TABLE t1 RENAME COLUMN d TO dd;
ALTER TABLE t1 DROP PRIMARY KEY, ADD PRIMARY KEY (id, a);
ALTER TABLE t1 ADD COLUMN IF NOT EXISTS a int;
ALTER TABLE t1 DEFAULT CHARSET=latin1;
ALTER TABLE t1 ADD COLUMN f varchar(3);
CREATE TABLE t2 LIKE t1;
ALTER TABLE t2 CONVERT TO CHARACTER SET utf8mb3;
RENAME TABLE t1 TO t3, t2 TO `t 4`;
CREATE TABLE t5 (x enum('p','q') NOT NULL, y set('a','b')) ENGINE=InnoDB;
TRUNCATE TABLE t5;
ALTER TABLE t5 ENGINE=InnoDB;
ALTER TABLE t5 FORCE;
CREATE TABLE gone (x int);
DROP TABLE IF EXISTS gone, never_there;
CREATE TABLE t6 (x int);
ALTER TABLE t6 RENAME TO t7;
ALTER TABLE t7 ADD COLUMN (y int, z bigint unsigned), ALGORITHM=COPY;
CREATE TABLE sv2 (a int) WITH SYSTEM VERSIONING;
ALTER TABLE sv2 DROP SYSTEM VERSIONING;
ALTER TABLE sv2 ADD SYSTEM VERSIONING;
CREATE TABLE t8 (k int KEY, n int);
"""


def test_ddl_sequence_matches_server(mariadb_server):
    srv = mariadb_server
    srv.execute(f"DROP DATABASE IF EXISTS {SEQUENCE_DB}")
    conn = srv.connect()
    try:
        with conn.cursor() as cur:
            for stmt in DDL_SEQUENCE.strip().split(";\n"):
                cur.execute(stmt.rstrip(";"))
        store = SchemaStore()
        store.import_ddl(DDL_SEQUENCE, source="seq.sql")
        assert store.tables() == sorted(
            (SEQUENCE_DB, t) for t in ("t3", "t 4", "t5", "t7", "sv2", "t8"))
        assert_matches_server(store, srv, SEQUENCE_DB, legacy_known=False)
        # and the history: t1 existed and is now gone (renamed)
        assert store.schema(SEQUENCE_DB, "t1") is None
    finally:
        conn.close()
        srv.execute(f"DROP DATABASE IF EXISTS {SEQUENCE_DB}")


def test_alter_converts_legacy_columns_when_variable_on(mariadb_server):
    """Documents the server behaviour Catalog(mysql56_temporal_format=True) models."""
    srv = mariadb_server
    db = "ss_upgrade"
    srv.execute(f"DROP DATABASE IF EXISTS {db}")
    srv.execute(f"CREATE DATABASE {db}")
    try:
        srv.set_global("mysql56_temporal_format", False)
        srv.execute(f"CREATE TABLE {db}.t (a int, t timestamp(3) NULL)")
        srv.set_global("mysql56_temporal_format", True)
        dump = mariadb_dump(srv, db)
        catalog = Catalog(mysql56_temporal_format=True)
        catalog.apply_all(parse_script(dump))
        assert catalog[(db, "t")].column("t").legacy is True
        srv.execute(f"ALTER TABLE {db}.t RENAME COLUMN a TO b")
        catalog.apply_all(parse_script(f"ALTER TABLE {db}.t RENAME COLUMN a TO b"))
        assert_matches_server(catalog, srv, db)
        assert catalog[(db, "t")].column("t").legacy is False
    finally:
        srv.set_global("mysql56_temporal_format", True)
        srv.execute(f"DROP DATABASE IF EXISTS {db}")
