#!/usr/bin/env python3
"""Generate the benchmark binlogs on a real, local mariadbd (tests/support harness).

    python bench/generate.py [--rows 100000] [--tables 10] [--out bench/data] [--sets SET...]

Three binlog sets by default, each with --tables tables of mixed types, --rows inserted rows per
table, then updates of 20% and deletes of 10% of the rows; the tables are created before
the binlogs start, so no CREATE TABLE is in them (without --schema-ddl their tables are
ones no schema describes: binlog ingest types them from their images):
  bench/data/mysql56/   temporal columns in MySQL 5.6 format (the default)
  bench/data/legacy/    the same tables created with mysql56_temporal_format=OFF
                        (legacy MariaDB 5.3 hires columns) + schema.sql (mariadb-dump)
  bench/data/nometa/    as mysql56/, written with binlog_row_metadata=NO_LOG (the server's
                        default: no column names nor charsets in the TABLE_MAPs - keys @1,
                        @2..., text as {"bytes_hex": ...}): the forensics case
A fourth set, legacy-heavy (``--sets legacy-heavy``; bench/rewrite_bench.py makes it when
it is missing): ten tables of DATETIME(6), TIMESTAMP(3), TIME(2) and DATETIME(3) columns
created with mysql56_temporal_format=OFF beside an id and a short VARCHAR (HEAVY_TABLE),
60,000 rows each by default, the same updates and deletes: about 50 MB, most of whose
bytes are legacy values (``binlog rewrite``'s worst case).
The server is left running only with --keep (python-mysql-replication streams from it).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402

TABLE = """CREATE TABLE {db}.t{n} (
  id INT NOT NULL PRIMARY KEY, a INT, b BIGINT UNSIGNED, c VARCHAR(64), d DECIMAL(12,2),
  e DATETIME(6), f TIMESTAMP(3) NULL, g DOUBLE, h TEXT, i DATE, j ENUM('red','green','blue'),
  k TIME(2), l TINYINT, m CHAR(8)
) CHARACTER SET utf8mb4"""

FILL = """INSERT INTO {db}.t{n}
SELECT seq, CAST(seq AS SIGNED) * 7 - 350000, seq * 1000003, CONCAT('value-', seq, '-', MD5(seq)),
       seq / 7, '2024-01-01 00:00:00.000000' + INTERVAL seq SECOND + INTERVAL (seq % 1000000) MICROSECOND,
       '2023-06-01 12:00:00.000' + INTERVAL seq SECOND, seq / 3.0, REPEAT('x', seq % 50),
       '2000-01-01' + INTERVAL (seq % 9000) DAY, 1 + seq % 3,
       SEC_TO_TIME(CAST(seq % 300000 AS SIGNED) - 150000) + INTERVAL (seq % 100) * 10000 MICROSECOND,
       seq % 128, LPAD(seq % 100000, 8, '0')
FROM {db}.seq_1_to_{rows}"""


HEAVY_TABLE = """CREATE TABLE {db}.t{n} (
  id INT NOT NULL PRIMARY KEY, a DATETIME(6), b TIMESTAMP(3) NULL, c TIME(2), d DATETIME(3),
  note VARCHAR(40)
) CHARACTER SET utf8mb4"""

HEAVY_FILL = """INSERT INTO {db}.t{n}
SELECT seq, '2024-01-01 00:00:00.000000' + INTERVAL seq SECOND + INTERVAL (seq % 1000000) MICROSECOND,
       '2023-06-01 12:00:00.000' + INTERVAL seq SECOND + INTERVAL (seq % 1000) * 1000 MICROSECOND,
       SEC_TO_TIME(CAST(seq % 300000 AS SIGNED) - 150000) + INTERVAL (seq % 100) * 10000 MICROSECOND,
       '2010-03-04 05:06:07.000' + INTERVAL seq MINUTE + INTERVAL (seq % 997) * 1000 MICROSECOND,
       CONCAT('note-', seq)
FROM {db}.seq_1_to_{rows}"""

HEAVY_UPDATE = ("UPDATE {db}.t{n} SET a = a + INTERVAL 1 SECOND, d = d + INTERVAL 1 MINUTE "
                "WHERE id % 5 = 0")
UPDATE = "UPDATE {db}.t{n} SET a = a + 1, c = CONCAT(c, '!'), e = e + INTERVAL 1 SECOND WHERE id % 5 = 0"

#: set name -> (CREATE TABLE, INSERT ... SELECT, UPDATE, tables created with
#: mysql56_temporal_format=OFF, binlog_row_metadata)
SETS = {"mysql56": (TABLE, FILL, UPDATE, False, "FULL"), "legacy": (TABLE, FILL, UPDATE, True, "FULL"),
        "nometa": (TABLE, FILL, UPDATE, False, "NO_LOG"),
        "legacy-heavy": (HEAVY_TABLE, HEAVY_FILL, HEAVY_UPDATE, True, "FULL")}


def generate(out: Path, rows: int, tables: int, legacy: bool, keep: bool, kind: str | None = None):
    table, fill, update, _, metadata = SETS[kind or ("legacy" if legacy else "mysql56")]
    options = {"binlog_row_metadata": metadata, "max_binlog_size": 1 << 30,
               "innodb_buffer_pool_size": "256M", "innodb_flush_log_at_trx_commit": 2,
               "sync_binlog": 0}
    if legacy:
        options["mysql56_temporal_format"] = "OFF"
    srv = MariaDBServer(options).start()
    db = "bench"
    srv.execute(f"CREATE DATABASE {db}")
    for n in range(tables):
        srv.execute(table.format(db=db, n=n))
    if legacy:
        dump = subprocess.run([find_tool("mariadb-dump", "mysqldump"), "-S", str(srv.socket), "-uroot",
                               "--no-data", "--databases", db], capture_output=True, text=True, check=True)
        (out / "schema.sql").write_text(dump.stdout)
    srv.flush_logs()
    first = srv.master_status()[0]
    started = time.time()
    for n in range(tables):
        srv.execute(fill.format(db=db, n=n, rows=rows))
    for n in range(tables):
        srv.execute(update.format(db=db, n=n))
        srv.execute(f"DELETE FROM {db}.t{n} WHERE id % 10 = 3")
    srv.flush_logs()
    names = srv.binlog_names()
    files = [p for p in srv.binlog_files() if names.index(p.name) >= names.index(first)][:-1]
    for path in files:
        shutil.copy(path, out / path.name)
    (out / "mariadb-bin.index").write_text("".join(f"{p.name}\n" for p in files))
    size = sum(p.stat().st_size for p in files)
    print(f"{out}: {len(files)} file(s), {size / 1e6:.1f} MB in {time.time() - started:.0f} s "
          f"on {srv.version}", flush=True)
    if keep:
        return srv
    srv.cleanup()
    return None


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=["mysql56", "legacy", "nometa"])
    args = parser.parse_args(argv)
    for kind in args.sets:
        generate_set(args.out, kind, args.rows, args.tables)


def generate_set(data: Path, kind: str, rows: int, tables: int = 10) -> Path:
    """One set into data/KIND (emptied first); its directory."""
    out = data / kind
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    generate(out, rows, tables, SETS[kind][3], keep=False, kind=kind)
    return out


if __name__ == "__main__":
    main()
