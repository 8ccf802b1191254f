"""Errors of the schema store: all are :class:`binlog.errors.BinlogError` subclasses.

``source`` names the file (``dump.sql:123``) or the store; ``table`` is ``db.table``;
``column`` the column name or ``@N``.
"""
from __future__ import annotations

from binlog.errors import BinlogError


class SchemaError(BinlogError):
    """Base of the schema store's errors."""


class SchemaNotFoundError(SchemaError):
    """No schema is known for a table at the asked position."""


class SchemaMismatchError(SchemaError):
    """The schema contradicts what the binlog says (column count or type)."""


class DdlParseError(SchemaError):
    """A CREATE/ALTER statement this store cannot interpret; never silently skipped."""
