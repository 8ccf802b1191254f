"""SchemaStore: versions by position, history, overrides, persistence, file ordering."""
from __future__ import annotations

import pytest

from schema_store import ColumnSchema, SchemaError, SchemaStore, TableSchema, position_key
from schema_store.model import table_from_json, table_to_json


def tbl(*cols, db="d", table="t"):
    return TableSchema(db, table, tuple(ColumnSchema(n, dt, datetime_precision=p) for n, dt, p in cols))


V1 = tbl(("a", "int", None), ("t", "time", None))
V2 = tbl(("a", "int", None), ("t", "time", None), ("ts", "timestamp", 3))


def test_file_name_ordering():
    names = ["mariadb-bin.000010", "mariadb-bin.000009", "mariadb-bin.999999", "mariadb-bin.1000000"]
    assert sorted(names, key=lambda n: position_key((n, 4))) == [
        "mariadb-bin.000009", "mariadb-bin.000010", "mariadb-bin.999999", "mariadb-bin.1000000"]
    assert position_key(None) < position_key(("a.000001", 0))


def test_versions_by_position_and_history():
    s = SchemaStore()
    s.add_version(V1, None, source="ddl:x.sql")
    s.add_version(V2, ("mariadb-bin.000010", 500), source="binlog:mariadb-bin.000010:500")
    s.drop_table("d", "t", ("mariadb-bin.000011", 4), source="binlog:mariadb-bin.000011:4")
    assert s.schema("d", "t") .column_names == ("a", "t")
    assert s.schema("d", "t", ("mariadb-bin.000009", 99999)).column_names == ("a", "t")
    assert s.schema("d", "t", ("mariadb-bin.000010", 499)).column_names == ("a", "t")
    assert s.schema("d", "t", ("mariadb-bin.000010", 500)).column_names == ("a", "t", "ts")
    assert s.schema("d", "t", ("mariadb-bin.000011", 4)) is None
    assert s.schema("d", "nope") is None
    assert s.tables(("mariadb-bin.000010", 600)) == [("d", "t")]
    assert s.tables(("mariadb-bin.000012", 0)) == []
    h = s.history("d", "t")
    assert [(p, src, x is None) for p, src, x in h] == [
        (None, "ddl:x.sql", False), (("mariadb-bin.000010", 500), "binlog:mariadb-bin.000010:500", False),
        (("mariadb-bin.000011", 4), "binlog:mariadb-bin.000011:4", True)]
    assert h[1][2].source == "binlog:mariadb-bin.000010:500"


def test_overrides_and_inferred():
    s = SchemaStore()
    s.add_version(V1, None, source="ddl:x")
    s.add_version(V2, ("b.000002", 4), source="binlog")
    s.set_override("d", "t", 2, "TIME", 3, position=("b.000001", 100))
    assert s.schema("d", "t").column("t").datetime_precision is None      # before the override
    assert s.schema("d", "t", ("b.000001", 100)).column("t").datetime_precision == 3
    assert s.schema("d", "t", ("b.000003", 0)).column("t").datetime_precision == 3  # later versions too
    s.record_inferred("d", "t", 2, 5, ("b.000002", 10))                    # 0-based: ts
    got = s.schema("d", "t", ("b.000002", 10))
    assert got.inferred and got.column("ts").datetime_precision == 5
    s.set_override("d", "t", "ts", "timestamp", 6, position=("b.000002", 10))
    assert s.schema("d", "t", ("b.000002", 10)).column("ts").datetime_precision == 6   # manual wins
    assert [o["kind"] for o in s.overrides("d", "t")] == ["override", "inferred", "override"]
    assert s.overrides_for("d", "unknown") == {}
    with pytest.raises(SchemaError):
        s.set_override("d", "t", 0, "TIME", 3)
    with pytest.raises(SchemaError):
        s.set_override("d", "t", 1, "TIME", 7)


def test_persistence_across_reopen(tmp_path):
    path = tmp_path / "schemas.sqlite"
    with SchemaStore(path) as s:
        s.import_ddl("CREATE DATABASE d CHARACTER SET latin1; USE d; CREATE TABLE t (a char(2))",
                     source="init.sql")
        s.set_override("d", "t", "@1", "char", 0)
    with SchemaStore(path) as s:
        t = s.schema("d", "t")
        assert t.column("a").charset == "latin1" and t.source == "ddl:init.sql"
        assert len(s.overrides()) == 1
        # an ALTER script imported at a position builds on the catalog there
        s.import_ddl("ALTER TABLE t ADD COLUMN b char(1)", source="binlog:b.000001:99",
                     position=("b.000001", 99), default_db="d")
    with SchemaStore(path) as s:
        assert s.schema("d", "t", ("b.000001", 99)).column("b").charset == "latin1"
        assert s.schema("d", "t").column("b") is None
        assert len(s.history("d", "t")) == 2


def test_import_ddl_drop_and_catalog_at():
    s = SchemaStore()
    s.import_ddl("CREATE TABLE d.a (x int); CREATE TABLE d.b (x int)", source="base.sql")
    assert s.import_ddl("DROP TABLE d.a; RENAME TABLE d.b TO d.c", source="f", position=("f.000001", 4)) == [
        ("d", "a"), ("d", "b"), ("d", "c")]
    assert s.tables() == [("d", "a"), ("d", "b")]
    assert s.tables(("f.000001", 4)) == [("d", "c")]
    cat = s.catalog_at(("f.000001", 4))
    assert list(cat) == [("d", "c")]


def test_json_round_trip():
    t = TableSchema("d", "t", (ColumnSchema("e", "enum", enum_values=("a", "b'c"), charset="utf8mb4"),
                               ColumnSchema("ts", "timestamp", datetime_precision=3, legacy=True)),
                    primary_key=("e",), source="override", charset="utf8mb4", collation="utf8mb4_bin")
    assert table_from_json(table_to_json(t)) == t
    assert TableSchema.from_json(t.to_json()) == t
