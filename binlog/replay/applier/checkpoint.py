"""The checkpoint store: a table on the target (``--checkpoint-table``) holding the
stream's row (``--checkpoint-name``) and, with --workers, each worker's row
(``NAME/i``).  A row is written in the same target transaction as the changes it
records, so what the target committed and what the row says never differ (exactly
once); replay.parallel says what a worker's row holds and how a restart reads them."""
from __future__ import annotations

from typing import Any

from schema_store.store import file_key

from ...output.sql.literals import quote_ident, quote_text
from ..parallel import Mark, Resume, encode_ends, resume_point
from .executor import Executor

Position = tuple[str, int]


def pos_key(position: Position):
    """A position's order: binlog files by their number, then the offset."""
    return (file_key(position[0]), position[1])


def _like_prefix(name: str) -> str:
    """LIKE pattern of the workers' rows of checkpoint ``name``: ``name/%``."""
    return name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"


def _checkpoint_row(r: dict) -> dict:
    """A row of the checkpoint table as replay.parallel.resume_point reads it."""
    def text(v):
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else v

    return {"name": text(r["name"]), "file": text(r["binlog_file"]), "pos": int(r["binlog_pos"]),
            "gtid": text(r["gtid"]), "gtid_pos": text(r["gtid_pos"]),
            "resume_file": text(r["resume_file"]), "resume_pos": int(r["resume_pos"]),
            "transactions": int(r["transactions"]), "row_changes": int(r["row_changes"]),
            "committed": text(r.get("committed"))}


_UPSERT = ("ON DUPLICATE KEY UPDATE binlog_file = VALUES(binlog_file), binlog_pos = "
           "VALUES(binlog_pos), gtid = VALUES(gtid), gtid_pos = VALUES(gtid_pos), resume_file "
           "= VALUES(resume_file), resume_pos = VALUES(resume_pos), transactions = "
           "VALUES(transactions), row_changes = VALUES(row_changes)")


class CheckpointStore:
    """The rows of one stream (``name``) in the checkpoint table; ``current`` is the
    stream's checkpoint as the target holds it (what a message says to resume from)."""

    def __init__(self, table: str, name: str):
        db, _, tbl = table.partition(".")
        self.db, self.table = db.strip("`"), tbl.strip("`")
        self.ident = f"{quote_ident(self.db)}.{quote_ident(self.table)}"
        self.name = name
        self.current: dict[str, Any] | None = None

    def text(self) -> str:
        cp = self.current
        if cp is None:
            return "not set (nothing applied yet)"
        return f"{cp['file']}:{cp['pos']}" + (f" (GTID {cp['gtid']})" if cp.get("gtid") else "")

    def ensure_table(self, session: Executor) -> None:
        conn = session.conn
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote_ident(self.db)}")
            cur.execute(f"""CREATE TABLE IF NOT EXISTS {self.ident} (
  name         VARCHAR(64)     NOT NULL PRIMARY KEY,
  binlog_file  VARCHAR(255)    NOT NULL,
  binlog_pos   BIGINT UNSIGNED NOT NULL,
  gtid         VARCHAR(255)    NULL,
  gtid_pos     TEXT            NULL,
  resume_file  VARCHAR(255)    NOT NULL,
  resume_pos   BIGINT UNSIGNED NOT NULL,
  transactions BIGINT UNSIGNED NOT NULL DEFAULT 0,
  row_changes  BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at   TIMESTAMP(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  source_ts    TIMESTAMP       NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""")
            # a table made before source_ts was kept gets it
            if not self._has_column(cur, "source_ts"):
                cur.execute(f"ALTER TABLE {self.ident} ADD COLUMN source_ts TIMESTAMP NULL")
        conn.commit()

    def _has_column(self, cur, column: str) -> bool:
        cur.execute("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                    "AND TABLE_NAME = %s AND COLUMN_NAME = %s", (self.db, self.table, column))
        return bool(cur.fetchone()[0])

    def load(self, session: Executor) -> set[Position]:
        """The stream's row and its workers' rows: ``current`` becomes the resume point
        (the highest mark); returned are the ends of the transactions committed above it
        (replay.parallel.resume_point), which a run skips.  Workers' rows are folded into
        the stream's row first, in one target transaction, so any number of workers goes
        on from there."""
        conn = session.conn
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {self.ident} WHERE name = %s OR name LIKE %s",
                        (self.name, _like_prefix(self.name)))
            cols = [d[0].lower() for d in cur.description]
            rows = [_checkpoint_row(dict(zip(cols, r, strict=True))) for r in cur.fetchall()]
        conn.commit()
        found = resume_point(rows, pos_key)
        self.current = None
        if found is None:
            return set()
        if len(rows) > 1:
            self.fold(session, found)
        mark = found.mark
        if mark.end is not None and mark.resume is not None:
            self.current = {"file": mark.end[0], "pos": mark.end[1], "gtid": mark.gtid,
                            "gtid_pos": mark.gtid_pos, "resume_file": mark.resume[0],
                            "resume_pos": mark.resume[1], "transactions": found.transactions,
                            "row_changes": found.row_changes}
        # (no mark yet: from the start, skipping those)
        return found.skip

    def fold(self, session: Executor, found: Resume) -> None:
        """Workers' rows into the stream's row: its mark, the committed ends above it,
        the totals; the workers' rows deleted (one target transaction)."""
        self.ensure_committed_column(session)
        sql = self.worker_row(self.name, found.mark, (found.transactions, found.row_changes),
                              sorted(found.skip, key=pos_key))
        try:
            with session.conn.cursor() as cur:
                cur.execute(sql)
                cur.execute(f"DELETE FROM {self.ident} WHERE name LIKE %s", (_like_prefix(self.name),))
            session.conn.commit()
        except Exception as exc:
            raise session.translate(exc, None) from exc

    def clear_workers(self, session: Executor) -> None:
        """--reset-checkpoint: the workers' rows and committed lists go too."""
        conn = session.conn
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {self.ident} WHERE name LIKE %s", (_like_prefix(self.name),))
            if self._has_column(cur, "committed"):
                cur.execute(f"UPDATE {self.ident} SET committed = NULL WHERE name = %s", (self.name,))
        conn.commit()

    def ensure_committed_column(self, session: Executor) -> None:
        """The ends of the transactions a worker committed above its mark (--workers)."""
        with session.conn.cursor() as cur:
            if not self._has_column(cur, "committed"):
                cur.execute(f"ALTER TABLE {self.ident} ADD COLUMN committed MEDIUMTEXT NULL")
        session.conn.commit()

    def worker_row(self, name: str, mark: Mark, totals: tuple[int, int], ends) -> str:
        """A worker's checkpoint row (or the folded stream's row): its mark, the ends of
        the transactions committed above it (replay.parallel)."""
        end = mark.end or ("", 0)
        resume = mark.resume or ("", 0)
        committed = encode_ends(ends)
        values = [quote_text(name), quote_text(end[0]), str(end[1]),
                  quote_text(mark.gtid) if mark.gtid else "NULL",
                  quote_text(mark.gtid_pos) if mark.gtid_pos else "NULL",
                  quote_text(resume[0]), str(resume[1]), str(totals[0]), str(totals[1]),
                  quote_text(committed) if committed else "NULL"]
        return (f"INSERT INTO {self.ident} (name, binlog_file, binlog_pos, gtid, gtid_pos, "
                f"resume_file, resume_pos, transactions, row_changes, committed) VALUES "
                f"({', '.join(values)}) {_UPSERT}, committed = VALUES(committed)")

    def stream_row(self, end: Position, gtid: str | None, gtid_pos: str | None, resume: Position,
                   totals: tuple[int, int], source_ts: int | None) -> str:
        """The stream's row (--workers 1), written in each batch's commit."""
        values = [quote_text(self.name), quote_text(end[0]), str(end[1]),
                  quote_text(gtid) if gtid else "NULL",
                  quote_text(gtid_pos) if gtid_pos else "NULL",
                  quote_text(resume[0]), str(resume[1]), str(totals[0]), str(totals[1]),
                  _source_ts_sql(source_ts)]
        return (f"INSERT INTO {self.ident} (name, binlog_file, binlog_pos, gtid, gtid_pos, "
                f"resume_file, resume_pos, transactions, row_changes, source_ts) VALUES "
                f"({', '.join(values)}) {_UPSERT}, "
                "source_ts = COALESCE(VALUES(source_ts), source_ts)")

    def update_source_ts(self, session: Executor, source_ts: int | None) -> None:
        """The stream's row's source time alone moved on (a live source is idle)."""
        try:
            with session.conn.cursor() as cur:
                cur.execute(f"UPDATE {self.ident} SET source_ts = {_source_ts_sql(source_ts)} "
                            f"WHERE name = %s", (self.name,))
            session.conn.commit()
        except Exception as exc:
            raise session.translate(exc, None, what="the update of the checkpoint's source_ts") from exc


def _source_ts_sql(source_ts: int | None) -> str:
    # FROM_UNIXTIME in the session's time_zone '+00:00' (SESSION_SETUP): exact
    return f"FROM_UNIXTIME({int(source_ts)})" if source_ts else "NULL"
