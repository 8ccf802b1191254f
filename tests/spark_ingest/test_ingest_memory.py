"""``binlog ingest --engine local``: memory is bounded by its row groups, not by its input.

A real mariadbd writes a ~40 MB binlog of six tables of mixed types (inserts, updates,
deletes); the local engine ingests it once, and five copies of it (~200 MB, read on
with --allow-gaps), each in a process of its own on one worker: the peak RSS of the
two runs must be the same within a margin, and under 300 MB; as Parquet and as Delta
tables (whose files the tasks write, committed as they are).  And a binlog of the same
rows whose tables were created before it (no DDL inside, no schema given): its tables
are typed from their images (``shredded``), in the same bounds.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO

pytestmark = [pytest.mark.server, pytest.mark.slow]
pytest.importorskip("pyarrow")

TABLE = """CREATE TABLE mem.t{n} (
  id INT NOT NULL PRIMARY KEY, a INT, b BIGINT UNSIGNED, c VARCHAR(64), d DECIMAL(12,2),
  e DATETIME(6), f TIMESTAMP(3) NULL, g DOUBLE, h TEXT, i DATE, j ENUM('red','green','blue'),
  k TIME(2), l TINYINT, m CHAR(8)) CHARACTER SET utf8mb4"""
FILL = """INSERT INTO mem.t{n}
SELECT seq, CAST(seq AS SIGNED) * 7 - 350000, seq * 1000003, CONCAT('value-', seq, '-', MD5(seq)),
       seq / 7, '2024-01-01 00:00:00.000000' + INTERVAL seq SECOND + INTERVAL (seq % 1000000) MICROSECOND,
       '2023-06-01 12:00:00.000' + INTERVAL seq SECOND, seq / 3.0, REPEAT('x', seq % 50),
       '2000-01-01' + INTERVAL (seq % 9000) DAY, 1 + seq % 3,
       SEC_TO_TIME(CAST(seq % 300000 AS SIGNED) - 150000) + INTERVAL (seq % 100) * 10000 MICROSECOND,
       seq % 128, LPAD(seq % 100000, 8, '0')
FROM seq_1_to_{rows}"""
TABLES, ROWS = 6, 33_000

# Peak RSS of a child process, read by its parent (ru_maxrss of the waited children)
MEASURE = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _write(srv, tmp_path_factory, ddl_inside: bool) -> Path:
    """The binlog of the workload; ``ddl_inside``: its CREATE TABLEs are in it."""
    if not ddl_inside:
        srv.execute("CREATE DATABASE mem")
        for n in range(TABLES):
            srv.execute(TABLE.format(n=n))
    srv.flush_logs()
    first = srv.binlog_names()[-1]
    if ddl_inside:
        srv.execute("CREATE DATABASE mem")
    srv.execute("USE mem")
    for n in range(TABLES):
        if ddl_inside:
            srv.execute(TABLE.format(n=n))
        srv.execute(FILL.format(n=n, rows=ROWS))
        srv.execute(f"UPDATE mem.t{n} SET a = a + 1, c = CONCAT(c, '!') WHERE id % 5 = 0")
        srv.execute(f"DELETE FROM mem.t{n} WHERE id % 10 = 3")
    srv.flush_logs()
    srv.execute("DROP DATABASE mem")
    names = srv.binlog_names()
    files = [p for p in srv.binlog_files() if names.index(first) <= names.index(p.name) < len(names) - 1]
    assert len(files) == 1
    target = tmp_path_factory.mktemp("binlog") / "mariadb-bin.000001"
    shutil.copyfile(files[0], target)
    return target


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory, mariadb_server) -> dict[str, Path]:
    """{"schema": a binlog with its DDL inside, "no schema": one without}."""
    return {"schema": _write(mariadb_server, tmp_path_factory, True),
            "no schema": _write(mariadb_server, tmp_path_factory, False)}


def peak_rss_mib(source: Path, out: Path, output: str) -> float:
    out.parent.mkdir()
    cmd = [sys.executable, "-m", "binlog.cli", "ingest", "--engine", "local", "--parallelism", "1",
           "--allow-gaps", "--no-progress", "--to", str(out), "--summary-json", str(out.parent / "s.json"),
           "--format", output, str(source)]
    done = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True,
                          cwd=REPO, check=True)
    code, kib = done.stdout.split()
    assert code == "0", done.stderr
    summary = json.loads((out.parent / "s.json").read_text())
    assert summary["rows"] > 0 and summary["errors"] == 0
    assert len(list(out.glob("tables/mem.t*"))) == TABLES
    return int(kib) / 1024


@pytest.mark.parametrize(("output", "kind"), [("parquet", "schema"), ("delta", "schema"), ("parquet", "no schema")])
def test_peak_rss_is_flat_from_one_to_five_copies(binlogs, tmp_path, output, kind):
    if output == "delta":
        pytest.importorskip("deltalake")
    binlog = binlogs[kind]
    size = binlog.stat().st_size
    assert size > 30e6
    one, five = tmp_path / "one", tmp_path / "five"
    one.mkdir()
    five.mkdir()
    shutil.copyfile(binlog, one / binlog.name)
    for i in range(5):       # copies, not links: the reader refuses one file given twice
        shutil.copyfile(binlog, five / f"mariadb-bin.{i + 1:06d}")
    small = peak_rss_mib(one, tmp_path / "out-one" / "lake", output)
    large = peak_rss_mib(five, tmp_path / "out-five" / "lake", output)
    assert large < small * 1.15 + 16, (small, large)
    assert large < 300, (small, large)
