"""What a target failure means for the run: ``translate`` makes every error of the target
(PyMySQL's, a socket's) a ``ConnectionLost`` (the run reconnects and resumes from the
checkpoint; a worker applies its batch again) or a ``TargetError`` (the run stops,
naming what was refused and why)."""
from __future__ import annotations

from collections.abc import Callable

import pymysql

from ...errors import TargetError

# What closing or rolling back a connection that already failed may raise.
GONE = (OSError, pymysql.err.Error)

# A lost connection: the client's CR_CONN_HOST_ERROR 2003, CR_SERVER_GONE_ERROR 2006,
# CR_SERVER_LOST 2013, CR_COMMANDS_OUT_OF_SYNC 2014, CR_SERVER_LOST_EXTENDED 2055
# (include/errmsg.h), the server's ER_CONNECTION_KILLED 1927, ER_SERVER_SHUTDOWN 1053
# (sql/share/errmsg-utf8.txt) and MySQL's ER_CLIENT_INTERACTION_TIMEOUT 4031.
CONNECTION_ERRORS = {2003, 2006, 2013, 2014, 2055, 1927, 4031, 1053}
RETRYABLE_ERRORS = {1205, 1213}          # lock wait timeout, deadlock


class ConnectionLost(Exception):
    pass


def close_quietly(conn) -> None:
    """Close a target connection that may be broken already (then there is nothing left
    to close, and nothing to report)."""
    try:
        conn.close()
    except GONE:
        pass        # the connection is already broken


def error_code(exc) -> int | None:
    return exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None


def translate(exc, tx, row=None, sql=None, what=None, row_key: Callable | None = None):
    """A target failure as ConnectionLost (retried) or TargetError (stops the run);
    ``row`` (index, change) is named with ``row_key(change)``."""
    code = error_code(exc)
    message = exc.args[1] if isinstance(exc, pymysql.err.MySQLError) and len(exc.args) > 1 else str(exc)
    what = what or (tx.label if tx is not None else
                    "its bookkeeping (checkpoint table, information_schema)")
    if (isinstance(exc, (pymysql.err.InterfaceError, OSError, ConnectionError))
            or code in CONNECTION_ERRORS):
        return ConnectionLost(f"connection to the target lost while applying {what} "
                              f"({message}); nothing of it was committed")
    if code in RETRYABLE_ERRORS:
        return ConnectionLost(f"{message} while applying {what}; rolled back")
    if not isinstance(exc, pymysql.err.MySQLError):
        return exc
    text = f"the target refused {what}"
    if row is not None and row[1] is not None:
        index, change = row
        n = tx.rows if tx is not None else 0
        key = row_key(change) if row_key is not None else ""
        text += (f", row {index + 1 if index is not None else '?'} of {n}: {change.op} of "
                 f"`{change.db}`.`{change.table}` {key} "
                 f"(binlog {change.file} @ {change.pos})")
    text += f": error {code}: {message}"
    if sql is not None:
        text += f"\n  statement: {sql if len(sql) < 400 else sql[:400] + '...'}"
    return TargetError(text, _hint(code))


def _hint(code: int | None) -> str:
    hint = ("nothing of this transaction was committed; the checkpoint stops right before "
            "it, so the same command resumes here once the cause is fixed")
    if code == 1146:
        hint += ("; create the table on the target first (mariadb-dump --no-data from the "
                 "source), or start the apply before its CREATE TABLE")
    elif code in (1062, 1452, 1451, 1048, 1364):
        hint += ("; the target's rows or constraints differ from the source's: compare with "
                 "`binlog verify-rows`")
    elif code == 8004:      # TiDB's ErrTxnTooLarge (pkg/errno/errcode.go)
        hint += ("; the batch is larger than TiDB's txn-total-size-limit (its config's "
                 "[performance] section, 100 MiB by default): give a smaller --batch-rows and "
                 "--batch-transactions, or raise the limit (a single source transaction larger "
                 "than it needs the limit raised)")
    return hint
