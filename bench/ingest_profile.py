#!/usr/bin/env python3
"""Where the CPU time of ``binlog ingest --engine local --parallelism 1`` goes.

    python bench/ingest_profile.py FILE [--schema-ddl DUMP] [--pure]

Runs the local engine in this process with timers around its stages (CPU seconds of
the thread that runs each: ``time.thread_time``; the Parquet writes run in their own
thread) and prints a Markdown table for BENCHMARKS.md.  Stages: start-up and plan
(imports, pre-scan, schema snapshot), reading and framing events, the JSON images of
changes/ (compiled encoder), the typed tables' columns (compiled walk, or the Python
typing), the CDC fields and Arrow batches of changes/, partitioning changes/ by
(db, table, date) and counting, Parquet encoding and compression, the rest (commit,
checkpoint).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SPENT: Counter = Counter()
_INNER: dict = {}      # thread id -> stack of the time of timed calls inside the running ones


def timed(owner, name: str, stage: str) -> None:
    """Wrap owner.name: its CPU time (this thread's) goes to ``stage``, less the time of
    timed calls inside it."""
    fn = getattr(owner, name)

    def wrapper(*args, **kwargs):
        import threading

        inner = _INNER.setdefault(threading.get_ident(), [])
        started = time.thread_time()
        inner.append(0.0)
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.thread_time() - started
            nested = inner.pop()
            SPENT[stage] += spent - nested
            if inner:
                inner[-1] += spent
    setattr(owner, name, wrapper)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("binlog")
    parser.add_argument("--schema-ddl")
    parser.add_argument("--pure", action="store_true", help="BINLOG_PURE=1 (before the imports)")
    args = parser.parse_args(argv)
    if args.pure:
        os.environ["BINLOG_PURE"] = "1"
    started = time.process_time()
    import pyarrow.parquet as pq

    from binlog import rows
    from binlog.cli import main as cli
    from binlog.stream import EventStream
    from binlog.stream_runs import RunModes
    from spark_ingest import arrow_columns, arrow_typed, background, records, writer

    timed(EventStream, "next_event", "read and frame events")
    timed(RunModes, "_encode", "runs of events: JSON images + typed columns (one compiled call)")
    timed(records.ImagesEncoder, "__call__", "JSON images of changes/ (compiled encoder)")
    timed(records.BatchBuilder, "add_rows", "CDC fields + Arrow batches of changes/")
    timed(records.BatchBuilder, "add_encoded", "CDC fields + Arrow batches of changes/")
    timed(records.BatchBuilder, "add_run", "CDC fields + Arrow batches of changes/")
    timed(records.BatchBuilder, "batch", "CDC fields + Arrow batches of changes/")
    timed(records.BatchBuilder, "event", "CDC fields + Arrow batches of changes/")
    timed(rows, "decode_rows", "decoding rows into Python values")
    import binlog.reader

    binlog.reader.decode_rows = rows.decode_rows
    timed(arrow_columns.ArrowRows, "add_event", "typed tables: compiled walk into Arrow buffers")
    timed(arrow_typed.TypedWriter, "add_event", "typed tables: compiled walk into Arrow buffers")
    timed(arrow_typed.TypedWriter, "add_run", "typed tables: compiled walk into Arrow buffers")
    timed(arrow_columns.ArrowRows, "table", "typed tables: compiled walk into Arrow buffers")
    timed(arrow_typed.TableRows, "add_rows", "typed tables: Python typing")
    timed(arrow_typed.TableRows, "table", "typed tables: Python typing")
    timed(writer.SplitWriter, "add", "changes/ partitioning and counts")
    timed(pq.ParquetWriter, "write_table", "Parquet encoding + compression")
    timed(writer, "finish_file", "Parquet encoding + compression")
    del background          # (imported: its thread's writes are timed through pq and writer)
    with tempfile.TemporaryDirectory() as out:
        argv = ["ingest", "--engine", "local", "--parallelism", "1", "--to", out, "--no-progress",
                args.binlog] + (["--schema-ddl", args.schema_ddl] if args.schema_ddl else [])
        import contextlib
        import io

        with contextlib.redirect_stderr(io.StringIO()):
            cli(argv)
    total = time.process_time() - started
    size = Path(args.binlog).stat().st_size
    print(f"| stage ({size / 1e6:.1f} MB, {'pure' if args.pure else 'compiled'}) | CPU s | share |")
    print("|---|---:|---:|")
    rest = total - sum(SPENT.values())
    for stage, spent in SPENT.most_common() + [("start-up, plan, commit, the rest", rest)]:
        print(f"| {stage} | {spent:.2f} | {spent / total:.0%} |")
    print(f"| **total (all threads)** | **{total:.2f}** | {size / 1e6 / total:.1f} MB/s |")


if __name__ == "__main__":
    main()
