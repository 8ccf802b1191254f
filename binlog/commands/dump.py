"""``binlog dump``: decode binlogs to JSON Lines, text, SQL or flashback SQL."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..exitcodes import Exit
from ..options import build
from ..user_values import parse_zone
from ._common import (
    EXIT_DAMAGE,
    EXIT_INCOMPLETE,
    EXIT_OK,
    check_positions,
    key_ring,
    live_tables_from_dsn,
    open_schema,
    report_inferred,
    source_of,
    table_filter_of,
    warn,
    warn_unknown,
    warn_unmatched,
    watermark_interval,
)
from ._progress import with_progress

if TYPE_CHECKING:
    from ..output.base import Writer


def add_parser(sub) -> None:
    dump = sub.add_parser("dump")
    build(dump, "dump")
    dump.set_defaults(run=run)


def run(args) -> int:
    from ..interrupts import GuardedOutput
    from ..reader import BinlogReader, RowChange, StatementChange
    from ..reader_options import ReaderHooks, reader_options
    from ..rows import EncodedRows
    from ..watermarks import Watermark

    if args.output_dir is not None and args.format not in ("json", "debezium"):
        from ..errors import UsageError

        raise UsageError("--output-dir writes JSON Lines: use it with --format json or debezium")
    if args.timestamp_offset and args.format in ("sql", "flashback"):
        from ..errors import UsageError

        raise UsageError("--timestamp-offset is for --format json or text (SQL literals are "
                         "UTC wall-clock values under time_zone '+00:00')")
    zone = parse_zone(args.timezone)
    # DDL in the binlog is followed by default (an in-memory store when no --schema-store):
    # a CREATE TABLE inside the binlog gives its legacy columns' precision.
    check_positions(args.paths, args.start_position, args.stop_position)
    schema = open_schema(args, required=not args.no_track_ddl)
    # SQL literals carry TIMESTAMPs in UTC (the script sets time_zone); debezium's
    # ZonedTimestamp is UTC too, and read in UTC it is exact (a wall-clock time in a zone
    # is ambiguous in the hour a DST change repeats: 02:30 twice in Berlin on 2024-10-27)
    tz = None if args.format in ("sql", "flashback", "debezium") else zone
    options = reader_options(args, tz=tz, keys=key_ring(args),
                             # debezium: TIMESTAMP is ZonedTimestamp (UTC) whatever is asked
                             timestamp_offset=args.timestamp_offset and args.format in ("json", "text"),
                             watermark_interval=watermark_interval(args))
    hooks = ReaderHooks(on_unknown=warn_unknown, on_inferred=report_inferred,
                        on_damage=_report_damage, on_idle=sys.stdout.flush, on_warning=warn)
    reader = BinlogReader(source_of(args, on_idle=sys.stdout.flush), options, schema=schema,
                          hooks=hooks)
    # records are written whole or not at all when SIGINT/SIGTERM comes (binlog.interrupts)
    out = GuardedOutput(sys.stdout.buffer)
    writer: Writer
    if args.format in ("sql", "flashback"):
        writer = sql_writer(args, out, schema)
    elif args.format == "json" and args.split_updates:
        writer = json_writer(args, out, schema)
    else:
        writer = record_writer(args, out, schema)
    views = None
    if args.format in ("json", "sql", "flashback", "text", "debezium"):
        # these writers write large values in pieces: a LONGBLOB can stay a view of the
        # rows data instead of a copy of it
        from ..types.strings import LARGE_VALUE, LARGE_VIEWS

        views = LARGE_VIEWS.set(LARGE_VALUE)
    if args.output_dir is None and os.environ.get("BINLOG_BATCH", "1") != "0":
        # the compiled batch path (json/text/sql): whole rows events straight to lines,
        # runs of rows events in one compiled call (json/text), and the rows events of a
        # transaction whose row images go out as VALUES (sql)
        reader.set_output_paths(row_encoder=writer.row_encoder(), rows_hook=writer.rows_hook(),
                                run_writer=writer.run_writer())
    try:
        for item in with_progress(reader, reader.items(statements=True), args,
                                  output_is_terminal=_is_terminal(sys.stdout)):
            if isinstance(item, RowChange):
                writer.write(item)
            elif isinstance(item, EncodedRows):
                writer.write_encoded(item)
            elif isinstance(item, StatementChange):
                # json (split), debezium: a line; text/sql: the QUERY event itself says it all
                if writer.takes_statements:
                    writer.statement(item)
            elif isinstance(item, Watermark):
                _watermark(writer, item, out)
            else:
                writer.event(item)
        writer.close()      # sql: an unfinished transaction; flashback: everything, reversed
    except KeyboardInterrupt:
        writer.end_open_record()    # json: a record streamed whole up to its commit fields
        raise
    finally:
        if views is not None:
            LARGE_VIEWS.reset(views)
        out.flush()
        warn_unmatched(reader)
        if args.stats:
            _print_stats(reader.stats, schema)
        _print_damage_summary(reader.stats)
    lost = writer.not_replayed
    if lost:
        sys.stderr.write(f"binlog: error: {len(lost)} statement-logged change(s) could not be "
                         f"written as SQL (listed above); the script lacks their changes\n")
        return Exit.INPUT_ERROR
    return _dump_exit_code(reader.stats)


def record_writer(args, out, schema=None):
    """The writer of --format json|text|debezium, with --bigint-as-string and --output-dir."""
    from ..assembly.rewrite_db import DbRewrite
    from ..output.routing import BigintsAsStrings, PerTableFiles, RewriteDb

    rewrite = DbRewrite(dict(args.rewrite_db), warn)     # one for all files: one warning each
    from ..replay.keys import KeyCatalog

    debezium_keys = KeyCatalog(schema=schema)           # one for all files: each sees what one learns

    def make(stream):
        # each format imports its own writer only (start-up of a short run)
        writer: Writer
        if args.format == "debezium":
            from ..output.debezium import DebeziumWriter

            writer = DebeziumWriter(stream, on_warning=warn, keys=debezium_keys)
        elif args.format == "json":
            from ..output.cdc import CdcJsonWriter

            writer = CdcJsonWriter(stream, args.binary_encoding, keys=KeyCatalog(schema=schema),
                                   with_types=args.with_types, rewrite_db=rewrite,
                                   bigint_as_string=args.bigint_as_string, checksum=args.checksum)
            return BigintsAsStrings(writer) if args.bigint_as_string else writer
        else:
            from ..output.text import TextWriter

            writer = TextWriter(stream, args.binary_encoding,
                                bigint_as_string=args.bigint_as_string, rewrite_db=rewrite)
        writer = BigintsAsStrings(writer) if args.bigint_as_string else writer
        return RewriteDb(writer, rewrite) if rewrite else writer

    if args.output_dir is None:
        return make(out)
    from ..options import parse_size
    from ..output.paths import inside, table_dir_name

    return PerTableFiles(args.output_dir, make, table_dir_name, parse_size(args.rotate_size), inside)


def sql_writer(args, out, schema):
    """The writer ``binlog dump`` uses for --format sql|flashback."""
    from ..output.sql.script import SqlWriter
    from ..replay.keys import KeyCatalog

    live = live_tables_from_dsn(args.schema_from) if args.schema_from else None
    return SqlWriter(out, keys=KeyCatalog(schema=schema, live=live), safe=args.safe,
                     flashback=args.format == "flashback", split_updates=args.split_updates,
                     table_filter=table_filter_of(args), routines=args.routines,
                     strip_definer=args.strip_definer, rewrite_db=dict(args.rewrite_db),
                     extended_insert=args.extended_insert)


def json_writer(args, out, schema):
    """The JSON writer of ``binlog dump --split-updates`` (with --checksum: checksums)."""
    from ..assembly.rewrite_db import DbRewrite
    from ..output.extras import ChecksumJsonWriter, SplitUpdatesWriter
    from ..output.json_lines import JsonLinesWriter
    from ..output.routing import BigintsAsStrings, RewriteDb
    from ..replay.keys import KeyCatalog

    writer: Writer = (ChecksumJsonWriter if args.checksum else JsonLinesWriter)(out, args.binary_encoding)
    if args.bigint_as_string:
        writer = BigintsAsStrings(writer)
    if args.rewrite_db:         # inside the split: its keys are looked up under the binlog's names
        writer = RewriteDb(writer, DbRewrite(dict(args.rewrite_db), warn))
    if args.split_updates:
        live = live_tables_from_dsn(args.schema_from) if args.schema_from else None
        writer = SplitUpdatesWriter(writer, KeyCatalog(schema=schema, live=live))
    return writer


def _watermark(writer: Writer, mark, out) -> None:
    """A watermark's line, by the writers that have one (json, debezium; not text, sql,
    --output-dir), sent on at once: a consumer waiting on an idle stream sees it now."""
    if writer.takes_watermarks:
        writer.watermark(mark)
        out.flush()


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


def _print_stats(stats, schema=None) -> None:
    err = sys.stderr
    err.write(f"binlog: {stats.files} file(s), {sum(stats.events.values())} events, {stats.bytes} bytes\n")
    for table, count in sorted(stats.rows.items()):
        err.write(f"binlog:   {table}: {count} rows\n")
    if stats.skipped_events:
        err.write(f"binlog:   filtered tables: {stats.skipped_events} rows events, "
                  f"{stats.skipped_bytes} bytes skipped undecoded\n")
    if stats.unknown:
        err.write(f"binlog:   {len(stats.unknown)} unknown event(s) reported, not decoded\n")
    for table, count in sorted(getattr(schema, "disagreements", {}).items()):
        err.write(f"binlog:   {table}: {count} TABLE_MAP(s) contradicted by the schema, "
                  f"decoded from the TABLE_MAP alone\n")
    if stats.unknown_charset_columns:
        err.write(f"binlog:   {stats.unknown_charset_columns} text column(s) of unknown charset "
                  f"given as raw bytes\n")


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
