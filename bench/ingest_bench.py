#!/usr/bin/env python3
"""The decode stage of `binlog ingest` and of the Spark data source, rows/s per core,
this tree against a baseline commit, in one run (results in BENCHMARKS.md).

    python bench/ingest_bench.py [--data FILE] [--mb 27] [--schema-ddl DUMP]
                                 [--baseline REV] [--repeat 3] [--pure] [--json FILE|-]

The input is a cut of ``--data`` (default the lead's /work/bench-data/mysql56 binlog, with
the legacy set's schema dump: the same tables), at the first transaction end after
``--mb`` MB.  The baseline is ``git archive REV`` of this repository in a temporary
directory, its compiled module built there (``setup.py build_ext --inplace``).  Each
contender runs in its own process pinned to one CPU, the two alternating, ``--repeat``
times; the best time of each is kept (the machine is shared).  Three stages are timed:

- ``ingest``: ``binlog ingest --engine local --parallelism 1``, the summary's ``decode``
  seconds: decoding plus the Parquet files of changes/ and the typed tables/;
- ``ingest-no-tables``: the same with ``--no-tables`` (changes/ only);
- ``datasource``: what a Spark task of ``spark.read.format("binlog")`` runs
  (``records.read_split`` over the plan's splits, the Arrow batches consumed, no JVM).

The ingest stages' time is the summary's decode seconds (wall, pinned), with the whole
process's CPU seconds beside it (start-up and pre-scan included: steadier on a loaded
machine); the data source's is the CPU time of the reads.  ``--pure`` runs both with
BINLOG_PURE=1.  ``--json``: the figures as JSON (``-``: stdout).
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
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# main just before the batch path landed (the baseline BENCHMARKS.md compares with, CDC fields included)
DEFAULT_BASELINE = "23f8607"
DEFAULT_DATA = Path("/work/bench-data/mysql56/mariadb-bin.000002")
DEFAULT_SCHEMA = Path("/work/bench-data/legacy/schema.sql")
XID_EVENT = 16

DATASOURCE = r"""
import json, sys, time
from spark_ingest.options import parse_options
from spark_ingest.plan import build_plan
from spark_ingest.records import read_split
opts = json.loads(sys.argv[1])
plan = build_plan(parse_options(opts))
rows = 0
started = time.process_time()
for split in plan.splits:
    for batch in read_split(split, plan.options, plan.snapshots[split.group], keys=plan.key_ring()):
        rows += batch.num_rows
print(json.dumps({"seconds": time.process_time() - started, "rows": rows}))
"""


def cut(source: Path, target: Path, megabytes: float) -> int:
    """The events of ``source`` up to the first XID at or after ``megabytes`` MB (whole
    transactions: ingest reads only committed ones)."""
    size = int(megabytes * 1_000_000)
    with open(source, "rb") as fh:
        data = fh.read(max(size * 2, 64 << 20))
    pos, end = 4, 4
    while pos + 19 <= len(data):
        typ = data[pos + 4]
        length = struct.unpack_from("<I", data, pos + 9)[0]
        if length < 19 or pos + length > len(data):
            break
        pos += length
        if typ == XID_EVENT:
            end = pos
            if pos >= size:
                break
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data[:end])
    return end


def baseline_tree(rev: str, where: Path) -> Path:
    tree = where / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    built = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                           capture_output=True, text=True)
    if built.returncode != 0:
        print(f"baseline: compiled module not built ({built.stderr.strip()[-200:]})", file=sys.stderr)
    return tree


def _env(tree: Path, pure: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if pure:
        env["BINLOG_PURE"] = "1"
    return env


def _pinned():
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def run_ingest(tree: Path, binlog: Path, schema: list[str], out: Path, pure: bool,
               tables: bool) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    summary = out.with_suffix(".json")
    args = [sys.executable, "-m", "binlog.cli", "ingest", str(binlog), "--to", str(out),
            "--engine", "local", "--parallelism", "1", "--no-progress", "--summary-json",
            str(summary)]
    args += [a for s in schema for a in ("--schema-ddl", s)]
    if not tables:
        args.append("--no-tables")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, env=_env(tree, pure), check=True, capture_output=True,
                   preexec_fn=_pinned, cwd=tree)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = json.loads(summary.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": data["seconds"]["decode"], "rows": data["rows"], "cpu_seconds": cpu}


def run_datasource(tree: Path, binlog: Path, schema: list[str], pure: bool) -> dict:
    opts = {"path": str(binlog), "schema-ddl": json.dumps(schema)} if schema else {"path": str(binlog)}
    done = subprocess.run([sys.executable, "-c", DATASOURCE, json.dumps(opts)], env=_env(tree, pure),
                          check=True, capture_output=True, text=True, preexec_fn=_pinned, cwd=tree)
    return json.loads(done.stdout.strip().splitlines()[-1])


STAGES = {
    "ingest": lambda tree, binlog, schema, out, pure: run_ingest(tree, binlog, schema, out, pure, True),
    "ingest-no-tables": lambda tree, binlog, schema, out, pure: run_ingest(tree, binlog, schema, out,
                                                                           pure, False),
    "datasource": lambda tree, binlog, schema, out, pure: run_datasource(tree, binlog, schema, pure),
}


def measure(trees: dict, binlog: Path, schema: list[str], work: Path, repeat: int,
            pure: bool) -> dict:
    best: dict = {}
    for stage, run in STAGES.items():
        for _ in range(repeat):
            for name, tree in trees.items():        # alternating: the same load for both
                got = run(tree, binlog, schema, work / f"out-{name}", pure)
                key = (stage, name)
                if key not in best or got["seconds"] < best[key]["seconds"]:
                    best[key] = got
    results = {}
    for stage in STAGES:
        entry = {}
        for name in trees:
            got = best[(stage, name)]
            entry[name] = {"seconds": round(got["seconds"], 3), "rows": got["rows"],
                           "rows_per_s": round(got["rows"] / got["seconds"]) if got["seconds"] else None}
            if "cpu_seconds" in got:
                entry[name]["process_cpu_seconds"] = round(got["cpu_seconds"], 3)
        if entry["baseline"]["rows"] != entry["current"]["rows"]:
            raise SystemExit(f"{stage}: the trees gave different row counts: {entry}")
        entry["speedup"] = round(entry["baseline"]["seconds"] / entry["current"]["seconds"], 2)
        if "process_cpu_seconds" in entry["current"]:
            entry["process_cpu_speedup"] = round(entry["baseline"]["process_cpu_seconds"]
                                                 / entry["current"]["process_cpu_seconds"], 2)
        results[stage] = entry
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--mb", type=float, default=27.0)
    ap.add_argument("--schema-ddl", action="append", default=None)
    ap.add_argument("--baseline", default=DEFAULT_BASELINE)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pure", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    schema = args.schema_ddl
    if schema is None:
        schema = [str(DEFAULT_SCHEMA)] if DEFAULT_SCHEMA.exists() else []
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as tmp:
        work = Path(tmp)
        binlog = work / "data" / "mariadb-bin.000001"
        nbytes = cut(args.data, binlog, args.mb)
        trees = {"baseline": baseline_tree(args.baseline, work), "current": REPO}
        started = time.time()
        results = measure(trees, binlog, [str(Path(s).resolve()) for s in schema], work,
                          args.repeat, args.pure)
    report = {"data": str(args.data), "bytes": nbytes, "schema_ddl": schema,
              "baseline": args.baseline, "pure": args.pure, "repeat": args.repeat,
              "wall_seconds": round(time.time() - started, 1), "stages": results}
    for stage, entry in results.items():
        b, c = entry["baseline"], entry["current"]
        print(f"{stage:18} baseline {b['seconds']:7.2f} s {b['rows_per_s']:>9} rows/s   "
              f"current {c['seconds']:7.2f} s {c['rows_per_s']:>9} rows/s   x{entry['speedup']}"
              + (f"   (whole process CPU x{entry['process_cpu_speedup']})"
                 if "process_cpu_speedup" in entry else ""))
    if args.json:
        text = json.dumps(report, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
