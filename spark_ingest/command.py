"""``binlog ingest``: the bulk ingestion job's command line (``binlog.cli`` loads this).

Importing this module needs no pyspark; the job (``spark_ingest.ingest``) imports it
when it runs.  ``python -m spark_ingest.submit`` / ``spark-submit spark_ingest/submit.py``
take the same arguments.
"""
from __future__ import annotations

import argparse

from binlog.errors import ON_ERROR_CHOICES


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
    p.add_argument("sources", nargs="+", metavar="SRC",
                   help="binlog files, directories (their binlogs in index order) or globs")
    p.add_argument("--to", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="local (default): in this process and one worker process per CPU, "
                        "Arrow only, no JVM; spark: a Spark job (the default with --master or "
                        "under spark-submit)")
    p.add_argument("--format", choices=FORMATS, default="parquet",
                   help="parquet (default): Parquet files in Spark's partition layout; delta: "
                        "changes/, errors/ and each tables/<db>.<table>/ as Delta Lake tables "
                        "(local engine, needs the [delta] extra)")
    p.add_argument("--parallelism", type=int, metavar="N",
                   help="local engine: worker processes (default: the CPUs this process may use)")
    p.add_argument("--master", metavar="URL",
                   help="Spark master (selects --engine spark; default: local[*], or "
                        "spark-submit's --master)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark configuration (repeatable)")
    p.add_argument("--schema-ddl", action="append", default=[], metavar="FILE",
                   help="mysqldump/mariadb-dump --no-data file or CREATE TABLE script, as of "
                        "the binlogs' start (repeatable)")
    p.add_argument("--schema-store", metavar="PATH",
                   help="SQLite schema store to read (copied; the job never writes it)")
    p.add_argument("--schema-from", metavar="DSN", help="snapshot schemas from a live server")
    p.add_argument("--no-track-ddl", action="store_true",
                   help="do not follow CREATE/ALTER/DROP/RENAME in the binlogs")
    p.add_argument("--table", action="append", default=[], metavar="DB.TABLE",
                   help="keep only matching tables (wildcards %% _ *; repeatable)")
    p.add_argument("--exclude-table", action="append", default=[], metavar="DB.TABLE",
                   help="drop matching tables (repeatable)")
    p.add_argument("--database", action="append", default=[], metavar="DB",
                   help="keep only tables of this database (repeatable)")
    p.add_argument("--on-error", choices=ON_ERROR_CHOICES, default="skip",
                   help="skip (default): damaged or undecodable input is reported in DIR/errors/ "
                        "and the job goes on at the next transaction; fail: the first error stops "
                        "the job (exit 1) and nothing is committed")
    p.add_argument("--allow-gaps", action="store_true",
                   help="a binlog missing from a sequence (an index naming a file that is not "
                        "there, a ROTATE to an absent file, a GTID jump) is a warning and the "
                        "rest is ingested; by default it stops the run (exit 1) before anything "
                        "is written")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="search symlinked directories too (by default they are not followed); "
                        "each directory is searched once and no file is read twice, so a "
                        "symlink loop ends where it comes back")
    p.add_argument("--reprocess-errors", action="store_true",
                   help="ingest again, from their start, the files that have records in "
                        "DIR/errors/ (e.g. with the --schema-ddl/--schema-from they lacked), "
                        "replacing their earlier rows in changes/, tables/ and errors/")
    p.add_argument("--reprocess", action="append", default=[], metavar="NAME[..NAME]",
                   help="ingest these binlogs again from their start, replacing their earlier "
                        "output (a name, or FIRST..LAST of one numbered sequence; repeatable)")
    p.add_argument("--infer-precision", action="store_true",
                   help="infer unknown legacy temporal precisions from the row images")
    p.add_argument("--timezone", default="UTC",
                   help="zone TIMESTAMP values are rendered in (default UTC)")
    p.add_argument("--binary-encoding", choices=["hex", "base64"], default="hex")
    p.add_argument("--no-verify-checksum", action="store_true")
    p.add_argument("--with-types", action="store_true",
                   help="changes/: fill the `types` column (each column's SQL type, as dump "
                        "--with-types)")
    from binlog.commands._common import add_key_options

    add_key_options(p)
    p.add_argument("--split-size", metavar="BYTES",
                   help="split files larger than this at transaction boundaries (e.g. 64m; "
                        "0: one task per file; default: min(128m, total / cores))")
    p.add_argument("--no-tables", action="store_true", help="do not write the typed tables/")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.add_argument("--summary-json", metavar="FILE", help="also write the run's summary here")


ENGINES = ("local", "spark")
FORMATS = ("parquet", "delta")
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
    if args.format == "delta":
        if engine != "local":
            raise UsageError("--format delta is written by the local engine (--engine local)")
        from .delta import require_deltalake

        require_deltalake()
    if engine == "local":
        # Arrow's allocations from jemalloc, which gives freed row groups back to the
        # system (pyarrow's default, mimalloc, keeps them: the bench file x3 on one worker
        # peaked at 311 MB RSS, 251 MB so); read when pyarrow loads, a user's setting wins
        if "pyarrow" not in sys.modules and sys.platform.startswith("linux"):
            os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
        try:
            importlib.import_module("pyarrow")
        except ImportError:
            raise UsageError("binlog ingest needs pyarrow (the [spark] extra)",
                             hint="pip install 'binlog-temporal[spark]'") from None
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
