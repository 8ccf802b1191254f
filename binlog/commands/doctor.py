"""``binlog doctor --from DSN [--target DSN] [--target-kind tidb] [--json]``: a read-only
migration preflight (``binlog.doctor``): what the source's settings, privileges, tables
and recent binlogs will do to a migration pipeline, and how to fix it.

Exit codes (binlog/exitcodes.py): 0 nothing blocks, 1 a finding blocks the migration,
2 bad usage, 5 a server could not be reached or refused a read doctor needs.
"""
from __future__ import annotations

import sys

from ..doctor import examine
from ..doctor.report import document, render_json, render_text
from ..errors import UsageError
from ..exitcodes import Exit


def add_parser(sub) -> None:
    p = sub.add_parser("doctor")
    p.add_argument("--from", dest="from_dsn", required=True, metavar="DSN",
                   help="the source: mysql://user:password@host:port/ (?unix_socket=, ?ssl_ca=...)")
    p.add_argument("--target", dest="target_dsn", metavar="DSN",
                   help="the target: its collations are checked; a TiDB is recognised by VERSION()")
    p.add_argument("--target-kind", choices=["mysql", "mariadb", "tidb"],
                   help="what the target is, without connecting to it (tidb: TiDB's "
                        "documented incompatibilities are checked)")
    p.add_argument("--database", action="append", default=[], metavar="DB",
                   help="check only the tables of this database (repeatable; default: every "
                        "non-system database)")
    p.add_argument("--migration-hours", type=float, default=24.0, metavar="H",
                   help="how long the pipeline may need the binlogs, snapshot to catch-up "
                        "(default 24): the binlog retention is checked against it")
    p.add_argument("--scan-bytes", type=int, default=64 << 20, metavar="N",
                   help="read at most N bytes of the newest binlogs (default 64 MiB)")
    p.add_argument("--scan-seconds", type=float, default=30.0, metavar="S",
                   help="stop reading the binlogs after S seconds (default 30)")
    p.add_argument("--no-scan", action="store_true",
                   help="do not read the binlogs (no TABLE_MAP or statement checks)")
    p.add_argument("--json", action="store_true",
                   help="print the report as one JSON document (binlog/doctor/report.schema.json)")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.scan_bytes <= 0 or args.scan_seconds <= 0 or args.migration_hours <= 0:
        raise UsageError("--scan-bytes, --scan-seconds and --migration-hours must be positive")
    facts, findings = examine(args.from_dsn, target_dsn=args.target_dsn,
                              target_kind=args.target_kind, databases=args.database or None,
                              scan_bytes=args.scan_bytes, scan_seconds=args.scan_seconds,
                              migration_hours=args.migration_hours, read_binlogs=not args.no_scan)
    doc = document(facts, findings)
    sys.stdout.write(render_json(doc) if args.json else render_text(doc))
    return Exit.INPUT_ERROR if doc["blocks"] else Exit.OK
