"""``binlog serve`` against the primary itself, with the same client and workload.

    python bench/serve_bench.py [--mb 200] [--runs 3] [--commits 200]

Throughput: a throw-away mariadbd gets ``--mb`` MB of row events (bench/fetch_bench.py's
workload); its binlogs are copied into a directory that ``binlog serve`` serves on
loopback; ``mariadb-binlog --read-from-remote-server --raw --to-last-log`` copies them
from the server over TCP and from serve, ``--runs`` times, alternating; every copy is
compared with the server's files.

Added lag: ``binlog fetch --stop-never`` keeps a relay of the server and serve follows it;
a ``mariadb-binlog --raw --stop-never`` follows the server directly and another follows
serve; the source commits ``--commits`` single-row transactions 50-100 ms apart, each with a
marker, and the time from each COMMIT returning to the marker reaching each client's
file is measured (median and 95th percentile).
"""
from __future__ import annotations

import argparse
import random
import re
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
sys.path.insert(0, str(REPO / "bench"))

from fetch_bench import generate  # noqa: E402
from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402

PASSWORD = "bench-Pw"


def start_serve(directory: Path, tmp: Path) -> tuple[subprocess.Popen, int]:
    hashed = subprocess.run([sys.executable, "-m", "binlog.cli", "serve", "--hash-password"], cwd=REPO,
                            input=PASSWORD + "\n", capture_output=True, text=True, check=True).stdout.strip()
    (tmp / "users").write_text(f"bench {hashed}\n")
    log = tmp / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "serve", "--listen", "127.0.0.1:0",
                             "--binlogs", directory, "--server-id", "900", "--users", tmp / "users"],
                            cwd=REPO, stderr=open(log, "w"))
    for _ in range(200):
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text())
        if found:
            return proc, int(found.group(1))
        time.sleep(0.05)
    raise SystemExit("binlog serve did not start")


def copy_with_mariadb_binlog(port: int, first: str, out: Path, user: str, password: str) -> float:
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    start = time.perf_counter()
    subprocess.run([tool, "--read-from-remote-server", "--raw", "--host=127.0.0.1", f"--port={port}",
                    f"--user={user}", f"--password={password}", f"--result-file={out}/", "--to-last-log",
                    first], check=True)
    return time.perf_counter() - start


def throughput(srv: MariaDBServer, mb: int, runs: int) -> None:
    generate(srv, mb)
    srv.execute(f"CREATE USER bench@'%' IDENTIFIED BY '{PASSWORD}'")
    srv.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO bench@'%'")
    srv.flush_logs()
    tmp = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    served = tmp / "served"
    served.mkdir()
    names = srv.binlog_names()[:-1]         # closed files only: the same bytes from both
    for name in names:
        shutil.copyfile(srv.binlog_dir / name, served / name)
    (served / "mariadb-bin.index").write_text("".join(f"./{n}\n" for n in names))
    total = sum((served / n).stat().st_size for n in names)
    print(f"{len(names)} binlog files, {total / 1e6:.1f} MB")
    proc, port = start_serve(served, tmp)
    best: dict[str, float] = {}
    try:
        for run in range(runs):
            for name, where in (("mariadbd", srv.port), ("binlog serve", port)):
                out = Path(tempfile.mkdtemp(prefix="serve-copy-"))
                seconds = copy_with_mariadb_binlog(where, names[0], out, "bench", PASSWORD)
                same = all((out / n).read_bytes() == (served / n).read_bytes() for n in names)
                shutil.rmtree(out)
                rate = total / 1e6 / seconds
                best[name] = max(best.get(name, 0.0), rate)
                print(f"run {run + 1}: mariadb-binlog -R --raw from {name}: {seconds:.2f} s, "
                      f"{rate:.1f} MB/s, identical copies: {same}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        shutil.rmtree(tmp)
    for name, rate in best.items():
        print(f"best from {name}: {rate:.1f} MB/s")
    print(f"serve / mariadbd: {best['binlog serve'] / best['mariadbd']:.2f}")


def lag(commits: int) -> None:
    with MariaDBServer({"server_id": 1}) as srv:
        srv.execute(f"CREATE USER bench@'%' IDENTIFIED BY '{PASSWORD}'")
        srv.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO bench@'%'")
        srv.execute("CREATE DATABASE lag")
        srv.execute("CREATE TABLE lag.t (id INT PRIMARY KEY, marker VARCHAR(40))")
        tmp = Path(tempfile.mkdtemp(prefix="serve-lag-"))
        relay = tmp / "relay"
        fetch = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from",
                                  f"mysql://root@localhost/?unix_socket={srv.socket}", "--to", relay,
                                  "--server-id", "902", "--stop-never", "--heartbeat", "1"], cwd=REPO)
        first = srv.binlog_names()[0]
        while not (relay / first).exists() or (relay / first).stat().st_size < 100:
            time.sleep(0.05)            # fetch flushes at the first heartbeat
        proc, port = start_serve(relay, tmp)
        tool = find_tool("mariadb-binlog", "mysqlbinlog")
        followers = {}
        for name, where in (("mariadbd", srv.port), ("binlog serve", port)):
            out = tmp / name.replace(" ", "-")
            out.mkdir()
            followers[name] = (subprocess.Popen(
                [tool, "--read-from-remote-server", "--raw", "--stop-never", "--host=127.0.0.1",
                 f"--port={where}", "--user=bench", f"--password={PASSWORD}", f"--result-file={out}/", first]),
                out)
        time.sleep(1)
        delays: dict[str, list[float]] = {name: [] for name in followers}
        try:
            for i in range(commits):
                marker = f"marker-{i:06d}-{time.time_ns()}".encode()
                srv.execute(f"INSERT INTO lag.t VALUES ({i}, '{marker.decode()}')")
                committed = time.perf_counter()
                for name, (_, out) in followers.items():
                    while not any(marker in p.read_bytes() for p in out.iterdir()):
                        if time.perf_counter() - committed > 10:
                            raise SystemExit(f"{name} did not get commit {i} within 10 s")
                        time.sleep(0.002)
                    delays[name].append(time.perf_counter() - committed)
                time.sleep(0.05 + random.random() * 0.05)     # no phase lock with serve's poll
        finally:
            for follower, _ in followers.values():
                follower.kill()
            proc.send_signal(signal.SIGTERM)
            fetch.send_signal(signal.SIGTERM)
            proc.wait()
            fetch.wait()
            shutil.rmtree(tmp)
        for name, values in delays.items():
            values.sort()
            print(f"lag via {name}: median {statistics.median(values) * 1000:.1f} ms, "
                  f"p95 {values[int(len(values) * 0.95) - 1] * 1000:.1f} ms ({len(values)} commits)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--commits", type=int, default=200)
    args = ap.parse_args()
    with MariaDBServer({"max_binlog_size": "64M"}) as srv:
        throughput(srv, args.mb, args.runs)
    lag(args.commits)


if __name__ == "__main__":
    main()
