"""What the applier is given: ``binlog apply``'s options, checked (``ApplyOptions``), and
the command's functions that open its target and its input (``ApplyInput``)."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_WORKERS = 256
# From a live source (--from) a batch is committed once it is this old, and whenever the
# source is idle (a heartbeat): the target lags the source by about this much.
LIVE_BATCH_SECONDS = 1.0


@dataclass
class ApplyOptions:
    """What the applier does: ``binlog apply``'s options, checked (commands.apply.run
    makes one of its arguments; the names are the options')."""

    to: str                                 # the target's DSN
    paths: list[str] = field(default_factory=list)     # binlog files or directories
    from_dsn: str | None = None             # a live source instead (ApplyInput.open_live)
    checkpoint_table: str = "binlog_apply.checkpoint"
    checkpoint_name: str = "default"
    reset_checkpoint: bool = False
    batch_transactions: int = 200
    batch_rows: int = 5000
    method: str = "sql"                     # or "binlog"
    safe: bool = True
    split_updates: bool = False
    no_ddl: bool = False
    routines: bool = False
    strip_definer: bool = False
    rewrite_db: list[tuple[str, str]] = field(default_factory=list)
    allow_triggers: bool = False
    skip_statements: bool = False
    map_collation: list[tuple[str, str]] = field(default_factory=list)   # (FROM, TO): TiDB
    retries: int = 3
    retry_timeout: float = 60.0
    workers: int = 1
    quiet: bool = False
    allow_gaps: bool = False
    start_position: int | None = None
    start_file: str | None = None
    stop_position: int | None = None


@dataclass
class ApplyInput:
    """How the applier opens its target and its input, and where its messages go: the
    command's functions (commands._common) handed down, so that this package imports no
    command.  A test gives the same ones (commands.apply.input_of)."""

    connect: Callable[..., Any]             # (dsn, **PyMySQL options): a connection, or TargetError
    open_schema: Callable[[], Any]          # the schema resolver (None: none given)
    table_filter: Callable[[], Any]         # the TableFilter of the filter options
    open_reader: Callable[..., Any]         # a BinlogReader: make_reader's keywords
    open_live: Callable[..., Any]           # the live source: start=(file, pos), on_idle=
    check_positions: Callable[[Sequence[str | os.PathLike[str]], int | None, int | None], None]
    progress: Callable[[Any, Iterable], Iterator]      # (reader, items): with a progress line
    warn_unmatched: Callable[..., None]     # (reader, own=patterns): filters that matched nothing
    warn: Callable[[str], None]
    watermark_interval: float | None = None     # a live source's (binlog.watermarks)
