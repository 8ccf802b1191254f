"""The ``binlog`` PySpark data source (``pyspark.sql.datasource``, PySpark 4.x).

    from spark_ingest import register
    register(spark)
    df = (spark.read.format("binlog")
          .option("schema-ddl", "dump.sql").option("table", "shop.%")
          .load("/var/lib/mysql/"))          # a file, a directory, a glob; or .option("paths", [...])

Planning (on the driver): ``plan.build_plan`` - expand the sources, pre-scan headers,
follow DDL, split large files at transaction boundaries.  Each Spark partition is one
split (at least one per file); ``read`` decodes it with ``binlog.reader.BinlogReader`` and
yields ``pyarrow.RecordBatch``es of the fixed record schema (``records``).
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from .options import parse_options
from .records import CHANGE_SCHEMA_DDL, read_split


class SplitPartition(InputPartition):
    def __init__(self, split):
        super().__init__(split.index)
        self.split = split


class BinlogDataSource(DataSource):
    """``spark.read.format("binlog")``: the change records of binlog files."""

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def schema(self) -> str:
        return CHANGE_SCHEMA_DDL

    def reader(self, schema) -> "BinlogReaderSource":
        return BinlogReaderSource(dict(self.options))


class BinlogReaderSource(DataSourceReader):
    def __init__(self, options: dict):
        from .plan import ReadPlan, build_plan

        plan_file = next((v for k, v in options.items() if k.lower() == "plan"), None)
        if plan_file:
            with open(plan_file, encoding="utf-8") as fh:
                plan = ReadPlan.from_json(fh.read())
        else:
            plan = build_plan(parse_options(options))
        self.options = plan.options
        self.splits = plan.splits
        self.snapshots = plan.snapshots
        self.keys = plan.key_ring()          # pickled to the tasks with the reader

    def partitions(self):
        if not self.splits:
            from .plan import Split

            return [SplitPartition(Split(0, "", "", 0, 0, read=False))]
        return [SplitPartition(s) for s in self.splits]

    def read(self, partition):
        split = partition.split
        if not split.path:
            return iter(())
        return read_split(split, self.options, self.snapshots[split.group], keys=self.keys)
