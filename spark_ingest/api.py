"""Driver-side API: plan once, then the change records and typed per-table DataFrames.

    from spark_ingest import get_spark, read_binlog
    spark = get_spark()                                   # or your own session + register(spark)
    read = read_binlog(spark, ["/data/binlogs/"], schema_ddl=["dump.sql"], on_error="skip")
    read.changes                                          # the records of `binlog dump --format json`
    read.tables()                                         # [(db, table), ...]
    read.table("shop", "orders")                          # typed DataFrame (spark_ingest.typed)

Options are those of the data source (``spark_ingest.options``) as keyword arguments
(``schema_ddl=``, ``table=``, ``split_size=``...).  The plan (pre-scan, splits, schema store
snapshot with the binlog's DDL) is made here on the driver and handed to the data source
through a plan file, so the schema store that typed the tables is the one that decoded
them.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from .options import parse_options
from .plan import ReadPlan, build_plan
from .typed import table_columns, typed_table

_PLAN_DIRS: list[str] = []


def _cleanup() -> None:
    for d in _PLAN_DIRS:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def write_plan(plan: ReadPlan) -> str:
    """The plan in a JSON file the data source reads (removed at exit)."""
    directory = tempfile.mkdtemp(prefix="binlog-plan-")
    _PLAN_DIRS.append(directory)
    fd, path = tempfile.mkstemp(prefix="plan-", suffix=".json", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(plan.to_json())
    return path


def load_plan(spark, plan: ReadPlan):
    """The change-records DataFrame of a plan."""
    from .session import register

    register(spark)
    return spark.read.format("binlog").option("plan", write_plan(plan)).load()


class BinlogRead:
    def __init__(self, spark, plan: ReadPlan, changes):
        self.spark = spark
        self.plan = plan
        self.changes = changes

    @property
    def stores(self):
        return self.plan.stores

    def tables(self) -> list[tuple[str, str]]:
        """Tables with row changes in the read (a Spark job over the records)."""
        from pyspark.sql import functions as F

        # row changes only: statement and DDL rows name a table (or none) too
        rows = (self.changes.where(F.col("op").isin("insert", "update", "delete"))
                .select("db", "table").distinct()
                .orderBy("db", "table").collect())
        return [(r.db, r.table) for r in rows]

    def columns(self, db: str, table: str):
        return table_columns(self.stores, db, table)

    def table(self, db: str, table: str):
        opts = self.plan.options
        return typed_table(self.changes, db, table, store=self.stores, timezone=opts.timezone,
                           binary_encoding=opts.binary_encoding)


def read_binlog(spark, paths, **options) -> BinlogRead:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    opts = parse_options({**{k: v for k, v in options.items()}, "paths": [str(p) for p in paths]})
    if opts.parallelism is None:
        opts.parallelism = spark.sparkContext.defaultParallelism
    plan = build_plan(opts)
    return BinlogRead(spark, plan, load_plan(spark, plan))
