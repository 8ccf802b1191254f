"""--workers 1: the source's units applied on one session in binlog order and committed
in batches (--batch-transactions, --batch-rows; from a live source at least every
LIVE_BATCH_SECONDS and whenever it is idle), each commit writing the stream's checkpoint
row in the same target transaction.  The applying side of the pipeline: ``consume``
takes what pipeline.Producer feeds."""
from __future__ import annotations

import sys
import time
from typing import Any

from ...assembly.transactions import DDL, Statement, Transaction
from ...errors import BinlogError, TargetError
from ...output.sql.literals import short
from ..parallel import GtidPos
from .checkpoint import CheckpointStore, pos_key
from .ddl import DdlPolicy
from .executor import Executor
from .failures import ConnectionLost
from .faults import Faults
from .options import LIVE_BATCH_SECONDS, ApplyOptions
from .pipeline import Feed


class Batches:
    """``start`` is the checkpoint the run resumes from (None: from the start); ``skip``
    the ends of the transactions workers of an earlier run committed above it;
    ``progress`` a live source's progress line (None for files)."""

    def __init__(self, session: Executor, store: CheckpointStore, ddl: DdlPolicy,
                 options: ApplyOptions, faults: Faults, skip: set, progress: Any = None):
        self.session, self.store, self.ddl = session, store, ddl
        self.options, self.faults, self.skip, self.progress = options, faults, skip, progress
        self.stats = session.stats
        self.warn = session.warn
        self.feed = Feed()
        cp = store.current
        self.applied = (cp["file"], cp["pos"]) if cp is not None else None
        self.totals = (cp["transactions"], cp["row_changes"]) if cp is not None else (0, 0)
        self.gtid = GtidPos(cp["gtid_pos"] if cp is not None else None)
        # no transaction applied yet in this run: a DDL met now may be one a crash left
        # applied without its checkpoint row (DdlPolicy.run's ``tolerant``)
        self.leading = True
        self.source_ts: int | None = None   # the last watermark's ts (_watermark), --from
        self.pending_start = None   # where the oldest XA PREPARE waiting for its COMMIT starts
        self.pending_cp: tuple | None = None
        self.batch_txs = self.batch_rows = 0
        self.batch_started = 0.0
        self.batch_done: list[tuple] = []     # (transaction, checkpoint, its parts or None) applied in the open batch
        self.in_flight = False      # a transaction sent early (pipeline.Early) is being applied
        self.replaced_before_early = 0

    # -- what the producer feeds -------------------------------------------------------
    def consume(self, feed: Feed) -> None:
        while True:
            kind, *rest = feed.get()
            if kind == "unit":
                unit, self.pending_start, rendered = rest
                self.unit(unit, feed.parts() if rendered else None)
                feed.applied()
            elif kind == "early":
                self.early(*rest)
            elif kind == "drop":
                self.drop_early(rest[0])
            elif kind == "watermark":
                self.watermark(rest[0])
            elif kind == "idle":
                if not self.in_flight:          # never commit half a source transaction
                    self.commit()
            elif kind == "finish":
                self.drop_early(None)
                for unit in rest[0]:
                    sys.stderr.write(f"binlog apply: {unit.label}: the input ends before its "
                                     f"COMMIT; not applied (the next run resumes before it)\n")
                return
            elif kind == "error":
                raise rest[0]

    def watermark(self, mark) -> None:
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
            self.commit()
        elif self.store.current is not None:
            self.store.update_source_ts(self.session, self.source_ts)

    # -- statements of a transaction not complete yet (pipeline.Early) ------------------
    def early(self, tx, part) -> None:
        """Execute a part (("rows", Batch) or ("binlog", Chunk)) of a source transaction
        whose COMMIT has not been read yet: the target works while the rest is read.  A
        savepoint marks where the transaction starts, in case it never commits."""
        if not self.in_flight:
            try:
                with self.session.conn.cursor() as cur:
                    cur.execute("SAVEPOINT binlog_apply_early")
            except Exception as exc:
                raise self.session.translate(exc, tx) from exc
            self.in_flight = True
            self.replaced_before_early = self.session.replaced.batch
        try:
            self.session.apply(tx, [part])
        except BinlogError:
            self.in_flight = False
            self._keep_batch_before_failure()
            raise

    def drop_early(self, tx) -> None:
        """The source transaction sent early ends without COMMIT (the input ends, or a
        new transaction starts): undo what of it the target applied."""
        if not self.in_flight:
            return
        self.in_flight = False
        self.session.replaced.batch = self.replaced_before_early     # its REPLACEs are undone too
        try:
            with self.session.conn.cursor() as cur:
                cur.execute("ROLLBACK TO SAVEPOINT binlog_apply_early")
        except Exception as exc:
            raise self.session.translate(exc, tx) from exc

    # -- units ---------------------------------------------------------------------------
    def _done(self, end) -> bool:
        if end is None:
            return False
        return (self.applied is not None and pos_key(end) <= pos_key(self.applied)) or end in self.skip

    def unit(self, unit, parts=None) -> None:
        if isinstance(unit, Statement):
            if self._done(unit.end):
                return
            if unit.kind == DDL:
                self._ddl(unit)
            elif unit.kind == "dml":
                # a statement group of its own: applied (and re-applied after a failure
                # later in the batch) as a transaction holding just this statement
                tx = Transaction(unit.gtid, (unit.file, unit.pos), end=unit.end, ts=unit.ts,
                                 server_id=unit.server_id, statements=[unit])
                self._apply_unit(tx)
                self.leading = False
            else:
                self.warn(f"{unit.file} @ {unit.pos}: not replayed: {short(unit.query)}")
                self._advance(unit.end, unit.gtid, rows=0)
            return
        tx = unit
        if self._done(tx.end):
            for _ in parts or ():
                pass        # rendered before the checkpoint was known to cover it
            self.stats["skipped"] += 1
            return
        self._apply_unit(tx, parts)
        self.leading = False

    def _apply_unit(self, tx, parts=None) -> None:
        early, self.in_flight = self.in_flight, False
        if self.session.run.raw is not None and parts is not None and not early:
            parts = list(parts)
        try:
            self.session.apply(tx, parts)
        except BinlogError:         # the target refused it, or it cannot be executed
            self._keep_batch_before_failure()
            raise
        self._advance(tx.end, tx.gtid, rows=tx.rows)
        # BINLOG statements are made once (the events' bytes are not kept): a failure
        # later in the batch applies these again.  A transaction sent early is not kept
        # (its first changes are gone, pipeline.Early): its batch ends with it, so nothing
        # later in the batch can make it be applied again.
        kept = parts if self.session.run.raw is not None and not early else None
        self.batch_done.append((tx, self.pending_cp, kept))
        options = self.options
        if (early or self.batch_txs >= options.batch_transactions
                or self.batch_rows >= options.batch_rows
                or (options.from_dsn and time.monotonic() - self.batch_started >= LIVE_BATCH_SECONDS)):
            self.commit()

    def _ddl(self, statement) -> None:
        if not self.ddl.wanted(statement, self.session.run.filter):
            self._advance(statement.end, statement.gtid, rows=0)
            return
        self.commit()          # DDL commits implicitly: the data before it goes first
        self.ddl.run(self.session, statement, self.leading)
        self._advance(statement.end, statement.gtid, rows=0)
        self.commit()

    def _advance(self, end, gtid, rows) -> None:
        self.gtid.note(gtid)
        pending = self.pending_start
        resume = end if pending is None or pos_key(end) < pos_key(pending) else pending
        txs, total_rows = self.totals
        self.totals = (txs + 1, total_rows + rows)
        self.pending_cp = (end, gtid, resume, self.totals)
        if not self.batch_txs:
            self.batch_started = time.monotonic()
        self.batch_txs += 1
        self.batch_rows += rows

    # -- commits -------------------------------------------------------------------------
    def commit(self) -> None:
        """The open batch with the stream's checkpoint row, in one target transaction."""
        if self.pending_cp is None:
            return
        end, gtid, resume, totals = self.pending_cp
        n = self.faults.next_commit()
        conn = self.session.conn
        try:
            with conn.cursor() as cur:
                cur.execute(self.store.stream_row(end, gtid, self.gtid.text(), resume, totals,
                                                  self.source_ts))
            self.faults.kill_before(n)
            self.faults.drop_before(n, conn)
            conn.commit()
        except Exception as exc:
            raise self.session.translate(exc, None, what=f"the commit of a batch ending at "
                                                         f"{end[0]}:{end[1]}") from exc
        self._count_committed()
        self.store.current = {"file": end[0], "pos": end[1], "gtid": gtid}
        self.applied = end
        self.pending_cp = None
        self.batch_txs = self.batch_rows = 0
        self.batch_done = []
        self.faults.kill_after(n)
        self.faults.pause_after(n)

    def _count_committed(self) -> None:
        s = self.stats
        s["commits"] += 1
        s["transactions"] += len(self.batch_done)
        s["rows"] += sum(tx.rows for tx, *_ in self.batch_done)
        s["replaced"] += self.session.replaced.batch
        self.session.replaced.batch = 0

    def _keep_batch_before_failure(self) -> None:
        """A transaction failed for good: roll back, apply again and commit the batch's
        transactions before it, so the checkpoint stops right before the failing one."""
        self.feed.stop()            # the transactions are rendered again, here
        done = self.batch_done
        self.batch_done = []
        self.session.rollback()
        self.pending_cp = None
        if not done:
            return
        try:
            for tx, _, parts in done:
                self.session.apply(tx, parts)
            self.pending_cp = done[-1][1]
            self.batch_done = done
            self.commit()
        except (TargetError, ConnectionLost):
            self.session.rollback()
