"""A MariaDB replica (the local ``mariadbd``, a fresh server with its defaults, so
mysql56_temporal_format=ON) replicating from serve by file and position.  Its tables are
created by the binlog's own DDL; at the end each table's rows are read back as
``CAST(col AS CHAR)`` (time_zone +00:00) and compared with the source's last snapshot.
When its SQL thread stops on an error, the error is recorded for the transaction it was at
and that transaction skipped (``SET GLOBAL sql_slave_skip_counter = 1``), as an operator
would."""
from __future__ import annotations

import re
import time

from support.compat import Run, Runner, Target, gtid_of_position
from support.mariadb_server import MariaDBServer, mariadbd_version

WAIT = 120.0


def version() -> str:
    found = re.match(r"[\d.]+", mariadbd_version())
    return found.group(0) if found else mariadbd_version()


def status(replica: MariaDBServer) -> dict:
    conn = replica.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SLAVE STATUS")
            names = [c[0] for c in cur.description]
            row = cur.fetchone()
            return dict(zip(names, row, strict=True)) if row else {}
    finally:
        conn.close()


def tables(replica: MariaDBServer) -> dict[str, list[tuple]]:
    out = {}
    for schema, table in replica.query("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                                       "WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', "
                                       "'performance_schema', 'sys')"):
        columns = [r[0] for r in replica.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
            "ORDER BY ORDINAL_POSITION", (schema, table))]
        replica.execute("SET SESSION time_zone = '+00:00'")
        select = ", ".join(f"CAST(`{c}` AS CHAR)" for c in columns)
        rows = replica.query(f"SELECT {select} FROM `{schema}`.`{table}` ORDER BY 1")
        out[f"{schema}.{table}"] = sorted((tuple(r) for r in rows), key=lambda r: int(r[0]))
    return out


def run(target: Target) -> Run:
    result = Run()
    replica = MariaDBServer({"server_id": 2}).start()
    try:
        replica.execute(f"CHANGE MASTER TO MASTER_HOST='{target.host}', MASTER_PORT={target.port}, "
                        f"MASTER_USER='{target.user}', MASTER_PASSWORD='{target.password}', "
                        f"MASTER_LOG_FILE='{target.binlog.name}', MASTER_LOG_POS={target.start_pos}, "
                        f"MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=no")
        replica.execute("START SLAVE")
        deadline = time.monotonic() + WAIT
        while True:
            info = status(replica)
            if info.get("Last_SQL_Errno"):
                at = int(info["Exec_Master_Log_Pos"])
                message = re.sub(r"\s+", " ", info["Last_SQL_Error"])
                result.errors.append((gtid_of_position(target.binlog, at + 1), message[:300]))
                replica.execute("SET GLOBAL sql_slave_skip_counter = 1")
                replica.execute("START SLAVE SQL_THREAD")
                continue
            if info.get("Relay_Master_Log_File") != target.binlog.name or \
                    int(info.get("Exec_Master_Log_Pos") or 0) >= target.end:
                break
            if time.monotonic() > deadline:
                result.errors.append((None, f"not at the end after {WAIT:.0f} s: {info.get('Last_IO_Error')}"))
                result.finished = False
                break
            time.sleep(0.2)
        replica.execute("STOP SLAVE")
        result.final = tables(replica)
    finally:
        replica.cleanup()
    return result


RUNNERS = [Runner("MariaDB replica", "network", version, run,
                  "CHANGE MASTER TO serve, a fresh mariadbd (mysql56_temporal_format=ON); its tables read back "
                  "with CAST(col AS CHAR); a failing transaction skipped with sql_slave_skip_counter")]
