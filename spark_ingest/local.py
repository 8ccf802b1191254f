"""``binlog ingest --engine local``: the bulk job in this process, with Arrow, no JVM.

The same output as the Spark engine (``ingest``), from the same pieces: the plan
(``plan.build_plan``: pre-scan, schema snapshots, splits at transaction boundaries), the
tasks' Parquet writer of changes/ (``writer``), the checkpoint and its crash semantics
(``checkpoint``: ``inflight.json`` until the commit; a rerun removes an unfinished
run's output), and the commit (``ingest.commit_run``).  What Spark schedules as tasks
runs here in a pool of worker processes (one per CPU, ``--parallelism``), each split
decoded once: its task writes changes/ and, from the same decoded rows, the typed
tables/ (``arrow_typed``: the values Spark's ``typed`` projection gives).  Tables no
schema describes are typed on the driver after the tasks, from the run's changes/, since
their columns are the keys seen in all of the run's records.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from binlog.output.paths import table_dir_name

from .delta import staging_dir
from .ingest import ERROR_COLUMNS, _plan, commit_run, start_run
from .records import SplitFailed
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
    schemaless: set = set()
    for result in results:
        error_rows.extend(result["errors"])
        schemaless.update(tuple(k) for k in result.get("schemaless", ()))
        for db, table, op, n in result["counts"]:
            ops = stats.setdefault(table_dir_name(db, table), {})   # as the Spark engine
            ops[op] = ops.get(op, 0) + n
    t_tables = time.time()
    write_schemaless_tables(sorted(schemaless, key=repr), changes_dir, base / "tables", run, opts)
    t_tables = time.time() - t_tables
    paths = {Path(p).name: p for p in job.files}
    all_errors = [dict(e, path=e.get("path") or paths.get(e["file"])) for e in job.driver_errors + error_rows]
    if delta:
        from .delta import publish_changes, publish_errors, publish_tables

        publish_changes(out, run)
        publish_tables(out, run)
        if all_errors:
            publish_errors(out, run, error_table(all_errors))
    elif all_errors:
        write_errors(out / "errors", run, all_errors)
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


class _Change:
    """A change record read back from changes/ in the shape TypedWriter takes."""

    __slots__ = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op")

    def __init__(self, file, pos, ts, server_id, gtid, op, db: str, table: str):
        self.file, self.pos, self.ts, self.server_id = file, pos, ts, server_id
        self.gtid, self.op, self.db, self.table = gtid, op, db, table


def write_schemaless_tables(names, changes_dir: Path, tables_dir: Path, run: int, opts) -> None:
    """``write_schemaless_table`` for each table, in the worker processes."""
    workers = min(opts.parallelism or 1, len(names))
    if workers <= 1:
        for db, table in names:
            write_schemaless_table(changes_dir, tables_dir, run, db, table, opts)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(write_schemaless_table, changes_dir, tables_dir, run, db, table, opts)
                   for db, table in names]
        for future in futures:
            future.result()


def write_schemaless_table(changes_dir: Path, tables_dir: Path, run: int, db: str, table: str,
                           opts) -> None:
    """A table no schema describes: its columns are the keys of all of the run's images
    (``@1``, ``@2``... or names), every one STRING, as ``typed.image_keys`` finds them."""
    import orjson
    import pyarrow.dataset as ds

    from .arrow_typed import TypedWriter
    from .writer import partition_dir

    where = changes_dir / partition_dir(db, table, "x").rsplit("/", 1)[0]
    if not where.is_dir():
        return
    data = ds.dataset(str(where), format="parquet")
    names = ["file", "pos", "ts", "server_id", "gtid", "op", "before", "after"]

    def batches(columns):
        # a batch at a time, twice (the keys, then the rows): memory is a batch's, not the
        # table's (the scanner's default reads ahead 16 batches and 4 files)
        return data.to_batches(columns=columns, batch_size=8192, batch_readahead=0, fragment_readahead=0)

    loads = orjson.loads
    keys: set = set()
    for batch in batches(["before", "after"]):
        for before, after in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            image = after if after is not None else before
            if image is not None:
                keys.update(loads(image))

    def order(k):
        return (0, int(k[1:]), "") if k.startswith("@") and k[1:].isdigit() else (1, 0, k)
    columns = [(k, "string") for k in sorted(keys, key=order)]
    writer = TypedWriter(str(tables_dir), run, 0, lambda *_: columns, zone=opts.zone,
                         binary_encoding=opts.binary_encoding)
    for batch in batches(names):
        batch = batch.set_column(2, "ts", pc.divide(batch.column(2).cast(pa.int64()), 1_000_000))
        files, poss, tss, server_ids, gtids, ops, befores, afters = (c.to_pylist() for c in batch.columns)
        for i, op in enumerate(ops):
            if op not in ("insert", "update", "delete"):
                continue
            before, after = befores[i], afters[i]
            writer.add_images(_Change(files[i], poss[i], tss[i], server_ids[i], gtids[i], op, db, table),
                              None if before is None else loads(before),
                              None if after is None else loads(after))
    writer.close()


def error_table(rows: list[dict]) -> pa.Table:
    """The error records with the columns the Spark engine writes in errors/ (but run)."""
    fields = [pa.field(c, pa.int64() if c == "pos" else pa.string()) for c in ERROR_COLUMNS[1:]]
    columns = {c: [None if r.get(c) is None else (int(r[c]) if c == "pos" else str(r[c])) for r in rows]
               for c in ERROR_COLUMNS[1:]}
    return pa.table(columns, schema=pa.schema(fields))


def write_errors(errors_dir: Path, run: int, rows: list[dict]) -> None:
    """errors/run=<N>/part-00000.parquet."""
    target = errors_dir / f"run={run}"
    target.mkdir(parents=True, exist_ok=True)
    temp = target / ".part-00000.parquet.tmp"
    pq.write_table(error_table(rows), temp, compression="snappy")
    os.replace(temp, target / "part-00000.parquet")
