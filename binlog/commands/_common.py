"""Reader options shared by apply, verify-rows and stats (the same meaning as in dump)."""
from __future__ import annotations

import sys


def add_reader_options(p, *, positions: bool = True) -> None:
    from ..cli import _schema_options

    p.add_argument("paths", nargs="+", metavar="FILE|DIR",
                   help="binlog files, or directories (their binlogs in index order)")
    if positions:
        p.add_argument("--start-position", type=int, metavar="N",
                       help="skip events before offset N of the first file")
        p.add_argument("--stop-position", type=int, metavar="N",
                       help="stop at the first event at or after offset N of the last file")
        p.add_argument("--start-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                       help="skip events older than this (in --timezone)")
        p.add_argument("--stop-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                       help="stop at the first event at or after this time (in --timezone)")
        p.add_argument("--timezone", default="UTC",
                       help="zone of the datetime options (default UTC)")
    p.add_argument("--no-verify-checksum", action="store_true",
                   help="do not verify CRC32 event checksums")
    _schema_options(p)
    p.add_argument("--table", action="append", default=[], metavar="DB.TABLE",
                   help="keep only matching tables (wildcards %% _ *; repeatable)")
    p.add_argument("--exclude-table", action="append", default=[], metavar="DB.TABLE",
                   help="drop matching tables (wildcards %% _ *; repeatable)")
    p.add_argument("--database", action="append", default=[], metavar="DB",
                   help="keep only tables of this database (repeatable)")
    p.add_argument("--infer-precision", action="store_true",
                   help="infer unknown legacy temporal precisions from the row images")
    p.add_argument("--no-track-ddl", action="store_true",
                   help="do not follow CREATE/ALTER/DROP/RENAME in the binlog's QUERY events")


def make_reader(args, *, paths=None, start_position=None, schema=None, table_filter=None, tz=None):
    """A BinlogReader for the options (``paths``/``start_position`` override them)."""
    from .. import cli
    from ..reader import BinlogReader

    zone = cli._zone(getattr(args, "timezone", "UTC"))
    if schema is None:
        schema = cli.open_schema(args, required=not args.no_track_ddl)
    if table_filter is None:
        table_filter = cli.table_filter(args)
    if start_position is None:
        start_position = getattr(args, "start_position", None)
    return BinlogReader(paths if paths is not None else args.paths,
                        verify_checksums=not args.no_verify_checksum,
                        start_position=start_position,
                        stop_position=getattr(args, "stop_position", None),
                        start_datetime=cli._epoch(getattr(args, "start_datetime", None), zone),
                        stop_datetime=cli._epoch(getattr(args, "stop_datetime", None), zone),
                        tz=tz, on_unknown=cli._warn_unknown, schema=schema,
                        table_filter=table_filter, infer_precision=args.infer_precision,
                        on_inferred=cli._report_inferred)


def warn(message: str) -> None:
    sys.stderr.write(f"binlog: warning: {message}\n")


def connect(dsn: str, *, what: str = "the target", **extra):
    """A PyMySQL connection for a DSN (``mysql://user:pw@host:port/db``,
    ``?unix_socket=/path``); UsageError for a bad DSN, TargetError when it fails."""
    import pymysql

    from schema_store.errors import SchemaError
    from schema_store.live import parse_dsn
    from ..errors import UsageError

    try:
        kw = parse_dsn(dsn)
    except SchemaError as exc:
        raise UsageError(str(exc.message)) from exc
    kw.pop("database", None)
    kw.update(extra)
    host = kw.get("unix_socket") or f"{kw.get('host', 'localhost')}:{kw.get('port', 3306)}"
    try:
        return pymysql.connect(charset="utf8mb4", **kw)
    except pymysql.err.MySQLError as exc:
        raise TargetError(f"cannot connect to {what} ({host}): {exc.args[-1] if exc.args else exc}") from exc


class TargetError(Exception):
    """The target server failed or refused (exit code 5)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


EXIT_TARGET = 5
EXIT_DIFFERENT = 6
