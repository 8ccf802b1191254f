"""What the reader needs of a place binlogs come from: the source interface.

A ``BinlogSource`` hands out ``Binlog``s one at a time, in reading order; a ``Binlog``
is the bytes of one binlog, read forward from its start (magic number included), under
the name the server gave it.  The reader frames and decodes those bytes with the
sans-IO ``EventStream``; nothing else here knows what an event is, except
``read_events``, the one loop that joins a ``Binlog`` to a stream.

Implementations: ``file.FileSource`` (files and directories); stdin, compressed files
and a replication connection implement the same two classes.  Positions everywhere are
``(binlog name, offset)``, so a source can be resumed from where the reader stopped.
"""
from __future__ import annotations

import mmap
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..constants import HEADER_LEN, LOG_EVENT_ARTIFICIAL_F, EventType
from ..errors import BadMagicError, UsageError
from ..stream import NEED_DATA, EventStream

if TYPE_CHECKING:
    from .watch import DirectoryWatch

CHUNK = 1 << 20

# A binlog whose last event is one of these is complete: the server moved on (ROTATE) or
# shut down (STOP).  Artificial ROTATEs (sent by a server, not written) do not count.
_FILE_END_TYPES = frozenset({EventType.ROTATE_EVENT, EventType.STOP_EVENT})


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A live source had nothing newer to send: its server stands at ``file``:``pos``
    (``pos`` None when the heartbeat did not say).  ``clock``: the server's clock at that
    moment as epoch seconds, estimated by the source (None: unknown).  ``read_events``
    gives it out between two events, when the source says so (``Binlog.heartbeat``)."""
    file: str
    pos: int | None
    clock: float | None


@dataclass(frozen=True)
class Position:
    """A place in a set of binlogs: the binlog's name and a byte offset in it."""
    name: str
    offset: int

    def __str__(self) -> str:
        return f"{self.name}:{self.offset}"


class Binlog(ABC):
    """The bytes of one binlog, from its first byte on."""

    #: the binlog's name as its server names it (``mariadb-bin.000042``): the file part
    #: of every position and error message
    name: str

    #: no binlog follows this one, as far as the source knows when it hands it out
    #: (the stop position applies to the last binlog)
    last: bool = True

    #: the bytes after the FORMAT_DESCRIPTION continue at this offset, not right after
    #: it (a server's dump that starts inside a binlog sends its FORMAT_DESCRIPTION,
    #: then the events from the position): the reader jumps there as it does for a
    #: start position
    start: int | None = None

    @abstractmethod
    def read(self, size: int) -> bytes:
        """Up to ``size`` next bytes; ``b""`` when none are there (yet)."""

    def read_chunk(self, buffer: memoryview) -> bytes | memoryview:
        """The next bytes, up to ``len(buffer)`` (a live source's next event may be
        longer); empty when none are there (yet).  The reader passes the same buffer for
        every chunk: a source that fills it in place (a file) gives a view of it, and
        saves a fresh megabyte of pages, faulted in by the kernel, per chunk."""
        return self.read(len(buffer))

    def heartbeat(self) -> Heartbeat | None:
        """After ``read`` gave nothing: the heartbeat that came instead of bytes (a live
        source asked to ``report_heartbeats``), once; by default None."""
        return None

    def seek(self, offset: int) -> None:
        """Go on reading at ``offset`` (the reader jumps there after the binlog's
        FORMAT_DESCRIPTION).  Sources that cannot seek refuse unless they are there."""
        raise UsageError(f"{self.name}: cannot start at position {offset}: this input is read "
                         "from its start only")

    def size(self) -> int | None:
        """Bytes in the binlog so far, when known (damage reaching the end is reported
        up to it)."""
        return None

    def wait(self) -> bool:
        """Called when ``read`` returned nothing while following: block until more
        bytes may be there and say True, or say False when none will come."""
        return False

    def close(self) -> None:
        """Release what the binlog holds open (by default nothing)."""
        return None

    def __enter__(self) -> Binlog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BinlogSource(ABC):
    """Binlogs in reading order."""

    @abstractmethod
    def binlogs(self) -> Iterator[Binlog]:
        """The binlogs, one at a time; the reader reads each one to its end before
        asking for the next."""

    def report_heartbeats(self) -> None:
        """Give the server's heartbeats out (``Binlog.heartbeat``): the reader asks for
        them to write watermarks.  Sources without a server have none (a no-op)."""
        return None

    def rotated(self, name: str) -> None:
        """The binlog just read ended with a ROTATE to ``name``: a source that follows
        a growing set of binlogs goes on with it (the others ignore it)."""
        return None


@dataclass
class ReadState:
    """What ``read_events`` learnt of the binlog it read."""
    rotated_to: str | None = None     # the next binlog's name, from a real ROTATE
    finished: bool = False            # the last event read was a ROTATE or STOP


def read_events(binlog: Binlog, stream: EventStream, *, start_position: int | None = None,
                follow: bool = False, chunk: int = CHUNK,
                state: ReadState | None = None) -> Iterator:
    """Yield the events of one binlog (and, in the stream's skip mode, a
    ``stream.Damage`` for every damaged range, in place; and each ``Heartbeat`` the
    binlog reports, between the events it came between).

    With ``start_position``, the FORMAT_DESCRIPTION at the binlog's start is still read
    (it says how to frame everything), and the START_ENCRYPTION_EVENT right after it in
    an encrypted binlog (its nonce and key version), then reading jumps to the position.

    At the end of the bytes the stream is closed: a binlog ending inside an event raises
    ``IncompleteEventError`` after everything before it was yielded.  With ``follow``,
    ``binlog.wait()`` is asked for more instead, unless the binlog is finished (a ROTATE
    or STOP was its last event and nothing follows it)."""
    state = state if state is not None else ReadState()
    target = start_position if start_position is not None and start_position > 4 else None
    jumped = target is None
    empty = True
    buffer = memoryview(bytearray(chunk))
    while True:
        event = stream.next_event()
        if event is NEED_DATA:
            data = binlog.read_chunk(buffer)
            if data:
                empty = False
                stream.feed(data)
                continue
            beat = binlog.heartbeat()
            if beat is not None:
                yield beat          # between two events: nothing of one is buffered
                continue
            if follow and not (state.finished and not stream.buffered) and binlog.wait():
                continue
            if empty:
                # not even the magic: a failed copy, an empty FIFO; not a binlog
                raise BadMagicError("empty input (0 bytes): not a binlog", source=binlog.name,
                                    event_offset=0)
            stream.close()
            while (event := stream.next_event()) is not NEED_DATA:
                yield event
            return
        _note_end(event, state)
        if not jumped and stream.seen_fde:
            yield event
            if stream.peek_type() == EventType.START_ENCRYPTION_EVENT:
                continue        # everything after the jump needs it
            jumped = True
            if target is not None and target > stream.offset:
                binlog.seek(target)
                stream.jump(target)
            continue
        yield event


def _note_end(event, state: ReadState) -> None:
    header = getattr(event, "header", None)
    if header is None:
        return
    real = not header.flags & LOG_EVENT_ARTIFICIAL_F
    state.finished = header.type_code in _FILE_END_TYPES and real
    if header.type_code == EventType.ROTATE_EVENT and real:
        state.rotated_to = getattr(event, "next_file", None) or None


class Poller:
    """Waiting for a growing file: ``interval`` seconds at a time until ``timeout``
    seconds pass with no new data (None: forever).  ``on_idle()`` runs before each wait
    (the commands flush their output there).  ``watch``: a ``watch.DirectoryWatch`` of
    the file's directory, which ends a wait as soon as something there changes (else
    each wait sleeps its interval)."""

    def __init__(self, timeout: float | None = None, interval: float = 0.25,
                 on_idle: Callable[[], None] | None = None, watch: DirectoryWatch | None = None):
        self.timeout = timeout
        self.interval = interval
        self.on_idle = on_idle
        self.watch = watch
        self._idle_since: float | None = None

    def got_data(self) -> None:
        self._idle_since = None

    def wait(self) -> bool:
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if self.timeout is not None and now - self._idle_since >= self.timeout:
            return False
        if self.on_idle is not None:
            self.on_idle()
        self._pause()
        return True

    def wait_until(self, ready: Callable[[], bool]) -> bool:
        """Wait until ``ready()`` (True) or the timeout (False)."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while not ready():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self._pause()
        return True

    def _pause(self) -> None:
        if self.watch is not None:
            self.watch.wait(self.interval)
        else:
            time.sleep(self.interval)


def event_heads(data: bytes | mmap.mmap, start: int = 4) -> Iterator[tuple[int, int, int]]:
    """(offset, length, log_pos) of each event of a binlog file's bytes (``data``: bytes
    or an mmap) from ``start``, an event boundary, while a whole header is there; a
    length under a header's stops the walk after it is given.  The callers decide what a
    partial or damaged event means (relay, served and rewritten files)."""
    size = len(data)
    pos = start
    while pos + HEADER_LEN <= size:
        length = int.from_bytes(data[pos + 9:pos + 13], "little")
        yield pos, length, int.from_bytes(data[pos + 13:pos + 17], "little")
        if length < HEADER_LEN:
            return
        pos += length
