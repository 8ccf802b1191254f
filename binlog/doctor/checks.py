"""The checks of ``binlog doctor``: plain functions from facts to findings, no I/O.

``run_checks`` runs every check in ``CHECKS`` order.  Each check reads the facts
(``facts.SourceFacts``, the recent binlogs' ``scan.BinlogScan``, the target's
``facts.TargetFacts``) and returns findings; what cannot be known (a read the user may
not do) is a finding of its own, never a silent pass.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..replay.tidb.collations import tidb_name
from . import temporal, tidb
from .facts import SYSTEM_DATABASES, SourceFacts, Table, TargetFacts
from .findings import BLOCKER, INFO, WARNING, Finding
from .scan import BinlogScan

DAY = 86400


@dataclass
class Facts:
    source: SourceFacts
    scan: BinlogScan | None
    target: TargetFacts | None
    migration_hours: float = 24.0
    databases: list[str] | None = None     # --database: the scope of the check

    def in_scope(self, db: str) -> bool:
        if self.databases:
            return db in self.databases
        return db not in SYSTEM_DATABASES


# -- replication settings -----------------------------------------------------------------
def _var(facts: Facts, name: str) -> str | None:
    return facts.source.variables.get(name)


def check_log_bin(facts: Facts) -> list[Finding]:
    if (_var(facts, "log_bin") or "").upper() in ("ON", "1"):
        return []
    return [Finding(BLOCKER, "log-bin", "binary logging is off: there is no binlog to replicate from",
                    "start the server with log_bin (and binlog_format=ROW); a restart is needed")]


def check_binlog_format(facts: Facts) -> list[Finding]:
    value = (_var(facts, "binlog_format") or "").upper()
    if value == "ROW":
        return []
    if value == "STATEMENT":
        return [Finding(BLOCKER, "binlog-format", "binlog_format=STATEMENT: data changes are "
                        "logged as SQL text, which row-based consumers (DM, Debezium, Canal) "
                        "skip or refuse", "SET GLOBAL binlog_format=ROW (and in my.cnf); "
                        "sessions already open keep their format until they reconnect")]
    return [Finding(WARNING, "binlog-format", f"binlog_format={value or '?'}: statements the "
                    "server deems safe are logged as SQL text, which row-based consumers skip",
                    "SET GLOBAL binlog_format=ROW (and in my.cnf); open sessions keep theirs "
                    "until they reconnect")]


def check_row_image(facts: Facts) -> list[Finding]:
    value = (_var(facts, "binlog_row_image") or "FULL").upper()
    if value == "FULL":
        return []
    return [Finding(BLOCKER, "binlog-row-image", f"binlog_row_image={value}: update and delete "
                    "images lack columns; DM and Debezium need FULL images",
                    "SET GLOBAL binlog_row_image=FULL (and in my.cnf)")]


def check_row_metadata(facts: Facts) -> list[Finding]:
    value = _var(facts, "binlog_row_metadata")
    if value is None or value.upper() == "FULL":
        return []
    return [Finding(INFO, "binlog-row-metadata", f"binlog_row_metadata={value}: TABLE_MAPs carry "
                    "no column names; consumers take names from a schema source",
                    "optional: SET GLOBAL binlog_row_metadata=FULL (names, keys, charsets in "
                    "every TABLE_MAP)")]


def check_checksum_compress_encrypt(facts: Facts) -> list[Finding]:
    found = [Finding(INFO, "binlog-checksum", f"binlog_checksum={_var(facts, 'binlog_checksum') or '?'}",
                     "nothing needed: every consumer listed handles NONE and CRC32")]
    if (_var(facts, "log_bin_compress") or "").upper() in ("ON", "1"):
        found.append(Finding(WARNING, "log-bin-compress", "log_bin_compress=ON: rows events are "
                             "MariaDB-compressed; mysql-binlog-connector-java (Debezium) and "
                             "older go-mysql cannot read them",
                             "SET GLOBAL log_bin_compress=OFF before the pipeline's start "
                             "position, or read with this tool (it decompresses)"))
    if (_var(facts, "encrypt_binlog") or "").upper() in ("ON", "1"):
        found.append(Finding(INFO, "encrypt-binlog", "encrypt_binlog=ON: the server decrypts "
                             "what it sends to replicas; binlog files copied off the server "
                             "need the key", "read files with binlog dump --key-file"))
    return found


def check_server_id(facts: Facts) -> list[Finding]:
    if (_var(facts, "server_id") or "0") != "0":
        return []
    return [Finding(BLOCKER, "server-id", "server_id=0: replicas and CDC tools refuse a "
                    "source without a server id", "set server_id to a unique non-zero value")]


def check_gtid(facts: Facts) -> list[Finding]:
    src = facts.source
    if src.mariadb:
        pos = _var(facts, "gtid_binlog_pos")
        return [Finding(INFO, "gtid", f"MariaDB GTID: gtid_binlog_pos={pos or '(empty)'}, "
                        f"gtid_strict_mode={_var(facts, 'gtid_strict_mode') or '?'}",
                        "nothing needed; DM and Debezium can resume by GTID")]
    mode = (_var(facts, "gtid_mode") or "OFF").upper()
    if mode == "ON":
        return []
    return [Finding(WARNING, "gtid", f"gtid_mode={mode}: a pipeline resumes by file and offset "
                    "only, and loses its place when the source fails over",
                    "gtid_mode=ON with enforce_gtid_consistency=ON")]


def retention_seconds(variables: dict[str, str]) -> float | None:
    """The binlog retention (0: binlogs are never purged by age; None: unknown).
    binlog_expire_logs_seconds wins when set (MariaDB 10.6.1+, MySQL 8)."""
    seconds = variables.get("binlog_expire_logs_seconds")
    if seconds not in (None, "", "0"):
        return float(seconds)
    days = variables.get("expire_logs_days")
    return None if days is None else float(days) * DAY


def binlog_volume(facts: Facts) -> tuple[int, float] | None:
    """(bytes of all binlogs, seconds since the oldest one began); None when unknown."""
    src, scan = facts.source, facts.scan
    if not src.binlogs or scan is None or scan.oldest_binlog_ts is None:
        return None
    return sum(size for _, size in src.binlogs), max(src.now - scan.oldest_binlog_ts, 1)


def _volume_text(volume: tuple[int, float] | None) -> str:
    if volume is None:
        return ""
    size, span = volume
    if span < 3600:     # too short a history to project a day from
        return f"; {size / 1e6:.1f} MB of binlogs written over only {_span(span)}"
    return f"; about {size * DAY / span / 1e6:.1f} MB of binlog a day (measured over {_span(span)})"


def check_retention(facts: Facts) -> list[Finding]:
    keep = retention_seconds(facts.source.variables)
    window = facts.migration_hours * 3600
    volume = binlog_volume(facts)
    details = {"retention_seconds": keep, "migration_hours": facts.migration_hours,
               "binlog_bytes": volume[0] if volume else None,
               "binlog_seconds": volume[1] if volume else None,
               "bytes_per_day": round(volume[0] * DAY / volume[1]) if volume else None}
    per_day = _volume_text(volume)
    fix = (f"keep binlogs longer than the migration: SET GLOBAL binlog_expire_logs_seconds="
           f"{int(window * 2)} (twice the {facts.migration_hours:g} h window; "
           f"expire_logs_days on servers before MariaDB 10.6.1), or copy them off with "
           f"binlog fetch")
    if keep is None:
        return [Finding(INFO, "binlog-retention", "the binlog retention is unknown" + per_day, fix,
                        details=details)]
    if keep == 0:
        return [Finding(INFO, "binlog-retention", "binlogs are never purged by age" + per_day,
                        "watch the disk: the binlogs grow for the whole migration", details=details)]
    if keep < window:
        return [Finding(BLOCKER, "binlog-retention", f"binlogs are purged after {_span(keep)}, "
                        f"sooner than the {facts.migration_hours:g} h migration window" + per_day,
                        fix, details=details)]
    if keep < 2 * window:
        return [Finding(WARNING, "binlog-retention", f"binlogs are purged after {_span(keep)}, "
                        f"less than twice the {facts.migration_hours:g} h migration window" + per_day,
                        fix, details=details)]
    return [Finding(INFO, "binlog-retention", f"binlogs are kept {_span(keep)}" + per_day, "",
                    details=details)]


def _span(seconds: float) -> str:
    if seconds >= 2 * DAY:
        return f"{seconds / DAY:.1f} days"
    if seconds >= 7200:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def check_statements(facts: Facts) -> list[Finding]:
    scan = facts.scan
    if scan is None:
        return []
    return [Finding(BLOCKER, "statement-logged-changes",
                    f"{seen.count} data change(s) logged as statements (first at {seen.file} @ "
                    f"{seen.offset}): row-based consumers skip them",
                    "find the sessions that set binlog_format=STATEMENT/MIXED (and "
                    "binlog_format=ROW globally); changes already logged must be "
                    "re-applied on the target or the pipeline started after them",
                    table=name if "." in name else None,
                    details={"count": seen.count, "file": seen.file, "offset": seen.offset,
                             "sample": seen.sample})
            for name, seen in scan.statements.items() if facts.in_scope(name.partition(".")[0])]


def check_scan(facts: Facts) -> list[Finding]:
    scan = facts.scan
    if scan is None and check_log_bin(facts):
        return []       # no binlog to read: check_log_bin says so
    if scan is None:
        return [Finding(WARNING, "binlog-scan", "the recent binlogs were not read: legacy "
                        "temporal codes and statement-logged changes were not looked for",
                        "run again without --no-scan")]
    details = {"start_file": scan.start_file, "bytes_read": scan.bytes_read, "events": scan.events,
               "complete": scan.complete, "stopped": scan.stopped, "damage": scan.damage,
               "first_event_time": scan.first_ts, "last_event_time": scan.last_ts}
    if scan.damage is not None:
        return [Finding(WARNING, "binlog-scan", f"the binlog read stopped at damage: {scan.damage}",
                        "look at the event with binlog dump --from DSN --start-file FILE "
                        "--on-error skip; the findings from the binlog cover only what was "
                        "read before it", details=details)]
    if scan.stopped and not scan.bytes_read:
        return [Finding(WARNING, "binlog-scan", f"the binlogs could not be read ({scan.stopped})",
                        "grant REPLICATION SLAVE (see the privilege findings)", details=details)]
    if not scan.complete:
        return [Finding(INFO, "binlog-scan", f"read {scan.bytes_read} bytes of the recent binlogs "
                        f"from {scan.start_file or 'the first one'}: {scan.stopped}",
                        "--scan-bytes / --scan-seconds read further", details=details)]
    return [Finding(INFO, "binlog-scan", f"read {scan.bytes_read} bytes of the recent binlogs "
                    f"from {scan.start_file or 'the first one'} to the end", "", details=details)]


# -- privileges ---------------------------------------------------------------------------
def check_privileges(facts: Facts) -> list[Finding]:
    privs, src = facts.source.privileges, facts.source
    found = []
    if not privs.has("REPLICATION SLAVE"):
        found.append(Finding(BLOCKER, "privilege", f"{privs.user} lacks REPLICATION SLAVE: it "
                             "cannot read the binlog", "GRANT REPLICATION SLAVE ON *.* TO ..."))
    monitor = "BINLOG MONITOR" if src.mariadb and src.version_tuple() >= (10, 5, 2) else "REPLICATION CLIENT"
    if not (privs.has(monitor) or privs.has("REPLICATION CLIENT") or privs.has("SUPER")
            and monitor == "REPLICATION CLIENT"):
        denied = f" (SHOW BINARY LOGS: {src.binlogs_denied})" if src.binlogs_denied else ""
        found.append(Finding(BLOCKER, "privilege", f"{privs.user} lacks {monitor}: SHOW MASTER "
                             f"STATUS and SHOW BINARY LOGS are refused{denied}",
                             f"GRANT {monitor} ON *.* TO ... (REPLICATION CLIENT is its old name)"))
    if not privs.has("RELOAD"):
        found.append(Finding(WARNING, "privilege", f"{privs.user} lacks RELOAD: no FLUSH TABLES "
                             "WITH READ LOCK for a consistent snapshot (dumpers fall back to "
                             "per-table locks or an inconsistent copy)", "GRANT RELOAD ON *.* TO ..."))
    hidden = sorted({t.db for t in src.tables if not privs.has("TRIGGER", t.db)})
    if hidden:
        found.append(Finding(INFO, "privilege", f"{privs.user} lacks TRIGGER on {', '.join(hidden)}: "
                             "information_schema hides those tables' triggers, so they were "
                             "not checked", "run doctor as a user with the TRIGGER privilege to "
                             "check them", details={"databases": hidden}))
    found += [Finding(BLOCKER, "privilege", f"{privs.user} lacks SELECT on the table: the "
                      "snapshot cannot copy it", f"GRANT SELECT ON {t.db}.* TO ...",
                      table=t.qualified)
              for t in src.tables if not privs.has("SELECT", t.db, t.name)]
    return found


# -- tables a row replay cannot apply safely ----------------------------------------------
def has_key(table: Table) -> bool:
    """A primary key, or a unique key over NOT NULL columns: each row found by its key."""
    for index in table.indexes:
        if not index.unique or index.kind in ("FULLTEXT", "SPATIAL"):
            continue
        cols = [table.column(name) for name in index.columns]
        if all(c is not None and not c.nullable for c in cols):
            return True
    return False


def check_tables(facts: Facts) -> list[Finding]:
    found = []
    for t in facts.source.tables:
        if not has_key(t):
            found.append(Finding(WARNING, "no-key", "no primary key nor NOT NULL unique key: an "
                                 "UPDATE or DELETE replayed matches by every column (slow, and "
                                 "wrong with duplicate rows)", "add a primary key before the "
                                 "migration", table=t.qualified))
        if t.triggers:
            found.append(Finding(WARNING, "trigger", f"trigger(s) {', '.join(t.triggers)}: the "
                                 "binlog already holds the rows they wrote; the same triggers on "
                                 "the target would write them twice", "create the triggers on "
                                 "the target only after the cut-over", table=t.qualified,
                                 details={"triggers": t.triggers}))
        if t.cascades:
            found.append(Finding(WARNING, "fk-cascade", f"foreign key(s) with cascades "
                                 f"({'; '.join(t.cascades)}): the changes InnoDB cascades are not "
                                 "in the binlog", "keep the same foreign keys on the target with "
                                 "foreign_key_checks on during replay, or drop the cascades",
                                 table=t.qualified, details={"constraints": t.cascades}))
    return found


def check_target_charsets(facts: Facts) -> list[Finding]:
    target = facts.target
    if target is None or target.collations is None:
        return []
    found = []
    for t in facts.source.tables:
        names = {c.collation for c in t.columns if c.collation} | ({t.collation} if t.collation else set())
        # on TiDB as apply names them there (utf8mb3_general_ci: utf8_general_ci)
        missing = sorted(n for n in names if (tidb_name(n) if target.tidb else n.lower())
                         not in target.collations)
        if missing:
            found.append(Finding(BLOCKER, "target-collation", f"collation(s) {', '.join(missing)} "
                                 f"not on the target ({target.version or 'TiDB 8.5'})", "convert the columns "
                                 "to a collation the target has, or map them when creating the "
                                 "target schema", table=t.qualified, details={"collations": missing}))
    return found


CHECKS = (check_log_bin, check_binlog_format, check_row_image, check_row_metadata,
          check_checksum_compress_encrypt, check_server_id, check_gtid, check_retention,
          check_scan, check_statements, check_privileges,
          lambda facts: temporal.check(facts.source, facts.scan),
          check_tables, check_target_charsets,
          lambda facts: tidb.check(facts.source, facts.target))


def run_checks(facts: Facts) -> list[Finding]:
    found: list[Finding] = []
    for check in CHECKS:
        found += check(facts)
    return found
