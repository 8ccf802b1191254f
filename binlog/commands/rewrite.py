"""``binlog rewrite``: legacy MariaDB binlogs into MySQL 5.6-format binlogs (binlog.rewrite),
written under their own names into a directory, with a position map beside each and an
index; ``--map`` prints a map or translates one position."""
from __future__ import annotations

import sys

from ..errors import BinlogError, IncompleteEventError, UsageError
from ..exitcodes import Exit
from ..options import build
from ._common import (
    key_ring,
    open_schema,
    source_of,
    warn,
)


def add_parser(sub) -> None:
    p = sub.add_parser("rewrite")
    build(p, "rewrite")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.map is not None:
        return _print_map(args)
    if args.input_position is not None or args.output_position is not None:
        raise UsageError("--input-position/--output-position look a position up in --map")
    if args.to is None:
        raise UsageError("give the output directory: --to DIR")
    if args.key_file and not args.write_plaintext:
        raise UsageError("--key-file decrypts the input, and rewrite writes binlogs in clear: "
                         "give --write-plaintext to accept that the output is not encrypted",
                         hint="keep DIR on an encrypted volume, or delete the output when done")
    from ..rewrite import RewriteOptions
    from ..sources.file import FileSource
    from ..sources.rewritten import RewriteDir

    schema = open_schema(args, required=not args.no_track_ddl)
    options = RewriteOptions(keep_compressed=args.keep_compressed, full_metadata=args.full_metadata)
    out = RewriteDir(args.to)
    source = FileSource(source_of(args), follow=args.follow, follow_timeout=args.follow_timeout,
                        allow_gaps=args.allow_gaps, on_warning=warn, on_idle=out.flush)
    job = _Job(args, out, schema, options, key_ring(args))
    try:
        for binlog in source.binlogs():
            with binlog:
                rotated = job.rewrite(binlog, source)
            if rotated:
                source.rotated(rotated)
    finally:
        out.close()
        job.progress.close()
        if not args.quiet:
            job.summary()
    if job.incomplete is not None:
        warn(str(job.incomplete))
        return Exit.INCOMPLETE
    return Exit.OK


class _Job:
    """One run: each binlog rewritten into ``out`` in turn."""

    def __init__(self, args, out, schema, options, keys):
        self.args, self.out, self.schema, self.options, self.keys = args, out, schema, options, keys
        self.index: str | None = None
        self.incomplete: IncompleteEventError | None = None
        self.files = self.written = self.kept = 0
        self.bytes_in = self.bytes_out = 0
        self.values = 0
        self.rolled_back: tuple[str, int] | None = None
        self.names: set[str] = set()
        from ..sources.progress import Progress

        # a progress line when stderr is a terminal (position, MB/s, the events' age)
        self.progress = Progress(force=False)
        self.progress.enabled = self.progress.enabled and not args.quiet

    def rewrite(self, binlog, source) -> str | None:
        """Rewrite one binlog (continuing its output); the next binlog's name when it
        ended with a ROTATE."""
        from ..rewrite import Rewriter
        from ..sources.base import ReadState, read_events
        from ..sources.rewritten import index_name
        from ..stream import EventStream

        name = binlog.name
        if name in self.names:
            raise UsageError(f"two inputs are named {name}: their rewrites would be one file "
                             f"in {self.args.to}", hint="rewrite them into different --to "
                                                        "directories")
        self.names.add(name)
        self.index = self.index or index_name(name)
        after, out_offset = self.out.resume(name)
        stream = EventStream(name, verify_checksums=not self.args.no_verify_checksum,
                             keys=self.keys, keep_raw=True)
        rewriter = Rewriter(name, schema=self.schema, options=self.options,
                            resume_after=after, resume_out=out_offset)
        self.out.open(name, out_offset)
        self.out.add_to_index(self.index, name)
        state = ReadState()
        self.files += 1
        complete = False
        try:
            for event in read_events(binlog, stream, follow=self.args.follow and binlog.last,
                                     state=state):
                written = rewriter.event(event, stream.last_raw)
                header = event.header
                self.bytes_in += header.event_size
                self.progress.event(name, header.offset + header.event_size, header.event_size,
                                    header.timestamp)
                if written is None:
                    continue
                self.out.write(written.data, written.entry(event.header.event_size))
                self.written += 1
                self.bytes_out += len(written.data)
            complete = True
        except IncompleteEventError as exc:
            if not binlog.last:
                raise
            self.incomplete = exc       # a binlog still being written: the rest next run
        except BinlogError:
            cut = rewriter.rollback_point[1]
            self.out.rollback(cut)
            self.rolled_back = (name, cut)
            raise
        finally:
            self.values += rewriter.stats.values
            self.kept += rewriter.stats.events - rewriter.stats.changed
            self.out.close(complete)
        return state.rotated_to

    def summary(self) -> None:
        sys.stderr.write(f"binlog: rewrote {self.files} binlog(s): {self.written} events written "
                         f"({self.kept} unchanged), {self.values} legacy values re-encoded, "
                         f"{self.bytes_in} bytes read, {self.bytes_out} written\n")
        if self.rolled_back is not None:
            name, cut = self.rolled_back
            sys.stderr.write(f"binlog: {name} cut back to {cut} bytes, the start of the event "
                             f"group that failed: a rerun continues there\n")


def _print_map(args) -> int:
    from pathlib import Path

    from ..rewrite import lookup, parse_map

    path = Path(args.map)
    if not path.name.endswith(".map"):
        path = path.with_name(path.name + ".map")
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read the position map {path}: {exc.strerror}") from exc
    entries = parse_map(text, str(path))
    if args.input_position is not None and args.output_position is not None:
        raise UsageError("give --input-position or --output-position, not both")
    if args.input_position is not None:
        print(lookup(entries, args.input_position))
    elif args.output_position is not None:
        print(lookup(entries, args.output_position, from_output=True))
    else:
        out = sys.stdout
        out.write("in_start\tin_end\tout_start\tout_end\n")
        for e in entries:
            out.write(f"{e.in_start}\t{e.in_end}\t{e.out_start}\t{e.out_end}\n")
    return Exit.OK
