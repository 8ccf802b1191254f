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
from ..options import build


def add_parser(sub) -> None:
    p = sub.add_parser("doctor")
    build(p, "doctor")
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
