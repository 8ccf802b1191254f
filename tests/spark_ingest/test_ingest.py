"""`binlog ingest`: Parquet layout, incremental reruns, corrupt input."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import json
import shutil
from pathlib import Path

from spark_helpers import SAMPLES, dump_records, record_key, row_key
from support.paths import write_index

from binlog.cli import main
from spark_ingest.prescan import scan_file

pytestmark = pytest.mark.spark

MISC = SAMPLES / "events_misc"


@pytest.fixture(params=["spark", "local"])
def ingest(request):
    """`binlog ingest` on each engine: the same tests hold for both."""
    def run(*args) -> int:
        return main(["ingest", "--no-progress", "--engine", request.param, *map(str, args)])
    return run


def changes(spark, out: Path):
    df = spark.read.option("basePath", str(out / "changes")).parquet(str(out / "changes"))
    rows = df.where("op != 'error'").collect()
    return rows


def state(out: Path) -> dict:
    return json.loads((out / "_checkpoint" / "state.json").read_text())


def test_ingest_layout_and_incremental_reruns(spark, ingest, tmp_path):
    src = tmp_path / "binlogs"
    src.mkdir()
    names = sorted(p.name for p in MISC.glob("mariadb-bin.0*"))
    for name in names[:2]:
        shutil.copy(MISC / name, src / name)
    write_index(src, names[:2])
    out = tmp_path / "out"
    assert ingest(src, "--to", out) == 0
    assert (out / "changes" / "run=1").is_dir() and (out / "_checkpoint" / "state.json").exists()
    assert not (out / "errors").exists()
    tables = sorted(p.name for p in (out / "tables").iterdir())
    assert "em.big" in tables
    first = changes(spark, out)
    want = [record_key(r) for r in dump_records([src / n for n in names[:2]])]
    assert sorted((row_key(r) for r in first), key=repr) == sorted(want, key=repr)

    # nothing new: no second run at all
    assert ingest(src, "--to", out) == 0
    assert state(out)["runs"] == 1

    # a new file in the index: only it is read
    shutil.copy(MISC / names[2], src / names[2])
    write_index(src, names)
    assert ingest(src, "--to", out) == 0
    st = state(out)
    assert st["runs"] == 2
    assert {v["run"] for k, v in st["files"].items() if k.endswith(names[2])} == {2}
    assert {v["run"] for k, v in st["files"].items() if not k.endswith(names[2])} == {1}
    rows = changes(spark, out)
    want = [record_key(r) for r in dump_records([src / n for n in names])]
    assert sorted((row_key(r) for r in rows), key=repr) == sorted(want, key=repr)
    assert all(int(r.run) == 2 for r in rows if r.file == names[2])
    typed = spark.read.option("mergeSchema", "true").parquet(str(out / "tables" / "em.big"))
    assert typed.count() == sum(1 for r in rows if r.db == "em" and r.table == "big" and r.op in ("insert", "update", "delete"))


def test_a_growing_file_is_picked_up_where_it_stopped(spark, ingest, tmp_path):
    full = (SAMPLES / "types_full.binlog").read_bytes()
    scan = scan_file(SAMPLES / "types_full.binlog")
    cut = scan.boundaries[len(scan.boundaries) // 2] + 40       # inside a transaction
    src = tmp_path / "binlogs"
    src.mkdir()
    path = src / "mariadb-bin.000001"
    path.write_bytes(full[:cut])
    out = tmp_path / "out"
    assert ingest(src, "--to", out, "--no-tables") == 0
    entry = next(iter(state(out)["files"].values()))
    assert not entry["closed"] and entry["end"] < cut and entry["end"] in scan.boundaries
    path.write_bytes(full)                                       # the server wrote on
    assert ingest(src, "--to", out, "--no-tables") == 0
    assert ingest(src, "--to", out, "--no-tables") == 0          # closed now: nothing new
    assert state(out)["runs"] == 2
    rows = changes(spark, out)
    want = [record_key(r) for r in dump_records([SAMPLES / "types_full.binlog"])]
    got = [row_key(r)[1:] for r in sorted(rows, key=lambda r: (r.pos, r.run))]
    assert sorted(got, key=repr) == sorted((w[1:] for w in want), key=repr)   # none lost, none twice
    assert {int(r.run) for r in rows} == {1, 2}


def _corrupt_copy(src: Path, dest: Path) -> int:
    """Flip bytes inside the body of a rows event in the middle of the file: its CRC32
    fails.  Returns the event's offset."""
    data = bytearray(src.read_bytes())
    from binlog.events import RowsEvent
    from binlog.reader import BinlogReader

    offsets = [i.event.offset for i in BinlogReader([src]).items()
               if hasattr(i, "event") and isinstance(i.event, RowsEvent)]
    target = offsets[len(offsets) // 2]
    for k in range(30, 34):
        data[target + k] ^= 0xFF
    dest.write_bytes(bytes(data))
    return target


def test_corrupt_file_is_reported_and_skipped(spark, ingest, tmp_path):
    src = tmp_path / "binlogs"
    src.mkdir()
    shutil.copy(SAMPLES / "compressed.binlog", src / "a.binlog")
    bad = _corrupt_copy(SAMPLES / "types_full.binlog", src / "b.binlog")
    (src / "c.binlog").write_bytes(b"this is no binlog at all" * 10)
    out = tmp_path / "out"
    assert ingest(src, "--to", out, "--on-error", "skip", "--no-tables") == 3   # errors/
    errors = spark.read.parquet(str(out / "errors")).collect()
    by_file = {e.file: e for e in errors}
    assert by_file["b.binlog"].pos == bad and by_file["b.binlog"].error == "ChecksumMismatchError"
    assert "c.binlog" in by_file
    rows = changes(spark, out)
    assert sorted((row_key(r) for r in rows if r.file == "a.binlog"), key=repr) == sorted(
        (record_key(r) for r in dump_records([src / "a.binlog"])), key=repr)
    good_b = [r for r in rows if r.file == "b.binlog"]
    assert good_b and all(r.pos != bad for r in good_b)
    # the same with --on-error fail: exit 1, nothing committed
    out2 = tmp_path / "out2"
    assert ingest(src, "--to", out2, "--on-error", "fail", "--no-tables") == 1
    assert not (out2 / "_checkpoint" / "state.json").exists()


@pytest.mark.parametrize("master, conf, want", [
    ("local[3]", {}, 3), ("local", {}, 1), ("local[2,4]", {}, 2), ("local[4]", {"spark.default.parallelism": "7"}, 7),
    ("spark://host:7077", {}, None), ("yarn", {}, None), ("local-cluster[2,1,1024]", {}, None)])
def test_parallelism_known_before_spark_starts(master, conf, want):
    from spark_ingest.ingest import local_parallelism

    assert local_parallelism(master, conf) == want


def test_parallelism_of_local_star_is_what_spark_says(spark):
    from spark_ingest.ingest import local_parallelism

    # local[*] runs as many threads as the JVM's availableProcessors()
    jvm_cpus = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().availableProcessors()
    assert local_parallelism("local[*]", {}) == jvm_cpus
