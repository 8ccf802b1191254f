"""``binlog ingest --engine local``: the bulk job in this process, with Arrow, no JVM.

The same output as the Spark engine (``ingest``), from the same pieces: the plan
(``plan.build_plan``: pre-scan, schema snapshots, splits at transaction boundaries), the
tasks' Parquet writer of changes/ (``writer``), the checkpoint and its crash semantics
(``checkpoint``: ``inflight.json`` until the commit; a rerun removes an unfinished
run's output), and the commit (``ingest.commit_run``).  What Spark schedules as tasks
runs here in a pool of worker processes (one per CPU, ``--parallelism``), each split
decoded once: its task writes changes/ and, from the same decoded rows, the typed
tables/ (``arrow_typed``: the values Spark's ``typed`` projection gives; a table no schema
describes from its JSON images, ``shredded``).  The columns of a table no schema
describes are the keys seen in all of the run's records: the driver conforms its files
once the tasks are done.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from binlog.output.paths import table_dir_name

from .delta import staging_dir
from .ingest import ERROR_COLUMNS, _plan, commit_run, start_run
from .records import SplitFailed
from .shredded import conform_files
from .tasks import table_columns_of, write_split_local


def run_local(args) -> int:
    job = start_run(args)
    if job is None:
        return 0
    opts, progress, out, run = job.opts, job.progress, job.out, job.run
    opts.parallelism = getattr(args, "parallelism", None) or len(os.sched_getaffinity(0))
    plan, t_scan = _plan(opts, progress, job.ranges, job.state, job.active)
    job.checkpoint.begin(run)
    # from here on a failure leaves inflight.json: the next run removes this run's output
    tables = not args.no_tables
    columns = table_columns_of(plan) if tables else {}
    delta = getattr(args, "format", "parquet") == "delta"
    # --format delta: the tasks write under _staging/, published at the end of the run
    base = staging_dir(out, run) if delta else out
    changes_dir = base / "changes" if delta else out / "changes" / f"run={run}"
    t_decode = time.time()
    results = decode_splits(plan, str(changes_dir), str(base / "tables"), run,
                            columns if tables else None, progress)
    t_decode = time.time() - t_decode
    stats: dict = {}
    error_rows: list[dict] = []
    for result in results:
        error_rows.extend(result["errors"])
        for db, table, op, n in result["counts"]:
            ops = stats.setdefault(table_dir_name(db, table), {})   # as the Spark engine
            ops[op] = ops.get(op, 0) + n
    t_tables = time.time()
    conform_files(results)          # the tables no schema describes: the run's keys in each file
    t_tables = time.time() - t_tables
    paths = {Path(p).name: p for p in job.files}
    all_errors = [dict(e, path=e.get("path") or paths.get(e["file"])) for e in job.driver_errors + error_rows]
    if delta:
        from .delta import publish_changes, publish_errors, publish_tables

        publish_changes(out, run, opts.compression)
        publish_tables(out, run, opts.compression)
        if all_errors:
            publish_errors(out, run, error_table(all_errors), opts.compression)
    elif all_errors:
        write_errors(out / "errors", run, all_errors, opts.compression)
    seconds = {"prescan": t_scan, "decode": t_decode, "tables": t_tables}
    code = commit_run(args, plan, job.state, job.active, job.driver_errors, error_rows, stats, run,
                      job.started, seconds, job.checkpoint, out, {"engine": "local"})
    if delta:
        shutil.rmtree(out / "_staging", ignore_errors=True)       # committed: no longer needed
    return code


def decode_splits(plan, run_dir: str, tables_dir: str, run: int, columns, progress) -> list[dict]:
    """Every split through ``write_split_local``: in this process for one split or one
    CPU, else in a pool of processes (forked: they share the loaded modules)."""
    splits, opts = plan.splits, plan.options
    work = [(split, opts, plan.snapshots[split.group], run_dir, tables_dir, run, columns, plan.keys)
            for split in splits]
    workers = min(opts.parallelism or 1, len(splits))
    done = []

    def report(result):
        done.append(result)
        progress.line(f"binlog ingest: decode: {len(done)}/{len(splits)} splits")

    try:
        if workers <= 1:
            for item in work:
                report(write_split_local(*item))
        else:
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                for result in pool.map(write_split_local, *zip(*work, strict=True)):
                    report(result)
    except RuntimeError as exc:            # a decoding error with on-error=fail
        if SplitFailed.MARKER not in str(exc):
            raise
        from .ingest import _task_error

        raise _task_error(exc) from None
    progress.done(f"binlog ingest: decoded {plan.nbytes / 1e6:.1f} MB, {len(splits)} split(s)")
    return done


def error_table(rows: list[dict]) -> pa.Table:
    """The error records with the columns the Spark engine writes in errors/ (but run)."""
    fields = [pa.field(c, pa.int64() if c == "pos" else pa.string()) for c in ERROR_COLUMNS[1:]]
    columns = {c: [None if r.get(c) is None else (int(r[c]) if c == "pos" else str(r[c])) for r in rows]
               for c in ERROR_COLUMNS[1:]}
    return pa.table(columns, schema=pa.schema(fields))


def write_errors(errors_dir: Path, run: int, rows: list[dict], codec: str) -> None:
    """errors/run=<N>/part-00000.parquet, compressed with ``codec``."""
    from .background import codec_options

    target = errors_dir / f"run={run}"
    target.mkdir(parents=True, exist_ok=True)
    temp = target / ".part-00000.parquet.tmp"
    pq.write_table(error_table(rows), temp, **codec_options(codec))
    os.replace(temp, target / "part-00000.parquet")
