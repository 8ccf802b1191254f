"""Table filters at the TABLE_MAP stage, on real samples."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from binlog.errors import UsageError
from binlog.filters import TableFilter
from binlog.reader import BinlogReader

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"
TYPES = SAMPLES / "types_full.binlog"
PREDUMP = SAMPLES / "temporal_predump.binlog"


def dump(*args):
    return subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def tables(result) -> set[str]:
    assert result.returncode == 0, result.stderr
    return {f"{r['db']}.{r['table']}" for r in map(json.loads, result.stdout.splitlines())
            if r["op"] in ("insert", "update", "delete")}


@pytest.mark.parametrize("pattern, name, keeps", [
    ("tf.ints", "tf.ints", True), ("tf.ints", "tf.intsx", False),
    ("tf.int%", "tf.ints", True), ("tf.int*", "tf.int", True), ("tf.in_s", "tf.ints", True),
    ("tf.in_s", "tf.inns", True), ("tf.in_s", "tf.ins", False), ("%.%", "a.b", True),
    ("tf.a\\_b", "tf.a_b", True), ("tf.a\\_b", "tf.axb", False), ("TF.ints", "tf.ints", False),
])
def test_wildcards(pattern, name, keeps):
    db, table = name.split(".")
    assert TableFilter([pattern]).keeps(db, table) is keeps


def test_pattern_needs_a_dot():
    with pytest.raises(UsageError):
        TableFilter(["ints"])


def test_include_exclude_and_database():
    everything = tables(dump(TYPES))
    assert tables(dump("--table", "tf.int%", TYPES)) == {"tf.ints"}
    assert tables(dump("--table", "tf.int%", "--table", "tf.floats", TYPES)) == {"tf.ints", "tf.floats"}
    assert tables(dump("--exclude-table", "tf.int%", TYPES)) == everything - {"tf.ints"}
    assert tables(dump("--database", "tf", "--exclude-table", "tf.%s", TYPES)) == \
        {t for t in everything if not t.endswith("s")}
    assert tables(dump("--database", "nope", TYPES)) == set()


def test_kept_rows_are_identical_to_an_unfiltered_run():
    rows = ("insert", "update", "delete")
    full = [r for r in map(json.loads, dump(TYPES).stdout.splitlines()) if r["op"] in rows]
    kept = [r for r in map(json.loads, dump("--table", "tf.dates", TYPES).stdout.splitlines())
            if r["op"] in rows]
    assert kept == [r for r in full if r["table"] == "dates"] and kept


def test_filtered_legacy_table_needs_no_schema():
    # temporal_predump's tables predate the binlog: without a schema tp.legacy_all stops
    # the run; filtered out, it is never decoded and the run ends cleanly.
    assert dump(PREDUMP).returncode == 1
    result = dump("--stats", "--exclude-table", "tp.legacy%", "--exclude-table", "tp.tt", PREDUMP)
    assert tables(result) == {"tp.mysql56_all"}
    assert "rows events" in result.stderr and "skipped undecoded" in result.stderr


def test_python_api_counts_skipped_events():
    reader = BinlogReader([TYPES], table_filter=TableFilter(["tf.ints"]))
    changes = list(reader.changes())
    assert {c.table for c in changes} == {"ints"}
    assert reader.stats.skipped_events > 0 and reader.stats.skipped_bytes > 0
    unfiltered = BinlogReader([TYPES])
    list(unfiltered.changes())
    assert reader.stats.skipped_bytes < unfiltered.stats.bytes


# -- filters and positions that can match nothing ----------------------

@pytest.mark.parametrize("pattern", ["tf.", ".ints", "tf.ints.x", "`tf.ints", "tf.`ints"])
def test_malformed_patterns_are_bad_usage(pattern):
    result = dump("--table", pattern, TYPES)
    assert result.returncode == 2 and "must be DB.TABLE" in result.stderr, result.stderr


def test_backquoted_patterns_mean_the_names():
    assert tables(dump("--table", "`tf`.`ints`", TYPES)) == {"tf.ints"}
    assert TableFilter(["`a.b`.t"]).keeps("a.b", "t") and not TableFilter(["`a.b`.t"]).keeps("a", "b.t")


def test_a_filter_that_matched_nothing_is_warned_about():
    result = dump("--table", "tf.ints", "--table", "tf.nope", "--exclude-table", "zz.%", TYPES)
    assert result.returncode == 0
    assert "tf.nope matched no table" in result.stderr
    assert "--exclude-table zz.% matched no table" in result.stderr
    assert "tf.ints matched" not in result.stderr


def test_positions_that_cannot_match():
    size = TYPES.stat().st_size
    r = dump("--start-position", size + 10, TYPES)
    assert r.returncode == 2 and "beyond the end" in r.stderr
    # an offset inside an event: the boundaries around it come from the server's
    # events list of the sample (types_full.events.txt: "pos end_log_pos" per event)
    starts = [int(line.split()[1]) for line in (SAMPLES / "types_full.events.txt").read_text().splitlines()
              if line.strip() and line.split()[1].isdigit()]
    inside = starts[5] + 3
    r = dump("--start-position", inside, TYPES)
    assert r.returncode == 2 and "not an event boundary" in r.stderr, r.stderr
    assert f"boundaries are {starts[5]} or {starts[6]}" in r.stderr
    assert dump("--start-position", starts[5], TYPES).returncode == 0
    r = dump("--start-position", starts[6], "--stop-position", starts[5], TYPES)
    assert r.returncode == 2 and "not after" in r.stderr


@pytest.mark.server
def test_schema_from_a_database_the_server_lacks(mariadb_server):
    dsn = f"mysql://root@127.0.0.1:{mariadb_server.port}/no_such_db_16"
    r = dump("--schema-from", dsn, TYPES)
    assert r.returncode == 2 and "'no_such_db_16' does not exist" in r.stderr, r.stderr
