"""Decode a binlog the way ``binlog dump`` does and keep what comes out."""
from __future__ import annotations

from dataclasses import dataclass, field

from binlog.errors import BinlogError
from binlog.reader import BinlogReader, RowChange


@dataclass
class Outcome:
    rows: list = field(default_factory=list)        # (pos, gtid, op, before, after)
    error: BinlogError | None = None
    reader: BinlogReader | None = None

    @property
    def damage(self) -> list:
        return self.reader.stats.damage if self.reader else []

    @property
    def incomplete(self):
        return self.reader.stats.incomplete if self.reader else None


def row_key(change: RowChange) -> tuple:
    return (change.pos, change.gtid, change.op, repr(change.before), repr(change.after))


def track_ddl():
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    return SchemaResolver(SchemaStore(None), track_ddl=True, on_warning=lambda message: None)


def decode(path, on_error: str = "fail", **options) -> Outcome:
    """Rows of ``path``; a BinlogError ends the outcome (anything else propagates)."""
    out = Outcome()
    options.setdefault("schema", track_ddl())
    out.reader = BinlogReader([path], on_error=on_error, **options)
    try:
        for change in out.reader.changes():
            out.rows.append(row_key(change))
    except BinlogError as exc:
        out.error = exc
    return out
