"""The checks as plain functions, on facts of servers not at hand (MariaDB 10.0/10.1,
MySQL, a TiDB target): the decisions the server tests cannot reach on a 10.11.  The
facts are what those servers answer (their VERSION() strings, variables present or
absent), written out as data; the report built from them must still be valid JSON
against the schema."""
from __future__ import annotations

import jsonschema

from binlog.doctor.checks import Facts, check_retention, retention_seconds, run_checks
from binlog.doctor.facts import Column, Index, Privileges, SourceFacts, Table, TargetFacts
from binlog.doctor.report import document, load_schema, render_text
from binlog.doctor.scan import BinlogScan, StatementsSeen, TableMapSeen, start_file, statement_table

ROW_VARS = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL",
            "binlog_checksum": "CRC32", "server_id": "1", "expire_logs_days": "0"}


def table(*columns: Column, name: str = "t") -> Table:
    return Table("d", name, "InnoDB", "utf8mb4_general_ci", 10_000_000, 0, 100,
                 columns=[Column("id", "int", "int(11)", None, False, None, None, ""), *columns],
                 indexes=[Index("PRIMARY", True, "BTREE", ("id",))])


def dt(name: str, n: int, marker: bool = False, data_type: str = "datetime") -> Column:
    col_type = f"{data_type}({n})" if n else data_type
    return Column(name, data_type, col_type + (" /* mariadb-5.3 */" if marker else ""), n, True,
                  None, None, "")


def source(version: str, tables: list[Table], **variables: str) -> SourceFacts:
    privs = Privileges("root@localhost", {"ALL PRIVILEGES"})
    return SourceFacts("h:3306", version, {**ROW_VARS, **variables}, 1_700_000_000, privs,
                       tables, [("b.000001", 1000)])


def findings(src: SourceFacts, scan: BinlogScan | None = None, target=None):
    scan = scan if scan is not None else BinlogScan(complete=True, oldest_binlog_ts=src.now - 86400)
    facts = Facts(src, scan, target)
    found = run_checks(facts)
    jsonschema.validate(document(facts, found), load_schema())
    return found


def by_check(found, check):
    return [f for f in found if f.check == check]


def test_mariadb_10_0_fractional_columns_are_legacy_blockers():
    src = source("10.0.38-MariaDB", [table(dt("a", 6))])      # no mysql56_temporal_format
    f, = by_check(findings(src), "legacy-temporal-unknown")
    assert f.severity == "blocker" and "10.1.2" in f.reason
    assert "upgrade to MariaDB 10.1.2+" in f.fix


def test_mariadb_10_1_with_the_setting_on_is_uncertain():
    src = source("10.1.48-MariaDB", [table(dt("a", 3))], mysql56_temporal_format="ON")
    f, = by_check(findings(src), "legacy-temporal-unknown")
    assert f.severity == "warning" and "does not say" in f.reason and "TABLE_MAP" in f.fix
    off = source("10.1.48-MariaDB", [table(dt("a", 3))], mysql56_temporal_format="OFF")
    assert by_check(findings(off), "legacy-temporal-unknown")[0].severity == "blocker"


def test_a_table_map_decides_on_old_servers():
    src = source("10.1.48-MariaDB", [table(dt("a", 6), dt("b", 0, data_type="time"))],
                 mysql56_temporal_format="ON")
    legacy = BinlogScan(complete=True, table_maps={("d", "t"): TableMapSeen((3, 12, 11), "b.000001", 500)})
    f, = by_check(findings(src, legacy), "legacy-temporal")
    assert f.severity == "blocker" and "b.000001 @ 500" in f.reason
    modern = BinlogScan(complete=True, table_maps={("d", "t"): TableMapSeen((3, 18, 19), "b.000001", 900)})
    assert not [f for f in findings(src, modern) if f.check.startswith("legacy")]


def test_legacy_time_without_fraction_is_a_warning():
    src = source("10.11.6-MariaDB", [table(dt("t0", 0, marker=True, data_type="time"))])
    f, = by_check(findings(src), "legacy-temporal-time")
    assert f.severity == "warning"


def test_mysql_has_no_legacy_fractions():
    src = source("8.0.36", [table(dt("a", 6))], gtid_mode="ON")
    assert not [f for f in findings(src) if f.check.startswith("legacy")]


def test_retention():
    assert retention_seconds({"expire_logs_days": "0.000000", "binlog_expire_logs_seconds": "600"}) == 600
    assert retention_seconds({"expire_logs_days": "2.5"}) == 2.5 * 86400
    src = source("10.11.6-MariaDB", [], binlog_expire_logs_seconds=str(30 * 3600))
    facts = Facts(src, BinlogScan(oldest_binlog_ts=src.now - 86400), None, migration_hours=24)
    f, = check_retention(facts)
    assert f.severity == "warning" and "1000" not in f.reason
    assert f.details["bytes_per_day"] == 1000
    facts.migration_hours = 48
    assert check_retention(facts)[0].severity == "blocker"


def test_settings_and_privileges():
    src = source("10.11.6-MariaDB", [table()], binlog_format="MIXED", binlog_row_image="MINIMAL",
                 log_bin_compress="ON")
    src.privileges = Privileges("u@%", {"REPLICATION SLAVE"}, {"d": {"SELECT"}})
    found = findings(src)
    assert by_check(found, "binlog-format")[0].severity == "warning"
    assert by_check(found, "binlog-row-image")[0].severity == "blocker"
    assert by_check(found, "log-bin-compress")[0].severity == "warning"
    reasons = [f.reason for f in by_check(found, "privilege")]
    assert any("BINLOG MONITOR" in r for r in reasons) and any("RELOAD" in r for r in reasons)
    assert not any("SELECT" in r for r in reasons)


def test_tidb_target_charsets_and_generated_keys():
    gen = Column("k", "varchar", "varchar(10)", None, False, "utf8mb4", "utf8mb4_bin", "STORED GENERATED")
    odd = Column("s", "varchar", "varchar(10)", None, True, "koi8r", "koi8r_general_ci", "")
    t = table(gen, odd)
    t.indexes.append(Index("uk", True, "BTREE", ("k",)))
    target = TargetFacts("tidb:4000", "8.0.11-TiDB-v8.1.0", True, {"utf8mb4_bin"}, {"utf8mb4"})
    found = findings(source("10.11.6-MariaDB", [t]), target=target)
    assert by_check(found, "tidb-charset")[0].details["names"] == ["koi8r"]
    assert by_check(found, "tidb-generated-key")[0].details["columns"] == ["k"]
    coll, = by_check(found, "target-collation")
    assert coll.details["collations"] == ["koi8r_general_ci", "utf8mb4_general_ci"]


def test_text_report_escapes_server_text():
    src = source("10.11.6-MariaDB\x1b[2J", [Table("d", "t\x07", None, None, 0, 0, 0)])
    facts = Facts(src, BinlogScan(complete=True), None)
    text = render_text(document(facts, run_checks(facts)))
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text


def test_scan_helpers():
    logs = [("b.000001", 50), ("b.000002", 30), ("b.000003", 40)]
    assert start_file(logs, 70) == "b.000002"
    assert start_file(logs, 10) == "b.000003"          # the newest one at least
    assert statement_table("INSERT INTO `x`.`y` VALUES (1)", "d") == "x.y"
    assert statement_table("update t set a = 1", "d") == "d.t"
    assert statement_table("DO 1", "") == "?"


def test_statements_in_scope_only_and_damage_reported():
    src = source("10.11.6-MariaDB", [table()])
    scan = BinlogScan(complete=False, damage="b.000001 @ 900 QUERY_EVENT: need 4 bytes, 1 left",
                      stopped="damaged event", bytes_read=900,
                      statements={"d.t": StatementsSeen(2, "b.000001", 400, "UPDATE d.t SET a=1"),
                                  "other.x": StatementsSeen(1, "b.000001", 500, "DELETE FROM other.x"),
                                  "mysql.user": StatementsSeen(1, "b.000001", 600, "UPDATE mysql.user")})
    facts = Facts(src, scan, None, databases=["d"])
    found = run_checks(facts)
    assert [f.table for f in by_check(found, "statement-logged-changes")] == ["d.t"]
    facts.databases = None
    found = run_checks(facts)
    assert [f.table for f in by_check(found, "statement-logged-changes")] == ["d.t", "other.x"]
    damage, = by_check(found, "binlog-scan")
    assert damage.severity == "warning" and "need 4 bytes" in damage.reason
