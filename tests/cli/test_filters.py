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
    return {f"{r['db']}.{r['table']}" for r in map(json.loads, result.stdout.splitlines())}


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
    full = [json.loads(l) for l in dump(TYPES).stdout.splitlines()]
    kept = [json.loads(l) for l in dump("--table", "tf.dates", TYPES).stdout.splitlines()]
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
