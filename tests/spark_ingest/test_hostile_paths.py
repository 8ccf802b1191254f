"""`binlog ingest` with database and table names chosen by an attacker:
nothing is written outside --to, and names that differ never share a directory."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from pathlib import Path

from hostile.build import TABLE_MAP, WRITE_ROWS_V1, XID, binlog, table_map, write_rows

from binlog.cli import main
from binlog.output.paths import UnsafePathError, component, inside, table_dir_name

pytestmark = pytest.mark.spark


def _int_rows(table_id: int, db: str, table: str, values) -> list:
    """TABLE_MAP of one INT column, then one WRITE_ROWS event with ``values`` and an XID."""
    rows = b"".join(b"\x00" + v.to_bytes(4, "little") for v in values)
    return [(TABLE_MAP, table_map(table_id, db, table, bytes([3]), b"")),
            (WRITE_ROWS_V1, write_rows(table_id, 1, b"\x01", rows)),
            (XID, (7).to_bytes(8, "little"))]


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


def test_hostile_names_stay_under_to_and_never_collide(spark, tmp_path):
    src = tmp_path / "binlogs"
    src.mkdir()
    names = [
        ("x", "/../../../escaped"),        # tables/x./../../../escaped: tmp_path/escaped
        (str(tmp_path / "abs"), "t"),      # an absolute path as the database
        ("..", ".."),
        ("a.b", "c"), ("a", "b.c"),        # `a.b`.`c` and `a`.`b.c`: one "a.b.c" before
        ("n\x00ul", "t\x00"),              # NUL cannot be in a path at all
        ("d", "back\\slash%2F~"),
    ]
    events = []
    for i, (db, table) in enumerate(names):
        events += _int_rows(100 + i, db, table, range(i + 1))
    (src / "mariadb-bin.000001").write_bytes(binlog(events))
    out = tmp_path / "out"
    before = _files(tmp_path) - _files(out)

    assert main(["ingest", "--no-progress", str(src), "--to", str(out)]) == 0

    outside = _files(tmp_path) - _files(out) - before - {str(out)}
    assert outside == set(), outside
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "abs.t").exists()
    tables = out / "tables"
    dirs = {p.name for p in tables.iterdir()}
    assert dirs == {table_dir_name(db, table) for db, table in names}
    assert len(dirs) == len(names)
    for d in dirs:
        assert d not in (".", "..") and "/" not in d and "\x00" not in d and not d.startswith(".")
    # each table's typed rows went to its own directory: i + 1 rows for the i-th name
    for i, (db, table) in enumerate(names):
        typed = spark.read.parquet(str(tables / table_dir_name(db, table)))
        assert typed.count() == i + 1, (db, table)
    # the change records keep the names exactly (Spark reads the escaped partition values back)
    df = spark.read.option("basePath", str(out / "changes")).parquet(str(out / "changes"))
    got = sorted((r.db, r.table) for r in df.select("db", "table").distinct().collect())
    assert got == sorted(names)


@pytest.mark.parametrize("name", ["", ".", "..", "/", "a/b", "\x00", "~", "%", "a" * 300,
                                  "é" * 200, "\udc80", "\n", "\\"])
def test_a_component_is_one_plain_path_element(name):
    c = component(name)
    assert c not in ("", ".", "..") and not c.startswith(".")
    assert "/" not in c and "\\" not in c and "\x00" not in c and "\n" not in c
    assert len(c.encode("utf-8")) <= 255


def test_components_are_one_to_one():
    names = ["", "%", "%25", "a.b", "a%2Eb", "~", "%7E", "a" * 300, "a" * 301, "é", "%C3%A9"]
    assert len({component(n) for n in names}) == len(names)
    pairs = [("a.b", "c"), ("a", "b.c"), ("a", "b%2Ec"), ("", "a"), ("a", ""),
             ("é" * 60, "x" * 200), ("é" * 60, "x" * 201), ("a" * 300, "b"), ("a" * 300, "c")]
    assert len({table_dir_name(*p) for p in pairs}) == len(pairs)
    assert all(len(table_dir_name(*p).encode()) <= 255 for p in pairs)


def test_inside_refuses_a_path_that_resolves_elsewhere(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    assert inside(root, root / "a" / "b") == root / "a" / "b"
    for bad in (root / ".." / "x", root / "link" / "x", Path("/etc")):
        with pytest.raises(UnsafePathError):
            inside(root, bad)


def test_discovery_follows_no_directory_symlink_and_reads_no_file_twice(tmp_path):
    from spark_helpers import SAMPLES

    from binlog.sources.file import discover

    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "x.binlog").write_bytes((SAMPLES / "types_full.binlog").read_bytes())
    (root / "loop").symlink_to(root)                       # a loop: root/loop/loop/...
    (root / "sub" / "y.binlog").symlink_to(root / "x.binlog")
    warnings = []
    groups = discover([root, root / "x.binlog"], on_warning=warnings.append)
    files = [f for _, fs in groups for f in fs]
    assert len(files) == 1 and Path(files[0]).resolve() == (root / "x.binlog").resolve()
    assert any("loop" in w and "not followed" in w for w in warnings)
    assert any("read once" in w for w in warnings)


def test_ingest_reads_a_symlink_loop_once(spark, tmp_path):
    from spark_helpers import SAMPLES, dump_records

    src = tmp_path / "src"
    src.mkdir()
    (src / "x.binlog").write_bytes((SAMPLES / "types_full.binlog").read_bytes())
    (src / "again").symlink_to(src)
    out = tmp_path / "out"
    assert main(["ingest", "--no-progress", "--no-tables", str(src), "--to", str(out)]) == 0
    df = spark.read.option("basePath", str(out / "changes")).parquet(str(out / "changes"))
    assert df.count() == len(dump_records([src / "x.binlog"]))
