"""PySpark data source and bulk ingestion job for binlog directories.

- ``register(spark)``: makes ``spark.read.format("binlog")`` available (``datasource``).
- ``get_spark(master)``: a session set up for it (``session``).
- ``read_binlog(spark, paths, **options)``: plan on the driver and get the change records
  plus typed per-table DataFrames (``api``).
- ``binlog ingest SRC... --to DIR``: the bulk job (``ingest``, ``command``).

Only ``pyspark``/``pyarrow`` (the ``[spark]`` extra) are needed, and only when used.
"""
from __future__ import annotations


def register(spark) -> None:
    from .session import register as _register

    _register(spark)


def get_spark(master=None, **kw):
    from .session import get_spark as _get_spark

    return _get_spark(master, **kw)


def read_binlog(spark, paths, **options):
    from .api import read_binlog as _read_binlog

    return _read_binlog(spark, paths, **options)


__all__ = ["register", "get_spark", "read_binlog"]
