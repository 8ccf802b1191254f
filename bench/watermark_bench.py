#!/usr/bin/env python3
"""What watermarks cost a busy stream: the reader's CPU with no watermarks, with
``watermark_interval=1`` (``--stop-never``'s default) and 0 (one per transaction).

    python bench/watermark_bench.py [--transactions 30000] [--runs 5] [--binlog PATH]

Builds (unless --binlog names one) a binlog of N autocommit transactions of one two-row
INSERT with a private ``mariadbd`` (tests/support/mariadb_server.py; the case where
watermarks cost most: one check per transaction end), then times
``BinlogReader([F], watermark_interval=W).items(statements=True)`` in this process
(process CPU; the runs of the three settings interleaved) and ``binlog dump`` (user CPU
of a subprocess, imports included).  Pin it: ``taskset -c 0 python bench/...``.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

SETTINGS = (None, 1.0, 0.0)


def make_binlog(transactions: int, out: Path) -> None:
    from support.mariadb_server import MariaDBServer

    with MariaDBServer({"binlog_row_metadata": "FULL"}) as srv:
        srv.execute("CREATE DATABASE b")
        srv.execute("CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)")
        conn = srv.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("SET autocommit = 1")
                for i in range(0, 2 * transactions, 2):
                    cur.execute("INSERT INTO b.t VALUES (%s, 'value', %s), (%s, 'value', %s)",
                                (i, i, i + 1, i))
        finally:
            conn.close()
        srv.flush_logs()
        shutil.copy(srv.binlog_files()[0], out)


def reader_cpu(path: Path, interval) -> tuple[float, int]:
    from binlog.reader import BinlogReader

    start = time.process_time()
    items = sum(1 for _ in BinlogReader([path], watermark_interval=interval).items(statements=True))
    return time.process_time() - start, items


def dump_cpu(path: Path, interval) -> float:
    option = [] if interval is None else ["--watermark-interval", f"{interval:g}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *option, str(path)], cwd=REPO,
                   stdout=subprocess.DEVNULL, check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transactions", type=int, default=30000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--binlog", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.binlog
        if path is None:
            path = Path(tmp) / "many_tx.binlog"
            make_binlog(args.transactions, path)
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
        cpu: dict = {s: [] for s in SETTINGS}
        dump: dict = {s: [] for s in SETTINGS}
        for _ in range(args.runs):
            for setting in SETTINGS:
                seconds, items = reader_cpu(path, setting)
                cpu[setting].append(seconds)
                dump[setting].append(dump_cpu(path, setting))
        base = statistics.median(cpu[None])
        for setting in SETTINGS:
            median = statistics.median(cpu[setting])
            print(f"watermark_interval={setting}: reader {median:.2f} s CPU "
                  f"({(median / base - 1) * 100:+.1f}%), binlog dump {statistics.median(dump[setting]):.2f} s "
                  f"user CPU (median of {args.runs})")


if __name__ == "__main__":
    main()
