"""SQL statements for row changes (``SqlRenderer``), for ``--format sql``/``flashback``
and ``binlog apply``.

Safe mode (the default): INSERT as REPLACE, UPDATE as DELETE by key + REPLACE, DELETE by
key - each statement sets a row to the state the source gave it, so replaying a range
twice, or after a crash in the middle, ends in the same contents.  The key is the primary
key, else a NOT NULL unique key, else every column (NULL-safe, byte-exact for strings,
``LIMIT 1``); see ``binlog.replay.keys``.
"""
from __future__ import annotations

from ...charsets import CHARSET_CODECS, charset_of
from ...constants import ColumnType as T
from ...rows import sql_values
from ...types.strings import LargeText
from .literals import (
    TEMPORAL_TYPES,
    RowValues,
    SqlRenderError,
    hex_literal,
    literal,
    literal_bytes,
    literal_function,
    quote_ident,
    value_code,
)

#: Columns a row's WHERE (without a key) cannot compare: MySQL binary JSON, VECTOR.
NOT_COMPARABLE = frozenset({T.JSON, T.VECTOR})


def _string_bytes(value, col) -> bytes | memoryview | None:
    """The stored bytes of a string value (for byte-exact comparison), else None."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, memoryview):
        return value                # a large value's view: hex_literal writes it in pieces
    if isinstance(value, LargeText):
        return value.data
    if isinstance(value, str) and col.type not in TEMPORAL_TYPES | {T.ENUM, T.SET, T.JSON}:
        codec = col.encoding or CHARSET_CODECS.get(charset_of(col) or "")
        if codec:
            return value.encode(codec)
    return None


class SqlRenderer:
    """SQL statements for row changes; ``keys`` is a binlog.replay.keys.KeyCatalog."""

    def __init__(self, keys, *, safe: bool = True, rewrite_db: dict | None = None):
        self.keys = keys
        self.safe = safe
        self.rewrite_db = rewrite_db or {}      # --rewrite-db: names in the SQL only
        self._templates: dict = {}
        self._literals: dict = {}       # id(column) -> (column, literal_function(column))
        # (file, offset) -> [plan, rows event, (RowValues, [text per row] | None)]: the
        # events of the transaction being rendered (note_event), whose after images the
        # compiled walk writes; None: not kept (flashback and split changes are not the
        # events' own images)
        self.events: dict | None = None
        self._current: tuple | None = None      # the event whose rows are rendered now

    def note_event(self, name, event, plan) -> None:
        if self.events is not None and event.kind in ("insert", "update"):
            self.events[(name, event.header.offset)] = [plan, event, None]

    def row_values(self, change, row, values: RowValues) -> str:
        """``values(row)``: from the compiled walk of the change's event when ``row`` is
        its after image and the event was noted, else rendered from the decoded row."""
        events, key = self.events, (change.file, change.pos)
        entry = events.get(key) if events else None
        if events and entry is not None and row is change.after and entry[0] is change.plan:
            texts = entry[2]
            if texts is None or texts[0] is not values:
                texts = entry[2] = (values, sql_values(entry[1], change.plan, values.spec,
                                                       literal_bytes))
            if self._current != key:
                # rows are rendered in event order: the previous event is done (a batch
                # that goes back to it renders from the decoded rows), so a transaction
                # sent before its COMMIT does not hold all its events
                events.pop(self._current, None)
                self._current = key
            if texts[1] is not None and change.row < len(texts[1]):
                return texts[1][change.row]
        return values(row)

    # -- names ---------------------------------------------------------------------------
    def table(self, change) -> str:
        db = self.rewrite_db.get(change.db, change.db)
        return f"{quote_ident(db)}.{quote_ident(change.table)}"

    def _names(self, change, tk) -> list[str]:
        cols = change.plan.columns
        if tk.names is not None:
            return list(tk.names)
        names = [c.name for c in cols]
        if not all(names):
            raise SqlRenderError(
                "the binlog does not carry column names (binlog_row_metadata is not FULL) and "
                "no schema gives them", table=f"{change.db}.{change.table}",
                source=change.file, event_offset=change.pos,
                hint="pass --schema-ddl FILE, --schema-from DSN or --schema-store PATH")
        return names

    def _present(self, row, change, tk):
        """(column, name, value) of the image's columns that are written."""
        names = self._names(change, tk)
        out = []
        for col in change.plan.columns:
            if col.index in tk.skip:
                continue
            key = col.key
            if key in row:
                out.append((col, names[col.index], row[key]))
        return out

    # -- multi-row statements (binlog apply) -------------------------------------------
    def insert_template(self, change, replace: bool | None = None):
        """(head, RowValues) of complete after images of the change's table version,
        cached by plan and key choice (a DDL gives new ones); ``head`` is what ``insert``
        writes before ``VALUES``."""
        tk = self.keys.keys(change)
        plan = change.plan
        verb = "REPLACE" if (self.safe if replace is None else replace) else "INSERT"
        ckey = (id(plan), verb)
        entry = self._templates.get(ckey)
        if entry is not None and entry[0] is plan and entry[1] is tk:
            return entry[2], entry[3]
        names = self._names(change, tk)
        cols = [c for c in plan.columns if c.index not in tk.skip]
        head = (f"{verb} INTO {self.table(change)} ("
                + ", ".join(quote_ident(names[c.index]) for c in cols) + ")")
        if len(self._templates) > 4096:
            self._templates.clear()
        # the plan itself is held: its id cannot be taken by another while cached
        spec = "".join("s" if c.index in tk.skip else value_code(c) for c in plan.columns)
        values = RowValues(cols, spec.encode("ascii"))
        self._templates[ckey] = (plan, tk, head, values)
        return head, values

    def event_values(self, change, event) -> tuple[str, list] | None:
        """(head, each row's VALUES text) of an insert event, by the compiled walk from its
        bytes (``change``: its RowChange without images); None when the walk leaves it
        to the decoded rows (or the names are not known: ``insert`` raises that)."""
        try:
            head, values = self.insert_template(change)
        except SqlRenderError:
            return None
        texts = sql_values(event, change.plan, values.spec, literal_bytes)
        return (head, texts) if texts else None

    def insert_parts(self, change, row, *, replace: bool | None = None) -> tuple[str, str]:
        """(head, values): ``insert`` is ``head + " VALUES " + values``."""
        if len(row) == len(change.plan.columns):
            head, values = self.insert_template(change, replace)
            return head, self.row_values(change, row, values)
        head, _, values = self.insert(change, row, replace=replace).partition(" VALUES ")
        return head, values

    def key_literals(self, change, row) -> list[str]:
        """The literals of the row's identity key values, in key order."""
        tk = self.keys.keys(change)
        cols = change.plan.columns
        return [literal(row[cols[i].key], cols[i]) for i in tk.identity]

    def set_names(self, change) -> tuple:
        """Each column's quoted name as bytes (b"" for one not written): the ``names`` of
        rows.sql_values for ``update``'s SET list."""
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        return tuple(b"" if c.index in tk.skip else quote_ident(names[c.index]).encode("utf-8", "surrogateescape")
                     for c in change.plan.columns)

    def key_conditions(self, change, event) -> list[str] | None:
        """``where``'s condition by key of each row's before image of a delete or update
        event, from the event's bytes (``key_literal_rows``); None when the table has no
        key, a key value is NULL, or the compiled walk cannot take the event: ``where`` of
        the decoded rows then."""
        rows = self.key_literal_rows(change, event, before=True)
        if rows is None:
            return None
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        heads = [f"{quote_ident(names[i])} = " for i in tk.identity]
        return [" AND ".join(h + v for h, v in zip(heads, row, strict=True)) for row in rows]

    def by_key_statements(self, change, event) -> list[list[str]] | None:
        """Each row's statements of a delete or update event, from its bytes, as
        ``statements`` renders the decoded row: DELETE by key; an update's DELETE by key +
        REPLACE of the whole after image (safe mode) or ``UPDATE ... SET`` every column of
        it; None when ``key_conditions`` or the after images cannot be had so."""
        conditions = self.key_conditions(change, event)
        if not conditions:
            return None
        table = self.table(change)
        deletes = [f"DELETE FROM {table} WHERE {c} LIMIT 1" for c in conditions]
        if event.kind == "delete":
            return [[d] for d in deletes]
        head, values = self.insert_template(change)
        if not self.safe:
            sets = sql_values(event, change.plan, values.spec, literal_bytes,
                              names=self.set_names(change))
            if sets is None or len(sets) != len(conditions):
                return None
            return [[f"UPDATE {table} SET {s} WHERE {c} LIMIT 1"]
                    for s, c in zip(sets, conditions, strict=True)]
        texts = sql_values(event, change.plan, values.spec, literal_bytes)
        if texts is None or len(texts) != len(deletes):
            return None
        return [[d, f"{head} VALUES {v}"] for d, v in zip(deletes, texts, strict=True)]

    def key_literal_rows(self, change, event, before: bool) -> list[list[str]] | None:
        """Each row's identity key literals (``key_literals``), of its before or after
        image, from the event's bytes (rows.sql_values, a key column at a time); None when
        the table has no key, a key value is NULL, or the compiled walk cannot take it."""
        tk = self.keys.keys(change)
        if not tk.identity:
            return None
        self._names(change, tk)     # (raises SqlRenderError when the names are unknown)
        cols = change.plan.columns
        columns = []
        for i in tk.identity:
            spec = bytearray(b"s" * len(cols))
            spec[i] = ord(value_code(cols[i]))
            texts = sql_values(event, change.plan, bytes(spec), literal_bytes, before=before)
            if texts is None:
                return None
            columns.append(texts)
        rows = [[texts[row][1:-1] for texts in columns] for row in range(len(columns[0]))]  # "(v)" -> v
        if any("NULL" in literals for literals in rows):
            return None
        return rows

    def _literal(self, col):
        """``literal_function(col)``, made once per column (the column object is held:
        its id is not reused while cached)."""
        entry = self._literals.get(id(col))
        if entry is None or entry[0] is not col:
            if len(self._literals) > 65536:
                self._literals.clear()
            entry = self._literals[id(col)] = (col, literal_function(col))
        return entry[1]

    # -- statements ----------------------------------------------------------------------
    def insert(self, change, row, *, replace: bool | None = None) -> str:
        if len(row) == len(change.plan.columns):
            # a complete image: the compiled VALUES of its table version (RowValues)
            head, values = self.insert_template(change, replace)
            return f"{head} VALUES {self.row_values(change, row, values)}"
        tk = self.keys.keys(change)
        items = self._present(row, change, tk)
        verb = "REPLACE" if (self.safe if replace is None else replace) else "INSERT"
        cols = ", ".join(quote_ident(n) for _, n, _ in items)
        vals = ", ".join(literal(v, c) for c, _, v in items)
        return f"{verb} INTO {self.table(change)} ({cols}) VALUES ({vals})"

    def where(self, change, row) -> tuple[str, bool]:
        """(condition, by_key): the row's key, or every comparable column."""
        tk = self.keys.keys(change)
        names = self._names(change, tk)
        cols = change.plan.columns
        identity = tk.identity
        if identity and all(cols[i].key in row and row[cols[i].key] is not None for i in identity):
            return " AND ".join(f"{quote_ident(names[i])} = {self._literal(cols[i])(row[cols[i].key])}"
                                for i in identity), True
        parts = []
        for col in cols:
            if col.key not in row or col.type in NOT_COMPARABLE or col.index in tk.skip:
                continue
            value = row[col.key]
            name = quote_ident(names[col.index])
            if value is None:
                parts.append(f"{name} IS NULL")
                continue
            raw = _string_bytes(value, col)
            if raw is not None:
                parts.append(f"CAST({name} AS BINARY) = {hex_literal(raw)}")
            else:
                parts.append(f"{name} = {literal(value, col)}")
        if not parts:
            raise SqlRenderError("the row image has no column a WHERE clause can compare",
                                 table=f"{change.db}.{change.table}", source=change.file,
                                 event_offset=change.pos)
        return " AND ".join(parts), False

    def delete(self, change, row) -> str:
        cond, _ = self.where(change, row)
        return f"DELETE FROM {self.table(change)} WHERE {cond} LIMIT 1"

    def update(self, change, before, after) -> str:
        tk = self.keys.keys(change)
        items = self._present(after, change, tk)
        sets = ", ".join(f"{quote_ident(n)} = {self._literal(c)(v)}" for c, n, v in items)
        cond, _ = self.where(change, before)
        return f"UPDATE {self.table(change)} SET {sets} WHERE {cond} LIMIT 1"

    def complete(self, change, row) -> bool:
        return row is not None and len(row) == len(change.plan.columns)

    def statements(self, change) -> list[str]:
        """The statements replaying one change, in order."""
        op = change.op
        if op == "insert":
            return [self.insert(change, change.after)]
        if op == "delete":
            return [self.delete(change, change.before)]
        if self.safe and self.complete(change, change.after):
            return [self.delete(change, change.before), self.insert(change, change.after)]
        return [self.update(change, change.before, change.after)]

    def split_statements(self, deletes, passthrough, puts) -> list[tuple[object, str]]:
        """Statements of a split transaction: every DELETE first (the DELETE half of a safe
        UPDATE included), the unchainable tables in order, then REPLACE/INSERT/UPDATE."""
        out = [(ch, self.delete(ch, ch.before)) for ch in deletes]
        late = []
        for ch in puts:
            if ch.op == "update" and self.safe and self.complete(ch, ch.after):
                out.append((ch, self.delete(ch, ch.before)))
                late.append((ch, self.insert(ch, ch.after)))
            elif ch.op == "update":
                late.append((ch, self.update(ch, ch.before, ch.after)))
            else:
                late.append((ch, self.insert(ch, ch.after)))
        for ch in passthrough:
            out.extend((ch, s) for s in self.statements(ch))
        return out + late


def check_whole(ch, renderer) -> None:
    for image in (ch.before, ch.after):
        if image is not None and not renderer.complete(ch, image):
            raise SqlRenderError(
                "flashback needs whole row images; this one is partial "
                "(binlog_row_image=MINIMAL or NOBLOB)", table=f"{ch.db}.{ch.table}",
                source=ch.file, event_offset=ch.pos,
                hint="only ranges written with binlog_row_image=FULL can be undone")


def invert(change):
    """The change that undoes ``change`` (flashback)."""
    from dataclasses import replace

    if change.op == "insert":
        return replace(change, op="delete", before=change.after, after=None)
    if change.op == "delete":
        return replace(change, op="insert", before=None, after=change.before)
    return replace(change, op="update", before=change.after, after=change.before)


