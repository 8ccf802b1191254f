"""Apply lag: ``binlog apply --from A --to B --stop-never`` while A takes a steady load.

    python bench/apply_lag_bench.py [--rate 200] [--seconds 20]

Two throw-away local mariadbd.  A writer commits ``--rate`` single-row transactions per
second on A for ``--seconds`` (each row carries its id); every 0.25 s a sampler reads
the highest id applied on B; the lag of a sample is the time since A committed the
first row B does not have yet (0 when B has everything committed so far).  Prints the
median, 95th percentile and maximum lag over the run and the time B needed after the
last commit to have every row.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.mariadb_server import MariaDBServer  # noqa: E402


def dsn(srv) -> str:
    return f"mysql://root@localhost/?unix_socket={srv.socket}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    with MariaDBServer({"binlog_row_metadata": "FULL"}) as a, MariaDBServer({}) as b:
        a.execute("CREATE DATABASE lag")
        a.execute("CREATE TABLE lag.t (id INT PRIMARY KEY, pad VARCHAR(100))")
        proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--from", dsn(a),
                                 "--server-id", "911", "--stop-never", "--heartbeat", "0.5",
                                 "--to", dsn(b), "--quiet"], cwd=REPO)
        committed: list[float] = []         # committed[i]: when row i+1 was committed on A
        done = threading.Event()

        def write() -> None:
            conn = a.connect()
            cur = conn.cursor()
            start = time.monotonic()
            n = int(args.rate * args.seconds)
            for i in range(1, n + 1):
                delay = start + i / args.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                cur.execute("INSERT INTO lag.t VALUES (%s, REPEAT('x', 100))", (i,))
                committed.append(time.monotonic())
            conn.close()
            done.set()

        writer = threading.Thread(target=write)
        samples: list[float] = []
        try:
            while _applied(b) < 0:      # until apply created the table
                time.sleep(0.1)
            writer.start()
            while not done.is_set():
                time.sleep(0.25)
                have = len(committed)
                applied = _applied(b)
                now = time.monotonic()
                samples.append(now - committed[applied] if applied < have else 0.0)
            last = committed[-1]
            while _applied(b) < len(committed):
                time.sleep(0.05)
            drain = time.monotonic() - last
        finally:
            proc.kill()
            proc.wait()
        samples.sort()
        p95 = samples[int(len(samples) * 0.95) - 1]
        achieved = (len(committed) - 1) / (committed[-1] - committed[0])
        print(f"{len(committed)} transactions, asked {args.rate}/s, achieved {achieved:.0f}/s; "
              f"lag median {statistics.median(samples):.2f} s, p95 {p95:.2f} s, "
              f"max {samples[-1]:.2f} s; all applied {drain:.2f} s after the last commit")


def _applied(b) -> int:
    import pymysql

    try:
        return b.query("SELECT COUNT(*) FROM lag.t")[0][0]
    except pymysql.err.ProgrammingError:
        return -1           # the table is not there yet


if __name__ == "__main__":
    main()
