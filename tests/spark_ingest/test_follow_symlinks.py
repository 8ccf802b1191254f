"""`binlog ingest --follow-symlinks` searches symlinked directories (off
by default), each directory once and each file once, so a symlink loop ends where it
comes back.  The binlogs are real server binlogs of the sample corpus; the expected
records are those `binlog dump` prints for each file."""
from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset as ds
from spark_helpers import SAMPLES, dump_records

from binlog.cli import main
from binlog.sources.file import discover

pytestmark = pytest.mark.spark


@pytest.fixture
def tree(tmp_path):
    """root/a/x.binlog, root/a/loop -> root, root/b -> root/a, root/ext -> outside/
    (outside/y.binlog: reachable only through the link)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    shutil.copy(SAMPLES / "types_full.binlog", root / "a" / "x.binlog")
    shutil.copy(SAMPLES / "signedness.binlog", outside / "y.binlog")
    (root / "a" / "loop").symlink_to(root)
    (root / "b").symlink_to(root / "a")
    (root / "ext").symlink_to(outside)
    return root, outside


def ingest(*args) -> int:
    return main(["ingest", "--no-progress", "--no-tables", *map(str, args)])


def change_count(out) -> int:
    return ds.dataset(str(out / "changes"), format="parquet", partitioning="hive").count_rows()


def test_discover_follows_each_directory_once(tree):
    root, outside = tree
    warnings: list[str] = []
    files = [f for _, fs in discover([root], on_warning=warnings.append, follow_symlinks=True)
             for f in fs]
    assert sorted(files) == sorted([str(root / "a" / "x.binlog"), str(outside / "y.binlog")])
    assert any("already searched" in w for w in warnings), warnings


def test_ingest_default_does_not_follow(tree, tmp_path, capsys):
    root, _ = tree
    out = tmp_path / "out"
    assert ingest(root, "--to", out) == 0
    assert "not followed" in capsys.readouterr().err
    assert change_count(out) == len(dump_records([root / "a" / "x.binlog"]))


def test_ingest_follow_symlinks_reads_each_file_once(tree, tmp_path):
    root, outside = tree
    out = tmp_path / "out"
    assert ingest(root, "--to", out, "--follow-symlinks") == 0
    want = len(dump_records([root / "a" / "x.binlog"])) + len(dump_records([outside / "y.binlog"]))
    assert change_count(out) == want
    state = json.loads((out / "_checkpoint" / "state.json").read_text())
    assert sorted(state["files"]) == sorted([str(root / "a" / "x.binlog"), str(outside / "y.binlog")])
    assert ingest(root, "--to", out, "--follow-symlinks") == 0          # a rerun: nothing new
    assert json.loads((out / "_checkpoint" / "state.json").read_text())["runs"] == 1
    assert change_count(out) == want
