#!/usr/bin/env python3
"""Apply's own CPU per small transaction, two checkouts in the same run: ``binlog apply``
of single-row transactions (bench/apply_workers_bench.py's small workload) from CHECKOUT
(e.g. a `git archive` of the base commit, C extensions built) and from this one, rounds
alternating, the apply pinned to CPU 0; CPU seconds (user + system) from /usr/bin/time.

    python bench/apply_cpu_bench.py BINLOG --base DIR [--rounds 3] [--workers 1,16]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from apply_bench import TARGET_OPTIONS, checksums, fresh  # noqa: E402
from apply_workers_bench import transactions_in  # noqa: E402
from support.mariadb_server import MariaDBServer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binlog", type=Path)
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default="1,16")
    args = ap.parse_args()
    txs = transactions_in(args.binlog, None)
    runs = [("base", args.base, ())] + [(f"this --workers {w}", REPO, ("--workers", w))
                                        for w in args.workers.split(",")]
    with MariaDBServer(TARGET_OPTIONS) as srv:
        reference = None
        for rnd in range(args.rounds):
            for name, where, extra in runs:
                fresh(srv)
                cmd = ["/usr/bin/time", "-f", "TIME %U %S %M %e", "taskset", "-c", "0", sys.executable,
                       "-m", "binlog.cli", "apply", "--quiet", *extra, "--to",
                       f"mysql://root@127.0.0.1:{srv.port}/", str(args.binlog)]
                done = subprocess.run(cmd, cwd=where, capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(done.stderr[-2000:])
                u, s, rss, wall = done.stderr.strip().splitlines()[-1].split()[1:]
                cpu = float(u) + float(s)
                sums = checksums(srv)
                reference = reference or sums
                print(f"round {rnd + 1} {name:20} {cpu:6.2f} s CPU = {cpu / txs * 1e3:.3f} ms per "
                      f"transaction, wall {float(wall):6.2f} s, RSS {int(rss) / 1024:.0f} MiB"
                      f"{'' if sums == reference else '  CONTENTS DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
