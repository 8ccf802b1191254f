#!/usr/bin/env python3
"""`binlog rewrite` throughput next to `binlog dump --format json` on the same files.

    PATH=$PATH:/usr/sbin python bench/rewrite_bench.py [--data bench/data] [--repeat 5] [--check-pure]

Uses the binlogs of bench/generate.py: data/legacy-heavy (ten tables of DATETIME(6),
TIMESTAMP(3), TIME(2) and DATETIME(3) in the MariaDB 5.3 layout, about 50 MB; made on a
local mariadbd when missing), data/legacy (the mixed tables of ``make bench`` created
with mysql56_temporal_format=OFF) and data/mysql56 (nothing to rewrite: the output is
the input, byte for byte), each with its schema.sql where it has legacy columns.  Every
contender runs pinned to one core (``taskset -c 0``), output to /dev/null or a fresh
directory, the contenders of a file alternating, --repeat times; the figure is the best
CPU time (user+sys of the child: the machine may be shared), with its wall time and the
median CPU time.  ``--check-pure``: the rewrite of each file is also made with
BINLOG_PURE=1 (the reference walk) and compared byte for byte, map included.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY_ROWS = 85_000         # rows per table of the legacy-heavy set: about 52 MB


def run(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(["taskset", "-c", "0", *cmd], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=REPO, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def heavy_set(data: Path) -> Path:
    out = data / "legacy-heavy"
    if not next(out.glob("mariadb-bin.0*"), None):
        sys.path.insert(0, str(REPO / "bench"))
        from generate import generate_set

        generate_set(data, "legacy-heavy", HEAVY_ROWS)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check-pure", action="store_true")
    args = parser.parse_args(argv)
    # as an installed tool runs: from byte code written once (bench/run.py says why)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "binlog"), str(REPO / "schema_store")],
                   check=True, stdout=subprocess.DEVNULL)
    binlog = [sys.executable, "-m", "binlog.cli"]
    out = Path(tempfile.mkdtemp(prefix="rewrite-bench-"))
    files = [("legacy-heavy", heavy_set(args.data))]
    files += [(kind, args.data / kind) for kind in ("legacy", "mysql56") if (args.data / kind).is_dir()]
    print("| file | contender | wall | CPU, best | CPU, median | MB/s (best CPU) |")
    print("|---|---|---:|---:|---:|---:|")
    ratios = {}
    try:
        for kind, folder in files:
            path = next(folder.glob("mariadb-bin.0*"))
            schema = folder / "schema.sql"
            ddl = ["--schema-ddl", str(schema)] if schema.exists() else []
            contenders = {
                "dump --format json": binlog + ["dump", "--format", "json", *ddl, str(path)],
                "rewrite": binlog + ["rewrite", *ddl, str(path), "--to", str(out / "rw")],
            }
            times: dict[str, list] = {name: [] for name in contenders}
            for _ in range(args.repeat):
                for name, cmd in contenders.items():
                    shutil.rmtree(out / "rw", ignore_errors=True)
                    times[name].append(run(cmd))
            size = path.stat().st_size / 1e6
            for name, results in times.items():
                wall, cpu = min(results, key=lambda r: r[1])
                median = statistics.median(r[1] for r in results)
                print(f"| {kind} ({size:.1f} MB) | {name} | {wall:.2f} s | {cpu:.2f} s | {median:.2f} s "
                      f"| {size / cpu:.1f} |", flush=True)
            ratios[kind] = min(r[1] for r in times["rewrite"]) / min(r[1] for r in times["dump --format json"])
            if kind == "mysql56":
                same = (out / "rw" / path.name).read_bytes() == path.read_bytes()
                print(f"| {kind} | rewritten byte-identical to the input: {same} | | | | |")
            if args.check_pure:
                shutil.rmtree(out / "pure", ignore_errors=True)
                run(binlog + ["rewrite", *ddl, str(path), "--to", str(out / "pure")],
                    env={**os.environ, "BINLOG_PURE": "1"})
                same = all((out / "rw" / n).read_bytes() == (out / "pure" / n).read_bytes()
                           for n in (path.name, path.name + ".map"))
                print(f"| {kind} | compiled rewrite identical to BINLOG_PURE=1's (binlog and map): "
                      f"{same} | | | | |", flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print()
    for kind, ratio in ratios.items():
        print(f"{kind}: rewrite CPU time / dump --format json CPU time = {ratio:.2f} "
              f"(target <= 1.0: {'met' if ratio <= 1.0 else 'not met'})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(REPO))
    sys.exit(main())
