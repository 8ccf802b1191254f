#!/usr/bin/env python3
"""Why ``binlog apply`` sends multi-row text statements: the same 20,000 rows of the
bench/generate.py table into a real local mariadbd, three ways, in one run.

    python bench/apply_prepare_bench.py

PyMySQL has no binary-protocol prepared statements; server-side ``PREPARE`` over the
text protocol still needs every value as a literal in ``EXECUTE ... USING``, so the
server parses the values either way and the prepared forms only add statements.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pymysql
import pymysql.constants.CLIENT as CL

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from generate import TABLE  # noqa: E402
from support.mariadb_server import MariaDBServer  # noqa: E402

N = 20000
COLS = "(`id`, `a`, `b`, `c`, `d`, `e`, `f`, `g`, `h`, `i`, `j`, `k`, `l`, `m`)"


def literals(i: int) -> list[str]:
    return [str(i), str(i * 7 - 350000), str(i * 1000003), f"'value-{i}-c4ca4238a0b923820dcc509a6f75849b'",
            f"{i / 7:.2f}", f"'2024-01-01 00:00:{i % 60:02d}.000001'", f"'2023-06-01 12:00:{i % 60:02d}.000'",
            f"{i / 3.0!r}e0", "'" + "x" * (i % 50) + "'", "'2000-01-02'", "'green'", "'-41:39:58.99'",
            str(i % 128), f"'{i:08d}'"]


ROWS = [literals(i) for i in range(1, N + 1)]


def session(socket: str):
    conn = pymysql.connect(unix_socket=socket, user="root", autocommit=False,
                           client_flag=CL.MULTI_STATEMENTS)
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


def main() -> None:
    contenders = (("multi-row text REPLACE, 1000 rows a statement", multi_row),
                  ("PREPARE once, EXECUTE USING per row (200 a packet)", prepared_single),
                  ("PREPARE a 100-row REPLACE, EXECUTE USING 1400 values", prepared_multi),
                  ("multi-row text REPLACE again", multi_row))
    with MariaDBServer({"innodb_buffer_pool_size": "256M", "innodb_flush_log_at_trx_commit": 2}) as srv:
        srv.execute("CREATE DATABASE bench")
        srv.execute(TABLE.format(db="bench", n=0))
        for name, load in contenders:
            conn, cur = session(srv.socket)
            started = time.perf_counter()
            load(cur)
            conn.commit()
            print(f"{time.perf_counter() - started:6.2f} s  {name}", flush=True)
            conn.close()


if __name__ == "__main__":
    main()
