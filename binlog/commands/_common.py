"""What the subcommands share: the argument parser, exit codes, reader and schema options
(the same meaning in every command), and the objects built from them."""
from __future__ import annotations

import argparse
import sys

from ..constants import LEGACY_TEMPORAL_TYPES
from ..errors import ServerError, UsageError
from ..exitcodes import Exit
from ..user_values import parse_epoch, parse_zone

# The names other modules import (binlog.exitcodes.Exit is the table).
EXIT_OK, EXIT_DECODE_ERROR, EXIT_USAGE, EXIT_DAMAGE, EXIT_INCOMPLETE = (
    Exit.OK, Exit.INPUT_ERROR, Exit.USAGE, Exit.SKIPPED, Exit.INCOMPLETE)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on bad usage, as we want; keep the text short
        self.print_usage(sys.stderr)
        sys.stderr.write(f"binlog: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def add_schema_options(p) -> None:
    p.add_argument("--schema-ddl", action="append", default=[], metavar="FILE",
                   help="mysqldump/mariadb-dump --no-data file or CREATE TABLE script, as of "
                        "the binlog's start (repeatable)")
    p.add_argument("--schema-store", metavar="PATH",
                   help="SQLite file keeping versioned schemas (created if missing)")
    p.add_argument("--schema-from", metavar="DSN",
                   help="snapshot schemas from a live server, e.g. mysql://user:pw@host:3306/db")
    p.add_argument("--lower-case-table-names", type=int, choices=[0, 1, 2], metavar="N",
                   help="the server's lower_case_table_names: 1 or 2 join TABLE_MAP names to "
                        "the schema case-insensitively (default: what --schema-from or the "
                        "binlog's CREATE DATABASE events say, else exact)")


def add_key_options(p) -> None:
    """Keys of encrypted binlogs (binlog.crypt); every command that reads files has them."""
    g = p.add_argument_group("encrypted binlogs (encrypt_binlog=ON)")
    g.add_argument("--key-file", action="append", default=[], metavar="FILE",
                   help="the server's file_key_management key file (id;hex lines); repeatable: "
                        "each binlog file uses the one whose key 1 decrypts it (key rotation)")
    g.add_argument("--key-file-key", metavar="SECRET|FILE:path",
                   help="secret of encrypted key files (file_key_management_filekey); "
                        "prefer FILE:path, a secret on the command line is visible to ps")
    g.add_argument("--key-file-digest", default="sha1", metavar="DIGEST",
                   help="digest of the key file's encryption (file_key_management_digest, "
                        "openssl enc -md; default sha1)")
    g.add_argument("--key-file-pbkdf2", type=int, default=0, metavar="N",
                   help="PBKDF2 iterations of the key file's encryption "
                        "(file_key_management_use_pbkdf2; default 0: none)")
    g.add_argument("--encryption-algorithm", default="auto", metavar="cbc|ctr|auto",
                   help="the server's file_key_management_encryption_algorithm (the binlog "
                        "does not record it; auto: detected on the first encrypted event)")


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


def add_position_options(p, *, timezone_help: str) -> None:
    """Where reading starts and stops: offsets, GTIDs, datetimes (in --timezone)."""
    p.add_argument("--start-position", type=int, metavar="N",
                   help="skip events before offset N of the first file")
    p.add_argument("--stop-position", type=int, metavar="N",
                   help="stop at the first event at or after offset N of the last file")
    p.add_argument("--start-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                   help="skip events older than this (in --timezone)")
    p.add_argument("--stop-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                   help="stop at the first event at or after this time (in --timezone)")
    add_gtid_options(p)
    p.add_argument("--timezone", default="UTC", help=timezone_help)


def add_filter_options(p) -> None:
    """Which tables are kept (the TableFilter of ``table_filter_of``)."""
    p.add_argument("--table", action="append", default=[], metavar="DB.TABLE",
                   help="keep only matching tables (wildcards %% _ *; repeatable)")
    p.add_argument("--exclude-table", action="append", default=[], metavar="DB.TABLE",
                   help="drop matching tables (wildcards %% _ *; repeatable)")
    p.add_argument("--database", action="append", default=[], metavar="DB",
                   help="keep only tables of this database (repeatable)")


def add_rewrite_option(p) -> None:
    """--rewrite-db FROM->TO (binlog.replay.rewrite: mariadb-binlog's semantics)."""
    p.add_argument("--rewrite-db", action="append", default=[], metavar="FROM->TO",
                   type=rewrite_rule,
                   help="database TO instead of FROM for rows (the TABLE_MAP's database) and "
                        "as the default database of statements and DDL, as mariadb-binlog "
                        "--rewrite-db; names qualified in statement text are not rewritten "
                        "(a warning names such statements); repeatable")


def rewrite_rule(text: str) -> tuple[str, str]:
    """``FROM->TO`` (mariadb-binlog's --rewrite-db syntax) as (FROM, TO)."""
    source, sep, target = text.partition("->")
    source, target = source.strip(), target.strip()
    if not sep or not source or not target:
        raise argparse.ArgumentTypeError(f"expected FROM->TO, got {text!r}")
    return source, target


def add_routine_options(p) -> None:
    """How a replay (``dump --format sql``, ``apply``) treats stored-program definitions."""
    p.add_argument("--routines", action="store_true",
                   help="replay CREATE/ALTER/DROP of triggers, procedures, functions and events "
                        "(default: not replayed - the row events already hold what triggers wrote)")
    p.add_argument("--strip-definer", action="store_true",
                   help="drop DEFINER=user@host from replayed DDL (the replaying account "
                        "becomes the definer)")


def add_charset_option(p) -> None:
    p.add_argument("--assume-charset", metavar="CHARSET",
                   help="charset of the text columns whose charset neither the binlog nor "
                        "the schema gives (e.g. latin1); without it their values are raw "
                        "bytes, {\"bytes_hex\": ...}")


def add_reader_options(p, *, positions: bool = True, live: bool = False) -> None:
    """``live``: the binlogs may come from a running server instead (``--from DSN``)."""
    p.add_argument("paths", nargs="*" if live else "+", metavar="FILE|DIR",
                   help="binlog files, or directories (their binlogs in index order)"
                        + ("; or --from DSN" if live else ""))
    if live:
        add_live_options(p)
    if positions:
        add_position_options(p, timezone_help="zone of the datetime options (default UTC)")
    p.add_argument("--allow-gaps", action="store_true",
                   help="read on when a binlog is missing between two (the index lists it, a "
                        "ROTATE names it, or the GTIDs jump): a warning instead of an error")
    p.add_argument("--no-verify-checksum", action="store_true",
                   help="do not verify CRC32 event checksums")
    add_schema_options(p)
    add_filter_options(p)
    p.add_argument("--infer-precision", action="store_true",
                   help="infer unknown legacy temporal precisions from the row images")
    add_charset_option(p)
    p.add_argument("--no-track-ddl", action="store_true",
                   help="do not follow CREATE/ALTER/DROP/RENAME in the binlog's QUERY events")
    add_key_options(p)


def add_gtid_options(p) -> None:
    p.add_argument("--start-gtid", metavar="GTIDS",
                   help="MariaDB GTID list D-S-N[,...]: read only event groups after it (per "
                        "domain, exclusive; unlisted domains from the start), as mariadb-binlog "
                        "--start-position=GTID-list; with --from the server starts at the "
                        "file holding it. Or a MySQL GTID set uuid:1-5[,...]: skip its "
                        "transactions (mysqlbinlog --exclude-gtids)")
    p.add_argument("--stop-gtid", metavar="GTIDS",
                   help="MariaDB GTID list: read event groups up to it (per domain, inclusive; "
                        "unlisted domains not at all) and stop once every domain reached it. "
                        "Or a MySQL GTID set: read only its transactions (mysqlbinlog "
                        "--include-gtids), stop once all were read")


def add_live_options(p, *, fetch: bool = False) -> None:
    """A running server as the source (the replication protocol): --from, --server-id,
    --start-file, --stop-never, --heartbeat and the reconnect retries."""
    g = p.add_argument_group("live source") if not fetch else p
    g.add_argument("--from", dest="from_dsn", required=fetch, metavar="DSN",
                   help="read from a running server as a replica: mysql://user:password@host:port/ "
                        "(?unix_socket=, ?ssl_ca=, ?connect_timeout=S (login, default 10), "
                        "?read_timeout=S (each query, default 30), ?server_public_key=FILE, "
                        "?allow_cleartext_password=1: docs/hostile-servers.md)"
                        + ("" if fetch else "; instead of files"))
    g.add_argument("--server-id", type=int, metavar="N", required=fetch,
                   help="replica id to register with (not 0; unique among the server's "
                        "replicas: SHOW SLAVE HOSTS)")
    if not fetch:
        g.add_argument("--start-file", metavar="FILE",
                       help="with --from: the binlog to start at (default: the server's first); "
                            "--start-position applies to it")
    g.add_argument("--stop-never", action="store_true",
                   help="with --from: keep following the server after its last event")
    if fetch:
        g.add_argument("--semi-sync", action="store_true",
                       help="register as a semi-synchronous replica: acknowledge each "
                            "transaction the server waits for once it is fsync'ed into DIR "
                            "(the source needs rpl_semi_sync_master_enabled=ON)")
    g.add_argument("--heartbeat", type=float, default=2.0, metavar="SECONDS",
                   help="heartbeat period asked of the server (default 2); no packet for "
                        "twice that plus 5 s counts as a lost connection")
    g.add_argument("--retries" if fetch else "--source-retries", dest="source_retries", type=int,
                   default=5, metavar="N",
                   help="reconnect attempts after the connection to the server is lost (default "
                        "5; back-off 1, 2, 4 ... 30 s, resuming after the last event read); "
                        "any event received resets the count")


# seconds between two watermarks while a live stream is busy (--watermark-interval)
DEFAULT_WATERMARK_INTERVAL = 1.0


def add_watermark_options(p) -> None:
    g = p.add_argument_group("watermarks")
    g.add_argument("--watermark-interval", type=float, metavar="SECONDS",
                   help="write watermark records (op \"watermark\": every change committed up "
                        "to its file/pos came before it): at transaction ends at most every "
                        f"SECONDS (0: after each) and at every server heartbeat; default "
                        f"{DEFAULT_WATERMARK_INTERVAL:g} with --stop-never, none otherwise")
    g.add_argument("--no-watermarks", action="store_true",
                   help="no watermark records (with --stop-never)")


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


def make_reader(args, *, paths=None, start_position=None, schema=None, table_filter=None, tz=None,
                count_rows=False, watermark_interval=None):
    """A BinlogReader for the options (``paths``/``start_position`` override them;
    ``count_rows``: rows events give RowCounts, values not decoded; ``watermark_interval``:
    the reader's Watermark records)."""
    from ..reader import BinlogReader, ReaderHooks, ReaderOptions

    zone = parse_zone(getattr(args, "timezone", "UTC"))
    if schema is None:
        schema = open_schema(args, required=not args.no_track_ddl)
    if table_filter is None:
        table_filter = table_filter_of(args)
    if start_position is None:
        start_position = getattr(args, "start_position", None)
        if isinstance(paths if paths is not None else source_of(args), (list, tuple)):
            check_positions(paths if paths is not None else args.paths, start_position,
                            getattr(args, "stop_position", None))
    options = ReaderOptions(verify_checksums=not args.no_verify_checksum,
                            start_position=start_position,
                            stop_position=getattr(args, "stop_position", None),
                            start_datetime=parse_epoch(getattr(args, "start_datetime", None), zone),
                            stop_datetime=parse_epoch(getattr(args, "stop_datetime", None), zone),
                            tz=tz, table_filter=table_filter, infer_precision=args.infer_precision,
                            keys=key_ring(args),
                            start_gtid=getattr(args, "start_gtid", None),
                            stop_gtid=getattr(args, "stop_gtid", None),
                            assume_charset=getattr(args, "assume_charset", None),
                            allow_gaps=getattr(args, "allow_gaps", False),
                            count_rows=count_rows, watermark_interval=watermark_interval)
    hooks = ReaderHooks(on_unknown=warn_unknown, on_inferred=report_inferred, on_warning=warn)
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
    from ..filters import TableFilter

    return TableFilter(args.table, args.exclude_table, args.database)


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


class TargetError(ServerError):
    """The target server failed or refused (exit code 5)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message, hint=hint)


EXIT_TARGET = Exit.SERVER
EXIT_DIFFERENT = Exit.DIFFERENT
