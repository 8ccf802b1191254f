"""What the subcommands share: the argument parser, exit codes, and the objects built
from the options (the options themselves are declared in ``binlog.options``)."""
from __future__ import annotations

import argparse
import sys

from ..constants import LEGACY_TEMPORAL_TYPES
from ..errors import ServerError, TargetError, UsageError
from ..exitcodes import Exit
from ..options import DEFAULT_WATERMARK_INTERVAL

# The names other modules import (binlog.exitcodes.Exit is the table).
EXIT_OK, EXIT_DECODE_ERROR, EXIT_USAGE, EXIT_DAMAGE, EXIT_INCOMPLETE = (
    Exit.OK, Exit.INPUT_ERROR, Exit.USAGE, Exit.SKIPPED, Exit.INCOMPLETE)
# (a name of binlog.options that apply imports from here)
__all__ = ["DEFAULT_WATERMARK_INTERVAL"]


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on bad usage, as we want; keep the text short
        self.print_usage(sys.stderr)
        sys.stderr.write(f"binlog: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def key_ring(args):
    """The KeyRing the key options describe (key files read, never printed), or None."""
    if not (getattr(args, "key_file", None) or getattr(args, "key_file_key", None)):
        return None         # (no key option: the key files' code is not even imported)
    from ..sources.keys import load_key_ring

    return load_key_ring(getattr(args, "key_file", None) or [],
                         key_file_key=getattr(args, "key_file_key", None),
                         algorithm=getattr(args, "encryption_algorithm", None),
                         digest=getattr(args, "key_file_digest", "sha1"),
                         pbkdf2_iterations=getattr(args, "key_file_pbkdf2", 0) or 0,
                         on_warning=warn)


def watermark_interval(args) -> float | None:
    """The reader's watermark_interval from --watermark-interval/--no-watermarks: on by
    default for a followed server (--stop-never), off for files."""
    if args.no_watermarks:
        if args.watermark_interval is not None:
            raise UsageError("--no-watermarks and --watermark-interval contradict each other")
        return None
    if args.watermark_interval is not None:
        return args.watermark_interval
    return DEFAULT_WATERMARK_INTERVAL if getattr(args, "stop_never", False) else None


def server_options(args):
    """The ServerOptions of --from/--server-id/--heartbeat."""
    from ..sources.server import ServerOptions

    if args.server_id is None:
        raise UsageError("--from needs --server-id N: the replica id to register with (not 0, "
                         "unique among the server's replicas)")
    return ServerOptions(args.from_dsn, args.server_id, heartbeat=args.heartbeat,
                         semi_sync=getattr(args, "semi_sync", False))


def source_of(args, *, start=None, on_idle=None):
    """What the reader reads: the files and directories given, or with ``--from`` a
    ``ServerSource``; ``start``: a (file, offset) to start at instead of the options'."""
    live = getattr(args, "from_dsn", None)
    if not live:
        if not args.paths:
            raise UsageError("give binlog files or directories" +
                             (", or --from DSN" if hasattr(args, "from_dsn") else ""))
        for name in ("start_file", "stop_never"):
            if getattr(args, name, None):
                raise UsageError(f"--{name.replace('_', '-')} needs --from DSN")
        return args.paths
    from ..sources.progress import Progress
    from ..sources.server import ServerSource

    if args.paths:
        raise UsageError("give binlog files or --from DSN, not both")
    if getattr(args, "follow", False):
        raise UsageError("--follow is for files; with --from use --stop-never")
    gtid = None
    if start is None:
        start = (args.start_file or "", getattr(args, "start_position", None) or 4)
        if not args.start_file and getattr(args, "start_gtid", None):
            gtid = args.start_gtid      # the server finds the file; the reader the group
    return ServerSource(server_options(args), start_file=start[0], start_position=start[1],
                        start_gtid=gtid, blocking=args.stop_never, retries=args.source_retries,
                        on_retry=warn, on_idle=on_idle, progress=Progress())


def check_positions(paths, start_position, stop_position) -> None:
    """Positions that can match nothing are bad usage: a start beyond
    the first file or inside an event, a start after the stop in a single file."""
    from ..sources.boundaries import check_start_position
    from ..sources.file import expand_paths
    from ..sources.stream import is_stream

    if start_position is None and stop_position is None:
        return
    files = expand_paths(paths, allow_gaps=True)     # gaps: the reader says it
    if start_position is not None and files and start_position > 4 and not is_stream(files[0]):
        check_start_position(files[0], start_position)
    if (start_position is not None and stop_position is not None and len(files) == 1
            and stop_position <= start_position):
        raise UsageError(f"--stop-position {stop_position} is not after --start-position "
                         f"{start_position}: nothing would be read")


def warn_unmatched(reader, *, own: tuple[str, ...] = ()) -> None:
    """At the end of a run: the filter patterns that matched no table (``own``: patterns
    the command added itself, e.g. apply's exclusion of its checkpoint table, which the
    user never typed and which rarely matches)."""
    table_filter = getattr(reader, "table_filter", None)
    if table_filter is None:
        return
    for pattern in table_filter.unmatched():
        if pattern not in own:
            warn(f"{pattern} matched no table in the input")


def make_reader(args, *, paths=None, start_position=None, schema=None, tz=None,
                decode_table=None, **fields):
    """A BinlogReader for the options (``paths``/``start_position`` override them;
    ``fields``: ReaderOptions fields the command decides, e.g. ``count_rows`` (rows events
    give RowCounts, values not decoded) or ``watermark_interval`` (the reader's Watermark
    records); ``decode_table``: ReaderHooks')."""
    from ..reader import BinlogReader
    from ..reader_options import ReaderHooks, reader_options

    if schema is None:
        schema = open_schema(args, required=not args.no_track_ddl)
    if start_position is None:
        start_position = getattr(args, "start_position", None)
        if isinstance(paths if paths is not None else source_of(args), (list, tuple)):
            check_positions(paths if paths is not None else args.paths, start_position,
                            getattr(args, "stop_position", None))
    options = reader_options(args, start_position=start_position, tz=tz, keys=key_ring(args),
                             **fields)
    hooks = ReaderHooks(on_unknown=warn_unknown, on_inferred=report_inferred, on_warning=warn,
                        decode_table=decode_table)
    return BinlogReader(paths if paths is not None else source_of(args), options, schema=schema,
                        hooks=hooks)


def open_schema(args, *, required: bool = False):
    """The schema store the options describe (None when they name none), loaded."""
    from schema_store.loading import load_resolver

    return load_resolver(store_path=args.schema_store, ddl_paths=args.schema_ddl,
                         dsn=args.schema_from, required=required,
                         track_ddl=not getattr(args, "no_track_ddl", False), on_warning=warn,
                         lower_case_table_names=getattr(args, "lower_case_table_names", None))


def table_filter_of(args):
    """The TableFilter of --table, --exclude-table and --database."""
    from ..reader_options import table_filter_of as of_values

    return of_values(args)


def live_tables_from_dsn(dsn: str):
    """``live(db, table)`` over a one-time information_schema read of a server."""
    import pymysql

    from schema_store.live import parse_dsn

    from ..replay.keys import load_live_tables

    kw = parse_dsn(dsn)
    database = kw.pop("database")
    try:
        from .. import sql_connection

        conn = sql_connection.connect(kw, charset="utf8mb4")
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to {kw.get('host', 'localhost')} for the keys: {exc}") from exc
    try:
        tables = load_live_tables(conn, database)
    finally:
        conn.close()
    return lambda db, table: tables.get((db, table))


def warn_unknown(name, event):
    h = event.header
    sys.stderr.write(f"binlog: warning: {name} @ {h.offset}: unknown event type {h.type_code} "
                     f"({h.event_size} bytes) reported and not decoded\n")


def report_inferred(name, offset, plan, found) -> None:
    for index, n in sorted(found.items()):
        col = plan.columns[index]
        kind = LEGACY_TEMPORAL_TYPES.get(col.type, "?").upper()
        sys.stderr.write(f"binlog: inferred {plan.qualified_name} column {col.label} {kind}({n}) "
                         f"from the rows event at {name} @ {offset}\n")


def warn(message: str) -> None:
    sys.stderr.write(f"binlog: warning: {message}\n")


def connect(dsn: str, *, what: str = "the target", **extra):
    """A PyMySQL connection for a DSN (``mysql://user:pw@host:port/db``,
    ``?unix_socket=/path``); UsageError for a bad DSN, TargetError when it fails."""
    import pymysql

    from schema_store.live import parse_dsn

    from ..user_values import dsn_address

    kw = parse_dsn(dsn)         # BadDsnError (a UsageError) for a malformed one
    kw.pop("database", None)
    kw.update(extra)
    host = dsn_address(kw)
    try:
        from .. import sql_connection

        return sql_connection.connect(kw, charset="utf8mb4")
    except pymysql.err.MySQLError as exc:
        raise TargetError(f"cannot connect to {what} ({host}): {exc.args[-1] if exc.args else exc}") from exc


EXIT_TARGET = Exit.SERVER
EXIT_DIFFERENT = Exit.DIFFERENT
