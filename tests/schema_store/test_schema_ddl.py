"""DDL parsing without a server: splitting, executable comments, markers, errors."""
from __future__ import annotations

import pytest
import sqlglot

from binlog.errors import BinlogError
from schema_store import (
    AddColumn,
    AlterTable,
    Catalog,
    CreateDatabase,
    CreateTable,
    CreateTableSelect,
    DdlParseError,
    DropTable,
    Force,
    Ignored,
    SchemaNotFoundError,
    Use,
    parse_script,
)
from schema_store.lexer import split_statements


def catalog_of(text, **kw):
    c = Catalog()
    c.apply_all(parse_script(text, **kw))
    return c


def test_split_respects_strings_comments_and_delimiter():
    text = ("SET @a='x;y'; -- c;omment\n/* a;b */ SELECT `q;`;\n# hash;\n"
            "DELIMITER ;;\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END;;\nDELIMITER ;\n"
            "SELECT \"d\\\";\";")
    stmts = [s.text for s in split_statements(text)]
    assert stmts == ["SET @a='x;y'", "-- c;omment\n/* a;b */ SELECT `q;`",
                     "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", 'SELECT "d\\";"']
    assert [s.line for s in split_statements(text)] == [1, 1, 5, 7]


def test_executable_comments_are_statement_text():
    c = catalog_of("/*M!999999\\- enable the sandbox mode */\n"
                   "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `d` /*!40100 DEFAULT CHARACTER SET latin1 */;\n"
                   "USE d;\n/*!50001 CREATE TABLE `v` (`x` tinyint NOT NULL) */;\n"
                   "/*!50001 DROP TABLE IF EXISTS `v`*/;\n"
                   "CREATE TABLE t (a text /*M!100301 COMPRESSED*/, b varchar(3)) /*!50100 PARTITION BY KEY () */;")
    assert list(c) == [("d", "t")]
    t = c[("d", "t")]
    assert t.column("a").compressed and t.column("a").charset == "latin1"
    assert c.databases["d"] == ("latin1", "latin1_swedish_ci")


def test_marker_semantics():
    marked = "CREATE TABLE d.t (a timestamp(3) /* mariadb-5.3 */ NULL, b datetime(2), c time, e date)"
    t = catalog_of(marked)[("d", "t")]
    assert [(c.datetime_precision, c.legacy) for c in t.columns] == [(3, True), (2, False), (0, False), (None, None)]
    t = catalog_of(marked.replace(" /* mariadb-5.3 */", ""))[("d", "t")]
    assert [c.legacy for c in t.columns] == [None, None, None, None]
    # the marker inside a string is not a marker for that column
    t = catalog_of("CREATE TABLE d.t (a timestamp COMMENT '/* mariadb-5.3 */')")[("d", "t")]
    assert t.column("a").legacy is False


def test_charset_inheritance():
    c = catalog_of("CREATE DATABASE d CHARACTER SET utf8mb4; CREATE DATABASE e; USE d;"
                   "CREATE TABLE t1 (a char(1), b char(1) COLLATE utf8mb4_bin, c char(1) CHARACTER SET utf8, d int, j json);"
                   "CREATE TABLE t2 (a varchar(2)) DEFAULT CHARSET=latin2;"
                   "CREATE TABLE t3 (a char(2) BINARY, b char(3) CHARACTER SET binary) CHARSET utf8mb4;"
                   "CREATE TABLE e.t4 (a char(1));"
                   "ALTER TABLE t1 CONVERT TO CHARACTER SET latin1")
    t1 = c[("d", "t1")]
    assert [(x.charset, x.collation) for x in t1.columns] == [
        ("latin1", "latin1_swedish_ci")] * 3 + [(None, None), ("utf8mb4", "utf8mb4_bin")]
    assert c[("d", "t2")].column("a").collation == "latin2_general_ci"
    t3 = c[("d", "t3")]
    assert (t3.column("a").collation, t3.column("b").data_type, t3.column("b").charset) == (
        "utf8mb4_bin", "binary", None)
    assert c[("e", "t4")].column("a").charset is None       # database default unknown


def test_actions_and_kinds():
    acts = parse_script("USE db; CREATE TABLE IF NOT EXISTS t (a int) ; ALTER TABLE t FORCE;"
                        "CREATE TABLE s SELECT * FROM t; INSERT INTO t VALUES (1);"
                        "CREATE OR REPLACE VIEW v AS SELECT 1; LOCK TABLES t WRITE; DROP TABLE t, s",
                        source="x.sql")
    kinds = [type(a) for a in acts]
    assert kinds == [Use, CreateTable, AlterTable, CreateTableSelect, Ignored, Ignored, Ignored, DropTable]
    assert acts[1].if_not_exists and acts[1].schema.db == "db"
    assert acts[2].ops == (Force("FORCE"),)
    assert [a.kind for a in acts if isinstance(a, Ignored)] == ["INSERT", "CREATE VIEW", "LOCK"]
    c = Catalog()
    assert c.apply_all(acts[:3]) == [("db", "t")]
    assert c.apply(acts[3]) == [("db", "s")] and ("db", "s") not in c
    assert c.apply(acts[-1]) == [("db", "t")] and len(c) == 0
    assert acts[4].where == "x.sql:1"


def test_alter_positions_and_pk():
    c = catalog_of("CREATE TABLE d.t (a int, b int, PRIMARY KEY (a));"
                   "ALTER TABLE d.t ADD c int FIRST, ADD COLUMN e int AFTER a, CHANGE a aa bigint, "
                   "MODIFY b smallint FIRST")
    t = c[("d", "t")]
    assert t.column_names == ("b", "c", "aa", "e")
    assert t.primary_key == ("aa",) and t.column("aa").nullable is False


def test_unparseable_create_raises_with_location():
    with pytest.raises(DdlParseError) as ei:
        parse_script("USE d;\n\nCREATE TABLE t (a int,\n b frobnicate(3))", source="dump.sql")
    assert isinstance(ei.value, BinlogError)
    msg = str(ei.value)
    assert "dump.sql:3" in msg and "CREATE TABLE t (a int," in msg and "frobnicate" in msg
    with pytest.raises(DdlParseError):
        parse_script("ALTER TABLE t FROBNICATE x")


def test_unknown_table_for_alter():
    with pytest.raises(SchemaNotFoundError):
        catalog_of("ALTER TABLE d.nope ADD COLUMN x int")
    assert len(catalog_of("ALTER TABLE IF EXISTS d.nope ADD COLUMN x int")) == 0


def test_create_database_action():
    (a,) = parse_script("CREATE SCHEMA IF NOT EXISTS `x y` DEFAULT COLLATE utf8mb4_bin")
    assert a == CreateDatabase("x y", "utf8mb4", "utf8mb4_bin", if_not_exists=True, where="line 1")


def test_add_column_action():
    (a,) = parse_script("ALTER TABLE t ADD COLUMN `we``ird` decimal(5,2) unsigned NOT NULL AFTER `x`",
                        default_db="d")
    (op,) = a.ops
    assert isinstance(op, AddColumn) and op.after == "x" and a.db == "d"
    assert (op.col.name, op.col.numeric_precision, op.col.numeric_scale, op.col.unsigned,
            op.col.nullable) == ("we`ird", 5, 2, True, False)


@pytest.mark.parametrize("sql", [
    "CREATE TABLE t (a int NOT NULL, b varchar(10) DEFAULT 'x', c datetime(3), PRIMARY KEY (a), KEY (b))",
    "CREATE TABLE `q`.`t` (`a b` bigint unsigned, c enum('x','y'), d decimal(5,1)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
])
def test_column_names_agree_with_sqlglot(sql):
    """sqlglot parses these plain statements too: an independent check of our column list."""
    expr = sqlglot.parse_one(sql, read="mysql")
    names = [c.name for c in expr.this.expressions if isinstance(c, sqlglot.exp.ColumnDef)]
    (a,) = parse_script(sql, default_db="q")
    assert list(a.schema.column_names) == names
