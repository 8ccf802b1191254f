"""The ``binlog`` command.

Exit codes (DESIGN.md): 0 success; 1 a decoding error stopped the run (the message on
stderr names file, offset, event type, table and column); 2 bad usage.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from .errors import BinlogError, UsageError

EXIT_OK, EXIT_DECODE_ERROR, EXIT_USAGE = 0, 1, 2


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
    dump.add_argument("--format", choices=["json", "text"], default="json")
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
    return parser


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


def run_dump(args) -> int:
    from .output.json_lines import JsonLinesWriter
    from .output.text import TextWriter
    from .reader import BinlogReader, RowChange

    zone = _zone(args.timezone)
    reader = BinlogReader(args.paths, verify_checksums=not args.no_verify_checksum,
                          start_position=args.start_position, stop_position=args.stop_position,
                          start_datetime=_epoch(args.start_datetime, zone),
                          stop_datetime=_epoch(args.stop_datetime, zone), tz=zone,
                          on_unknown=_warn_unknown)
    out = sys.stdout.buffer
    writer = (JsonLinesWriter if args.format == "json" else TextWriter)(out, args.binary_encoding)
    try:
        if args.format == "json":
            for change in reader.changes():
                writer.write(change)
        else:
            for item in reader.items():
                (writer.write if isinstance(item, RowChange) else writer.event)(item)
    finally:
        out.flush()
        if args.stats:
            _print_stats(reader.stats)
    return EXIT_OK


def _print_stats(stats) -> None:
    err = sys.stderr
    err.write(f"binlog: {stats.files} file(s), {sum(stats.events.values())} events, {stats.bytes} bytes\n")
    for table, count in sorted(stats.rows.items()):
        err.write(f"binlog:   {table}: {count} rows\n")
    if stats.unknown:
        err.write(f"binlog:   {len(stats.unknown)} unknown event(s) reported, not decoded\n")


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "dump":
            return run_dump(args)
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
