"""``binlog ingest``: the bulk ingestion job's command line (``binlog.cli`` loads this).

Importing this module needs no pyspark; the job (``spark_ingest.ingest``) imports it
when it runs.  ``python -m spark_ingest.submit`` / ``spark-submit spark_ingest/submit.py``
take the same arguments.
"""
from __future__ import annotations

import argparse

from binlog.options import build


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "ingest",
        description="Decode binlog files and write DIR/changes/ (the records of "
                    "`binlog dump --format json`), DIR/tables/<db>.<table>/ (typed), "
                    "DIR/errors/ and DIR/_checkpoint/ (reruns read only new data).  The local "
                    "engine (default on one machine) runs in this process with Arrow; "
                    "--engine spark or --master URL runs the same job on Spark.")
    add_arguments(p)
    p.set_defaults(run=run)
    return p


def add_arguments(p) -> None:
    """``binlog ingest``'s options (declared in ``binlog.options``)."""
    build(p, "ingest")


# What the [spark] extra installs; without it the Spark engine cannot run at all.
SPARK_MODULES = ("pyspark", "pyarrow", "py4j")


def engine_of(args) -> str:
    """--engine, else spark when a Spark master is named (--master, spark-submit), else local."""
    from binlog.errors import UsageError

    from .session import submitted

    if args.engine == "local" and args.master:
        raise UsageError("--master selects the Spark engine; it cannot go with --engine local")
    if args.engine:
        return args.engine
    return "spark" if args.master or submitted() else "local"


def run(args) -> int:
    import importlib
    import os
    import sys

    from binlog.errors import UsageError

    engine = engine_of(args)
    if args.format == "delta" and engine != "local":
        raise UsageError("--format delta is written by the local engine (--engine local)")
    if engine == "local":
        # Arrow's allocations from jemalloc, which gives freed row groups back to the
        # system (pyarrow's default, mimalloc, keeps them: the bench file x3 on one worker
        # peaked at 311 MB RSS, 251 MB so); read when pyarrow loads, a user's setting wins:
        # so nothing may import pyarrow before this (spark_ingest.delta does)
        if "pyarrow" not in sys.modules and sys.platform.startswith("linux"):
            os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
        try:
            importlib.import_module("pyarrow")
        except ImportError:
            raise UsageError("binlog ingest needs pyarrow (the [spark] extra)",
                             hint="pip install 'binlog-temporal[spark]'") from None
        if args.format == "delta":
            from .delta import require_deltalake

            require_deltalake()
        from .local import run_local

        return run_local(args)
    # Checked before any work: the job imports pyspark only once its pre-scan is done.
    for name in SPARK_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            raise UsageError(f"binlog ingest needs the [spark] extra ({name} is not installed)",
                             hint="pip install 'binlog-temporal[spark]' (PySpark 4 and pyarrow; "
                                  "Java 17 must be on the machine)") from None
    from .ingest import run_ingest

    return run_ingest(args)


def main(argv=None) -> int:
    """Stand-alone entry (spark-submit): the same arguments as `binlog ingest`."""
    import sys

    from binlog.commands._common import Parser
    from binlog.errors import BinlogError, UsageError
    from binlog.exitcodes import Exit, for_exception

    parser = Parser(prog="binlog ingest")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except BinlogError as exc:
        text = exc.message if isinstance(exc, UsageError) and not exc.hint else str(exc)
        sys.stderr.write(f"binlog: error: {text}\n")
        return for_exception(exc)
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
