#!/usr/bin/env python3
"""How DDL tracking scales: one CREATE TABLE then N ALTER TABLEs, through `binlog dump` (a subprocess,
so the time includes Python's start-up).

    python bench/ddl_bench.py [--ddl 10000] [--tables 10] [--add-only] [--store PATH]

Builds a binlog (magic, the FORMAT_DESCRIPTION of a real MariaDB 10.11 sample, then QUERY
events with correct framing and CRC32) holding --tables CREATE TABLEs and --ddl ALTER
TABLEs spread round-robin over them (ADD COLUMN / DROP COLUMN in turn, or only ADD
COLUMN with --add-only: each table grows by one column per ALTER), then times `binlog
dump` on it (DDL is tracked by default; --store keeps the versions in an SQLite schema
store instead of memory).  The same run with no ALTER is timed too: the difference is
what the DDLs cost, and it should grow linearly with --ddl (it was quadratic before the store kept versions as deltas).
"""
from __future__ import annotations

import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUERY = 2
SAMPLE = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"


def fde() -> bytes:
    data = SAMPLE.read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")
    return data[:4 + size]


def query_body(db: str, sql: str) -> bytes:
    # QUERY_EVENT post-header (sql/log_event.h): thread_id 4, exec_time 4, db_len 1,
    # error_code 2, status_vars_len 2; then status vars, db, NUL, query text.
    return (struct.pack("<IIBHH", 1, 0, len(db), 0, 0) + db.encode() + b"\0" + sql.encode())


def event(type_code: int, body: bytes, pos: int) -> bytes:
    size = 19 + len(body) + 4
    raw = struct.pack("<IBIIIH", 1700000000, type_code, 1, size, pos + size, 0) + body
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def statements(ddl: int, tables: int, add_only: bool):
    for t in range(tables):
        yield f"CREATE TABLE t{t} (id INT PRIMARY KEY, v VARCHAR(10), ts DATETIME(3))"
    for i in range(ddl):
        t = i % tables
        n = i // tables
        if n % 2 == 0 or add_only:
            yield f"ALTER TABLE t{t} ADD COLUMN c{n} INT"
        else:
            yield f"ALTER TABLE t{t} DROP COLUMN c{n - 1}"


def build(ddl: int, tables: int, add_only: bool = False) -> bytes:
    out = bytearray(fde())
    for sql in statements(ddl, tables, add_only):
        out += event(QUERY, query_body("bench", sql), len(out))
    return bytes(out)


def timed_dump(path: Path, store: str | None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code): CPU time is what a shared,
    loaded machine changes least."""
    argv = [sys.executable, "-m", "binlog.cli", "dump", str(path)]
    argv += ["--schema-store", store] if store else []
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddl", type=int, default=10000)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--add-only", action="store_true", help="every ALTER adds a column")
    ap.add_argument("--store", metavar="PATH", help="a new SQLite schema store (default: memory)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base-bin.000001"
        base.write_bytes(build(0, args.tables))
        path = Path(tmp) / "ddl-bin.000001"
        path.write_bytes(build(args.ddl, args.tables, args.add_only))
        store = str(Path(tmp) / "base.db") if args.store else None
        idle_wall, idle_cpu, _ = timed_dump(base, store)
        wall, cpu, code = timed_dump(path, args.store)
    per = (cpu - idle_cpu) / max(args.ddl, 1) * 1e3
    print(f"{args.ddl} ALTERs ({'ADD only' if args.add_only else 'ADD/DROP'}) over "
          f"{args.tables} table(s){' (store ' + args.store + ')' if args.store else ''}: "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU ({idle_wall:.2f} / {idle_cpu:.2f} s without "
          f"the ALTERs), {per:.2f} ms CPU per DDL, exit {code}")


if __name__ == "__main__":
    main()
