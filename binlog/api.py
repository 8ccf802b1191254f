"""The library API: ``from binlog import BinlogReader, TableFilter, SchemaStore``.

``binlog.BinlogReader`` is ``binlog.reader.BinlogReader`` with the defaults of the
``binlog`` command line: DDL in the binlogs is followed into a schema store (a new
in-memory one when none is given), checksums are verified, a damaged event raises.
Errors raised to a library caller name the Python parameters in their hints, not the
command-line options.  The layer sits above the parser and the schema store, as the
commands do; the parser (``binlog.reader``) takes a schema only when given one.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore

from .errors import BinlogError
from .filters import TableFilter
from .reader import BinlogReader as _Reader, RowChange
from .reader_options import ReaderHooks, ReaderOptions
from .sources.base import BinlogSource

__all__ = ["BinlogReader", "TableFilter", "SchemaStore", "ReaderOptions", "ReaderHooks", "RowChange"]

_DEFAULT = object()

# command-line options in hints -> what a library caller passes instead
_HINTS = (
    (r"--schema-ddl FILE", "SchemaStore().import_ddl(text, source=...)"),
    (r"--schema-ddl", "SchemaStore.import_ddl"),
    (r"--schema-store PATH", "schema=SchemaStore(path)"),
    (r"--schema-store", "schema=SchemaStore(path)"),
    (r"--schema-from DSN", "SchemaStore.import_live(dsn)"),
    (r"--schema-from", "SchemaStore.import_live(dsn)"),
    (r"--infer-precision", "infer_precision=True"),
    (r"--no-verify-checksum", "verify_checksums=False"),
    (r"--on-error skip", 'on_error="skip"'),
    (r"--follow", "follow=True"),
    (r"--no-track-ddl", "track_ddl=False"),
    (r"--start-position", "start_position="),
    (r"--stop-position", "stop_position="),
)


def python_hint(hint: str | None) -> str | None:
    """A hint written for the command line, with Python parameters for its options."""
    if not hint:
        return hint
    for option, parameter in _HINTS:
        hint = re.sub(re.escape(option) + r"(?![\w-])", parameter, hint)
    return hint


class BinlogReader(_Reader):
    """Row changes and events of binlog files, read as ``binlog dump`` reads them.

    ``source``: binlog files and directories (a directory: its binlogs in index order),
    or a ``binlog.sources.BinlogSource``.  ``schema``: a ``SchemaStore`` (column names,
    types, legacy temporal precisions; DDL in the binlogs adds versions to it unless
    ``track_ddl=False``), a ``schema_store.resolver.SchemaResolver``, or None for no
    schema at all (columns are then ``@1``, ``@2``... unless the binlog carries names);
    by default a new in-memory store that follows the binlogs' DDL.  The other options
    are ``ReaderOptions``'s fields (or ``options=ReaderOptions(...)``): checksums are
    verified and the first damaged event raises a ``binlog.errors.BinlogError`` unless
    ``on_error="skip"``.

    >>> from binlog import BinlogReader
    >>> reader = BinlogReader(["samples/mariadb-10.11/types_full.binlog"])
    >>> change = next(reader.changes())
    >>> change.db, change.table, change.op, change.after["id"], change.after["ti"]
    ('tf', 'ints', 'insert', 1, -128)
    >>> reader = BinlogReader(["samples/mariadb-10.11/types_nometa.binlog"], schema=None)
    >>> sorted(next(reader.changes()).after)[:3]
    ['@1', '@10', '@11']
    """

    def __init__(self, source: BinlogSource | Iterable[str | os.PathLike],
                 options: ReaderOptions | None = None, *, schema: Any = _DEFAULT,
                 hooks: ReaderHooks | None = None, track_ddl: bool = True, **settings: Any):
        if schema is _DEFAULT:
            schema = SchemaStore()
        if isinstance(schema, SchemaStore):
            schema = SchemaResolver(schema, track_ddl=track_ddl)
        super().__init__(source, options, schema=schema, hooks=hooks, **settings)

    @property
    def schema_store(self) -> SchemaStore | None:
        """The schema store read (and, with DDL tracking, written) by this reader."""
        return getattr(self.schema, "store", None)

    def items(self, *, statements: bool = False, batches: bool = False) -> Iterator:
        try:
            yield from super().items(statements=statements, batches=batches)
        except BinlogError as exc:
            exc.hint = python_hint(exc.hint)
            raise
