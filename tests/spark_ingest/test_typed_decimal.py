"""DECIMAL columns of ``binlog ingest``'s typed tables: the compiled walk reads a
DECIMAL's bytes straight into the unscaled integer of ``decimal128`` (no text), so its
edge values are checked here against the server: the largest and smallest of each
precision, negative fractions, zero in every scale, values of a precision past 38 (typed
as text), events of more rows than a column's buffers are reserved for at once, with
NULLs, updates and deletes.  Expected values: the server's ``CAST(col AS CHAR)``; the
lake of the compiled walk and the lake of the Python way (``BINLOG_PURE=1``) hold the
same rows.  With a schema that gives the columns fewer integer digits than the binlog's,
the values that do not fit are NULL (Spark's ``try_cast``) the compiled way as well."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from support.paths import REPO

pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.server

# (column, type): full 9-digit groups, partial groups at either end, no integer part,
# the widest decimal128 (38) and one past it (a string column)
COLUMNS = [("d1", "DECIMAL(1,0)"), ("d5", "DECIMAL(5,5)"), ("d12", "DECIMAL(12,2)"),
           ("d18", "DECIMAL(18,9)"), ("d20", "DECIMAL(20,0)"), ("d30", "DECIMAL(30,10)"),
           ("d38", "DECIMAL(38,0)"), ("d38s", "DECIMAL(38,30)"), ("d40", "DECIMAL(40,2)")]
# the narrower schema's columns: the binlog's values past their integer digits are NULL
NARROW = {"d12": "decimal(5,2)", "d18": "decimal(12,9)", "d38": "decimal(20,0)"}


def edges(kind: str) -> list[str]:
    precision, scale = (int(x) for x in kind[8:-1].split(","))
    ints, frac = "9" * (precision - scale), "9" * scale
    big = (ints or "0") + ("." + frac if scale else "")
    tiny = "0." + "0" * (scale - 1) + "1" if scale else "1"
    zero = "0" + ("." + "0" * scale if scale else "")
    return [big, "-" + big, tiny, "-" + tiny, zero, "-" + zero]


def random_value(rng: random.Random, kind: str) -> str | None:
    precision, scale = (int(x) for x in kind[8:-1].split(","))
    if rng.random() < 0.15:
        return None
    ints = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, precision - scale)))
    frac = "".join(rng.choice("0123456789") for _ in range(scale))
    return ("-" if rng.random() < 0.5 else "") + (ints or "0") + ("." + frac if scale else "")


def sql(value: str | None) -> str:
    return "NULL" if value is None else f"'{value}'"


@pytest.fixture(scope="module")
def binlog(mariadb_server, tmp_path_factory):
    from support.compiled import require_compiled

    require_compiled()                  # before the workload: without the build there is no subject
    srv = mariadb_server
    srv.execute("DROP DATABASE IF EXISTS typed_decimal")
    srv.execute("CREATE DATABASE typed_decimal")
    srv.execute("CREATE TABLE typed_decimal.t (id INT PRIMARY KEY, "
                + ", ".join(f"{name} {kind}" for name, kind in COLUMNS) + ")")
    srv.flush_logs()
    name = srv.master_status()[0]
    rng = random.Random(20261126)
    rows = [[edges(kind)[i % 6] for _, kind in COLUMNS] for i in range(6)]
    rows += [[random_value(rng, kind) for _, kind in COLUMNS] for _ in range(400)]
    values = [f"({i}, " + ", ".join(sql(v) for v in row) + ")" for i, row in enumerate(rows)]
    for start in (0, 150):          # rows events of up to the server's 8 KiB, many rows each
        srv.execute("INSERT INTO typed_decimal.t VALUES " + ", ".join(values[start:start + 150]))
    srv.execute("INSERT INTO typed_decimal.t VALUES " + ", ".join(values[300:]))
    want = {row[0]: list(row[1:]) for row in srv.query(
        "SELECT id, " + ", ".join(f"CAST({name} AS CHAR)" for name, _ in COLUMNS) + " FROM typed_decimal.t")}
    srv.execute("UPDATE typed_decimal.t SET d12 = -d12, d38s = d38s / 3, d5 = NULL WHERE id % 3 = 0")
    srv.execute("DELETE FROM typed_decimal.t WHERE id % 7 = 0")
    srv.flush_logs()
    src = tmp_path_factory.mktemp("typed_decimal")
    srv.copy_binlog(name, src / name)
    schema = srv.dump_schema(["typed_decimal"])
    (src.parent / "schema.sql").write_text(schema)
    narrow = schema
    for column, kind in NARROW.items():
        wide = dict(COLUMNS)[column].lower()
        assert f"`{column}` {wide}" in narrow
        narrow = narrow.replace(f"`{column}` {wide}", f"`{column}` {kind}")
    (src.parent / "narrow.sql").write_text(narrow)
    return src / name, src.parent, want


def ingest(out: Path, source: Path, schema: Path, pure: bool) -> None:
    env = dict(os.environ)
    env.pop("BINLOG_PURE", None)
    if pure:
        env["BINLOG_PURE"] = "1"
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "ingest", "--engine", "local",
                           "--no-progress", "--schema-ddl", str(schema), "--to", str(out), str(source)],
                          cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def typed_rows(out: Path) -> list[dict]:
    import pyarrow as pa

    # (pyarrow's datasets skip the _run=/_date= directories: the files one by one)
    files = sorted((out / "tables").glob("*typed_decimal*/**/*.parquet"))
    assert files
    table = pa.concat_tables(pq.read_table(f) for f in files)
    return sorted(table.to_pylist(), key=lambda r: (r["_pos"], r["_op"], r["id"]))


def text(value) -> str | None:
    """A typed value as the server's CAST AS CHAR writes it."""
    return format(value, "f") if isinstance(value, Decimal) else value


def fits(value: str | None, kind: str) -> str | None:
    precision, scale = (int(x) for x in kind[8:-1].split(","))
    digits = value.lstrip("-").split(".")[0].lstrip("0") if value is not None else ""
    return value if len(digits) <= precision - scale else None


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("schema_name", ["schema.sql", "narrow.sql"])
def test_decimal_values_as_the_server_casts_them(binlog, tmp_path, schema_name):
    source, base, want = binlog
    lakes = {}
    for pure in (False, True):
        out = tmp_path / ("pure" if pure else "compiled")
        ingest(out, source, base / schema_name, pure)
        lakes[pure] = typed_rows(out)
    assert lakes[False] == lakes[True]
    got = lakes[False]
    kinds = {name: kind for name, kind in COLUMNS}
    if schema_name == "narrow.sql":
        kinds.update(NARROW)
    inserts = {r["id"]: [text(r[name]) for name, _ in COLUMNS] for r in got if r["_op"] == "insert"}
    assert len(inserts) == len(want) == 406
    expected = {i: [fits(v, kinds[name]) if name in NARROW else v
                    for v, (name, _) in zip(row, COLUMNS, strict=True)] for i, row in want.items()}
    assert inserts == expected
    if schema_name == "narrow.sql":      # some values fit, some do not
        column = [name for name, _ in COLUMNS].index("d38")
        assert any(row[column] is None for i, row in inserts.items() if want[i][column] is not None)
        assert any(row[column] is not None for row in inserts.values())
    updates = [r for r in got if r["_op"] == "update"]
    deletes = [r for r in got if r["_op"] == "delete"]
    assert len(updates) == 136 and len(deletes) == 58
    for r in updates:
        before = [text(r["_before"][name]) for name, _ in COLUMNS]
        assert before == expected[r["id"]]
        assert r["d5"] is None
    assert all(r["_before"] is None for r in got if r["_op"] != "update")
