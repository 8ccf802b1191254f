"""Several statements in one request (``apply --workers``): a worker sends the
statements of every transaction queued to it as one multi-statement COM_QUERY, and its
checkpoint row with COMMIT as another, so a batch costs one round trip per drain of its
queue and one for the commit, where one statement per request costs one per statement.

The server runs the statements of such a request in order and stops at the first that
fails (sql_parse.cc ``dispatch_command``: COM_QUERY parses and executes one statement,
then goes on with the rest of the packet while ``thd->is_error()`` is false); each
statement sends its own result (OK packet with affected rows and warnings, flagged
SERVER_MORE_RESULTS_EXISTS while more follow).  TiCDC's MySQL sink sends its DML the
same way (its ``multi-stmt-enable``).  The connection must have been opened with
CLIENT_MULTI_STATEMENTS.

A request that fails, or whose statements raised warnings, is not examined here: the
caller rolls its transaction back and applies the same jobs one statement at a time,
where every error and warning is named exactly as with one worker.
"""
from __future__ import annotations

#: the statements of one request stop growing past this many bytes (the target's
#: max_allowed_packet is 16 MiB by default; a single statement larger than this goes
#: alone)
PACKET_BYTES = 1 << 20


#: what the server says to retry: lock wait timeout, deadlock (the transaction, or the
#: statement, was rolled back: InnoDB's ER_LOCK_WAIT_TIMEOUT / ER_LOCK_DEADLOCK)
RETRYABLE = {1205, 1213}


class PacketFailed(Exception):
    """The request failed or raised warnings: roll back, apply one statement at a time.
    ``retryable``: the server refused it with a deadlock or lock wait timeout."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.retryable = code in RETRYABLE


def execute_packet(conn, statements: list[str]) -> list[int]:
    """Run ``statements`` as one request; the affected rows of each.  PacketFailed when
    the server refused one (the rest did not run) or any raised a warning."""
    import pymysql

    affected: list[int] = []
    warnings = 0
    try:
        with conn.cursor() as cur:
            cur.execute(";\n".join(statements))
            while True:
                affected.append(cur.rowcount)
                warnings += cur.warning_count
                if not cur.nextset():
                    break
    except (pymysql.err.MySQLError, OSError) as exc:
        code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
        message = exc.args[1] if code is not None and len(exc.args) > 1 else str(exc)
        raise PacketFailed(f"{message} (statement {len(affected) + 1} of {len(statements)} of "
                           f"one request)", code if isinstance(code, int) else None) from exc
    if len(affected) != len(statements):
        raise PacketFailed(f"{len(affected)} results for {len(statements)} statements")
    if warnings:
        raise PacketFailed(f"{warnings} warning(s)")
    return affected
