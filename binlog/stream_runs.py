"""Runs of rows events the stream takes in one compiled call, by their lengths, instead
of one event at a time: stepped over (``SkippedRun``: filtered tables, event groups
outside the GTID window, events before --start-datetime), counted (``CountedRun``:
``binlog stats``) or written (``EncodedRun``: ``binlog dump --format json|text``, the
lake).  ``RunModes`` says which: the reader makes one for each stream and gives it to
the stream when it makes it (``EventStream(runs=...)``); what changes from event to
event (``skip_all_rows``, ``skip_before_ts``, ``encode_args``) the reader sets on its
modes before the stream reads the next event.

The walks are ``binlog.scan``'s (``_scan.c`` when built); the stream frames nothing
here: ``RunModes.take`` is given the buffer and the log_pos chain state and says how far
the run went, or None when the next event is not one (the stream reads it alone then,
with every check of its one-event path).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import scan
from .events.rows import ROWS_EVENT_TYPES
from .header import EventHeader, FormatDescription, parse_header

#: Output bytes after which an encoded run ends (the rest is the next run): memory stays
#: flat however long a transaction's run of rows events is.
RUN_OUTPUT = 4 << 20


@dataclass
class SkippedRun:
    """Rows events stepped over by length in one go (``RunModes.skip_*``): never
    decoded, never given out.  ``header``: the last one's.  ``filtered_*``: events of
    tables in ``skip_table_ids`` (as ``SkippedRowsEvent`` always was: not CRC-checked);
    ``counted``: {type code: events} and ``counted_bytes`` of the others (before
    ``skip_before_ts``, or all of them while ``skip_all_rows``): CRC-checked, and read
    as far as the reader is concerned, only not parsed."""
    header: EventHeader
    filtered_events: int
    filtered_bytes: int
    counted: dict
    counted_bytes: int


@dataclass
class CountedRun:
    """Rows events whose rows were counted in one go (``RunModes.count_walks``:
    ``binlog stats``): framed, CRC-checked, never decoded into events.  ``header``: the
    last one's; ``events``: (offset, type code, table_id, rows, size, timestamp,
    server_id) of each, in order."""
    header: EventHeader
    events: list
    raw: bytes | None = None    # the events' bytes, back to back (``EventStream(keep_raw=)``)


@dataclass
class EncodedRun:
    """Rows events written in one go (``RunModes.encode_entries``: ``binlog dump
    --format json``): framed, CRC-checked, their rows straight into ``data`` (JSON lines,
    the last one held open from ``last_start`` on, as ``rows.encode_rows`` gives one
    event's); ``rows`` in all; ``events``: (offset, type code, table_id, rows, size), and
    the timestamp and server id too for ``binlog ingest``'s runs (encode_run flags 48)."""
    header: EventHeader
    data: bytes
    last_start: int
    rows: int
    events: list


Run = SkippedRun | CountedRun | EncodedRun


@dataclass
class RunModes:
    """Which runs a stream takes.  Runs stop before ``stop_offset`` and, for the events
    not filtered, at ``stop_ts`` (-1: no limit).

    - ``skip_table_ids``: the table_ids the reader's filter rejected (the reader adds to
      the set as it reads TABLE_MAPs); ``skip_all_rows``: every rows event (an event
      group outside the GTID window); ``skip_before_ts``: those before a timestamp;
    - ``count_walks``: {table_id: {scan.count_key: walk}} of the events the reader
      counted itself, whose like ones the stream counts;
    - ``encode_entries``: {table_id: {scan.count_key: entry}} of the events the writer
      wrote, whose like ones the stream writes with ``encode_args`` (encode_run, prefix,
      tail, flags, max_event, max_out), set once the writer's prefix is known."""
    skip_table_ids: set[int] | None = None
    stop_offset: int = -1
    stop_ts: int = -1
    count_walks: dict | None = None
    encode_entries: dict | None = None
    skip_all_rows: bool = False
    skip_before_ts: int = -1
    encode_args: tuple | None = None
    _widths: tuple = field(default=(None, b""), init=False, repr=False)

    def take(self, buf, pos: int, offset: int, fde: FormatDescription, chain: tuple[int, int],
             strict: bool, verify: bool, keep_raw: bool) -> tuple[Run, int, tuple[int, int]] | None:
        """The run starting at ``buf[pos]`` (the stream's absolute ``offset``), where it
        ends in ``buf``, and the log_pos chain after it ((last log_pos or -1, events in a
        row that kept it), as given in ``chain``); None: the next event is not one."""
        widths = self._rows_widths(fde)
        got = None
        if self.skip_table_ids is not None or self.skip_all_rows or self.skip_before_ts >= 0:
            got = self._skip(buf, pos, offset, fde, widths, chain, strict, verify)
        if got is None and self.count_walks:
            got = self._count(buf, pos, offset, fde, widths, chain, strict, verify, keep_raw)
        elif got is None and self.encode_entries:
            got = self._encode(buf, pos, offset, fde, widths, chain, strict, verify)
        return got

    def _rows_widths(self, fde: FormatDescription) -> bytes:
        """Per type code, the table_id width of a rows event (4 when the FDE gives rows a
        6-byte post-header, pre-5.1.4), 0 for other codes and for rows codes whose
        post-header is no rows event's (the decoder reports those unknown)."""
        if self._widths[0] is not fde:
            table = bytearray(256)
            for code in ROWS_EVENT_TYPES:
                post = fde.post_header(code, 8)
                if post in (6, 8, 10):
                    table[code] = 4 if post == 6 else 6
            self._widths = (fde, bytes(table))
        return self._widths[1]

    def _skip(self, buf, pos, offset, fde, widths, chain, strict, verify):
        got = scan.skip_run(buf, pos, len(buf), offset, widths, fde.common_header_len,
                            fde.checksum_len, self.skip_table_ids, self.skip_all_rows,
                            self.skip_before_ts, self.stop_ts, self.stop_offset, chain[0],
                            chain[1], strict, verify)
        if got is None:
            return None
        end, filtered, filtered_bytes, counted, counted_bytes, last_log_pos, chain_run, at = got
        header = parse_header(buf, at, offset + at - pos)
        return (SkippedRun(header, filtered, filtered_bytes, counted, counted_bytes), end,
                (last_log_pos, chain_run))

    def _count(self, buf, pos, offset, fde, widths, chain, strict, verify, keep_raw):
        got = scan.count_run(buf, pos, len(buf), offset, widths, fde.common_header_len,
                             fde.checksum_len, self.count_walks, self.stop_ts, self.stop_offset,
                             chain[0], chain[1], strict, verify)
        if got is None:
            return None
        end, events, last_log_pos, chain_run, at = got
        header = parse_header(buf, at, offset + at - pos)
        raw = bytes(buf[pos:end]) if keep_raw else None
        return CountedRun(header, events, raw), end, (last_log_pos, chain_run)

    def _encode(self, buf, pos, offset, fde, widths, chain, strict, verify):
        if self.encode_args is None:
            return None
        encode, prefix, tail, flags, max_event, max_out = self.encode_args
        got = encode(buf, pos, len(buf), offset, widths, fde.common_header_len,
                     fde.checksum_len, self.encode_entries, prefix, tail, flags, self.stop_ts,
                     self.stop_offset, chain[0], chain[1], strict, verify, max_event, max_out)
        if got is None:
            return None
        end, data, last_start, rows, events, last_log_pos, chain_run, at = got
        header = parse_header(buf, at, offset + at - pos)
        return EncodedRun(header, data, last_start, rows, events), end, (last_log_pos, chain_run)
