"""Source transactions from the event stream: what replay, flashback and stats work on.

``TxAssembler.feed(item)`` takes what ``BinlogReader.items()`` yields (``SourceEvent``s
and ``RowChange``s, in order) and returns the units that became complete:

- ``Transaction``: the row changes of one committed source transaction, with its GTID,
  where it starts (the GTID or BEGIN event) and where it ends (the byte after its
  COMMIT/XID event: the position a replay resumes from).
- ``Statement``: a QUERY event outside a transaction (DDL, administrative statements),
  or a statement-based change inside one (``Transaction.statements``).

Boundaries (MariaDB ``sql/log_event.cc``, MySQL binlog layout): a GTID event starts a
group (MariaDB writes no BEGIN query after it, MySQL does); BEGIN starts one when no GTID
did; XID or QUERY ``COMMIT`` ends it; a QUERY other than BEGIN/COMMIT/XA/SAVEPOINT outside
an explicit transaction is a statement group of its own (DDL).  MariaDB XA: ``XA START``
opens the group (its GTID event carries the XID), ``XA_PREPARE`` ends it as *prepared*;
a later ``XA COMMIT xid`` (in a group of its own) commits the prepared changes, ``XA
ROLLBACK xid`` drops them.  A transaction whose COMMIT is not in the input (a range cut
inside it) is given out by ``finish()`` as incomplete: replay never applies it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..events import (
    IntvarEvent,
    MariaGtidEvent,
    MysqlGtidEvent,
    QueryEvent,
    RandEvent,
    RowsEvent,
    UserVarEvent,
    XaPrepareEvent,
    XidEvent,
)
from ..events.query import BEGIN, COMMIT, ROLLBACK, XA_COMMIT, XA_ROLLBACK, transaction_control
from ..reader import CountedRows, RowChange, RowCount, SourceEvent
from ..statements import ADMIN, CONTROL, DDL, DML, classify_query  # noqa: F401 (re-exported)

Position = tuple[str, int]

_XID_TEXT = re.compile(r"X'([0-9a-fA-F]*)'\s*,\s*X'([0-9a-fA-F]*)'\s*,\s*(\d+)")
def xid_key(format_id: int, gtrid: bytes, bqual: bytes) -> str:
    return f"{gtrid.hex()}:{bqual.hex()}:{format_id}"


def xid_key_from_text(query: str) -> str | None:
    m = _XID_TEXT.search(query)
    if not m:
        # XA COMMIT 'name' (a plain string): MariaDB logs the X'..' form, keep a fallback
        q = re.search(r"'((?:[^'\\]|\\.)*)'", query)
        if not q:
            return None
        return f"{q.group(1).encode('utf-8').hex()}::1"
    return f"{m.group(1).lower()}:{m.group(2).lower()}:{int(m.group(3))}"


@dataclass
class Statement:
    """A QUERY event to replay (or report): DDL, or a statement-based change."""
    file: str
    pos: int
    end: Position
    ts: int
    server_id: int
    gtid: str | None
    db: str
    query: str
    kind: str
    event: QueryEvent
    context: list = field(default_factory=list)   # INTVAR/RAND/USER_VAR events before it


@dataclass
class Transaction:
    gtid: str | None
    start: Position                 # first event of the group (GTID / BEGIN)
    end: Position | None = None     # byte after the COMMIT/XID event (None: not committed)
    ts: int = 0                     # timestamp of the first event
    commit_ts: int = 0
    server_id: int = 0
    changes: list = field(default_factory=list)     # RowChange (or RowCount) items
    statements: list[Statement] = field(default_factory=list)   # statement-based changes inside
    events: int = 0
    bytes: int = 0                  # bytes of all its events
    rows_bytes: int = 0             # bytes of its rows events
    xid: tuple | None = None        # (format_id, gtrid, bqual) for XA
    explicit: bool = False          # BEGIN seen / GTID of a transactional group
    standalone: bool = False        # MariaDB FL_STANDALONE: a DDL group
    rolled_back: bool = False       # ended by ROLLBACK (changes of non-transactional tables)
    incomplete: bool = False        # the input ended before its COMMIT
    early: int = 0                  # row changes given out before the COMMIT and no longer
                                    # in ``changes`` (binlog apply's _Early)

    @property
    def label(self) -> str:
        where = f"{self.start[0]} @ {self.start[1]}"
        if self.end is not None:
            end = self.end[1] if self.end[0] == self.start[0] else f"{self.end[0]} @ {self.end[1]}"
            where += f"..{end}"
        return f"transaction {self.gtid} ({where})" if self.gtid else f"transaction at {where}"

    def __len__(self) -> int:
        return len(self.changes)

    @property
    def rows(self) -> int:
        """Its row changes: the RowChanges, the rows each RowCount stands for, and those
        given out early."""
        return self.early + sum(map(change_rows, self.changes))


def change_rows(change) -> int:
    """The rows an item of ``Transaction.changes`` stands for: a RowCount its ``count``,
    a RowChange one."""
    return change.count if isinstance(change, RowCount) else 1


def in_binlog_order(tx) -> list:
    """The transaction's parts in binlog order: lists of consecutive row changes and, between
    them, its statement-logged changes (MIXED format interleaves the two)."""
    if not tx.statements:
        return [tx.changes] if tx.changes else []
    from schema_store.store import file_key

    items = sorted([(file_key(c.file), c.pos, 1, n, c) for n, c in enumerate(tx.changes)]
                   + [(file_key(s.file), s.pos, 0, n, s) for n, s in enumerate(tx.statements)],
                   key=lambda i: i[:4])
    out: list = []
    for *_, item in items:
        if isinstance(item, Statement):
            out.append(item)
        elif out and isinstance(out[-1], list):
            out[-1].append(item)
        else:
            out.append([item])
    return out


def event_end(file: str, event) -> Position:
    h = event.header
    return (file, h.offset + h.event_size)


class TxAssembler:
    """Push events and row changes in; complete ``Transaction``/``Statement`` units out."""

    def __init__(self, on_warning=None):
        self.current: Transaction | None = None
        self.prepared: dict[str, Transaction] = {}
        self.context: list = []       # INTVAR/RAND/USER_VAR events waiting for their statement
        self.on_warning = on_warning or (lambda message: None)

    # -- input -------------------------------------------------------------------------
    def feed(self, item) -> list:
        if isinstance(item, CountedRows):
            self._counted(item)
            return []
        # RowCount (binlog stats): the rows of one event, counted; it stands for them
        if isinstance(item, (RowChange, RowCount)):
            self._open(item).changes.append(item)
            return []
        if not isinstance(item, SourceEvent):
            return []
        event, file = item.event, item.file
        h = event.header
        out: list = []
        if isinstance(event, (MariaGtidEvent, MysqlGtidEvent)):
            out.extend(self._abandon("a new GTID event starts"))
            tx = Transaction(event.gtid, (file, h.offset), ts=h.timestamp, server_id=h.server_id)
            if isinstance(event, MariaGtidEvent):
                tx.standalone = event.standalone
                tx.explicit = not event.standalone
                tx.xid = event.xid
            self.current = tx
            self._count(tx, event)
            return out
        current = self.current
        if current is not None:
            self._count(current, event)
        if isinstance(event, XidEvent):
            return self._commit(event_end(file, event), h.timestamp)
        if isinstance(event, XaPrepareEvent):
            if current is not None:
                key = xid_key(event.format_id, event.gtrid, event.bqual)
                current.xid = (event.format_id, event.gtrid, event.bqual)
                self.prepared[key] = current
                self.current = None
            return []
        if isinstance(event, QueryEvent):
            context, self.context = self.context, []
            return self._query(file, event, context)
        if isinstance(event, (IntvarEvent, RandEvent, UserVarEvent)):
            self.context.append(event)
        return out

    def feed_row(self, change, rows: int = 1) -> Transaction:
        """``feed`` of a RowChange the caller does not want kept (its rows are rendered or
        checked as they come): the transaction holds one RowCount per rows event,
        counting ``rows`` more; gives the transaction the change belongs to."""
        tx = self._open(change)
        last = tx.changes[-1] if tx.changes else None
        if not (isinstance(last, RowCount) and last.pos == change.pos and last.file == change.file):
            last = RowCount(change.file, change.pos, change.ts, change.server_id, change.gtid,
                            change.db, change.table, change.op, 0)
            tx.changes.append(last)
        last.count += rows
        return tx

    def _open(self, item) -> Transaction:
        """The open transaction, made for ``item`` if none is (a range starting inside a
        transaction, or no GTID/BEGIN at all)."""
        if self.current is None:
            self.current = Transaction(None, (item.file, item.pos), ts=item.ts,
                                       server_id=item.server_id)
        return self.current

    def holds(self, tx) -> bool:
        """Whether ``tx`` may still come out: the open transaction or an XA-prepared one
        (not one dropped without COMMIT)."""
        return tx is self.current or any(tx is p for p in self.prepared.values())

    def finish(self) -> list:
        """End of input: the open transaction (if it has anything) comes out incomplete."""
        out = []
        tx = self.current
        self.current = None
        if tx is not None and (tx.changes or tx.statements or tx.early):
            tx.incomplete = True
            out.append(tx)
        for prepared in self.prepared.values():
            self.on_warning(f"{prepared.label}: XA PREPARE without XA COMMIT/ROLLBACK in the "
                            f"input ({prepared.rows} row changes not given out)")
        return out

    @property
    def pending_start(self) -> Position | None:
        """Where the oldest XA-prepared (not yet committed) group starts: a resume point
        must not be after it, or its changes would be lost."""
        starts = [tx.start for tx in self.prepared.values()]
        if not starts:
            return None
        from schema_store.store import file_key

        return min(starts, key=lambda p: (file_key(p[0]), p[1]))

    def _counted(self, run) -> None:
        """A run of rows events counted in one go (reader.CountedRows): each event as its
        SourceEvent and then its RowCount (when it has rows) would be taken."""
        counts, sizes, start = run.counts, run.sizes, 0
        tx = self.current
        if tx is None:
            # the events before the first with rows belong to no transaction (a range
            # starting inside one); that one opens it, and the events after it count
            start = next((i for i, change in enumerate(counts) if change.count), len(counts))
            if start == len(counts):
                return
            tx = self._open(counts[start])
            start += 1
        taken = sum(sizes[start:]) if start else sum(sizes)
        tx.events += len(sizes) - start
        tx.bytes += taken
        tx.rows_bytes += taken
        tx.changes.extend(change for change in counts if change.count)

    # -- helpers -------------------------------------------------------------------------
    @staticmethod
    def _count(tx: Transaction, event) -> None:
        size = event.header.event_size
        tx.events += 1
        tx.bytes += size
        if isinstance(event, RowsEvent):
            tx.rows_bytes += size

    def _abandon(self, why: str) -> list:
        tx = self.current
        self.current = None
        if tx is not None and (tx.changes or tx.statements or tx.early):
            self.on_warning(f"{tx.label}: no COMMIT before {why}; its {tx.rows} row "
                            f"changes are not replayed")
        return []

    def _commit(self, end: Position, ts: int) -> list:
        tx = self.current
        self.current = None
        if tx is None:
            return []
        tx.end = end
        tx.commit_ts = ts
        return [tx]

    def _query(self, file: str, event: QueryEvent, context: list) -> list:
        h = event.header
        query = event.query
        control = transaction_control(query)
        end = event_end(file, event)
        tx = self.current
        if control == BEGIN:
            if tx is None or tx.changes or tx.statements or tx.early:
                self._abandon("BEGIN")
                tx = self.current = Transaction(None, (file, h.offset), ts=h.timestamp,
                                                server_id=h.server_id)
                self._count(tx, event)
            tx.explicit = True
            tx.standalone = False
            return []
        if control == COMMIT:
            return self._commit(end, h.timestamp)
        if control == ROLLBACK:
            if tx is not None and tx.changes:
                # Only changes of non-transactional tables survive a ROLLBACK: the source
                # kept them, so a replay keeps them too.
                self.on_warning(f"{tx.label} ended with ROLLBACK after changing rows of "
                                f"non-transactional tables: those changes are replayed")
                tx.rolled_back = True
                return self._commit(end, h.timestamp)
            self.current = None
            return []
        kind = classify_query(query)
        if kind == CONTROL:
            if control in (XA_COMMIT, XA_ROLLBACK):
                key = xid_key_from_text(query)
                prepared = self.prepared.pop(key, None) if key else None
                self.current = None
                if control == XA_ROLLBACK:
                    return []
                if prepared is None:
                    self.on_warning(f"{file} @ {h.offset}: {query.strip()[:80]}: its XA PREPARE is "
                                    f"not in the input; nothing to commit")
                    return []
                # committed now: the changes take the COMMIT's GTID and end position
                prepared.gtid = tx.gtid if tx is not None and tx.gtid else prepared.gtid
                prepared.end = end
                prepared.commit_ts = h.timestamp
                return [prepared]
            return []         # XA START / XA END / SAVEPOINT / RELEASE SAVEPOINT
        statement = Statement(file, h.offset, end, h.timestamp, h.server_id,
                              tx.gtid if tx is not None else None, event.db, query, kind, event,
                              context)
        if tx is not None and tx.explicit and not tx.standalone:
            tx.statements.append(statement)       # statement-based change inside a transaction
            return []
        # A statement group of its own (DDL): it ends the group.
        self.current = None
        return [statement]
