"""`binlog ingest --reprocess-errors` / `--reprocess NAME[..NAME]` ingest
files again, replacing their earlier output exactly, on both engines and with Delta.

A real mariadbd with mysql56_temporal_format=OFF writes legacy DATETIME/TIME columns;
without a schema their rows go to errors/ (exit 3).  Rerun with the server's own schema
dump and --reprocess-errors: exit 0, the rows equal the server's CAST AS CHAR values, no
row twice (DuckDB over changes/ and tables/), errors/ empty for those files.  A crash
before the reprocessing run commits leaves the earlier output as it was; a crash while
it removes the earlier rows is finished by the next run."""
from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

from binlog.cli import main

pytestmark = [pytest.mark.server, pytest.mark.spark]
CON = duckdb.connect()          # (a relation needs its connection alive)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    from support.mariadb_server import MariaDBServer

    srv = MariaDBServer({"mysql56_temporal_format": "OFF"}).start()
    try:
        srv.execute("CREATE DATABASE r")
        srv.execute("CREATE TABLE r.t (id INT PRIMARY KEY, dt DATETIME(3), tm TIME(2))")
        srv.execute("CREATE TABLE r.p (id INT PRIMARY KEY, v VARCHAR(10))")
        srv.flush_logs()                    # the binlogs start after the CREATEs
        names = []
        for first in (1, 4):
            names.append(srv.master_status()[0])
            for i in range(first, first + 3):
                srv.execute(f"INSERT INTO r.t VALUES ({i}, '2020-02-29 12:34:5{i}.{i}{i}{i}', '-01:02:0{i}.{i}{i}')")
                srv.execute(f"INSERT INTO r.p VALUES ({i}, 'v{i}')")
            srv.flush_logs()
        src = tmp_path_factory.mktemp("src")
        for name in names:
            srv.copy_binlog(name, src / name)
        schema = src.parent / "schema.sql"
        schema.write_text(srv.dump_schema(["r"]))
        want = {r[0]: {"id": r[0], "dt": r[1], "tm": r[2]} for r in
                srv.query("SELECT id, CAST(dt AS CHAR), CAST(tm AS CHAR) FROM r.t")}
        yield {"src": src, "names": names, "schema": schema, "want": want}
    finally:
        srv.cleanup()


def ingest(*args) -> int:
    return main(["ingest", "--no-progress", *map(str, args)])


def parquet(con, path, where=""):
    return con.sql(f"SELECT * FROM read_parquet('{path}/**/*.parquet', hive_partitioning = true) {where}")


def changes(out, fmt="parquet") -> list[dict]:
    con = CON
    if fmt == "delta":
        from deltalake import DeltaTable

        rel = con.from_arrow(DeltaTable(str(out / "changes")).to_pyarrow_table())
    else:
        rel = parquet(con, out / "changes")
    cols = ["file", "pos", "table", "op", "after"]          # (no ts: DuckDB would need pytz)
    return [dict(zip(cols, row, strict=True)) for row in rel.select(", ".join(f'"{c}"' for c in cols)).fetchall()]


def error_files(out, fmt="parquet") -> list[str]:
    errors = out / "errors"
    if fmt == "delta":
        from deltalake import DeltaTable

        return [r["file"] for r in DeltaTable(str(errors)).to_pyarrow_table().to_pylist()] if errors.exists() else []
    if not list(errors.rglob("*.parquet")):
        return []
    return [r[0] for r in parquet(CON, errors).select("file").fetchall()]


def check_exact(legacy, out, fmt="parquet"):
    rows = [r for r in changes(out, fmt) if r["op"] == "insert"]
    keys = [(r["file"], r["pos"], r["after"]) for r in rows]
    assert len(keys) == len(set(keys)) == 12                      # no row twice
    t = {json.loads(r["after"])["id"]: json.loads(r["after"]) for r in rows if r["table"] == "t"}
    assert t == legacy["want"]
    assert error_files(out, fmt) == []
    if fmt == "parquet":
        con = CON
        for table, n in (("r.t", 6), ("r.p", 6)):
            got = parquet(con, out / "tables" / table).select("_file, _pos, id").fetchall()
            assert len(got) == len(set(got)) == n, table


def first_run(legacy, out, *extra):
    assert ingest(legacy["src"], "--to", out, *extra) == 3
    assert sorted(set(error_files(out, "delta" if "delta" in extra else "parquet"))) == legacy["names"]


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_reprocess_errors_replaces_the_output(legacy, tmp_path, fmt):
    if fmt == "delta":
        pytest.importorskip("deltalake")
    out = tmp_path / "out"
    first_run(legacy, out, "--format", fmt)
    assert ingest(legacy["src"], "--to", out, "--format", fmt) == 0        # nothing new
    assert ingest(legacy["src"], "--to", out, "--format", fmt, "--reprocess-errors",
                  "--schema-ddl", legacy["schema"]) == 0
    check_exact(legacy, out, fmt)
    state = json.loads((out / "_checkpoint" / "state.json").read_text())
    assert state["runs"] == 2 and "replacing" not in state
    assert sorted(e["name"] for e in state["files"].values()) == legacy["names"]
    assert ingest(legacy["src"], "--to", out, "--format", fmt) == 0        # nothing new again
    assert json.loads((out / "_checkpoint" / "state.json").read_text())["runs"] == 2


def test_reprocess_a_file_range(legacy, tmp_path):
    out = tmp_path / "out"
    first, second = legacy["names"]
    first_run(legacy, out)
    assert ingest(legacy["src"], "--to", out, "--reprocess", first, "--schema-ddl", legacy["schema"]) == 0
    assert sorted(set(error_files(out))) == [second]
    rows = [r for r in changes(out) if r["op"] == "insert"]
    assert len(rows) == len({(r["file"], r["pos"], r["after"]) for r in rows}) == 9
    assert ingest(legacy["src"], "--to", out, "--reprocess", f"{first}..{second}",
                  "--schema-ddl", legacy["schema"]) == 0
    check_exact(legacy, out)
    assert ingest(legacy["src"], "--to", out, "--reprocess", "nosuch.000001") == 2


def test_crash_before_the_commit_leaves_the_earlier_output(legacy, tmp_path, monkeypatch):
    import spark_ingest.ingest as job

    out = tmp_path / "out"
    first_run(legacy, out)
    before = sorted(map(repr, changes(out)))

    def crash(*args, **kwargs):
        raise KeyboardInterrupt        # the process dies after the tasks wrote run 2
    monkeypatch.setattr(job, "commit_run", crash)
    import spark_ingest.local as local
    monkeypatch.setattr(local, "commit_run", crash)
    assert ingest(legacy["src"], "--to", out, "--reprocess-errors", "--schema-ddl", legacy["schema"]) == 130
    assert (out / "_checkpoint" / "inflight.json").exists()
    monkeypatch.undo()
    assert ingest(legacy["src"], "--to", out) == 0          # removes run 2's partial output
    assert sorted(map(repr, changes(out))) == before
    assert sorted(set(error_files(out))) == legacy["names"]
    assert ingest(legacy["src"], "--to", out, "--reprocess-errors", "--schema-ddl", legacy["schema"]) == 0
    check_exact(legacy, out)


def test_crash_while_removing_is_finished_by_the_next_run(legacy, tmp_path, monkeypatch):
    import spark_ingest.reprocess as reprocess

    out = tmp_path / "out"
    first_run(legacy, out)
    real = reprocess._rewrite_parquet
    calls = []

    def crash_after_one(*args):
        if calls:
            raise KeyboardInterrupt    # changes/ done, the rest not yet
        calls.append(real(*args))
        return calls[-1]
    monkeypatch.setattr(reprocess, "_rewrite_parquet", crash_after_one)
    assert ingest(legacy["src"], "--to", out, "--reprocess-errors", "--schema-ddl", legacy["schema"]) == 130
    assert json.loads((out / "_checkpoint" / "state.json").read_text())["replacing"]["run"] == 2
    monkeypatch.undo()
    assert ingest(legacy["src"], "--to", out) == 0
    check_exact(legacy, out)


def test_spark_engine(legacy, spark, tmp_path):
    out = tmp_path / "out"
    spark_args = ("--engine", "spark", "--master", "local[2]")
    first_run(legacy, out, *spark_args)
    # Spark's files of run 1 hold rows of both binlogs: rewritten without the first's
    assert ingest(legacy["src"], "--to", out, *spark_args, "--reprocess", legacy["names"][0],
                  "--schema-ddl", legacy["schema"]) == 0
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    # (run 1 had no schema: its r.p columns are @1, @2; run 2's are id, v)
    got = spark.read.option("mergeSchema", "true").parquet(str(out / "tables" / "r.p")).collect()
    assert sorted((r["_file"], r["_run"]) for r in got) == sorted(
        [(legacy["names"][0], "2")] * 3 + [(legacy["names"][1], "1")] * 3)
    assert all(r["_ts"] is not None for r in got)          # the rewritten INT96 timestamps
    assert ingest(legacy["src"], "--to", out, *spark_args, "--reprocess-errors",
                  "--schema-ddl", legacy["schema"]) == 0
    check_exact(legacy, out)
    assert spark.read.parquet(str(out / "tables" / "r.t")).count() == 6
    shutil.rmtree(out)
