"""The ``binlog`` command.

Exit codes (DESIGN.md): 0 success; 1 a decoding error stopped the run (the message on
stderr names file, offset, event type, table and column); 2 bad usage; 3 damage was
seen and skipped (``--on-error skip``; every skipped byte range is listed on stderr at
the end); 4 the last file ends inside an event (a file cut short or still being
written): everything before that event was decoded and a warning names its offset
(``--follow`` waits for the rest instead).  When both 3 and 4 apply, 3 wins.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from .errors import ON_ERROR_CHOICES, BinlogError, UsageError

EXIT_OK, EXIT_DECODE_ERROR, EXIT_USAGE, EXIT_DAMAGE, EXIT_INCOMPLETE = 0, 1, 2, 3, 4


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on bad usage, as we want; keep the text short
        self.print_usage(sys.stderr)
        sys.stderr.write(f"binlog: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="binlog", description="Decode MariaDB/MySQL binlog files byte by byte.")
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump", help="decode binlog files to JSON Lines or text")
    dump.add_argument("paths", nargs="+", metavar="FILE|DIR",
                      help="binlog files, or directories (their binlogs in index order)")
    dump.add_argument("--format", choices=["json", "text", "sql", "flashback"], default="json",
                      help="json (default), text, sql (statements replaying the changes, one "
                           "transaction per source transaction) or flashback (statements "
                           "undoing them, newest first)")
    dump.add_argument("--safe", action=argparse.BooleanOptionalAction, default=True,
                      help="sql/flashback: INSERT as REPLACE, UPDATE as DELETE by key + REPLACE "
                           "(idempotent; default); --no-safe for plain INSERT/UPDATE/DELETE")
    dump.add_argument("--split-updates", action="store_true",
                      help="give each transaction as TiCDC does: net changes per row, UPDATEs "
                           "changing a primary/unique key as DELETE + INSERT, DELETEs first")
    dump.add_argument("--checksum", action="store_true",
                      help="json: add the TiCDC CRC32 row checksums of the images to each record")
    dump.add_argument("--start-position", type=int, metavar="N",
                      help="skip events before offset N of the first file")
    dump.add_argument("--stop-position", type=int, metavar="N",
                      help="stop at the first event at or after offset N of the last file")
    dump.add_argument("--start-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                      help="skip events older than this (in --timezone)")
    dump.add_argument("--stop-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
                      help="stop at the first event at or after this time (in --timezone)")
    dump.add_argument("--timezone", default="UTC",
                      help="zone for TIMESTAMP values and the datetime options (default UTC)")
    dump.add_argument("--binary-encoding", choices=["hex", "base64"], default="hex",
                      help="how binary strings and BLOBs are printed (default hex)")
    dump.add_argument("--no-verify-checksum", action="store_true",
                      help="do not verify CRC32 event checksums")
    dump.add_argument("--stats", action="store_true", help="print a summary on stderr at the end")
    dump.add_argument("--on-error", choices=ON_ERROR_CHOICES, default="fail",
                      help="fail: stop at the first damaged event (exit 1); skip: report it, "
                           "skip it (resynchronising after a damaged header), read on, list "
                           "the skipped byte ranges at the end and exit 3")
    dump.add_argument("--follow", action="store_true",
                      help="at the end of the last file wait for more data (and follow a "
                           "ROTATE to the next file) instead of stopping")
    dump.add_argument("--follow-timeout", type=float, metavar="SECONDS",
                      help="with --follow: stop after this many seconds without new data "
                           "(default: wait until interrupted)")
    _schema_options(dump)
    dump.add_argument("--table", action="append", default=[], metavar="DB.TABLE",
                      help="keep only matching tables (wildcards %% _ *; repeatable)")
    dump.add_argument("--exclude-table", action="append", default=[], metavar="DB.TABLE",
                      help="drop matching tables (wildcards %% _ *; repeatable)")
    dump.add_argument("--database", action="append", default=[], metavar="DB",
                      help="keep only tables of this database (repeatable)")
    dump.add_argument("--infer-precision", action="store_true",
                      help="when no schema knows a legacy temporal column's precision, infer it "
                           "from the row images (only an unambiguous fit is accepted)")
    dump.add_argument("--no-track-ddl", action="store_true",
                      help="do not follow CREATE/ALTER/DROP/RENAME in the binlog's QUERY events "
                           "(followed by default)")
    _schema_commands(sub)
    for module in _command_modules():
        module.add_parser(sub)          # each sets run=... on its parser
    return parser


# Further subcommands live in their own modules: each has add_parser(subparsers), which
# registers its parser with set_defaults(run=<function(args) -> exit code>).
COMMAND_MODULES = ("binlog.commands.stats", "binlog.commands.apply", "binlog.commands.verify",
                   "spark_ingest.command")


def _command_modules():
    import importlib

    for name in COMMAND_MODULES:
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:     # the module exists but something it needs is missing
                raise


def _schema_options(p) -> None:
    p.add_argument("--schema-ddl", action="append", default=[], metavar="FILE",
                   help="mysqldump/mariadb-dump --no-data file or CREATE TABLE script, as of "
                        "the binlog's start (repeatable)")
    p.add_argument("--schema-store", metavar="PATH",
                   help="SQLite file keeping versioned schemas (created if missing)")
    p.add_argument("--schema-from", metavar="DSN",
                   help="snapshot schemas from a live server, e.g. mysql://user:pw@host:3306/db")


def _schema_commands(sub) -> None:
    schema = sub.add_parser("schema", help="inspect and maintain the schema store")
    ssub = schema.add_subparsers(dest="schema_command", required=True)
    set_ = ssub.add_parser("set", help="set a column's type and precision (kept in the store)")
    set_.add_argument("table", metavar="DB.TABLE")
    set_.add_argument("column", metavar="@N|NAME", help="1-based column number (@3) or name")
    set_.add_argument("type", metavar="TYPE", help="TIMESTAMP, DATETIME or TIME")
    set_.add_argument("precision", type=int, metavar="PRECISION", help="fractional digits, 0..6")
    set_.add_argument("--schema-store", required=True, metavar="PATH")
    set_.add_argument("--from-position", metavar="FILE:POS",
                      help="apply from this binlog position on (default: everywhere)")
    show = ssub.add_parser("show", help="list tables, or one table's versions")
    show.add_argument("table", nargs="?", metavar="DB.TABLE")
    show.add_argument("--schema-store", required=True, metavar="PATH")
    imp = ssub.add_parser("import", help="import DDL files or a live snapshot into the store")
    _schema_options(imp)


def _zone(name: str):
    if name.upper() in ("UTC", "Z", "+00:00"):
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(f"unknown time zone {name!r}") from exc


def _epoch(text: str | None, zone) -> int | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(f"bad datetime {text!r}: use 'YYYY-MM-DD hh:mm:ss'") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone or timezone.utc)
    return int(moment.timestamp())


def _warn_unknown(name, event):
    h = event.header
    sys.stderr.write(f"binlog: warning: {name} @ {h.offset}: unknown event type {h.type_code} "
                     f"({h.event_size} bytes) reported and not decoded\n")


def _warn(message: str) -> None:
    sys.stderr.write(f"binlog: warning: {message}\n")


def _report_inferred(name, offset, plan, found) -> None:
    for index, n in sorted(found.items()):
        col = plan.columns[index]
        kind = {7: "TIMESTAMP", 12: "DATETIME", 11: "TIME"}.get(col.type, "?")
        sys.stderr.write(f"binlog: inferred {plan.qualified_name} column {col.label} {kind}({n}) "
                         f"from the rows event at {name} @ {offset}\n")


def open_schema(args, *, required: bool = False):
    """The schema store the options describe (None when they name none), loaded."""
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    if not (args.schema_store or args.schema_ddl or args.schema_from or required):
        return None
    store = SchemaStore(args.schema_store)
    for path in args.schema_ddl:
        try:
            text = open(path, encoding="utf-8", errors="surrogateescape").read()
        except OSError as exc:
            raise UsageError(f"cannot read --schema-ddl {path}: {exc.strerror}") from exc
        store.import_ddl(text, source=f"ddl:{path}")
    if args.schema_from:
        from schema_store.live import import_live

        import_live(store, args.schema_from)
    return SchemaResolver(store, track_ddl=not getattr(args, "no_track_ddl", False), on_warning=_warn)


def table_filter(args):
    from .filters import TableFilter

    return TableFilter(args.table, args.exclude_table, args.database)


def run_dump(args) -> int:
    from .output.json_lines import JsonLinesWriter
    from .output.text import TextWriter
    from .reader import BinlogReader, RowChange

    zone = _zone(args.timezone)
    # DDL in the binlog is followed by default (an in-memory store when no --schema-store):
    # a CREATE TABLE inside the binlog gives its legacy columns' precision.
    schema = open_schema(args, required=not args.no_track_ddl)
    reader = BinlogReader(args.paths, verify_checksums=not args.no_verify_checksum,
                          start_position=args.start_position, stop_position=args.stop_position,
                          start_datetime=_epoch(args.start_datetime, zone),
                          stop_datetime=_epoch(args.stop_datetime, zone), tz=zone,
                          on_unknown=_warn_unknown, schema=schema, table_filter=table_filter(args),
                          infer_precision=args.infer_precision, on_inferred=_report_inferred,
                          on_error=args.on_error, on_damage=_report_damage, follow=args.follow,
                          follow_timeout=args.follow_timeout, on_idle=sys.stdout.flush)
    out = sys.stdout.buffer
    if args.format in ("sql", "flashback"):
        from .output.sql import writer_for_args

        reader.tz = None     # SQL literals carry TIMESTAMPs in UTC (the script sets time_zone)
        writer = writer_for_args(args, out, schema)
    elif args.format == "json" and (args.checksum or args.split_updates):
        from .replay.writers import json_writer_for_args

        writer = json_writer_for_args(args, out, schema)
    else:
        writer = (JsonLinesWriter if args.format == "json" else TextWriter)(out, args.binary_encoding)
    try:
        if args.format == "json" and not args.split_updates:
            for change in reader.changes():
                writer.write(change)
        else:
            for item in reader.items():
                (writer.write if isinstance(item, RowChange) else writer.event)(item)
        if hasattr(writer, "close"):
            writer.close()      # sql: an unfinished transaction; flashback: everything, reversed
    finally:
        out.flush()
        if args.stats:
            _print_stats(reader.stats)
        _print_damage_summary(reader.stats)
    return _dump_exit_code(reader.stats)


def _report_damage(damage) -> None:
    sys.stderr.write(f"binlog: warning: skipped {damage.source} bytes {damage.start}..{damage.end}"
                     f" ({damage.size} bytes): {damage.error}\n")


def _print_damage_summary(stats) -> None:
    """The skipped byte ranges (--on-error skip) and an incomplete final event."""
    err = sys.stderr
    if stats.damage:
        err.write(f"binlog: damage: {len(stats.damage)} byte range(s) skipped, "
                  f"{stats.damaged_bytes} bytes in all:\n")
        for d in stats.damage:
            how = ("to the end of the file" if d.to_end else
                   "bytes between two events, no event lost" if d.no_event_lost else
                   "one event, header damaged, resynchronised" if d.resynced and d.one_event else
                   "resynchronised on the next valid event" if d.resynced else "one event")
            reason = d.error.message.splitlines()[0]
            err.write(f"binlog:   {d.source} {d.start}..{d.end} ({d.size} bytes, {how}): "
                      f"{type(d.error).__name__}: {reason}\n")
    if stats.incomplete is not None:
        err.write(f"binlog: warning: {stats.incomplete}\n")


def _dump_exit_code(stats) -> int:
    if stats.damage:
        return EXIT_DAMAGE
    if stats.incomplete is not None:
        return EXIT_INCOMPLETE
    return EXIT_OK


def _print_stats(stats) -> None:
    err = sys.stderr
    err.write(f"binlog: {stats.files} file(s), {sum(stats.events.values())} events, {stats.bytes} bytes\n")
    for table, count in sorted(stats.rows.items()):
        err.write(f"binlog:   {table}: {count} rows\n")
    if stats.skipped_events:
        err.write(f"binlog:   filtered tables: {stats.skipped_events} rows events, "
                  f"{stats.skipped_bytes} bytes skipped undecoded\n")
    if stats.unknown:
        err.write(f"binlog:   {len(stats.unknown)} unknown event(s) reported, not decoded\n")


def _table_name(text: str) -> tuple[str, str]:
    db, dot, table = text.partition(".")
    if not dot or not db or not table:
        raise UsageError(f"expected DB.TABLE, got {text!r}")
    return db.strip("`"), table.strip("`")


def _position(text: str | None):
    if text is None:
        return None
    name, colon, pos = text.rpartition(":")
    if not colon or not name or not pos.isdigit():
        raise UsageError(f"expected FILE:POS, got {text!r}")
    return (name, int(pos))


def run_schema(args) -> int:
    from schema_store.store import SchemaStore

    if args.schema_command == "import":
        if not args.schema_store:
            raise UsageError("schema import needs --schema-store PATH")
        resolver = open_schema(args, required=True)
        tables = resolver.store.tables()
        print(f"{len(tables)} table(s) in {args.schema_store}")
        return EXIT_OK
    store = SchemaStore(args.schema_store)
    if args.schema_command == "set":
        db, table = _table_name(args.table)
        kind = args.type.upper()
        if kind not in ("TIMESTAMP", "DATETIME", "TIME"):
            raise UsageError(f"TYPE must be TIMESTAMP, DATETIME or TIME, not {args.type!r}")
        if not 0 <= args.precision <= 6:
            raise UsageError(f"PRECISION must be 0..6, not {args.precision}")
        column = args.column
        column = int(column[1:]) if column.startswith("@") and column[1:].isdigit() else column
        store.set_override(db, table, column, kind.lower(), args.precision,
                           position=_position(args.from_position))
        print(f"{db}.{table} {args.column}: {kind}({args.precision})")
        return EXIT_OK
    if args.table:
        db, table = _table_name(args.table)
        for position, source, schema in store.history(db, table):
            where = "baseline" if position is None else f"{position[0]}:{position[1]}"
            if schema is None:
                print(f"{where}\t{source}\tdropped")
                continue
            cols = ", ".join(_describe_column(c) for c in schema.columns)
            print(f"{where}\t{source}\t{cols}")
        for o in store.overrides(db, table):
            column = f"@{o['column']}" if isinstance(o["column"], int) else o["column"]
            since = "everywhere" if o["position"] is None else f"from {o['position'][0]}:{o['position'][1]}"
            print(f"{o['kind']}\t{column}\t{o['data_type']}({o['precision']})\t{since}\t{o['source']}")
        return EXIT_OK
    for db, table in store.tables():
        print(f"{db}.{table}")
    return EXIT_OK


def _describe_column(col) -> str:
    text = f"{col.name} {col.data_type}"
    if col.datetime_precision:
        text += f"({col.datetime_precision})"
    if col.legacy:
        text += " /* mariadb-5.3 */"
    return text


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "dump":
            return run_dump(args)
        if args.command == "schema":
            return run_schema(args)
        if hasattr(args, "run"):
            return args.run(args)
    except UsageError as exc:
        sys.stderr.write(f"binlog: error: {exc.message}\n")
        return EXIT_USAGE
    except BinlogError as exc:
        sys.stderr.write(f"binlog: error: {exc}\n")
        return EXIT_DECODE_ERROR
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
