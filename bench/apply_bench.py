#!/usr/bin/env python3
"""Apply into a real local mariadbd: ``binlog apply`` against the server's own
tools, on the same binlog, in one run.

    python bench/apply_bench.py [--binlog FILE] [--mb N] [--json]

Contenders (the client side pinned to CPU 0 with taskset; the target mariadbd is not):
  apply       binlog apply FILE --to DSN                   (SQL statements)
  apply-binlog  binlog apply --method binlog FILE --to DSN (BINLOG statements: row events)
  mariadb     mariadb-binlog FILE | mariadb                (the server applies row events)
  sql         binlog dump --format sql FILE | mariadb --binary-mode
  sql-extended  the same with --extended-insert (multi-row statements)

Each starts from a fresh database (the 10 tables of bench/generate.py, empty) and the
contents each leaves are compared (CHECKSUM TABLE of every table): a contender that gets
there faster but differently is reported as such.  The binlog is by default the
bench/generate.py file in /work/bench-data/mysql56 (or bench/data/mysql56); ``--mb N``
takes only its first N MB, cut after the last transaction that ends there (the other
contenders are given the same ``--stop-position``).  ``--json`` prints the results as
JSON (for bench/run.py) instead of the table.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from generate import TABLE  # noqa: E402
from support.mariadb_server import MariaDBServer, find_tool  # noqa: E402

PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []
TABLES = 10
XID_EVENT = 16
TARGET_OPTIONS = {"innodb_buffer_pool_size": "512M", "innodb_flush_log_at_trx_commit": 2,
                  "sync_binlog": 0, "max_allowed_packet": "1G", "innodb_log_file_size": "256M"}


def default_binlog() -> Path:
    for base in (Path("/work/bench-data/mysql56"), REPO / "bench" / "data" / "mysql56"):
        found = sorted(base.glob("mariadb-bin.[0-9]*"))
        if found:
            return found[0]
    raise SystemExit("no benchmark binlog: run bench/generate.py first, or give --binlog")


def cut_position(path: Path, limit: int) -> int:
    """The byte after the last XID event that ends at or before ``limit`` (event headers
    only: timestamp u32, type u8, server_id u32, event_size u32, end position u32)."""
    end = 0
    with path.open("rb") as f:
        pos = 4
        f.seek(pos)
        while True:
            header = f.read(19)
            if len(header) < 19:
                break
            kind, size = header[4], struct.unpack_from("<I", header, 9)[0]
            if size < 19 or pos + size > limit:
                break
            pos += size
            if kind == XID_EVENT:
                end = pos
            f.seek(pos)
    if not end:
        raise SystemExit(f"no transaction ends in the first {limit} bytes of {path}")
    return end


def fresh(srv: MariaDBServer) -> None:
    for db in ("bench", "binlog_apply"):
        srv.execute(f"DROP DATABASE IF EXISTS {db}")
    srv.execute("CREATE DATABASE bench")
    for n in range(TABLES):
        srv.execute(TABLE.format(db="bench", n=n))


def checksums(srv: MariaDBServer) -> dict:
    return {t: srv.query(f"CHECKSUM TABLE bench.{t}")[0][1] for t in (f"t{n}" for n in range(TABLES))}


def server_cpu(srv: MariaDBServer) -> float:
    """CPU seconds (user + system) the target mariadbd has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{srv.pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(shell: str, srv: MariaDBServer) -> tuple[float, float, float]:
    """(wall, client CPU, server CPU) seconds of one contender: on a loaded machine the
    CPU seconds say more than the wall time (the pinned client waits for its core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = server_cpu(srv)
    started = time.perf_counter()
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", shell], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{shell} failed:\n{proc.stderr.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, client, server_cpu(srv) - server


def contenders(binlog: Path, stop: int | None, srv: MariaDBServer) -> list[tuple[str, str, str]]:
    q = shlex_quote
    pin = " ".join(PIN)
    client = f"{find_tool('mariadb', 'mysql')} --no-defaults -S {q(srv.socket)} -uroot --max-allowed-packet=1G"
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    py = f"{q(sys.executable)} -m binlog.cli"
    dsn = f"mysql://root@localhost/?unix_socket={srv.socket}"
    cut = f" --stop-position {stop}" if stop else ""
    return [
        ("apply", f"binlog apply FILE --to DSN{cut}",
         f"{pin} {py} apply --quiet{cut} --to {q(dsn)} {q(str(binlog))}"),
        ("apply-binlog", f"binlog apply --method binlog FILE --to DSN{cut}",
         f"{pin} {py} apply --quiet --method binlog{cut} --to {q(dsn)} {q(str(binlog))}"),
        ("mariadb", f"mariadb-binlog{cut} FILE | mariadb",
         f"{pin} {tool}{cut} {q(str(binlog))} | {pin} {client}"),
        ("sql", f"binlog dump --format sql{cut} FILE | mariadb --binary-mode",
         f"{pin} {py} dump --quiet --format sql{cut} {q(str(binlog))} | {pin} {client} --binary-mode"),
        ("sql-extended", f"binlog dump --format sql --extended-insert{cut} FILE | mariadb --binary-mode",
         f"{pin} {py} dump --quiet --format sql --extended-insert{cut} {q(str(binlog))} | {pin} {client} "
         f"--binary-mode"),
    ]


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binlog", type=Path, default=None)
    ap.add_argument("--mb", type=float, default=None, help="only the first N MB of the binlog")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--only", action="append", default=None, metavar="NAME",
                    help="run only this contender (repeatable; the ratios need apply, "
                         "apply-binlog, mariadb and sql)")
    args = ap.parse_args()
    binlog = args.binlog or default_binlog()
    stop = cut_position(binlog, int(args.mb * 1e6)) if args.mb else None
    size = (stop or binlog.stat().st_size) - 4
    results: dict = {"binlog": str(binlog), "bytes": size, "stop_position": stop, "contenders": {}}
    with MariaDBServer(TARGET_OPTIONS) as srv:
        reference = None
        for name, command, shell in contenders(binlog, stop, srv):
            if args.only and name not in args.only:
                continue
            fresh(srv)
            wall, client, server = timed(shell, srv)
            sums = checksums(srv)
            reference = reference or sums
            results["contenders"][name] = {
                "command": command, "wall": round(wall, 2), "mb_per_s": round(size / 1e6 / wall, 2),
                "client_cpu": round(client, 2), "server_cpu": round(server, 2),
                "mb_per_cpu_s": round(size / 1e6 / (client + server), 2),
                "same_contents": sums == reference}
            if not args.json:
                print(f"{name:12} {wall:7.2f} s {size / 1e6 / wall:7.2f} MB/s  client CPU {client:6.2f} s  "
                      f"server CPU {server:6.2f} s  {command}", flush=True)
    c = results["contenders"]
    if args.only:
        print(json.dumps(results, indent=1) if args.json else "")
        return
    results["ratios"] = {
        "apply_vs_mariadb": round(c["apply"]["wall"] / c["mariadb"]["wall"], 2),
        "apply_binlog_vs_mariadb": round(c["apply-binlog"]["wall"] / c["mariadb"]["wall"], 2),
        "apply_binlog_vs_mariadb_cpu": round(
            (c["apply-binlog"]["client_cpu"] + c["apply-binlog"]["server_cpu"])
            / (c["mariadb"]["client_cpu"] + c["mariadb"]["server_cpu"]), 2),
        "apply_vs_sql_pipe": round(c["apply"]["wall"] / c["sql"]["wall"], 2),
        "apply_vs_mariadb_cpu": round((c["apply"]["client_cpu"] + c["apply"]["server_cpu"])
                                      / (c["mariadb"]["client_cpu"] + c["mariadb"]["server_cpu"]), 2)}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"\n{size / 1e6:.1f} MB of binlog ({binlog})")
    print(f"apply time / mariadb-binlog | mariadb time: {results['ratios']['apply_vs_mariadb']}")
    print(f"apply --method binlog time / mariadb-binlog | mariadb time: "
          f"{results['ratios']['apply_binlog_vs_mariadb']}")
    print(f"apply time / dump --format sql | mariadb time: {results['ratios']['apply_vs_sql_pipe']}")
    print(f"apply CPU / mariadb-binlog | mariadb CPU (client + server): "
          f"{results['ratios']['apply_vs_mariadb_cpu']}")
    for name, r in c.items():
        if not r["same_contents"]:
            print(f"WARNING: {name} left other contents than {next(iter(c))}")


if __name__ == "__main__":
    main()
