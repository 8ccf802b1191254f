"""python-mysql-replication as a user runs it against a MariaDB primary (here serve):
``BinLogStreamReader(..., is_mariadb=True)`` from a file/position or after a MariaDB GTID,
non-blocking (to the end of what is served).  One JSON line per row change, values turned
into the server's text (datetime -> 'YYYY-MM-DD HH:MM:SS.ffffff', timedelta -> '[-]H:MM:SS.ffffff',
date -> 'YYYY-MM-DD', bytes -> UTF-8, None -> null); a last line {"error": ..., "gtid": ...}
if it raises.  Run with TZ=UTC: it turns TIMESTAMPs into local datetimes.

    python pmr_stream.py HOST PORT USER FILE POS [GTID]      (password: $PMR_PASSWORD)
"""
from __future__ import annotations

import datetime
import json
import os
import sys


def text(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, datetime.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, datetime.timedelta):
        micro = abs(value // datetime.timedelta(microseconds=1))
        seconds, micro = divmod(micro, 1_000_000)
        sign = "-" if value < datetime.timedelta(0) else ""
        return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{micro:06d}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def main(host: str, port: str, user: str, file: str, pos: str, gtid: str = "") -> None:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import MariadbGtidEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    settings = {"host": host, "port": int(port), "user": user, "password": os.environ.get("PMR_PASSWORD", "")}
    start = {"auto_position": gtid} if gtid else {"log_file": file, "log_pos": int(pos), "resume_stream": True}
    stream = BinLogStreamReader(connection_settings=settings, server_id=77, blocking=False, is_mariadb=True,
                                only_events=[MariadbGtidEvent, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
                                **start)
    current = None
    ops = {WriteRowsEvent: "insert", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}
    try:
        for event in stream:
            if isinstance(event, MariadbGtidEvent):
                current = event.gtid
                continue
            for row in event.rows:
                before = row.get("before_values", row.get("values") if type(event) is DeleteRowsEvent else None)
                after = row.get("after_values", row.get("values") if type(event) is WriteRowsEvent else None)
                print(json.dumps({"table": f"{event.schema}.{event.table}", "op": ops[type(event)], "gtid": current,
                                  "before": None if before is None else [text(v) for v in before.values()],
                                  "after": None if after is None else [text(v) for v in after.values()]}))
    except Exception as exc:  # noqa: BLE001 - the peer's failure is what is reported
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300], "gtid": current}))
    finally:
        stream.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
