"""The lake the local engine writes, read by the tools users query it with.

DuckDB over ``changes/`` (Parquet), ``deltalake`` and DuckDB over the Delta tables of
``--format delta``: each returns the rows ``binlog dump --format json`` prints.  The
incremental and crash semantics hold for the Delta tables too.  No Spark here: the
local engine needs none (its parity with the Spark engine: tests/spark_ingest/test_local_engine.py).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
deltalake = pytest.importorskip("deltalake")

import orjson

from binlog.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"
FILES = ("types_full.binlog", "compressed.binlog", "signedness.binlog")


def ingest(*args) -> int:
    return main(["ingest", "--no-progress", *map(str, args)])


_STATEMENT_KEYS = ("sql", "sql_hex", "session", "schema")
# the CDC fields: columns of changes/, null on statement and DDL rows
_CDC_KEYS = ("row", "pk", "commit", "xid", "end_pos", "types")


def dump_keys(paths, *options) -> list[tuple]:
    """The records `binlog dump --format json` prints, in a comparable form."""
    out = []
    for path in paths:
        result = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "json", *options,
                                 str(path)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        for line in result.stdout.splitlines():
            r = json.loads(line)
            if r["op"] in ("statement", "ddl"):
                # changes/ keeps a statement's own fields in `after` (spark_ingest/records.py)
                before, after = None, {k: r[k] for k in _STATEMENT_KEYS if k in r}
            else:
                before, after = r["before"], r["after"]
            out.append((r["file"], r["pos"], r["ts"], r["server_id"], r["gtid"], r["db"], r["table"],
                        r["op"], _image(before), _image(after)) + _cdc(*(r.get(k) for k in _CDC_KEYS)))
    return sorted(out, key=repr)


def _cdc(row, pk, commit, xid, end_pos, types) -> tuple:
    return (row, None if pk is None else tuple(pk), commit, None if xid is None else int(xid),
            end_pos, _image(types))


def _image(value):
    if value is None:
        return None
    return orjson.dumps(orjson.loads(value) if isinstance(value, str) else value)


def query_keys(con, relation: str) -> list[tuple]:
    """The same fields from a DuckDB query over ``relation``."""
    rows = con.execute(
        f"SELECT file, pos, epoch(ts)::BIGINT, server_id, gtid, db, \"table\", op, before, after, "
        f"\"row\", pk, \"commit\", xid, end_pos, types FROM {relation} WHERE op <> 'error'").fetchall()
    from datetime import datetime, timezone

    return sorted(((f, p, datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), s, g,
                    _null(d), _null(t_), o, _image(b), _image(a)) + _cdc(*cdc)
                   for f, p, t, s, g, d, t_, o, b, a, *cdc in rows), key=repr)


def _null(value):
    """DuckDB's hive_partitioning gives a null partition value (a DDL without a table, a
    statement without a default database) as the directory name Spark and Delta write."""
    return None if value == "__HIVE_DEFAULT_PARTITION__" else value


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("binlogs")
    for name in FILES:
        shutil.copy(SAMPLES / name, directory / name)
    return directory


@pytest.fixture(scope="module")
def want(src) -> list[tuple]:
    return dump_keys([src / name for name in FILES])


def test_duckdb_over_changes_parquet_equals_dump(src, tmp_path):
    """Every field of dump's records, the CDC fields with --with-types too."""
    out = tmp_path / "lake"
    assert ingest(src, "--to", out, "--with-types") == 0
    con = duckdb.connect()
    relation = f"read_parquet('{out}/changes/**/*.parquet', hive_partitioning = true)"
    want = dump_keys([src / name for name in FILES], "--with-types")
    assert any(k[-6] is not None and k[-1] for k in want)      # rows with types and an index
    assert query_keys(con, relation) == want
    assert con.execute(f"SELECT DISTINCT run FROM {relation}").fetchall() == [(1,)]


def test_delta_tables_read_by_deltalake_and_duckdb_equal_dump(src, want, tmp_path):
    from deltalake import DeltaTable

    out = tmp_path / "delta"
    assert ingest(src, "--to", out, "--format", "delta") == 0
    assert not (out / "_staging").exists()
    changes = DeltaTable(str(out / "changes"))
    con = duckdb.connect()
    # DuckDB over the snapshot deltalake resolves from _delta_log (as an Arrow dataset), and
    # over the Parquet files that snapshot names
    con.register("changes_delta", changes.to_pyarrow_dataset())
    assert query_keys(con, "changes_delta") == want
    files = "[" + ", ".join(f"'{uri}'" for uri in changes.file_uris()) + "]"
    assert query_keys(con, f"read_parquet({files}, hive_partitioning = true)") == want

    # the typed tables hold what the Parquet output's do (that one is checked against Spark)
    parquet = tmp_path / "parquet"
    assert ingest(src, "--to", parquet) == 0
    names = sorted(p.name for p in (parquet / "tables").iterdir())
    assert names == sorted(p.name for p in (out / "tables").iterdir())
    import pyarrow.dataset as ds

    for name in names:
        delta_rows = DeltaTable(str(out / "tables" / name)).to_pyarrow_table().to_pylist()
        parquet_rows = ds.dataset(str(parquet / "tables" / name), format="parquet", ignore_prefixes=["."],
                                  partitioning="hive").to_table().to_pylist()
        for row in parquet_rows:
            row["_run"] = int(row["_run"])
        assert sorted(map(repr, delta_rows)) == sorted(map(repr, parquet_rows)), name


def test_delta_incremental_run_and_a_run_that_did_not_commit(src, want, tmp_path):
    """Run 2 appends only the new file; a run that stopped after publishing its rows but
    before the checkpoint's commit (here: the checkpoint cannot be written) is undone by
    the next run: no row twice."""
    from deltalake import DeltaTable

    inbox = tmp_path / "binlogs"
    inbox.mkdir()
    for name in FILES[:2]:
        shutil.copy(src / name, inbox / name)
    out = tmp_path / "delta"
    assert ingest(inbox, "--to", out, "--format", "delta") == 0
    shutil.copy(src / FILES[2], inbox / FILES[2])
    runs = out / "_checkpoint" / "runs"
    shutil.rmtree(runs)
    runs.write_text("not a directory")                 # the commit of run 2 fails
    failed = subprocess.run([sys.executable, "-m", "binlog.cli", "ingest", "--no-progress", str(inbox),
                             "--to", str(out), "--format", "delta"], capture_output=True, text=True)
    assert failed.returncode == 1 and "cannot write" in failed.stderr, failed.stderr
    assert (out / "_checkpoint" / "inflight.json").exists()
    assert {r["run"] for r in DeltaTable(str(out / "changes")).to_pyarrow_table(columns=["run"]).to_pylist()} == {1, 2}
    runs.unlink()
    assert ingest(inbox, "--to", out, "--format", "delta") == 0
    con = duckdb.connect()
    con.register("changes_delta", DeltaTable(str(out / "changes")).to_pyarrow_dataset())
    assert query_keys(con, "changes_delta") == want
    runs_of = dict(con.execute("SELECT file, min(run) FROM changes_delta GROUP BY file").fetchall())
    assert runs_of == {FILES[0]: 1, FILES[1]: 1, FILES[2]: 2}


def test_format_delta_needs_the_local_engine(src, tmp_path):
    assert ingest(src, "--to", tmp_path / "o", "--format", "delta", "--engine", "spark") == 2
