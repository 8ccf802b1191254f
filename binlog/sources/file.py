"""Binlog files and directories: the file implementation of the source interface.

A directory means its binlog files in index order: the names listed in its ``*.index``
file when there is one (as the server writes it), else every file whose name ends in a
numeric extension (``mysql-bin.000042``), in numeric order.
"""
from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UsageError
from ..stream import EventStream
from .base import CHUNK, Binlog, BinlogSource, Poller, ReadState, read_events as _read_binlog
from .stream import COMPRESSED_SUFFIXES, STDIN, binlog_name, is_stream, open_stream

if TYPE_CHECKING:
    from .watch import DirectoryWatch

_NUMBERED = re.compile(r"^(.*)\.(\d+)$")


def expand_paths(paths: Iterable[str | os.PathLike], *, allow_gaps: bool = False,
                 on_warning: Callable[[str], None] | None = None) -> list[Path]:
    """Files to read, in order; directories expand to their binlogs.  A file is never
    read twice: one given again (itself, through a directory, or a link to it) is a
    UsageError, not its changes twice.  ``allow_gaps``: an index naming a binlog that is
    missing between two present ones is a warning, not a GapError."""
    files: list[Path] = []
    for item in paths:
        if str(item) == STDIN:
            files.append(Path(STDIN))
            continue
        path = Path(item)
        if path.is_dir():
            try:
                files.extend(directory_binlogs(path, allow_gaps=allow_gaps, on_warning=on_warning))
            except OSError as exc:
                raise InputError(f"cannot read directory: {exc.strerror}",
                                 source=exc.filename or path) from exc
        elif path.exists():
            files.append(path)
        else:
            raise UsageError(f"no such file or directory: {path}")
    seen: dict[tuple[int, int], Path] = {}
    for path in files:
        if str(path) == STDIN:
            continue
        st = path.stat()
        first = seen.setdefault((st.st_dev, st.st_ino), path)
        if first is not path:
            raise UsageError(f"{path} is the same file as {first}: each binlog is read once, "
                             "give it once")
    return files


def directory_binlogs(directory: Path, *, allow_gaps: bool = False, on_warning: Callable[[str], None] | None = None) -> list[Path]:
    found = _named_binlogs(directory, allow_gaps, on_warning)
    if found:
        return found
    # exit 2 (bad usage): the directory names no binlog (`*.index` or `name.NNNNNN`)
    unnamed = [e.name for e in sorted(directory.iterdir()) if _is_binlog(e)]
    if unnamed:
        shown = ", ".join(unnamed[:3]) + (", ..." if len(unnamed) > 3 else "")
        raise UsageError(
            f"{directory} holds {len(unnamed)} binlog file(s) whose names are not "
            f"NAME.NNNNNN and no .index file lists them ({shown}): their order is unknown",
            hint="give them as files in reading order (binlog dump DIR/a DIR/b ...), or "
                 "write DIR/NAME.index listing them one per line")
    raise UsageError(f"no binlog files in directory {directory}")


# -- discovery: the binlogs of many directories, as the lake reads them -----------------------

def expand_sources(paths: Iterable[str]) -> list[str]:
    """Globs expanded (sorted, ``*.index`` files left out); other items kept, in order."""
    out: list[str] = []
    for item in paths:
        item = str(item)
        if any(ch in item for ch in "*?["):
            matches = sorted(m for m in glob.glob(item) if not m.endswith(".index"))
            if not matches:
                raise UsageError(f"no file matches {item!r}")
            out.extend(matches)
        else:
            out.append(item)
    return out


def discover(paths: Iterable[str], on_warning: Callable[[str], None] | None = None, *, allow_gaps: bool = False,
             follow_symlinks: bool = False) -> list[tuple[str, list[str]]]:
    """The sources as *sequences*: [(key, [file, ...])], each read like one `binlog dump`
    (DDL followed from file to file, positions ordered).

    - files given one after another form one sequence, as on dump's command line;
    - a directory with a ``*.index`` or numbered files (``mariadb-bin.000042``) is one
      sequence, its files in index order;
    - any other directory is searched recursively: each such directory inside it is a
      sequence, and each other binlog file (checked by its magic bytes) is a sequence of
      its own (e.g. ``samples/``: unrelated sample binlogs, each with its own DDL).

    The search does not follow symlinks to directories (a link to a parent would loop:
    the same files read again and again) unless ``follow_symlinks``: then each directory
    is searched once (by device and inode: a loop ends where it comes back), and in any
    case no file is read twice: a file met again
    (a symlink, an index naming it twice, a path given twice) is left out.  Both are
    reported through ``on_warning`` (default: stderr), never dropped silently.  An index
    naming a binlog that is not there is a GapError (``allow_gaps``: a warning).
    """
    import sys

    def to_stderr(message: str) -> None:
        sys.stderr.write(f"binlog: warning: {message}\n")

    warn = on_warning or to_stderr
    groups: list[tuple[str, list[str]]] = []
    loose: list[str] = []
    seen: dict[tuple[int, int], str] = {}      # (device, inode) -> the path read

    def once(paths: list[str]) -> list[str]:
        kept = []
        for path in paths:
            st = os.stat(path)
            first = seen.setdefault((st.st_dev, st.st_ino), path)
            if first == path and path not in kept:
                kept.append(path)
            else:
                warn(f"{path} is the same file as {first}: read once")
        return kept

    def add(key: str, paths: list[str]):
        paths = once(paths)
        if paths:
            groups.append((key, paths))

    def flush():
        if loose:
            add(f"files:{loose[0]}", list(loose))
            loose.clear()

    searched: set[tuple[int, int]] = set()     # (device, inode) of the directories searched

    def walk(directory: Path):
        st = os.stat(directory)
        if (st.st_dev, st.st_ino) in searched:
            warn(f"{directory} is a directory already searched (a symlink loop): searched once")
            return
        searched.add((st.st_dev, st.st_ino))
        try:
            files = [str(p) for p in directory_binlogs(directory, allow_gaps=allow_gaps,
                                                        on_warning=warn)]
        except UsageError:
            files = []
        if files:
            add(f"dir:{directory}", files)
            return
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink() and entry.is_dir():
                if follow_symlinks:
                    walk(entry.resolve())      # by its real path: the checkpoint's key
                else:
                    warn(f"{entry} is a symlink to a directory: not followed "
                         f"(--follow-symlinks follows it)")
            elif entry.is_dir():
                walk(entry)
            elif entry.is_file() and not entry.name.endswith(".index") and (
                    entry.name.endswith(".binlog") or _is_binlog(entry)):
                add(f"file:{entry}", [str(entry)])

    for item in expand_sources(paths):
        path = Path(item)
        if path.is_dir():
            flush()
            before = len(groups)
            walk(path.resolve())
            if len(groups) == before:
                raise UsageError(f"no binlog files in directory {path}")
        elif path.exists():
            loose.append(str(path.resolve()))
        else:
            raise UsageError(f"no such file or directory: {path}")
    flush()
    return groups


def _named_binlogs(directory: Path, allow_gaps: bool, on_warning) -> list[Path]:
    """The binlogs an index of ``directory`` lists that are there, else its NAME.NNNNNN
    files in order; [] when it names none."""
    for index in sorted(directory.glob("*.index")):
        names = [line.strip() for line in index.read_text(errors="replace").splitlines() if line.strip()]
        # a name listed twice is one file (read once); names, never paths, from the index
        listed = list(dict.fromkeys(directory / Path(name).name for name in names))
        present = [found for p in listed if (found := _stored(p)) is not None]
        if present:
            _check_index_gaps(index, listed, present, allow_gaps, on_warning)
            return present
    numbered = []
    for entry in directory.iterdir():
        m = _NUMBERED.match(binlog_name(entry))
        if m and entry.is_file():
            numbered.append((m.group(1), int(m.group(2)), entry))
    return [entry for _, _, entry in sorted(numbered)]


def _holds_binlogs(directory: Path) -> bool:
    """Whether directory_binlogs has an answer other than "no binlog files": a binlog it
    finds, or binlogs it refuses (unnamed ones).  An index naming a file not created yet
    (a relay's order: relay.py) is not enough."""
    return bool(_named_binlogs(directory, True, None)) or any(_is_binlog(e) for e in directory.iterdir())


def _stored(path: Path) -> Path | None:
    """The file holding binlog ``path``: itself, or compressed beside it."""
    for candidate in (path, *(path.with_name(path.name + s) for s in COMPRESSED_SUFFIXES)):
        if candidate.is_file():
            return candidate
    return None


def _is_binlog(entry: Path) -> bool:
    """A plain file starting with the binlog magic number."""
    if not entry.is_file():
        return False
    try:
        with open(entry, "rb") as fh:
            return fh.read(4) == b"\xfebin"
    except OSError:
        return False


def _check_index_gaps(index: Path, listed: list[Path], present: list[Path], allow_gaps: bool,
                      on_warning) -> None:
    """Binlogs the index lists between two that are there but missing: a gap
    (binlog.continuity).  Leading ones are binlogs the copy starts after (purged or not
    copied), trailing ones binlogs not there yet - a relay lists a file before it creates
    it (sources/relay.py RelayDir.open), and a follower started in between goes on to it
    by its ROTATE - or not copied: nothing between two read binlogs is missing then, and
    the trailing ones are said in a warning."""
    from ..errors import GapError

    names = [binlog_name(p) for p in listed]
    first, last = names.index(binlog_name(present[0])), names.index(binlog_name(present[-1]))
    missing = [p.name for p in listed[first:last] if _stored(p) is None]
    after = [p.name for p in listed[last + 1:]]
    if after and on_warning:
        on_warning(f"{index.name} lists {', '.join(after)} after {names[last]}: not in {index.parent} "
                   f"(not created yet, or not copied)")
    if not missing:
        return
    text = (f"{index.name} lists binlog(s) missing from {index.parent}: {', '.join(missing)}"
            f" (after {binlog_name(present[0])})")
    if allow_gaps:
        if on_warning:
            on_warning(f"{text} (--allow-gaps: reading on without them)")
        return
    raise GapError(text,
                   hint="copy the missing binlog(s) next to the others, or pass --allow-gaps "
                        "to read on without their changes")


class FileBinlog(Binlog):
    """One binlog file.  With a ``poller`` the file is followed: reading at its end
    waits for it to grow (a file the server is still writing)."""

    def __init__(self, path: str | os.PathLike, *, poller: Poller | None = None):
        self.path = Path(path)
        self.name = self.path.name
        self.poller = poller
        try:
            self._fh = open(self.path, "rb")
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror}", source=self.path) from exc
        self._offset = 0

    def read(self, size: int) -> bytes:
        return bytes(self.read_chunk(memoryview(bytearray(size))))

    def read_chunk(self, buffer: memoryview) -> memoryview:
        try:
            got = self._fh.readinto(buffer)
        except OSError as exc:
            # EIO from a failing disk and the like: name the file and where it failed
            raise InputError(f"read failed: {exc.strerror or exc}", source=self.name,
                             event_offset=self._offset) from exc
        self._offset += got
        if got and self.poller is not None:
            self.poller.got_data()
        return buffer[:got]

    def seek(self, offset: int) -> None:
        if not self._fh.seekable():
            raise UsageError(f"{self.name} is a pipe: --start-position needs a file that can "
                             f"be read from any offset")
        self._fh.seek(offset)
        self._offset = offset

    def size(self) -> int | None:
        return os.fstat(self._fh.fileno()).st_size

    def wait(self) -> bool:
        return self.poller.wait() if self.poller is not None else False

    def close(self) -> None:
        self._fh.close()


class FileSource(BinlogSource):
    """Files and directories given on the command line, in order.

    ``follow``: the last file is followed as it grows, and after a ROTATE in it the
    file it names (in the same directory) once it appears; ``follow_timeout`` seconds
    without new data end the wait (None: wait forever).  Following one directory that
    holds no binlog yet (a relay a ``fetch`` is about to fill) waits for its first one."""

    def __init__(self, paths: Iterable[str | os.PathLike], *, follow: bool = False,
                 follow_timeout: float | None = None, poll_interval: float = 0.25,
                 on_idle: Callable[[], None] | None = None, allow_gaps: bool = False,
                 on_warning: Callable[[str], None] | None = None):
        paths = list(paths)
        self.follow = follow
        self.follow_timeout = follow_timeout
        self.poll_interval = poll_interval
        self.on_idle = on_idle
        self._rotated_to: str | None = None
        # following: woken by the kernel when the directory's files change (watch.py)
        self._watches: dict[Path, DirectoryWatch] = {}
        if follow and len(paths) == 1 and Path(paths[0]).is_dir():
            directory = Path(paths[0])
            self._poller(directory).wait_until(lambda: _holds_binlogs(directory))
        self.files = expand_paths(paths, allow_gaps=allow_gaps, on_warning=on_warning)

    def binlogs(self) -> Iterator[Binlog]:
        number = 0
        while number < len(self.files):
            path = self.files[number]
            last = number == len(self.files) - 1
            self._rotated_to = None
            binlog: Binlog
            if is_stream(path):
                binlog = open_stream(path)
            else:
                binlog = FileBinlog(path, poller=self._poller(path.parent) if self.follow and last else None)
            binlog.last = last
            yield binlog
            if last and self.follow and self._rotated_to:
                # The server moved on to a new file: follow it there.
                nxt = path.parent / self._rotated_to
                if nxt != path and self._poller(path.parent).wait_until(nxt.exists):
                    self.files.append(nxt)
            number += 1

    def rotated(self, name: str) -> None:
        self._rotated_to = Path(name).name     # a name, never a path from the binlog

    def _poller(self, directory: Path) -> Poller:
        watch = self._watches.get(directory)
        if watch is None:
            from .watch import DirectoryWatch  # only a follower waits (a dump's start-up without it)

            watch = self._watches[directory] = DirectoryWatch(directory)
        return Poller(self.follow_timeout, self.poll_interval, self.on_idle, watch=watch)


def read_events(path: str | os.PathLike, *, verify_checksums: bool = True,
                start_position: int | None = None, chunk: int = CHUNK,
                skip_rows: Callable[[int], bool] | None = None, on_error: str = "fail",
                follow: bool = False, follow_timeout: float | None = None,
                poll_interval: float = 0.25, on_idle: Callable[[], None] | None = None) -> Iterator:
    """Yield the events of one binlog file; see ``base.read_events``."""
    path = Path(path)
    stream = EventStream(path.name, verify_checksums=verify_checksums, skip_rows=skip_rows,
                         on_error=on_error)
    poller = None
    if follow:
        from .watch import DirectoryWatch

        poller = Poller(follow_timeout, poll_interval, on_idle, watch=DirectoryWatch(path.parent))
    with FileBinlog(path, poller=poller) as binlog:
        yield from _read_binlog(binlog, stream, start_position=start_position, follow=follow,
                                chunk=chunk, state=ReadState())
