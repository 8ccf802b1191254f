"""``--format delta``'s publishing step: the tasks' Parquet files committed to the Delta
tables as they are (add actions, no rewrite), and ``write_deltalake``'s schema merge
when their columns differ from the table's (ALTER TABLE between runs).  The rows read
back by ``deltalake`` are the rows the staged files hold."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
deltalake = pytest.importorskip("deltalake")

import pyarrow as pa
import pyarrow.parquet as pq

from spark_ingest.delta import publish_changes, publish_tables, staging_dir


def _stage(out: Path, run: int, relative: str, table: pa.Table) -> Path:
    path = staging_dir(out, run) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def _rows(path: Path) -> list:
    from deltalake import DeltaTable

    return sorted(map(repr, DeltaTable(str(path)).to_pyarrow_table().to_pylist()))


def test_staged_files_are_committed_as_they_are(tmp_path):
    out = tmp_path / "lake"
    first = pa.table({"file": ["f.1", "f.1"], "pos": [4, 9]})
    second = pa.table({"file": ["f.1"], "pos": [20]})
    staged = [_stage(out, 1, "changes/db=shop/table=a%2Fb/date=2024-02-29/part-00000-0.parquet", first),
              _stage(out, 1, "changes/db=shop/table=t/date=__HIVE_DEFAULT_PARTITION__/part-00000-1.parquet",
                     second)]
    sizes = sorted(p.stat().st_size for p in staged)
    publish_changes(out, 1, "zstd")
    from deltalake import DeltaTable

    table = DeltaTable(str(out / "changes"))
    # moved, not rewritten: the same files, each under its partitions' directories
    assert sorted(Path(uri).stat().st_size for uri in table.file_uris()) == sizes
    assert all("/run=1/db=shop/table=" in uri for uri in table.file_uris())
    assert not any(p.exists() for p in staged)
    assert _rows(out / "changes") == sorted(map(repr, [
        {"file": "f.1", "pos": 4, "db": "shop", "table": "a/b", "date": "2024-02-29", "run": 1},
        {"file": "f.1", "pos": 9, "db": "shop", "table": "a/b", "date": "2024-02-29", "run": 1},
        {"file": "f.1", "pos": 20, "db": "shop", "table": "t", "date": None, "run": 1}]))
    assert table.metadata().partition_columns == ["run", "db", "table", "date"]
    actions = pa.table(table.get_add_actions(flatten=True))
    assert sorted(actions.column("num_records").to_pylist()) == [1, 2]


def test_a_table_whose_columns_changed_is_merged(tmp_path):
    out = tmp_path / "lake"
    _stage(out, 1, "tables/shop.t/_run=1/_date=2024-01-01/part-00000-0.parquet", pa.table({"id": [1, 2]}))
    publish_tables(out, 1, "zstd")
    # run 2: the table has a column more (ALTER TABLE), in one of its two files
    _stage(out, 2, "tables/shop.t/_run=2/_date=2024-01-02/part-00000-0.parquet",
           pa.table({"id": [3], "extra": ["x"]}))
    _stage(out, 2, "tables/shop.t/_run=2/_date=2024-01-03/part-00000-1.parquet", pa.table({"id": [4]}))
    publish_tables(out, 2, "snappy")
    rows = _rows(out / "tables" / "shop.t")
    assert len(rows) == 4
    # written by deltalake's schema merge, with the run's codec
    merged = [p for p in (out / "tables" / "shop.t").rglob("*.parquet") if "_run=2" in str(p)]
    assert merged and {pq.read_metadata(p).row_group(0).column(0).compression for p in merged} == {"SNAPPY"}
    assert repr({"id": 3, "_run": 2, "_date": "2024-01-02", "extra": "x"}) in rows \
        or repr({"id": 3, "extra": "x", "_run": 2, "_date": "2024-01-02"}) in rows
    # run 3: appended to the merged table
    _stage(out, 3, "tables/shop.t/_run=3/_date=2024-01-04/part-00000-0.parquet",
           pa.table({"id": [5], "extra": [None]}, schema=pa.schema([("id", pa.int64()), ("extra", pa.string())])))
    publish_tables(out, 3, "zstd")
    assert len(_rows(out / "tables" / "shop.t")) == 5
