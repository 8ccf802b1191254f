"""The regression reported in the article this project started from ("从主从复制层面看
MySQL / MariaDB 对时间精度支持的演进"): `test2 (ct TIMESTAMP(2))` holding
'2022-11-10 21:12:33.99', written by MariaDB with mysql56_temporal_format=OFF.

A reader that assumes a legacy TIMESTAMP is 4 little-endian bytes (python-mysql-replication,
go-mysql, mysql-binlog-connector-java) turns it into a wrong date plus a phantom all-NULL
row, with no error.  We must decode the one row exactly - with the schema from the binlog's
own CREATE TABLE, from a dump, or inferred - and refuse the N=0 reading."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from binlog.reader import BinlogReader
from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"
BINLOG = SAMPLES / "seed_tt_test2.binlog"
DUMP = SAMPLES / "seed_tt_test2.schema.sql"


def rows(schema=None, **kw):
    return [(c.table, c.op, c.after) for c in BinlogReader([BINLOG], schema=schema, **kw).changes()]


def test_test2_decodes_exactly_from_the_binlogs_own_ddl():
    # Column names come from the schema when the TABLE_MAP has none (binlog_row_metadata unset).
    assert rows(SchemaResolver(SchemaStore())) == [
        ("tt", "insert", {"ct": "2022-11-02 11:11:22.326147", "st": None, "st2": None}),
        ("test2", "insert", {"ct": "2022-11-10 21:12:33.99"}),
    ]


def test_test2_decodes_exactly_from_a_dump():
    store = SchemaStore()
    store.import_ddl(DUMP.read_text(), source="ddl:seed")
    got = rows(SchemaResolver(store, track_ddl=False))
    assert got == [("tt", "insert", {"ct": "2022-11-02 11:11:22.326147", "st": None, "st2": None}),
                   ("test2", "insert", {"ct": "2022-11-10 21:12:33.99"})]


def test_the_peers_reading_is_a_wrong_date_and_a_phantom_row():
    """What N=0 (4 LE bytes) makes of the same bytes - forced by a manual override - is
    exactly the peers' failure; --infer-precision rejects that reading."""
    store = SchemaStore()
    store.set_override("test", "test2", 1, "timestamp", 0)
    store.set_override("test", "tt", 1, "timestamp", 6)
    test2 = [r for r in rows(SchemaResolver(store, track_ddl=False)) if r[0] == "test2"]
    assert len(test2) == 2                                   # one phantom row
    assert test2[0][2]["@1"] != "2022-11-10 21:12:33.99"     # and a wrong date
    assert test2[1][2] == {"@1": None}
    inferred = [r for r in rows(SchemaResolver(SchemaStore(), track_ddl=False), infer_precision=True)
                if r[0] == "test2"]
    assert inferred == [("test2", "insert", {"@1": "2022-11-10 21:12:33.99"})]


def test_cli_infers_and_says_so():
    result = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--no-track-ddl",
                             "--infer-precision", str(BINLOG)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "inferred test.test2 column @1 TIMESTAMP(2)" in result.stderr
    assert "inferred test.tt column @1 TIMESTAMP(6)" in result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    values = [r["after"]["@1"] for r in records if r["op"] == "insert"]
    assert values == ["2022-11-02 11:11:22.326147", "2022-11-10 21:12:33.99"]
