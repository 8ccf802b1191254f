"""Which columns find a row: primary keys and non-null unique keys for replay.

A replayed UPDATE or DELETE names its row by the **primary key**; without one by the first
unique key whose columns are all NOT NULL; without either by every column (NULL-safe,
``LIMIT 1``).  Where the keys come from, first found wins:

1. a live server's ``information_schema`` (``binlog apply``: the target itself; ``binlog
   dump``: the ``--schema-from`` server), which also knows the unique keys, generated
   columns (never written) and, when the binlog has no column names, the names by position;
2. the TABLE_MAP's optional metadata (``binlog_row_metadata=FULL``: SIMPLE_PRIMARY_KEY);
3. the schema store (``--schema-ddl`` / ``--schema-store``: the primary key as of the
   event's position).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..events import TableMapEvent


@dataclass(frozen=True)
class TableKeys:
    primary: tuple[int, ...] | None            # column indices of the primary key
    uniques: tuple[tuple[int, ...], ...] = ()  # NOT NULL unique keys (the primary key first)
    names: tuple[str, ...] | None = None       # column names when the binlog has none
    skip: frozenset[int] = frozenset()         # generated columns: never written
    source: str = "none"
    conflicts: tuple[tuple[int, ...], ...] = ()  # every unique key, nullable ones too (live)

    @property
    def identity(self) -> tuple[int, ...] | None:
        """Columns that find one row: the primary key, else a NOT NULL unique key."""
        if self.primary:
            return self.primary
        return self.uniques[0] if self.uniques else None


@dataclass
class LiveTable:
    """One table as ``information_schema`` describes it."""
    db: str
    table: str
    columns: list[str]
    data_types: list[str]
    column_types: list[str]
    nullable: list[bool]
    generated: set[str] = field(default_factory=set)
    datetime_precision: list[int | None] = field(default_factory=list)
    charsets: list[str | None] = field(default_factory=list)
    primary: tuple[str, ...] = ()
    uniques: list[tuple[str, ...]] = field(default_factory=list)   # every UNIQUE index

    def index(self, name: str) -> int | None:
        low = name.lower()
        for i, col in enumerate(self.columns):
            if col.lower() == low:
                return i
        return None

    def _not_null(self, name: str) -> bool:
        i = self.index(name)
        return i is not None and not self.nullable[i]

    def not_null_uniques(self) -> list[tuple[str, ...]]:
        keys = [self.primary] if self.primary else []
        for key in self.uniques:
            if all(self._not_null(c) for c in key) and key not in keys:
                keys.append(key)
        return keys


def load_live_tables(conn, db: str | None = None, table: str | None = None
                     ) -> dict[tuple[str, str], LiveTable]:
    """Columns, primary and unique keys of tables on a live server (a PyMySQL connection),
    read by schema_store.live (every non-system database when ``db`` is None)."""
    from schema_store.live import read_columns, read_unique_keys, table_condition

    where, args = table_condition(db, table)
    tables: dict[tuple[str, str], LiveTable] = {}
    with conn.cursor() as cur:
        for (sch, tbl, col, dtype, ctype, nullable, _nprec, _nscale, dtp, charset, _coll,
             _maxlen, extra) in read_columns(cur, where, args):
            t = tables.get((sch, tbl))
            if t is None:
                t = tables[(sch, tbl)] = LiveTable(sch, tbl, [], [], [], [])
            t.columns.append(col)
            t.data_types.append(dtype.lower())
            t.column_types.append(ctype)
            t.nullable.append(nullable == "YES")
            t.datetime_precision.append(None if dtp is None else int(dtp))
            t.charsets.append(charset.lower() if charset else None)
            extra = (extra or "").upper()
            if "GENERATED" in extra or extra in ("VIRTUAL", "PERSISTENT", "STORED"):
                t.generated.add(col)
        for key, indexes in read_unique_keys(cur, where, args).items():
            t = tables.get(key)
            if t is None:
                continue
            for name, cols in indexes.items():
                if name == "PRIMARY":
                    t.primary = cols
                else:
                    t.uniques.append(cols)
    return tables


class KeyCatalog:
    """Key choice per table for a run.  ``live(db, table) -> LiveTable | None`` is asked
    first; ``schema`` is the SchemaResolver of the run (or None)."""

    def __init__(self, *, schema=None, live=None):
        self.schema = schema
        self.live = live
        self.table_map_pk: dict[tuple[str, str], tuple[tuple[int, ...], int]] = {}
        self._cache: dict[tuple, TableKeys] = {}

    def observe(self, event) -> None:
        """Feed events (TABLE_MAPs carry the primary key with binlog_row_metadata=FULL)."""
        if isinstance(event, TableMapEvent) and event.primary_key is not None:
            entry = (tuple(event.primary_key), len(event.columns))
            key = (event.db, event.table)
            if self.table_map_pk.get(key) != entry:
                self.table_map_pk[key] = entry
                self._cache = {k: v for k, v in self._cache.items() if k[:2] != key}

    def invalidate(self) -> None:
        """After DDL: ask the sources again."""
        self._cache.clear()

    def keys(self, change) -> TableKeys:
        plan = change.plan
        ckey = (change.db, change.table, id(plan))
        found = self._cache.get(ckey)
        if found is None:
            found = self._cache[ckey] = self._resolve(change)
        return found

    def _resolve(self, change) -> TableKeys:
        plan = change.plan
        cols = plan.columns
        if self.live is not None:
            live = self.live(change.db, change.table)
            if live is not None:
                keys = _from_live(live, cols)
                if keys is not None:
                    return keys
        entry = self.table_map_pk.get((change.db, change.table))
        if entry is not None and entry[1] == len(cols) and all(i < len(cols) for i in entry[0]):
            pk = entry[0] or None
            return TableKeys(pk, (pk,) if pk else (), source="table_map")
        if self.schema is not None and hasattr(self.schema, "store"):
            schema = self.schema.store.schema(change.db, change.table, (change.file, change.pos))
            if schema is not None and schema.primary_key:
                index = _name_index(cols)
                pk = tuple(index.get(n.lower(), -1) for n in schema.primary_key)
                if all(i >= 0 for i in pk):
                    return TableKeys(pk, (pk,), source="schema")
        return TableKeys(None, source="none")


def _name_index(cols) -> dict[str, int]:
    return {c.name.lower(): c.index for c in cols if c.name}


def _from_live(live: LiveTable, cols) -> TableKeys | None:
    names = None
    if all(c.name for c in cols):
        index = _name_index(cols)
    elif len(live.columns) == len(cols):
        names = tuple(live.columns)
        index = {n.lower(): i for i, n in enumerate(live.columns)}
    else:
        return None

    def indices(key):
        out = tuple(index.get(n.lower(), -1) for n in key)
        return out if all(i >= 0 for i in out) else None

    pk = indices(live.primary) if live.primary else None
    uniques = tuple(k for k in (indices(key) for key in live.not_null_uniques()) if k)
    skip = frozenset(i for n in live.generated if (i := index.get(n.lower())) is not None)
    every = [live.primary] if live.primary else []
    every += [key for key in live.uniques if key != live.primary]
    found = tuple(indices(key) for key in every)
    # a unique key naming a column the rows lack cannot be checked: no conflict keys
    conflicts = found if all(found) else ()
    return TableKeys(pk, uniques, names, skip, source="live", conflicts=conflicts)
