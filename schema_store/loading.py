"""Opening the schema store a run reads through: the one place that turns "a store file,
DDL files, a live server, DDL followed from the binlog" into a loaded SchemaResolver, for
the command line (``binlog dump`` and the other commands) and the Spark planner."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from binlog.errors import UsageError

if TYPE_CHECKING:   # imported when a store is opened: a run that names none skips them
    from .resolver import SchemaResolver
    from .store import SchemaStore


def load_resolver(*, store_path: str | None = None, ddl_paths: Iterable[str] = (),
                  dsn: str | None = None, track_ddl: bool = True, required: bool = False,
                  copy_store: bool = False, tracked: dict | None = None,
                  on_warning: Callable[[str], None] | None = None,
                  lower_case_table_names: int | None = None) -> SchemaResolver | None:
    """The schema store the settings describe, loaded; None when they name none and
    nothing requires one.

    ``store_path``: the SQLite store (created if missing), or with ``copy_store`` copied
    into memory and never written (it must exist); ``ddl_paths``: DDL files (dumps,
    CREATE TABLE scripts) as of the binlog's start; ``dsn``: a live server to snapshot;
    ``tracked``: a snapshot of binlog DDL versions from earlier runs; ``track_ddl``:
    follow the binlog's own DDL from here on; ``lower_case_table_names``: how the server
    compared names (None: a live ``dsn`` says, else the binlog may)."""
    ddl_paths = list(ddl_paths)
    if not (store_path or ddl_paths or dsn or required or tracked):
        return None
    from .resolver import SchemaResolver
    from .store import SchemaStore

    store = _copied(store_path) if copy_store else SchemaStore(store_path)
    if store.read_only:
        # a store we may not write still serves reads: DDL is tracked in a copy in memory
        if on_warning is not None:
            on_warning(f"schema store {store_path} is read-only: the DDL read is tracked in "
                       f"memory, not saved")
        store.close()
        store = _copied(store_path)
    for path in ddl_paths:
        try:
            text = open(path, encoding="utf-8", errors="surrogateescape").read()
        except OSError as exc:
            raise UsageError(f"cannot read --schema-ddl {path}: {exc.strerror}") from exc
        store.import_ddl(text, source=f"ddl:{path}")
    if dsn:
        from .live import import_live

        import_live(store, dsn)
        if lower_case_table_names is None:
            from .live import server_lower_case_table_names

            lower_case_table_names = server_lower_case_table_names(dsn)
    if tracked:
        from .snapshot import import_snapshot

        import_snapshot(tracked, store)
    return SchemaResolver(store, track_ddl=track_ddl, on_warning=on_warning,
                          lower_case_table_names=lower_case_table_names)


def _copied(store_path: str | None) -> SchemaStore:
    from .snapshot import export_snapshot, import_snapshot
    from .store import SchemaStore

    store = SchemaStore()
    if store_path:
        if not Path(store_path).exists():
            raise UsageError(f"no such schema store: {store_path}")
        source = SchemaStore(store_path)
        try:
            import_snapshot(export_snapshot(source), store)
        finally:
            source.close()
    return store
