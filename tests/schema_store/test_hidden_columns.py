"""Columns a server logs that CREATE TABLE does not spell out, joined with
hand-made MySQL 8 TABLE_MAPs: functional key parts (hidden VIRTUAL generated columns,
appended after the declared ones), and what a contradiction means when the TABLE_MAP can
decode its rows alone."""
from __future__ import annotations

import pytest
from hostile.build import lenenc, table_map

from binlog.constants import ColumnType as T, EventType
from binlog.cursor import Cursor
from binlog.events.table_map import decode_table_map
from binlog.header import EventHeader, FormatDescription
from schema_store import Catalog, parse_script
from schema_store.errors import SchemaMismatchError
from schema_store.resolver import SchemaResolver, column_attributes
from schema_store.store import SchemaStore


class MySQL8:
    fde = FormatDescription(server_version="8.0.36")


def mysql_table_map(types: bytes, meta: bytes, names=None):
    data = table_map(9, "d", "fi", types, meta)
    if names:
        data += bytes([4]) + lenenc(sum(1 + len(n) for n in names)) + b"".join(
            lenenc(len(n)) + n.encode() for n in names)
    header = EventHeader(0, EventType.TABLE_MAP_EVENT, 1, 19 + len(data), 0, 0)
    return decode_table_map(Cursor(data), MySQL8, header)


DDL = ("CREATE DATABASE d; USE d; CREATE TABLE fi (id INT PRIMARY KEY, name VARCHAR(20), "
       "INDEX ((LOWER(name))), UNIQUE KEY named ((id + 1), name, (UPPER(name))))")
# id INT, name VARCHAR(20) utf8mb4 (80 bytes), three hidden columns (VARCHAR, BIGINT, VARCHAR)
TYPES = bytes([T.LONG, T.VARCHAR, T.VARCHAR, T.LONGLONG, T.VARCHAR])
META = (80).to_bytes(2, "little") * 2 + (80).to_bytes(2, "little")
HIDDEN = ["!hidden!functional_index!0!0", "!hidden!named!0!0", "!hidden!named!2!0"]


def schema_of(ddl: str):
    catalog = Catalog()
    catalog.apply_all(parse_script(ddl))
    return catalog[("d", "fi")]


def test_functional_key_parts_are_hidden_columns_after_the_declared_ones():
    schema = schema_of(DDL)
    assert [c.name for c in schema.columns] == ["id", "name", *HIDDEN]
    assert [c.hidden for c in schema.columns] == [False, False, True, True, True]


def test_the_table_map_of_a_functional_index_table_joins_the_schema():
    event = mysql_table_map(TYPES, META, names=["id", "name", *HIDDEN])
    attrs = column_attributes(event, schema_of(DDL))     # no SchemaMismatchError
    assert set(attrs) == {0, 1, 2, 3, 4} and "name" not in attrs[2]
    unnamed = mysql_table_map(TYPES, META)
    assert [column_attributes(unnamed, schema_of(DDL))[i]["name"] for i in range(5)] == \
        ["id", "name", *HIDDEN]


def test_without_the_hidden_columns_a_contradiction_decodes_from_the_table_map():
    store = SchemaStore()
    store.import_ddl("CREATE DATABASE d; USE d; CREATE TABLE fi (id INT PRIMARY KEY, name VARCHAR(20))",
                     source="ddl:old.sql")
    warnings = []
    resolver = SchemaResolver(store, on_warning=warnings.append)
    event = mysql_table_map(TYPES, META)
    assert resolver.attributes(event, ("binlog.000001", 500)) == {}
    assert resolver.attributes(event, ("binlog.000001", 900)) == {}
    assert len(warnings) == 1 and "TABLE_MAP has 5 columns" in warnings[0]
    assert resolver.disagreements == {"d.fi": 2}


def test_a_contradiction_on_a_legacy_temporal_table_stays_an_error():
    store = SchemaStore()
    store.import_ddl("CREATE DATABASE d; USE d; CREATE TABLE fi (id INT PRIMARY KEY)", source="ddl:old.sql")
    event = mysql_table_map(bytes([T.LONG, T.DATETIME]), b"")
    with pytest.raises(SchemaMismatchError, match="TABLE_MAP has 2 columns"):
        SchemaResolver(store).attributes(event, ("binlog.000001", 500))
