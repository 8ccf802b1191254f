"""The legacy MariaDB 5.3 temporal check: which tables have TIMESTAMP/DATETIME/TIME columns
written with the old type codes 7/12/11, how sure that is, who fails on them, what fixes it.

How legacy columns are told (most certain first):

1. MariaDB 10.5.1+ marks them ``/* mariadb-5.3 */`` in information_schema.COLUMNS
   COLUMN_TYPE (N = 0 included; sql/field.cc Field::sql_type_comment);
2. a TABLE_MAP of the table in the recent binlogs: code 7/12/11 where the column is
   temporal (the *2 codes 17/18/19 say it is not legacy);
3. neither (MariaDB before 10.5.1 and no recent TABLE_MAP): MariaDB 10.0 creates every
   temporal column in the 5.3 format (the MySQL 5.6 format arrived with
   ``mysql56_temporal_format`` in 10.1.2); 10.1.2+ creates them in the format the
   variable says at CREATE or table-copying ALTER time, which the server does not
   record.  The report says which of these it is.

A table-copying ALTER under ``mysql56_temporal_format=ON`` converts every temporal column
of the table; ``ALGORITHM=INPLACE``/``NOCOPY``/``INSTANT`` and ``LOCK=NONE`` are refused
with error 1846 (tests/binlog/doctor/test_doctor_server.py measures both on the server).
"""
from __future__ import annotations

from .facts import Column, SourceFacts, Table
from .findings import BLOCKER, INFO, WARNING, Finding
from .scan import LEGACY_CODES, BinlogScan, TableMapSeen

TEMPORAL = ("datetime", "timestamp", "time")

#: What each consumer does with a legacy column of N > 0 (peers.md: observed or read).
CONSUMERS = {
    "go-mysql / TiDB DM": "reads the row image with the wrong widths: a panic or garbage "
                          "values (DM refuses such tables)",
    "Debezium / mysql-binlog-connector-java": "wrong values, then an EOFException",
    "Canal": "wrong DATETIME(N) values",
    "python-mysql-replication": "ValueError or AssertionError on the row",
    "mariadb-binlog -v": "exits 1 with no rows and nothing on stderr",
}
#: N = 0 legacy TIME: the 3-byte value is signed; these read it unsigned.
TIME_N0_CONSUMERS = {
    "go-mysql / TiDB DM": "negative TIME values come out wrong",
    "Debezium / mysql-binlog-connector-java": "negative TIME values come out wrong",
    "python-mysql-replication": "negative TIME values come out wrong",
}

# Throughput range of a table copy (ALTER TABLE ... FORCE), for the estimate only.
COPY_RATES = (20e6, 100e6)     # bytes per second


def check(source: SourceFacts, scan: BinlogScan | None) -> list[Finding]:
    if not source.mariadb:
        return []       # MySQL never wrote fractional seconds in the legacy codes
    found: list[Finding] = []
    for table in source.tables:
        found += check_table(table, source, scan)
    return found


def check_table(table: Table, source: SourceFacts, scan: BinlogScan | None) -> list[Finding]:
    temporal = [c for c in table.columns if c.data_type in TEMPORAL]
    if not temporal:
        return []
    seen = scan.table_maps.get((table.db, table.name)) if scan else None
    legacy, evidence = legacy_columns(table, source, seen)
    if legacy is None:
        return _uncertain(table, temporal, source)
    found = []
    if legacy:
        found.append(_legacy(table, legacy, evidence, source))
        if seen is not None:
            found[-1].details["table_map"] = {"file": seen.file, "offset": seen.offset,
                                              "types": list(seen.types)}
    elif seen is not None and seen.legacy_at is not None:
        found.append(_older_events(table, seen))
    return found


def legacy_columns(table: Table, source: SourceFacts,
                   seen: TableMapSeen | None) -> tuple[list[Column] | None, str]:
    """The legacy columns and how that is known; (None, "") when it cannot be known."""
    if source.version_tuple() >= (10, 5, 1):
        cols = [c for c in table.columns if c.legacy_marked]
        return cols, "information_schema.COLUMNS marks them /* mariadb-5.3 */"
    if seen is not None and len(seen.types) == len(table.columns):
        cols = [c for c, t in zip(table.columns, seen.types, strict=True)
                if t in LEGACY_CODES and c.data_type in TEMPORAL]
        codes = ", ".join(str(t) for c, t in zip(table.columns, seen.types, strict=True)
                          if c.data_type in TEMPORAL)
        return cols, f"the TABLE_MAP at {seen.file} @ {seen.offset} has type codes {codes}"
    return None, ""


def _described(cols: list[Column]) -> str:
    return ", ".join(f"{c.name} {c.data_type.upper()}({c.precision or 0})" for c in cols)


def _legacy(table: Table, cols: list[Column], evidence: str, source: SourceFacts) -> Finding:
    fractional = [c for c in cols if c.precision]
    details = {"columns": [{"name": c.name, "type": c.data_type, "precision": c.precision or 0}
                           for c in cols], "evidence": evidence,
               "size_bytes": table.data_length + table.index_length}
    if fractional:
        details["consumers"] = CONSUMERS
        return Finding(BLOCKER, "legacy-temporal",
                       f"{len(fractional)} column(s) in the MariaDB 5.3 temporal format with "
                       f"fractional seconds ({_described(fractional)}): {evidence}; the binlog "
                       f"does not record their precision",
                       remedies(table, source), table=table.qualified, details=details)
    times = [c for c in cols if c.data_type == "time"]
    if times:
        details["consumers"] = TIME_N0_CONSUMERS
        return Finding(WARNING, "legacy-temporal-time",
                       f"legacy 5.3-format TIME column(s) without fractions ({_described(times)}): "
                       f"parsers that read the signed 3-byte value as unsigned get negative "
                       f"times wrong", remedies(table, source), table=table.qualified,
                       details=details)
    return Finding(INFO, "legacy-temporal-n0",
                   f"legacy 5.3-format column(s) without fractions ({_described(cols)}): "
                   f"every consumer decodes them", "nothing needed; a table copy under "
                   "mysql56_temporal_format=ON would convert them", table=table.qualified,
                   details=details)


def _older_events(table: Table, seen: TableMapSeen) -> Finding:
    file, offset = seen.legacy_at or ("", 0)
    return Finding(INFO, "legacy-temporal-history",
                   f"the table is in the MySQL 5.6 format now, but its TABLE_MAP at {file} @ "
                   f"{offset} still has legacy codes: rows before that point are in the old format",
                   f"start the pipeline after the transaction at {file} @ {offset}, or decode the "
                   f"older binlogs with "
                   f"binlog dump --schema-ddl (a dump of the schema as of then)",
                   table=table.qualified, details={"legacy_table_map": {"file": file, "offset": offset}})


def _uncertain(table: Table, temporal: list[Column], source: SourceFacts) -> list[Finding]:
    fractional = [c for c in temporal if c.precision]
    if not fractional:
        return []
    version = source.version_tuple()
    setting = source.variables.get("mysql56_temporal_format")
    if version < (10, 1, 2) or setting is None:
        severity, why = BLOCKER, (f"MariaDB {source.version} creates temporal columns in the "
                                  f"5.3 format (no mysql56_temporal_format before 10.1.2), so "
                                  f"these are legacy unless the table was made elsewhere")
    elif setting.upper() == "OFF":
        severity, why = BLOCKER, ("mysql56_temporal_format is OFF: tables created or copied "
                                  "under it are in the 5.3 format; older ones may be either")
    else:
        severity, why = WARNING, ("mysql56_temporal_format is ON now, but a table created before "
                                  "(or on 10.0) keeps the 5.3 format; this server version does "
                                  "not say which")
    return [Finding(severity, "legacy-temporal-unknown",
                    f"{_described(fractional)} may be in the legacy 5.3 format: {why}",
                    "write a row to the table and run binlog doctor again (its TABLE_MAP in the "
                    "binlog tells: codes 7/12/11 legacy, 17/18/19 not); if legacy: "
                    + remedies(table, source), table=table.qualified,
                    details={"columns": [{"name": c.name, "type": c.data_type,
                                          "precision": c.precision} for c in fractional],
                             "server_version": source.version,
                             "mysql56_temporal_format": setting, "consumers": CONSUMERS})]


def copy_estimate(size: int) -> str:
    low, high = (size / rate for rate in reversed(COPY_RATES))
    if high < 1:
        return f"{_mb(size)} to copy, under a second"
    return f"{_mb(size)} to copy, roughly {_duration(low)} to {_duration(high)}"


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def remedies(table: Table, source: SourceFacts) -> str:
    """The three ways out, in the order a team meets them."""
    setting = source.variables.get("mysql56_temporal_format", "absent (MariaDB 10.0)")
    size = table.data_length + table.index_length
    convert = (f"(3) convert on the source: with mysql56_temporal_format=ON (now {setting}) run "
               f"ALTER TABLE {quote(table.db)}.{quote(table.name)} FORCE - a full table copy "
               f"that blocks writes while it runs (ALGORITHM=INPLACE/NOCOPY/INSTANT and LOCK=NONE "
               f"are refused with error 1846): {copy_estimate(size)}; or an online schema "
               f"change tool (pt-online-schema-change --alter 'ENGINE=InnoDB': its ALTER of "
               f"the empty copy converts, rows are copied in chunks while writes go on)")
    if setting.upper() != "ON" and not setting.startswith("absent"):
        convert += "; SET GLOBAL mysql56_temporal_format=ON first"
    elif setting.startswith("absent"):
        convert = ("(3) convert on the source: only after an upgrade to MariaDB 10.1.2+ "
                   "(mysql56_temporal_format=ON, then ALTER TABLE ... FORCE: a full table copy, "
                   f"{copy_estimate(size)})")
    return ("(1) decode with binlog dump/apply --schema-from DSN (the live COLUMN_TYPE gives N) "
            "or --schema-ddl DUMP (a mariadb-dump --no-data as of the binlog start); "
            "(2) binlog serve --upstream (or binlog rewrite) gives unmodified consumers a binlog "
            "with codes 17/18/19; " + convert)


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
