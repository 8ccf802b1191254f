"""GTID events of MariaDB and MySQL, and XA_PREPARE.

MariaDB (``sql/log_event.cc``):
- GTID (162): u64 seq_no, u32 domain_id, u8 flags2; u64 commit_id if FL_GROUP_COMMIT_ID
  (2); for FL_PREPARED_XA (64) / FL_COMPLETED_XA (128): u32 formatID, u8 gtrid_len,
  u8 bqual_len, XID data; then optional flags_extra and more, padded to 19 bytes.
- GTID_LIST (163): u32 count (low 28 bits) | flags (high 4), count x (u32 domain,
  u32 server_id, u64 seq_no).
- BINLOG_CHECKPOINT (161): u32 name length, file name.

MySQL (``libs/mysql/binlog/event/control_events.cpp``):
- GTID (33) / ANONYMOUS_GTID (34): u8 flags, 16-byte SID, i64 gno; then optional
  u8 lt_type (2), i64 last_committed, i64 sequence_number; 7-byte immediate commit ts
  (bit 55 set: 7-byte original ts follows); lenenc transaction length; u32 immediate
  server version (bit 31 set: u32 original version follows); 8.0.27+ commit group ticket.
- GTID_TAGGED (42, 8.4+): mysql::serialization message (varlen integers), fields
  0 flags, 1 sid (16 varlen bytes), 2 gno, 3 tag, 4.. ordering/timestamps/versions.
- PREVIOUS_GTIDS (35): u64 n_sids (bits 56-63 = format, 1 = tagged), per SID: 16-byte
  UUID, [tagged: varlen tag length + tag], u64 n_intervals, n x (i64 start, i64 end).
- XA_PREPARE (38): u8 one_phase, u32 formatID, u32 gtrid_len, u32 bqual_len, data.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..constants import EventType as E
from ..errors import MalformedEventError
from ..registry import register
from .base import Event

#: a MariaDB GTID body without its optional parts: seq_no u64, domain_id u32, flags2 u8,
#: 6 bytes of padding (sql/log_event.h Gtid_log_event::GTID_HEADER_LEN)
GTID_HEADER_LEN = 19
FL_STANDALONE = 1        # no BEGIN/COMMIT around the statement (DDL): a group of its own
FL_GROUP_COMMIT_ID = 2
FL_PREPARED_XA = 64
FL_COMPLETED_XA = 128


@dataclass
class MariaGtidEvent(Event):
    domain_id: int
    seq_no: int
    flags2: int
    commit_id: int | None = None
    xid: tuple | None = None      # (format_id, gtrid, bqual) for XA groups

    @property
    def gtid(self) -> str:
        return f"{self.domain_id}-{self.header.server_id}-{self.seq_no}"

    @property
    def standalone(self) -> bool:
        return bool(self.flags2 & FL_STANDALONE)


@dataclass
class GtidListEvent(Event):
    gtids: list[tuple[int, int, int]]   # (domain, server_id, seq_no)
    flags: int = 0
    trailing: bytes = b""


@dataclass
class BinlogCheckpointEvent(Event):
    log_file: str


@dataclass
class MysqlGtidEvent(Event):
    flags: int
    sid: str
    gno: int
    tag: str | None = None
    last_committed: int | None = None
    sequence_number: int | None = None
    immediate_commit_ts: int | None = None
    original_commit_ts: int | None = None
    transaction_length: int | None = None
    immediate_server_version: int | None = None
    original_server_version: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def anonymous(self) -> bool:
        return self.header.type_code == E.ANONYMOUS_GTID_LOG_EVENT

    @property
    def gtid(self) -> str | None:
        if self.anonymous:
            return None
        return f"{self.sid}:{self.tag}:{self.gno}" if self.tag else f"{self.sid}:{self.gno}"


@dataclass
class PreviousGtidsEvent(Event):
    gtid_set: str


@dataclass
class XaPrepareEvent(Event):
    one_phase: bool
    format_id: int
    gtrid: bytes
    bqual: bytes


@register(E.GTID_EVENT)
def decode_maria_gtid(cur, ctx, header):
    seq_no = cur.u64("seq_no")
    domain_id = cur.u32("domain_id")
    flags2 = cur.u8("flags2")
    event = MariaGtidEvent(header, domain_id, seq_no, flags2)
    if flags2 & FL_GROUP_COMMIT_ID:
        event.commit_id = cur.u64("commit_id")
    elif flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA):
        format_id = cur.u32("xid formatID")
        gtrid_len, bqual_len = cur.u8("gtrid_len"), cur.u8("bqual_len")
        event.xid = (format_id, cur.bytes(gtrid_len, "gtrid"), cur.bytes(bqual_len, "bqual"))
    cur.rest()  # flags_extra, extra engines, padding: none of them changes a row
    return event


@register(E.GTID_LIST_EVENT)
def decode_gtid_list(cur, ctx, header):
    word = cur.u32("count")
    count, flags = word & 0x0FFFFFFF, word >> 28
    cur.need(count * 16, "GTID list")
    gtids = [(cur.u32(), cur.u32(), cur.u64()) for _ in range(count)]
    # MariaDB 10.5 writes 2 more bytes after an empty list (seen in mariadb-bin.000001
    # of the mysql-test corpus); they carry no GTID, keep them for inspection.
    event = GtidListEvent(header, gtids, flags)
    event.trailing = cur.rest()
    return event


@register(E.BINLOG_CHECKPOINT_EVENT)
def decode_binlog_checkpoint(cur, ctx, header):
    name = cur.bytes(cur.u32("name length"), "file name")
    cur.expect_end("BINLOG_CHECKPOINT")
    return BinlogCheckpointEvent(header, name.decode("utf-8", "replace"))


def _uuid_str(raw: bytes) -> str:
    import uuid  # (on first use: it imports platform; a MariaDB binlog has no MySQL GTID)

    return str(uuid.UUID(bytes=raw))


@register(E.GTID_LOG_EVENT, E.ANONYMOUS_GTID_LOG_EVENT)
def decode_mysql_gtid(cur, ctx, header):
    flags = cur.u8("flags")
    sid = _uuid_str(cur.bytes(16, "sid"))
    gno = cur.sint(8, "gno")
    event = MysqlGtidEvent(header, flags, sid, gno)
    if cur.at_end() or cur.data[cur.pos] != 2:   # 5.6 / <= 5.7.4: no logical clock
        cur.rest()
        return event
    cur.u8("lt_type")
    event.last_committed = cur.sint(8, "last_committed")
    event.sequence_number = cur.sint(8, "sequence_number")
    if cur.remaining >= 7:
        ts = cur.uint(7, "immediate_commit_timestamp")
        if ts & (1 << 55):
            ts &= ~(1 << 55)
            event.original_commit_ts = cur.uint(7, "original_commit_timestamp")
        else:
            event.original_commit_ts = ts
        event.immediate_commit_ts = ts
    if not cur.at_end():
        event.transaction_length = cur.count("transaction_length")
    if cur.remaining >= 4:
        version = cur.u32("immediate_server_version")
        if version & (1 << 31):
            version &= ~(1 << 31)
            event.original_server_version = cur.u32("original_server_version")
        else:
            event.original_server_version = version
        event.immediate_server_version = version
    if cur.remaining >= 8:
        event.extra["commit_group_ticket"] = cur.u64("commit_group_ticket")
    cur.rest()
    return event


def read_varlen(cur, what: str = "varlen integer") -> int:
    """Unsigned integer of the MySQL serialization library
    (``libs/mysql/serialization/variable_length_integers.h``): the count of trailing
    one-bits of the first byte gives the extra bytes; 0xFF means 8 bytes follow."""
    first = cur.u8(what)
    if first == 0xFF:
        return cur.u64(what)
    extra = 0
    while first >> extra & 1:
        extra += 1
    cur.pos -= 1
    raw = cur.uint(extra + 1, what)
    return raw >> (extra + 1)


def read_varlen_signed(cur, what: str = "varlen integer") -> int:
    value = read_varlen(cur, what)
    return -(value >> 1) - 1 if value & 1 else value >> 1


_TAGGED_FIELDS = {4: "last_committed", 5: "sequence_number", 6: "immediate_commit_ts",
                  7: "original_commit_ts", 8: "transaction_length",
                  9: "immediate_server_version", 10: "original_server_version"}
_SIGNED_FIELDS = {2, 4, 5}


@register(E.GTID_TAGGED_LOG_EVENT)
def decode_tagged_gtid(cur, ctx, header):
    version = cur.u8("serialization version")
    start = cur.pos - 1
    payload_size = read_varlen(cur, "payload size")
    last_non_ignorable = read_varlen(cur, "last non-ignorable field id")
    end = start + payload_size
    if end > cur.end or end < cur.pos:
        raise MalformedEventError(f"tagged GTID payload size {payload_size} does not fit the event",
                                  field_offset=cur.base + start + 1)
    event = MysqlGtidEvent(header, 0, "", 0)
    event.extra["serialization_version"] = version
    while cur.pos < end:
        fid = read_varlen(cur, "field id")
        if fid == 0:
            event.flags = read_varlen(cur, "gtid flags")
        elif fid == 1:
            event.sid = _uuid_str(bytes(read_varlen(cur, "sid byte") & 0xFF for _ in range(16)))
        elif fid == 2:
            event.gno = read_varlen_signed(cur, "gno")
        elif fid == 3:
            event.tag = cur.bytes(read_varlen(cur, "tag length"), "tag").decode("ascii", "replace")
        elif fid in _TAGGED_FIELDS:
            value = read_varlen_signed(cur) if fid in _SIGNED_FIELDS else read_varlen(cur)
            setattr(event, _TAGGED_FIELDS[fid], value)
        elif fid == 11:
            event.extra["commit_group_ticket"] = read_varlen(cur, "commit group ticket")
        elif fid <= last_non_ignorable:
            raise MalformedEventError(f"unknown non-ignorable field {fid} in tagged GTID event")
        else:
            break  # an ignorable field of a newer server: its length is unknown
    cur.rest()
    return event


@register(E.PREVIOUS_GTIDS_LOG_EVENT)
def decode_previous_gtids(cur, ctx, header):
    word = cur.u64("n_sids")
    tagged = (word >> 56) == 1
    n_sids = (word >> 8) & ((1 << 48) - 1) if tagged else word & ((1 << 56) - 1)
    cur.need(n_sids * 24, "SID list")  # a lower bound: rejects absurd counts before looping
    parts = []
    for _ in range(n_sids):
        sid = _uuid_str(cur.bytes(16, "sid"))
        if tagged:
            tag = cur.bytes(read_varlen(cur, "tag length"), "tag").decode("ascii", "replace")
            if tag:
                sid = f"{sid}:{tag}"
        n = cur.u64("n_intervals")
        cur.need(n * 16, "intervals")
        ranges = []
        for _ in range(n):
            lo, hi = cur.sint(8), cur.sint(8)
            ranges.append(str(lo) if hi == lo + 1 else f"{lo}-{hi - 1}")
        parts.append(":".join([sid] + ranges))
    cur.expect_end("PREVIOUS_GTIDS")
    return PreviousGtidsEvent(header, ",".join(parts))


@register(E.XA_PREPARE_LOG_EVENT)
def decode_xa_prepare(cur, ctx, header):
    one_phase = bool(cur.u8("one_phase"))
    format_id = cur.u32("formatID")
    gtrid_len, bqual_len = cur.u32("gtrid_length"), cur.u32("bqual_length")
    if gtrid_len > 64 or bqual_len > 64:
        raise MalformedEventError(f"XID lengths {gtrid_len}/{bqual_len} exceed 64")
    gtrid, bqual = cur.bytes(gtrid_len, "gtrid"), cur.bytes(bqual_len, "bqual")
    cur.expect_end("XA_PREPARE")
    return XaPrepareEvent(header, one_phase, format_id, gtrid, bqual)
