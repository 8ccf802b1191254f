"""Gaps between binlogs in `binlog ingest` (both engines, parquet and delta) and the Spark data
source: a binlog missing from the middle of a set is an error naming it and the GTIDs it
held (exit 1, nothing written), or with --allow-gaps / option ``allowGaps`` a warning.

Binlogs 5, 6, 7 of a real mariadbd hold one insert each (FLUSH BINARY LOGS between them);
the inputs hold only 5 and 7.  Names and GTIDs come from the server (SHOW MASTER STATUS,
@@gtid_binlog_pos after each insert)."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset as ds

from binlog.cli import main
from binlog.errors import GapError

pytestmark = [pytest.mark.server, pytest.mark.spark]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    from support.gaps import gap_chain

    return gap_chain(tmp_path_factory, (5, 6, 7), first=5)


def ingest(*args) -> int:
    return main(["ingest", "--no-progress", *map(str, args)])


def ids(out) -> list[int]:
    import json

    data = ds.dataset(str(out / "changes"), format="parquet", partitioning="hive")
    rows = data.to_table(columns=["op", "after"]).to_pylist()
    return sorted(json.loads(r["after"])["id"] for r in rows if r["op"] == "insert")


def assert_gap_error(chain, err: str, *, gtid: bool = True):
    names, gtids = chain["names"], chain["gtids"]
    assert names[1] in err and "--allow-gaps" in err, err
    if gtid:
        assert f"GTID(s) {gtids[1]} " in err, err


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
@pytest.mark.parametrize("which", ["gap", "noindex"])
def test_local_ingest_stops_at_the_gap(chain, tmp_path, capsys, fmt, which):
    if fmt == "delta":
        pytest.importorskip("deltalake")
    out = tmp_path / "out"
    assert ingest(chain[which], "--to", out, "--format", fmt) == 1
    assert_gap_error(chain, capsys.readouterr().err, gtid=which == "noindex")
    assert not (out / "changes").exists() and not (out / "_checkpoint" / "state.json").exists()


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_local_ingest_allow_gaps_reads_on(chain, tmp_path, capsys, fmt):
    if fmt == "delta":
        pytest.importorskip("deltalake")
    for which in ("gap", "noindex"):
        out = tmp_path / which
        assert ingest(chain[which], "--to", out, "--format", fmt, "--allow-gaps") == 0
        err = capsys.readouterr().err
        assert "warning" in err and chain["names"][1] in err, err
        if fmt == "parquet":
            assert ids(out) == [5, 7]
        else:
            from deltalake import DeltaTable

            rows = DeltaTable(str(out / "changes")).to_pyarrow_table().to_pylist()
            assert sorted(r["after"] for r in rows if r["op"] == "insert") == ['{"id":5}', '{"id":7}']


def test_no_gap_ingests_everything(chain, tmp_path):
    assert ingest(chain["full"], "--to", tmp_path / "out") == 0
    assert ids(tmp_path / "out") == [5, 6, 7]


def test_a_gap_between_runs(chain, tmp_path, capsys):
    # run 1 ingests binlog 5; binlog 7 arrives without 6: run 2 names 6 and its GTID
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    names = chain["names"]
    shutil.copy(chain["full"] / names[0], src / names[0])
    assert ingest(src, "--to", out) == 0
    shutil.copy(chain["full"] / names[2], src / names[2])
    assert ingest(src, "--to", out) == 1
    assert_gap_error(chain, capsys.readouterr().err)
    assert ids(out) == [5]
    shutil.copy(chain["full"] / names[1], src / names[1])
    assert ingest(src, "--to", out) == 0
    assert ids(out) == [5, 6, 7]


def test_spark_engine_stops_at_the_gap(chain, spark, tmp_path, capsys):
    out = tmp_path / "out"
    assert ingest(chain["noindex"], "--to", out, "--engine", "spark", "--master", "local[2]") == 1
    assert_gap_error(chain, capsys.readouterr().err)
    assert not (out / "changes").exists()


def test_data_source_and_read_binlog(chain, spark):
    from spark_ingest import read_binlog, register

    register(spark)
    with pytest.raises(GapError) as raised:
        read_binlog(spark, chain["noindex"])
    assert_gap_error(chain, str(raised.value))
    with pytest.raises(Exception) as raised:
        spark.read.format("binlog").load(str(chain["gap"])).count()
    assert chain["names"][1] in str(raised.value)
    df = spark.read.format("binlog").option("allowGaps", "true").load(str(chain["noindex"]))
    assert sorted(r.after for r in df.where("op = 'insert'").collect()) == ['{"id":5}', '{"id":7}']
    read = read_binlog(spark, chain["gap"], allow_gaps=True)
    assert read.changes.where("op = 'insert'").count() == 2
