"""`binlog dump --bigint-as-string` and `--output-dir DIR` (per-table JSON Lines, rotated)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.records import row_records

REPO = Path(__file__).resolve().parents[3]
TYPES = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"


def dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def lines(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return row_records(result.stdout)


def test_bigint_as_string_keeps_every_digit():
    plain, strings = lines(dump(TYPES)), lines(dump("--bigint-as-string", TYPES))
    assert len(plain) == len(strings)
    big = 0
    for a, b in zip(plain, strings, strict=True):
        for image in ("before", "after"):
            for key, value in (a[image] or {}).items():
                other = b[image][key]
                if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53 - 1:
                    assert other == str(value)
                    big += 1
                else:
                    assert other == value
    assert big >= 3           # BIGINT and BIGINT UNSIGNED extremes of tf.ints
    assert "18446744073709551615" in {v for r in strings for v in (r["after"] or {}).values()}
    assert int(float(18446744073709551615)) != 18446744073709551615     # what a double would keep


def test_output_dir_one_file_per_table_rotated(tmp_path):
    everything = lines(dump(TYPES))
    out = tmp_path / "tables"
    result = dump("--output-dir", out, "--rotate-size", "1k", TYPES)
    assert result.returncode == 0, result.stderr and result.stdout == ""
    tables = {(r["db"], r["table"]) for r in everything}
    for db, table in tables:
        files = sorted(out.glob(f"{db}.{table}.*.jsonl"))
        assert files, (db, table)
        got = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        assert got == [r for r in everything if (r["db"], r["table"]) == (db, table)]
        for f in files[:-1]:
            assert f.stat().st_size >= 1024          # rotated only once full
    assert any(len(list(out.glob(f"{db}.{table}.*.jsonl"))) > 1 for db, table in tables)
    assert len(list(out.iterdir())) >= len(tables)


def test_output_dir_statements_and_ddl_in_their_own_file(tmp_path):
    """Nothing is left out: the table files and _statements.*.jsonl together hold every
    record of one stream; statements and DDL in binlog order with their positions."""
    source = REPO / "samples" / "mariadb-10.11" / "events_misc"
    result = dump(source)
    assert result.returncode == 0, result.stderr
    everything = [json.loads(line) for line in result.stdout.splitlines()]
    out = tmp_path / "o"
    assert dump("--output-dir", out, "--rotate-size", "2k", source).returncode == 0
    files = sorted(out.glob("_statements.*.jsonl"))
    assert len(files) > 1                                  # rotated like the table files
    statements = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert statements == [r for r in everything if r["op"] in ("statement", "ddl")]
    rows = [json.loads(line) for f in sorted(out.glob("*.jsonl")) if not f.name.startswith("_")
            for line in f.read_text().splitlines()]
    assert sorted(map(repr, rows + statements)) == sorted(map(repr, everything))
    debezium = tmp_path / "d"
    assert dump("--format", "debezium", "--output-dir", debezium, source).returncode == 0
    lines = [json.loads(line) for f in sorted(debezium.glob("_statements.*.jsonl"))
             for line in f.read_text().splitlines()]
    assert [(x["source"]["file"], x["source"]["pos"]) for x in lines] == \
        [(r["file"], r["pos"]) for r in statements]


def test_output_dir_needs_a_json_format(tmp_path):
    assert dump("--output-dir", tmp_path / "o", "--format", "sql", TYPES).returncode == 2


def test_rewrite_db_in_records_and_sql():
    plain = lines(dump(TYPES))
    rewritten = lines(dump("--rewrite-db", "tf->tf_copy", TYPES))
    assert {r["db"] for r in plain} == {"tf"} and {r["db"] for r in rewritten} == {"tf_copy"}
    assert [dict(r, db="tf") for r in rewritten] == plain
    split = lines(dump("--rewrite-db", "tf->tf_copy", "--split-updates", TYPES))
    assert split and {r["db"] for r in split} == {"tf_copy"}
    sql = dump("--format", "sql", "--rewrite-db", "tf -> tf_copy", TYPES)
    assert sql.returncode == 0, sql.stderr
    assert "`tf_copy`.`ints`" in sql.stdout and "`tf`.`ints`" not in sql.stdout
    other = dump("--format", "sql", "--rewrite-db", "nosuch->x", TYPES)
    assert "`tf`.`ints`" in other.stdout
    assert dump("--rewrite-db", "tf", TYPES).returncode == 2
