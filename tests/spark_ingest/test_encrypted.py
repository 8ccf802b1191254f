"""Encrypted binlogs on Spark: the data source and `binlog ingest` with the key file
options of the CLI; the keys reach the tasks inside the plan (as the schema snapshot
does), split reads decrypt from their own start position."""
from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import json
import shutil
from pathlib import Path

from spark_helpers import dump_records, record_key, row_key

from binlog.cli import main
from binlog.sources.keys import load_key_ring
from spark_ingest.options import parse_options
from spark_ingest.plan import ReadPlan, build_plan

pytestmark = pytest.mark.spark

ENCRYPTED = Path(__file__).resolve().parents[2] / "samples" / "encrypted"
FILES = [ENCRYPTED / "aes_cbc.binlog", ENCRYPTED / "aes_ctr_nochecksum.binlog"]


@pytest.fixture
def keys(tmp_path) -> dict:
    out = {}
    for name in ("keys.txt", "keys.enc", "keys.secret"):
        shutil.copy(ENCRYPTED / name, tmp_path / name)
        (tmp_path / name).chmod(0o600)
        out[name] = str(tmp_path / name)
    return out


def want(keys) -> list:
    ring = load_key_ring([keys["keys.txt"]])
    out = []
    for f in FILES:           # each sample is a sequence of its own (its own CREATE TABLE)
        out += [record_key(r) for r in dump_records([f], keys=ring) if r["op"] in ROW_OPS]
    return out


# Row records only: the DDL records' "schema" of these encrypted samples is known to
# `binlog dump` (it follows the DDL) but not to the Spark tasks (null), so only the row
# records are compared.
ROW_OPS = ("insert", "update", "delete")


def test_data_source_reads_encrypted_files_split(spark, keys):
    reader = (spark.read.format("binlog").option("paths", json.dumps([str(f) for f in FILES]))
              .option("key-file", keys["keys.enc"]).option("key-file-key", f"FILE:{keys['keys.secret']}")
              .option("split-size", "4k"))
    df = reader.load()
    assert df.rdd.getNumPartitions() >= 8
    got = [row_key(r) for r in df.collect() if r.op in ROW_OPS]
    assert got == want(keys) and len(got) > 100


def test_plan_carries_keys_not_the_secret(keys):
    opts = parse_options({"paths": json.dumps([str(FILES[0])]), "key-file": keys["keys.enc"],
                          "key-file-key": "sample file key", "split-size": "4k"})
    plan = build_plan(opts)
    text = plan.to_json()
    assert "sample file key" not in text and "sample file key" not in repr(plan)
    assert plan.options.key_file_key is None          # what the tasks get: keys, no secret
    again = ReadPlan.from_json(text)
    assert again.key_ring().keys == load_key_ring([keys["keys.txt"]]).keys
    assert len(plan.splits) > 3 and all(s.error is None for s in plan.splits)


@pytest.mark.parametrize("engine", ["spark", "local"])
def test_ingest_encrypted(spark, keys, tmp_path, engine):
    out = tmp_path / "out"
    code = main(["ingest", "--no-progress", "--engine", engine, "--split-size", "4k", "--key-file", keys["keys.txt"],
                 *map(str, FILES), "--to", str(out)])
    assert code == 0
    df = spark.read.option("basePath", str(out / "changes")).parquet(str(out / "changes"))
    rows = df.where("op IN ('insert', 'update', 'delete')").collect()
    assert sorted((row_key(r) for r in rows), key=repr) == sorted(want(keys), key=repr)
    # without the key: in errors/ (skip mode), never silently nothing; fail mode: exit 1
    out2 = tmp_path / "nokey"
    assert main(["ingest", "--no-progress", "--engine", engine, str(FILES[0]), "--to", str(out2)]) == 3   # rows in errors/: exit 3
    errors = spark.read.parquet(str(out2 / "errors")).collect()
    assert [(e.error, e.pos) for e in errors] == [("EncryptedBinlogError", 256)]
    assert main(["ingest", "--no-progress", "--engine", engine, "--on-error", "fail", str(FILES[0]),
                 "--to", str(tmp_path / "fail")]) == 1
