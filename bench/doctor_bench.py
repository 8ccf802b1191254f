"""``binlog doctor`` wall time against a real mariadbd whose binlog holds N rows of a
legacy-format table: the whole binlog read (default --scan-bytes 64 MiB) and a bounded
read (--scan-bytes 8 MiB).  Run: ``taskset -c 0 python bench/doctor_bench.py --rows 1600000``."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.mariadb_server import MariaDBServer  # noqa: E402


def timed(dsn: str, *extra: str) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "doctor", "--from", dsn, "--json", *extra],
                          cwd=REPO, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    doc = json.loads(proc.stdout)
    scan = next(f for f in doc["findings"] if f["check"] == "binlog-scan")["details"]
    return took, scan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_600_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with MariaDBServer({"mysql56_temporal_format": "OFF", "max_binlog_size": "256M"}) as srv:
        srv.execute("CREATE DATABASE b")
        srv.execute("CREATE TABLE b.t (id INT PRIMARY KEY, at DATETIME(6), v VARCHAR(40))")
        srv.execute(f"INSERT INTO b.t SELECT seq, NOW(6), REPEAT('y', 30) FROM b.seq_1_to_{args.rows}")
        size = sum(int(r[1]) for r in srv.query("SHOW BINARY LOGS"))
        dsn = f"mysql://root@localhost/?unix_socket={srv.socket}"
        print(f"binlog: {size / 1e6:.1f} MB, {args.rows} rows")
        for extra in ((), ("--scan-bytes", str(8 << 20))):
            for _ in range(args.runs):
                took, scan = timed(dsn, *extra)
                print(f"doctor {' '.join(extra) or '(defaults)'}: {took:.2f} s, read "
                      f"{scan['bytes_read'] / 1e6:.1f} MB in {scan['events']} events, "
                      f"complete={scan['complete']}")


if __name__ == "__main__":
    main()
