"""The applier of ``binlog apply`` (binlog.commands.apply): source transactions from a
reader applied on a target through PyMySQL, with the checkpoint row in the same target
transaction (exactly once), the pipeline thread, --method binlog and --workers N.  The
command's module docstring says what it does; this module is the machinery."""
from __future__ import annotations

import os
import queue
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import pymysql

from ..assembly.routines import routine_kind, strip_definer
from ..assembly.transactions import change_rows
from ..errors import TargetError
from ..output.sql import _short
from .batch import encode_event, row_numbers

if TYPE_CHECKING:       # imported where used: a run of --workers 1 or --method sql needs neither
    from .binlog_statements import RawEvents
    from .parallel import Pool

# What closing or rolling back a connection that already failed may raise.
_GONE = (OSError, pymysql.err.Error)


def close_quietly(conn) -> None:
    """Close a target connection that may be broken already (then there is nothing left
    to close, and nothing to report)."""
    try:
        conn.close()
    except _GONE:
        pass        # the connection is already broken

CONNECTION_ERRORS = {2003, 2006, 2013, 2014, 2055, 1927, 4031, 1053}
RETRYABLE_ERRORS = {1205, 1213}          # lock wait timeout, deadlock
DDL_ALREADY_DONE = {1050, 1051, 1007, 1008, 1060, 1061, 1091, 1146, 1176}
MAX_WORKERS = 256
# From a live source (--from) a batch is committed once it is this old, and whenever the
# source is idle (a heartbeat): the target lags the source by about this much.
LIVE_BATCH_SECONDS = 1.0


@dataclass
class ApplyOptions:
    """What the applier does: ``binlog apply``'s options, checked (commands.apply.run
    makes one of its arguments; the names are the options')."""

    to: str                                 # the target's DSN
    paths: list[str] = field(default_factory=list)     # binlog files or directories
    from_dsn: str | None = None             # a live source instead (ApplyInput.open_live)
    checkpoint_table: str = "binlog_apply.checkpoint"
    checkpoint_name: str = "default"
    reset_checkpoint: bool = False
    batch_transactions: int = 200
    batch_rows: int = 5000
    method: str = "sql"                     # or "binlog"
    safe: bool = True
    split_updates: bool = False
    no_ddl: bool = False
    routines: bool = False
    strip_definer: bool = False
    rewrite_db: list[tuple[str, str]] = field(default_factory=list)
    allow_triggers: bool = False
    skip_statements: bool = False
    retries: int = 3
    retry_timeout: float = 60.0
    workers: int = 1
    quiet: bool = False
    allow_gaps: bool = False
    start_position: int | None = None
    start_file: str | None = None
    stop_position: int | None = None


@dataclass
class ApplyInput:
    """How the applier opens its target and its input, and where its messages go: the
    command's functions (commands._common) handed down, so that this module imports no
    command.  A test gives the same ones (commands.apply.input_of)."""

    connect: Callable[..., Any]             # (dsn, **PyMySQL options): a connection, or TargetError
    open_schema: Callable[[], Any]          # the schema resolver (None: none given)
    table_filter: Callable[[], Any]         # the TableFilter of the filter options
    open_reader: Callable[..., Any]         # a BinlogReader: make_reader's keywords
    open_live: Callable[..., Any]           # the live source: start=(file, pos), on_idle=
    check_positions: Callable[[Sequence[str | os.PathLike[str]], int | None, int | None], None]
    progress: Callable[[Any, Iterable], Iterator]      # (reader, items): with a progress line
    warn_unmatched: Callable[..., None]     # (reader, own=patterns): filters that matched nothing
    warn: Callable[[str], None]
    watermark_interval: float | None = None     # a live source's (binlog.watermarks)


class ConnectionLost(Exception):
    pass


def _pos_key(position):
    from schema_store.store import file_key

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


class Applier:
    def __init__(self, args: ApplyOptions, io: ApplyInput):
        self.args = args
        self.io = io
        self.warn = io.warn
        db, _, table = args.checkpoint_table.partition(".")
        from ..output.sql import quote_ident

        self.cp_db, self.cp_table = db.strip("`"), table.strip("`")
        self.cp_ident = f"{quote_ident(self.cp_db)}.{quote_ident(self.cp_table)}"
        self.conn: Any = None       # the target connection (PyMySQL's, untyped): self.target
        self.schema = None
        # what the target committed (a batch counts once its COMMIT succeeded)
        self.stats = {"transactions": 0, "rows": 0, "ddl": 0, "statements": 0, "skipped": 0,
                      "commits": 0, "replaced": 0}
        self.commit_attempts = 0    # numbers the commits for the BINLOG_APPLY_FAULT hooks
        self.batch_replaced = 0     # target rows REPLACE deleted and replaced, open batch
        self.warned_replaced = 0
        self.checkpoint: dict[str, Any] | None = None      # as stored on the target
        self.fault = _parse_fault(os.environ.get("BINLOG_APPLY_FAULT"))
        self._routines_warned = False
        self._trigger_checked: set[tuple[str, str]] = set()
        self.meta = None            # information_schema connection (_meta_conn)
        self._meta_lock = threading.Lock()
        self.feed: _Feed | None = None      # the running pipeline (_run_once)
        self.pending_start = None   # where the oldest XA PREPARE waiting for its COMMIT starts
        self.raw: RawEvents | None = None       # --method binlog
        self.in_flight = False      # a transaction sent early (_Early) is being applied
        self.replaced_before_early = 0
        self.source_ts: int | None = None   # the last watermark's ts (_watermark), --from
        self.progress: Any = None           # the live source's progress line
        self.skip_ends: set = set()     # committed by workers above the checkpoint (--workers)
        self.skip_max = None
        self.pool: Pool | None = None           # --workers: the running pool

    # -- connection ----------------------------------------------------------------------
    @property
    def target(self) -> Any:
        """The target connection of this run (or worker): open from _connect on."""
        if self.conn is None:
            raise RuntimeError("the applier used its target connection before connecting")
        return self.conn

    def _connect(self, client_flag: int = 0):
        from ..output.sql import SESSION_SETUP

        # the client's own packet limit (PyMySQL: 16 MiB) is not the one that matters:
        # the target's max_allowed_packet is (checked before a BINLOG statement is sent)
        conn = self.io.connect(self.args.to, autocommit=False, max_allowed_packet=1 << 30,
                               client_flag=client_flag)
        try:
            with conn.cursor() as cur:
                for stmt in SESSION_SETUP:
                    cur.execute(stmt)
        except Exception as exc:
            raise self._translate(exc, None) from exc
        self.conn = conn
        self.sent_fde = None        # the FORMAT_DESCRIPTION this session's BINLOGs read with
        self.in_flight = False
        self._live_cache: dict = {}
        self._trigger_checked = set()

    def _meta_conn(self):
        """A connection of its own for information_schema: the decoding thread asks it
        while the applying thread's connection is busy (under ``_meta_lock``)."""
        if self.meta is None:
            self.meta = self.io.connect(self.args.to, autocommit=True)
        return self.meta

    def _close_meta(self) -> None:
        if self.meta is not None:
            close_quietly(self.meta)
            self.meta = None

    def abort(self) -> None:
        self._stop_pipeline()
        if self.pool is not None:
            self.pool.stop()
        self.batch_replaced = 0
        self._close_meta()
        if self.conn is not None:
            try:
                self.target.rollback()
            except _GONE:
                pass        # the connection is already broken: nothing left to undo
            close_quietly(self.conn)
            self.conn = None

    def _live(self, db, table):
        from ..replay.keys import load_live_tables

        key = (db, table)
        with self._meta_lock:
            if key not in self._live_cache:
                found = load_live_tables(self._meta_conn(), db, table)
                self._live_cache[key] = found.get(key)
            return self._live_cache[key]

    # -- checkpoint ----------------------------------------------------------------------
    def _ensure_checkpoint_table(self) -> None:
        from ..output.sql import quote_ident

        with self.target.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote_ident(self.cp_db)}")
            cur.execute(f"""CREATE TABLE IF NOT EXISTS {self.cp_ident} (
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
            cur.execute("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                        "AND TABLE_NAME = %s AND COLUMN_NAME = 'source_ts'", (self.cp_db, self.cp_table))
            if not cur.fetchone()[0]:
                cur.execute(f"ALTER TABLE {self.cp_ident} ADD COLUMN source_ts TIMESTAMP NULL")
        self.target.commit()

    def _load_checkpoint(self):
        """The stream's row and its workers' rows (``NAME/i``, --workers): the resume
        point is the highest mark, the committed transactions above it are skipped
        (replay.parallel.resume_point).  Workers' rows are folded into the stream's row
        first, in one target transaction, so any number of workers goes on from there."""
        from ..replay.parallel import resume_point

        name = self.args.checkpoint_name
        with self.target.cursor() as cur:
            cur.execute(f"SELECT * FROM {self.cp_ident} WHERE name = %s OR name LIKE %s",
                        (name, _like_prefix(name)))
            cols = [d[0].lower() for d in cur.description]
            rows = [_checkpoint_row(dict(zip(cols, r, strict=True))) for r in cur.fetchall()]
        self.target.commit()
        found = resume_point(rows, _pos_key)
        self.skip_ends = found.skip if found is not None else set()
        self.skip_max = max(map(_pos_key, self.skip_ends)) if self.skip_ends else None
        if found is None:
            return None
        if len(rows) > 1:
            self._fold_rows(found)
        mark = found.mark
        if mark.end is None or mark.resume is None:
            return None         # nothing below a mark yet: from the start, skipping those
        return {"file": mark.end[0], "pos": mark.end[1], "gtid": mark.gtid,
                "gtid_pos": mark.gtid_pos, "resume_file": mark.resume[0],
                "resume_pos": mark.resume[1], "transactions": found.transactions,
                "row_changes": found.row_changes}

    def _fold_rows(self, found) -> None:
        """Workers' rows into the stream's row: its mark, the committed ends above it,
        the totals; the workers' rows deleted (one target transaction)."""
        self._ensure_committed_column()
        sql = self._row_sql(self.args.checkpoint_name, found.mark,
                            (found.transactions, found.row_changes), sorted(found.skip, key=_pos_key))
        try:
            with self.target.cursor() as cur:
                cur.execute(sql)
                cur.execute(f"DELETE FROM {self.cp_ident} WHERE name LIKE %s",
                            (_like_prefix(self.args.checkpoint_name),))
            self.target.commit()
        except Exception as exc:
            raise self._translate(exc, None) from exc

    def _clear_worker_rows(self) -> None:
        """--reset-checkpoint: the workers' rows and committed lists go too."""
        with self.target.cursor() as cur:
            cur.execute(f"DELETE FROM {self.cp_ident} WHERE name LIKE %s",
                        (_like_prefix(self.args.checkpoint_name),))
            if self._has_committed_column():
                cur.execute(f"UPDATE {self.cp_ident} SET committed = NULL WHERE name = %s",
                            (self.args.checkpoint_name,))
        self.target.commit()
        self.skip_ends, self.skip_max = set(), None

    def _has_committed_column(self) -> bool:
        with self.target.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                        "AND TABLE_NAME = %s AND COLUMN_NAME = 'committed'",
                        (self.cp_db, self.cp_table))
            return bool(cur.fetchone()[0])

    def _ensure_committed_column(self) -> None:
        """The ends of the transactions a worker committed above its mark (--workers)."""
        if not self._has_committed_column():
            with self.target.cursor() as cur:
                cur.execute(f"ALTER TABLE {self.cp_ident} ADD COLUMN committed MEDIUMTEXT NULL")
        self.target.commit()

    def _row_sql(self, name, mark, totals, ends) -> str:
        """A worker's checkpoint row (or the folded stream's row): its mark, the ends of
        the transactions committed above it (replay.parallel)."""
        from ..output.sql import quote_text
        from ..replay.parallel import encode_ends

        end = mark.end or ("", 0)
        resume = mark.resume or ("", 0)
        committed = encode_ends(ends)
        values = [quote_text(name), quote_text(end[0]), str(end[1]),
                  quote_text(mark.gtid) if mark.gtid else "NULL",
                  quote_text(mark.gtid_pos) if mark.gtid_pos else "NULL",
                  quote_text(resume[0]), str(resume[1]), str(totals[0]), str(totals[1]),
                  quote_text(committed) if committed else "NULL"]
        return (f"INSERT INTO {self.cp_ident} (name, binlog_file, binlog_pos, gtid, gtid_pos, "
                f"resume_file, resume_pos, transactions, row_changes, committed) VALUES "
                f"({', '.join(values)}) ON DUPLICATE KEY UPDATE binlog_file = VALUES(binlog_file), "
                "binlog_pos = VALUES(binlog_pos), gtid = VALUES(gtid), gtid_pos = VALUES(gtid_pos), "
                "resume_file = VALUES(resume_file), resume_pos = VALUES(resume_pos), transactions = "
                "VALUES(transactions), row_changes = VALUES(row_changes), committed = VALUES(committed)")

    def _checkpoint_sql(self, end, gtid, resume, txs, rows) -> str:
        from ..output.sql import quote_text

        gtid_pos = self._gtid_pos_text()
        values = [quote_text(self.args.checkpoint_name), quote_text(end[0]), str(end[1]),
                  quote_text(gtid) if gtid else "NULL",
                  quote_text(gtid_pos) if gtid_pos else "NULL",
                  quote_text(resume[0]), str(resume[1]), str(txs), str(rows), self._source_ts_sql()]
        return (f"INSERT INTO {self.cp_ident} (name, binlog_file, binlog_pos, gtid, gtid_pos, "
                f"resume_file, resume_pos, transactions, row_changes, source_ts) VALUES "
                f"({', '.join(values)}) "
                "ON DUPLICATE KEY UPDATE binlog_file = VALUES(binlog_file), binlog_pos = "
                "VALUES(binlog_pos), gtid = VALUES(gtid), gtid_pos = VALUES(gtid_pos), resume_file "
                "= VALUES(resume_file), resume_pos = VALUES(resume_pos), transactions = "
                "VALUES(transactions), row_changes = VALUES(row_changes), "
                "source_ts = COALESCE(VALUES(source_ts), source_ts)")

    def _source_ts_sql(self) -> str:
        # FROM_UNIXTIME in the session's time_zone '+00:00' (SESSION_SETUP): exact
        return f"FROM_UNIXTIME({int(self.source_ts)})" if self.source_ts else "NULL"

    def _watermark(self, mark) -> None:
        """A watermark of the live source: every change it committed before it has been
        given to the target (the open batch included), so the checkpoint's time is its
        ts.  At a heartbeat (idle) the batch is committed with it, or, with no batch
        open, the row's source_ts alone is moved on."""
        self.source_ts = max(self.source_ts or 0, mark.ts)
        if self.progress is not None:
            self.progress.note(f"applied lag {max(0, int(time.time()) - mark.ts)} s")
        if not mark.idle or self.in_flight:
            return
        if self.pending_cp is not None:
            self._commit()
        elif self.checkpoint is not None:
            try:
                with self.target.cursor() as cur:
                    cur.execute(f"UPDATE {self.cp_ident} SET source_ts = {self._source_ts_sql()} "
                                f"WHERE name = %s", (self.args.checkpoint_name,))
                self.target.commit()
            except Exception as exc:
                raise self._translate(exc, None, what="the update of the checkpoint's source_ts") from exc

    def _gtid_pos_text(self) -> str | None:
        if not self.gtid_domains:
            return None
        return ",".join(self.gtid_domains[d] for d in sorted(self.gtid_domains))

    def _note_gtid(self, gtid: str | None) -> None:
        if gtid and gtid.count("-") == 2 and gtid.replace("-", "").isdigit():
            self.gtid_domains[int(gtid.split("-")[0])] = gtid

    def checkpoint_text(self) -> str:
        cp = self.checkpoint
        if cp is None:
            return "not set (nothing applied yet)"
        return f"{cp['file']}:{cp['pos']}" + (f" (GTID {cp['gtid']})" if cp.get("gtid") else "")

    # -- main loop -----------------------------------------------------------------------
    def run(self) -> int:
        import pymysql

        self.schema = self.io.open_schema()
        attempts = 0
        while True:
            try:
                try:
                    self._connect()
                    self._ensure_checkpoint_table()
                    self._run_once()
                except (pymysql.err.Error, OSError) as exc:
                    # anything not already translated (checkpoint table, information_schema)
                    raise self._translate(exc, None) from exc
                self.report(final=True)
                return 0
            except ConnectionLost as exc:
                self.abort()
                attempts += 1
                if attempts > self.args.retries:
                    raise TargetError(f"{exc}; gave up after {self.args.retries} retries",
                                      hint="the target's checkpoint says where to resume: run "
                                           "the same command again") from None
                self.warn(f"{exc}; reconnecting and resuming from the checkpoint (retry {attempts} "
                     f"of {self.args.retries}, for up to {self.args.retry_timeout:g}s)")
                self._wait_for_target()
            finally:
                self._stop_pipeline()
                self._close_meta()
                if self.conn is not None:
                    close_quietly(self.conn)
                    self.conn = None

    def _wait_for_target(self) -> None:
        """After a lost connection: try to connect with growing pauses (0.5 s doubling up
        to 10 s) until the target accepts or --retry-timeout seconds have passed (a
        restarting server refuses connections for a while); the run then reconnects."""
        deadline = time.monotonic() + self.args.retry_timeout
        delay = 0.5
        while True:
            try:
                probe = self.io.connect(self.args.to)
                probe.close()
                return
            except TargetError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TargetError(f"{exc.message}; still refused after "
                                      f"{self.args.retry_timeout:g}s of retries",
                                      hint="the target's checkpoint says where to resume: run "
                                           "the same command again once it is up") from None
                time.sleep(min(delay, left))
                delay = min(delay * 2, 10)

    def _run_once(self) -> None:
        from ..assembly.transactions import TxAssembler
        from ..errors import UsageError
        from ..filters import TableFilter
        from ..output.sql import SqlRenderer
        from ..replay.keys import KeyCatalog
        from ..sources.file import expand_paths
        from ..sources.stream import binlog_name

        args = self.args
        self.checkpoint = None if args.reset_checkpoint else self._load_checkpoint()
        if args.reset_checkpoint:
            self._clear_worker_rows()
            args.reset_checkpoint = False         # a retry resumes from what this run wrote
        live = bool(args.from_dsn)
        files = [] if live else expand_paths(args.paths, allow_gaps=args.allow_gaps, on_warning=self.warn)
        start_position = args.start_position
        self.applied = None
        self.gtid_domains: dict[int, str] = {}
        self.totals = (0, 0)
        self.source_ts = None
        source = None
        if live and self.checkpoint is not None:
            cp = self.checkpoint
            source = self.io.open_live(start=(cp["resume_file"], cp["resume_pos"]),
                               on_idle=self._idle)
            start_position = 4          # the source starts at the checkpoint itself
            self.applied = (cp["file"], cp["pos"])
            self.totals = (cp["transactions"], cp["row_changes"])
            for g in (cp["gtid_pos"] or "").split(","):
                self._note_gtid(g.strip())
            if args.start_position is not None or args.start_file:
                self.warn(f"--start-file/--start-position ignored: resuming from the checkpoint "
                     f"{self.checkpoint_text()}")
        elif live:
            source = self.io.open_live(on_idle=self._idle)
        elif self.checkpoint is not None:
            cp = self.checkpoint
            names = [binlog_name(f) for f in files]
            if cp["resume_file"] not in names:
                if all(_pos_key((n, 0)) < _pos_key((cp["resume_file"], 0)) for n in names):
                    sys.stderr.write(f"binlog apply: the checkpoint ({self.checkpoint_text()}) is "
                                     f"past every file given: nothing to do\n")
                    return
                raise UsageError(
                    f"the target's checkpoint resumes at {cp['resume_file']}:{cp['resume_pos']}, "
                    f"which is not among the files given ({names[0]} ... {names[-1]})",
                    hint="give the files from that one on, or --reset-checkpoint to start over")
            files = files[names.index(cp["resume_file"]):]
            start_position = cp["resume_pos"]
            self.applied = (cp["file"], cp["pos"])
            self.totals = (cp["transactions"], cp["row_changes"])
            for g in (cp["gtid_pos"] or "").split(","):
                self._note_gtid(g.strip())
            if args.start_position is not None:
                self.warn(f"--start-position ignored: resuming from the checkpoint {self.checkpoint_text()}")
        base = self.io.table_filter()
        tf = TableFilter(base.include, base.exclude + [f"{self.cp_db}.{self.cp_table}"], base.databases)
        self.filter = tf
        if self.checkpoint is None and not live:
            self.io.check_positions(files, start_position, args.stop_position)
        reader = self.io.open_reader(paths=source if live else files, start_position=start_position,
                                     schema=self.schema, table_filter=tf,
                                     count_rows=args.method == "binlog",
                                     watermark_interval=self.io.watermark_interval if live else None)
        self.progress = getattr(source, "progress", None)
        from ..assembly.rewrite_db import DbRewrite

        # --rewrite-db: rows and statements go to TO; the filters and the schema store
        # see the binlog's names, the target's keys and triggers are TO's
        self.rewrite = DbRewrite(dict(args.rewrite_db), self.warn)
        self.keys = KeyCatalog(schema=self.schema,
                               live=lambda db, table: self._live(self.rewrite.db(db), table))
        self.renderer = SqlRenderer(self.keys, safe=args.safe, rewrite_db=dict(args.rewrite_db))
        if args.method == "sql" and not args.split_updates:
            # the rows events of the transaction being read: the compiled walk writes their
            # row images' VALUES from their bytes (SqlRenderer.row_values)
            self.renderer.events = {}
            reader.set_output_paths(rows_hook=self.renderer.note_event,
                                    row_encoder=partial(encode_event, self.renderer))
        self.raw = self._binlog_method(reader) if args.method == "binlog" else None
        assembler = TxAssembler(on_warning=self.warn)
        self.assembler = assembler
        self.batch_txs = 0
        self.batch_rows = 0
        self.pending_cp: tuple | None = None
        self.batch_done: list[tuple] = []     # (transaction, checkpoint, its parts or None) applied in the open batch
        self.first_unit = self.checkpoint is not None
        if args.workers > 1:
            self._parallel(reader, assembler)
            return
        self._pipeline(reader, assembler)
        self._commit()

    # -- --workers N ---------------------------------------------------------------------
    def _parallel(self, reader, assembler) -> None:
        """Decoding, rendering and dispatching in a thread of their own (_produce_jobs),
        the workers' sessions in theirs (replay.parallel.Pool); this thread waits and
        shows progress."""
        from ..replay.parallel import Mark, Options, Pool, Tracker

        self._ensure_committed_column()
        cp = self.checkpoint
        start = Mark(None, None)
        if cp is not None:
            start = Mark((cp["file"], cp["pos"]), (cp["resume_file"], cp["resume_pos"]),
                         cp["gtid"], cp["gtid_pos"])
        tracker = Tracker(start, _pos_key)
        sessions: list = []
        try:
            sessions.append(_WorkerSession(self, 0, tracker))   # the others as the pool needs them
            pool = self.pool = Pool(sessions, tracker, Options(
                self.args.batch_transactions, self.args.batch_rows, on_retry=self.warn),
                lambda i: _append(sessions, _WorkerSession(self, i, tracker)), self.args.workers)
            thread = threading.Thread(target=self._produce_jobs, args=(reader, assembler, pool),
                                      name="binlog-apply-decode", daemon=True)
            thread.start()
            progress = _WorkersProgress(pool, tracker, quiet=self.args.quiet)
            try:
                pool.join(progress.tick)
            except TargetError as exc:
                exc.message += (f"\n  every worker stopped; what they applied before it is "
                                f"committed ({tracker.committed} transaction(s) in this run), "
                                f"and each worker's checkpoint row says what")
                raise
            finally:
                progress.close()
            thread.join(1.0)
            self._fold_finished(tracker, sessions)
        finally:
            self._end_parallel(sessions, tracker)

    def _fold_finished(self, tracker, sessions) -> None:
        """The input is applied to its end: the workers' rows become the stream's row,
        at the end (a rerun starts there, with nothing to skip)."""
        from ..replay.parallel import Resume

        if tracker.mark.end is None:
            return
        cp = self.checkpoint or {}
        totals = (cp.get("transactions", 0) + sum(s.totals[0] for s in sessions),
                  cp.get("row_changes", 0) + sum(s.totals[1] for s in sessions))
        self._fold_rows(Resume(tracker.mark, set(), *totals))

    def _end_parallel(self, sessions, tracker) -> None:
        if self.pool is not None:
            self.pool.stop()
            self.pool.wait(30.0)    # each worker commits what it applied, then ends
            self.pool = None
        for session in sessions:
            for key, value in session.stats.items():
                self.stats[key] += value
            session.close()
        mark = tracker.mark
        if mark.end is not None:
            self.checkpoint = {"file": mark.end[0], "pos": mark.end[1], "gtid": mark.gtid}

    def _produce_jobs(self, reader, assembler, pool) -> None:
        from ..assembly.transactions import Transaction
        from ..reader import SourceEvent
        from ..replay.parallel import Stopped

        keys, renderer = self.keys, self.renderer
        try:
            for item in reader.items():
                if isinstance(item, SourceEvent):
                    keys.observe(item.event)
                for unit in assembler.feed(item):
                    self._dispatch(pool, self._job(unit, assembler.pending_start, renderer), renderer)
                    if isinstance(unit, Transaction) and renderer.events:
                        renderer.events.clear()
            self.io.warn_unmatched(reader, own=(f"--exclude-table {self.cp_db}.{self.cp_table}",))
            for unit in assembler.finish():
                sys.stderr.write(f"binlog apply: {unit.label}: the input ends before its "
                                 f"COMMIT; not applied (the next run resumes before it)\n")
            pool.finish()
        except Stopped:
            return
        except BaseException as exc:        # noqa: BLE001 - given to the main thread
            pool.stop(exc)

    def _dispatch(self, pool, job, renderer) -> None:
        """A large transaction runs alone, its statements rendered as the worker
        executes them (replay.parallel.PartStream); any other job is dispatched whole."""
        if not job.streamed:
            pool.submit(job)
            return
        from ..replay.parallel import PartStream

        stream = job.parts = PartStream(pool.tracker)
        pool.submit(job, wait=False)
        try:
            for part in self._parts(job.unit, renderer):
                stream.put(part)
        finally:
            if not pool.tracker.stopped:
                stream.close()
        pool.wait_done(job)

    def _job(self, unit, pending, renderer):
        """A replay.parallel.Job: a transaction rendered, with its conflict keys; a
        statement group (DDL, statement-logged) a barrier."""
        from ..assembly.transactions import Transaction
        from ..replay.parallel import Job, conflict_keys

        end = unit.end
        resume = end if pending is None or _pos_key(end) < _pos_key(pending) else pending
        is_tx = isinstance(unit, Transaction)
        job = Job(unit, None, None, end, resume, unit.gtid, unit.rows if is_tx else 0,
                  unit.ts, skip=self._done(end))
        if job.skip:
            self.stats["skipped"] += is_tx
            return job
        if is_tx and not unit.statements:
            if unit.rows >= self.args.batch_rows:
                job.streamed = True         # a barrier (no keys), rendered as it runs
                return job
            job.parts = list(self._parts(unit, renderer))
            job.keys = conflict_keys(unit, self.keys.keys)
        return job

    def _binlog_method(self, reader):
        """--method binlog: the reader counts the rows of the tables whose events go on
        as they are (and keeps their bytes); those of the others are decoded for SQL."""
        from ..replay.binlog_statements import RawEvents

        with self.target.cursor() as cur:
            cur.execute("SELECT VERSION(), @@max_allowed_packet")
            version, packet = cur.fetchone()
        self.target.commit()
        if "mariadb" not in str(version).lower():
            from ..errors import UsageError

            raise UsageError(f"--method binlog needs a MariaDB target; this one is {version}",
                             hint="use --method sql (the default)")
        self.max_packet = int(packet)
        # a statement's events before base64 (4/3 larger), below the target's limit
        self.binlog_limit = min(8 << 20, max(1, (self.max_packet - 1024) * 3 // 4))
        reader.count_runs = True
        reader.keep_raw = True
        reader.decode_table = needs_sql
        return RawEvents(lambda table_map, fde: not needs_sql(table_map, fde),
                         dict(self.args.rewrite_db))

    # -- the pipeline --------------------------------------------------------------------
    def _pipeline(self, reader, assembler) -> None:
        """Decoding and rendering in a thread of their own, applying here: PyMySQL waits
        for the target without the GIL, so the next statements are made while the target
        runs the last ones.  A bounded queue (_Feed) holds the producer back; whatever
        it raises is raised here, in order."""
        feed = self.feed = _Feed()
        started = self.applied
        thread = threading.Thread(target=self._produce, args=(reader, assembler, feed, started),
                                  name="binlog-apply-decode", daemon=True)
        thread.start()
        finished = False
        try:
            self._consume(feed)
            finished = True
        finally:
            self._stop_pipeline()
            # after a failure or Ctrl-C the producer may be waiting on a live source:
            # it ends at its next put (daemon thread), this run does not wait for it
            thread.join(None if finished else 1.0)

    def _stop_pipeline(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    def _produce(self, reader, assembler, feed, started) -> None:
        from ..assembly.transactions import DDL, Statement, Transaction
        from ..reader import SourceEvent
        from ..watermarks import Watermark

        keys, renderer = self.keys, self.renderer       # this run's (a retry makes new ones)
        try:
            raw = self.raw
            early = _Early(self, feed, started, renderer)
            for item in self.io.progress(reader, reader.items()):
                if isinstance(item, Watermark):
                    feed.put(("watermark", item))
                    continue
                if isinstance(item, SourceEvent):
                    keys.observe(item.event)
                if raw is not None:
                    raw.feed(item)
                units = assembler.feed(item)
                early.check_dropped(assembler.current, units)
                for unit in units:
                    pending = assembler.pending_start
                    done = ((started is not None and _pos_key(unit.end) <= _pos_key(started))
                            or unit.end in self.skip_ends)
                    render = isinstance(unit, Transaction) and not done
                    feed.put(("unit", unit, pending, render))
                    if render:
                        early.done(unit)
                        for part in self._parts(unit, renderer):
                            feed.put(part)
                        feed.put(("end", None))
                    elif isinstance(unit, Statement) and unit.kind == DDL and not done:
                        feed.wait_applied()     # later rows need the target's new tables
                    if isinstance(unit, Transaction) and renderer.events:
                        renderer.events.clear()     # its events are rendered (or not needed)
                if raw is not None and units and assembler.current is None and not assembler.prepared:
                    raw.clear()     # what no transaction took: rows events without rows
                early.send(assembler.current)
            self.io.warn_unmatched(reader, own=(f"--exclude-table {self.cp_db}.{self.cp_table}",))
            left = assembler.finish()
            early.check_dropped(None, [])
            feed.put(("finish", left))
        except _Stopped:
            return
        except BaseException as exc:        # noqa: BLE001 - given to the applying thread
            feed.put(("error", exc))

    def _consume(self, feed) -> None:
        while True:
            kind, *rest = feed.get()
            if kind == "unit":
                unit, self.pending_start, rendered = rest
                self._unit(unit, self._parts_of(feed) if rendered else None)
                feed.applied()
            elif kind == "early":
                self._early(*rest)
            elif kind == "drop":
                self._drop_early(rest[0])
            elif kind == "watermark":
                self._watermark(rest[0])
            elif kind == "idle":
                if not self.in_flight:          # never commit half a source transaction
                    self._commit()
            elif kind == "finish":
                self._drop_early(None)
                for unit in rest[0]:
                    sys.stderr.write(f"binlog apply: {unit.label}: the input ends before its "
                                     f"COMMIT; not applied (the next run resumes before it)\n")
                return
            elif kind == "error":
                raise rest[0]

    @staticmethod
    def _parts_of(feed):
        """The rendered parts of the transaction being applied, as the producer gives them."""
        while True:
            kind, item = feed.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield kind, item

    def _idle(self) -> None:
        """The live source has nothing new (a heartbeat): commit the open batch(es)."""
        if self.pool is not None:
            self.pool.flush()
        elif self.feed is not None:
            self.feed.put(("idle",))

    # -- statements of a transaction not complete yet (_Early) --------------------------
    def _early(self, tx, part) -> None:
        """Execute a part (("rows", Batch) or ("binlog", Chunk)) of a source transaction
        whose COMMIT has not been read yet: the target works while the rest is read.  A
        savepoint marks where the transaction starts, in case it never commits."""
        from ..errors import BinlogError

        if not self.in_flight:
            try:
                with self.target.cursor() as cur:
                    cur.execute("SAVEPOINT binlog_apply_early")
            except Exception as exc:
                raise self._translate(exc, tx) from exc
            self.in_flight = True
            self.replaced_before_early = self.batch_replaced
        try:
            self._apply_transaction(tx, [part])
        except BinlogError:
            self.in_flight = False
            self._keep_batch_before_failure()
            raise

    def _drop_early(self, tx) -> None:
        """The source transaction sent early ends without COMMIT (the input ends, or a
        new transaction starts): undo what of it the target applied."""
        if not self.in_flight:
            return
        self.in_flight = False
        self.batch_replaced = self.replaced_before_early     # its REPLACEs are undone too
        try:
            with self.target.cursor() as cur:
                cur.execute("ROLLBACK TO SAVEPOINT binlog_apply_early")
        except Exception as exc:
            raise self._translate(exc, tx) from exc

    # -- units ---------------------------------------------------------------------------
    def _done(self, end) -> bool:
        if end is None:
            return False
        return (self.applied is not None and _pos_key(end) <= _pos_key(self.applied)) or end in self.skip_ends

    def _unit(self, unit, parts=None) -> None:
        from ..assembly.transactions import DDL, Statement

        if isinstance(unit, Statement):
            if self._done(unit.end):
                return
            if unit.kind == DDL:
                self._ddl(unit)
            elif unit.kind == "dml":
                # a statement group of its own: applied (and re-applied after a failure
                # later in the batch) as a transaction holding just this statement
                from ..assembly.transactions import Transaction

                tx = Transaction(unit.gtid, (unit.file, unit.pos), end=unit.end, ts=unit.ts,
                                 server_id=unit.server_id, statements=[unit])
                self._apply_unit(tx)
            else:
                self.warn(f"{unit.file} @ {unit.pos}: not replayed: {_short(unit.query)}")
                self._advance(unit.end, unit.gtid, rows=0)
            self.first_unit = False
            return
        tx = unit
        if self._done(tx.end):
            for _ in parts or ():
                pass        # rendered before the checkpoint was known to cover it
            self.stats["skipped"] += 1
            return
        self.first_unit = False
        self._apply_unit(tx, parts)

    def _apply_unit(self, tx, parts=None) -> None:
        from ..errors import BinlogError

        early, self.in_flight = self.in_flight, False
        if self.raw is not None and parts is not None and not early:
            parts = list(parts)
        try:
            self._apply_transaction(tx, parts)
        except BinlogError:         # the target refused it, or it cannot be executed
            self._keep_batch_before_failure()
            raise
        self._advance(tx.end, tx.gtid, rows=tx.rows)
        # BINLOG statements are made once (the events' bytes are not kept): a failure
        # later in the batch applies these again.  A transaction sent early is not kept
        # (its first changes are gone, _Early): its batch ends with it, so nothing later
        # in the batch can make it be applied again.
        kept = parts if self.raw is not None and not early else None
        self.batch_done.append((tx, self.pending_cp, kept))
        if (early or self.batch_txs >= self.args.batch_transactions
                or self.batch_rows >= self.args.batch_rows
                or (self.args.from_dsn and time.monotonic() - self.batch_started >= LIVE_BATCH_SECONDS)):
            self._commit()

    def _execute_statement(self, statement, tx) -> None:
        """A statement-logged change, executed as the source ran it: in its database and
        session (output.sql.statement_sql), then the replay's session is restored.  An
        error the source itself logged for the statement (its error_code) is expected."""
        import pymysql

        from ..output.sql import STATEMENT_RESET, statement_sql

        where = f"{statement.file} @ {statement.pos}"
        if self.args.skip_statements:
            self.warn(f"{where}: statement-based change skipped (--skip-statements): "
                 f"{_short(statement.query, 200)}")
            return
        steps = statement_sql(self.rewrite.statement(statement))   # NotReplayableError (exit 1) names it
        expected = statement.event.error_code
        try:
            with self.target.cursor() as cur:
                try:
                    for step in steps[:-1]:
                        cur.execute(step)
                    try:
                        cur.execute(steps[-1])
                    except pymysql.err.MySQLError as exc:
                        if not (expected and exc.args and exc.args[0] == expected):
                            raise
                finally:
                    for step in STATEMENT_RESET:
                        cur.execute(step)
        except Exception as exc:
            error = self._translate(exc, tx, None, f"{where}: {_short(statement.query, 300)}")
            raise error from exc
        self.stats["statements"] += 1

    def _advance(self, end, gtid, rows) -> None:
        self._note_gtid(gtid)
        pending = self.pending_start
        resume = end if pending is None or _pos_key(end) < _pos_key(pending) else pending
        txs, total_rows = self.totals
        self.totals = (txs + 1, total_rows + rows)
        self.pending_cp = (end, gtid, resume, self.totals)
        if not self.batch_txs:
            self.batch_started = time.monotonic()
        self.batch_txs += 1
        self.batch_rows += rows

    def _commit(self) -> None:
        if self.pending_cp is None:
            return
        end, gtid, resume, totals = self.pending_cp
        self.commit_attempts += 1
        n = self.commit_attempts
        try:
            with self.target.cursor() as cur:
                cur.execute(self._checkpoint_sql(end, gtid, resume, *totals))
            if self.fault == ("kill-before-commit", n):
                os.kill(os.getpid(), signal.SIGKILL)
            if self.fault == ("drop-connection-before-commit", n):
                self.fault = None
                import socket

                self.target._sock.shutdown(socket.SHUT_RDWR)
            self.target.commit()
        except Exception as exc:
            raise self._translate(exc, None, what=f"the commit of a batch ending at {end[0]}:{end[1]}") from exc
        self._count_committed()
        self.checkpoint = {"file": end[0], "pos": end[1], "gtid": gtid}
        self.applied = end
        self.pending_cp = None
        self.batch_txs = self.batch_rows = 0
        self.batch_done = []
        if self.fault == ("kill-after-commit", n):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fault is not None and self.fault[0] == "pause-after-commit" and self.fault[1] == n:
            time.sleep(float(os.environ.get("BINLOG_APPLY_PAUSE", "2")))

    def _count_committed(self) -> None:
        s = self.stats
        s["commits"] += 1
        s["transactions"] += len(self.batch_done)
        s["rows"] += sum(tx.rows for tx, *_ in self.batch_done)
        s["replaced"] += self.batch_replaced
        self.batch_replaced = 0

    def _keep_batch_before_failure(self) -> None:
        """A transaction failed for good: roll back, apply again and commit the batch's
        transactions before it, so the checkpoint stops right before the failing one."""
        self._stop_pipeline()       # the transactions are rendered again, here
        done = self.batch_done
        self.batch_done = []
        self.abort_batch()
        self.pending_cp = None
        if not done:
            return
        try:
            for tx, _, parts in done:
                self._apply_transaction(tx, parts)
            self.pending_cp = done[-1][1]
            self.batch_done = done
            self._commit()
        except (TargetError, ConnectionLost):
            self.abort_batch()

    def abort_batch(self) -> None:
        self.batch_replaced = 0
        try:
            self.target.rollback()
        except _GONE:
            pass            # the connection is already broken: the server rolls back

    def _check_triggers(self, db: str, table: str) -> None:
        """Row events hold the rows the source's triggers wrote; a target trigger would
        write them again.  Refuse a table with triggers unless --allow-triggers."""
        if self.args.allow_triggers or (db, table) in self._trigger_checked:
            return
        with self.target.cursor() as cur:
            cur.execute("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS "
                        "WHERE EVENT_OBJECT_SCHEMA = %s AND EVENT_OBJECT_TABLE = %s "
                        "ORDER BY TRIGGER_NAME", (db, table))
            names = [r[0] for r in cur.fetchall()]
        if names:
            raise TargetError(
                f"target table {db}.{table} has trigger(s) {', '.join(names)}: the binlog's "
                f"row events already hold the rows the source's triggers wrote, and applying "
                f"them here would fire these again",
                hint="drop the triggers on the target for the replay, or give --allow-triggers "
                     "if they must fire")
        self._trigger_checked.add((db, table))

    # -- DDL -----------------------------------------------------------------------------
    def _ddl_kept(self, statement) -> bool:
        from ..output.sql import ddl_kept

        return ddl_kept(statement, self.filter)

    def _ddl(self, statement) -> None:
        if not self._ddl_wanted(statement):
            self._advance(statement.end, statement.gtid, rows=0)
            return
        self._commit()          # DDL commits implicitly: the data before it goes first
        self._run_ddl(statement, self.first_unit)
        self._advance(statement.end, statement.gtid, rows=0)
        self._commit()

    def _where(self, statement) -> str:
        return f"{statement.file} @ {statement.pos}" + (f" GTID {statement.gtid}" if statement.gtid else "")

    def _ddl_wanted(self, statement) -> bool:
        """Whether the DDL is replayed (else it is reported: --no-ddl, filtered out,
        a routine without --routines)."""
        kind = routine_kind(statement.query)
        if self.args.no_ddl or not self._ddl_kept(statement) or (kind and not self.args.routines):
            where = self._where(statement)
            if self.args.no_ddl:
                self.warn(f"{where}: DDL not replayed (--no-ddl): {_short(statement.query)}")
            elif kind and not self._routines_warned:
                self._routines_warned = True
                self.warn(f"{where}: {kind} definitions (and those of triggers, procedures, "
                     f"functions, events) are not replayed: the row events already hold the "
                     f"rows they wrote; --routines replays them: {_short(statement.query)}")
            return False
        return True

    def _run_ddl(self, statement, tolerant: bool) -> None:
        """Execute the DDL (it commits implicitly); ``tolerant``: the first unit after a
        resume, "already exists / does not exist" taken as applied before a crash."""
        from ..output.sql import ddl_statements

        where = self._where(statement)
        if self.args.strip_definer:
            statement = replace(statement, query=strip_definer(statement.query))
        statement = self.rewrite.statement(statement)
        import pymysql

        try:
            with self.target.cursor() as cur:
                for stmt in ddl_statements(statement):
                    try:
                        cur.execute(stmt)
                    except pymysql.err.MySQLError as exc:
                        code = exc.args[0] if exc.args else None
                        if tolerant and code in DDL_ALREADY_DONE:
                            self.warn(f"{where}: {exc.args[1] if len(exc.args) > 1 else exc} - taken as "
                                 f"applied before the interruption")
                            continue
                        raise
        except Exception as exc:
            error = self._translate(exc, None)
            if isinstance(error, TargetError):
                error.message = f"{where}: DDL failed: {error.message}\n  statement: {statement.query.strip()[:300]}"
            raise error from exc
        finally:
            self.keys.invalidate()
            self._forget_live()
        self.stats["ddl"] += 1

    def _forget_live(self) -> None:
        self._live_cache = {}

    # -- row changes ---------------------------------------------------------------------
    def _apply_transaction(self, tx, parts=None) -> None:
        """The transaction's row changes and statement-logged changes, in binlog order:
        ``parts`` as the pipeline rendered them, else rendered here (the pipeline is
        stopped, or the transaction has no rows)."""
        for kind, item in (self._parts(tx) if parts is None else parts):
            if kind == "rows":
                self._execute(item, tx)
            elif kind == "binlog":
                self._execute_binlog(item, tx)
            else:
                self._execute_statement(item, tx)

    def _parts(self, tx, renderer=None):
        """("rows", Batch), ("binlog", Chunk) and ("statement", Statement) of a
        transaction, in binlog order (of what it holds: the changes that went early are
        not in it, _Early)."""
        from ..assembly.transactions import in_binlog_order

        index = row_numbers(tx.changes, tx.early)
        for part in in_binlog_order(tx):
            if not isinstance(part, list):
                yield "statement", part
            elif self.raw is not None:
                yield from self._binlog_parts(part, index, renderer or self.renderer)
            else:
                for batch in self._statements(part, index, renderer or self.renderer):
                    yield "rows", batch

    def _binlog_parts(self, changes, index, renderer):
        """--method binlog: runs of counted rows events as BINLOG statements, the
        decoded rows between them (tables that go as SQL) as statements, in binlog order."""
        from itertools import groupby

        from ..reader import RowCount
        from ..replay.binlog_statements import chunks

        raw = self.raw
        if raw is None:
            raise RuntimeError("BINLOG statements asked of a run without --method binlog")
        for counted, run in groupby(changes, key=lambda ch: isinstance(ch, RowCount)):
            part = list(run)
            if not counted:
                for batch in self._statements(part, index, renderer):
                    yield "rows", batch
                continue
            events = [raw.take(ch.file, ch.pos) for ch in part]
            for chunk in chunks(events, [(ch.file, ch.pos) for ch in part], self.binlog_limit):
                yield "binlog", chunk

    def _statements(self, changes, index, renderer):
        """Multi-row statements (binlog.replay.batch), or with --split-updates the
        single-row statements of TiCDC's order."""
        from ..replay.batch import Batch, row_statements

        if self.args.split_updates:
            from ..assembly.split import split_transaction

            parts = split_transaction(changes, renderer.keys.keys)
            for ch, sql in renderer.split_statements(*parts):
                yield Batch(sql, [(index.get(id(ch)), ch)])
            return
        yield from row_statements(renderer, changes, index)

    def _execute(self, batch, tx) -> None:
        import pymysql

        sql, rows = batch.sql, batch.rows
        first = batch.first
        self._check_triggers(self.rewrite.db(first.db), first.table)
        try:
            with self.target.cursor() as cur:
                affected = cur.execute(sql)
                if cur.warning_count:
                    self._check_warnings(cur, batch, tx)
            if sql.startswith("REPLACE ") and affected > len(rows):
                self._replaced(affected - len(rows), tx)
            return
        except pymysql.err.MySQLError as exc:
            error = exc
        except Exception as exc:   # socket errors, broken pipes...
            raise self._translate(exc, tx) from exc
        code = error.args[0] if error.args else None
        if code in CONNECTION_ERRORS or code in RETRYABLE_ERRORS or len(rows) == 1:
            raise self._translate(error, tx, rows[0] if len(rows) == 1 else None, sql) from error
        # A multi-row statement failed (and was rolled back alone): find the row.
        for row in rows:
            one = batch.row_sql(row[1])
            try:
                with self.target.cursor() as cur:
                    cur.execute(one)
            except pymysql.err.MySQLError as exc:
                raise self._translate(exc, tx, row, one) from exc
        raise self._translate(error, tx, None, sql) from error

    def _execute_binlog(self, chunk, tx) -> None:
        """A BINLOG statement (replay.binlog_statements.Chunk), after the FORMAT_DESCRIPTION
        it is read with when the session has not been given that one."""
        import pymysql

        if len(chunk.sql) > self.max_packet or len(chunk.fde) > self.max_packet:
            raise TargetError(
                f"{tx.label}: a BINLOG statement of {len(chunk.sql)} bytes (the rows event at "
                f"{chunk.events[0][0]} @ {chunk.events[0][1]} alone is that large) exceeds the "
                f"target's max_allowed_packet ({self.max_packet}); nothing of it was applied",
                hint="raise max_allowed_packet on the target (SET GLOBAL max_allowed_packet = "
                     "1073741824), or apply with --method sql")
        try:
            with self.target.cursor() as cur:
                if self.sent_fde != chunk.fde:
                    cur.execute(chunk.fde)
                    self.sent_fde = chunk.fde
                cur.execute(chunk.sql)
                if cur.warning_count:
                    self._binlog_warnings(cur, chunk, tx)
        except pymysql.err.MySQLError as exc:
            error = self._translate(exc, tx)
            if isinstance(error, TargetError):
                error.message += f"\n  in the rows events at {_events_text(chunk.events)}"
                if exc.args and exc.args[0] in (1227, 1370):
                    error.hint = ("--method binlog needs the BINLOG REPLAY privilege (MariaDB "
                                  "10.5.2 and later; SUPER before): GRANT BINLOG REPLAY ON *.* "
                                  "TO the user, or use --method sql")
            raise error from exc
        except Exception as exc:   # socket errors, broken pipes...
            raise self._translate(exc, tx) from exc

    def _binlog_warnings(self, cur, chunk, tx) -> None:
        """A value the target stored changed (a warning): stop, as for SQL statements."""
        import pymysql

        for code, message in _warnings(cur):
            error = self._translate(pymysql.err.DataError(code, message), tx)
            error.message += f"\n  in the rows events at {_events_text(chunk.events)}"
            raise error

    def _check_warnings(self, cur, batch, tx) -> None:
        """The session is not strict (values come from rows the source holds, and some
        of those - ENUM's '' error value, zero dates - only exist non-strict), so a value
        the target cannot hold (a narrower column, out of range) is a warning: stop on
        it with the row named instead of committing a changed value."""
        for code, message in _warnings(cur):
            row = _warned_row(message, batch.rows)
            if row is not None and self._enum_error_value(code, message, row[1]):
                continue
            raise self._translate(pymysql.err.DataError(code, message), tx, row, batch.sql)

    def _enum_error_value(self, code, message: str, change) -> bool:
        """Warning 1265 for an ENUM column given '': the source row holds ENUM's error
        value (index 0), which a non-strict server stores with exactly this warning."""
        from ..constants import ColumnType

        m = re.search(r"column '([^']*)'", message)
        image = change.after if change is not None and change.after is not None else None
        if code != 1265 or not m or not image:
            return False
        names = self.keys.keys(change).names
        for col in change.plan.columns:
            name = names[col.index] if names and col.index < len(names) else col.name
            if col.type == ColumnType.ENUM and name == m.group(1):
                return image.get(col.key) in ("", 0)
        return False

    def _replaced(self, count: int, tx) -> None:
        """Safe mode: REPLACE found rows already on the target (same primary or unique
        key) and deleted them first: the target had diverged.  Counted and reported."""
        self.batch_replaced += count
        self.warned_replaced += 1
        if self.warned_replaced <= 10:
            self.warn(f"{tx.label if tx is not None else 'a change'}: {count} row(s) already on the "
                 f"target with the same key were deleted and replaced (safe mode REPLACE)"
                 + ("; further such warnings are only counted" if self.warned_replaced == 10 else ""))

    def _translate(self, exc, tx, row=None, sql=None, what=None):
        """A target failure as ConnectionLost (retried) or TargetError (stops the run)."""
        import pymysql

        code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
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
            text += (f", row {index + 1 if index is not None else '?'} of {n}: {change.op} of "
                     f"`{change.db}`.`{change.table}` {self._row_key(change)} "
                     f"(binlog {change.file} @ {change.pos})")
        text += f": error {code}: {message}"
        if sql is not None:
            text += f"\n  statement: {sql if len(sql) < 400 else sql[:400] + '...'}"
        hint = ("nothing of this transaction was committed; the checkpoint stops right before "
                "it, so the same command resumes here once the cause is fixed")
        if code == 1146:
            hint += ("; create the table on the target first (mariadb-dump --no-data from the "
                     "source), or start the apply before its CREATE TABLE")
        elif code in (1062, 1452, 1451, 1048, 1364):
            hint += ("; the target's rows or constraints differ from the source's: compare with "
                     "`binlog verify-rows`")
        return TargetError(text, hint)

    def _row_key(self, change) -> str:
        keys = self.keys.keys(change)
        image = change.before if change.before is not None else change.after
        cols = change.plan.columns
        identity = keys.identity or tuple(c.index for c in cols[:4])
        parts = []
        for i in identity:
            col = cols[i]
            name = keys.names[i] if keys.names else (col.name or f"@{i + 1}")
            value = image.get(col.key) if image else None
            parts.append(f"{name}={value!r}")
        return "(" + ", ".join(parts) + ")"

    # -- report --------------------------------------------------------------------------
    def report(self, final: bool) -> None:
        if self.args.quiet and final:
            return
        s = self.stats
        sys.stderr.write(f"binlog apply: {s['transactions']} transaction(s), {s['rows']} row "
                         f"change(s), "
                         + (f"{s['statements']} statement-logged change(s), " if s['statements'] else "")
                         + f"{s['ddl']} DDL committed on the target in {s['commits']} "
                         f"commit(s)"
                         + (f"; {s['skipped']} already applied, skipped" if s['skipped'] else "")
                         + (f"; {s['replaced']} target row(s) deleted and replaced by REPLACE"
                            if s['replaced'] else "")
                         + f"; checkpoint {self.checkpoint_text()}\n")


# TABLE_MAP type codes of the legacy temporal layouts (MariaDB 5.3-10.0, or
# mysql56_temporal_format=OFF): a target with the MySQL 5.6 layouts would read their
# fraction bytes with the wrong size (sql/rpl_utility.cc compatible_with), and these
# bytes are what every other tool gets wrong: their rows go as SQL, decoded here.
_LEGACY_TEMPORAL_CODES = frozenset({7, 11, 12})


def needs_sql(table_map, fde) -> bool:
    """--method binlog: whether a table's rows go as SQL statements (decoded here)
    instead of their events: a source other than MariaDB (MySQL's JSON, payload and
    partial-update events have no MariaDB reader), or legacy temporal columns."""
    return not fde.is_mariadb or any(col.binlog_type in _LEGACY_TEMPORAL_CODES
                                     for col in table_map.columns)


def _events_text(events) -> str:
    shown = ", ".join(f"{f} @ {p}" for f, p in events[:3])
    return shown + (f" and {len(events) - 3} more" if len(events) > 3 else "")


def _warnings(cur) -> Iterator[tuple[int, str]]:
    """(code, message) of the session's last statement's warnings and errors (its Notes
    left out: they change no value)."""
    cur.execute("SHOW WARNINGS")
    for level, code, message in cur.fetchall():
        if level != "Note":
            yield code, message.decode("utf-8", "replace") if isinstance(message, bytes) else message


def _warned_row(message: str, rows):
    """The statement row a warning names ("... at row 3"), or the only row."""
    m = re.search(r"\bat row (\d+)", message)
    if m and 1 <= int(m.group(1)) <= len(rows):
        return rows[int(m.group(1)) - 1]
    return rows[0] if len(rows) == 1 else None


def _parse_fault(text):
    """Test hook (BINLOG_APPLY_FAULT): ``kill-after-commit:N``, ``kill-before-commit:N``
    (SIGKILL this process right after / just before the N-th target commit of the run),
    ``pause-after-commit:N`` (sleep BINLOG_APPLY_PAUSE seconds after it: time for a test to
    stop the target),
    ``drop-connection-before-commit:N`` (close the socket: a lost connection)."""
    if not text:
        return None
    kind, _, n = text.partition(":")
    return (kind, int(n)) if n.isdigit() else None


class _Early:
    """The row changes of a large source transaction go to the target before its
    COMMIT is read, so the target applies while the rest is read: with --method binlog
    every ``EARLY_BYTES`` of events, with --method sql every --batch-rows changes (as
    multi-row statements; a run of them ends there, which changes no effect).  Only a
    transaction that cannot turn out otherwise: not already applied, not XA (its rows are
    applied at XA COMMIT), no statement-logged change, and not --split-updates (which
    reorders the whole transaction).  If it never commits, ``drop`` makes the applying
    side roll back to the savepoint taken before it."""

    EARLY_BYTES = 1 << 20

    def __init__(self, applier: Applier, feed: _Feed, started, renderer):
        self.applier, self.feed, self.started, self.renderer = applier, feed, started, renderer
        self.tx: Any = None     # the transaction sent early
        self.held: tuple = (None, 0, 0)     # (transaction, its changes counted, their rows)

    def done(self, unit) -> None:
        """The transaction came out whole (committed): the rest of it is not early."""
        if unit is self.tx:
            self.tx = None

    def check_dropped(self, current, units) -> None:
        if self.tx is not None and current is not self.tx and not any(u is self.tx for u in units):
            self.feed.put(("drop", self.tx))
            self.tx = None

    def send(self, tx) -> None:
        """Its changes so far go to the applying side; the transaction no longer holds
        them (``tx.early`` counts them), so a transaction of millions of rows is held a
        batch at a time."""
        if tx is None or not self._due(tx) or not self._may_send(tx):
            return
        changes, tx.changes = tx.changes, []
        if self.applier.raw is not None:
            self.applier.raw.fresh = 0
        index = row_numbers(changes, tx.early)
        tx.early += sum(map(change_rows, changes))
        self.held = (None, 0, 0)
        applier = self.applier
        if applier.raw is not None:
            parts = applier._binlog_parts(changes, index, self.renderer)
        else:
            parts = (("rows", batch) for batch in applier._statements(changes, index, self.renderer))
        self.tx = tx
        for part in parts:
            self.feed.put(("early", tx, part))

    def _due(self, tx) -> bool:
        raw = self.applier.raw
        if raw is not None:
            return raw.fresh >= self.EARLY_BYTES
        held_tx, seen, rows = self.held      # the rows tx.changes holds, counted once each
        if held_tx is not tx:
            seen = rows = 0
        for ch in tx.changes[seen:]:
            rows += change_rows(ch)
        self.held = (tx, len(tx.changes), rows)
        return rows >= self.applier.args.batch_rows

    def _may_send(self, tx) -> bool:
        if tx.statements or tx.xid is not None or self.applier.args.split_updates:
            return False
        skip_max = self.applier.skip_max      # a transaction workers committed may come
        if skip_max is not None and _pos_key(tx.start) <= skip_max:
            return False
        return self.started is None or _pos_key(tx.start) >= _pos_key(self.started)


class _WorkerSession(Applier):
    """One worker's target connection (replay.parallel.Session): the applier's
    statements on a session of its own, and the worker's checkpoint row (``NAME/i``)
    written in each of its commits."""

    def __init__(self, parent: Applier, index: int, tracker):   # noqa: D107
        self.__dict__.update(parent.__dict__)
        self.parent, self.tracker = parent, tracker
        self.name = f"{parent.args.checkpoint_name}/{index + 1}"
        self.stats = dict.fromkeys(parent.stats, 0)
        self.totals = (0, 0)
        self.batch_replaced = self.warned_replaced = 0
        self.conn = self.meta = self.feed = self.pool = None
        from pymysql.constants import CLIENT

        self._connect(CLIENT.MULTI_STATEMENTS)      # replay.packets
        self._trigger_checked = parent._trigger_checked     # a table's, whoever checked

    def _forget_live(self) -> None:
        self.parent._live_cache = {}

    def apply(self, job) -> None:
        from ..assembly.transactions import Statement

        unit = job.unit
        if isinstance(unit, Statement) or unit.statements:
            # text from the binlog runs as one statement, as with one worker: a QUERY event
            # holding "...; DROP ..." must not run past --no-ddl, --routines and the checks
            with self._one_statement_per_request():
                self._apply_one(job)
        else:
            self._apply_one(job)

    @contextmanager
    def _one_statement_per_request(self):
        """Multi-statement requests off (the worker's connection has them on for
        replay.packets), on again after."""
        self.target.set_multi_statements(False)
        try:
            yield
        except BaseException:
            if self.conn is not None:
                try:
                    self.conn.set_multi_statements(True)
                except (pymysql.err.MySQLError, OSError):
                    pass    # the error being raised is the one to report; this connection is broken
            raise
        self.target.set_multi_statements(True)

    def _apply_one(self, job) -> None:
        from ..assembly.transactions import DDL, Statement, Transaction
        from ..replay.parallel import Retryable

        unit = job.unit
        try:
            if not isinstance(unit, Statement):
                self._apply_transaction(unit, job.parts)
            elif unit.kind == DDL:
                if self._ddl_wanted(unit):
                    # what a crash may have left: the first DDL a run applies (a DDL commits
                    # by itself, its checkpoint row just after; a crash between the two
                    # before any row was written leaves no checkpoint to resume from)
                    tolerant = self.tracker.committed == 0
                    self._run_ddl(unit, tolerant)
            elif unit.kind == "dml":
                self._apply_transaction(Transaction(unit.gtid, (unit.file, unit.pos), end=unit.end,
                                                    ts=unit.ts, server_id=unit.server_id,
                                                    statements=[unit]))
            else:
                self.warn(f"{unit.file} @ {unit.pos}: not replayed: {_short(unit.query)}")
        except ConnectionLost as exc:
            code = getattr(exc.__cause__, "args", (None,))[0] if exc.__cause__ else None
            if code in RETRYABLE_ERRORS and not job.streamed:
                raise Retryable(str(exc)) from exc
            raise       # (a streamed job cannot be given again: the run resumes)

    def apply_packet(self, jobs) -> None:
        """Jobs of row changes only, in one request (replay.packets)."""
        from ..replay.packets import execute_packet

        batches = [(job, batch) for job in jobs for _, batch in job.parts]
        for _, batch in batches:
            self._check_triggers(self.rewrite.db(batch.first.db), batch.first.table)
        affected = execute_packet(self.conn, [batch.sql for _, batch in batches])
        for (job, batch), count in zip(batches, affected, strict=True):
            if batch.sql.startswith("REPLACE ") and count > len(batch.rows):
                self._replaced(count - len(batch.rows), job.unit)

    def commit(self, jobs, mark, ends) -> None:
        from ..assembly.transactions import Transaction

        txs = [j for j in jobs if isinstance(j.unit, Transaction)]
        totals = (self.totals[0] + len(jobs), self.totals[1] + sum(j.rows for j in jobs))
        with self.parent._meta_lock:
            self.parent.commit_attempts += 1
            n = self.parent.commit_attempts
        try:
            with self.target.cursor() as cur:
                if self.fault is None:      # the row and COMMIT in one request (replay.packets)
                    cur.execute(self._row_sql(self.name, mark, totals, ends) + ";\nCOMMIT")
                    cur.nextset()
                else:
                    cur.execute(self._row_sql(self.name, mark, totals, ends))
                    if self.fault == ("kill-before-commit", n):
                        os.kill(os.getpid(), signal.SIGKILL)
                    self.target.commit()
        except Exception as exc:
            raise self._translate(exc, None, what=f"the commit of worker {self.name}") from exc
        self.totals = totals
        s = self.stats
        s["commits"] += 1
        s["transactions"] += len(txs)
        s["rows"] += sum(j.rows for j in txs)
        s["statements"] += sum(len(j.unit.statements) for j in txs)
        s["replaced"] += self.batch_replaced
        self.batch_replaced = 0
        if self.fault == ("kill-after-commit", n):
            os.kill(os.getpid(), signal.SIGKILL)

    def rollback(self) -> None:
        self.abort_batch()

    def close(self) -> None:
        if self.conn is not None:
            close_quietly(self.conn)
            self.conn = None


def _append(items: list, item):
    items.append(item)
    return item


class _WorkersProgress:
    """--workers: a progress line on stderr when it is a terminal (workers busy,
    transactions/s, the position everything before which is committed, lag behind
    the source's timestamps)."""

    def __init__(self, pool, tracker, quiet: bool):
        self.pool, self.tracker = pool, tracker
        self.enabled = not quiet and sys.stderr.isatty()
        self.last = (time.monotonic(), 0)
        self.shown = False

    def tick(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        then, count = self.last
        done = self.tracker.committed
        rate = (done - count) / (now - then) if now > then else 0.0
        self.last = (now, done)
        mark = self.tracker.mark
        where = f"{mark.end[0]}:{mark.end[1]}" if mark.end else "-"
        lag = f", lag {max(0, int(time.time()) - mark.ts)}s" if mark.ts else ""
        sys.stderr.write(f"\rbinlog apply: {self.pool.busy_workers()}/{len(self.pool.workers)} "
                         f"workers busy, {rate:,.0f} transactions/s, {done:,} committed, "
                         f"all before {where}{lag}\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


class _Stopped(Exception):
    """The applying side stopped the pipeline: the producer ends quietly."""


class _Feed:
    """The bounded queue between the decoding thread and the applying one.  ``stop()``
    (the applier failed, was interrupted, or is done) makes every blocked ``put`` and
    ``wait_applied`` of the producer raise _Stopped."""

    SIZE = 16      # statements of at most replay.batch.MAX_STATEMENT_BYTES each

    def __init__(self):
        self.queue: queue.Queue = queue.Queue(self.SIZE)
        self.stopped = threading.Event()
        self.units_put = 0          # units given by the producer
        self.units_applied = 0      # units the applying side is done with
        self.progress = threading.Condition()

    def put(self, item) -> None:
        while not self.stopped.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                if item[0] == "unit":
                    self.units_put += 1
                return
            except queue.Full:
                continue
        raise _Stopped

    def get(self):
        return self.queue.get()

    def applied(self) -> None:
        with self.progress:
            self.units_applied += 1
            self.progress.notify_all()

    def wait_applied(self) -> None:
        """Block until the applying side is done with the unit given last."""
        with self.progress:
            while self.units_applied < self.units_put:
                if self.stopped.is_set():
                    raise _Stopped
                self.progress.wait(0.1)

    def stop(self) -> None:
        self.stopped.set()
        while True:             # free a producer blocked on a full queue
            try:
                self.queue.get_nowait()
            except queue.Empty:
                return
