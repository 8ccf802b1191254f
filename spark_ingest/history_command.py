"""``binlog history LAKE``: the changes of one row (``--table``, ``--key``), one
transaction (``--gtid``) or one time range (``--start-datetime``, ``--stop-datetime``)
in a lake ``binlog ingest`` wrote, read from its ``changes/`` with DuckDB (the
``duckdb`` extra; ``history``), printed as ``binlog dump --format json`` prints them, in
binlog order.  (``binlog.cli`` loads this, as ``command`` for ``binlog ingest``.)
"""
from __future__ import annotations

import sys

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
    for record in query(args.lake, table=args.table, key=args.key, gtid=args.gtid,
                        start=parse_epoch(args.start_datetime, zone), stop=parse_epoch(args.stop_datetime, zone),
                        threads=args.threads):
        out.write(json_line(record) + b"\n")
        found += 1
    out.flush()
    if not found:
        sys.stderr.write("binlog history: no change matched\n")
    return Exit.OK
