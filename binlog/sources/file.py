"""Binlog files and directories: the only code that opens files.

A directory means its binlog files in index order: the names listed in its ``*.index``
file when there is one (as the server writes it), else every file whose name ends in a
numeric extension (``mysql-bin.000042``), in numeric order.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

from ..errors import UsageError
from ..stream import NEED_DATA, EventStream

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
                chunk: int = CHUNK, skip_rows=None) -> Iterator:
    """Yield the events of one binlog file.

    With ``start_position``, the FORMAT_DESCRIPTION at the file's start is still read
    (it says how to frame everything), then reading jumps to the position."""
    path = Path(path)
    stream = EventStream(path.name, verify_checksums=verify_checksums, skip_rows=skip_rows)
    with open(path, "rb") as fh:
        jumped = start_position is None or start_position <= 4
        while True:
            event = stream.next_event()
            if event is NEED_DATA:
                data = fh.read(chunk)
                if not data:
                    stream.close()
                    return
                stream.feed(data)
                continue
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
