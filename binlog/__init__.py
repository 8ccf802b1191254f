"""binlog-temporal: MariaDB/MySQL binlogs read byte for byte, legacy temporals included.

The library API (docs/api.md)::

    from binlog import BinlogReader, TableFilter, SchemaStore

    for change in BinlogReader(["/var/lib/mysql/mariadb-bin.000042"]).changes():
        print(change.db, change.table, change.op, change.after)

The names are loaded on first use, so ``import binlog.cursor`` and the command line do
not load the schema store.
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["BinlogReader", "TableFilter", "SchemaStore", "__version__"]


def __getattr__(name: str):
    if name in ("BinlogReader", "TableFilter", "SchemaStore"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'binlog' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + ["BinlogReader", "TableFilter", "SchemaStore"])
