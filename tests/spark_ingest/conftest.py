"""Spark tests: one local[2] SparkSession for the whole directory (JVM start-up is slow).

Skipped when pyspark/pyarrow are not installed (the ``[spark]`` extra), unless
``BINLOG_REQUIRE_SPARK=1`` (then a missing pyspark is an error).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "mariadb-10.11"


def _require_spark():
    try:
        import pyarrow  # noqa: F401  # pyflakes: ignore
        import pyspark  # noqa: F401
    except ImportError as exc:
        if os.environ.get("BINLOG_REQUIRE_SPARK") == "1":
            raise
        pytest.skip(f"pyspark/pyarrow not installed ({exc}); pip install -e '.[spark]'")


@pytest.fixture(scope="session")
def spark():
    _require_spark()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from spark_ingest.session import get_spark

    session = get_spark("local[2]", app_name="binlog-tests",
                        conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES
