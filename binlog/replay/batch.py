"""Multi-row statements for ``binlog apply``: consecutive row changes of one table version
and operation become one statement per chunk, with exactly the effect of the
single-row statements of ``--format sql`` run one after the other.

- INSERT (safe mode ``REPLACE``, else ``INSERT``): one multi-row statement; the server
  writes its rows in order, as the single statements would.
- DELETE by key (safe mode, a primary or NOT NULL unique key): ``DELETE ... WHERE key IN
  (...)``; deleting a set of rows does not depend on the order.
- UPDATE in safe mode (complete after images, a key): a *run* of updates becomes ``DELETE
  ... IN`` (the before keys) then a multi-row ``REPLACE`` (the after images).  That is the
  same as DELETE + REPLACE per row as long as no row deletes a key that an earlier row
  of the run wrote: ``1 -> 11`` then ``11 -> 21`` (INSERT ... ON DUPLICATE KEY UPDATE
  can log both in one rows event) must leave only 21, and the delete-first batch would
  keep 11.  So a run ends before such a row.  (A key shift, ``3000 -> 3001`` then ``2999
  -> 3000``, stays one run: deleting 3000 first and writing it later ends the same.)
  Text keys are compared folded (case, accents, trailing spaces: what the server's
  collations may take as equal), so a run may end early but never too late.
- anything else (no key, ``--no-safe`` updates and deletes, partial row images) one
  statement per change, as ``--format sql`` writes it.

A rows event the compiled walk renders whole (``rows.sql_values``) comes from the reader
as one ``EncodedInsert``, ``EncodedKeyed`` (safe mode) or ``EncodedStatements``
(``--no-safe``) (apply's ``row_encoder``, ``encode_event``), no row decoded: its VALUES
texts, key literals or statements make the same statements, cut at the same rows, as the
decoded rows would, and the event is decoded only when a row must be named (the target
refused the statement or warned: ``LazyRows``).

Each ``Batch`` keeps its rows and how to write one of them alone: a failing multi-row
statement is rolled back by the server by itself, and apply runs the rows one by one to
name the row the target refuses.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..assembly.transactions import change_rows
from ..output.sql.literals import SqlRenderError, keys_condition, quote_ident
from ..reader import RowChange, RowCount
from ..rows import decode_rows

#: A multi-row statement stays below this size (the target's max_allowed_packet is 16 MiB
#: by default; smaller statements also keep decoding and the server busy at once).
MAX_STATEMENT_BYTES = 256 << 10
MAX_KEYS_PER_DELETE = 1000


class Batch:
    """One statement; ``rows``: [(index in the transaction, change)] (a list, or LazyRows);
    ``single(change)``: the statement for that row alone (None: the statement holds one
    row); ``first``: its first change, or the EncodedInsert holding it (db, table)."""

    __slots__ = ("sql", "rows", "single", "first")

    def __init__(self, sql: str, rows: Sequence, single: Callable | None = None, first=None):
        self.sql = sql
        self.rows = rows
        self.single = single
        self.first = first if first is not None else rows[0][1]

    def row_sql(self, change) -> str:
        return self.sql if self.single is None else self.single(change)


@dataclass(slots=True)
class EncodedEvent(RowCount):
    """The ``count`` rows of a rows event the compiled walk rendered (no row decoded);
    ``event`` and ``plan`` decode it again when a row must be named (``changes``).  A
    RowCount, so a Transaction counts its rows."""
    plan: Any = None
    event: Any = None

    @classmethod
    def of(cls, change, event, count: int, **fields):
        """``change``: the reader's RowChange for the event, without images."""
        return cls(change.file, change.pos, change.ts, change.server_id, change.gtid,
                   change.db, change.table, change.op, count, change.plan, event, **fields)

    def changes(self) -> list[RowChange]:
        """Its rows decoded (the pure walk), as the reader would have given them."""
        return [RowChange(self.file, self.pos, self.ts, self.server_id, self.gtid, self.db,
                          self.table, self.op, before, after, self.plan, n)
                for n, (before, after) in enumerate(decode_rows(self.event, self.plan))]


@dataclass(slots=True)
class EncodedInsert(EncodedEvent):
    """An insert event: ``head`` (``INSERT``/``REPLACE INTO t (cols)``) and each row's
    ``(v1, v2, ...)`` in ``values``."""
    head: str = ""
    values: list = field(default_factory=list)


@dataclass(slots=True)
class EncodedByKey(EncodedEvent):
    """A delete or update event rendered by its table's key (a key, no NULL in it):
    ``identity``, the key's column indexes when it was encoded."""
    identity: tuple = ()


@dataclass(slots=True)
class EncodedKeyed(EncodedByKey):
    """Safe mode: each row's key literals before (``before``) and, of an update, after
    (``after``), and its after image's VALUES text (``values``, after ``head``)."""
    before: list = field(default_factory=list)
    after: list = field(default_factory=list)
    values: list = field(default_factory=list)
    head: str = ""


@dataclass(slots=True)
class EncodedStatements(EncodedByKey):
    """``--no-safe``: each row's own statements (``SqlRenderer.by_key_statements``:
    DELETE or UPDATE ... SET by key), as ``statements`` gives them for the decoded row."""
    statements: list = field(default_factory=list)


class LazyRows(Sequence):
    """The rows of a statement made of EncodedEvents' rows: ``parts`` [(index in the
    transaction of the item's first row, item, first row, end row)].  A row is decoded
    (its whole event, once) only when asked for."""

    def __init__(self, parts: list):
        self.parts = parts
        self.total = sum(hi - lo for _, _, lo, hi in parts)
        self._decoded: dict = {}

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.total))]
        if k < 0:
            k += self.total
        if not 0 <= k < self.total:
            raise IndexError(k)
        for start, item, lo, hi in self.parts:
            if k < hi - lo:
                changes = self._decoded.get(id(item))
                if changes is None:
                    changes = self._decoded[id(item)] = item.changes()
                return (start + lo + k, changes[lo + k])
            k -= hi - lo
        raise IndexError(k)


def encode_event(renderer, change, event) -> EncodedEvent | None:
    """``binlog apply``'s ``row_encoder`` for the reader: a rows event whose rows the
    compiled walk renders as one EncodedInsert, EncodedKeyed (safe mode) or
    EncodedStatements (``--no-safe``), no row decoded; None: the reader decodes its rows."""
    kind = event.kind
    if kind == "insert":
        got = renderer.event_values(change, event)
        return EncodedInsert.of(change, event, len(got[1]), head=got[0], values=got[1]) \
            if got is not None else None
    try:
        identity = renderer.keys.keys(change).identity
        if not renderer.safe:
            rows = renderer.by_key_statements(change, event)
            return EncodedStatements.of(change, event, len(rows), statements=rows,
                                        identity=identity) if rows else None
        before = renderer.key_literal_rows(change, event, before=True)
    except SqlRenderError:
        return None     # raised when the decoded rows are rendered, in order
    if not before:
        return None
    keyed = EncodedKeyed.of(change, event, len(before), before=before, identity=identity)
    if kind == "delete":
        return keyed
    after = renderer.key_literal_rows(change, event, before=False)
    got = renderer.event_values(change, event)
    if after is None or got is None or not len(after) == len(got[1]) == len(before):
        return None
    keyed.after, keyed.head, keyed.values = after, got[0], got[1]
    return keyed


def row_numbers(changes, first: int) -> dict:
    """id(change) -> the number of its (first) row in its transaction, counting from
    ``first``: a RowCount stands for ``count`` rows."""
    index = {}
    n = first
    for ch in changes:
        index[id(ch)] = n
        n += change_rows(ch)
    return index


def _fold(literal: str) -> str:
    """A key literal as the server's collations might compare it: equal keys give equal
    folds (the reverse need not hold)."""
    if not literal.startswith("'"):
        return literal
    text = unicodedata.normalize("NFKD", literal.casefold())
    text = "".join(c for c in text if c.isascii()).rstrip(" '").replace("ss", "s")
    return text


def row_statements(renderer, changes, index) -> Iterator[Batch]:
    """The statements replaying ``changes`` (consecutive row changes of one transaction,
    in binlog order); ``index[id(change)]`` is the change's number in its transaction."""
    run: list = []
    for ch in changes:
        if run and (ch.plan is not run[0][1].plan or ch.op != run[0][1].op):
            yield from _run(renderer, run)
            run = []
        run.append((index[id(ch)], ch))
    if run:
        yield from _run(renderer, run)


def _run(r, rows) -> Iterator[Batch]:
    first = rows[0][1]
    if isinstance(first, EncodedEvent):
        kind = type(first)
        if all(type(ch) is kind for _, ch in rows) and _still_keyed_alike(r, first):
            if kind is EncodedInsert:
                yield from _encoded_inserts(r, [(i, ch, 0, ch.count) for i, ch in rows])
                return
            if kind is EncodedStatements:
                yield from _encoded_singles(rows)
                return
            if sum(ch.count for _, ch in rows) > 1:
                yield from (_encoded_deletes if first.op == "delete" else _encoded_updates)(r, rows)
                return
        rows = _decoded(rows)       # a run mixing them with decoded rows: as those
    elif any(isinstance(ch, EncodedEvent) for _, ch in rows):
        rows = _decoded(rows)
    if not rows:
        return
    first = rows[0][1]
    op = first.op
    identity = r.keys.keys(first).identity
    if op == "insert":
        yield from _inserts(r, rows)
    elif len(rows) > 1 and op == "delete" and identity and r.safe:
        yield from _deletes(r, rows)
    elif (len(rows) > 1 and op == "update" and identity and r.safe
          and all(r.complete(ch, ch.after) for _, ch in rows)):
        yield from _updates(r, rows)
    else:
        yield from _singles(r, rows)


def _still_keyed_alike(r, item) -> bool:
    """Whether the key catalog still gives the encoded item's table the key (and columns
    written) it was encoded with; else its rows are rendered decoded, by today's."""
    if isinstance(item, EncodedByKey):
        return r.keys.keys(item).identity == item.identity
    return isinstance(item, EncodedInsert) and r.insert_template(item)[0] == item.head


def _decoded(rows) -> list[tuple]:
    """(index, RowChange) of every row of ``rows``, EncodedEvents decoded."""
    out: list[tuple] = []
    for i, ch in rows:
        if isinstance(ch, EncodedEvent):
            out.extend((i + n, change) for n, change in enumerate(ch.changes()))
        else:
            out.append((i, ch))
    return out


def _encoded_singles(items) -> Iterator[Batch]:
    """``_singles`` of EncodedStatements: each row's statements, the row decoded only if
    asked for."""
    for i, item in items:
        for k, statements in enumerate(item.statements):
            rows = LazyRows([(i, item, k, k + 1)])
            for sql in statements:
                yield Batch(sql, rows, None, item)


def _singles(r, rows) -> Iterator[Batch]:
    for i, ch in rows:
        for sql in r.statements(ch):
            yield Batch(sql, [(i, ch)])


def _inserts(r, rows) -> Iterator[Batch]:
    def single(change):
        return r.insert(change, change.after)

    first = rows[0][1]
    images = [ch.after for _, ch in rows]
    width = len(first.plan.columns)
    if all(len(image) == width for image in images):     # one table version: one template
        head, values = r.insert_template(first)
        row_texts = ([r.row_values(ch, ch.after, values) for _, ch in rows] if r.events
                     else values.many(images))
        pairs: Iterable = zip([head] * len(rows), row_texts, strict=True)
    else:
        pairs = (r.insert_parts(ch, ch.after) for _, ch in rows)
    chunk: list = []
    texts: list[str] = []
    size, last = 0, ""
    for (i, ch), (h, v) in zip(rows, pairs, strict=True):
        if chunk and (h != last or size + len(v) > MAX_STATEMENT_BYTES):
            yield Batch(last + " VALUES " + ", ".join(texts), chunk, single)
            chunk, texts, size = [], [], 0
        last = h
        chunk.append((i, ch))
        texts.append(v)
        size += len(v) + 2
    if chunk:
        yield Batch(last + " VALUES " + ", ".join(texts), chunk, single)


def _encoded_inserts(r, segments) -> Iterator[Batch]:
    """Rows of EncodedInserts (or of EncodedKeyeds' after images) as multi-row statements,
    cut where ``_inserts`` cuts: before a row that would take a statement past
    MAX_STATEMENT_BYTES, or at a new head.  ``segments``: [(index of the item's first row,
    item, first row, end row)]; a segment that fits whole is taken whole (its last row
    decides)."""
    def single(change):
        return r.insert(change, change.after)

    parts: list = []        # LazyRows parts of the statement being made
    texts: list[str] = []
    size, last = 0, ""
    for index, item, start, end in segments:
        values = item.values
        if parts and item.head != last:
            yield _encoded_batch(parts, texts, last, single)
            parts, texts, size = [], [], 0
        last = item.head
        total = sum(map(len, values[start:end])) + 2 * (end - start)
        if size + total - 2 <= MAX_STATEMENT_BYTES:
            parts.append((index, item, start, end))
            texts.extend(values[start:end])
            size += total
            continue
        lo = start
        for k in range(start, end):
            v = values[k]
            if (parts or k > lo) and size + len(v) > MAX_STATEMENT_BYTES:
                if k > lo:
                    parts.append((index, item, lo, k))
                    texts.extend(values[lo:k])
                yield _encoded_batch(parts, texts, last, single)
                parts, texts, size, lo = [], [], 0, k
            size += len(v) + 2
        parts.append((index, item, lo, end))
        texts.extend(values[lo:end])
    if parts:
        yield _encoded_batch(parts, texts, last, single)


def _encoded_batch(parts, texts, head, single) -> Batch:
    return Batch(head + " VALUES " + ", ".join(texts), LazyRows(parts), single, parts[0][1])


def _delete_batch(r, chunk, keys, first=None) -> Batch:
    """``key IN (...)`` for a one-column key; ``(a = 1 AND b = 2) OR ...`` for a longer
    one (a range union for the optimizer, as the single statements' conditions are).
    ``chunk``: the rows, a list or LazyRows (then ``first``: the item holding the first)."""
    first = first if first is not None else chunk[0][1]
    tk = r.keys.keys(first)
    names = r._names(first, tk)
    cond = keys_condition([quote_ident(names[i]) for i in tk.identity], keys)
    sql = f"DELETE FROM {r.table(first)} WHERE {cond}"
    return Batch(sql, chunk, lambda change: r.delete(change, change.before), first)


def _segments(rows) -> list:
    """LazyRows parts of ``rows`` [(index of the item's first row, item, row)], rows of
    one item next to each other merged."""
    parts: list = []
    for index, item, k in rows:
        last = parts[-1] if parts else None
        if last is not None and last[1] is item and last[3] == k:
            parts[-1] = (index, item, last[2], k + 1)
        else:
            parts.append((index, item, k, k + 1))
    return parts


def _encoded_delete_batches(r, rows) -> Iterator[Batch]:
    """``rows`` [(index, item, row)]: DELETE ... IN of MAX_KEYS_PER_DELETE rows at most."""
    for start in range(0, len(rows), MAX_KEYS_PER_DELETE):
        part = rows[start:start + MAX_KEYS_PER_DELETE]
        yield _delete_batch(r, LazyRows(_segments(part)), [item.before[k] for _, item, k in part],
                            part[0][1])


def _encoded_deletes(r, items) -> Iterator[Batch]:
    """``_deletes`` of EncodedKeyeds (no NULL key: their rows all go by key)."""
    rows = [(i, item, k) for i, item in items for k in range(item.count)]
    yield from _encoded_delete_batches(r, rows)


def _encoded_updates(r, items) -> Iterator[Batch]:
    """``_updates`` of EncodedKeyeds: the same runs, from the rows' key literals."""
    run: list = []
    written: set = set()
    for i, item in items:
        for k in range(item.count):
            if tuple(map(_fold, item.before[k])) in written:
                yield from _encoded_update_run(r, run)
                run, written = [], set()
            written.add(tuple(map(_fold, item.after[k])))
            run.append((i, item, k))
    yield from _encoded_update_run(r, run)


def _encoded_update_run(r, run) -> Iterator[Batch]:
    if not run:
        return
    yield from _encoded_delete_batches(r, run)
    yield from _encoded_inserts(r, _segments(run))


def _deletes(r, rows) -> Iterator[Batch]:
    """``DELETE ... WHERE key IN (...)``; a row whose key holds NULL (the target's key
    is not the source's) is deleted alone, by all its columns."""
    chunk: list = []
    keys: list = []
    for i, ch in rows:
        lits = _key_literals(r, ch, ch.before)
        if lits is None:
            if chunk:
                yield _delete_batch(r, chunk, keys)
                chunk, keys = [], []
            yield Batch(r.delete(ch, ch.before), [(i, ch)])
            continue
        chunk.append((i, ch))
        keys.append(lits)
        if len(chunk) >= MAX_KEYS_PER_DELETE:
            yield _delete_batch(r, chunk, keys)
            chunk, keys = [], []
    if chunk:
        yield _delete_batch(r, chunk, keys)


def _key_literals(r, change, row) -> list[str] | None:
    tk = r.keys.keys(change)
    cols = change.plan.columns
    if any(cols[i].key not in row or row[cols[i].key] is None for i in tk.identity):
        return None
    return r.key_literals(change, row)


def _updates(r, rows) -> Iterator[Batch]:
    """Runs in which no row deletes a key an earlier row of the run wrote: DELETE of the
    before keys, then REPLACE of the after images (module docstring)."""
    run: list = []
    written: set = set()
    for i, ch in rows:
        before = _key_literals(r, ch, ch.before)
        after = _key_literals(r, ch, ch.after)
        if before is None or after is None:
            yield from _update_run(r, run)
            run, written = [], set()
            yield from _singles(r, [(i, ch)])
            continue
        if tuple(map(_fold, before)) in written:
            yield from _update_run(r, run)
            run, written = [], set()
        written.add(tuple(map(_fold, after)))
        run.append((i, ch, before))
    yield from _update_run(r, run)


def _update_run(r, run) -> Iterator[Batch]:
    if not run:
        return
    for start in range(0, len(run), MAX_KEYS_PER_DELETE):
        part = run[start:start + MAX_KEYS_PER_DELETE]
        yield _delete_batch(r, [(i, ch) for i, ch, _ in part], [k for _, _, k in part])
    yield from _inserts(r, [(i, ch) for i, ch, _ in run])
