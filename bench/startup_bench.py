#!/usr/bin/env python3
"""Start-up of short command lines: wall time of ``python -c pass``, ``binlog --version``,
``--help`` and a ``dump`` of a one-event file (the magic and the FORMAT_DESCRIPTION of a
sample), each run ``--runs`` times pinned to CPU 0, min and median in ms; and the sum
of ``python -X importtime``'s own times of every module the dump imports (min of the
runs: steadier than the wall time on a loaded machine).  With ``--base DIR`` (a
checkout of another commit, its C extensions built) the same is measured there,
alternating, in the same run.

    python bench/startup_bench.py [--runs 20] [--base /tmp/base-src]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "mariadb-10.11" / "checksum_none.binlog"
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def one_event_file(where: Path) -> Path:
    data = SAMPLE.read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")      # the first event's length
    path = where / "one.000001"
    path.write_bytes(data[:4 + size])
    return path


def wall_ms(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(PIN + argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def import_ms(argv: list[str], cwd: Path) -> float:
    r = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, capture_output=True,
                       text=True, check=True)
    total = 0
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            own = line[12:].split("|")[0].strip()
            total += int(own) if own.isdigit() else 0
    return total / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--base", type=Path, default=None, help="another checkout to measure beside this one")
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)     # an installed tool runs from byte code
    with tempfile.TemporaryDirectory() as tmp:
        one = str(one_event_file(Path(tmp)))
        lines = {"python -c pass": ["-c", "pass"], "binlog --version": ["-m", "binlog.cli", "--version"],
                 "binlog --help": ["-m", "binlog.cli", "--help"],
                 "binlog dump ONE_EVENT_FILE": ["-m", "binlog.cli", "dump", one]}
        trees = {"this": REPO} | ({"base": args.base} if args.base else {})
        times: dict = {(t, n): [] for t in trees for n in lines}
        imports: dict = {t: [] for t in trees}
        for tree in trees.values():     # byte code written once, outside the figures
            for argv in lines.values():
                wall_ms([sys.executable, *argv], tree)
        for _ in range(args.runs):
            for t, tree in trees.items():
                for n, argv in lines.items():
                    times[(t, n)].append(wall_ms([sys.executable, *argv], tree))
                imports[t].append(import_ms(lines["binlog dump ONE_EVENT_FILE"], tree))
        for n in lines:
            print(f"{n:28} " + "   ".join(
                f"{t}: {min(times[(t, n)]):6.1f} / {statistics.median(times[(t, n)]):6.1f} ms"
                for t in trees))
        print("dump's imports, own times summed (min / median): " + "   ".join(
            f"{t}: {min(v):.1f} / {statistics.median(v):.1f} ms" for t, v in imports.items()))


if __name__ == "__main__":
    main()
