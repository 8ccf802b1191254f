"""Walks that look at lengths only, never at values: the pure-Python
reference of the optional compiled ``binlog/_scan.c`` (same arguments, same results;
tests compare the two).  Bytes in, numbers out: no I/O.

``skip_run``: step over a run of rows events the reader does not want - filtered
tables, events before ``--start-datetime``, event groups outside the GTID window - by
their header's size, with the framing and log_pos-chain checks ``stream.EventStream``
applies to one such event; it stops at the first event it is not sure to skip, which
the stream then reads as usual.  Events of filtered tables are not CRC-checked (they
never were: their bytes are not looked at); the others are, as when they were decoded.
Their bodies are not parsed any more: a damaged body (bad bitmaps, a corrupt compressed
block) that keeps its CRC is not an error when nothing of it is given out.

``count_run``: step over a run of rows events of tables whose row counting walks the
reader has registered, counting each one's rows as ``count_rows`` does (``binlog
stats``): the CRC and framing checks of ``skip_run``, plus the rows post-header;
it stops at the first event it cannot count, which the stream then reads as usual.

``frame_packets``: whole events as the packets of a replication dump stream (``binlog
serve``), up to the first the dump must look at itself.

``count_rows``: how many row images a rows event holds, from each image's NULL bitmap
and the value lengths the column metadata gives (``binlog stats``); -1 when the images
do not fill the rows data exactly or a column's length is not known here, and the
caller decodes the event instead (which raises the typed error, or counts).
"""
from __future__ import annotations

import struct
import zlib

from .column_kinds import K_BLOB, VARIABLE, kind_width
from .constants import HEADER_LEN, MAX_EVENT_SIZE
from .extensions import load_extension

_U32 = 0xFFFFFFFF


compiled = load_extension("_scan")       # None: not built, or BINLOG_PURE=1


def skip_run_py(buf, pos: int, end: int, offset: int, widths: bytes, common_len: int,
                checksum_len: int, table_ids, all_rows: bool, before_ts: int, stop_ts: int,
                stop_offset: int, last_log_pos: int, chain_run: int, strict_chain: bool,
                verify_crc: bool):
    """See binlog/_scan.c skip_run: None, or (pos, filtered_events, filtered_bytes,
    {type_code: counted events}, counted_bytes, last_log_pos, chain_run, last_event_pos)."""
    start, last_event = pos, -1
    filtered_n = filtered_bytes = counted_bytes = 0
    counted: dict[int, int] = {}
    while end - pos >= HEADER_LEN:
        at = offset + pos - start
        code = buf[pos + 4]
        width = widths[code]
        if width not in (4, 6) or (stop_offset >= 0 and at >= stop_offset):
            break
        ts = int.from_bytes(buf[pos:pos + 4], "little")
        size = int.from_bytes(buf[pos + 9:pos + 13], "little")
        log_pos = int.from_bytes(buf[pos + 13:pos + 17], "little")
        if not common_len + checksum_len <= size <= MAX_EVENT_SIZE or size > end - pos \
                or common_len + width > size:
            break
        chained = log_pos in (0, (at + size) & _U32) or (
            last_log_pos >= 0 and log_pos == (last_log_pos + size) & _U32)
        if strict_chain and chain_run >= 2 and not chained:
            break
        filtered = table_ids is not None and int.from_bytes(
            buf[pos + common_len:pos + common_len + width], "little") in table_ids
        if not filtered and (not (all_rows or 0 <= before_ts > ts) or 0 <= stop_ts <= ts or (
                verify_crc and checksum_len == 4 and zlib.crc32(memoryview(buf)[pos:pos + size - 4])
                != int.from_bytes(buf[pos + size - 4:pos + size], "little"))):
            break
        if filtered:
            filtered_n += 1
            filtered_bytes += size
        else:
            counted[code] = counted.get(code, 0) + 1
            counted_bytes += size
        chain_run, last_log_pos = _note_chain(log_pos, chained, chain_run, last_log_pos)
        last_event = pos
        pos += size
    if last_event < 0:
        return None
    return (pos, filtered_n, filtered_bytes, counted, counted_bytes, last_log_pos, chain_run,
            last_event)


def _note_chain(log_pos: int, chained: bool, chain_run: int, last_log_pos: int) -> tuple[int, int]:
    """(chain_run, last_log_pos) after an event is taken, as stream.py _note_chain."""
    if log_pos:
        return (chain_run + 1 if chained else 0), log_pos
    return chain_run, last_log_pos


def skip_run(*args):
    if compiled is not None:
        return compiled.skip_run(*args)
    return skip_run_py(*args)


def frame_packets_py(buf, pos: int, end: int, seq: int, passing: bytes, max_out: int):
    """See binlog/_scan.c frame_packets: None, or (packets, pos, seq, events)."""
    out = bytearray()
    count = 0
    while end - pos >= HEADER_LEN and len(out) < max_out:
        size = int.from_bytes(buf[pos + 9:pos + 13], "little")
        if not HEADER_LEN <= size <= end - pos or size + 1 >= 0xFFFFFF or not passing[buf[pos + 4]]:
            break
        out += (size + 1).to_bytes(3, "little") + bytes((seq, 0)) + buf[pos:pos + size]
        pos += size
        seq = (seq + 1) & 0xFF
        count += 1
    return (bytes(out), pos, seq, count) if count else None


def frame_packets(*args):
    if compiled is not None:
        return compiled.frame_packets(*args)
    return frame_packets_py(*args)


# Plain rows events count_run takes (v1 and v2 WRITE/UPDATE/DELETE; not v0, compressed or
# PARTIAL_UPDATE_ROWS, which the decoder frames differently): code -> kind (0 insert,
# 1 update, 2 delete) and whether a v2 var-header follows the flags.
COUNT_RUN_CODES = {23: (0, False), 24: (1, False), 25: (2, False),
                   30: (0, True), 31: (1, True), 32: (2, True)}


def count_key(code: int, width: int, present: bytes, present_after: bytes | None) -> bytes:
    """The key of a registered counting walk inside its table_id's dict: what of a rows
    event decides its walk (type, column count, bitmaps)."""
    return bytes([code]) + width.to_bytes(4, "little") + present + (present_after or b"")


def count_run_py(buf, pos: int, end: int, offset: int, widths: bytes, common_len: int,
                 checksum_len: int, walks: dict, stop_ts: int, stop_offset: int,
                 last_log_pos: int, chain_run: int, strict_chain: bool, verify_crc: bool):
    """See binlog/_scan.c count_run: None, or (pos, [(offset, code, table_id, rows, size,
    ts, server_id), ...], last_log_pos, chain_run, last_event_pos)."""
    start, last_event = pos, -1
    counted: list = []
    while end - pos >= HEADER_LEN:
        at = offset + pos - start
        code = buf[pos + 4]
        width = widths[code]
        if code not in COUNT_RUN_CODES or width not in (4, 6) or (0 <= stop_offset <= at):
            break
        ts = int.from_bytes(buf[pos:pos + 4], "little")
        size = int.from_bytes(buf[pos + 9:pos + 13], "little")
        log_pos = int.from_bytes(buf[pos + 13:pos + 17], "little")
        if not common_len + checksum_len <= size <= MAX_EVENT_SIZE or size > end - pos \
                or 0 <= stop_ts <= ts:
            break
        chained = log_pos in (0, (at + size) & _U32) or (
            last_log_pos >= 0 and log_pos == (last_log_pos + size) & _U32)
        if strict_chain and chain_run >= 2 and not chained:
            break
        rows = _count_event(buf, pos + common_len, pos + size - checksum_len, code, width, walks)
        if rows is None:
            break
        if verify_crc and checksum_len == 4 and zlib.crc32(memoryview(buf)[pos:pos + size - 4]) \
                != int.from_bytes(buf[pos + size - 4:pos + size], "little"):
            break
        counted.append((at, code, rows[0], rows[1], size, ts,
                        int.from_bytes(buf[pos + 5:pos + 9], "little")))
        chain_run, last_log_pos = _note_chain(log_pos, chained, chain_run, last_log_pos)
        last_event = pos
        pos += size
    if last_event < 0:
        return None
    return pos, counted, last_log_pos, chain_run, last_event


def _count_event(buf, pos: int, end: int, code: int, width: int, walks: dict):
    """(table_id, rows) of the rows event body buf[pos:end], or None: not framed as the
    decoder frames it, no walk registered for it, or images that do not fill it."""
    kind, v2 = COUNT_RUN_CODES[code]
    if end - pos < width + 2:
        return None
    table_id = int.from_bytes(buf[pos:pos + width], "little")
    pos += width + 2                                       # table_id, flags
    if v2:
        if end - pos < 2:
            return None
        var_len = int.from_bytes(buf[pos:pos + 2], "little")
        if var_len < 2 or end - pos < var_len:
            return None
        pos += var_len
    if end - pos < 1:
        return None
    ncols = buf[pos]
    pos += 1
    if ncols == 0xFC:
        if end - pos < 2:
            return None
        ncols = int.from_bytes(buf[pos:pos + 2], "little")
        pos += 2
    elif ncols >= 0xFB:
        return None
    nbits = (ncols + 7) // 8 * (2 if kind == 1 else 1)
    if end - pos < nbits:
        return None
    table = walks.get(table_id)
    walk = table.get(bytes([code]) + ncols.to_bytes(4, "little") + bytes(buf[pos:pos + nbits])) \
        if table is not None else None
    if walk is None:
        return None
    specs, nbytes, specs_after, nbytes_after = walk
    rows = count_rows_py(memoryview(buf)[pos + nbits:end], kind, specs, nbytes, specs_after,
                         nbytes_after)
    return None if rows < 0 else (table_id, rows)


def count_run(*args):
    if compiled is not None:
        return compiled.count_run(*args)
    return count_run_py(*args)


# --- row counts -------------------------------------------------------------------
SPEC = struct.Struct("<7i")    # null_byte, mask, kind, n, length, precision, scale


def _image_end(data, pos: int, end: int, specs: list, nbytes: int) -> int:
    if nbytes < 0 or end - pos < nbytes:
        return -1
    nulls = data[pos:pos + nbytes]
    pos += nbytes
    for null_byte, mask, kind, n, length, precision, scale in specs:
        if not 0 <= null_byte < nbytes:
            return -1
        if nulls[null_byte] & mask:
            continue
        size = kind_width(kind, n, length, precision, scale)
        if size == -1:
            return -1
        if size != VARIABLE:
            if end - pos < size:
                return -1
            pos += size
            continue
        prefix = length if kind == K_BLOB else (1 if length <= 255 else 2)
        if not 1 <= prefix <= 4 or end - pos < prefix:
            return -1
        n_bytes = int.from_bytes(data[pos:pos + prefix], "little")
        pos += prefix
        if kind != K_BLOB and length and n_bytes > length or end - pos < n_bytes:
            return -1
        pos += n_bytes
    return pos


def count_rows_py(data, kind: int, specs: bytes, nbytes: int, specs_after: bytes,
                  nbytes_after: int) -> int:
    """See binlog/_scan.c count_rows."""
    if len(specs) % SPEC.size or len(specs_after) % SPEC.size or kind not in (0, 1, 2):
        return -1
    before = list(SPEC.iter_unpack(specs))
    after = list(SPEC.iter_unpack(specs_after))
    pos, end, rows = 0, len(data), 0
    while pos < end:
        nxt = _image_end(data, pos, end, before, nbytes)
        if nxt >= 0 and kind == 1:
            nxt = _image_end(data, nxt, end, after, nbytes_after)
        if nxt <= pos:
            return -1
        pos = nxt
        rows += 1
    return rows


def count_rows(*args) -> int:
    if compiled is not None:
        return compiled.count_rows(*args)
    return count_rows_py(*args)
