#!/usr/bin/env python3
"""Run a command and report the CPU seconds its whole process tree used, by kind.

    python bench/cputree.py [--cpus 0] -- binlog ingest DIR --to OUT --master local[1]

Polls /proc every 0.2 s (a process that lives shorter than that is missed: fine for
Spark's JVM and its long-lived Python workers).  Kinds: ``jvm`` (java), ``python-worker``
(pyspark.daemon / worker), ``driver`` (the command itself), ``other``.  With --cpus the
command and everything it starts are pinned to those CPUs (sched_setaffinity is
inherited), which is how the Spark benchmark measures "1 core" and "2 cores".
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid) -> list[str]:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...)."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()


def _children() -> dict[int, int]:
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = _stat(name)
            except OSError:          # the process ended while we looked
                continue
            parents[int(name)] = int(fields[1])
    return parents


def _cpu(pid: int) -> tuple[float, str] | None:
    try:
        fields = _stat(pid)
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK, cmd


def kind(pid: int, root: int, cmd: str) -> str:
    if pid == root:
        return "driver"
    if "java" in cmd.split(" ")[0]:
        return "jvm"
    if "pyspark" in cmd or "worker" in cmd:
        return "python-worker"
    return "other"


def measure(cmd: list[str], cpus: set[int] | None = None, **popen) -> dict:
    started = time.time()
    proc = subprocess.Popen(cmd, preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
                            **popen)
    seen: dict[int, tuple[float, str]] = {}
    while proc.poll() is None:
        parents = _children()
        tree = {proc.pid}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        for pid in tree:
            got = _cpu(pid)
            if got is not None:
                seen[pid] = (max(got[0], seen.get(pid, (0.0, ""))[0]), got[1])
        time.sleep(0.2)
    wall = time.time() - started
    by_kind: dict[str, float] = {}
    for pid, (cpu, command) in seen.items():
        k = kind(pid, proc.pid, command)
        by_kind[k] = round(by_kind.get(k, 0.0) + cpu, 2)
    return {"returncode": proc.returncode, "wall": round(wall, 2), "cpu": by_kind,
            "cpu_total": round(sum(by_kind.values()), 2)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpus", help="comma-separated CPU numbers to pin the tree to")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    cpus = {int(c) for c in args.cpus.split(",")} if args.cpus else None
    print(json.dumps(measure(cmd, cpus)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
