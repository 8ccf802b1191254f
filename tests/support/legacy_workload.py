"""The legacy-temporal workload of the rewrite and serve tests: a table with every legacy
type (TIMESTAMP/DATETIME/TIME, N = 0..6) and edge values, UPDATEs, DELETEs, ALTERs
mid-stream and a table converted under mysql56_temporal_format=ON, run on a source whose
variable is OFF; and the rows of a table as the server prints them."""
from __future__ import annotations

N = range(7)
LEGACY_COLUMNS = ([f"ts{n}" for n in N] + [f"dt{n}" for n in N] + [f"t{n}" for n in N])

CREATE = ("CREATE TABLE leg (id INT PRIMARY KEY, "
          + ", ".join(f"ts{n} TIMESTAMP({n}) NULL DEFAULT NULL" for n in N) + ", "
          + ", ".join(f"dt{n} DATETIME({n}) NULL" for n in N) + ", "
          + ", ".join(f"t{n} TIME({n}) NULL" for n in N) + ", note VARCHAR(64))")


def _row(i, ts, dt, t):
    return (f"({i}, " + ", ".join([f"'{ts}'"] * 7 if ts else ["NULL"] * 7) + ", "
            + ", ".join([f"'{dt}'"] * 7 if dt else ["NULL"] * 7) + ", "
            + ", ".join([f"'{t}'"] * 7 if t else ["NULL"] * 7) + f", 'row {i}')")


ROWS = [  # the server rounds each value to each column's N
    _row(1, "2022-11-02 11:11:22.326147", "2022-11-10 21:12:33.990000", "-838:59:59"),
    _row(2, "2038-01-19 03:14:07.999999", "9999-12-31 23:59:59.999999", "838:59:59.999999"),
    _row(3, "1970-01-01 00:00:01.000001", "1000-01-01 00:00:00.000001", "-00:00:00.5"),
    _row(4, "0000-00-00 00:00:00", "0000-00-00 00:00:00", "-01:02:03.456789"),
    _row(5, None, None, None),
    _row(6, "2000-02-29 12:34:56.5", "2022-00-00 00:00:00", "00:00:00"),
    _row(7, "2022-11-02 11:11:22.9", "2022-11-10 21:12:33.1", "-12:34:56.789"),
]

WORKLOAD = [
    "SET SESSION time_zone = '+00:00'",
    "SET SESSION sql_mode = ''",
    "CREATE DATABASE rw",
    "USE rw",
    CREATE,
    "CREATE TABLE big (id INT PRIMARY KEY, t3 TIME(3), dt6 DATETIME(6), blob_col TEXT)",
    f"INSERT INTO leg VALUES {', '.join(ROWS)}",
    "INSERT INTO big SELECT seq, SEC_TO_TIME(seq * 7.123), '2020-01-01' + INTERVAL seq SECOND, "
    "REPEAT('x', seq % 300) FROM seq_1_to_3000",
    "UPDATE leg SET t6 = '-838:59:59.999999', ts3 = '2021-06-01 00:00:00.5', note = 'upd' WHERE id = 1",
    "UPDATE leg SET dt0 = NULL, t0 = '-00:00:01' WHERE id IN (3, 6)",
    "DELETE FROM leg WHERE id = 7",
    "UPDATE big SET t3 = -t3 WHERE id % 3 = 0",
    "DELETE FROM big WHERE id % 10 = 0",
    # ALTERs mid-stream: a legacy column added (the variable is still OFF)...
    "ALTER TABLE leg ADD COLUMN t7 TIME(4) NULL AFTER t6",
    "UPDATE leg SET t7 = '-100:00:00.1234' WHERE id < 4",
    "INSERT INTO leg VALUES (8, " + ", ".join(["'2024-02-29 23:59:59.999999'"] * 7) + ", "
    + ", ".join(["'2024-02-29 23:59:59.999999'"] * 7) + ", "
    + ", ".join(["'-838:59:58.000001'"] * 7) + ", '-00:00:00.0001', 'after alter')",
    # ...and a table converted to the MySQL 5.6 format by an ALTER under ON (the server
    # rebuilds every legacy column of the table as *2)
    "CREATE TABLE conv (id INT PRIMARY KEY, t2 TIME(2), dt5 DATETIME(5))",
    "INSERT INTO conv VALUES (1, '-00:00:00.01', '2022-11-10 21:12:33.99999')",
    "SET GLOBAL mysql56_temporal_format = ON",
    "ALTER TABLE conv MODIFY t2 TIME(2) NOT NULL",
    "INSERT INTO conv VALUES (2, '-838:59:59.99', '1000-01-01 00:00:00.00001')",
    "UPDATE conv SET dt5 = NULL WHERE id = 1",
    "SET GLOBAL mysql56_temporal_format = OFF",
    # every row's last image in the final layout (mariadb-binlog -v prints images)
    "UPDATE leg SET note = CONCAT(note, '+')",
]


def server_rows(srv, table="leg", select=None):
    columns = [r[0] for r in srv.query(
        f"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'rw' "
        f"AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION")]
    srv.execute("SET SESSION time_zone = '+00:00'")
    exprs = select or [f"CAST(`{c}` AS CHAR)" for c in columns]
    return columns, [tuple(r) for r in srv.query(f"SELECT {', '.join(exprs)} FROM rw.{table} ORDER BY id")]


#: MariaDB's TIME runs from -838:59:59.999999 to 838:59:59.999999; MySQL's and TiDB's end at
#: +-838:59:59.000000, and TiDB refuses a value beyond (error 1292, whatever the sql_mode).
#: The workload with those values one second inside, for a TiDB target (the refusal itself
#: is tested on its own).
_BEYOND_MYSQL_TIME = {"'838:59:59.999999'": "'838:59:58.999999'",
                      "'-838:59:59.999999'": "'-838:59:58.999999'",
                      "'-838:59:59.99'": "'-838:59:58.99'"}


def within_mysql_time_range(statements: list[str]) -> list[str]:
    out = []
    for sql in statements:
        for beyond, inside in _BEYOND_MYSQL_TIME.items():
            sql = sql.replace(beyond, inside)
        out.append(sql)
    return out
