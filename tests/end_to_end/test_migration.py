"""The migration walk-through on real servers, with legacy temporals: dump the schema
(legacy columns kept legacy on the target), apply with a schema file, get killed, resume,
verify with TiCDC row checksums - and see an out-of-band change reported."""
from __future__ import annotations

import json
import signal

import pytest
from replay_helpers import assert_same_contents, cli, contents, dsn, load_schema, mariadb_client, run_script, script

pytestmark = pytest.mark.server


@pytest.fixture
def migrated(two_servers, tmp_path):
    source, target = two_servers
    run_script(source, script("temporal_cells.sql"))       # every precision, 4 format cells
    source.flush_logs()
    dump = source.dump_schema(["tc"])
    assert "/* mariadb-5.3 */" in dump
    schema_file = tmp_path / "schema.sql"
    schema_file.write_text(dump, encoding="utf-8")
    load_schema(target, dump)
    files = [str(p) for p in source.binlog_files()]
    return source, target, files, schema_file


def test_legacy_temporals_apply_resume_verify(migrated):
    source, target, files, schema_file = migrated
    common = ["--to", dsn(target), "--schema-ddl", schema_file, "--no-ddl",
              "--batch-transactions", "4"]
    killed = cli("apply", *common, *files, env={"BINLOG_APPLY_FAULT": "kill-after-commit:3"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    killed = cli("apply", *common, *files, env={"BINLOG_APPLY_FAULT": "kill-before-commit:2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    done = cli("apply", *common, *files)
    assert done.returncode == 0, done.stderr.decode()
    assert b"DDL not replayed (--no-ddl)" not in done.stderr     # those were before the checkpoint
    assert_same_contents(source, target, ["tc"])

    # verify-rows: every row the binlog changed has the checksum its last image gives
    ok = cli("verify-rows", "--against", dsn(target), "--schema-ddl", schema_file, *files)
    assert ok.returncode == 0, ok.stdout.decode() + ok.stderr.decode()
    summary = ok.stdout.decode().strip().splitlines()[-1]
    assert ", 0 different" in summary and " 0 equal" not in summary

    # an out-of-band change on the target: exactly that row is reported
    target.execute("UPDATE tc.off_off_dt SET dt3 = '2001-01-01 00:00:00.001' WHERE id = 2")
    bad = cli("verify-rows", "--against", dsn(target), "--schema-ddl", schema_file, *files)
    assert bad.returncode == 6, bad.stdout.decode() + bad.stderr.decode()
    diffs = [l for l in bad.stdout.decode().splitlines() if l.startswith("DIFF ")]
    assert len(diffs) == 1 and "tc.off_off_dt (id=2)" in diffs[0] and "expected" in diffs[0]

    # the same from the JSON records of `dump --checksum` (the TiCDC-style path)
    records = cli("dump", "--checksum", "--schema-ddl", schema_file, *files)
    assert records.returncode == 0, records.stderr.decode()
    lines = [json.loads(l) for l in records.stdout.splitlines()]
    assert all("checksum" in r for r in lines if r["op"] in ("insert", "update", "delete"))
    from_records = cli("verify-rows", "--records", "--against", dsn(target), "-",
                       input=records.stdout)
    assert from_records.returncode == 6, from_records.stdout.decode() + from_records.stderr.decode()
    diffs2 = [l for l in from_records.stdout.decode().splitlines() if l.startswith("DIFF ")]
    assert len(diffs2) == 1 and "tc.off_off_dt (id=2)" in diffs2[0]
    # a row deleted out of band is missing on the target
    victim = target.query("SELECT MAX(id) FROM tc.on_on_tm")[0][0]
    target.execute(f"DELETE FROM tc.on_on_tm WHERE id = {victim}")
    again = cli("verify-rows", "--against", dsn(target), "--schema-ddl", schema_file, *files)
    text = again.stdout.decode()
    assert again.returncode == 6 and f"tc.on_on_tm (id={victim}): missing on the target" in text


def test_resume_refuses_files_that_skip_the_checkpoint(migrated, tmp_path):
    source, target, files, schema_file = migrated
    done = cli("apply", "--to", dsn(target), "--schema-ddl", schema_file, "--no-ddl", *files)
    assert done.returncode == 0, done.stderr.decode()
    source.execute("INSERT INTO tc.on_on_tm (id, t3) VALUES (100, '12:34:56.789')")
    source.flush_logs()
    source.execute("INSERT INTO tc.on_on_tm (id, t3) VALUES (101, '-01:00:00.5')")
    newest = [str(p) for p in source.binlog_files()][-1:]
    gap = cli("apply", "--to", dsn(target), "--schema-ddl", schema_file, *newest)
    assert gap.returncode == 2 and b"not among the files given" in gap.stderr
    resumed = cli("apply", "--to", dsn(target), "--schema-ddl", schema_file,
                  *[str(p) for p in source.binlog_files()])
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert_same_contents(source, target, ["tc"])


def test_legacy_temporals_through_sql_and_mariadb_client(two_servers):
    """The script path with every precision of the four format cells: the binlog's own
    CREATE TABLEs give the legacy precisions, the target creates MySQL 5.6-format columns
    (so rows are compared by value; CHECKSUM TABLE only where the formats agree)."""
    source, target = two_servers
    run_script(source, script("temporal_cells.sql"))
    files = [str(p) for p in source.binlog_files()]
    sql = cli("dump", "--format", "sql", *files)
    assert sql.returncode == 0, sql.stderr.decode()
    assert b"'-838:59:59.999999'" in sql.stdout and b"'0000-00-00 00:00:00.000000'" in sql.stdout
    done = mariadb_client(target, sql.stdout)
    assert done.returncode == 0, done.stderr.decode()
    assert_same_contents(source, target, ["tc"], checksum=False)
    a, b = contents(source, ["tc"]), contents(target, ["tc"])
    for name in a:
        if name.startswith("tc.on_"):
            assert a[name][0] == b[name][0], name
