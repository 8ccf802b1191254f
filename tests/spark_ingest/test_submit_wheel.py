"""spark-submit with the built wheel, end to end, in local mode (docs/lake.md "On a cluster").

The wheel is built as docs/lake.md says (``pip wheel --no-deps``) from a copy of the
package sources, and shipped with ``--py-files`` to a small job that reads a sample
binlog with the ``binlog`` data source and writes Parquet.  The job's Python cannot see
this checkout: it runs with ``-S`` (no .pth files, so not the editable install) and the
interpreter's site-packages on PYTHONPATH (the dependencies only), as an executor that
has the dependencies but not this package would - so the package can only come from the
wheel, on the driver and in the Python workers (checked).  ``--py-files`` alone does not
reach the Python worker that creates the data source (Spark 4.0: ModuleNotFoundError
'spark_ingest'); ``spark.executorEnv.PYTHONPATH`` names the wheel for those.  The Parquet files hold the
records of ``binlog dump``.  One Spark start (the job's own JVM)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from spark_helpers import SAMPLES, arrow_key, dump_records, record_key  # noqa: E402

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "binlog", "schema_store", "spark_ingest")

JOB = '''
import json
import sys

from pyspark.sql import SparkSession

import binlog
import spark_ingest
from spark_ingest import register

spark = SparkSession.builder.appName("binlog-wheel-job").getOrCreate()
register(spark)
source, out = sys.argv[1], sys.argv[2]
spark.read.format("binlog").load(source).write.parquet(out)
workers = spark.sparkContext.parallelize(range(2), 2).map(
    lambda _: (__import__("binlog").__file__, __import__("spark_ingest").__file__)).collect()
print("MODULES " + json.dumps({"driver": [binlog.__file__, spark_ingest.__file__],
                               "workers": sorted({f for pair in workers for f in pair})}))
spark.stop()
'''


def build_wheel(tmp: Path) -> Path:
    """``python -m pip wheel --no-deps -w dist .`` in a copy of the package sources (a
    build in the checkout would leave build/ and *.egg-info there)."""
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy(path, src / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", "dist", "."],
                          cwd=src, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = (src / "dist").glob("binlog_temporal-*.whl")
    return wheel


def test_spark_submit_py_files_wheel_writes_what_dump_prints(tmp_path):
    import pyarrow.dataset as ds
    import pyspark

    wheel = build_wheel(tmp_path)
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    (job_dir / "job.py").write_text(JOB)
    # a Python that sees the dependencies but not this checkout: -S skips the .pth files
    # (the editable install); site-packages comes back as a plain path
    python = job_dir / "python-nosite"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(PYTHONPATH=sysconfig.get_paths()["purelib"], PYSPARK_PYTHON=str(python),
               PYSPARK_DRIVER_PYTHON=str(python), SPARK_LOCAL_IP="127.0.0.1")
    sample = SAMPLES / "types_full.binlog"
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    out = tmp_path / "out"
    done = subprocess.run([str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                           "--conf", "spark.sql.shuffle.partitions=1",
                           "--conf", "spark.sql.session.timeZone=UTC",
                           # the data source is created in Python workers that do not get
                           # --py-files on their path (docs/lake.md "On a cluster")
                           "--conf", f"spark.executorEnv.PYTHONPATH={wheel}",
                           "--py-files", str(wheel), "job.py", str(sample), str(out)],
                          cwd=job_dir, env=env, capture_output=True, text=True, timeout=900)
    errors = [x for x in done.stderr.splitlines() if " INFO " not in x]
    assert done.returncode == 0, "\n".join(errors[-60:])
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    modules = json.loads(line[len("MODULES "):])
    # the package came from the wheel, on the driver and in the Python workers
    for path in modules["driver"] + modules["workers"]:
        assert str(REPO) not in path and (wheel.name in path or "binlog_temporal" in path), path
    assert len(modules["workers"]) == 2
    rows = ds.dataset(str(out), format="parquet").to_table().to_pylist()
    got = [arrow_key(r) for r in rows]
    want = [record_key(r) for r in dump_records([sample])]
    assert len(got) == len(want) > 100
    assert sorted(got, key=repr) == sorted(want, key=repr)
