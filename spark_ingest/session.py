"""A SparkSession set up for the binlog data source.

``get_spark(master=None)``: the active session when there is one (spark-submit, a
notebook), else a new one on ``master`` (default ``local[*]``) with the settings this
package needs on one machine: workers run this Python (PYSPARK_PYTHON, so they find the
installed package), loopback networking, no UI, UTC session time zone.  The data
source is registered either way.
"""
from __future__ import annotations

import os
import sys


def get_spark(master: str | None = None, *, app_name: str = "binlog-ingest", conf: dict | None = None,
              data_source: bool = True, java_options: str = ""):
    """The session (module docstring); ``data_source``: register the binlog data source;
    ``java_options``: added to the driver JVM's options of a session this starts."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        spark = active
    else:
        if master is None or master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = SparkSession.builder.appName(app_name)
        if master is not None:
            builder = builder.master(master)
        elif not submitted():
            builder = builder.master("local[*]")
        settings = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": "8",
            "spark.sql.sources.partitionOverwriteMode": "dynamic",
            "spark.python.worker.reuse": "true",
        }
        if not submitted():
            settings["spark.driver.extraJavaOptions"] = \
                f"-Dlog4j2.configurationFile=file:{_quiet_log4j()} {java_options}".strip()
        settings.update(conf or {})
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    if data_source:
        register(spark)
    return spark


def submitted() -> bool:
    """Launched by spark-submit: the JVM gateway exists and the master comes from there."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


_LOG4J = """status = error
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex{short}
logger.silent1.name = org.apache.spark.executor.Executor
logger.silent1.level = off
logger.silent2.name = org.apache.spark.scheduler.TaskSetManager
logger.silent2.level = off
logger.silent3.name = org.apache.spark.sql.execution.datasources
logger.silent3.level = off
logger.silent4.name = org.apache.spark.util.Utils
logger.silent4.level = off
logger.silent5.name = org.apache.hadoop.util.NativeCodeLoader
logger.silent5.level = off
"""


def _quiet_log4j() -> str:
    """A log4j2 configuration without the per-task error dumps: a decoding error is
    reported once, by the driver, with file, offset and remedy.  Written once per process
    to a file of its own (``mkstemp``: created exclusively, mode 0600), removed at exit: a
    fixed name in the shared temporary directory could be a link another user planted,
    and writing through it would overwrite the file it points at."""
    global _log4j_path
    if _log4j_path is None:
        import atexit
        import tempfile

        fd, path = tempfile.mkstemp(prefix="binlog-spark-log4j2-", suffix=".properties")
        with os.fdopen(fd, "w") as fh:
            fh.write(_LOG4J)
        atexit.register(_remove, path)
        _log4j_path = path
    return _log4j_path


_log4j_path: str | None = None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def register(spark) -> None:
    from .datasource import BinlogDataSource

    spark.dataSource.register(BinlogDataSource)
