"""A schema store as plain JSON data: what Spark executors get instead of a DB connection.

``export_snapshot(store)`` reads every version, override and database default of a
:class:`SchemaStore` (rows in insertion order, so the store's ordering rules give the same
answers); ``import_snapshot(data)`` builds an in-memory store from it (or fills the one
given).  ``snapshot_json`` / ``store_from_json`` do the same through a JSON string.
"""
from __future__ import annotations

import json

from .store import SchemaStore

FORMAT = 1

_TABLES = {
    "versions": ("db", "tbl", "pos_file", "pos_offset", "source", "schema_json"),
    "overrides": ("db", "tbl", "col_index", "col_name", "data_type", "precision", "pos_file",
                  "pos_offset", "kind", "source"),
    "databases": ("db", "pos_file", "pos_offset", "charset", "collation", "dropped", "source"),
}


def export_snapshot(store: SchemaStore) -> dict:
    """All rows of the store, oldest first, as lists (column names under ``columns``)."""
    out: dict = {"format": FORMAT, "columns": {t: list(c) for t, c in _TABLES.items()}}
    with store._lock:
        for table, cols in _TABLES.items():
            rows = store._conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY id").fetchall()
            out[table] = [list(r) for r in rows]
        for row in out["versions"]:
            # a version stored as a delta of another row becomes whole: a snapshot's rows
            # are copied, filtered and renumbered, so none may depend on another's id
            row[5] = store.full_payload(row[0], row[1], row[5])
    return out


def import_snapshot(data: dict, store: SchemaStore | None = None) -> SchemaStore:
    """Add the snapshot's rows to ``store`` (a new in-memory store by default)."""
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown schema snapshot format {data.get('format')!r}")
    store = store if store is not None else SchemaStore()
    with store._lock:
        conn = store._conn
        conn.execute("BEGIN")
        try:
            for table, cols in _TABLES.items():
                given = data.get("columns", {}).get(table, list(cols))
                rows = data.get(table, [])
                if rows:
                    conn.executemany(
                        f"INSERT INTO {table} ({', '.join(given)}) VALUES ({', '.join('?' * len(given))})",
                        [tuple(r) for r in rows])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        store._cache.clear()
        store._overrides_cache = None
    return store


def snapshot_json(store: SchemaStore) -> str:
    return json.dumps(export_snapshot(store), ensure_ascii=False, separators=(",", ":"))


def store_from_json(text: str, store: SchemaStore | None = None) -> SchemaStore:
    return import_snapshot(json.loads(text), store)


def copy_store(store: SchemaStore) -> SchemaStore:
    """An in-memory copy (e.g. of a --schema-store file, to track DDL without writing it)."""
    return import_snapshot(export_snapshot(store))


__all__ = ["export_snapshot", "import_snapshot", "snapshot_json", "store_from_json", "copy_store"]
