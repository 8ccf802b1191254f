"""Fetch throughput: ``binlog fetch`` against ``mariadb-binlog --read-from-remote-server
--raw`` copying the same binlogs from the same local mariadbd (unix socket).

    python bench/fetch_bench.py [--mb 200] [--runs 3]

A throw-away server gets ``--mb`` MB of row events (transactions of 2,000 inserted rows,
1 KB each) spread over several files (max_binlog_size=64M); then each contender copies
all of them into an empty directory, ``--runs`` times, alternating; every copy is compared
with the server's files.  Prints one line per run and the best MB/s of each (MB = 10^6
bytes of binlog copied).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402


def generate(srv: MariaDBServer, mb: int) -> None:
    srv.execute("CREATE DATABASE bench")
    srv.execute("CREATE TABLE bench.t (id INT PRIMARY KEY, pad VARCHAR(1000))")
    rows = mb * 1000 * 1000 // 1100
    for first in range(0, rows, 2000):
        srv.execute(f"INSERT INTO bench.t SELECT seq, REPEAT(CHAR(65 + seq % 26), 1000) "
                    f"FROM bench.seq_{first + 1}_to_{min(first + 2000, rows)}")
    srv.flush_logs()


def copied_equal(srv: MariaDBServer, out: Path) -> bool:
    active = srv.master_status()[0]
    for path in srv.binlog_files():
        if path.name == active:
            continue        # the in-use flag of the active file's FDE (binlog fetch's docstring)
        if (out / path.name).read_bytes() != path.read_bytes():
            return False
    return True


def run_fetch(srv, out: Path) -> float:
    dsn = f"mysql://root@localhost/?unix_socket={srv.socket}"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn, "--to", out,
                    "--server-id", "901"], cwd=REPO, check=True)
    return time.perf_counter() - start


def run_mariadb_binlog(srv, out: Path) -> float:
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    first = srv.binlog_names()[0]
    start = time.perf_counter()
    subprocess.run([tool, "--read-from-remote-server", "--raw", f"--socket={srv.socket}",
                    "--user=root", f"--result-file={out}/", "--to-last-log", first], check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with MariaDBServer({"max_binlog_size": "64M"}) as srv:
        generate(srv, args.mb)
        total = sum(p.stat().st_size for p in srv.binlog_files())
        print(f"{len(srv.binlog_files())} binlog files, {total / 1e6:.1f} MB")
        best: dict[str, float] = {}
        for run in range(args.runs):
            for name, fn in (("binlog fetch", run_fetch), ("mariadb-binlog --raw", run_mariadb_binlog)):
                out = Path(tempfile.mkdtemp(prefix="fetch-bench-"))
                try:
                    seconds = fn(srv, out)
                    ok = copied_equal(srv, out)
                finally:
                    shutil.rmtree(out)
                rate = total / 1e6 / seconds
                best[name] = max(best.get(name, 0), rate)
                print(f"run {run + 1}: {name}: {seconds:.2f} s, {rate:.1f} MB/s, "
                      f"identical copies: {ok}")
        for name, rate in best.items():
            print(f"best {name}: {rate:.1f} MB/s")


if __name__ == "__main__":
    main()
