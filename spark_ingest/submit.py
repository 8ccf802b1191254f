"""spark-submit entry point: ``spark-submit [spark options] .../spark_ingest/submit.py SRC... --to DIR``.

Takes the arguments of ``binlog ingest``; the master and resources come from spark-submit.
"""
import sys

from spark_ingest.command import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
