"""--workers N: decoding, rendering and dispatching in a thread of their own
(``Workers.produce``), the workers' sessions in theirs (replay.parallel.Pool decides who
runs what and when each commits); each ``WorkerSession`` executes its jobs on a target
session of its own and writes its checkpoint row (``NAME/i``) in each of its commits."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

import pymysql
from pymysql.constants import CLIENT

from ...assembly.transactions import DDL, Statement, Transaction
from ...errors import TargetError
from ...output.sql.literals import short
from ...reader import SourceEvent
from ..packets import execute_packet
from ..parallel import Job, Mark, Options, PartStream, Pool, Resume, Retryable, Stopped, Tracker, conflict_keys
from .checkpoint import CheckpointStore, pos_key
from .ddl import DdlPolicy
from .executor import Executor, Replaced
from .failures import RETRYABLE_ERRORS, ConnectionLost
from .faults import Faults
from .options import ApplyInput, ApplyOptions


class WorkerSession:
    """One worker's target session (replay.parallel.Session): the run's statements on
    a connection of its own (multi-statement requests on: replay.packets), and the
    worker's checkpoint row (``NAME/i``) written in each of its commits."""

    def __init__(self, workers: Workers, index: int, tracker: Tracker):
        self.workers, self.tracker = workers, tracker
        self.name = f"{workers.store.name}/{index + 1}"
        self.stats = dict.fromkeys(workers.stats, 0)
        self.totals = (0, 0)
        self.executor = Executor.connect(workers.io, workers.options, workers.session.run, self.stats,
                                         Replaced(workers.io.warn), CLIENT.MULTI_STATEMENTS)

    def apply(self, job: Job) -> None:
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
        conn = self.executor.conn
        conn.set_multi_statements(False)
        try:
            yield
        except BaseException:
            try:
                conn.set_multi_statements(True)
            except (pymysql.err.MySQLError, OSError):
                pass    # the error being raised is the one to report; this connection is broken
            raise
        conn.set_multi_statements(True)

    def _apply_one(self, job: Job) -> None:
        unit, executor = job.unit, self.executor
        try:
            if not isinstance(unit, Statement):
                executor.apply(unit, job.parts)
            elif unit.kind == DDL:
                if self.workers.ddl.wanted(unit, executor.run.filter):
                    # what a crash may have left (DdlPolicy.run): a DDL before the first
                    # transaction this run commits (a barrier: all before it is committed)
                    self.workers.ddl.run(executor, unit, tolerant=self.workers.leading)
            elif unit.kind == "dml":
                executor.apply(Transaction(unit.gtid, (unit.file, unit.pos), end=unit.end,
                                           ts=unit.ts, server_id=unit.server_id, statements=[unit]))
            else:
                executor.warn(f"{unit.file} @ {unit.pos}: not replayed: {short(unit.query)}")
        except ConnectionLost as exc:
            code = getattr(exc.__cause__, "args", (None,))[0] if exc.__cause__ else None
            if code in RETRYABLE_ERRORS and not job.streamed:
                raise Retryable(str(exc)) from exc
            raise       # (a streamed job cannot be given again: the run resumes)

    def apply_packet(self, jobs: list[Job]) -> None:
        """Jobs of row changes only, in one request (replay.packets)."""
        executor = self.executor
        batches = [(job, batch) for job in jobs for _, batch in job.parts or ()]
        for _, batch in batches:
            executor.check_triggers(executor.run.rewrite.db(batch.first.db), batch.first.table)
        affected = execute_packet(executor.conn, [batch.sql for _, batch in batches])
        for (job, batch), count in zip(batches, affected, strict=True):
            if batch.sql.startswith("REPLACE ") and count > len(batch.rows):
                executor.replaced.add(count - len(batch.rows), job.unit)

    def commit(self, jobs: list[Job], mark: Mark, ends) -> None:
        executor, faults = self.executor, self.workers.faults
        txs = [j for j in jobs if isinstance(j.unit, Transaction)]
        totals = (self.totals[0] + len(jobs), self.totals[1] + sum(j.rows for j in jobs))
        row = self.workers.store.worker_row(self.name, mark, totals, ends)
        n = faults.next_commit()
        try:
            with executor.conn.cursor() as cur:
                if not faults.armed:      # the row and COMMIT in one request (replay.packets)
                    cur.execute(row + ";\nCOMMIT")
                    cur.nextset()
                else:
                    cur.execute(row)
                    faults.kill_before(n)
                    executor.conn.commit()
        except Exception as exc:
            raise executor.translate(exc, None, what=f"the commit of worker {self.name}") from exc
        self.totals = totals
        if txs or any(isinstance(j.unit, Statement) and j.unit.kind == "dml" for j in jobs):
            self.workers.leading = False
        s = self.stats
        s["commits"] += 1
        s["transactions"] += len(txs)
        s["rows"] += sum(j.rows for j in txs)
        s["statements"] += sum(len(j.unit.statements) for j in txs)
        s["replaced"] += executor.replaced.batch
        executor.replaced.batch = 0
        faults.kill_after(n)
        faults.pause_after(n)

    def rollback(self) -> None:
        self.executor.rollback()

    def close(self) -> None:
        self.executor.close()


class Workers:
    """The parallel side of a run: ``session`` is the run's own target session (the
    checkpoint rows are folded on it), ``skip`` the ends of the transactions workers of
    an earlier run committed above the checkpoint."""

    def __init__(self, session: Executor, store: CheckpointStore, ddl: DdlPolicy,
                 options: ApplyOptions, io: ApplyInput, faults: Faults, skip: set):
        self.session, self.store, self.ddl = session, store, ddl
        self.options, self.io, self.faults, self.skip = options, io, faults, skip
        self.stats = session.stats
        cp = store.current
        self.applied = (cp["file"], cp["pos"]) if cp is not None else None
        self.pool: Pool | None = None
        # no transaction committed yet in this run (DdlPolicy.run's ``tolerant``)
        self.leading = True

    def run(self, reader, assembler, own: tuple[str, ...]) -> None:
        """This thread waits and shows progress; the input applied to its end, the
        workers' rows are folded into the stream's row."""
        self.store.ensure_committed_column(self.session)
        cp = self.store.current
        start = Mark(None, None)
        if cp is not None:
            start = Mark((cp["file"], cp["pos"]), (cp["resume_file"], cp["resume_pos"]),
                         cp["gtid"], cp["gtid_pos"])
        tracker = Tracker(start, pos_key)
        sessions: list[WorkerSession] = []
        try:
            sessions.append(WorkerSession(self, 0, tracker))    # the others as the pool needs them
            pool = self.pool = Pool(sessions, tracker, Options(
                self.options.batch_transactions, self.options.batch_rows, on_retry=self.io.warn),
                lambda i: _append(sessions, WorkerSession(self, i, tracker)), self.options.workers)
            thread = threading.Thread(target=self.produce, args=(reader, assembler, pool, own),
                                      name="binlog-apply-decode", daemon=True)
            thread.start()
            self._join(pool, tracker)
            thread.join(1.0)
            self._fold_finished(tracker, sessions)
        finally:
            self._end(sessions, tracker)

    def _join(self, pool: Pool, tracker: Tracker) -> None:
        progress = WorkersProgress(pool, tracker, quiet=self.options.quiet)
        try:
            pool.join(progress.tick)
        except TargetError as exc:
            exc.message += (f"\n  every worker stopped; what they applied before it is "
                            f"committed ({tracker.committed} transaction(s) in this run), "
                            f"and each worker's checkpoint row says what")
            raise
        finally:
            progress.close()

    def _fold_finished(self, tracker: Tracker, sessions: list[WorkerSession]) -> None:
        """The input is applied to its end: the workers' rows become the stream's row,
        at the end (a rerun starts there, with nothing to skip)."""
        if tracker.mark.end is None:
            return
        cp = self.store.current or {}
        totals = (cp.get("transactions", 0) + sum(s.totals[0] for s in sessions),
                  cp.get("row_changes", 0) + sum(s.totals[1] for s in sessions))
        self.store.fold(self.session, Resume(tracker.mark, set(), *totals))

    def _end(self, sessions: list[WorkerSession], tracker: Tracker) -> None:
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
            self.store.current = {"file": mark.end[0], "pos": mark.end[1], "gtid": mark.gtid}

    # -- the producer's thread ---------------------------------------------------------
    def produce(self, reader, assembler, pool: Pool, own: tuple[str, ...]) -> None:
        run = self.session.run
        try:
            for item in reader.items():
                if isinstance(item, SourceEvent):
                    run.keys.observe(item.event)
                for unit in assembler.feed(item):
                    self._dispatch(pool, self._job(unit, assembler.pending_start))
                    if isinstance(unit, Transaction) and run.renderer.events:
                        run.renderer.events.clear()
            self.io.warn_unmatched(reader, own=own)
            for unit in assembler.finish():
                sys.stderr.write(f"binlog apply: {unit.label}: the input ends before its "
                                 f"COMMIT; not applied (the next run resumes before it)\n")
            pool.finish()
        except Stopped:
            return
        except BaseException as exc:        # noqa: BLE001 - given to the main thread
            pool.stop(exc)

    def _dispatch(self, pool: Pool, job: Job) -> None:
        """A large transaction runs alone, its statements rendered as the worker
        executes them (replay.parallel.PartStream); any other job is dispatched whole."""
        if not job.streamed:
            pool.submit(job)
            return
        stream = job.parts = PartStream(pool.tracker)
        pool.submit(job, wait=False)
        try:
            for part in self.session.run.parts(job.unit):
                stream.put(part)
        finally:
            if not pool.tracker.stopped:
                stream.close()
        pool.wait_done(job)

    def _job(self, unit, pending) -> Job:
        """A replay.parallel.Job: a transaction rendered, with its conflict keys; a
        statement group (DDL, statement-logged) a barrier."""
        end = unit.end
        resume = end if pending is None or pos_key(end) < pos_key(pending) else pending
        is_tx = isinstance(unit, Transaction)
        job = Job(unit, None, None, end, resume, unit.gtid, unit.rows if is_tx else 0,
                  unit.ts, skip=self._done(end))
        if job.skip:
            self.stats["skipped"] += is_tx
            return job
        if is_tx and not unit.statements:
            if unit.rows >= self.options.batch_rows:
                job.streamed = True         # a barrier (no keys), rendered as it runs
                return job
            run = self.session.run
            job.parts = list(run.parts(unit))
            job.keys = conflict_keys(unit, run.keys.keys)
        return job

    def _done(self, end) -> bool:
        if end is None:
            return False
        return (self.applied is not None and pos_key(end) <= pos_key(self.applied)) or end in self.skip


def _append(items: list, item):
    items.append(item)
    return item


class WorkersProgress:
    """--workers: a progress line on stderr when it is a terminal (workers busy,
    transactions/s, the position everything before which is committed, lag behind
    the source's timestamps)."""

    def __init__(self, pool: Pool, tracker: Tracker, quiet: bool):
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
