#!/usr/bin/env python3
"""The decoder benchmark (`make bench`): one run, one core, every contender on the same
binlog; writes bench/results.json and prints a Markdown table for BENCHMARKS.md.

    python bench/run.py [--data bench/data] [--pmr-rows 100000] [--skip-pmr]

Contenders, each pinned to CPU 0 with taskset:
  json        binlog dump --format json > /dev/null
  json-pure   the same with BINLOG_PURE=1 (no compiled walk)
  api         decode-only Python API: for change in BinlogReader(...).changes(): pass
  mariadb     mariadb-binlog -v --base64-output=decode-rows > /dev/null
  filtered    binlog dump --format json --table bench.t3 (1 of 10 tables)
  pmr         python-mysql-replication streaming the same binlog from a real mariadbd
              (first --pmr-rows rows: it is slow; rows/s is what is compared)
  rss-1gib    peak RSS of binlog dump --format json on 1 GiB (5 x the binlog)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def run(cmd, env=None, stdout=subprocess.DEVNULL) -> tuple[float, int | None]:
    """Wall seconds and peak RSS (KiB, from GNU time's %M) of one command."""
    with tempfile.NamedTemporaryFile("r") as rss_file:
        timer = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name] if Path("/usr/bin/time").exists() else []
        started = time.perf_counter()
        proc = subprocess.run(timer + PIN + cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()[-2000:]}")
        text = rss_file.read().strip().splitlines()
    return wall, int(text[-1]) if text and text[-1].isdigit() else None


def count_rows(binlog: Path, extra: list[str]) -> int:
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *extra, str(binlog)],
                         stdout=subprocess.PIPE, check=True).stdout
    return out.count(b"\n")


def api_script(binlog: Path, extra: str) -> list[str]:
    code = (f"from binlog.reader import BinlogReader\n{extra}\n"
            f"n = sum(1 for _ in BinlogReader([{str(binlog)!r}], schema=schema).changes())\n"
            "print(n)")
    return [sys.executable, "-c", code]


def pmr_rate(binlog: Path, limit: int) -> tuple[float, int]:
    """Serve the binlog from a real mariadbd and stream it with python-mysql-replication."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
    from support.mariadb_server import MariaDBServer

    srv = MariaDBServer({"binlog_row_metadata": "FULL"}).start()
    try:
        srv.execute("CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'bench'")
        srv.execute("GRANT ALL ON *.* TO 'bench'@'127.0.0.1'")
        srv.flush_logs()
        srv.stop()
        # Hand the server our binlog as its next file: the index lists it, so it serves it.
        name = "mariadb-bin.999999"
        shutil.copy(binlog, srv.binlog_dir / name)
        index = next(srv.binlog_dir.glob("*.index"))
        index.write_text(index.read_text() + f"{srv.binlog_dir / name}\n")
        srv.start()
        stream = BinLogStreamReader(
            connection_settings={"host": "127.0.0.1", "port": srv.port, "user": "bench",
                                 "passwd": "bench"},
            server_id=4243, blocking=False, resume_stream=True, log_file=name, log_pos=4,
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent])
        rows = 0
        started = time.perf_counter()
        for event in stream:
            for _ in event.rows:
                rows += 1
            if rows >= limit:
                break
        wall = time.perf_counter() - started
        stream.close()
        return wall, rows
    finally:
        srv.cleanup()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--pmr-rows", type=int, default=100_000)
    parser.add_argument("--skip-pmr", action="store_true")
    args = parser.parse_args(argv)
    if not (args.data / "mysql56").is_dir():
        subprocess.run([sys.executable, str(REPO / "bench" / "generate.py"), "--out", str(args.data)],
                       check=True)
    binlog = next((args.data / "mysql56").glob("mariadb-bin.0*"))
    legacy = next((args.data / "legacy").glob("mariadb-bin.0*"))
    schema_sql = args.data / "legacy" / "schema.sql"
    dump = [sys.executable, "-m", "binlog.cli", "dump", "--format", "json"]
    pure = dict(os.environ, BINLOG_PURE="1")
    rows = count_rows(binlog, [])
    results = {"file": binlog.name, "bytes": binlog.stat().st_size, "rows": rows,
               "cpu": "1 core (taskset -c 0)" if PIN else "unpinned"}

    def record(name, wall, nrows, rss=None, command=""):
        results[name] = {"seconds": round(wall, 2), "rows": nrows,
                         "rows_per_s": round(nrows / wall), "peak_rss_mib": rss and round(rss / 1024),
                         "command": command}
        print(f"{name:10s} {wall:8.2f} s {nrows / wall:12,.0f} rows/s", flush=True)

    wall, rss = run(dump + [str(binlog)])
    record("json", wall, rows, rss, "binlog dump --format json FILE > /dev/null")
    wall, rss = run(dump + [str(binlog)], env=pure)
    record("json-pure", wall, rows, rss, "BINLOG_PURE=1 binlog dump --format json FILE > /dev/null")
    wall, rss = run(api_script(binlog, "schema = None"))
    record("api", wall, rows, rss, "for change in BinlogReader([FILE]).changes(): pass")
    wall, rss = run(["mariadb-binlog", "-v", "--base64-output=decode-rows", str(binlog)])
    record("mariadb", wall, rows, rss, "mariadb-binlog -v --base64-output=decode-rows FILE > /dev/null")
    kept = count_rows(binlog, ["--table", "bench.t3"])
    wall, rss = run(dump + ["--table", "bench.t3", str(binlog)])
    record("filtered", wall, kept, rss, "binlog dump --format json --table bench.t3 FILE > /dev/null")
    legacy_rows = count_rows(legacy, ["--schema-ddl", str(schema_sql)])
    wall, rss = run(dump + ["--schema-ddl", str(schema_sql), str(legacy)])
    record("legacy", wall, legacy_rows, rss,
           "binlog dump --format json --schema-ddl schema.sql LEGACY_FILE > /dev/null")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):   # 5 x 205 MB in one directory: a 1 GiB input
            os.symlink(binlog, Path(tmp) / f"mariadb-bin.{i + 1:06d}")
        wall, rss = run(dump + [tmp])
        record("rss-1gib", wall, rows * 5, rss, "binlog dump --format json DIR_OF_5_COPIES > /dev/null")
    if not args.skip_pmr:
        wall, nrows = pmr_rate(binlog, args.pmr_rows)
        record("pmr", wall, nrows, None,
               f"python-mysql-replication BinLogStreamReader from a local mariadbd, first {nrows} rows")
    (REPO / "bench" / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
