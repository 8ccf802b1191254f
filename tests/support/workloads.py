"""Workloads run on a real mariadbd by several test modules."""
from __future__ import annotations

from collections import Counter


def runs_workload(srv, transactions: int = 3, a_rows: int = 2000, b_rows: int = 1500) -> Counter:
    """Statements big enough to span many 8 KiB rows events (long runs of like rows
    events: the compiled encode_run/count_run), two tables and three kinds per
    transaction, NULLs, text to escape, an ALTER after the second transaction (a new
    TABLE_MAP layout for a table).  The server's affected rows per (table, op)."""
    srv.execute("CREATE DATABASE cr")
    srv.execute("CREATE TABLE cr.a (id INT PRIMARY KEY, v VARCHAR(40), d DATETIME(3), n INT NULL,"
                " b VARBINARY(8))")
    srv.execute("CREATE TABLE cr.b (id BIGINT UNSIGNED PRIMARY KEY, t TEXT, x DECIMAL(12,2))")
    srv.flush_logs()
    affected: Counter = Counter()
    conn = srv.connect(db="cr")        # (the seq_ tables of the Sequence engine need one)
    cur = conn.cursor()
    for i in range(transactions):
        cur.execute("BEGIN")
        affected["cr.a", "insert"] += cur.execute(
            "INSERT INTO cr.a (id, v, d, n, b) SELECT seq, REPEAT('é', seq % 40), "
            "'2024-01-02 03:04:05.678', IF(seq % 3, seq, NULL), UNHEX(HEX(seq)) "
            f"FROM seq_{i * a_rows + 1}_to_{(i + 1) * a_rows}")
        affected["cr.b", "insert"] += cur.execute(
            f"INSERT INTO cr.b SELECT seq, REPEAT('t\"\\\\', seq % 30), seq / 7 "
            f"FROM seq_{i * b_rows + 1}_to_{(i + 1) * b_rows}")
        affected["cr.a", "update"] += cur.execute(f"UPDATE cr.a SET n = {i} WHERE id % 4 = {i}")
        affected["cr.b", "delete"] += cur.execute(f"DELETE FROM cr.b WHERE id % 5 = {i}")
        cur.execute("COMMIT")
        if i == 1:
            cur.execute("ALTER TABLE cr.a ADD COLUMN z INT NULL")
    conn.close()
    srv.flush_logs()
    return affected
