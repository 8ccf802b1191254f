"""TRANSACTION_PAYLOAD_EVENT (40, MySQL 8.0.20+, binlog_transaction_compression).

Body (``libs/mysql/binlog/event/control_events.cpp`` Transaction_payload_event::decode):
header fields as (packed type, packed length, value) until type 0 (end mark):
1 = payload size, 2 = compression type (0 zstd, 255 none), 3 = uncompressed size,
each value a packed integer; then the payload: a compressed run of whole events
(common headers, no checksums) which the stream yields in place of this event.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compression import zstd_exact
from ..constants import EventType as E
from ..cursor import Cursor
from ..errors import BinlogError, MalformedEventError
from ..registry import register
from .base import Event

END_MARK, PAYLOAD_SIZE, COMPRESSION_TYPE, UNCOMPRESSED_SIZE = 0, 1, 2, 3
ZSTD, NONE = 0, 255


@dataclass
class TransactionPayloadEvent(Event):
    compression: int
    payload_size: int
    uncompressed_size: int | None
    events_data: bytes | bytearray      # the inner events, uncompressed


@register(E.TRANSACTION_PAYLOAD_EVENT)
def decode_transaction_payload(cur, ctx, header):
    fields = {}
    while True:
        kind = cur.count("payload header field type")
        if kind == END_MARK:
            break
        value = cur.sub(cur.count("payload header field length"), f"payload header field {kind}")
        fields[kind] = value.count(f"payload header field {kind}")
        value.expect_end(f"payload header field {kind}")
    size = fields.get(PAYLOAD_SIZE, cur.remaining)
    compression = fields.get(COMPRESSION_TYPE, ZSTD)
    uncompressed = fields.get(UNCOMPRESSED_SIZE)
    start = cur.offset
    raw = cur.bytes(size, "payload")
    cur.expect_end("TRANSACTION_PAYLOAD")
    if compression == ZSTD:
        try:
            data = zstd_exact(raw, uncompressed, "transaction payload")
        except BinlogError as exc:
            exc.add_context(field_offset=start)
            raise
    elif compression == NONE:
        data = raw
    else:
        raise MalformedEventError(f"unknown payload compression type {compression}", field_offset=start)
    return TransactionPayloadEvent(header, compression, size, uncompressed, data)


def inner_cursor(event: TransactionPayloadEvent) -> Cursor:
    return Cursor(event.events_data, 0, None, event.offset)
