"""``binlog ingest``'s lake made by the compiled walk holds the same rows as the one made
the Python way (``BINLOG_PURE=1``: every value decoded and typed in Python), read back
by DuckDB: ``changes/`` and every table of ``tables/``, the same schemas and the same
rows (``EXCEPT ALL`` both ways), over every sample binlog."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.compiled import require_compiled
from support.paths import REPO

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

pytestmark = pytest.mark.usefixtures("compiled")

SAMPLES = REPO / "samples" / "mariadb-10.11"
SCHEMA_DDL = [SAMPLES / "temporal_predump.schema.sql", SAMPLES / "seed_tt_test2.schema.sql"]


def ingest(out: Path, pure: bool) -> None:
    env = dict(os.environ)
    env.pop("BINLOG_PURE", None)
    if pure:
        env["BINLOG_PURE"] = "1"
    cmd = [sys.executable, "-m", "binlog.cli", "ingest", "--engine", "local", "--no-progress",
           "--to", str(out), str(SAMPLES)]
    for ddl in SCHEMA_DDL:
        cmd += ["--schema-ddl", str(ddl)]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 3), done.stderr       # 3: damaged samples reported in errors/


@pytest.fixture(scope="module")
def lakes(tmp_path_factory):
    require_compiled()                  # before the two ingests: without the build there is no subject
    base = tmp_path_factory.mktemp("lakes")
    ingest(base / "compiled", pure=False)
    ingest(base / "pure", pure=True)
    return base / "compiled", base / "pure"


def parts(lake: Path) -> list[str]:
    return ["changes"] + sorted(f"tables/{p.name}" for p in (lake / "tables").iterdir())


def test_same_rows_in_every_output(lakes):
    compiled, pure = lakes
    assert parts(compiled) == parts(pure)
    assert len(parts(compiled)) > 20
    con = duckdb.connect()
    checked = 0
    for part in parts(compiled):
        def rows(lake, part=part):
            glob = str(lake / part / "**" / "*.parquet").replace("'", "''")
            return f"SELECT * FROM read_parquet('{glob}', hive_partitioning = false)"
        assert con.execute(f"DESCRIBE {rows(compiled)}").fetchall() == \
            con.execute(f"DESCRIBE {rows(pure)}").fetchall(), part
        for a, b in ((compiled, pure), (pure, compiled)):
            extra = con.execute(f"SELECT count(*) FROM ({rows(a)} EXCEPT ALL {rows(b)})").fetchone()[0]
            assert extra == 0, (part, a.name)
        checked += con.execute(f"SELECT count(*) FROM ({rows(compiled)})").fetchone()[0]
    assert checked > 1000
