#!/usr/bin/env python3
"""`binlog rewrite` throughput next to `binlog dump --format json` on the same files.

    python bench/rewrite_bench.py [--data bench/data] [--repeat 3]

Uses the binlogs of bench/generate.py: data/legacy (tables created with
mysql56_temporal_format=OFF, with its schema.sql) and data/mysql56 (nothing to rewrite:
the output is the input, byte for byte).  Every contender runs pinned to one core
(``taskset -c 0``), output to /dev/null or a fresh directory; the best of --repeat runs
by CPU time (user+sys of the child: the machine may be shared) and its wall time.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(["taskset", "-c", "0", *cmd], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=REPO)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    legacy = next((args.data / "legacy").glob("mariadb-bin.0*"))
    schema = args.data / "legacy" / "schema.sql"
    plain = next((args.data / "mysql56").glob("mariadb-bin.0*"))
    binlog = [sys.executable, "-m", "binlog.cli"]
    out = Path(tempfile.mkdtemp(prefix="rewrite-bench-"))
    contenders = [
        ("dump --format json, legacy + schema", legacy,
         binlog + ["dump", "--format", "json", "--schema-ddl", str(schema), str(legacy)]),
        ("rewrite, legacy + schema", legacy,
         binlog + ["rewrite", "--schema-ddl", str(schema), str(legacy), "--to", str(out / "a")]),
        ("rewrite --full-metadata, legacy + schema", legacy,
         binlog + ["rewrite", "--full-metadata", "--schema-ddl", str(schema), str(legacy),
                   "--to", str(out / "b")]),
        ("dump --format json, MySQL 5.6 format", plain,
         binlog + ["dump", "--format", "json", str(plain)]),
        ("rewrite, MySQL 5.6 format (nothing to rewrite)", plain,
         binlog + ["rewrite", str(plain), "--to", str(out / "c")]),
    ]
    print("| contender | file | wall | CPU | MB/s (CPU) |")
    print("|---|---|---:|---:|---:|")
    try:
        for name, path, cmd in contenders:
            best = None
            for _ in range(args.repeat):
                for d in ("a", "b", "c"):
                    shutil.rmtree(out / d, ignore_errors=True)
                result = run(cmd)
                if best is None or result[1] < best[1]:
                    best = result
            assert best is not None
            size = path.stat().st_size / 1e6
            print(f"| {name} | {path.parent.name}/{path.name} ({size:.1f} MB) | {best[0]:.2f} s "
                  f"| {best[1]:.2f} s | {size / best[1]:.1f} |", flush=True)
        same = (out / "c" / plain.name).read_bytes() == plain.read_bytes()
        print(f"\nMySQL 5.6-format file rewritten byte-identical: {same}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(REPO))
    sys.exit(main())
