"""What the target sessions of one run share (a retry after a lost connection makes a
new ``Run``): the target's names for the source's (--rewrite-db), the tables' keys and
the renderer of their statements, information_schema on a connection of its own, the
tables checked for triggers, and how a transaction becomes the parts a session executes
(``Run.parts``: multi-row statements, --method binlog's BINLOG statements,
statement-logged changes)."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ...assembly.rewrite_db import DbRewrite
from ...assembly.transactions import in_binlog_order
from ...filters import TableFilter
from ...output.sql.renderer import SqlRenderer
from ..batch import Batch, row_numbers, row_statements
from ..keys import KeyCatalog, load_live_tables
from .failures import close_quietly
from .options import ApplyOptions

if TYPE_CHECKING:       # imported where used: a run of --method sql needs it not
    from ..binlog_statements import RawEvents

# TABLE_MAP type codes of the legacy temporal layouts (MariaDB 5.3-10.0, or
# mysql56_temporal_format=OFF): a target with the MySQL 5.6 layouts would read their
# fraction bytes with the wrong size (sql/rpl_utility.cc compatible_with), and these
# bytes are what every other tool gets wrong: their rows go as SQL, decoded here.
_LEGACY_TEMPORAL_CODES = frozenset({7, 11, 12})


def needs_sql(table_map, fde) -> bool:
    """--method binlog: whether a table's rows go as SQL statements (decoded here)
    instead of their events: a source other than MariaDB (MySQL's JSON, payload and
    partial-update events have no MariaDB reader), or legacy temporal columns."""
    return not fde.is_mariadb or any(col.binlog_type in _LEGACY_TEMPORAL_CODES
                                     for col in table_map.columns)


class LiveTables:
    """The target's description of its tables (replay.keys.load_live_tables), asked on a
    connection of its own: the decoding thread asks while the applying sessions are
    busy.  Opened when first asked, closed at the end of each run (a retry forgets what
    it was told)."""

    def __init__(self, connect: Callable[[], Any]):
        self.connect = connect
        self.conn: Any = None
        self.lock = threading.Lock()
        self.cache: dict = {}

    def get(self, db: str, table: str):
        key = (db, table)
        with self.lock:
            if key not in self.cache:
                if self.conn is None:
                    self.conn = self.connect()
                found = load_live_tables(self.conn, db, table)
                self.cache[key] = found.get(key)
            return self.cache[key]

    def forget(self) -> None:
        """After DDL: ask the target again."""
        with self.lock:
            self.cache = {}

    def close(self) -> None:
        if self.conn is not None:
            close_quietly(self.conn)
            self.conn = None


@dataclass
class BinlogMethod:
    """--method binlog: the rows events kept for their BINLOG statements, and the
    target's packet limit (a statement's events before base64 stay below ``limit``)."""
    raw: RawEvents
    max_packet: int
    limit: int


@dataclass
class Run:
    """One run's shared parts; ``filter`` and ``binlog`` are set once the run knows them
    (the checkpoint table excluded; the target's version and packet limit)."""
    keys: KeyCatalog
    rewrite: DbRewrite
    renderer: SqlRenderer
    live: LiveTables
    split_updates: bool
    triggers: set = field(default_factory=set)      # (db, table) checked (Executor)
    filter: TableFilter | None = None
    binlog: BinlogMethod | None = None

    @classmethod
    def open(cls, options: ApplyOptions, schema, live: LiveTables, warn) -> Run:
        # --rewrite-db: rows and statements go to TO; the filters and the schema store
        # see the binlog's names, the target's keys and triggers are TO's
        rewrite = DbRewrite(dict(options.rewrite_db), warn)
        keys = KeyCatalog(schema=schema, live=lambda db, table: live.get(rewrite.db(db), table))
        renderer = SqlRenderer(keys, safe=options.safe, rewrite_db=dict(options.rewrite_db))
        return cls(keys, rewrite, renderer, live, options.split_updates)

    @property
    def raw(self) -> RawEvents | None:
        return self.binlog.raw if self.binlog is not None else None

    def parts(self, tx) -> Iterator[tuple[str, Any]]:
        """("rows", Batch), ("binlog", Chunk) and ("statement", Statement) of a
        transaction, in binlog order (of what it holds: the changes that went early are
        not in it, pipeline.Early)."""
        index = row_numbers(tx.changes, tx.early)
        for part in in_binlog_order(tx):
            if not isinstance(part, list):
                yield "statement", part
            elif self.binlog is not None:
                yield from self.binlog_parts(part, index)
            else:
                for batch in self.statements(part, index):
                    yield "rows", batch

    def binlog_parts(self, changes, index) -> Iterator[tuple[str, Any]]:
        """--method binlog: runs of counted rows events as BINLOG statements, the
        decoded rows between them (tables that go as SQL) as statements, in binlog order."""
        from ...reader import RowCount
        from ..binlog_statements import chunks

        if self.binlog is None:
            raise RuntimeError("BINLOG statements asked of a run without --method binlog")
        raw = self.binlog.raw
        for counted, run in groupby(changes, key=lambda ch: isinstance(ch, RowCount)):
            part = list(run)
            if not counted:
                for batch in self.statements(part, index):
                    yield "rows", batch
                continue
            events = [raw.take(ch.file, ch.pos) for ch in part]
            for chunk in chunks(events, [(ch.file, ch.pos) for ch in part], self.binlog.limit):
                yield "binlog", chunk

    def statements(self, changes, index) -> Iterator[Batch]:
        """Multi-row statements (binlog.replay.batch), or with --split-updates the
        single-row statements of TiCDC's order."""
        renderer = self.renderer
        if self.split_updates:
            from ...assembly.split import split_transaction

            parts = split_transaction(changes, renderer.keys.keys)
            for ch, sql in renderer.split_statements(*parts):
                yield Batch(sql, [(index.get(id(ch)), ch)])
            return
        yield from row_statements(renderer, changes, index)
