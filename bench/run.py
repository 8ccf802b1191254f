#!/usr/bin/env python3
"""The decoder benchmark (`make bench`): one run, one core, every
contender on the same binlog; writes bench/results.json and prints the table and the
ratios against the targets (TARGETS below) for BENCHMARKS.md.

    python bench/run.py [--data /work/bench-data] [--pmr-rows 100000] [--skip-pmr]
                        [--pure] [--skip-apply] [--skip-spark] [--apply-mb 50] [--repeat 1]

Contenders, each pinned to CPU 0 with taskset, output to /dev/null, wall and CPU
(user+sys) seconds and peak RSS from GNU time:
  mariadb     mariadb-binlog -v --base64-output=decode-rows
  json        binlog dump --format json
  text        binlog dump --format text
  sql         binlog dump --format sql (safe mode: REPLACE / DELETE by key)
  filtered    binlog dump --format json --table bench.t3 (1 of 10 tables)
  stats       binlog stats
  api         decode-only Python API: for change in BinlogReader(...).changes(): pass
  legacy      binlog dump --format json --schema-ddl schema.sql on the legacy set
  json-pure   (--pure) the JSON dump with BINLOG_PURE=1
  rss-1gib    binlog dump --format json on 1 GiB (5 x the binlog)
  pmr         python-mysql-replication streaming the binlog from a real mariadbd
              (first --pmr-rows rows: rows/s is what is compared)
  apply       bench/apply_bench.py --mb N --json, when present: binlog apply (--method sql and binlog) vs
              mariadb-binlog | mariadb vs dump --format sql | mariadb into a local server
  spark       bench/ingest_bench.py --repeat 1 --json -, when present: the decode stage of
              ingest and of the Spark data source against its baseline commit
  ingest      (not with --skip-ingest) the lake on the same binlog, each its own process:
    ingest-parquet  binlog ingest --engine local --parallelism 1 --schema-ddl schema.sql
                    (changes/ and tables/ as Parquet)
    ingest-noschema the same without --schema-ddl: the binlog holds no DDL (its tables were
                    made before it), so every table is one no schema describes (typed from
                    its images, spark_ingest/shredded.py) - the forensics case
    json-nometa, ingest-nometa  (when bench/data/nometa/ exists) the JSON dump and the
                    ingest without a schema of the same rows written with
                    binlog_row_metadata=NO_LOG (keys @N, text as {"bytes_hex": ...})
    ingest-delta    the same with --format delta
    datasource      what a Spark task of spark.read.format("binlog") runs (its decode stage:
                    records.read_split over the plan's splits, Arrow batches, no JVM)
    duckdb-json     the outside anchor: DuckDB (one thread) reading our dump --format json
                    output into one Parquet file (zstd), the JSON written beforehand
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def run(cmd, env=None, stdout=subprocess.DEVNULL) -> tuple[float, int | None, float | None]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + sys) of one command (GNU time)."""
    with tempfile.NamedTemporaryFile("r") as rss_file:
        timer = (["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file.name]
                 if Path("/usr/bin/time").exists() else [])
        started = time.perf_counter()
        proc = subprocess.run(timer + PIN + cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()[-2000:]}")
        text = rss_file.read().strip().splitlines()
    fields = text[-1].split() if text else []
    if len(fields) == 3:
        return wall, int(fields[0]), float(fields[1]) + float(fields[2])
    return wall, None, None


def api_script(binlog: Path, extra: str) -> list[str]:
    code = (f"from binlog.reader import BinlogReader\n{extra}\n"
            f"n = sum(1 for _ in BinlogReader([{str(binlog)!r}], schema=schema).changes())\n"
            "print(n)")
    return [sys.executable, "-c", code]


def pmr_rate(binlog: Path, limit: int) -> tuple[float, int]:
    """Serve the binlog from a real mariadbd and stream it with python-mysql-replication."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
    from support.mariadb_server import MariaDBServer

    srv = MariaDBServer({"binlog_row_metadata": "FULL"}).start()
    try:
        srv.execute("CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'bench'")
        srv.execute("GRANT ALL ON *.* TO 'bench'@'127.0.0.1'")
        srv.flush_logs()
        srv.stop()
        # Hand the server our binlog as its next file: the index lists it, so it serves it.
        name = "mariadb-bin.999999"
        shutil.copy(binlog, srv.binlog_dir / name)
        index = next(srv.binlog_dir.glob("*.index"))
        index.write_text(index.read_text() + f"{srv.binlog_dir / name}\n")
        srv.start()
        stream = BinLogStreamReader(
            connection_settings={"host": "127.0.0.1", "port": srv.port, "user": "bench",
                                 "passwd": "bench"},
            server_id=4243, blocking=False, resume_stream=True, log_file=name, log_pos=4,
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent])
        rows = 0
        started = time.perf_counter()
        for event in stream:
            for _ in event.rows:
                rows += 1
            if rows >= limit:
                break
        wall = time.perf_counter() - started
        stream.close()
        return wall, rows
    finally:
        srv.cleanup()


def stats_rows(binlog: Path, extra: list[str]) -> tuple[int, dict]:
    """Row changes (all tables) and the per-table counts, from binlog stats --json."""
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "stats", "--json", *extra, str(binlog)],
                         stdout=subprocess.PIPE, check=True).stdout
    tables = json.loads(out)["tables"]
    return sum(t["inserted"] + t["updated"] + t["deleted"] for t in tables.values()), tables


def helper_bench(script: str, args: list[str]) -> dict | None:
    """Run another bench script of this directory that prints JSON (None: not there)."""
    path = REPO / "bench" / script
    if not path.exists():
        print(f"{script}: not in this tree, skipped", flush=True)
        return None
    proc = subprocess.run([sys.executable, str(path), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, cwd=REPO)
    if proc.returncode != 0:
        print(f"{script} failed, skipped:\n{proc.stderr.decode()[-1500:]}", flush=True)
        return None
    text = proc.stdout.decode()
    return json.loads(text[text.index("{"):])


TARGETS = [
    # (name, how the ratio is computed, its target, met when)
    ("JSON dump time / mariadb-binlog -v time", "json_vs_mariadb", "<= 0.5", lambda r: r <= 0.5),
    ("text dump time / mariadb-binlog -v time", "text_vs_mariadb", "<= 1.0", lambda r: r <= 1.0),
    ("full JSON dump time / 1-of-10 filtered time", "filter_speedup", ">= 10", lambda r: r >= 10),
    ("binlog stats time / mariadb-binlog -v time", "stats_vs_mariadb", "<= 0.15", lambda r: r <= 0.15),
    ("binlog apply MB/s", "apply_mb_per_s", ">= 20", lambda r: r >= 20),
    ("binlog apply time / mariadb-binlog \\| mariadb time", "apply_vs_mariadb", "< 1.0", lambda r: r < 1.0),
    ("binlog apply --method binlog MB/s", "apply_binlog_mb_per_s", ">= 20", lambda r: r >= 20),
    ("binlog apply --method binlog time / mariadb-binlog \\| mariadb time", "apply_binlog_vs_mariadb",
     "< 1.0", lambda r: r < 1.0),
    ("Spark data source decode, this tree / baseline rows/s", "spark_speedup", ">= 2", lambda r: r >= 2),
    ("peak RSS on 1 GiB (MiB)", "rss_1gib_mib", "< 143 (150 MB)", lambda r: r < 143),
    ("binlog ingest --engine local, one core, MB/s of binlog", "ingest_mb_per_s", ">= 60", lambda r: r >= 60),
    ("ingest time / JSON dump time, with a schema", "ingest_vs_json", "<= 2.0", lambda r: r <= 2.0),
    ("ingest time / JSON dump time, no schema", "ingest_schemaless_vs_json", "<= 2.5", lambda r: r <= 2.5),
]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--pmr-rows", type=int, default=100_000)
    parser.add_argument("--skip-pmr", action="store_true")
    parser.add_argument("--pure", action="store_true", help="also the JSON dump with BINLOG_PURE=1")
    parser.add_argument("--skip-apply", action="store_true")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--skip-ingest", action="store_true", help="no lake contenders (ingest, DuckDB)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each decoder contender this many times, alternating, and "
                             "keep the run of least CPU (a shared machine's noise)")
    parser.add_argument("--apply-mb", type=float, default=50.0,
                        help="binlog MB the apply contenders replay (bench/apply_bench.py --mb)")
    args = parser.parse_args(argv)
    if not (args.data / "mysql56").is_dir():
        subprocess.run([sys.executable, str(REPO / "bench" / "generate.py"), "--out", str(args.data)],
                       check=True)
    binlog = next((args.data / "mysql56").glob("mariadb-bin.0*"))
    legacy = next((args.data / "legacy").glob("mariadb-bin.0*"))
    schema_sql = args.data / "legacy" / "schema.sql"
    # Time the tool as an installed wheel runs: with bytecode. A shell with
    # PYTHONDONTWRITEBYTECODE would make every contender compile the package first
    # (~0.13 s per command, measured): write the .pyc files once, then let them be used.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q"] + [str(REPO / p) for p in ("binlog", "spark_ingest", "schema_store")],
                   check=True)
    cli = [sys.executable, "-m", "binlog.cli"]
    dump = cli + ["dump", "--format", "json"]
    rows, tables = stats_rows(binlog, [])
    results: dict = {"file": binlog.name, "bytes": binlog.stat().st_size, "rows": rows,
                     "cpu": "1 core (taskset -c 0)" if PIN else "unpinned", "contenders": {}}

    def record(name, timing, nrows, command):
        wall, rss, cpu = timing
        results["contenders"][name] = {
            "seconds": round(wall, 2), "cpu_seconds": cpu and round(cpu, 2), "rows": nrows,
            "rows_per_s": round(nrows / wall), "peak_rss_mib": rss and round(rss / 1024),
            "command": command}
        print(f"{name:10s} {wall:8.2f} s wall {cpu or 0:8.2f} s CPU {nrows / wall:12,.0f} rows/s "
              f"{(rss or 0) / 1024:6.0f} MiB  {command}", flush=True)

    kept = sum(t["inserted"] + t["updated"] + t["deleted"] for n, t in tables.items() if n == "bench.t3")
    legacy_rows, _ = stats_rows(legacy, ["--schema-ddl", str(schema_sql)])
    decoders = [  # (name, command, rows, what the table says)
        ("mariadb", ["mariadb-binlog", "-v", "--base64-output=decode-rows", str(binlog)], rows,
         "mariadb-binlog -v --base64-output=decode-rows FILE > /dev/null"),
        ("json", dump + [str(binlog)], rows, "binlog dump --format json FILE > /dev/null"),
        ("text", cli + ["dump", "--format", "text", str(binlog)], rows,
         "binlog dump --format text FILE > /dev/null"),
        ("sql", cli + ["dump", "--format", "sql", str(binlog)], rows,
         "binlog dump --format sql FILE > /dev/null"),
        ("filtered", dump + ["--table", "bench.t3", str(binlog)], kept,
         "binlog dump --format json --table bench.t3 FILE > /dev/null"),
        ("stats", cli + ["stats", str(binlog)], rows, "binlog stats FILE > /dev/null"),
        ("api", api_script(binlog, "schema = None"), rows,
         "for change in BinlogReader([FILE]).changes(): pass"),
        ("legacy", dump + ["--schema-ddl", str(schema_sql), str(legacy)], legacy_rows,
         "binlog dump --format json --schema-ddl schema.sql LEGACY_FILE > /dev/null"),
    ]
    timings: dict[str, list] = {name: [] for name, *_ in decoders}
    for _ in range(args.repeat):
        for name, command, *_ in decoders:
            timings[name].append(run(command))
    for name, _command, nrows, label in decoders:
        record(name, min(timings[name], key=lambda t: t[2] if t[2] is not None else t[0]), nrows, label)
    if args.pure:
        record("json-pure", run(dump + [str(binlog)], env=dict(os.environ, BINLOG_PURE="1")), rows,
               "BINLOG_PURE=1 binlog dump --format json FILE > /dev/null")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):   # 5 x 205 MB in one directory: a 1 GiB input (copies: the
            # reader refuses one file given twice, links included)
            shutil.copyfile(binlog, Path(tmp) / f"mariadb-bin.{i + 1:06d}")
        # copies of one binlog do not continue each other: --allow-gaps reads on
        record("rss-1gib", run(dump + ["--allow-gaps", tmp]), rows * 5,
               "binlog dump --format json --allow-gaps DIR_OF_5_COPIES > /dev/null")
    if not args.skip_ingest:
        ingest_contenders(record, cli, binlog, schema_sql, rows)
    if not args.skip_pmr:
        wall, nrows = pmr_rate(binlog, args.pmr_rows)
        record("pmr", (wall, None, None), nrows,
               f"python-mysql-replication BinLogStreamReader from a local mariadbd, first {nrows} rows")
    if not args.skip_apply:
        results["apply"] = helper_bench("apply_bench.py", ["--binlog", str(binlog), "--mb",
                                                           str(args.apply_mb), "--json"])
    if not args.skip_spark:
        results["spark"] = helper_bench("ingest_bench.py", ["--data", str(binlog), "--repeat", "1",
                                                            "--json", "-"])
    results["ratios"] = ratios(results)
    (REPO / "bench" / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print()
    print(report(results))


DATASOURCE = """
import sys
from spark_ingest.options import parse_options
from spark_ingest.plan import build_plan
from spark_ingest.records import read_split
plan = build_plan(parse_options({"path": sys.argv[1], "schema-ddl": sys.argv[2]}))
rows = sum(batch.num_rows for split in plan.splits
           for batch in read_split(split, plan.options, plan.snapshots[split.group], keys=plan.key_ring()))
print(rows)
"""

DUCKDB = """
import sys
import duckdb
con = duckdb.connect()
con.execute("SET threads = 1")
# maximum_depth 1: before/after stay JSON text, as in our changes/ (their keys differ by table)
con.execute("COPY (SELECT * FROM read_json(?, format = 'newline_delimited', maximum_depth = 1)) TO '"
            + sys.argv[2] + "' (FORMAT parquet, COMPRESSION zstd)", [sys.argv[1]])
"""


def ingest_contenders(record, cli, binlog: Path, schema_sql: Path, rows: int) -> None:
    """The lake contenders (module docstring), each in its own process."""
    with tempfile.TemporaryDirectory() as tmp:
        ingest = cli + ["ingest", "--engine", "local", "--parallelism", "1", "--no-progress",
                        "--schema-ddl", str(schema_sql)]
        record("ingest-parquet", run(ingest + ["--to", f"{tmp}/parquet", str(binlog)]), rows,
               "binlog ingest --engine local --parallelism 1 --schema-ddl schema.sql --to DIR FILE")
        bare = [arg for arg in ingest if arg not in ("--schema-ddl", str(schema_sql))]
        record("ingest-noschema", run(bare + ["--to", f"{tmp}/noschema", str(binlog)]), rows,
               "binlog ingest --engine local --parallelism 1 --to DIR FILE (no schema)")
        nometa = next((binlog.parent.parent / "nometa").glob("mariadb-bin.0*"), None)
        if nometa is not None:
            record("json-nometa", run(cli + ["dump", "--format", "json", str(nometa)]), rows,
                   "binlog dump --format json NOMETA_FILE > /dev/null")
            record("ingest-nometa", run(bare + ["--to", f"{tmp}/nometa", str(nometa)]), rows,
                   "binlog ingest --engine local --parallelism 1 --to DIR NOMETA_FILE (no schema)")
        record("ingest-delta", run(ingest + ["--format", "delta", "--to", f"{tmp}/delta", str(binlog)]), rows,
               "binlog ingest --engine local --parallelism 1 --format delta --schema-ddl schema.sql --to DIR FILE")
        record("datasource", run([sys.executable, "-c", DATASOURCE, str(binlog), str(schema_sql)]), rows,
               "spark.read.format('binlog') decode stage: records.read_split of every split (no JVM)")
        dump = Path(tmp) / "dump.json"
        with open(dump, "wb") as out:
            subprocess.run(cli + ["dump", "--format", "json", str(binlog)], stdout=out, check=True)
        record("duckdb-json", run([sys.executable, "-c", DUCKDB, str(dump), f"{tmp}/duck.parquet"]), rows,
               "DuckDB (threads=1): COPY (SELECT * FROM read_json(DUMP.json, maximum_depth=1)) "
               "TO x.parquet (zstd)")


def ratios(results: dict) -> dict:
    c = results["contenders"]
    wall = {name: entry["seconds"] for name, entry in c.items()}
    out: dict = {
        "json_vs_mariadb": round(wall["json"] / wall["mariadb"], 2),
        "text_vs_mariadb": round(wall["text"] / wall["mariadb"], 2),
        "sql_vs_mariadb": round(wall["sql"] / wall["mariadb"], 2),    # no target: recorded
        "filter_speedup": round(wall["json"] / wall["filtered"], 1),
        "stats_vs_mariadb": round(wall["stats"] / wall["mariadb"], 3),
        "rss_1gib_mib": c["rss-1gib"]["peak_rss_mib"],
    }
    if "ingest-parquet" in c:
        size = results["bytes"] / 1e6
        out["ingest_mb_per_s"] = round(size / wall["ingest-parquet"], 1)
        out["ingest_vs_json"] = round(wall["ingest-parquet"] / wall["json"], 2)
    if "ingest-noschema" in c:
        out["ingest_schemaless_vs_json"] = round(wall["ingest-noschema"] / wall["json"], 2)
    cpu = {name: entry["cpu_seconds"] for name, entry in c.items() if entry.get("cpu_seconds")}
    if {"json", "text", "filtered", "stats", "mariadb"} <= set(cpu):
        out["cpu"] = {"json_vs_mariadb": round(cpu["json"] / cpu["mariadb"], 2),
                      "text_vs_mariadb": round(cpu["text"] / cpu["mariadb"], 2),
                      "filter_speedup": round(cpu["json"] / cpu["filtered"], 1),
                      "stats_vs_mariadb": round(cpu["stats"] / cpu["mariadb"], 3)}
        if "ingest-parquet" in cpu:
            out["cpu"]["ingest_mb_per_s"] = round(results["bytes"] / 1e6 / cpu["ingest-parquet"], 1)
            out["cpu"]["ingest_vs_json"] = round(cpu["ingest-parquet"] / cpu["json"], 2)
        if "ingest-noschema" in cpu:
            out["cpu"]["ingest_schemaless_vs_json"] = round(cpu["ingest-noschema"] / cpu["json"], 2)
    apply = results.get("apply")
    if apply:
        out["apply_mb_per_s"] = apply["contenders"]["apply"]["mb_per_s"]
        out["apply_vs_mariadb"] = apply["ratios"]["apply_vs_mariadb"]
        out["apply_binlog_mb_per_s"] = apply["contenders"]["apply-binlog"]["mb_per_s"]
        out["apply_binlog_vs_mariadb"] = apply["ratios"]["apply_binlog_vs_mariadb"]
    spark = results.get("spark")
    if spark and "datasource" in spark.get("stages", {}):
        out["spark_speedup"] = spark["stages"]["datasource"]["speedup"]
    return out


def report(results: dict) -> str:
    lines = ["| contender | command | wall | CPU | rows/s | peak RSS |", "|---|---|---:|---:|---:|---:|"]
    for name, e in results["contenders"].items():
        lines.append(f"| {name} | `{e['command']}` | {e['seconds']:.2f} s | "
                     f"{'-' if e['cpu_seconds'] is None else format(e['cpu_seconds'], '.2f') + ' s'} | "
                     f"{e['rows_per_s']:,} | {'-' if e['peak_rss_mib'] is None else str(e['peak_rss_mib']) + ' MiB'} |")
    lines += ["", "| target | measured (wall) | CPU | met? |", "|---|---:|---:|---|"]
    r = results["ratios"]
    for label, key, target, met in TARGETS:
        value = r.get(key)
        cpu = r.get("cpu", {}).get(key, "-")
        verdict = "not measured" if value is None else ("yes" if met(value) else "no")
        lines.append(f"| {label} {target} | {'-' if value is None else value} | {cpu} | {verdict} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
