"""Parallel apply (``binlog apply --workers N``): source transactions dispatched to N
target sessions by causality, each committed with a record of itself, so a restart
applies exactly the ones not committed.

Causality (as TiDB DM's syncer and TiCDC's MySQL sink do it): a transaction's *conflict
keys* are (table, unique key, values) for the primary key and every unique key of each
before and after image.  A job whose keys were last touched by a job not committed yet
goes to that job's worker (its queue is in order), or waits until at most one worker
holds its keys; a job with no pending conflict goes to the least busy worker.  A
*barrier* (DDL, a statement-logged change, XA, a table without a key, a change whose
keys are not known) waits until everything before it is committed, runs alone, and
everything after it waits for its commit.

Exactly once: each worker's commit writes its checkpoint row (``NAME/i``) in the same
target transaction as its changes.  The row holds the *mark* - a position below which
every source transaction was committed when the commit began (the watermark of the
committed sequence) - and the ends of this worker's transactions above the mark.  A
restart (``resume_point``) takes the highest mark of all rows and the union of the
listed ends above it: those are skipped, everything else from the mark on is applied.
A worker drops an end from its list only once the mark passed it, so no committed end
above the highest mark is ever missing from every row.

Sessions (``Session``) are the command layer's: they execute a job's rendered parts
and commit with the checkpoint row; this module decides who runs what, when to
commit, and what each commit records.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import BinlogError, ServerError
from ..reader import RowChange
from .packets import PACKET_BYTES, PacketFailed

Position = tuple[str, int]

#: at most this many source transactions past the watermark are in flight: bounds the
#: lists of ends the checkpoint rows hold (a slow worker holds the others back)
WINDOW = 4096


class Retryable(Exception):
    """The target asked for the transaction again (deadlock, lock wait timeout): the
    session rolled back; the worker applies its batch again."""


class Stopped(Exception):
    """The pool stopped (a worker failed, or the run was interrupted)."""


@dataclass(slots=True)
class Mark:
    """A point of the committed sequence: every source transaction ending at or before
    ``end`` is committed; ``resume`` is where reading starts again (earlier while an XA
    PREPARE waits for its COMMIT)."""
    end: Position | None
    resume: Position | None
    gtid: str | None = None
    gtid_pos: str | None = None
    ts: int = 0


@dataclass(slots=True, eq=False)
class Job:
    """One unit of the source (a transaction, or a statement group) to apply whole."""
    unit: Any
    parts: list | PartStream | None     # rendered statements (None: nothing to execute)
    keys: frozenset | None          # conflict keys; None: a barrier
    end: Position
    resume: Position
    gtid: str | None = None
    rows: int = 0
    ts: int = 0
    seq: int = -1
    worker: int = -1
    skip: bool = False              # committed by an earlier run: only counted
    streamed: bool = False          # parts come as the producer renders them (PartStream)

    @property
    def barrier(self) -> bool:
        return self.keys is None


class Session(Protocol):
    def apply(self, job: Job) -> None: ...
    def apply_packet(self, jobs: list[Job]) -> None: ...
    def commit(self, jobs: list[Job], mark: Mark, ends: list[Position]) -> None: ...
    def rollback(self) -> None: ...


# -- conflict keys ------------------------------------------------------------------------

def conflict_keys(tx, keys_of: Callable) -> frozenset | None:
    """The keys of ``tx``'s rows, or None when it must run alone: statement-logged
    changes, XA, a change not decoded, a table whose unique keys the target did not
    describe (``TableKeys.source`` other than live) or that has none, an image lacking
    a key column."""
    if tx.statements or tx.xid is not None or tx.early:
        return None
    out: set = set()
    for ch in _row_changes(tx.changes):
        if ch is None:
            return None         # rows counted, not decoded: no images
        before = ch.before
        tk = keys_of(ch)
        uniques = tk.conflicts if tk.source == "live" else ()
        if not uniques:
            return None
        cols = ch.plan.columns
        for image in (before, ch.after):
            if image is None:
                continue
            for key in uniques:
                values = _key_values(image, cols, key)
                if values is _UNKNOWN:
                    return None
                if values is not None:
                    out.add((ch.db, ch.table, key, values))
    return frozenset(out)


_UNKNOWN = object()


def _row_changes(items):
    """The RowChanges of a transaction's items: a rows event the compiled walk rendered
    (replay.batch.EncodedEvent) gives its rows decoded by ``changes()``; None for rows
    only counted."""
    for item in items:
        if isinstance(item, RowChange):
            yield item
        elif callable(decoded := getattr(item, "changes", None)):
            yield from decoded()
        else:
            yield None


def _key_values(image: dict, cols, key: tuple[int, ...]):
    """The key's values in ``image`` folded as the target's collations may compare them;
    None when one is NULL (NULLs never conflict in a unique key); _UNKNOWN when the
    image lacks a key column (a minimal image)."""
    values = []
    for i in key:
        name = cols[i].key
        if name not in image:
            return _UNKNOWN
        value = image[name]
        if value is None:
            return None
        values.append(_fold(value))
    return tuple(values)


def _fold(value) -> Hashable:
    """Equal keys under any collation give equal folds (case, trailing spaces); the
    reverse need not hold: a fold may only make more jobs conflict."""
    if isinstance(value, str):
        return value.casefold().rstrip(" ")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).rstrip(b" \x00")
    if isinstance(value, (int, float)):
        return value
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


# -- the committed sequence ---------------------------------------------------------------

class Tracker:
    """Sequence numbers in source order, which are committed, the watermark, and the
    worker and sequence number that last touched each conflict key.  One lock (a
    Condition) guards it; the producer waits on it, the workers notify it."""

    def __init__(self, start: Mark, pos_key: Callable):
        self.cond = threading.Condition()
        self.pos_key = pos_key
        self.next = 0
        self.low = -1                       # every seq <= low is committed
        self.done: set[int] = set()         # committed seqs above low
        self.jobs: dict[int, Job] = {}      # seqs above low
        self.mark = start
        self.gtid_pos = GtidPos(start.gtid_pos)
        self.last: dict = {}                # conflict key -> (seq, worker)
        self.pending = [0]                  # jobs given to each worker, not committed
        self.committed = 0                  # transactions committed by this run
        self.stopped = False

    def add(self, job: Job) -> int:
        with self.cond:
            job.seq = self.next
            self.next += 1
            self.jobs[job.seq] = job
            return job.seq

    def commit(self, jobs: Iterable[Job]) -> None:
        with self.cond:
            for job in jobs:
                self.done.add(job.seq)
                if job.worker >= 0:
                    self.pending[job.worker] -= 1
                    self.committed += 1
            self._advance()
            self.cond.notify_all()

    def _advance(self) -> None:
        job = None
        while self.low + 1 in self.done:
            self.low += 1
            self.done.discard(self.low)
            job = self.jobs.pop(self.low)
            self.gtid_pos.note(job.gtid)
        if job is not None:
            self.mark = Mark(job.end, job.resume, job.gtid, self.gtid_pos.text(), job.ts)
        if len(self.last) > 4 * WINDOW:
            self.last = {k: v for k, v in self.last.items() if v[0] > self.low}

    def busy(self, seq: int) -> bool:
        return seq > self.low and seq not in self.done

    def wait(self, ready: Callable[[], bool]) -> None:
        """Block until ``ready()`` (under the lock) or the pool stopped."""
        with self.cond:
            while not ready():
                if self.stopped:
                    raise Stopped
                self.cond.wait(0.2)

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()


class GtidPos:
    """The last GTID of each domain committed: MariaDB's gtid_pos (``0-1-5,1-2-9``),
    what a checkpoint row records beside its binlog position."""

    def __init__(self, text: str | None = None):
        self.domains: dict[int, str] = {}
        for g in (text or "").split(","):
            self.note(g.strip())

    def note(self, gtid: str | None) -> None:
        if gtid and gtid.count("-") == 2 and gtid.replace("-", "").isdigit():
            self.domains[int(gtid.split("-")[0])] = gtid

    def text(self) -> str | None:
        return ",".join(self.domains[d] for d in sorted(self.domains)) or None


# -- the pool -----------------------------------------------------------------------------

_STOP = object()
_FLUSH = object()       # commit the open batch now: the producer waits for it


@dataclass
class Options:
    batch_transactions: int = 200
    batch_rows: int = 5000
    linger: float = 0.1         # a batch waits this long for more jobs before its commit
    deadlock_retries: int = 10
    on_retry: Callable[[str], None] = print


@dataclass
class _Worker:
    index: int
    session: Any                                # Session; None until its thread opens it
    queue: queue.Queue
    thread: threading.Thread | None = None
    ends: list = field(default_factory=list)    # its committed ends above the last mark
    busy: bool = False
    applying: int = 0                           # 1 while a job is being applied
    opened: float = 0.0                         # when the open batch got its first job


class Pool:
    """N workers, each with a session and a queue.  ``submit`` (the producer's thread)
    dispatches a job by its keys; ``finish`` says the input ended; ``join`` (the main
    thread) waits for the workers and raises the first failure."""

    QUEUE = 64
    SPREAD = 4
    #: a new worker is opened when every open one has this many jobs queued behind the
    #: request it is applying (it sends them all in its next request: a worker keeps
    #: up with ~OPEN_AT jobs per round trip before another connection pays off)
    OPEN_AT = 8

    def __init__(self, sessions: Sequence[Session], tracker: Tracker, options: Options,
                 open_session: Callable[[int], Session] | None = None, size: int = 0):
        """``sessions``: the workers open from the start; up to ``size`` in all, the
        others opened by ``open_session(index)`` (in their own thread) when the
        dispatcher first needs them: on a target that keeps up, --workers 64 opens a few
        connections, not 64 (each costs a handshake, a thread and CPU on a small client)."""
        self.tracker = tracker
        self.options = options
        self.open_session = open_session
        self.size = max(size, len(sessions))
        self.workers: list[_Worker] = []
        tracker.pending = [0] * self.size
        self.error: BaseException | None = None
        self.failed_job: Job | None = None
        for s in sessions:
            self._start(s)

    def _start(self, session: Session | None) -> _Worker:
        w = _Worker(len(self.workers), session, queue.Queue(self.QUEUE))
        w.thread = threading.Thread(target=self._work, args=(w,), daemon=True,
                                    name=f"binlog-apply-worker-{w.index + 1}")
        self.workers.append(w)
        w.thread.start()
        return w

    # -- producer side ---------------------------------------------------------------
    def submit(self, job: Job, wait: bool = True) -> None:
        """Dispatch ``job``; a barrier is waited for unless ``wait`` is false (a
        streamed one: the producer renders its parts, then calls ``wait_done``)."""
        t = self.tracker
        seq = t.add(job)
        if job.skip:
            t.commit([job])
            return
        self._wait(lambda: seq - t.low <= WINDOW)
        if job.barrier:
            self._wait(lambda: t.low == seq - 1)
            worker = self.workers[0]
            with t.cond:
                t.pending[0] += 1
        else:
            worker = self._choose(job)
        job.worker = worker.index
        self._put(worker, job)
        if job.barrier and wait:    # later jobs' keys and tables are the target's after it
            self.wait_done(job)

    def wait_done(self, job: Job) -> None:
        self._wait(lambda: not self.tracker.busy(job.seq))

    def _wait(self, ready: Callable[[], bool]) -> None:
        """Wait for commits: every open batch is committed now instead of lingering."""
        with self.tracker.cond:
            if ready():
                return
        self.flush()
        self.tracker.wait(ready)

    def flush(self, indexes: Iterable[int] | None = None) -> None:
        """Ask workers (all, or ``indexes``) to commit their open batch now (the producer
        waits for keys they hold, or the input is idle)."""
        for i in (range(len(self.workers)) if indexes is None else indexes):
            try:
                self.workers[i].queue.put_nowait(_FLUSH)
            except queue.Full:
                pass        # a full queue: the worker is busy and commits as it goes

    def _choose(self, job: Job) -> _Worker:
        t = self.tracker
        keys = job.keys or frozenset()

        def holders() -> set[int]:
            found = set()
            for k in keys:
                last = t.last.get(k)
                if last is not None and t.busy(last[0]):
                    found.add(last[1])
            return found

        with t.cond:
            flushed = False
            while len(held := holders()) > 1:
                if t.stopped:
                    raise Stopped
                if not flushed:
                    self.flush(held)
                    flushed = True
                t.cond.wait(0.2)
            index = held.pop() if held else self._least_busy()
            for k in keys:
                t.last[k] = (job.seq, index)
            t.pending[index] += 1
        return self.workers[index]

    def _least_busy(self) -> int:
        """The worker with the fewest jobs waiting or being applied, counted in steps of
        SPREAD, the first of equals: a target that keeps up with one worker gets one
        (its batches grow, as with --workers 1); the next is taken when SPREAD jobs wait
        on each before it (the target falls behind)."""
        spread = self.SPREAD
        for w in self.workers:      # (the deque's length: no lock taken per worker)
            if len(w.queue.queue) + w.applying < spread:
                return w.index
        if (len(self.workers) < self.size and self.open_session is not None
                and not self.tracker.stopped
                and all(len(w.queue.queue) >= self.OPEN_AT for w in self.workers)):
            return self._start(None).index      # its thread opens its session
        return min(range(len(self.workers)),
                   key=lambda i: len(self.workers[i].queue.queue) + self.workers[i].applying)

    def _put(self, worker: _Worker, item) -> None:
        if item is not _STOP and self.tracker.stopped:
            raise Stopped
        while True:
            try:
                worker.queue.put(item, timeout=0.2)
                return
            except queue.Full:
                if self.tracker.stopped:
                    raise Stopped from None

    def finish(self) -> None:
        for w in self.workers:
            self._put(w, _STOP)

    # -- main thread -----------------------------------------------------------------
    def join(self, tick: Callable[[], None] | None = None, interval: float = 0.5) -> None:
        for w in self.workers:
            while w.thread is not None and w.thread.is_alive():
                w.thread.join(interval)
                if tick is not None:
                    tick()
        if self.error is not None:
            raise self.error

    def wait(self, timeout: float) -> None:
        """After ``stop``: give the workers ``timeout`` seconds to commit and end."""
        deadline = time.monotonic() + timeout
        for w in self.workers:
            if w.thread is not None:
                w.thread.join(max(0.0, deadline - time.monotonic()))

    def stop(self, error: BaseException | None = None, job: Job | None = None) -> None:
        with self.tracker.cond:
            if error is not None and self.error is None:
                self.error, self.failed_job = error, job
        self.tracker.stop()

    def busy_workers(self) -> int:
        return sum(1 for w in self.workers if w.busy)

    # -- workers ---------------------------------------------------------------------
    def _work(self, w: _Worker) -> None:
        batch: list[Job] = []
        try:
            if w.session is None and self.open_session is not None:
                w.session = self.open_session(w.index)
            while True:
                item = self._next(w, batch)
                if item is None:
                    self._commit(w, batch)
                    continue
                if item is _STOP or self.tracker.stopped:
                    self._commit(w, batch)
                    return
                w.busy = True
                if not batch:
                    w.opened = time.monotonic()
                jobs = [item] + self._ready(w, batch, item)
                w.applying = len(jobs)
                try:
                    self._apply_jobs(w, batch, jobs)
                finally:
                    w.applying = 0
                if (item.barrier or len(batch) >= self.options.batch_transactions
                        or sum(j.rows for j in batch) >= self.options.batch_rows):
                    self._commit(w, batch)
        except _Failed as failed:
            self._keep_before(w, batch)
            self.stop(failed.error, failed.job)
        except BaseException as exc:        # noqa: BLE001 - given to the main thread
            self._rollback(w)
            self.stop(exc)
        finally:
            w.busy = False

    def _next(self, w: _Worker, batch: list[Job]):
        """The next job; None when the open batch is to be committed: it lingered
        ``Options.linger`` seconds, or the producer asked (_FLUSH)."""
        while True:
            if batch:
                left = w.opened + self.options.linger - time.monotonic()
                try:
                    item = w.queue.get(timeout=left) if left > 0 else w.queue.get_nowait()
                except queue.Empty:
                    return None
            else:
                try:
                    item = w.queue.get(timeout=0.2)
                except queue.Empty:
                    w.busy = False
                    if self.tracker.stopped:
                        return _STOP
                    continue
            if item is not _FLUSH:
                return item
            if batch:
                return None

    def _ready(self, w: _Worker, batch: list[Job], first: Job) -> list[Job]:
        """The jobs queued behind ``first`` that go in the same request: while the next
        one is packable, the batch's limits and PACKET_BYTES allow it (this worker is
        the queue's only reader, so a look at its head stays true)."""
        if not packable(first):
            return []
        out: list[Job] = []
        size = _sql_bytes(first)
        count = len(batch) + 1
        rows = sum(j.rows for j in batch) + first.rows
        pending = w.queue.queue
        while pending and count < self.options.batch_transactions and rows < self.options.batch_rows:
            job = pending[0]
            if not isinstance(job, Job) or not packable(job):
                break
            size += _sql_bytes(job)
            if size > PACKET_BYTES:
                break
            out.append(w.queue.get_nowait())
            count += 1
            rows += job.rows
        return out

    def _apply_jobs(self, w: _Worker, batch: list[Job], jobs: list[Job]) -> None:
        """Apply ``jobs`` and add them to ``batch``: packable ones in one request
        (replay.packets); when that request fails or warns, roll the batch back and
        apply it and the jobs one statement at a time, where errors are named and
        deadlocks retried."""
        again = False
        if packable(jobs[0]):
            try:
                w.session.apply_packet(jobs)
                batch.extend(jobs)
                return
            except (PacketFailed, Retryable, BinlogError) as exc:
                self._rollback(w)
                again = True
                if isinstance(exc, PacketFailed) and exc.retryable:
                    self.options.on_retry(f"{exc}; worker {w.index + 1} applies its open batch "
                                          f"again (retry 1)")
        for job in jobs:
            self._apply(w, batch, job, again)
            again = False
            batch.append(job)

    def _apply(self, w: _Worker, batch: list[Job], job: Job, again: bool = False) -> None:
        """Apply ``job`` (after the open batch when ``again``: it was rolled back); on a
        deadlock or lock wait timeout roll back and apply the open batch and the job
        again (a few times, pausing longer each time)."""
        attempt = 0
        while True:
            try:
                if attempt or again:
                    for done in batch:
                        w.session.apply(done)
                w.session.apply(job)
                return
            except Retryable as exc:
                attempt += 1
                self._rollback(w)
                if attempt > self.options.deadlock_retries:
                    raise _Failed(ServerError(f"{exc}; still failing after "
                                              f"{self.options.deadlock_retries} retries"), job) from exc
                self.options.on_retry(f"{exc}; worker {w.index + 1} applies its open batch "
                                      f"again (retry {attempt})")
                time.sleep(min(0.05 * attempt, 1.0))
            except BinlogError as exc:
                raise _Failed(exc, job) from exc

    def _commit(self, w: _Worker, batch: list[Job]) -> None:
        if not batch:
            return
        mark = self.tracker.mark
        key = self.tracker.pos_key
        if mark.end is not None:
            low = key(mark.end)
            w.ends = [e for e in w.ends if key(e) > low]
        ends = w.ends + [j.end for j in batch]
        w.session.commit(batch, mark, ends)
        w.ends = ends
        self.tracker.commit(batch)
        batch.clear()

    def _keep_before(self, w: _Worker, batch: list[Job]) -> None:
        """A job failed for good: roll back, apply again and commit the batch's jobs
        before it, so this worker stops right before the failing one."""
        self._rollback(w)
        if not batch:
            return
        try:
            for job in batch:
                w.session.apply(job)
            self._commit(w, batch)
        except (BinlogError, Retryable):
            self._rollback(w)

    @staticmethod
    def _rollback(w: _Worker) -> None:
        if w.session is not None:       # (None: its opening failed)
            w.session.rollback()


def packable(job: Job) -> bool:
    """A job whose statements may share a request with others': row changes only (no
    statement-logged change, no barrier, not streamed)."""
    return (job.keys is not None and not job.streamed and isinstance(job.parts, list)
            and all(kind == "rows" for kind, _ in job.parts))


def _sql_bytes(job: Job) -> int:
    return sum(len(part.sql) for _, part in job.parts or ())


class PartStream:
    """The parts of a large transaction, handed from the producer (``put``, ``close``)
    to the worker applying it (iteration) through a bounded queue: the target executes
    while the rest is rendered, and the transaction's statements are never all held."""

    SIZE = 16

    def __init__(self, tracker: Tracker):
        self.tracker = tracker
        self.queue: queue.Queue = queue.Queue(self.SIZE)

    def put(self, part) -> None:
        while True:
            try:
                self.queue.put(part, timeout=0.2)
                return
            except queue.Full:
                if self.tracker.stopped:
                    raise Stopped from None

    def close(self) -> None:
        self.put(_STOP)

    def __iter__(self):
        while True:
            try:
                part = self.queue.get(timeout=0.2)
            except queue.Empty:
                if self.tracker.stopped:
                    raise Stopped from None
                continue
            if part is _STOP:
                return
            yield part


class _Failed(Exception):
    def __init__(self, error: BaseException, job: Job):
        super().__init__(str(error))
        self.error, self.job = error, job


# -- the checkpoint rows ------------------------------------------------------------------

def encode_ends(ends: Iterable[Position]) -> str:
    """``file:pos,pos;file:pos``: the ends of one file after its name."""
    by_file: dict[str, list[int]] = {}
    for f, p in ends:
        by_file.setdefault(f, []).append(p)
    return ";".join(f"{f}:{','.join(map(str, sorted(ps)))}" for f, ps in by_file.items())


def decode_ends(text: str | None, row: str) -> set[Position]:
    """The ends ``encode_ends`` wrote; a row the target holds is checked (ServerError)."""
    out: set[Position] = set()
    for part in (text or "").split(";"):
        if not part:
            continue
        name, sep, numbers = part.rpartition(":")
        if not sep or not name or not all(n.isdigit() and len(n) < 20 for n in numbers.split(",")):
            raise ServerError(f"checkpoint row {row!r}: malformed list of committed "
                              f"transactions near {part[:60]!r}",
                              hint="the row was changed by hand: delete the stream's rows and "
                                   "start over with --reset-checkpoint, or restore them")
        out.update((name, int(n)) for n in numbers.split(","))
    return out


@dataclass
class Resume:
    """Where a run starts: ``mark`` (the highest of all rows), the committed ends above
    it (skipped), the totals of all rows."""
    mark: Mark
    skip: set[Position]
    transactions: int
    row_changes: int


def resume_point(rows: list[dict], pos_key: Callable) -> Resume | None:
    """From a stream's checkpoint rows (the base row and the workers' rows): the row with
    the highest mark gives the resume point; every row's ends above it are skipped."""
    if not rows:
        return None
    best = max(rows, key=lambda r: pos_key((r["file"], r["pos"])))
    low = pos_key((best["file"], best["pos"]))
    skip: set[Position] = set()
    for r in rows:
        skip.update(e for e in decode_ends(r.get("committed"), r["name"]) if pos_key(e) > low)
    if not best["file"]:        # rows written before any mark: none yet
        mark = Mark(None, None)
    else:
        mark = Mark((best["file"], best["pos"]), (best["resume_file"], best["resume_pos"]),
                    best["gtid"], best["gtid_pos"])
    return Resume(mark, skip, sum(r["transactions"] for r in rows),
                  sum(r["row_changes"] for r in rows))
