#!/usr/bin/env python3
"""Why ``binlog apply`` sends multi-row text statements: the same 20,000 rows of the
bench/generate.py table into a real local mariadbd, three ways, in one run.

    python bench/apply_prepare_bench.py [ROWS]      (default 20,000)

PyMySQL has no binary-protocol prepared statements; server-side ``PREPARE`` over the
text protocol still needs every value as a literal in ``EXECUTE ... USING``, so the
server parses the values either way and the prepared forms only add statements.

With mysql-connector-python installed (``pip install mysql-connector-python``; not a
dependency of this project, only of this measurement) a fourth contender sends the same
rows through the *binary* protocol: a 1,000-row ``REPLACE`` prepared once
(COM_STMT_PREPARE) and executed with 14,000 binary parameters (COM_STMT_EXECUTE), no
literal parsed.  Its pure-Python client is slow, so compare the target's CPU (``server``
column, from /proc), not the wall time.

A last contender sends the rows as tab-separated text with ``LOAD DATA LOCAL INFILE ...
REPLACE`` (1,000 rows a file, written before the clock starts): the server's field
reader instead of its SQL parser.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pymysql
import pymysql.constants.CLIENT as CL

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from generate import TABLE  # noqa: E402
from support.mariadb_server import MariaDBServer  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
COLS = "(`id`, `a`, `b`, `c`, `d`, `e`, `f`, `g`, `h`, `i`, `j`, `k`, `l`, `m`)"


def literals(i: int) -> list[str]:
    return [str(i), str(i * 7 - 350000), str(i * 1000003), f"'value-{i}-c4ca4238a0b923820dcc509a6f75849b'",
            f"{i / 7:.2f}", f"'2024-01-01 00:00:{i % 60:02d}.000001'", f"'2023-06-01 12:00:{i % 60:02d}.000'",
            f"{i / 3.0!r}e0", "'" + "x" * (i % 50) + "'", "'2000-01-02'", "'green'", "'-41:39:58.99'",
            str(i % 128), f"'{i:08d}'"]


ROWS = [literals(i) for i in range(1, N + 1)]


def values(i: int) -> list:
    """``literals(i)`` as the values a binary-protocol client binds (text for temporals
    and DECIMAL, as the server converts them from strings)."""
    return [i, i * 7 - 350000, i * 1000003, f"value-{i}-c4ca4238a0b923820dcc509a6f75849b",
            f"{i / 7:.2f}", f"2024-01-01 00:00:{i % 60:02d}.000001", f"2023-06-01 12:00:{i % 60:02d}.000",
            i / 3.0, "x" * (i % 50), "2000-01-02", "green", "-41:39:58.99", i % 128, f"{i:08d}"]


def session(socket: str):
    conn = pymysql.connect(unix_socket=socket, user="root", autocommit=False,
                           client_flag=CL.MULTI_STATEMENTS, local_infile=True)
    cur = conn.cursor()
    cur.execute("DELETE FROM bench.t0")
    conn.commit()
    cur.execute("SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'")
    return conn, cur


def multi_row(cur) -> None:
    for s in range(0, N, 1000):
        cur.execute(f"REPLACE INTO bench.t0 {COLS} VALUES "
                    + ", ".join("(" + ", ".join(r) + ")" for r in ROWS[s:s + 1000]))


def prepared_single(cur) -> None:
    cur.execute(f"PREPARE s FROM 'REPLACE INTO bench.t0 {COLS} VALUES ({', '.join('?' * 14)})'")
    for s in range(0, N, 200):          # 200 EXECUTEs per packet (multi-statements)
        cur.execute(";".join("EXECUTE s USING " + ", ".join(r) for r in ROWS[s:s + 200]))
        while cur.nextset():
            pass


def prepared_multi(cur) -> None:
    marks = ", ".join("(" + ", ".join("?" * 14) + ")" for _ in range(100))
    cur.execute(f"PREPARE m FROM 'REPLACE INTO bench.t0 {COLS} VALUES {marks}'")
    for s in range(0, N, 100):
        cur.execute("EXECUTE m USING " + ", ".join(v for r in ROWS[s:s + 100] for v in r))


def tsv_files(folder: str) -> list[str]:
    """``ROWS`` as LOAD DATA's default text format, 1,000 rows a file (no value here has
    a tab, newline or backslash to escape)."""
    paths = []
    for s in range(0, N, 1000):
        path = os.path.join(folder, f"rows-{s}.tsv")
        with open(path, "w") as f:
            f.writelines("\t".join(v[1:-1] if v.startswith("'") else v for v in r) + "\n"
                         for r in ROWS[s:s + 1000])
        paths.append(path)
    return paths


def load_data(cur, paths: list[str]) -> None:
    for path in paths:
        cur.execute(f"LOAD DATA LOCAL INFILE '{path}' REPLACE INTO TABLE bench.t0 "
                    f"CHARACTER SET binary {COLS}")


def binary_prepared(srv) -> None:
    """COM_STMT_PREPARE of a 1,000-row REPLACE once, COM_STMT_EXECUTE with binary values."""
    import mysql.connector

    conn = mysql.connector.connect(unix_socket=srv.socket, user="root", use_pure=True)
    cur = conn.cursor(prepared=True)
    cur.execute("SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'")
    marks = ", ".join("(" + ", ".join("?" * 14) + ")" for _ in range(1000))
    sql = f"REPLACE INTO bench.t0 {COLS} VALUES {marks}"
    for s in range(0, N, 1000):
        cur.execute(sql, [v for i in range(s + 1, s + 1001) for v in values(i)])
    conn.commit()
    conn.close()


def server_cpu(srv) -> float:
    with open(f"/proc/{srv._proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    contenders: list[tuple[str, Any]] = [("multi-row text REPLACE, 1000 rows a statement", multi_row),
                  ("PREPARE once, EXECUTE USING per row (200 a packet)", prepared_single),
                  ("PREPARE a 100-row REPLACE, EXECUTE USING 1400 values", prepared_multi),
                  ("multi-row text REPLACE again", multi_row),
                  ("LOAD DATA LOCAL INFILE ... REPLACE, 1000 rows a file", load_data)]
    try:
        import mysql.connector  # noqa: F401
        contenders.insert(3, ("binary protocol: a 1000-row REPLACE prepared once, 14000 binary values",
                              None))
    except ImportError:
        print("(mysql-connector-python not installed: no binary-protocol contender)")
    with MariaDBServer({"innodb_buffer_pool_size": "256M", "innodb_flush_log_at_trx_commit": 2}) as srv, \
            tempfile.TemporaryDirectory() as folder:
        paths = tsv_files(folder)
        srv.execute("CREATE DATABASE bench")
        srv.execute(TABLE.format(db="bench", n=0))
        print("  wall    server CPU")
        for name, load in contenders:
            conn, cur = session(srv.socket)
            started, cpu = time.perf_counter(), server_cpu(srv)
            if load is None:
                binary_prepared(srv)
            elif load is load_data:
                load(cur, paths)
                conn.commit()
            else:
                load(cur)
                conn.commit()
            print(f"{time.perf_counter() - started:6.2f} s  {server_cpu(srv) - cpu:5.2f} s  {name}",
                  flush=True)
            conn.close()


if __name__ == "__main__":
    main()
