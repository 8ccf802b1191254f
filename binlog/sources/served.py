"""The binlogs ``binlog serve`` sends: a directory of binlog files and their index (a
relay written by ``binlog fetch``, or the output of ``binlog rewrite``), read while they
grow.

Only whole events are ever handed out: a file still being written may end inside an
event, and what a client gets must be what it would get from the server itself (events
at their file offsets).  The GTID state is read from the files the way a MariaDB primary
keeps it (``sql/sql_repl.cc`` gtid_find_binlog_file: each file's GTID_LIST_EVENT is the
state before its first event group).
"""
from __future__ import annotations

import mmap
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..constants import BINLOG_MAGIC, CHECKSUM_CRC32, HEADER_LEN, EventType
from ..cursor import Cursor
from ..errors import BinlogError, MalformedEventError, RelayError, UsageError
from ..events.gtid import decode_gtid_list, decode_maria_gtid
from ..header import parse_header
from ..inert import inert
from ..rewrite.position_map import lookup, parse_map
from .base import event_heads

#: A served file's name: a binlog name, never a path.
BINLOG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}\.[0-9]{1,10}")
MAX_EVENT = 1 << 30


@dataclass(frozen=True)
class FileInfo:
    """What a served file's FORMAT_DESCRIPTION says."""
    server_version: str
    checksum: bool
    server_id: int


class ServedLogs:
    def __init__(self, directory):
        self.dir = Path(directory)
        if not self.dir.is_dir():
            raise RelayError(f"{self.dir}: not a directory of binlogs")
        # files only grow: for each, (its size when last walked, where the walk stopped)
        self._ends: dict[str, tuple[int, int]] = {}
        self._listed: tuple[tuple, list[str]] | None = None     # (what the list came from, it)
        self._files: set[str] = set()       # names seen as plain files (a file stays one)
        self._state: tuple[str, int, dict] | None = None        # gtid_state so far: file, end
        self._listing()         # an index serve cannot follow fails at start, not in a dump

    def names(self) -> list[str]:
        """The files in index order (the ``.index`` file, else the names sorted).  Asked
        for by every client at every look at a followed binlog: the list is read again
        only when the index (or, without one, the directory) has changed."""
        names = [n for n in self._listing() if n in self._files or self._plain_file(n)]
        # a file just listed may not hold its FORMAT_DESCRIPTION yet (binlog fetch lists a
        # name before it writes the file): it is served once that is whole
        while names and self._whole_end(names[-1]) <= 4:
            names.pop()
        return names

    def _listing(self) -> list[str]:
        indexes = sorted(self.dir.glob("*.index"))
        if len(indexes) > 1:
            raise RelayError(f"{self.dir} holds several .index files: not one server's binlogs")
        source = indexes[0] if indexes else self.dir
        seen = source.stat()
        key = (str(source), seen.st_mtime_ns, seen.st_size)
        if self._listed is not None and self._listed[0] == key:
            return self._listed[1]
        if indexes:
            lines = indexes[0].read_text(encoding="utf-8", errors="replace").splitlines()
            names = [Path(line.strip()).name for line in lines if line.strip()]
            odd = [n for n in names if not BINLOG_NAME.fullmatch(n)]
            if odd:
                # left out, the file would never come and a dump would wait for it forever
                raise RelayError(f"{indexes[0].name} names {inert(odd[0], limit=100)!r}, not a binlog "
                                 f"name: serve sends files named as the server names its binlogs, "
                                 f"BASE.NNNNNN", source=str(indexes[0]),
                                 hint="rename the file (e.g. to mariadb-bin.000001) and its line in "
                                      "the index")
        else:
            names = sorted(p.name for p in self.dir.iterdir() if BINLOG_NAME.fullmatch(p.name))
        self._listed = (key, names)
        return names

    def _plain_file(self, name: str) -> bool:
        """Listed names are files only once created (fetch lists a name first), and
        never symbolic links (serve sends nothing from outside the directory)."""
        path = self.dir / name
        if path.is_file() and not path.is_symlink():
            self._files.add(name)
            return True
        return False

    def path(self, name: str) -> Path:
        if not BINLOG_NAME.fullmatch(name) or name not in self.names():
            raise RelayError(f"{name!r} is not a binlog of {self.dir}")
        return self.dir / name

    def size(self, name: str) -> int:
        """Where the last whole event of ``name`` ends (what may be sent of it)."""
        self.path(name)
        return self._whole_end(name)

    def _whole_end(self, name: str) -> int:
        path = self.dir / name
        size = path.stat().st_size
        walked, end = self._ends.get(name, (-1, 4))
        if size != walked:
            end = whole_events_end(path, end)
            self._ends[name] = (size, end)
        return end

    def info(self, name: str) -> FileInfo:
        with open(self.path(name), "rb") as fh:
            head = fh.read(4 + HEADER_LEN)
            if head[:4] != BINLOG_MAGIC or len(head) < 4 + HEADER_LEN:
                raise RelayError(f"{name} does not start with the binlog magic and a header", source=name)
            header = parse_header(head, 4, 4)
            if header.type_code != EventType.FORMAT_DESCRIPTION_EVENT or header.event_size > 1024:
                raise RelayError(f"{name} does not begin with a FORMAT_DESCRIPTION", source=name)
            fde = head[4:] + fh.read(header.event_size - HEADER_LEN)
        if len(fde) != header.event_size or len(fde) < HEADER_LEN + 57 + 5:
            raise RelayError(f"{name}: its FORMAT_DESCRIPTION is cut short", source=name)
        version = fde[HEADER_LEN + 2:HEADER_LEN + 52].split(b"\0", 1)[0].decode("ascii", "replace")
        return FileInfo(version, fde[-5] == CHECKSUM_CRC32, header.server_id)

    def events(self, name: str, start: int, end: int):
        """(offset, bytes) of the whole events of ``name`` from ``start`` to ``end``."""
        with open(self.path(name), "rb") as fh:
            fh.seek(start)
            pos = start
            while pos < end:
                head = fh.read(HEADER_LEN)
                size = int.from_bytes(head[9:13], "little") if len(head) == HEADER_LEN else 0
                if size < HEADER_LEN or size > MAX_EVENT or pos + size > end:
                    raise MalformedEventError(f"the event at {pos} says it has {size} bytes",
                                              source=name, event_offset=pos)
                data = head + fh.read(size - HEADER_LEN)
                yield pos, data
                pos += size

    # -- coordinates --------------------------------------------------------------------
    def translate(self, name: str, position: int, *, wait: float) -> int:
        """A position of the upstream's ``name`` in the served file of that name: through
        its position map (``NAME.map`` of binlog rewrite) when it has one, else the same
        position; waits up to ``wait`` seconds for the served file to get there."""
        deadline = time.monotonic() + wait
        while True:
            mapped = self.dir / f"{name}.map"
            if mapped.is_file():
                try:
                    return lookup(parse_map(mapped.read_text(encoding="ascii", errors="replace"), name),
                                  position)
                except UsageError:
                    pass            # not rewritten that far yet
            elif name in self.names() and self.size(name) >= position:
                return position
            if time.monotonic() >= deadline:
                raise RelayError(f"the served binlogs have not reached {name}:{position} within "
                                 f"{wait:g} s", source=name,
                                 hint="the relay or its rewrite is behind the upstream (serve's log "
                                      "says why); ask again")
            time.sleep(0.05)

    # -- GTIDs ------------------------------------------------------------------------
    def gtid_list(self, name: str) -> dict[int, tuple[int, int]] | None:
        """The state before ``name``'s first event group: domain -> (server id, seq_no);
        None when the file has no GTID_LIST (not a MariaDB 10 binlog)."""
        for number, (offset, data) in enumerate(self.events(name, 4, self.size(name))):
            if number > 8:
                return None     # it comes right after the FORMAT_DESCRIPTION (and checkpoint)
            header = parse_header(data, 0, offset)
            if header.type_code == EventType.GTID_LIST_EVENT:
                checksum = self.info(name).checksum
                event = decode_gtid_list(_body(data, checksum), None, header)
                return {d: (s, n) for d, s, n in event.gtids}
            if header.type_code in (EventType.GTID_EVENT, EventType.QUERY_EVENT):
                return None
        return None

    def gtid_state(self) -> dict[int, tuple[int, int]]:
        """The last GTID of each domain in the served binlogs: the last file's GTID_LIST
        and its GTID events, walked on from where the last call stopped."""
        names = self.names()
        if not names:
            return {}
        last = names[-1]
        if self._state is not None and self._state[0] == last:
            _, start, state = self._state
        else:
            start, state = 4, dict(self.gtid_list(last) or {})
        checksum = self.info(last).checksum
        end = self.size(last)
        for offset, data in self.events(last, start, end):
            header = parse_header(data, 0, offset)
            if header.type_code == EventType.GTID_EVENT:
                event = decode_maria_gtid(_body(data, checksum), None, header)
                state[event.domain_id] = (header.server_id, event.seq_no)
        self._state = (last, end, state)
        return dict(state)

    def gtid_start_file(self, want: dict[int, int]) -> str:
        """The file a dump from the GTID position ``want`` (domain -> seq_no) starts at:
        the last whose GTID_LIST (the state before it) is not past ``want`` in any of its
        domains (sql/sql_repl.cc gtid_find_binlog_file)."""
        chosen = None
        for name in self.names():
            listed = self.gtid_list(name) or {}
            if all(domain in want and seq <= want[domain] for domain, (_, seq) in listed.items()):
                chosen = name
            elif chosen is not None:
                break
        if chosen is None:
            raise RelayError("the GTID position is before the first served binlog (its events "
                             "are not here)")
        return chosen


def _body(data: bytes, checksum: bool) -> Cursor:
    end = len(data) - (4 if checksum else 0)
    return Cursor(data, HEADER_LEN, end)


def whole_events_end(path: Path, start: int = 4) -> int:
    """Offset after the last whole event of a binlog file (4 for an empty one), walking
    from ``start``, an event boundary already known."""
    if path.stat().st_size <= start:
        return start
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        end = start
        for pos, length, _ in event_heads(data, start):
            if length < HEADER_LEN or pos + length > len(data):
                break
            end = pos + length
        return end


__all__ = ["ServedLogs", "FileInfo", "whole_events_end", "BinlogError"]
