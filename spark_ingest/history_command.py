"""``binlog history LAKE``: the changes of one row (``--table``, ``--key``), one
transaction (``--gtid``) or one time range (``--start-datetime``, ``--stop-datetime``)
in a lake ``binlog ingest`` wrote, read from its ``changes/`` with DuckDB (the
``duckdb`` extra; ``history``), printed as ``binlog dump --format json`` prints them, in
binlog order.  (``binlog.cli`` loads this, as ``command`` for ``binlog ingest``.)
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from binlog.errors import InputError
from binlog.exitcodes import Exit
from binlog.options import build
from binlog.user_values import parse_epoch, parse_zone


def add_parser(sub) -> None:
    p = sub.add_parser("history")
    build(p, "history")
    p.set_defaults(run=run)


def run(args) -> int:
    from .history import json_line, query

    zone = parse_zone(args.timezone)
    out = sys.stdout.buffer
    found = 0
    start, stop = parse_epoch(args.start_datetime, zone), parse_epoch(args.stop_datetime, zone)
    with _lake_errors(args.lake):
        for record in query(args.lake, table=args.table, key=args.key, gtid=args.gtid, start=start, stop=stop,
                            threads=args.threads):
            out.write(json_line(record) + b"\n")
            found += 1
    out.flush()
    if not found:
        sys.stderr.write("binlog history: no change matched\n")
    return Exit.OK


@contextmanager
def _lake_errors(lake: str) -> Iterator[None]:
    """What DuckDB cannot read in the lake (a damaged or truncated Parquet file, a file
    that is not Parquet) is an input error naming the lake, exit 1, not a traceback."""
    try:
        import duckdb
    except ImportError:      # history.Lake's usage error names the extra
        yield
        return
    try:
        yield
    except duckdb.Error as exc:
        raise InputError(f"{lake}: DuckDB could not read the lake: {exc}",
                         hint="binlog ingest writes the lake again from the binlogs") from exc
