"""Statement-logged changes (binlog_format STATEMENT) applied into a real TiDB 8.5 (the
``tidb-8.5`` peer) from a real MariaDB: each runs in the source's session as TiDB takes it
(binlog/replay/tidb/session.py) - sql_mode by name, the statement's time, LAST_INSERT_ID,
the RAND seeds, user variables, time zone, charsets by name - and gives the source's rows;
what TiDB has no equivalent for (a locale other than en_US, auto-increment values it would
not reproduce, MariaDB-only sql_modes, a collation it lacks) stops the run naming the
statement, the rows before it committed; ``--map-collation`` runs the last one anyway."""
from __future__ import annotations

from decimal import Decimal

import pymysql
import pytest
from replay_helpers import cli, dsn
from tidb_helpers import UTF8MB4, collations, table_rows

pytestmark = pytest.mark.server

SETUP = [
    "CREATE DATABASE ss",
    "CREATE TABLE ss.t (id INT PRIMARY KEY, s VARCHAR(40), at DATETIME(6), r DOUBLE, n BIGINT)",
    "CREATE TABLE ss.ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
    "INSERT INTO ss.t (id, s) VALUES (1, 'a')",
]


def _source(mariadb_factory, statements, charset="utf8mb4"):
    """The source after SETUP (rows logged) and ``statements`` logged as statements, sent
    by a client of ``charset``."""
    source = mariadb_factory(UTF8MB4)
    for sql in SETUP:
        source.execute(sql)
    conn = pymysql.connect(unix_socket=source.socket, user="root", charset=charset, autocommit=True)
    with conn.cursor() as cur:
        for sql in ["SET SESSION binlog_format = 'STATEMENT'", *statements]:
            cur.execute(sql)
    conn.close()
    return source, [str(p) for p in source.binlog_files()]


def _same(source, tidb, table="t") -> None:
    assert table_rows(source, "ss", table) == table_rows(tidb, "ss", table)


def test_statement_logged_changes_run_in_the_sources_session(mariadb_factory, tidb_factory):
    source, files = _source(mariadb_factory, [
        # sql_mode by name: || concatenates, and a backslash is a character
        "SET SESSION sql_mode = 'PIPES_AS_CONCAT,NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES'",
        "UPDATE ss.t SET s = s || 'b\\c' WHERE id = 1",
        "SET SESSION sql_mode = DEFAULT",
        # SET TIMESTAMP (a time TiDB's float64 read gave .102133: TiDBDialect.timestamp)
        "SET TIMESTAMP = 1764300290.102134",
        "INSERT INTO ss.t (id, at) VALUES (2, NOW(6))",
        "SET TIMESTAMP = DEFAULT",
        "SELECT LAST_INSERT_ID(41)",
        "INSERT INTO ss.t (id, n) VALUES (3, LAST_INSERT_ID())",        # LAST_INSERT_ID 41
        "INSERT INTO ss.t (id, r) VALUES (4, RAND())",                  # the RAND seeds
        "SET @v = 'ü€'",
        "INSERT INTO ss.t (id, s) VALUES (5, @v)",                      # a user variable
        "SET SESSION time_zone = '+05:00'",
        "INSERT INTO ss.t (id, at) VALUES (6, FROM_UNIXTIME(86400))",   # the time zone
    ])
    assert source.query("SELECT s FROM ss.t WHERE id = 1") == [("ab\\c",)]
    assert source.query("SELECT UNIX_TIMESTAMP(at) FROM ss.t WHERE id = 2")[0][0] == Decimal("1764300290.102134")
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "6 statement-logged change(s)" in err, err
    _same(source, tidb)


@pytest.mark.parametrize("session, statement, says", [
    (["SET SESSION lc_time_names = 'de_DE'"], "UPDATE ss.t SET s = DATE_FORMAT('2024-01-01', '%W') WHERE id = 1",
     "with lc_time_names number 4 (sql/sql_locale.cc), TiDB has only en_US"),
    ([], "INSERT INTO ss.ai (v) VALUES (7)",
     "generated auto-increment values on the source (INSERT_ID 1); TiDB ignores SET INSERT_ID"),
    (["SET SESSION sql_mode = 'EMPTY_STRING_IS_NULL'"], "UPDATE ss.t SET s = '' WHERE id = 1",
     "TiDB has no sql_mode EMPTY_STRING_IS_NULL"),
    (["SET NAMES latin1"], "UPDATE ss.t SET s = 'caf' WHERE id = 1",
     "with collation_connection latin1_swedish_ci, which TiDB does not have"),
], ids=["lc_time_names", "insert_id", "sql_mode", "collation"])
def test_what_tidb_cannot_run_as_the_source_did_stops_naming_it(mariadb_factory, tidb_factory, session,
                                                                 statement, says):
    source, files = _source(mariadb_factory, ["UPDATE ss.t SET n = 1 WHERE id = 1", *session, statement])
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert says in err and statement.split(" WHERE")[0] in err, err
    assert "QUERY_EVENT" in err, err
    # the statement before it committed, the failing one not
    assert tidb.query("SELECT id, s, n FROM ss.t") == [(1, "a", 1)]


def test_map_collation_runs_a_session_tidb_lacks_the_collation_of(mariadb_factory, tidb_factory):
    """A latin1 client's session (latin1_swedish_ci) with --map-collation
    latin1_swedish_ci=latin1_bin: an ASCII statement runs, its row equal to the source's;
    one with latin1 bytes above 0x7F stops naming it (TiDB would read them as UTF-8:
    error 1366 for 'caf\\xE9', or another text)."""
    source, files = _source(mariadb_factory, ["UPDATE ss.t SET s = 'cafe' WHERE id = 1",
                                              "UPDATE ss.t SET s = 'caf\u00e9' WHERE id = 2"], "latin1")
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, "--map-collation", "latin1_swedish_ci=latin1_bin", *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "in latin1 with bytes above 0x7F, which TiDB reads as UTF-8" in err, err
    assert "UPDATE ss.t SET s = 'caf" in err and "WHERE id = 2" in err, err
    assert tidb.query("SELECT id, s FROM ss.t") == [(1, "cafe")]
    assert source.query("SELECT id, s FROM ss.t WHERE id = 1") == [(1, "cafe")]


# -- replayed DDL: what the source created -------------------------------------------------------

DDL = [
    "CREATE DATABASE c1",                                   # collation_server: utf8mb4_general_ci
    "CREATE DATABASE c2 CHARACTER SET utf8",                # MariaDB's utf8mb3_general_ci
    "CREATE TABLE c1.t (id INT PRIMARY KEY, a VARCHAR(5), b VARCHAR(5) CHARACTER SET utf8mb3, "
    "c NCHAR(3), d VARCHAR(5) CHARACTER SET latin1 COLLATE latin1_bin, "
    "e VARCHAR(5) CHARACTER SET utf8mb4 BINARY, g TEXT COLLATE utf8mb4_unicode_ci)",
    "CREATE TABLE c2.u (id INT PRIMARY KEY, v TEXT)",       # the database's utf8_general_ci
    "ALTER TABLE c1.t ADD COLUMN f VARCHAR(5) CHARACTER SET utf8mb4, MODIFY a VARCHAR(6)",
    "ALTER TABLE c2.u CONVERT TO CHARACTER SET utf8mb4",    # (TiDB refuses utf8mb4 -> utf8: 8200)
]


def test_replayed_ddl_creates_the_sources_collations_on_tidb(mariadb_factory, tidb_factory):
    """Databases, tables and columns created without a collation get MariaDB's defaults
    (utf8mb4_general_ci, utf8_general_ci; TiDB's are the _bin ones): on TiDB the same
    collations as the source's information_schema says, column by column."""
    source = mariadb_factory(UTF8MB4)
    for sql in DDL:
        source.execute(sql)
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *[str(p) for p in source.binlog_files()])
    assert done.returncode == 0, done.stderr.decode()
    expected = collations(source, ["c1", "c2"])
    assert expected["c1"] == "utf8mb4_general_ci" and expected["c1.t.c"] == ("utf8", "utf8_general_ci")
    assert collations(tidb, ["c1", "c2"]) == expected


def test_a_collation_tidb_lacks_stops_the_ddl_unless_mapped(mariadb_factory, tidb_factory):
    """MariaDB's own default, latin1_swedish_ci, which TiDB lacks: CREATE DATABASE without a
    charset stops naming it and the source's collation_server; with --map-collation
    latin1_swedish_ci=latin1_bin the database and table are latin1_bin, with a warning, and
    the row's bytes are the source's (TiDB's latin1 is UTF-8 inside: it serves the bytes as
    they are, so ``CAST(v AS CHAR)`` is no text there; compared as HEX)."""
    source = mariadb_factory({})
    for sql in ["CREATE DATABASE l1", "CREATE TABLE l1.t (id INT PRIMARY KEY, v VARCHAR(5))",
                "INSERT INTO l1.t VALUES (1, 'caf\u00e9')"]:
        source.execute(sql)
    assert collations(source, ["l1"])["l1.t.v"] == ("latin1", "latin1_swedish_ci")
    files = [str(p) for p in source.binlog_files()]
    tidb = tidb_factory()
    done = cli("apply", "--to", tidb.dsn, *files)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "TiDB has no collation latin1_swedish_ci (the source's collation_server" in err, err
    assert "statement: CREATE DATABASE l1" in err and "--map-collation latin1_swedish_ci=latin1_bin" in err, err
    assert tidb.query("SHOW DATABASES LIKE 'l1'") == []
    done = cli("apply", "--to", tidb.dsn, "--map-collation", "latin1_swedish_ci=latin1_bin", *files)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "created on TiDB with latin1_swedish_ci as latin1_bin (--map-collation)" in err, err
    assert collations(tidb, ["l1"]) == {"l1": "latin1_bin", "l1.t": "latin1_bin",
                                        "l1.t.v": ("latin1", "latin1_bin")}
    assert tidb.query("SELECT id, HEX(v) FROM l1.t") == source.query("SELECT id, HEX(v) FROM l1.t") \
        == [(1, "636166E9")]


def test_replayed_ddl_creates_the_sources_collations_on_mariadb(mariadb_factory):
    """A MariaDB target whose server default is utf8mb4: a database the latin1 source
    created without a charset is latin1_swedish_ci there too (the source's collation_server,
    status var Q_CHARSET_CODE), and so its table."""
    source, target = mariadb_factory({}), mariadb_factory(UTF8MB4)
    for sql in ["CREATE DATABASE l2", "CREATE TABLE l2.t (id INT PRIMARY KEY, v VARCHAR(5))"]:
        source.execute(sql)
    done = cli("apply", "--to", dsn(target), *[str(p) for p in source.binlog_files()])
    assert done.returncode == 0, done.stderr.decode()
    expected = collations(source, ["l2"])
    assert expected["l2"] == "latin1_swedish_ci"
    assert collations(target, ["l2"]) == expected
