"""``binlog doctor``: a read-only migration preflight.

``examine`` connects to the source (and the target), reads the facts (``facts``), the
recent binlogs (``scan``), runs the checks (``checks``, ``temporal``, ``tidb``) and
gives the findings; ``report`` renders them as text or as a JSON document.  Nothing is
written on either server: SELECT and SHOW statements, and a one-shot binlog dump
(server id 0, not registered as a replica).
"""
from __future__ import annotations

from ..replay.tidb import collations as tidb_collations
from .checks import Facts, run_checks
from .facts import TargetFacts, connect, read_source, read_target
from .findings import Finding
from .scan import scan

__all__ = ["examine", "Facts", "Finding"]


def kind_only(kind: str) -> TargetFacts:
    """The target of ``--target-kind`` without ``--target``: for TiDB, TiDB 8.5's collations
    and character sets (replay.tidb.collations, compared with a running one by
    tests/binlog/doctor/test_doctor_tidb.py); else none known."""
    if kind != "tidb":
        return TargetFacts(None, None, False, None, None)
    return TargetFacts(None, None, True, set(tidb_collations.NAMES), set(tidb_collations.CHARSETS))


def examine(source_dsn: str, *, target_dsn: str | None = None, target_kind: str | None = None,
            databases: list[str] | None = None, scan_bytes: int = 64 << 20,
            scan_seconds: float = 30.0, migration_hours: float = 24.0,
            read_binlogs: bool = True) -> tuple[Facts, list[Finding]]:
    conn, address = connect(source_dsn, what="the source")
    try:
        source = read_source(conn, address, databases=databases)
    finally:
        conn.close()
    binlog_scan = None
    if read_binlogs and source.variables.get("log_bin", "").upper() in ("ON", "1"):
        binlog_scan = scan(source_dsn, source.binlogs, max_bytes=scan_bytes, max_seconds=scan_seconds)
    target = None
    if target_dsn:
        tconn, taddress = connect(target_dsn, what="the target")
        try:
            target = read_target(tconn, taddress, kind=target_kind)
        finally:
            tconn.close()
    elif target_kind:
        target = kind_only(target_kind)
    facts = Facts(source, binlog_scan, target, migration_hours, databases)
    return facts, run_checks(facts)
