#!/usr/bin/env python3
"""``binlog apply --workers N`` against a target directly and through a delay proxy
(bench/delay_proxy.py: a loopback MariaDB made to cost a network round trip per
request, as a distributed target does), with ``mariadb-binlog FILE | mariadb`` through
the same proxy as the sequential anchor.

    python bench/apply_workers_bench.py [--small 20000] [--small-proxy 5000] [--workers 1,4,16,64]
        [--bulk-rows 100000] [--delay-ms 1] [--port 25001] [--targets mariadb,tidb] [--json FILE]

Targets (--targets, in one run): ``mariadb`` (a private mariadbd, with ``mariadb-binlog FILE |
mariadb`` as the sequential anchor) and ``tidb`` (``tidb-server -store unistore``, the tidb-8.5
peer of tests/peers/build.py, built on first use; no anchor: TiDB answers OK to the BINLOG
statements mariadb-binlog prints and applies nothing, tests/binlog/replay/test_apply_tidb.py).

Workloads (made once on a private mariadbd, kept in --data):
  small   single-row transactions (autocommit INSERTs, every 4th an UPDATE) over the 10
          tables of bench/generate.py; --small of them directly, the first --small-proxy
          through the proxy (one worker needs ~2 round trips per transaction there)
  bulk    the bench data set of bench/generate.py (--bulk-rows rows per table: inserts,
          then updates of 20% and deletes of 10%, each statement one transaction)

Each run starts from empty tables; the apply is pinned to CPU 0 (taskset), the target
and the proxy are not.  Contents are compared with the target's first run (CHECKSUM TABLE;
ADMIN CHECKSUM TABLE on TiDB).  The proxy's real round trip (``SELECT 1``, median and 90th
percentile) is measured first and printed beside the figures.  Reported: wall time, transactions/s, MB/s of binlog, the
apply's CPU seconds and peak RSS (/usr/bin/time), the target's CPU seconds
(/proc/PID/stat), and whether the contents equal the first run's (CHECKSUM TABLE).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from apply_bench import TARGET_OPTIONS, checksums, cut_position, fresh, server_cpu  # noqa: E402
from generate import TABLE, generate  # noqa: E402
from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402

PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []
SOURCE_OPTIONS = {"binlog_row_metadata": "FULL", "max_binlog_size": 1 << 30,
                  "innodb_flush_log_at_trx_commit": 2, "sync_binlog": 0}


def make_small(out: Path, count: int) -> Path:
    """``count`` single-row transactions over bench.t0..t9 in one binlog file."""
    out.mkdir(parents=True, exist_ok=True)
    done = out / f"small-{count}.binlog"
    if done.exists():
        return done
    srv = MariaDBServer(SOURCE_OPTIONS).start()
    try:
        srv.execute("CREATE DATABASE bench")
        for n in range(10):
            srv.execute(TABLE.format(db="bench", n=n))
        srv.flush_logs()
        first = srv.master_status()[0]
        lines = []
        for i in range(count):
            t = i % 10
            if i % 4 == 3:
                lines.append(f"UPDATE bench.t{t} SET a = a + 1, c = 'updated {i}' WHERE id = {i - 10};")
            else:
                lines.append(f"INSERT INTO bench.t{t} (id, a, c, e) VALUES ({i}, {i}, 'row {i}', "
                             f"'2024-01-01 00:00:00.123456');")
        client = [find_tool("mariadb", "mysql"), "--no-defaults", f"--socket={srv.socket}", "-uroot"]
        subprocess.run(client, input="\n".join(lines).encode(), check=True)
        srv.flush_logs()
        names = srv.binlog_names()
        path = next(p for p in srv.binlog_files() if p.name == first)
        assert names.index(first) < len(names) - 1
        shutil.copy(path, done)
    finally:
        srv.cleanup()
    return done


def make_bulk(out: Path, rows: int) -> Path:
    target = out / f"bulk-{rows}"
    found = sorted(target.glob("mariadb-bin.[0-9]*"))
    if found:
        return found[0]
    target.mkdir(parents=True, exist_ok=True)
    generate(target, rows, 10, legacy=False, keep=False)
    return sorted(target.glob("mariadb-bin.[0-9]*"))[0]


def transactions_in(path: Path, stop: int | None) -> int:
    """XID events up to ``stop``: the transactions of the file (headers only)."""
    import struct

    count, pos, end = 0, 4, stop or path.stat().st_size
    with path.open("rb") as f:
        f.seek(pos)
        while pos < end:
            header = f.read(19)
            if len(header) < 19:
                break
            size = struct.unpack_from("<I", header, 9)[0]
            count += header[4] == 16
            pos += size
            f.seek(pos)
    return count


def proxy_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_tidb():
    """A tidb-server on loopback (tests/support/tidb_server.py), the peer built if needed."""
    import importlib.util

    from support.tidb_server import TiDBServer

    spec = importlib.util.spec_from_file_location("binlog_peers_build", REPO / "tests" / "peers" / "build.py")
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build
    spec.loader.exec_module(build)
    return TiDBServer(build.build("tidb-8.5", progress=print) / "tidb-server").start()


def tidb_checksums(srv) -> dict:
    return {f"t{n}": srv.query(f"ADMIN CHECKSUM TABLE bench.t{n}")[0][2:] for n in range(10)}


def run(shell: str, srv, proxy: int) -> dict:
    before, proxy_before = server_cpu(srv), proxy_cpu(proxy)
    started = time.perf_counter()
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", shell], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    err = proc.stderr.decode()
    if proc.returncode != 0:
        raise SystemExit(f"{shell} failed:\n{err[-3000:]}")
    # /usr/bin/time -f "TIME %U %S %M" of the apply (the last such line)
    user = sys_ = rss = 0.0
    for line in err.splitlines():
        if line.startswith("TIME "):
            u, s, m = line.split()[1:]
            user, sys_, rss = float(u), float(s), float(m)
    return {"wall": wall, "client_cpu": user + sys_, "rss_mib": rss / 1024,
            "server_cpu": server_cpu(srv) - before, "proxy_cpu": proxy_cpu(proxy) - proxy_before}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/tmp/bench-workers"))
    ap.add_argument("--small", type=int, default=20000)
    ap.add_argument("--small-proxy", type=int, default=5000)
    ap.add_argument("--bulk-rows", type=int, default=100000)
    ap.add_argument("--workers", default="1,4,16,64")
    ap.add_argument("--delay-ms", type=float, default=1.0)
    ap.add_argument("--port", type=int, default=25001)
    ap.add_argument("--skip-bulk", action="store_true")
    ap.add_argument("--targets", default="mariadb", help="mariadb, tidb or both (mariadb,tidb)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    small = make_small(args.data, args.small)
    small_stop = cut_position(small, _nth_xid_end(small, args.small_proxy))
    cases = [("small", small, None, "direct"), ("small", small, small_stop, "proxy")]
    if not args.skip_bulk:
        bulk = make_bulk(args.data, args.bulk_rows)
        cases += [("bulk", bulk, None, "direct"), ("bulk", bulk, None, "proxy")]
    results = []
    for target in args.targets.split(","):
        srv = MariaDBServer(TARGET_OPTIONS).start() if target == "mariadb" else start_tidb()
        try:
            results += run_target(target, srv, args, cases, workers)
        finally:
            srv.cleanup()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def run_target(target: str, srv, args, cases, workers) -> list[dict]:
    """Every contender of every case against one target, directly and through the proxy."""
    timer = "/usr/bin/time -f 'TIME %U %S %M'"
    py = f"{shlex.quote(sys.executable)} -m binlog.cli"
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    sums_of = checksums if target == "mariadb" else tidb_checksums
    results: list[dict] = []
    proxy = subprocess.Popen([sys.executable, str(REPO / "bench" / "delay_proxy.py"), "--listen",
                              str(args.port), "--to", f"127.0.0.1:{srv.port}", "--delay-ms",
                              str(args.delay_ms), "--seconds", "7200"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        from delay_proxy import ping

        rtt = {"direct": ping(srv.port), "proxy": ping(args.port)}
        print(f"{target}: SELECT 1 round trip (median / 90th percentile ms): directly "
              f"{rtt['direct'][0]:.2f} / {rtt['direct'][1]:.2f}, through the proxy "
              f"{rtt['proxy'][0]:.2f} / {rtt['proxy'][1]:.2f}", flush=True)
        results.append({"target": target, "round_trip_ms": rtt})
        for workload, path, stop, via in cases:
            port = srv.port if via == "direct" else args.port
            dsn = f"mysql://root@127.0.0.1:{port}/"
            cut = f" --stop-position {stop}" if stop else ""
            size = (stop or path.stat().st_size) - 4
            txs = transactions_in(path, stop)
            client = (f"{find_tool('mariadb', 'mysql')} --no-defaults -h127.0.0.1 -P{port} -uroot "
                      f"--max-allowed-packet=1G")
            contenders = [(f"apply --workers {w}", f"{timer} {' '.join(PIN)} {py} apply --quiet "
                           f"--workers {w}{cut} --to {shlex.quote(dsn)} {shlex.quote(str(path))}")
                          for w in workers]
            if target == "mariadb":
                contenders.append(("mariadb-binlog | mariadb", f"{' '.join(PIN)} {tool}{cut} "
                                   f"{shlex.quote(str(path))} | {timer} {client}"))
            reference = None
            for name, shell in contenders:
                fresh(srv)
                r = run(shell, srv, proxy.pid)
                sums = sums_of(srv)
                reference = reference or sums
                r.update(target=target, workload=workload, via=via, contender=name, transactions=txs,
                         bytes=size, tx_per_s=txs / r["wall"], mb_per_s=size / 1e6 / r["wall"],
                         same=sums == reference)
                results.append(r)
                print(f"{target:7} {workload:5} {via:6} {name:26} {r['wall']:8.2f} s {r['tx_per_s']:9.0f} tx/s "
                      f"{r['mb_per_s']:7.2f} MB/s  apply CPU {r['client_cpu']:6.2f} s  target CPU "
                      f"{r['server_cpu']:6.2f} s  proxy CPU {r['proxy_cpu']:5.2f} s  "
                      f"RSS {r['rss_mib']:6.1f} MiB"
                      f"{'' if r['same'] else '  CONTENTS DIFFER'}", flush=True)
    finally:
        proxy.terminate()
        proxy.wait()
    return results


def _nth_xid_end(path: Path, n: int) -> int:
    """The byte after the n-th XID event (n transactions)."""
    import struct

    count, pos = 0, 4
    with path.open("rb") as f:
        f.seek(pos)
        while True:
            header = f.read(19)
            if len(header) < 19:
                return pos
            pos += struct.unpack_from("<I", header, 9)[0]
            count += header[4] == 16
            if count >= n:
                return pos
            f.seek(pos)


if __name__ == "__main__":
    os.environ.pop("BINLOG_APPLY_FAULT", None)
    # an installed tool runs from its byte code: without it every run compiles each module
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    main()
