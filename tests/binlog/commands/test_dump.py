"""`binlog dump` as a user runs it: output formats, filters, exit codes, messages."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
CHECKSUM_NONE = SAMPLES / "checksum_none.binlog"     # events listed in checksum_none.events.txt
TYPES_FULL = SAMPLES / "types_full.binlog"


def dump(*args, input_path=None):
    cmd = [sys.executable, "-m", "binlog.cli", "dump", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


ROW_OPS = ("insert", "update", "delete")


def all_records(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def records(result) -> list[dict]:
    """The row records (statement and DDL records: tests/binlog/test_statements.py)."""
    return [r for r in all_records(result) if r["op"] in ROW_OPS]


def test_json_contract_fields():
    rows = records(dump(CHECKSUM_NONE))
    assert rows
    first = rows[0]
    assert list(first) == ["file", "pos", "ts", "server_id", "gtid", "db", "table", "op", "before", "after",
                           "row", "pk", "commit", "xid", "end_pos"]
    assert first["file"] == "checksum_none.binlog" and first["pos"] == 998
    assert first["gtid"] == "0-1-3" and first["ts"] == "2023-11-14T22:13:20Z"
    assert first["op"] == "insert" and first["before"] is None
    assert first["after"]["id"] == 1 and first["after"]["s"] == "one"


def test_position_filters_follow_event_offsets():
    all_rows = records(dump(CHECKSUM_NONE))
    # 1123 is the GTID 0-1-4 event; 1362 starts GTID 0-1-5 (server's SHOW BINLOG EVENTS).
    window = records(dump("--start-position", 1123, "--stop-position", 1362, CHECKSUM_NONE))
    assert [r["gtid"] for r in window] == ["0-1-4"]
    assert window == [r for r in all_rows if 1123 <= r["pos"] < 1362]


def test_datetime_filters():
    # Every statement of the sample ran with SET timestamp = 1700000000.
    assert records(dump("--stop-datetime", "2023-11-14 22:13:20", CHECKSUM_NONE)) == []
    assert records(dump("--start-datetime", "2023-11-14 22:13:21", CHECKSUM_NONE)) == []
    everything = records(dump(CHECKSUM_NONE))
    assert records(dump("--start-datetime", "2023-11-14 22:13:20",
                        "--stop-datetime", "2023-11-14 22:13:21", CHECKSUM_NONE)) == everything
    # --timezone says which zone the option is in: 23:13:20 in Paris (UTC+1) is 22:13:20 UTC;
    # it is also the zone TIMESTAMP values are shown in.
    paris = records(dump("--timezone", "Europe/Paris", "--start-datetime", "2023-11-14 23:13:20",
                         CHECKSUM_NONE))
    assert [r["pos"] for r in paris] == [r["pos"] for r in everything]
    assert paris[0]["after"]["ts"] == "2023-11-14 23:13:20.123"
    assert everything[0]["after"]["ts"] == "2023-11-14 22:13:20.123"


def test_text_format_reads_like_mariadb_binlog_verbose():
    result = dump("--format", "text", CHECKSUM_NONE)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "# at 998\n" in out
    assert "end_log_pos 1096" in out
    assert "### INSERT INTO `cs`.`t`\n### SET\n###   @`id`=1\n" in out
    assert "### UPDATE `cs`.`t`\n### WHERE\n" in out
    assert "GTID 0-1-3" in out and "Xid = 32" in out


def test_legacy_temporal_without_schema_exits_1_with_remedy():
    # The tables of temporal_predump were created before its binlog: no DDL to follow.
    result = dump(SAMPLES / "temporal_predump.binlog")
    assert result.returncode == 1
    assert "temporal_predump.binlog @ " in result.stderr and "--schema-ddl" in result.stderr
    assert not [line for line in result.stdout.splitlines() if json.loads(line)["op"] in ROW_OPS]
    # With its CREATE TABLEs in the binlog, the same kind of table decodes by default...
    assert dump(SAMPLES / "legacy_temporal.binlog").returncode == 0
    # ...and stops when DDL tracking is off.
    result = dump("--no-track-ddl", SAMPLES / "legacy_temporal.binlog")
    assert result.returncode == 1
    err = result.stderr
    assert "legacy_temporal.binlog @ " in err and "WRITE_ROWS_EVENT_V1" in err
    assert "column `" in err and "hint:" in err and "schema" in err
    # nothing decoded wrongly before the stop (the DDL before it is given out)
    assert not [line for line in result.stdout.splitlines() if json.loads(line)["op"] in ROW_OPS]


def test_schema_dump_file_decodes_tables_created_before_the_binlog():
    for dump_file in ("temporal_predump.schema.sql", "temporal_predump.schema-nomarkers.sql"):
        result = dump("--schema-ddl", SAMPLES / dump_file, SAMPLES / "temporal_predump.binlog")
        rows = records(result)
        # binlog_row_metadata is unset in this case: the names come from the dump.
        assert rows and not any(key.startswith("@") for r in rows
                                for image in (r["before"], r["after"]) if image for key in image)


def test_infer_precision_refuses_an_ambiguous_event():
    result = dump("--no-track-ddl", "--infer-precision", SAMPLES / "legacy_temporal.binlog")
    assert result.returncode == 1
    assert "fit more than one precision" in result.stderr and "N=5" in result.stderr


def test_bad_usage_exits_2():
    assert dump("--format", "yaml", CHECKSUM_NONE).returncode == 2
    missing = dump("/nonexistent/binlog.000001")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert dump("--start-datetime", "yesterday", CHECKSUM_NONE).returncode == 2
    assert dump("--timezone", "Mars/Olympus", CHECKSUM_NONE).returncode == 2


def test_checksum_mismatch_names_both_values(tmp_path):
    data = bytearray(TYPES_FULL.read_bytes())
    data[1000] ^= 0xFF                       # inside an event body
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))
    result = dump(broken)
    assert result.returncode == 1
    assert "CRC32 mismatch: stored 0x" in result.stderr and "computed 0x" in result.stderr


def test_unknown_event_is_reported_not_dropped(tmp_path):
    data = bytearray(CHECKSUM_NONE.read_bytes())
    assert data[1096 + 4] == 16               # the XID event at 1096 (no checksums here)
    data[1096 + 4] = 200                      # a type code nobody defines
    patched = tmp_path / "patched.binlog"
    patched.write_bytes(bytes(data))
    result = dump("--stats", patched)
    assert result.returncode == 0
    assert "patched.binlog @ 1096: unknown event type 200" in result.stderr
    assert "1 unknown event(s) reported" in result.stderr
    plain = records(dump(CHECKSUM_NONE))
    commit = ("commit", "xid", "end_pos")
    assert [{k: v for k, v in r.items() if k not in commit} for r in records(result)] == [
        {k: v for k, v in dict(r, file="patched.binlog").items() if k not in commit} for r in plain]
    # the transaction whose XID became unknown has no commit marker: its end is not known
    assert sum(r["commit"] for r in records(result)) == sum(r["commit"] for r in plain) - 1


def test_directory_reads_binlogs_in_index_order():
    rows = records(dump(SAMPLES / "events_misc"))
    files = [r["file"] for r in rows]
    assert files == sorted(files) and len(set(files)) >= 2


def test_truncated_file_stops_with_offset(tmp_path):
    cut = tmp_path / "cut.binlog"
    cut.write_bytes(CHECKSUM_NONE.read_bytes()[:1100])      # inside the XID at 1096
    result = dump(cut)
    # A file still being written: a clean stop before the incomplete event, exit 4.
    assert result.returncode == 4
    assert "cut.binlog @ 1096" in result.stderr and "truncated" in result.stderr
    before = dump(CHECKSUM_NONE, "--stop-position", 1096).stdout
    assert result.stdout == before.replace("checksum_none.binlog", "cut.binlog")


def test_a_file_given_twice_is_refused_not_read_twice(tmp_path, capsys):
    from binlog.cli import main

    sample = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11" / "types_full.binlog"
    link = tmp_path / "link.binlog"
    link.symlink_to(sample)
    assert main(["dump", str(sample), str(link)]) == 2
    assert "same file" in capsys.readouterr().err


def test_skip_warnings_name_their_own_event():
    # a legacy table without schema fails in every rows event; each
    # warning must name the event of its own range, not the first one that failed
    import re

    result = dump("--on-error", "skip", SAMPLES / "temporal_predump.binlog")
    assert result.returncode == 3
    ranges = re.findall(r"^binlog: warning: skipped \S+ bytes (\d+)\.\.\d+ \(\d+ bytes\): \S+ @ (\d+) ",
                        result.stderr, re.M)
    assert len(ranges) > 2
    assert all(start == at for start, at in ranges), ranges


@pytest.mark.server
def test_sql_for_one_table_creates_its_database_on_an_empty_target(mariadb_factory):
    # `--format sql --table cs.t` left out CREATE DATABASE cs, so the
    # script failed on an empty target
    from support.mariadb_server import find_tool

    script = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql",
                             "--table", "cs.t", str(CHECKSUM_NONE)], capture_output=True, timeout=120)
    assert script.returncode == 0, script.stderr
    assert b"CREATE DATABASE cs" in script.stdout
    target = mariadb_factory({})
    client = find_tool("mariadb", "mysql")
    proc = subprocess.run([client, "--no-defaults", f"--socket={target.socket}", "--user=root"],
                          input=script.stdout, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert target.query("SELECT COUNT(*) FROM cs.t")[0][0] > 0
    # a filter on another database keeps its CREATE DATABASE out
    other = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql",
                            "--table", "zz.t", str(CHECKSUM_NONE)], capture_output=True, timeout=120)
    assert not [line for line in other.stdout.splitlines() if line.startswith(b"CREATE DATABASE")]


def test_timestamp_offset_in_text_equals_json_and_is_refused_for_sql():
    """--timestamp-offset: text shows the same ISO 8601 values as json (their values are
    checked against a server in tests/binlog/output/test_timestamp_offset.py); SQL literals stay
    UTC wall-clock values, so sql/flashback refuse the option (exit 2)."""
    args = ("--timestamp-offset", "--timezone", "Europe/Berlin", "--table", "tf.timestamps", TYPES_FULL)
    rows = records(dump(*args))
    values = {v for r in rows for image in (r["before"], r["after"]) if image
              for k, v in image.items() if k.startswith("ts") and v}
    zero = {v for v in values if v.startswith("0000-00-00 00:00:00")}     # no instant: as it is
    assert zero and values - zero
    assert all(v[10] == "T" and v[-6:] in ("+01:00", "+02:00") for v in values - zero)
    text = dump("--format", "text", *args)
    assert text.returncode == 0, text.stderr
    assert all(f"'{v}'" in text.stdout for v in values)
    for fmt in ("sql", "flashback"):
        refused = dump("--format", fmt, "--timestamp-offset", TYPES_FULL)
        assert refused.returncode == 2 and "--timestamp-offset" in refused.stderr


def test_ddl_parser_loads_only_when_the_binlog_holds_ddl():
    """Start-up time: the DDL parser (~20 ms of imports) is not loaded by a run over rows
    only; it is by the first DDL statement (and its names still import from the package)."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['binlog', 'dump', '--start-position', sys.argv[1], sys.argv[2]]\n"
             "try:\n    runpy.run_module('binlog.cli', run_name='__main__')\n"
             "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
             "print('schema_store.ddl' in sys.modules, file=sys.stderr)\n")

    def loads_ddl(start: int) -> bool:
        run = subprocess.run([sys.executable, "-c", probe, str(start), str(CHECKSUM_NONE)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert '"op": "insert"' in run.stdout.replace('":"', '": "')
        return run.stderr.split()[-1] == "True"

    assert not loads_ddl(717)       # first BEGIN after the CREATE TABLE
    assert loads_ddl(4)
    from schema_store import Catalog, parse_script
    assert callable(parse_script) and Catalog.__name__ == "Catalog"
