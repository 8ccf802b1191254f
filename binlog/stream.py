"""Sans-IO event stream: bytes in, events out.

``feed(data)`` adds bytes; ``next_event()`` returns the next whole event or ``NEED_DATA``;
``close()`` says the input ended.  The stream frames each event by its header's size,
verifies the CRC32 footer when the FORMAT_DESCRIPTION says the file has checksums,
decodes the body with the decoder registered for its type code (unknown codes become
``UnknownEvent``) and adds file/offset/event type to any error, keeping the cause.  It
never touches files.

Errors (``on_error``):

- ``"fail"`` (default): the first damaged event raises its typed error.
- ``"skip"``: a damaged event comes out as a ``Damage`` record (the byte range skipped
  and the error) instead, and reading goes on after it.  When the damaged event's own
  size can be trusted - the bytes at its declared end are a plausible event - only the
  event is skipped.  Otherwise the header itself is damaged and the stream
  *resynchronises*: it scans forward byte by byte for the next plausible event
  (``_plausible_at``):

  1. a header with a known type code (not 0) and a size possible for that type
     (``_MAX_SIZE_BY_TYPE`` for fixed-size events, else up to MAX_EVENT_SIZE);
  2. when the events before the damage kept the log_pos chain (each log_pos the end
     of its event, two in a row): its log_pos continues that chain - its own end
     position, or the last good event's log_pos plus its size (bytes were inserted
     before it), or the event after it continues the chain from it (bytes were lost);
  3. when the file has checksums: its CRC32 matches (while the FORMAT_DESCRIPTION is
     unknown, a matching CRC also tells the file has checksums);
  4. without checksums: the header after it is plausible too (the two after it when
     the file keeps no log_pos chain, e.g. relay logs).

  CRC checks of one resync are bounded (``_CRC_BUDGET``), so hostile input cannot make
  the scan quadratic.

The end of the input (``close()``): leftover bytes that are the beginning of a plausible
event raise ``IncompleteEventError`` naming where that event starts (a file cut short or
still being written; everything before it was given out).  Leftover bytes whose header
contradicts the log_pos chain are damage instead (``MalformedEventError``, or a
``Damage`` record and a resync in skip mode).  After ``close()`` call ``next_event()``
until it returns ``NEED_DATA`` to collect what the skip mode still has to say.

Encrypted files: after a START_ENCRYPTION_EVENT the stream frames each event by its size
(in clear at offset +9) and has ``binlog.decryption.Decryption`` decrypt it in the buffer
before it reads it as a plain event; a resync there accepts only candidates that decrypt
with the IV of their own offset.  The stream decides what a failure is (a wrong key,
a damaged event, the encrypted rest unreadable); the decryption holds the keys and ciphers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from . import events as _events  # noqa: F401  (fills EVENT_DECODERS)
from .constants import (
    BINLOG_MAGIC,
    CHECKSUM_CRC32,
    CHECKSUM_OFF,
    HEADER_LEN,
    MAX_EVENT_SIZE,
    EventType,
    event_type_name,
)
from .cursor import Cursor
from .errors import (
    BadMagicError,
    BinlogError,
    ChecksumMismatchError,
    EncryptedBinlogError,
    IncompleteEventError,
    MalformedEventError,
    check_on_error,
)
from .events import FormatDescriptionEvent, StartEncryptionEvent, TransactionPayloadEvent, UnknownEvent
from .events.base import Event, SkippedRowsEvent
from .events.rows import ROWS_EVENT_TYPES
from .header import EventHeader, FormatDescription, event_crc, parse_format_description, parse_header
from .registry import EVENT_DECODERS
from .stream_runs import Run, RunModes

if TYPE_CHECKING:                # both imported when a binlog turns out encrypted
    from .crypt import KeyRing
    from .decryption import Decryption


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData()

# The smallest FORMAT_DESCRIPTION: header, binlog_version, server_version, timestamp,
# common_header_len.
_MIN_FDE_SIZE = HEADER_LEN + 2 + 50 + 4 + 1

_CRC_BUDGET = 64 << 20      # bytes a resync may CRC-check beyond 16 per byte scanned
_TAIL = "tail"     # _plausible_at: a plausible header whose event runs past the end

# Type codes a resync accepts (UNKNOWN_EVENT, 0, is never written).
KNOWN_EVENT_TYPES = frozenset(int(t) for t in EventType) - {0}
_KNOWN_TYPE_RE = re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in sorted(KNOWN_EVENT_TYPES)) + b"]")

# Events of a bounded size (with room to spare: 4-byte checksum, extra bytes of newer
# servers and development builds): a larger declared size means a damaged header.
_MAX_SIZE_BY_TYPE: dict[int, int] = {
    EventType.STOP_EVENT: 64, EventType.INTVAR_EVENT: 64, EventType.RAND_EVENT: 64,
    EventType.XID_EVENT: 64, EventType.START_ENCRYPTION_EVENT: 128,
    EventType.FORMAT_DESCRIPTION_EVENT: 1024, EventType.GTID_EVENT: 512,
    EventType.GTID_LOG_EVENT: 512, EventType.ANONYMOUS_GTID_LOG_EVENT: 512,
    EventType.ROTATE_EVENT: 4096, EventType.BINLOG_CHECKPOINT_EVENT: 4096,
    EventType.HEARTBEAT_LOG_EVENT: 4096,
}


def check_event_size(type_code: int, event_size: int, fde: FormatDescription, *,
                     source: str, offset: int) -> None:
    """Raise MalformedEventError when no event of this type can have this size: below
    the header (and checksum) the FORMAT_DESCRIPTION gives, or above the type's bound.
    The one framing check of the stream and of header-only walks (the Spark pre-scan)."""
    if type_code == EventType.FORMAT_DESCRIPTION_EVENT:
        minimum = _MIN_FDE_SIZE
    else:
        minimum = fde.common_header_len + fde.checksum_len
    maximum = _MAX_SIZE_BY_TYPE.get(type_code, MAX_EVENT_SIZE)
    if not minimum <= event_size <= maximum:
        raise MalformedEventError(f"event size {event_size} is impossible for type code "
                                  f"{type_code} (expected {minimum}..{maximum})", source=source,
                                  event_offset=offset, field_offset=offset + 9,
                                  event_type=event_type_name(type_code))


@dataclass
class Damage:
    """Bytes ``[start, end)`` of ``source`` skipped in skip mode, and why.

    ``resynced``: the damaged event's header could not be trusted, so the next event
    was found by scanning (the range may span several events).  ``to_end``: nothing
    plausible followed, the range runs to the end of the input."""
    source: str
    start: int
    end: int
    error: BinlogError
    resynced: bool = False
    to_end: bool = False
    type_code: int | None = None    # the type byte read at ``start`` (untrusted if resynced)
    one_event: bool = True          # the range is one event: its size or its log_pos says so
    no_event_lost: bool = False     # the log_pos chain goes on across it: only junk was there

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def may_be_rows_event(self) -> bool:
        """Only one event was skipped and its header says it was a rows event."""
        return self.one_event and self.type_code in ROWS_EVENT_TYPES

    def describe(self) -> str:
        how = "resynchronised on the next plausible event" if self.resynced and not self.to_end else (
            "nothing plausible after it" if self.to_end else "one event")
        return (f"{self.source} bytes {self.start}..{self.end} ({self.size} bytes, {how}): "
                f"{self.error}")


class EventStream:
    def __init__(self, source: str = "<bytes>", *, verify_checksums: bool = True,
                 expect_magic: bool = True, offset: int = 0,
                 skip_rows: Callable[[int], bool] | None = None, on_error: str = "fail",
                 keys: KeyRing | None = None, keep_raw: bool = False, runs: RunModes | None = None):
        """``skip_rows(table_id) -> bool``: rows events of tables it says yes to are
        stepped over by their length (no checksum, no copy, no decode) and come out as
        ``SkippedRowsEvent`` (the table filter, decided at TABLE_MAP time).
        ``on_error``: "fail" raises on damage, "skip" returns ``Damage`` records.
        ``keys``: a ``crypt.KeyRing``; after a START_ENCRYPTION_EVENT every event is
        decrypted in the buffer before it is framed (``binlog.decryption``; without keys:
        EncryptedBinlogError).  ``keep_raw``: each event's bytes as framed (decrypted, with
        header and checksum; None for a payload's inner events) stay in ``last_raw`` until
        the next event, and a CountedRun holds its events' bytes (apply --method binlog,
        rewrite).  ``runs``: the runs of rows events that come out as one SkippedRun,
        CountedRun or EncodedRun (``binlog.stream_runs``: the reader's)."""
        check_on_error(on_error)
        self.source = source
        self.skip_rows = skip_rows
        self.verify_checksums = verify_checksums
        self.on_error = on_error
        self.fde = FormatDescription()
        self.seen_fde = False
        self._buf = bytearray()
        self._pos = 0                 # read position in _buf
        self.offset = offset          # absolute offset of _buf[_pos]
        self._need_magic = expect_magic
        self._pending: list = []      # events unpacked from a TRANSACTION_PAYLOAD
        self._table_maps: dict[bytes, Event] = {}   # TABLE_MAP body -> its event (_table_map)
        self._eof = False
        self._chain_run = 0           # good events in a row that kept the log_pos chain
        self._last_log_pos: int | None = None   # log_pos of the last good event that had one
        # skip mode: a damaged range in progress
        self._damage_start: int | None = None
        self._damage_error: BinlogError | None = None
        self._damage_type: int | None = None
        self._damage_log_pos: int | None = None
        self._damage_size: int | None = None
        self._damage_trusted = False   # the damaged event was decoded at its declared size
        self._crc_spent = 0           # bytes CRC-checked by the current resync
        self._preferred: int | None = None   # the damaged event's declared end, tried first
        self._discard = False         # everything to the end is unreadable (encrypted)
        self.keys = keys
        self.decryption: Decryption | None = None   # after START_ENCRYPTION (binlog.decryption)
        self.runs = runs
        self.keep_raw = keep_raw
        self.last_raw: bytes | None = None

    # --- input -------------------------------------------------------------
    def feed(self, data: bytes | memoryview) -> None:
        if self._eof:
            raise ValueError("feed() after close()")
        if self._pos and self._pos >= len(self._buf) // 2:
            del self._buf[:self._pos]
            self._pos = 0
        self._buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def peek_type(self) -> int | None:
        """Type code of the next event when its header is buffered (and in clear)."""
        if self._need_magic or self._pending or self.buffered < HEADER_LEN:
            return None
        if self.decryption is not None and self.decryption.encrypted(self.offset):
            return None
        return self._buf[self._pos + 4]

    @property
    def resyncing(self) -> bool:
        return self._damage_start is not None

    def jump(self, offset: int) -> None:
        """Forget buffered bytes and continue at ``offset`` (the caller seeks its input)."""
        self._buf.clear()
        self._pos = 0
        self.offset = offset
        self._need_magic = False
        self._damage_start = self._damage_error = self._preferred = None
        self._discard = False
        if self.decryption is not None:
            self.decryption.plain_end = offset
        self._chain_run = 0
        self._last_log_pos = None

    def close(self) -> None:
        """The input has ended.  Raises ``IncompleteEventError`` if it ended inside a
        plausible event (and, in fail mode, ``MalformedEventError`` if the leftover
        header is damaged).  In skip mode, keep calling ``next_event()`` until it
        returns NEED_DATA: a damaged tail comes out as ``Damage``."""
        self._eof = True
        if self._pending or self.resyncing or self._discard or not self.buffered:
            return
        if self._need_magic and self.buffered >= 4:
            return          # next_event() has not looked yet
        if not self._need_magic and self.buffered >= HEADER_LEN:
            if int.from_bytes(self._buf[self._pos + 9:self._pos + 13], "little") <= self.buffered:
                return      # a whole event is waiting (for a look past it): next_event() takes it
        error = self._tail_error()
        if isinstance(error, IncompleteEventError) or self.on_error == "fail":
            raise error
        header = (parse_header(self._buf, self._pos, self.offset)
                  if not self._need_magic and self.buffered >= HEADER_LEN else None)
        self._begin_damage(error, header, trust_size=False)

    def _tail_error(self) -> BinlogError:
        """What the leftover bytes at the end of the input are."""
        n = self.buffered
        hint = "the file is truncated or still being written (--follow waits for the rest)"
        if self.decryption is not None and self.decryption.encrypted(self.offset):
            hint += f"; the event is encrypted with {self.decryption.describe()}"
        if self._need_magic:
            head = bytes(self._buf[self._pos:self._pos + min(n, 4)])
            if not BINLOG_MAGIC.startswith(head):
                return BadMagicError(f"not a binlog file: starts with {head.hex(' ')}, expected "
                                     f"{BINLOG_MAGIC.hex(' ')}", source=self.source,
                                     event_offset=self.offset, field_offset=self.offset)
            return IncompleteEventError(f"input ends inside the file header: {n} of its 4 bytes "
                                        f"are present", source=self.source, event_offset=self.offset,
                                        field_offset=self.offset, hint=hint)
        if n < HEADER_LEN:
            return IncompleteEventError(f"input ends inside an event header: {n} of its "
                                        f"{HEADER_LEN} bytes are present", source=self.source,
                                        event_offset=self.offset, field_offset=self.offset, hint=hint)
        header = self._header_view(self._pos, self.offset)
        if header is None:      # encrypted, its first 20 bytes not all there
            header = parse_header(self._buf, self._pos, self.offset)
            header.type_code, header.log_pos = 0, 0
        if self._chain and not self._chained(header):
            return MalformedEventError(
                f"the event header is damaged: it declares {header.event_size} bytes, past the "
                f"end of the input ({n} left), and its log_pos {header.log_pos} is not the "
                f"end that size gives ({header.end & 0xFFFFFFFF})", source=self.source,
                event_offset=self.offset, field_offset=self.offset + 9,
                event_type=header.type_name)
        return IncompleteEventError(f"input ends inside the event: {n} of its "
                                    f"{header.event_size} bytes are present", source=self.source,
                                    event_offset=self.offset, event_type=header.type_name,
                                    field_offset=self.offset, hint=hint)

    # --- output ------------------------------------------------------------
    def next_event(self) -> Event | Damage | Run | _NeedData:
        self.last_raw = None
        if self._pending:
            return self._pending.pop(0)
        if self._discard:
            return self._discard_rest()
        if self.resyncing:
            return self._resync()
        if self._need_magic:
            if self.buffered < 4:
                return NEED_DATA
            magic = bytes(self._buf[self._pos:self._pos + 4])
            if magic != BINLOG_MAGIC:
                error = BadMagicError(f"not a binlog file: starts with {magic.hex(' ')}, "
                                      f"expected {BINLOG_MAGIC.hex(' ')}",
                                      source=self.source, event_offset=self.offset, field_offset=self.offset)
                if self.on_error == "fail":
                    raise error
                self._need_magic = False
                return self._start_damage(error, None, trust_size=False)
            self._advance(4)
            self._need_magic = False
        if self.decryption is not None and self.decryption.encrypted(self.offset):
            waiting = self._decrypt_next()
            if waiting is not None:
                return waiting
        elif self.seen_fde and self.runs is not None and self.decryption is None:
            run = self._run(self.runs)
            if run is not None:
                return run
        if self.buffered < HEADER_LEN:
            if self._eof and self.buffered:
                return self._at_end()
            return NEED_DATA
        header = parse_header(self._buf, self._pos, self.offset)
        try:
            check_event_size(header.type_code, header.event_size, self.fde, source=self.source,
                             offset=header.offset)
        except BinlogError as exc:
            if self.on_error == "fail":
                raise
            return self._start_damage(exc, header, trust_size=False)
        if self.buffered < header.event_size:
            if self._eof:
                return self._at_end()
            return NEED_DATA
        if (self.on_error == "skip" and self._chain and not self._chained(header)
                and not (self.verify_checksums and self.fde.checksum_len)):
            # No CRC to go by and the header contradicts the log_pos chain: believe its
            # size only if another plausible event starts where it says it ends (a relay
            # log switching masters, a development build's odd numbering) or the input
            # ends there.
            verdict = self._header_at(header.end)
            if verdict is None:
                return NEED_DATA
            if not verdict:
                return self._start_damage(MalformedEventError(
                    f"the event header is damaged: its log_pos {header.log_pos} is not the end "
                    f"its size gives ({header.end & 0xFFFFFFFF}) and no event starts there",
                    source=self.source, event_offset=header.offset,
                    field_offset=header.offset + 9, event_type=header.type_name),
                    header, trust_size=False)
        if self.skip_rows is not None and header.type_code in ROWS_EVENT_TYPES:
            table_id = self._peek_table_id(header)
            if table_id is not None and self.skip_rows(table_id):
                self._advance(header.event_size)
                self._note_chain(header)
                return SkippedRowsEvent(header, table_id)
        raw = bytes(self._buf[self._pos:self._pos + header.event_size])
        try:
            event = self.decode(raw, header)
        except BinlogError as exc:
            self._pending = []
            if self.on_error == "fail":
                raise
            if isinstance(exc, EncryptedBinlogError):
                self._discard = True
                self._damage_start, self._damage_error = header.offset, exc
                self._damage_type = header.type_code
                return self._discard_rest()
            return self._start_damage(exc, header, trust_size=True)
        self._advance(header.event_size)
        self._note_chain(header)
        if self.keep_raw:
            # a TRANSACTION_PAYLOAD's too; its inner events (from _pending) have none
            self.last_raw = raw
        return event

    def _run(self, runs: RunModes) -> Run | None:
        """The buffered run of rows events ``runs`` covers (None: the next event is not
        one).  The checks are those of the one-event path in next_event (size, the
        log_pos chain in skip mode without CRCs); whatever fails them, or is not wholly
        buffered, is left to it.  (An encrypted file: one decrypted event at a time.)"""
        strict = self.on_error == "skip" and not (self.verify_checksums and self.fde.checksum_len)
        last = -1 if self._last_log_pos is None else self._last_log_pos
        got = runs.take(self._buf, self._pos, self.offset, self.fde, (last, self._chain_run),
                        strict, self.verify_checksums, self.keep_raw)
        if got is None:
            return None
        run, end, (last_log_pos, chain_run) = got
        self._advance(end - self._pos)
        self._last_log_pos = None if last_log_pos < 0 else last_log_pos
        self._chain_run = chain_run
        return run

    def _peek_table_id(self, header: EventHeader) -> int | None:
        """table_id of a rows event in the buffer: 6 bytes LE after the common header,
        4 when the FDE gives rows a 6-byte post-header (pre-5.1.4)."""
        start = self._pos + self.fde.common_header_len
        width = 4 if self.fde.post_header(header.type_code, 8) == 6 else 6
        if self.fde.common_header_len + width > header.event_size:
            return None      # too short to be a rows event: let the decoder say so
        return int.from_bytes(self._buf[start:start + width], "little")

    def _advance(self, n: int) -> None:
        self._pos += n
        self.offset += n

    @property
    def _chain(self) -> bool:
        """The file keeps the log_pos chain (each event's log_pos is its end position):
        the last two events that had a log_pos did.  Relay logs and copies do not."""
        return self._chain_run >= 2

    def _chained(self, header: EventHeader) -> bool:
        """The header keeps the log_pos chain: its log_pos is its end position, or the
        last good event's log_pos plus its size (the same chain shifted by bytes inserted
        before it), or 0 (artificial events)."""
        log_pos = header.log_pos
        return (log_pos in (0, header.end & _U32) or (
            self._last_log_pos is not None
            and log_pos == (self._last_log_pos + header.event_size) & _U32))

    def _note_chain(self, header: EventHeader) -> None:
        if header.log_pos:
            self._chain_run = self._chain_run + 1 if self._chained(header) else 0
            self._last_log_pos = header.log_pos

    # --- encrypted binlogs (binlog.decryption) -----------------------------
    def _start_decryption(self, event: StartEncryptionEvent) -> None:
        from .decryption import Decryption  # only an encrypted binlog needs it

        started = Decryption.start(self.keys, event, self.source)
        if started is not None:
            self.decryption = started

    def _decrypt_next(self):
        """Decrypt the event at the read position in the buffer (its size is in clear).
        None: done, or too few bytes to tell (the caller goes on as for plain bytes);
        else what next_event() returns (NEED_DATA, a Damage, or it raises)."""
        if self.buffered < HEADER_LEN:
            return None
        i = self._pos
        size = int.from_bytes(self._buf[i + 9:i + 13], "little")
        if not HEADER_LEN + self.fde.checksum_len <= size <= MAX_EVENT_SIZE:
            error = MalformedEventError(
                f"encrypted event size {size} is impossible (expected "
                f"{HEADER_LEN + self.fde.checksum_len}..{MAX_EVENT_SIZE})",
                source=self.source, event_offset=self.offset, field_offset=self.offset + 9)
            if self.on_error == "fail":
                raise error
            return self._start_damage(error, None, trust_size=False)
        if self.buffered < size:
            return self._at_end() if self._eof else NEED_DATA
        if not self._active_decryption().decrypt_next(self._buf, i, self.offset, size,
                                                      self._plain_ok(self.offset)):
            return self._undecryptable(size)
        return None

    def _plain_ok(self, offset: int):
        """A check of a decrypted event stored at ``offset``: a known type and a size
        possible for it, its log_pos its end (or 0), its CRC32 when the file has them."""
        from .crypt import crc_ok

        def check(plain) -> bool:
            header = parse_header(plain, 0, offset)
            if not self._header_ok(header) or not (header.log_pos == 0 or self._chained(header)):
                return False
            return not self.fde.checksum_len or crc_ok(plain)
        return check

    def _undecryptable(self, size: int):
        """The first encrypted event fails its checks with every key and algorithm: a
        wrong key - unless the event after it decrypts, then this one is damaged."""
        dec = self._active_decryption()
        j, nxt = self._pos + size, self.offset + size
        if len(self._buf) - j >= HEADER_LEN:
            size2 = int.from_bytes(self._buf[j + 9:j + 13], "little")
            if HEADER_LEN <= size2 <= len(self._buf) - j:
                if dec.decrypts(self._buf, j, nxt, size2, self._plain_ok(nxt)):
                    error = dec.damaged_error(self.source, self.offset)
                    if self.on_error == "fail":
                        raise error
                    dec.plain_end = self.offset      # nothing here is plain
                    return self._start_damage(error, None, trust_size=False)
        wrong = dec.wrong_key_error(self.source, self.offset)
        if self.on_error == "fail":
            raise wrong
        self._discard = True
        self._damage_start, self._damage_error, self._damage_type = self.offset, wrong, None
        return self._discard_rest()

    def _active_decryption(self) -> Decryption:
        """The decryption of the encrypted events being read (set by START_ENCRYPTION)."""
        if self.decryption is None:
            raise EncryptedBinlogError("an encrypted event before the START_ENCRYPTION_EVENT "
                                       "that says how to decrypt it", source=self.source,
                                       event_offset=self.offset)
        return self.decryption

    def _header_view(self, i: int, offset: int) -> EventHeader | None:
        """The header at buffer index ``i``, decrypted for a look when it still is."""
        dec = self.decryption
        if dec is not None and dec.encrypted(offset):
            return dec.header(self._buf, i, offset) if dec.detected else None
        return parse_header(self._buf, i, offset)

    def _encrypted_at(self, offset: int):
        """Does an encrypted event start at ``offset``?  True (then it is decrypted in
        the buffer) / False / None (need data) / _TAIL (runs past the end)."""
        dec = self._active_decryption()
        if not dec.encrypted(offset):
            return self._plausible_at(offset)
        i = self._pos + offset - self.offset
        avail = len(self._buf) - i
        if avail < HEADER_LEN:
            return None
        size = int.from_bytes(self._buf[i + 9:i + 13], "little")
        if not HEADER_LEN + self.fde.checksum_len <= size <= MAX_EVENT_SIZE or not dec.detected:
            return False
        header = dec.header(self._buf, i, offset)
        if header is None:
            return None      # its first 20 bytes are not all here (at the end: damage to it)
        if not self._header_ok(header) or not (header.log_pos == 0 or self._chained(header)):
            return False
        if avail < size:
            if not self._eof:
                return None
            return _TAIL if header.log_pos else False
        # Bounded as the CRC checks of a plain resync are (hostile sizes, many candidates).
        self._crc_spent += size
        if self._crc_spent > _CRC_BUDGET + 16 * (offset - (self._damage_start or 0)):
            return False
        return dec.decrypt_if(self._buf, i, offset, size, self._plain_ok(offset))

    # --- skip mode: damage and resynchronisation ---------------------------
    def _start_damage(self, error: BinlogError, header: EventHeader | None, *, trust_size: bool):
        """Begin a damaged range at the current offset; return what comes next."""
        self._begin_damage(error, header, trust_size=trust_size)
        return self._resync()

    def _begin_damage(self, error: BinlogError, header: EventHeader | None, *, trust_size: bool) -> None:
        error.add_context(source=self.source, event_offset=self.offset)
        self._damage_start = self.offset
        self._damage_error = error
        self._damage_type = header.type_code if header is not None else None
        self._damage_log_pos = header.log_pos if header is not None else None
        self._damage_size = header.event_size if header is not None else None
        self._damage_trusted = trust_size
        self._crc_spent = 0
        self._preferred = header.end if header is not None and trust_size else None
        if self._preferred is None:
            self._advance(1)

    def _resync(self):
        if self.decryption is not None:
            # A candidate must decrypt, with the IV of its own offset, to a plausible
            # header (one AES block) and then to a whole event that keeps the log_pos
            # chain and its CRC32 (_encrypted_at); no quick skip over the bytes.
            verdict_at, skip = self._encrypted_at, None
        else:
            verdict_at, skip = self._plausible_at, self._skip_to_candidate
        if self._preferred is not None:
            target = self._preferred
            verdict = verdict_at(target)
            if verdict is None and self._eof and target == self.offset + self.buffered:
                verdict = True       # the damaged event was the last one
            if verdict is None and not self._eof:
                return NEED_DATA
            self._preferred = None
            if verdict is True:
                return self._end_damage(target, resynced=False)
            self._advance(1)     # the declared end was wrong: scan from the next byte
        return self._scan_on(verdict_at, skip)

    def _scan_on(self, verdict_at, skip=None):
        """Move on byte by byte until ``verdict_at(offset)`` finds the next event (True,
        or _TAIL: an incomplete final event, which next_event() reports after this)."""
        while True:
            if skip is not None:
                skip()
            verdict = verdict_at(self.offset)
            if verdict is None:
                if not self._eof:
                    return NEED_DATA
                return self._end_damage_at_eof()
            if verdict is True or verdict is _TAIL:
                return self._end_damage(self.offset, resynced=True)
            self._advance(1)

    def _skip_to_candidate(self) -> None:
        """Move over the bytes where no header can start: a quick look at the type code
        and size (and the log_pos chain) before the full check of _plausible_at."""
        buf, i, last = self._buf, self._pos, len(self._buf) - HEADER_LEN
        minimum = HEADER_LEN + self.fde.checksum_len
        chain = self._chain
        last_log_pos = self._last_log_pos
        base = self.offset - i
        search = _KNOWN_TYPE_RE.search
        eof = self._eof
        end = len(buf)
        while i <= last:
            found = search(buf, i + 4, last + 5)     # the next byte that is a known type code
            if found is None:
                i = last + 1
                break
            i = found.start() - 4
            code = buf[i + 4]
            size = int.from_bytes(buf[i + 9:i + 13], "little")
            if (minimum <= size <= _MAX_SIZE_BY_TYPE.get(code, MAX_EVENT_SIZE) or (
                    code == 15 and _MIN_FDE_SIZE <= size <= _MAX_SIZE_BY_TYPE[15])) and not (
                    eof and i + size > len(buf) and not chain):
                if not chain:
                    break
                log_pos = int.from_bytes(buf[i + 13:i + 17], "little")
                if log_pos == 0 or log_pos == (base + i + size) & _U32 or (
                        last_log_pos is not None and log_pos == (last_log_pos + size) & _U32):
                    break
                j = i + size            # or the chain goes on after it (bytes were lost before)
                if j + HEADER_LEN > end:
                    if not eof or j == end:
                        break
                elif int.from_bytes(buf[j + 13:j + 17], "little") == (
                        log_pos + int.from_bytes(buf[j + 9:j + 13], "little")) & _U32:
                    break
            i += 1
        self._advance(i - self._pos)

    def _open_damage(self) -> tuple[int, BinlogError]:
        """Where the damaged range being ended starts, and its error."""
        if self._damage_start is None or self._damage_error is None:
            raise MalformedEventError("no damaged range is open", source=self.source,
                                      event_offset=self.offset)
        return self._damage_start, self._damage_error

    def _end_damage(self, end: int, *, resynced: bool) -> Damage:
        start, error = self._open_damage()
        one = not resynced or self._damage_log_pos == end & _U32
        lost_nothing = False
        i = self._pos + end - self.offset
        last = self._last_log_pos
        if resynced and self._chain and last is not None and len(self._buf) - i >= HEADER_LEN:
            nxt = parse_header(self._buf, i, end)
            lost_nothing = bool(nxt.log_pos) and nxt.log_pos == (last + nxt.event_size) & _U32
        declared = self._damage_size
        if resynced and self._damage_trusted and declared is not None and start + declared != end:
            # What failed (often the CRC) failed because the header's size was wrong.
            error.message += (f"; the header is damaged: it declares {declared} bytes, the next "
                              f"valid event starts {end - start} bytes on")
            error.field_offset = start + 9
        damage = Damage(self.source, start, end, error, resynced,
                        type_code=self._damage_type, one_event=one, no_event_lost=lost_nothing)
        self._advance(end - self.offset)
        self._damage_start = self._damage_error = self._damage_type = None
        return damage

    def _end_damage_at_eof(self) -> Damage:
        """The scan reached the end of the input with nothing plausible: damage to the end."""
        self._advance(self.buffered)
        start, error = self._open_damage()
        damage = Damage(self.source, start, self.offset, error,
                        True, to_end=True, type_code=self._damage_type, one_event=False)
        self._damage_start = self._damage_error = self._damage_type = None
        return damage

    def _discard_rest(self):
        """Encrypted from here on: nothing after this point can be read."""
        self._advance(self.buffered)
        if not self._eof:
            return NEED_DATA
        self._discard = False
        start, error = self._open_damage()
        damage = Damage(self.source, start, self.offset, error,
                        False, to_end=True, type_code=self._damage_type)
        self._damage_start = self._damage_error = self._damage_type = None
        return damage

    def _at_end(self):
        """Leftover bytes after close(), met while reading (skip mode after a resync)."""
        error = self._tail_error()
        if isinstance(error, IncompleteEventError) or self.on_error == "fail":
            # Leave them: the incomplete event is reported once, here.
            self._advance(self.buffered)
            raise error
        header = parse_header(self._buf, self._pos, self.offset) if self.buffered >= HEADER_LEN else None
        return self._start_damage(error, header, trust_size=False)

    def _header_ok(self, header: EventHeader) -> bool:
        if header.type_code not in KNOWN_EVENT_TYPES:
            return False
        minimum = (_MIN_FDE_SIZE if header.type_code == EventType.FORMAT_DESCRIPTION_EVENT
                   else HEADER_LEN + self.fde.checksum_len)
        return minimum <= header.event_size <= _MAX_SIZE_BY_TYPE.get(header.type_code, MAX_EVENT_SIZE)

    def _header_at(self, offset: int):
        """Is there a plausible header at ``offset``?  True / False / None (need data).
        The end of the input exactly there counts as yes."""
        i = self._pos + offset - self.offset
        avail = len(self._buf) - i
        if avail <= 0 and self._eof:
            return avail == 0
        if avail < HEADER_LEN:
            return False if self._eof else None
        header = self._header_view(i, offset)
        if header is None:
            return False if self._eof else None
        return self._header_ok(header)

    def _plausible_at(self, offset: int):
        """Does a real event start at ``offset``?  True / False / None (need data)."""
        i = self._pos + offset - self.offset
        avail = len(self._buf) - i
        if avail < HEADER_LEN:
            return None
        header = parse_header(self._buf, i, offset)
        if not self._header_ok(header):
            return False
        if avail < header.event_size:
            if not self._eof:
                return None
            # Past the end of the input: an incomplete final event if the chain vouches for it.
            return _TAIL if self._chain and header.log_pos and self._chained(header) else False
        if self._chain and not self._chained(header):
            follows = self._chain_goes_on(header, i)
            if not follows:
                return follows      # False, or None: need data
        raw = memoryview(self._buf)[i:i + header.event_size]
        if self.verify_checksums and (self.fde.checksum_len or not self.seen_fde):
            # Bound the CRC work of one resync (hostile input can make every byte a
            # candidate of a large declared size): past the budget, candidates must keep
            # the log_pos chain too before their CRC is computed.
            self._crc_spent += header.event_size
            if self._crc_spent > _CRC_BUDGET + 16 * (offset - (self._damage_start or 0)) \
                    and not self._chained(header):
                return False
            if _crc_ok(raw, header):
                if not self.seen_fde and header.type_code != EventType.FORMAT_DESCRIPTION_EVENT:
                    # The FORMAT_DESCRIPTION was lost: this file has checksums after all.
                    self.fde.checksum_alg = CHECKSUM_CRC32
                return True
            if self.seen_fde:
                return False
        # No checksum to go by: the events that follow must be plausible too.
        needed = 1 if self._chain else 2
        at = header.end
        for _ in range(needed):
            j = self._pos + at - self.offset
            left = len(self._buf) - j
            if left == 0 and self._eof:
                break
            if left < HEADER_LEN:
                return False if self._eof else None
            nxt = parse_header(self._buf, j, at)
            if not self._header_ok(nxt) or (self._chain and not _follows(header, nxt)):
                return False
            header, at = nxt, nxt.end
        if not self.seen_fde:
            self.fde.checksum_alg = CHECKSUM_OFF
        return True

    def _chain_goes_on(self, header: EventHeader, i: int):
        """Does the event after ``header`` (at buffer index ``i``) continue its log_pos
        chain?  True / False / None (need data); the end of the input counts as yes."""
        j = i + header.event_size
        left = len(self._buf) - j
        if left < HEADER_LEN:
            if self._eof:
                return left == 0
            return None
        nxt = parse_header(self._buf, j, header.end)
        return self._header_ok(nxt) and _follows(header, nxt)

    # --- decoding ----------------------------------------------------------
    def decode(self, raw: bytes | bytearray, header: EventHeader) -> Event:
        """Decode one framed event (raw includes header and checksum)."""
        try:
            if header.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                return self._decode_fde(raw, header)
            checksum_len = self.fde.checksum_len
            if checksum_len and self.verify_checksums:
                verify_crc(raw, header)
            if header.type_code == EventType.TABLE_MAP_EVENT:
                return self._table_map(raw, header, checksum_len)
            cur = Cursor(raw, self.fde.common_header_len, header.event_size - checksum_len, header.offset)
            decoder = EVENT_DECODERS.get(header.type_code)
            if decoder is None:
                return UnknownEvent(header, cur.rest())
            event = decoder(cur, self, header)
            if isinstance(event, TransactionPayloadEvent):
                self._pending = self._unpack_payload(event)
            elif isinstance(event, StartEncryptionEvent):
                self._start_decryption(event)
            return event
        except BinlogError as exc:
            exc.add_context(source=self.source, event_offset=header.offset,
                            event_type=header.type_name)
            raise

    def _table_map(self, raw: bytes | bytearray, header: EventHeader, checksum_len: int) -> Event:
        """A TABLE_MAP decoded once per distinct body: a server writes the same one
        before every transaction on a table (sql/log_event_server.cc
        Table_map_log_event), and decoding its columns and optional metadata was a
        third of the CPU of a binlog of single-row transactions.  The event is shared
        but for its header (decoded events are not changed afterwards)."""
        body = bytes(raw[self.fde.common_header_len:header.event_size - checksum_len])
        cached = self._table_maps.get(body)
        if cached is None:
            cur = Cursor(raw, self.fde.common_header_len, header.event_size - checksum_len, header.offset)
            cached = EVENT_DECODERS[header.type_code](cur, self, header)
            if len(self._table_maps) >= 1024:
                self._table_maps.clear()
            self._table_maps[body] = cached
            return cached
        return replace(cached, header=header)

    def _decode_fde(self, raw: bytes | bytearray, header: EventHeader) -> FormatDescriptionEvent:
        fde = parse_format_description(raw, header)
        if fde.checksum_alg == CHECKSUM_CRC32 and self.verify_checksums:
            verify_crc(raw, header)
        self.fde = fde
        self._table_maps.clear()        # decoded with the previous FDE's layout
        self.seen_fde = True
        return FormatDescriptionEvent(header, fde)

    def _unpack_payload(self, event: TransactionPayloadEvent) -> list:
        """Inner events of a payload: whole events without checksums, reported at the
        payload's own offset (they have no position of their own in the file)."""
        inner: list[Event] = []
        data, pos = event.events_data, 0
        saved_alg = self.fde.checksum_alg
        self.fde.checksum_alg = 0
        try:
            while pos < len(data):
                if len(data) - pos < HEADER_LEN:
                    raise MalformedEventError(f"payload ends inside an event header at byte {pos}")
                header = parse_header(data, pos, event.offset)
                if header.event_size < HEADER_LEN or pos + header.event_size > len(data):
                    raise MalformedEventError(f"payload event at byte {pos} has bad size {header.event_size}")
                if header.type_code in (EventType.TRANSACTION_PAYLOAD_EVENT,
                                        EventType.FORMAT_DESCRIPTION_EVENT):
                    raise MalformedEventError(f"a {header.type_name} inside a transaction payload "
                                              f"(byte {pos} of its data)")
                table_id = (int.from_bytes(data[pos + 19:pos + 25], "little")
                            if header.type_code in ROWS_EVENT_TYPES else None)
                if table_id is not None and self.skip_rows is not None and self.skip_rows(table_id):
                    inner.append(SkippedRowsEvent(header, table_id))
                else:
                    try:
                        inner.append(self.decode(data[pos:pos + header.event_size], header))
                    except BinlogError as exc:
                        # Offsets inside decompressed data are not file offsets.
                        exc.field_offset = event.offset
                        exc.message += (f" (inner {header.type_name} at byte {pos} of the "
                                        f"transaction payload's decompressed data)")
                        raise
                pos += header.event_size
        finally:
            self.fde.checksum_alg = saved_alg
        return inner


_U32 = 0xFFFFFFFF


def _follows(prev: EventHeader, nxt: EventHeader) -> bool:
    """``nxt`` continues the log_pos chain of ``prev`` (shifted or not)."""
    return nxt.log_pos in (0, (prev.log_pos + nxt.event_size) & _U32, nxt.end & _U32)


def _crc_ok(raw, header: EventHeader) -> bool:
    if header.event_size < HEADER_LEN + 4:
        return False
    return event_crc(raw) == int.from_bytes(raw[-4:], "little")


def verify_crc(raw: bytes | bytearray, header: EventHeader) -> None:
    stored = int.from_bytes(raw[-4:], "little")
    computed = event_crc(raw)
    if stored != computed:
        raise ChecksumMismatchError(
            f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
            stored=stored, computed=computed, event_offset=header.offset,
            field_offset=header.offset + header.event_size - 4)
