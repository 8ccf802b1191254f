"""The pipeline of --workers 1: decoding and rendering in a thread of their own
(``Producer``), applying in the caller's (batches.Batches): PyMySQL waits for the target
without the GIL, so the next statements are made while the target runs the last ones.
A bounded queue (``Feed``) holds the producer back; whatever it raises is raised on the
applying side, in order.  ``Early`` sends a large transaction's changes before its
COMMIT is read."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from ...assembly.transactions import DDL, Statement, Transaction, change_rows
from ...reader import SourceEvent
from ...watermarks import Watermark
from ..batch import row_numbers
from .checkpoint import pos_key
from .context import Run
from .options import ApplyInput, ApplyOptions


class Stopped(Exception):
    """The applying side stopped the pipeline: the producer ends quietly."""


class Feed:
    """The bounded queue between the decoding thread and the applying one.  ``stop()``
    (the applier failed, was interrupted, or is done) makes every blocked ``put`` and
    ``wait_applied`` of the producer raise Stopped."""

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
        raise Stopped

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
                    raise Stopped
                self.progress.wait(0.1)

    def stop(self) -> None:
        self.stopped.set()
        while True:             # free a producer blocked on a full queue
            try:
                self.queue.get_nowait()
            except queue.Empty:
                return

    def parts(self):
        """The rendered parts of the transaction being applied, as the producer gives them."""
        while True:
            kind, item = self.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield kind, item


def run(feed: Feed, produce: Callable[[], None], consume: Callable[[Feed], None]) -> None:
    """``produce`` in a thread of its own, ``consume`` here."""
    thread = threading.Thread(target=produce, name="binlog-apply-decode", daemon=True)
    thread.start()
    finished = False
    try:
        consume(feed)
        finished = True
    finally:
        feed.stop()
        # after a failure or Ctrl-C the producer may be waiting on a live source:
        # it ends at its next put (daemon thread), this run does not wait for it
        thread.join(None if finished else 1.0)


class Early:
    """The row changes of a large source transaction go to the target before its
    COMMIT is read, so the target applies while the rest is read: with --method binlog
    every ``EARLY_BYTES`` of events, with --method sql every --batch-rows changes (as
    multi-row statements; a run of them ends there, which changes no effect).  Only a
    transaction that cannot turn out otherwise: not already applied, not XA (its rows are
    applied at XA COMMIT), no statement-logged change, and not --split-updates (which
    reorders the whole transaction).  If it never commits, ``drop`` makes the applying
    side roll back to the savepoint taken before it."""

    EARLY_BYTES = 1 << 20

    def __init__(self, run: Run, options: ApplyOptions, feed: Feed, started, skip: set):
        self.run, self.options, self.feed, self.started = run, options, feed, started
        # a transaction workers committed may come
        self.skip_max = max(map(pos_key, skip)) if skip else None
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
        raw = self.run.raw
        if raw is not None:
            raw.fresh = 0
        index = row_numbers(changes, tx.early)
        tx.early += sum(map(change_rows, changes))
        self.held = (None, 0, 0)
        if raw is not None:
            parts = self.run.binlog_parts(changes, index)
        else:
            parts = (("rows", batch) for batch in self.run.statements(changes, index))
        self.tx = tx
        for part in parts:
            self.feed.put(("early", tx, part))

    def _due(self, tx) -> bool:
        raw = self.run.raw
        if raw is not None:
            return raw.fresh >= self.EARLY_BYTES
        held_tx, seen, rows = self.held      # the rows tx.changes holds, counted once each
        if held_tx is not tx:
            seen = rows = 0
        for ch in tx.changes[seen:]:
            rows += change_rows(ch)
        self.held = (tx, len(tx.changes), rows)
        return rows >= self.options.batch_rows

    def _may_send(self, tx) -> bool:
        if tx.statements or tx.xid is not None or self.options.split_updates:
            return False
        if self.skip_max is not None and pos_key(tx.start) <= self.skip_max:
            return False
        return self.started is None or pos_key(tx.start) >= pos_key(self.started)


class Producer:
    """The decoding thread: the reader's items assembled into units, each unit put on
    the feed with its rendered parts (a transaction already applied goes without them:
    the applying side only counts it), a DDL waited for (later rows need the target's
    new tables)."""

    def __init__(self, feed: Feed, run: Run, options: ApplyOptions, io: ApplyInput,
                 started, skip: set, own: tuple[str, ...]):
        self.feed, self.run, self.options, self.io = feed, run, options, io
        self.started = started          # what the target held when the run started
        self.skip = skip                # committed above it by workers of an earlier run
        self.own = own                  # the filters the run added (warn_unmatched)

    def __call__(self, reader, assembler) -> None:
        feed = self.feed
        try:
            early = Early(self.run, self.options, feed, self.started, self.skip)
            for item in self.io.progress(reader, reader.items()):
                if isinstance(item, Watermark):
                    feed.put(("watermark", item))
                    continue
                self._item(item, assembler, early)
            self.io.warn_unmatched(reader, own=self.own)
            left = assembler.finish()
            early.check_dropped(None, [])
            feed.put(("finish", left))
        except Stopped:
            return
        except BaseException as exc:        # noqa: BLE001 - given to the applying thread
            feed.put(("error", exc))

    def _item(self, item, assembler, early: Early) -> None:
        run, feed = self.run, self.feed
        raw = run.raw
        if isinstance(item, SourceEvent):
            run.keys.observe(item.event)
        if raw is not None:
            raw.feed(item)
        units = assembler.feed(item)
        early.check_dropped(assembler.current, units)
        for unit in units:
            pending = assembler.pending_start
            done = self._done(unit)
            render = isinstance(unit, Transaction) and not done
            feed.put(("unit", unit, pending, render))
            if render:
                early.done(unit)
                for part in run.parts(unit):
                    feed.put(part)
                feed.put(("end", None))
            elif isinstance(unit, Statement) and unit.kind == DDL and not done:
                feed.wait_applied()     # later rows need the target's new tables
            if isinstance(unit, Transaction) and run.renderer.events:
                run.renderer.events.clear()     # its events are rendered (or not needed)
        if raw is not None and units and assembler.current is None and not assembler.prepared:
            raw.clear()     # what no transaction took: rows events without rows
        early.send(assembler.current)

    def _done(self, unit) -> bool:
        started = self.started
        return ((started is not None and pos_key(unit.end) <= pos_key(started))
                or unit.end in self.skip)
