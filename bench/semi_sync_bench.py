"""``binlog fetch --semi-sync`` against plain ``binlog fetch``, on one local mariadbd.

    taskset -c 0 python bench/semi_sync_bench.py [--commits 1000] [--mb 100] [--runs 2]

1. Commit latency: one connection commits ``--commits`` single-row inserts while a fetcher
   follows the server (``--stop-never``).  Contenders, alternating: the primary
   asynchronous (rpl_semi_sync_master_enabled=OFF) with ``binlog fetch``, and the
   primary semi-synchronous (ON, timeout 10 s) with ``binlog fetch --semi-sync``, where
   every commit waits until the fetcher fsync'ed the transaction and acknowledged it.
   Checked: the server's Rpl_semi_sync_master_yes_tx grew by the number of commits and
   _no_tx did not.
2. Catch-up copy: ``--mb`` MB of binlog written beforehand (transactions of 2,000 1 KB
   rows) copied into an empty directory, with and without ``--semi-sync`` (the server
   asks for no acknowledgement for transactions nobody waits for).

Every relay is compared with the server's files.
"""
from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.mariadb_server import MariaDBServer  # noqa: E402

FDE_FLAGS = 4 + 17


def fetch_cmd(srv, out: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "binlog.cli", "fetch", "--from",
            f"mysql://root@localhost/?unix_socket={srv.socket}", "--to", str(out),
            "--server-id", "931", *extra]


def status(srv, name: str) -> int:
    return int(srv.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def caught_up(srv, out: Path) -> bool:
    return all((out / p.name).exists() and (out / p.name).stat().st_size == p.stat().st_size
               for p in srv.binlog_files())


def wait(condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("waited too long")
        time.sleep(0.05)


def identical(srv, out: Path) -> bool:
    active = srv.master_status()[0]
    for path in srv.binlog_files():
        theirs = bytearray(path.read_bytes())
        if path.name == active:
            theirs[FDE_FLAGS] &= ~1
        if (out / path.name).read_bytes() != bytes(theirs):
            return False
    return True


def commit_latency(srv, semi: bool, commits: int, first_key: int) -> dict:
    srv.execute(f"SET GLOBAL rpl_semi_sync_master_enabled = {'ON' if semi else 'OFF'}")
    out = Path(tempfile.mkdtemp(prefix="semi-bench-"))
    proc = subprocess.Popen(fetch_cmd(srv, out, "--stop-never", "--heartbeat", "0.5",
                                      *(["--semi-sync"] if semi else [])), cwd=REPO)
    conn = srv.connect()
    try:
        wait(lambda: caught_up(srv, out))
        with conn.cursor() as cur:
            if semi:
                wait(lambda: status(srv, "Rpl_semi_sync_master_clients") == 1)
                cur.execute("INSERT INTO bench.c VALUES (%s)", (first_key,))   # switches semi-sync on
                wait(lambda: srv.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'")[0][1] == "ON")
            yes, no = status(srv, "Rpl_semi_sync_master_yes_tx"), status(srv, "Rpl_semi_sync_master_no_tx")
            latencies = []
            started = time.perf_counter()
            for key in range(first_key + 1, first_key + 1 + commits):
                t = time.perf_counter()
                cur.execute("INSERT INTO bench.c VALUES (%s)", (key,))
                latencies.append(time.perf_counter() - t)
            elapsed = time.perf_counter() - started
        acked = status(srv, "Rpl_semi_sync_master_yes_tx") - yes
        waited_out = status(srv, "Rpl_semi_sync_master_no_tx") - no
        wait(lambda: caught_up(srv, out))
    finally:
        conn.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    ok = identical(srv, out)
    shutil.rmtree(out)
    latencies.sort()
    return {"tx/s": commits / elapsed, "median ms": statistics.median(latencies) * 1e3,
            "p95 ms": latencies[int(len(latencies) * 0.95)] * 1e3, "acked": acked,
            "no_tx": waited_out, "identical": ok}


def catch_up(srv, semi: bool, total: int) -> tuple[float, bool]:
    out = Path(tempfile.mkdtemp(prefix="semi-bench-"))
    try:
        started = time.perf_counter()
        subprocess.run(fetch_cmd(srv, out, *(["--semi-sync"] if semi else [])), cwd=REPO, check=True)
        seconds = time.perf_counter() - started
        return total / 1e6 / seconds, identical(srv, out)
    finally:
        shutil.rmtree(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    with MariaDBServer({"max_binlog_size": "64M", "rpl_semi_sync_master_timeout": 10000}) as srv:
        srv.execute("CREATE DATABASE bench")
        srv.execute("CREATE TABLE bench.c (id INT PRIMARY KEY)")
        srv.execute("CREATE TABLE bench.t (id INT PRIMARY KEY, pad VARCHAR(1000))")
        rows = args.mb * 1000 * 1000 // 1100
        for first in range(0, rows, 2000):
            srv.execute(f"INSERT INTO bench.t SELECT seq, REPEAT(CHAR(65 + seq % 26), 1000) "
                        f"FROM bench.seq_{first + 1}_to_{min(first + 2000, rows)}")
        srv.flush_logs()
        total = sum(p.stat().st_size for p in srv.binlog_files())
        print(f"catch-up data: {len(srv.binlog_files())} files, {total / 1e6:.1f} MB")
        key = 0
        for run in range(args.runs):
            for semi in (False, True):
                name = "fetch --semi-sync" if semi else "fetch"
                rate, ok = catch_up(srv, semi, total)
                print(f"run {run + 1}: catch-up {name}: {rate:.1f} MB/s, identical: {ok}", flush=True)
        for run in range(args.runs):
            for semi in (False, True):
                name = "semi-sync primary + fetch --semi-sync" if semi else "async primary + fetch"
                result = commit_latency(srv, semi, args.commits, key)
                key += args.commits + 1
                print(f"run {run + 1}: {name}: " + ", ".join(
                    f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()),
                    flush=True)


if __name__ == "__main__":
    main()
