"""Binlog files and directories: the only code that opens files.

A directory means its binlog files in index order: the names listed in its ``*.index``
file when there is one (as the server writes it), else every file whose name ends in a
numeric extension (``mysql-bin.000042``), in numeric order.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Iterator

from ..constants import LOG_EVENT_ARTIFICIAL_F, EventType
from ..errors import UsageError
from ..stream import NEED_DATA, EventStream

_FILE_END_TYPES = frozenset({EventType.ROTATE_EVENT, EventType.STOP_EVENT})

CHUNK = 1 << 20
_NUMBERED = re.compile(r"^(.*)\.(\d+)$")


def expand_paths(paths) -> list[Path]:
    """Files to read, in order; directories expand to their binlogs."""
    files: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            files.extend(directory_binlogs(path))
        elif path.exists():
            files.append(path)
        else:
            raise UsageError(f"no such file or directory: {path}")
    return files


def directory_binlogs(directory: Path) -> list[Path]:
    for index in sorted(directory.glob("*.index")):
        names = [line.strip() for line in index.read_text(errors="replace").splitlines() if line.strip()]
        listed = [directory / Path(name).name for name in names]
        present = [p for p in listed if p.is_file()]
        if present:
            return present
    numbered = []
    for entry in directory.iterdir():
        m = _NUMBERED.match(entry.name)
        if m and entry.is_file():
            numbered.append((m.group(1), int(m.group(2)), entry))
    if not numbered:
        raise UsageError(f"no binlog files in directory {directory}")
    return [entry for _, _, entry in sorted(numbered)]


def read_events(path, *, verify_checksums: bool = True, start_position: int | None = None,
                chunk: int = CHUNK, skip_rows=None, on_error: str = "fail", follow: bool = False,
                follow_timeout: float | None = None, poll_interval: float = 0.25,
                on_idle=None) -> Iterator:
    """Yield the events of one binlog file (and, with ``on_error="skip"``, a
    ``stream.Damage`` for every damaged range, in place).

    With ``start_position``, the FORMAT_DESCRIPTION at the file's start is still read
    (it says how to frame everything), then reading jumps to the position.

    At the end of the file the stream is closed: a file ending inside an event raises
    ``IncompleteEventError`` after everything before it was yielded.  With ``follow``
    the file is polled for more bytes instead, every ``poll_interval`` seconds, until
    ``follow_timeout`` seconds pass without any (None: forever) or the file is finished
    (a ROTATE or STOP event was read and nothing follows it).  ``on_idle()`` is called
    before each wait (the command flushes its output there)."""
    path = Path(path)
    stream = EventStream(path.name, verify_checksums=verify_checksums, skip_rows=skip_rows,
                         on_error=on_error)
    finished = False         # a ROTATE/STOP was the last event read: the file is complete
    with open(path, "rb") as fh:
        jumped = start_position is None or start_position <= 4
        idle_since = None
        while True:
            event = stream.next_event()
            if event is NEED_DATA:
                data = fh.read(chunk)
                if data:
                    stream.feed(data)
                    idle_since = None
                    continue
                if follow and not (finished and not stream.buffered):
                    now = time.monotonic()
                    idle_since = now if idle_since is None else idle_since
                    if follow_timeout is None or now - idle_since < follow_timeout:
                        if on_idle is not None:
                            on_idle()
                        time.sleep(poll_interval)
                        continue
                stream.close()
                while (event := stream.next_event()) is not NEED_DATA:
                    yield event
                return
            header = getattr(event, "header", None)
            if header is not None:
                finished = header.type_code in _FILE_END_TYPES and not header.flags & LOG_EVENT_ARTIFICIAL_F
            if not jumped and stream.seen_fde:
                yield event
                jumped = True
                if start_position > stream.offset:
                    fh.seek(start_position)
                    stream.jump(start_position)
                continue
            yield event


def file_size(path) -> int:
    return os.stat(path).st_size
