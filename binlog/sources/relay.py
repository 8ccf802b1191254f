"""A relay directory: copies of a server's binlog files, written by ``binlog fetch``.

Each file is the server's file byte for byte (magic, FORMAT_DESCRIPTION, events) under
the server's name, and ``<basename>.index`` lists them in order as the server's own
index does, so the directory is an input like any other (``sources.file``).

``upstream.json`` beside them says where the server stood when fetch last heard from
it (``note_upstream``): what ``binlog serve --status`` measures its lag against.

Crash safety: a name goes into the index before its file is created, and events are
appended whole.  After a crash (``kill -9``) the last file may end inside an event:
``resume_point()`` walks its events from the start, truncates the partial tail away and
says where to continue (file, offset of the end of the last whole event).
"""
from __future__ import annotations

import mmap
import os
import time
from pathlib import Path
from typing import BinaryIO

from ..constants import BINLOG_MAGIC, HEADER_LEN
from ..errors import RelayError, UsageError
from .base import event_heads

_BUFFER = 1 << 20


class RelayDir:
    def __init__(self, directory, *, create: bool = True):
        self.dir = Path(directory)
        if self.dir.exists() and not self.dir.is_dir():
            raise UsageError(f"--to {self.dir}: not a directory")
        if create:
            self.dir.mkdir(parents=True, exist_ok=True)
        self._fh: BinaryIO | None = None
        self.name: str | None = None     # the file being written
        self.size = 0                    # its length, counting what is still buffered

    # -- the index --------------------------------------------------------------------
    def _index(self) -> Path | None:
        found = sorted(self.dir.glob("*.index"))
        if len(found) > 1:
            raise RelayError(f"{self.dir} holds several .index files "
                             f"({', '.join(p.name for p in found)}): not a relay of one server")
        return found[0] if found else None

    def names(self) -> list[str]:
        index = self._index()
        if index is None:
            return []
        lines = index.read_text(encoding="utf-8", errors="replace").splitlines()
        return [Path(line.strip()).name for line in lines if line.strip()]

    def _add_to_index(self, name: str) -> None:
        index = self._index() or self.dir / (name.rpartition(".")[0] + ".index")
        with open(index, "a", encoding="utf-8") as fh:
            fh.write(f"./{name}\n")
            fh.flush()
            os.fsync(fh.fileno())

    # -- where the server stands ------------------------------------------------------
    UPSTREAM = "upstream.json"

    def note_upstream(self, file: str, position: int, event_time: int | None, caught_up: bool) -> None:
        """Where the server stood when last heard from (its binlog and position: the end
        of the last event it sent, or what its heartbeat said), the time of its last event
        and whether nothing more had come: replaced whole (a reader never sees half)."""
        import json

        path = self.dir / self.UPSTREAM
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"file": file, "position": position, "event_time": event_time,
                                   "caught_up": caught_up, "updated": round(time.time(), 3)}))
        os.replace(tmp, path)

    def upstream(self) -> dict | None:
        """What ``note_upstream`` last wrote, or None."""
        import json

        try:
            found = json.loads((self.dir / self.UPSTREAM).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    # -- resuming ---------------------------------------------------------------------
    def resume_point(self) -> tuple[str, int] | None:
        """(last file, where its last whole event ends), after truncating a partial
        event away; None when the directory holds no relay yet."""
        names = self.names()
        if not names:
            return None
        name = names[-1]
        path = self.dir / name
        if not path.exists():
            return name, 4          # listed, not yet created: the crash came in between
        end = _whole_events_end(path)
        if end < path.stat().st_size:
            os.truncate(path, end)
        return name, max(end, 4)

    # -- writing ----------------------------------------------------------------------
    def open(self, name: str, offset: int) -> None:
        """Write ``name`` from ``offset`` on: 4 starts a new file, anything else must be
        where the file on disk ends."""
        self.close()
        path = self.dir / name
        if path.is_symlink():
            raise RelayError(f"{path} is a symbolic link: a relay file is written only as a "
                             f"plain file of the directory", source=name)
        if name not in self.names():
            if path.exists():
                # The server names a file the relay never had: writing it would overwrite
                # something that is not ours (a ROTATE from a hostile or confused server).
                raise RelayError(f"the server continues with {name}, which is in {self.dir} "
                                 f"but not in the relay's index: refused", source=name,
                                 hint="move the file away if it is not wanted, or fetch "
                                      "into an empty directory")
            self._add_to_index(name)
        size = path.stat().st_size if path.exists() else 0
        if offset == 4 and size <= 4:
            self._fh = open(path, "wb", buffering=_BUFFER)
            self._fh.write(BINLOG_MAGIC)
        elif size == offset:
            self._fh = open(path, "ab", buffering=_BUFFER)
        else:
            raise RelayError(f"the server continues {name} at {offset}, but the relay's copy "
                             f"has {size} bytes", source=name,
                             hint="the relay and the server disagree: fetch into an empty "
                                  "directory")
        self.name, self.size = name, offset

    def write(self, name: str, offset: int, data: bytes | memoryview) -> None:
        if name != self.name or offset != self.size:
            self.open(name, offset)
        if self._fh is None:
            raise RelayError(f"{name} is not open for writing", source=name)
        self._fh.write(data)
        self.size += len(data)

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def sync(self) -> None:
        """Flush and fsync: what was written survives a crash of this host (a semi-sync
        acknowledgement promises that)."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self.name = None


def _whole_events_end(path: Path) -> int:
    """Offset after the last whole event of a relay file (0 if it lacks the magic).

    Each event's log_pos must be its end: a relay file is the server's copy, so
    anything else is damage, not a partial write."""
    size = path.stat().st_size
    if size < 4:
        return 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != BINLOG_MAGIC:
            raise RelayError(f"{path} does not start with the binlog magic: not a relay file",
                             source=path.name, event_offset=0)
        end = 4
        for pos, length, log_pos in event_heads(data):
            if length < HEADER_LEN or log_pos != (pos + length) & 0xFFFFFFFF:
                raise RelayError(f"the event at {pos} says it has {length} bytes and ends at "
                                 f"{log_pos}: the relay file is damaged", source=path.name,
                                 event_offset=pos,
                                 hint="move the file away and fetch it again")
            if pos + length > size:
                break
            end = pos + length
        return end
