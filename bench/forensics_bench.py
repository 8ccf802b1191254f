#!/usr/bin/env python3
"""Forensics over the lake against ``binlog dump | jq`` (docs/replay.md's walk-through).

    python bench/forensics_bench.py --binlog FILE [--repeat 3] [--json OUT]

On the bench binlog (``bench/generate.py``: 10 tables bench.t0..t9, ids 1..100,000, every
fifth row updated, every tenth from 3 deleted), three questions, each answered three
ways, one process pinned to CPU 0 (``taskset -c 0``; DuckDB with one thread):

- the history of one row (bench.t3 id 4710: inserted, updated);
- one transaction (the DELETE of bench.t3: 10,000 rows);
- one time range (the second of the binlog holding the most row changes... the first
  full second after its start).

``history``: ``binlog history LAKE`` (spark_ingest/history.py); ``duckdb``: the same
question as one hand-written query over ``changes/`` (``read_parquet`` of every file,
JSON extraction), the form docs/replay.md shows; ``dump+jq``: ``binlog dump`` of the
binlog piped to ``jq -c 'select(...)'`` (with ``--table`` for the row, as the
walk-through does).  The lake is written once first by ``binlog ingest`` (timed too).
Each figure: CPU seconds (user + system of the whole pipeline, GNU time) and wall, the
best of --repeat runs; the answers of the three ways are checked to be the same records.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []
TABLE, KEY = "bench.t3", 4710

DUCKDB_SQL = {
    "row": """SELECT file, pos, op, before, after FROM read_parquet('{lake}/changes/**/*.parquet',
      hive_partitioning = true) WHERE db = 'bench' AND "table" = 't3'
      AND (json_extract_string(before, '$.id') = '{key}' OR json_extract_string(after, '$.id') = '{key}')
      ORDER BY file, pos, "row\"""",
    "transaction": """SELECT file, pos, op, before, after FROM read_parquet('{lake}/changes/**/*.parquet',
      hive_partitioning = true) WHERE gtid = '{gtid}' ORDER BY file, pos, "row\"""",
    "range": """SELECT file, pos, op, before, after FROM read_parquet('{lake}/changes/**/*.parquet',
      hive_partitioning = true) WHERE ts >= to_timestamp({start}) AND ts < to_timestamp({stop})
      ORDER BY file, pos, "row\"""",
}


def timed(command: str) -> tuple[float, float, bytes]:
    """CPU seconds (user + sys, the whole pipeline), wall seconds and output of a shell
    command run pinned to CPU 0."""
    with tempfile.NamedTemporaryFile("r") as times:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", times.name, *PIN, "sh", "-c", command],
                              capture_output=True, check=True)
        wall = time.perf_counter() - started
        user, system = map(float, times.read().split()[-2:])
    return user + system, wall, done.stdout


def best(repeat: int, command: str) -> dict:
    runs = [timed(command) for _ in range(repeat)]
    cpu, wall, out = min(runs, key=lambda r: r[0])
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "records": out.count(b"\n"),
            "runs_cpu_s": [round(r[0], 2) for r in runs], "output": out}


def questions(binlog: Path) -> dict:
    """The GTID of the DELETE of bench.t3 and a one-second range, from the dump itself."""
    cli = f"{sys.executable} -m binlog.cli"
    out = subprocess.run(f"{cli} dump --table {TABLE} {binlog} | jq -c 'select(.op == \"delete\") | .gtid' | head -1",
                         shell=True, capture_output=True, text=True, check=True, cwd=REPO).stdout
    gtid = json.loads(out)
    first = subprocess.run(f"{cli} dump {binlog} | head -1 | jq .ts", shell=True, capture_output=True, text=True,
                           check=True, cwd=REPO).stdout
    from datetime import datetime

    start = int(datetime.fromisoformat(json.loads(first).replace("Z", "+00:00")).timestamp()) + 1
    return {"gtid": gtid, "start": start, "stop": start + 1}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binlog", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    binlog = args.binlog.resolve()
    cli = f"{sys.executable} -m binlog.cli"
    q = questions(binlog)
    from datetime import datetime, timezone

    def stamp(epoch):
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")

    results: dict = {"binlog": str(binlog), "bytes": binlog.stat().st_size, **q}
    with tempfile.TemporaryDirectory(prefix="forensics-") as tmp:
        lake = f"{tmp}/lake"
        cpu, wall, _ = timed(f"cd {REPO} && {cli} ingest --engine local --parallelism 1 --no-progress "
                             f"--to {lake} {binlog}")
        results["ingest"] = {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}
        history = f"cd {REPO} && {cli} history {lake} --threads 1"
        duck = (f"{sys.executable} -c \"import duckdb, sys; con = duckdb.connect(); con.execute('SET threads = 1'); "
                "[print(*row, sep=chr(9)) for row in con.execute(sys.argv[1]).fetchall()]\" ")
        commands = {
            "row": {
                "history": f"{history} --table {TABLE} --key id={KEY}",
                "duckdb": duck + _quoted(DUCKDB_SQL["row"].format(lake=lake, key=KEY)),
                "dump+jq": f"cd {REPO} && {cli} dump --table {TABLE} {binlog} | "
                           f"jq -c 'select((.before.id // .after.id) == {KEY})'",
            },
            "transaction": {
                "history": f"{history} --gtid {q['gtid']}",
                "duckdb": duck + _quoted(DUCKDB_SQL["transaction"].format(lake=lake, gtid=q["gtid"])),
                "dump+jq": f"cd {REPO} && {cli} dump {binlog} | jq -c 'select(.gtid == \"{q['gtid']}\")'",
            },
            "range": {
                "history": f"{history} --start-datetime '{stamp(q['start'])}' --stop-datetime '{stamp(q['stop'])}'",
                "duckdb": duck + _quoted(DUCKDB_SQL["range"].format(lake=lake, start=q["start"], stop=q["stop"])),
                "dump+jq": f"cd {REPO} && {cli} dump --start-datetime '{stamp(q['start'])}' "
                           f"--stop-datetime '{stamp(q['stop'])}' {binlog} | jq -c 'select(.op != null)'",
            },
        }
        for question, ways in commands.items():
            results[question] = {}
            for way, command in ways.items():
                got = best(args.repeat, command)
                results[question][way] = got
                print(f"{question:12s} {way:8s} {got['cpu_s']:7.2f} s CPU {got['wall_s']:7.2f} s wall "
                      f"{got['records']:7d} records", flush=True)
            _same(question, results[question])
    for question in ("row", "transaction", "range"):
        for way in results[question].values():
            way.pop("output")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    print()
    print(report(results))
    return 0


def _quoted(sql: str) -> str:
    return "'" + " ".join(sql.split()).replace("'", "'\"'\"'") + "'"


def _same(question: str, found: dict) -> None:
    """The three ways found the same records (history and dump+jq: the same records, jq
    writing 1570.0 as 1570; DuckDB: the same number)."""
    history = [json.loads(line) for line in found["history"]["output"].splitlines()]
    jq = [record for record in map(json.loads, found["dump+jq"]["output"].splitlines())
          if record.get("op") in ("insert", "update", "delete")]
    if history != jq or found["duckdb"]["records"] != len(history):
        raise SystemExit(f"{question}: the answers differ ({len(history)} history, {len(jq)} dump+jq, "
                         f"{found['duckdb']['records']} duckdb)")


def report(results: dict) -> str:
    lines = ["| question | records | `binlog history` | DuckDB SQL | `binlog dump \\| jq` |",
             "|---|---:|---:|---:|---:|"]
    names = {"row": f"history of one row ({TABLE} id {KEY})", "transaction": f"one transaction ({results['gtid']})",
             "range": "one second of changes"}
    for question, label in names.items():
        r = results[question]
        lines.append(f"| {label} | {r['history']['records']:,} | "
                     + " | ".join(f"{r[w]['cpu_s']:.2f} s ({r[w]['wall_s']:.2f} s wall)"
                                  for w in ("history", "duckdb", "dump+jq")) + " |")
    lines.append(f"\nThe lake itself: `binlog ingest` {results['ingest']['cpu_s']:.2f} s CPU once.")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
