"""Sans-IO event stream: bytes in, events out.

``feed(data)`` adds bytes; ``next_event()`` returns the next whole event or ``NEED_DATA``;
``close()`` says the input ended, and raises ``IncompleteEventError`` if it ended inside
an event.  The stream frames each event by its header's size, verifies the CRC32 footer
when the FORMAT_DESCRIPTION says the file has checksums, decodes the body with the
decoder registered for its type code (unknown codes become ``UnknownEvent``) and adds
file/offset/event type to any error, keeping the cause.  It never touches files.
"""
from __future__ import annotations

import zlib

from . import events as _events  # noqa: F401  (fills EVENT_DECODERS)
from .constants import (BINLOG_MAGIC, CHECKSUM_CRC32, HEADER_LEN, LOG_EVENT_BINLOG_IN_USE_F,
                        EventType)
from .cursor import Cursor
from .errors import (BadMagicError, BinlogError, ChecksumMismatchError, IncompleteEventError,
                     MalformedEventError)
from .events import FormatDescriptionEvent, TransactionPayloadEvent, UnknownEvent
from .events.base import SkippedRowsEvent
from .events.rows import ROWS_EVENT_TYPES
from .header import EventHeader, FormatDescription, parse_format_description, parse_header
from .registry import EVENT_DECODERS


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData()

# An event may be as large as max_allowed_packet (1 GiB) plus its header.
MAX_EVENT_SIZE = (1 << 30) + 4096


class EventStream:
    def __init__(self, source: str = "<bytes>", *, verify_checksums: bool = True,
                 expect_magic: bool = True, offset: int = 0, skip_rows=None):
        """``skip_rows(table_id) -> bool``: rows events of tables it says yes to are
        stepped over by their length (no checksum, no copy, no decode) and come out as
        ``SkippedRowsEvent`` (the table filter, decided at TABLE_MAP time)."""
        self.source = source
        self.skip_rows = skip_rows
        self.verify_checksums = verify_checksums
        self.fde = FormatDescription()
        self.seen_fde = False
        self._buf = bytearray()
        self._pos = 0                 # read position in _buf
        self.offset = offset          # absolute offset of _buf[_pos]
        self._need_magic = expect_magic
        self._pending: list = []      # events unpacked from a TRANSACTION_PAYLOAD

    # --- input -------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self._pos and self._pos >= len(self._buf) // 2:
            del self._buf[:self._pos]
            self._pos = 0
        self._buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def jump(self, offset: int) -> None:
        """Forget buffered bytes and continue at ``offset`` (the caller seeks its input)."""
        self._buf.clear()
        self._pos = 0
        self.offset = offset
        self._need_magic = False

    def close(self) -> None:
        """The input has ended: fail if it ended inside an event."""
        if self.buffered:
            what = "file header" if self._need_magic else "event"
            raise IncompleteEventError(
                f"input ends inside an {what}: {self.buffered} bytes of it are present",
                source=self.source, event_offset=self.offset,
                hint="the file is truncated or still being written")

    # --- output ------------------------------------------------------------
    def next_event(self):
        if self._pending:
            return self._pending.pop(0)
        if self._need_magic:
            if self.buffered < 4:
                return NEED_DATA
            magic = bytes(self._buf[self._pos:self._pos + 4])
            if magic != BINLOG_MAGIC:
                raise BadMagicError(f"not a binlog file: starts with {magic.hex(' ')}, "
                                    f"expected {BINLOG_MAGIC.hex(' ')}",
                                    source=self.source, event_offset=self.offset)
            self._advance(4)
            self._need_magic = False
        if self.buffered < HEADER_LEN:
            return NEED_DATA
        header = parse_header(self._buf, self._pos, self.offset)
        self._check_size(header)
        if self.buffered < header.event_size:
            return NEED_DATA
        if self.skip_rows is not None and header.type_code in ROWS_EVENT_TYPES:
            table_id = self._peek_table_id(header)
            if self.skip_rows(table_id):
                self._advance(header.event_size)
                return SkippedRowsEvent(header, table_id)
        raw = bytes(self._buf[self._pos:self._pos + header.event_size])
        self._advance(header.event_size)
        return self.decode(raw, header)

    def _peek_table_id(self, header: EventHeader) -> int:
        """table_id of a rows event in the buffer: 6 bytes LE after the common header,
        4 when the FDE gives rows a 6-byte post-header (pre-5.1.4)."""
        start = self._pos + self.fde.common_header_len
        width = 4 if self.fde.post_header(header.type_code, 8) == 6 else 6
        return int.from_bytes(self._buf[start:start + width], "little")

    def _advance(self, n: int) -> None:
        self._pos += n
        self.offset += n

    def _check_size(self, header: EventHeader) -> None:
        minimum = HEADER_LEN + (self.fde.checksum_len if header.type_code != EventType.FORMAT_DESCRIPTION_EVENT else 0)
        if not minimum <= header.event_size <= MAX_EVENT_SIZE:
            raise MalformedEventError(f"event size {header.event_size} is impossible "
                                      f"(type code {header.type_code})",
                                      source=self.source, event_offset=header.offset,
                                      event_type=header.type_name)

    # --- decoding ----------------------------------------------------------
    def decode(self, raw: bytes, header: EventHeader):
        """Decode one framed event (raw includes header and checksum)."""
        try:
            if header.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                return self._decode_fde(raw, header)
            checksum_len = self.fde.checksum_len
            if checksum_len and self.verify_checksums:
                verify_crc(raw, header)
            cur = Cursor(raw, self.fde.common_header_len, header.event_size - checksum_len, header.offset)
            decoder = EVENT_DECODERS.get(header.type_code)
            if decoder is None:
                return UnknownEvent(header, cur.rest())
            event = decoder(cur, self, header)
            if isinstance(event, TransactionPayloadEvent):
                self._pending = self._unpack_payload(event)
            return event
        except BinlogError as exc:
            raise exc.add_context(source=self.source, event_offset=header.offset,
                                  event_type=header.type_name)

    def _decode_fde(self, raw: bytes, header: EventHeader) -> FormatDescriptionEvent:
        fde = parse_format_description(raw, header)
        if fde.checksum_alg == CHECKSUM_CRC32 and self.verify_checksums:
            # The FDE's CRC is computed with LOG_EVENT_BINLOG_IN_USE_F cleared.
            flags = header.flags & ~LOG_EVENT_BINLOG_IN_USE_F
            patched = raw[:17] + flags.to_bytes(2, "little") + raw[19:]
            verify_crc(patched, header)
        self.fde = fde
        self.seen_fde = True
        return FormatDescriptionEvent(header, fde)

    def _unpack_payload(self, event: TransactionPayloadEvent) -> list:
        """Inner events of a payload: whole events without checksums, reported at the
        payload's own offset (they have no position of their own in the file)."""
        inner = []
        data, pos = event.events_data, 0
        saved_len = self.fde.checksum_alg
        self.fde.checksum_alg = 0
        try:
            while pos < len(data):
                if len(data) - pos < HEADER_LEN:
                    raise MalformedEventError(f"payload ends inside an event header at byte {pos}")
                header = parse_header(data, pos, event.offset)
                if header.event_size < HEADER_LEN or pos + header.event_size > len(data):
                    raise MalformedEventError(f"payload event at byte {pos} has bad size {header.event_size}")
                if (self.skip_rows is not None and header.type_code in ROWS_EVENT_TYPES
                        and self.skip_rows(int.from_bytes(data[pos + 19:pos + 25], "little"))):
                    inner.append(SkippedRowsEvent(header, int.from_bytes(data[pos + 19:pos + 25], "little")))
                else:
                    inner.append(self.decode(data[pos:pos + header.event_size], header))
                pos += header.event_size
        finally:
            self.fde.checksum_alg = saved_len
        return inner


def verify_crc(raw: bytes, header: EventHeader) -> None:
    stored = int.from_bytes(raw[-4:], "little")
    computed = zlib.crc32(memoryview(raw)[:-4])
    if stored != computed:
        raise ChecksumMismatchError(
            f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
            stored=stored, computed=computed, event_offset=header.offset,
            field_offset=header.offset + header.event_size - 4)
