#!/usr/bin/env python3
"""CPU time inside the compiled row walk during one `binlog dump`, for comparing builds.

    taskset -c 0 python bench/walk_cpu_bench.py TREE [dump options] FILE

TREE: a checkout with its extensions built in place (`python setup.py build_ext
--inplace`); its `binlog` package is imported.  The dump runs in this process with its
output sent to /dev/null; the thread CPU time spent in the compiled functions of
binlog/_speedups_*.c that render rows (encode_run, encode_rows, sql_values, checksum_rows,
decode_event) is summed.  Prints on stderr: that time, the process's CPU time (both in
seconds), the dump's exit status and the time per function.  CPU time rather than wall
time: on a shared machine the wall time of a run mostly measures the other processes.
"""
from __future__ import annotations

import os
import sys
import time

TIMED = {"encode_run", "encode_rows", "sql_values", "checksum_rows", "decode_event"}


class Timed:
    """Stands in for the compiled module: its row functions timed, the rest as they are."""

    def __init__(self, module, spent: dict):
        self._module = module
        self._spent = spent

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if name not in TIMED:
            return value
        spent = self._spent

        def timed(*args):
            start = time.thread_time_ns()
            try:
                return value(*args)
            finally:
                spent[name] = spent.get(name, 0) + time.thread_time_ns() - start
        return timed


def main(argv: list[str]) -> int:
    tree, dump_args = os.path.abspath(argv[0]), argv[1:]
    sys.path.insert(0, tree)
    import binlog.rows as rows
    from binlog.cli import main as cli

    if rows._speedups is None or not rows._speedups.__file__.startswith(tree):
        raise SystemExit(f"{tree}: its compiled module is not built (or not the one imported)")
    spent: dict[str, int] = {}
    rows._speedups = Timed(rows._speedups, spent)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    start = time.process_time()
    status = cli(["dump", "--quiet", *dump_args])
    sys.stdout.flush()
    total = time.process_time() - start
    parts = " ".join(f"{name}={ns / 1e9:.3f}" for name, ns in sorted(spent.items()))
    print(f"{sum(spent.values()) / 1e9:.4f} {total:.4f} {status} {parts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
