"""The directory ``binlog rewrite`` writes: rewritten binlogs under their input names,
a position map beside each (``<name>.map``, format in binlog/rewrite/position_map.py),
and an index (``<base>.index``, one name per line, as the server writes its own).

A binlog's FORMAT_DESCRIPTION carries LOG_EVENT_BINLOG_IN_USE_F while the server writes the
file and has it cleared when the server closes it (sql/log.cc MYSQL_BIN_LOG::close: one
write of the flags byte, the CRC32 does not count the flag - binlog/header.py event_crc).
An output file carries the input's flag while it is written and has it cleared when it is
complete (its input read to the end, no event cut short): a copy of a binlog the server
still had open is rewritten into a closed file, which readers that check the FDE's CRC32
over the flag as it is (go-mysql v1.16's file mode) take.

A rerun continues where the output ends: ``resume(name)`` cuts a partial last event
(and map lines naming bytes the output does not hold, or output the map does not
name), and says after which input event writing goes on and at which output offset.
"""
from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import IO

from ..constants import BINLOG_MAGIC, HEADER_LEN, LOG_EVENT_BINLOG_IN_USE_F, EventType
from ..errors import InputError, MalformedEventError
from ..header import FLAGS_AT, TYPE_AT
from ..rewrite.position_map import MAP_HEADER, MapEntry, parse_map
from .base import event_heads


def index_name(first: str) -> str:
    """``mariadb-bin.index`` for ``mariadb-bin.000001``; ``x.index`` for ``x.binlog``."""
    stem, dot, _ext = first.rpartition(".")
    return f"{stem if dot else first}.index"


class RewriteDir:
    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the output directory: {exc.strerror}",
                             source=str(self.directory)) from exc
        self._out: IO[bytes] | None = None
        self._map: IO[str] | None = None
        self.name: str | None = None
        self._fde_flags: int | None = None     # the low flags byte of the FDE at 4

    def path(self, name: str) -> Path:
        return self.directory / name

    def map_path(self, name: str) -> Path:
        return self.directory / f"{name}.map"

    # --- resuming ---------------------------------------------------------------------
    def resume(self, name: str) -> tuple[int, int]:
        """(input offset of the last event already written, output size) for a rerun,
        the output and its map cut to agree; (-1, 4) when nothing of ``name`` is kept."""
        out, mapped = self.path(name), self.map_path(name)
        if not out.exists():
            mapped.unlink(missing_ok=True)
            return -1, 4
        entries = self.read_map(name) if mapped.exists() else []
        complete = _whole_events_end(out)
        kept = [e for e in entries if e.out_end <= complete]
        if not kept:
            self._truncate(out, 0)
            mapped.unlink(missing_ok=True)
            return -1, 4
        end = kept[-1].out_end
        if end != out.stat().st_size:
            self._truncate(out, end)
        self._write_map(name, kept)     # also drops a line a crash cut short
        return kept[-1].in_start, end

    def read_map(self, name: str) -> list[MapEntry]:
        path = self.map_path(name)
        try:
            text = path.read_text(encoding="ascii", errors="replace")
        except OSError as exc:
            raise InputError(f"cannot read the position map: {exc.strerror}", source=str(path)) from exc
        return parse_map(text, str(path))

    def _write_map(self, name: str, entries: list[MapEntry]) -> None:
        path = self.map_path(name)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(MAP_HEADER + "".join(e.line() for e in entries), encoding="ascii")
        os.replace(tmp, path)

    def _truncate(self, path: Path, size: int) -> None:
        with open(path, "r+b") as f:
            f.truncate(size)

    # --- writing ----------------------------------------------------------------------
    def open(self, name: str, out_offset: int) -> None:
        """Write ``name`` from ``out_offset`` on (4: a new file, its magic first)."""
        self.close()
        self.name = name
        path = self.path(name)
        if out_offset <= 4:
            self._out = open(path, "w+b")
            self._out.write(BINLOG_MAGIC)
            self._map = open(self.map_path(name), "w", encoding="ascii")
            self._map.write(MAP_HEADER)
        else:
            self._out = open(path, "r+b")
            self._fde_flags = _fde_flags(self._out.read(4 + HEADER_LEN))
            self._out.seek(out_offset)
            self._map = open(self.map_path(name), "a", encoding="ascii")

    def write(self, data: bytes, entry: MapEntry) -> None:
        assert self._out is not None and self._map is not None
        if entry.out_start == 4:
            self._fde_flags = _fde_flags(BINLOG_MAGIC + data[:HEADER_LEN])
        self._out.write(data)
        self._map.write(entry.line())

    def rollback(self, out_offset: int) -> None:
        """Cut the file being written (and its map) back to ``out_offset``."""
        name = self.name
        if name is None or self._out is None:
            return
        self.close()
        self._truncate(self.path(name), max(out_offset, 4))
        if out_offset <= 4:
            self.path(name).unlink()
            self.map_path(name).unlink(missing_ok=True)
            return
        self._write_map(name, [e for e in self.read_map(name) if e.out_end <= out_offset])

    def flush(self) -> None:
        """Make what was written visible to readers (while waiting for more input): the
        binlog first, then its map."""
        if self._out is not None and self._map is not None:
            self._out.flush()
            self._map.flush()

    def close(self, complete: bool = False) -> None:
        """Flush what was written: the binlog first, then its map (a map line never
        names bytes a crash lost; resume() drops what the map does not name).
        ``complete``: the whole input is in the file, its FDE's in-use flag is cleared."""
        if self._out is not None:
            if complete and self._fde_flags is not None and self._fde_flags & LOG_EVENT_BINLOG_IN_USE_F:
                self._out.seek(4 + FLAGS_AT)
                self._out.write(bytes((self._fde_flags & ~LOG_EVENT_BINLOG_IN_USE_F,)))
            self._out.close()
            self._out = None
            self._fde_flags = None
        if self._map is not None:
            self._map.close()
            self._map = None

    def add_to_index(self, index: str, name: str) -> None:
        path = self.directory / index
        names = path.read_text(errors="replace").split() if path.exists() else []
        if name not in names:
            with open(path, "a", encoding="utf-8") as f:
                f.write(name + "\n")


def _fde_flags(head: bytes) -> int | None:
    """The low flags byte of the event at 4 of a binlog starting with ``head`` (the
    magic and one header), when it is a FORMAT_DESCRIPTION."""
    if len(head) < 4 + HEADER_LEN or head[4 + TYPE_AT] != EventType.FORMAT_DESCRIPTION_EVENT:
        return None
    return head[4 + FLAGS_AT]


def _whole_events_end(path: Path) -> int:
    """Where the last whole event of a binlog we wrote ends (4 with none; 0 when not
    even the magic is there), from the headers' sizes."""
    if path.stat().st_size < 4:
        return 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != BINLOG_MAGIC:
            return 0
        end = 4
        for pos, length, _ in event_heads(data):
            if length < HEADER_LEN:
                raise MalformedEventError(f"event size {length} in our own output",
                                          source=str(path), event_offset=pos)
            if pos + length > len(data):
                break
            end = pos + length
        return end
