"""``binlog doctor``'s TiDB findings (binlog/doctor/tidb.py) checked against a real TiDB
8.5 (the ``tidb-8.5`` peer): doctor runs on a MariaDB source with a real TiDB as
``--target``, and every finding that says TiDB cannot take something is proven by running
that thing on the TiDB - the source's own ``SHOW CREATE`` text where there is one."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pymysql
import pytest

from binlog.doctor.tidb import CHARSETS
from binlog.replay.tidb.collations import COLLATIONS_8_5

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[3]

SOURCE = [
    "CREATE DATABASE tt CHARACTER SET utf8mb4",
    "CREATE TABLE tt.sw (id INT PRIMARY KEY, v VARCHAR(10)) CHARACTER SET latin1",
    "CREATE TABLE tt.geo (id INT PRIMARY KEY, g GEOMETRY NOT NULL, SPATIAL INDEX sx (g))",
    "CREATE TABLE tt.ft (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY fx (body))",
    "CREATE TABLE tt.l2 (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin2)",
    "CREATE TABLE tt.trg (id INT PRIMARY KEY, v INT)",
    "CREATE TRIGGER tt.bump BEFORE INSERT ON tt.trg FOR EACH ROW SET NEW.v = NEW.v + 1",
    "CREATE TABLE tt.gen (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED, UNIQUE KEY (b))",
]


def doctor(source, *target: str) -> tuple[dict, dict[str, list[dict]]]:
    """(the JSON document, {check: [finding]}) of doctor --from source ``target``."""
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "doctor", "--from",
                           f"mysql://root@localhost/?unix_socket={source.socket}", "--database", "tt",
                           *target, "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    found: dict[str, list[dict]] = {}
    for finding in doc["findings"]:
        if finding["check"].startswith("tidb-") or finding["check"] == "target-collation":
            found.setdefault(finding["check"], []).append(finding)
    return doc, found


@pytest.fixture
def doctored(mariadb_factory, tidb_factory):
    """(source, tidb, {check: [finding]}) of doctor --from source --target tidb."""
    source = mariadb_factory({})
    for sql in SOURCE:
        source.execute(sql)
    tidb = tidb_factory()
    doc, found = doctor(source, "--target", tidb.dsn)
    assert doc["target"]["tidb"] is True and "TiDB-v8.5" in doc["target"]["version"]
    return source, tidb, found


def refused(tidb, sql: str) -> int:
    """The error code TiDB gives ``sql`` (the test fails if TiDB takes it)."""
    with pytest.raises(pymysql.err.MySQLError) as caught:
        tidb.execute(sql)
    return caught.value.args[0]


def create_table(source, table: str) -> str:
    return source.query(f"SHOW CREATE TABLE tt.{table}")[0][1]


def test_each_tidb_finding_is_what_tidb_does(doctored):
    source, tidb, found = doctored
    assert sorted(found) == ["target-collation", "tidb-charset", "tidb-fulltext", "tidb-generated-key",
                             "tidb-spatial", "tidb-spatial-index", "tidb-trigger"]
    tidb.execute("CREATE DATABASE tt")
    tidb.execute("USE tt")
    # tidb-spatial, tidb-spatial-index: no GEOMETRY type, no SPATIAL index (TiDB's parser lacks both)
    assert [f["table"] for f in found["tidb-spatial"]] == ["tt.geo"]
    assert refused(tidb, create_table(source, "geo")) == 1064
    assert refused(tidb, "CREATE TABLE sp (id INT PRIMARY KEY, g BLOB NOT NULL, SPATIAL INDEX (g))") == 1064
    # tidb-fulltext: TiDB takes the CREATE TABLE with a warning and leaves the index out;
    # CREATE FULLTEXT INDEX it refuses
    assert found["tidb-fulltext"][0]["details"]["names"] == ["fx"]
    tidb.execute(create_table(source, "ft"))
    assert ("Warning", 1214, "The used table type doesn't support FULLTEXT indexes") in tidb.query("SHOW WARNINGS")
    assert "FULLTEXT" not in tidb.query("SHOW CREATE TABLE tt.ft")[0][1]
    assert refused(tidb, "CREATE FULLTEXT INDEX fx ON tt.ft (body)") == 8200
    # tidb-charset: latin2 is unknown to TiDB
    assert found["tidb-charset"][0]["details"]["names"] == ["latin2"]
    assert refused(tidb, create_table(source, "l2")) == 1115
    # target-collation (from the TiDB's information_schema.COLLATIONS): MariaDB's default
    # latin1 collation is latin1_swedish_ci, which TiDB with new collations lacks
    assert [f["table"] for f in found["target-collation"]] == ["tt.l2", "tt.sw"]     # (l2: latin2_general_ci)
    assert "latin1_swedish_ci" in create_table(source, "sw")
    assert refused(tidb, create_table(source, "sw")) == 1273
    # tidb-trigger: TiDB's parser has no CREATE TRIGGER
    trigger = source.query("SHOW CREATE TRIGGER tt.bump")[0][2]
    assert refused(tidb, trigger) == 1064
    # tidb-generated-key: the table is taken, a value for its stored generated column is not
    assert found["tidb-generated-key"][0]["details"]["columns"] == ["b"]
    tidb.execute(create_table(source, "gen"))
    assert refused(tidb, "INSERT INTO tt.gen (id, a, b) VALUES (1, 2, 4)") == 3105
    # --target-kind tidb without a connection finds what --target finds (TiDB 8.5's lists)
    _, offline = doctor(source, "--target-kind", "tidb")
    assert {k: [(f["table"], f["details"]) for f in v] for k, v in offline.items()} \
        == {k: [(f["table"], f["details"]) for f in v] for k, v in found.items()}
    assert "not on the target (TiDB 8.5)" in offline["target-collation"][0]["reason"]


def test_the_charsets_and_collations_doctor_and_apply_know_are_tidbs(tidb_factory):
    """The list of TiDB 8.5's collations (doctor --target-kind tidb, apply's translations:
    binlog/replay/tidb/collations.py) is SHOW COLLATION of the real one - names, ids,
    defaults - so a TiDB that changes it fails here; the list of its character sets is
    exactly right at its edges: each listed one is taken, the usual MariaDB ones outside
    it are refused (1115)."""
    tidb = tidb_factory()
    shown = {(name, cid, default == "Yes") for name, _, cid, default, *_ in tidb.query("SHOW COLLATION")}
    assert shown == set(COLLATIONS_8_5)
    tidb.execute("CREATE DATABASE cs")
    for i, charset in enumerate(sorted(CHARSETS)):
        tidb.execute(f"CREATE TABLE cs.t{i} (v VARCHAR(4)) CHARACTER SET {charset}")
    for charset in ("latin2", "utf16", "ucs2", "utf32", "cp1250", "sjis", "big5", "koi8r"):
        assert refused(tidb, f"CREATE TABLE cs.x (v VARCHAR(4)) CHARACTER SET {charset}") == 1115, charset
