"""Where events start in a binlog file, for checking ``--start-position`` before reading.

Walks the 19-byte common headers only (``event_size`` at offset 9, u32; the same in every
binlog version since v4 and in MySQL/MariaDB alike, ``sql/log_event.h`` EVENT_LEN_OFFSET),
seeking by each event's size, so a position far into a large file costs one small read
per event before it, never a decode.
"""
from __future__ import annotations

import os
import struct

from ..errors import UsageError

HEADER = 19
MAGIC = 4


def check_start_position(path, position: int) -> None:
    """UsageError unless ``position`` is where an event of the file starts (or 4, the
    first event): beyond the end of the file, or inside an event (naming the event
    boundaries around it)."""
    size = os.stat(path).st_size
    name = os.path.basename(path)
    if position < MAGIC:
        raise UsageError(f"--start-position {position}: the first event of a binlog is at 4")
    if position == size:
        return              # the end of the last event: nothing is read, nothing is wrong
    if position > size:
        raise UsageError(f"--start-position {position} is beyond the end of {name} ({size} bytes)")
    before, after = boundaries_around(path, position, size)
    if before == position:
        return
    hint_after = f" or {after}" if after is not None else ""
    raise UsageError(f"--start-position {position} is not an event boundary of {name}: it is "
                     f"inside the event at {before}",
                     hint=f"the nearest event boundaries are {before}{hint_after} "
                          f"(SHOW BINLOG EVENTS / `binlog dump --format text` list them)")


def boundaries_around(path, position: int, size: int) -> tuple[int, int | None]:
    """(start of the event holding ``position`` or starting there, start of the next
    event or None).  A header that cannot be right (size below 19, past the end) before
    the position ends the walk with ``(position, None)``: past damage this walk cannot
    tell, and the reader reports the damage itself."""
    pos = MAGIC
    with open(path, "rb") as fh:
        while True:
            fh.seek(pos)
            header = fh.read(HEADER)
            if len(header) < HEADER:
                return position, None
            (event_size,) = struct.unpack_from("<I", header, 9)
            nxt = pos + event_size
            if event_size < HEADER or nxt > size:
                return (pos, None) if pos == position else (position, None)
            if nxt > position:
                return pos, (nxt if nxt < size else None)
            pos = nxt
