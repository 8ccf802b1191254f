"""Start-up of ``binlog`` command lines, checkouts side by side: the CPU time of
importing ``binlog.cli`` and building the parser of one command line (min / median ms).

    python bench/parser_startup_bench.py [--runs 30] CHECKOUT [CHECKOUT ...]

CPU time rather than wall-clock: on a shared machine the wall-clock of a 40 ms process
varies by more than what an import adds.  Each run is a fresh interpreter pinned to
CPU 0; the checkouts take turns; the first three rounds only warm the caches.  Byte code
is cached (a private PYTHONPYCACHEPREFIX per checkout) as in an installed package, even
where PYTHONDONTWRITEBYTECODE is set.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

COMMAND_LINES = (("--version",), ("--help",), ("dump",), ("stats",), ("ingest",))
WARM = 3
CODE = ("import sys, time; t = time.process_time(); from binlog import cli; "
        "cli.build_parser(sys.argv[1:]); print((time.process_time() - t) * 1e3)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="startup-pyc-")
    times: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    for round_ in range(args.runs + WARM):
        for index, tree in enumerate(args.checkouts):
            env = dict(os.environ, PYTHONPATH=tree, PYTHONDONTWRITEBYTECODE="",
                       PYTHONPYCACHEPREFIX=os.path.join(cache, str(index)))
            for words in COMMAND_LINES:
                out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", CODE, *words],
                                     cwd=tree, env=env, check=True, capture_output=True, text=True)
                if round_ >= WARM:
                    times.setdefault((tree, words), []).append(float(out.stdout))
    print("| import binlog.cli + build_parser(...) | " + " | ".join(args.checkouts) + " |")
    print("|---" * (len(args.checkouts) + 1) + "|")
    for words in COMMAND_LINES:
        cells = [f"{min(t):.1f} / {statistics.median(t):.1f}"
                 for t in (times[(tree, words)] for tree in args.checkouts)]
        print(f"| `binlog {' '.join(words)}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
