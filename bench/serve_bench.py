"""``binlog serve`` against the primary itself, with the same clients and workload.

    PATH=$PATH:/usr/sbin python bench/serve_bench.py [--mb 100] [--runs 3] [--clients 16] [--commits 200]

Throughput: a throw-away mariadbd gets ``--mb`` MB of row events (bench/fetch_bench.py's
workload); its closed binlogs are copied into a directory that ``binlog serve --binlogs``
serves on loopback; ``--clients`` copies of ``mariadb-binlog --read-from-remote-server
--raw --to-last-log`` started at once copy them from the server over TCP, then from
serve, ``--runs`` times, alternating; every copy is compared with the server's files.
The rate is the bytes all clients copied over the wall time until the last one ended;
the CPU seconds the serving process spent meanwhile are read from /proc.

Added lag: ``binlog serve --upstream DSN --relay DIR`` (its fetch and rewrite children:
the relay of the server and its rewrite, served as they grow); a ``mariadb-binlog --raw
--stop-never`` follows the server directly and another follows serve; the source commits
``--commits`` single-row transactions 50-100 ms apart, each with a marker, and the time
from each COMMIT returning to the marker reaching each client's file is measured (median
and 95th percentile).
"""
from __future__ import annotations

import argparse
import os
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
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") else None     # the clients' copies


def users_file(tmp: Path) -> Path:
    hashed = subprocess.run([sys.executable, "-m", "binlog.cli", "serve", "--hash-password"], cwd=REPO,
                            input=PASSWORD + "\n", capture_output=True, text=True, check=True).stdout.strip()
    path = tmp / "users"
    path.write_text(f"bench {hashed}\n")
    return path


def start_serve(tmp: Path, *args) -> tuple[subprocess.Popen, int]:
    log = tmp / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "serve", "--listen", "127.0.0.1:0",
                             "--server-id", "900", "--users", users_file(tmp), *args],
                            cwd=REPO, stderr=open(log, "w"))
    for _ in range(400):
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text())
        if found:
            return proc, int(found.group(1))
        time.sleep(0.05)
    raise SystemExit("binlog serve did not start")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def copy_all(port: int, first: str, clients: int) -> tuple[float, list[Path]]:
    """``clients`` mariadb-binlog copies at once; (wall seconds until the last ended, their dirs)."""
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    outs = [Path(tempfile.mkdtemp(prefix="serve-copy-", dir=SCRATCH)) for _ in range(clients)]
    start = time.perf_counter()
    procs = [subprocess.Popen([tool, "--read-from-remote-server", "--raw", "--host=127.0.0.1", f"--port={port}",
                               "--user=bench", f"--password={PASSWORD}", f"--result-file={out}/",
                               "--to-last-log", first]) for out in outs]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - start
    if any(codes):
        raise SystemExit(f"mariadb-binlog failed: exit codes {codes}")
    return wall, outs


def throughput(srv: MariaDBServer, mb: int, runs: int, clients: int) -> None:
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
    print(f"{len(names)} binlog files, {total / 1e6:.1f} MB, {clients} clients at once")
    proc, port = start_serve(tmp, "--binlogs", served)
    results: dict[str, list] = {"mariadbd": [], "binlog serve": []}
    try:
        for run in range(runs):
            for name, where, pid in (("mariadbd", srv.port, srv.pid), ("binlog serve", port, proc.pid)):
                cpu = cpu_seconds(pid)
                seconds, outs = copy_all(where, names[0], clients)
                cpu = cpu_seconds(pid) - cpu
                same = all((out / n).read_bytes() == (served / n).read_bytes() for out in outs for n in names)
                for out in outs:
                    shutil.rmtree(out)
                rate = clients * total / 1e6 / seconds
                results[name].append((rate, cpu))
                print(f"run {run + 1}: {clients} x mariadb-binlog -R --raw from {name}: {seconds:.2f} s, "
                      f"{rate:.1f} MB/s in all, server CPU {cpu:.2f} s, identical copies: {same}", flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        shutil.rmtree(tmp)
    best = {name: max(r for r, _ in values) for name, values in results.items()}
    for name, values in results.items():
        rates = [r for r, _ in values]
        print(f"{name}: best {max(rates):.1f} MB/s, median {statistics.median(rates):.1f} MB/s, "
              f"server CPU per GB copied {statistics.median(c / (clients * total / 1e9) for _, c in values):.2f} s")
    print(f"serve / mariadbd (best rates): {best['binlog serve'] / best['mariadbd']:.2f} (target >= 0.9)")


def lag(commits: int) -> None:
    with MariaDBServer({"server_id": 1}) as srv:
        srv.execute(f"CREATE USER bench@'%' IDENTIFIED BY '{PASSWORD}'")
        srv.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO bench@'%'")
        srv.execute("CREATE DATABASE lag")
        srv.execute("CREATE TABLE lag.t (id INT PRIMARY KEY, marker VARCHAR(40), at DATETIME(6))")
        tmp = Path(tempfile.mkdtemp(prefix="serve-lag-"))
        first = srv.binlog_names()[0]
        proc, port = start_serve(tmp, "--upstream", f"mysql://root@localhost/?unix_socket={srv.socket}",
                                 "--relay", tmp / "relay")
        tool = find_tool("mariadb-binlog", "mysqlbinlog")
        followers = {}
        deadline = time.monotonic() + 60
        while not (tmp / "relay.rewritten" / first).exists():
            if time.monotonic() > deadline:
                raise SystemExit("serve's rewrite of the relay did not start")
            time.sleep(0.05)
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
                srv.execute(f"INSERT INTO lag.t VALUES ({i}, '{marker.decode()}', NOW(6))")
                committed = time.perf_counter()
                for name, (_, out) in followers.items():
                    while not any(marker in p.read_bytes() for p in out.iterdir()):
                        if time.perf_counter() - committed > 10:
                            raise SystemExit(f"{name} did not get commit {i} within 10 s")
                        time.sleep(0.0005)
                    delays[name].append(time.perf_counter() - committed)
                time.sleep(0.05 + random.random() * 0.05)     # no phase lock with any poll
        finally:
            for follower, _ in followers.values():
                follower.kill()
            proc.send_signal(signal.SIGTERM)
            proc.wait()
            shutil.rmtree(tmp)
        medians = {}
        for name, values in delays.items():
            values.sort()
            medians[name] = statistics.median(values)
            print(f"lag via {name}: median {medians[name] * 1000:.1f} ms, "
                  f"p95 {values[int(len(values) * 0.95) - 1] * 1000:.1f} ms ({len(values)} commits)")
        print(f"added by fetch + rewrite + serve, median: {(medians['binlog serve'] - medians['mariadbd']) * 1000:.1f} ms "
              f"(target < 10 ms)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-lag", action="store_true")
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)         # as an installed tool runs
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "binlog")], check=True,
                   stdout=subprocess.DEVNULL)
    if not args.skip_throughput:
        with MariaDBServer({"max_binlog_size": "64M"}) as srv:
            throughput(srv, args.mb, args.runs, args.clients)
    if not args.skip_lag:
        lag(args.commits)


if __name__ == "__main__":
    main()
