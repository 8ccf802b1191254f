"""Watermark records: how far the output of a stream is complete.

A ``Watermark`` says: every change the server had committed up to ``file``:``pos`` was
given out before this record.  The reader makes one

- at the end of a transaction (its XID, COMMIT, or a DDL's own event group), at most
  every ``interval`` seconds of our monotonic clock (0: after every transaction), and
- at each heartbeat of a live server (``sources.base.Heartbeat``): the server sends one
  when it had nothing newer for its heartbeat period (sql_repl.cc wait_new_events: its
  timed wait ran out with the dump at the end of the binlog), so nothing was committed
  between the last event read and that moment.

Never inside a transaction.  ``ts`` is the server's clock at that point, epoch seconds:
at a transaction's end the timestamp of the event ending it (the server writes the
time its statement started, whole seconds), at a heartbeat the source's estimate of
the server's clock (``ReplicationClient.server_clock``: the heartbeat itself carries
0, sql_repl.cc send_heartbeat_event), rounded down.  ``ts`` never goes back from one
watermark to the next.  ``gtid`` is where a reader resumes to continue after the
watermark: for MariaDB the GTID list of the last event group of every domain seen
(``--start-gtid`` reads it: the groups after it, per domain), for MySQL the last GTID.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from .events import GtidListEvent, MariaGtidEvent, MysqlGtidEvent
from .gtids import format_gtid_list, is_mysql_set, parse_gtid_list
from .sources.base import Heartbeat


@dataclass(slots=True)
class Watermark:
    """Every change committed up to ``file``:``pos`` came before this record (see the
    module).  ``idle``: made at a heartbeat (the server had nothing newer), else at the
    end of a transaction."""
    file: str
    pos: int
    ts: int
    gtid: str | None
    idle: bool = False


class Watermarks:
    """The watermarks of one reader: ``interval`` seconds between two at transaction
    ends, ``start_gtid`` the GTID list the reader starts after (its domains' positions
    until the input names newer ones)."""

    def __init__(self, interval: float, start_gtid: str | None = None):
        self.interval = interval
        self.due = 0.0              # monotonic time the next one at a transaction's end is due
        self.ts = 0                 # the last watermark's ts
        self.domains: dict[int, tuple[int, int]] = {}
        self.last_gtid: str | None = None       # MySQL: the last GTID read
        if start_gtid and not is_mysql_set(start_gtid):
            self.domains = parse_gtid_list(start_gtid, what="--start-gtid")

    @property
    def gtid(self) -> str | None:
        if self.domains:
            return format_gtid_list(self.domains)
        return self.last_gtid

    def taken(self, event) -> None:
        """A GTID or GTID_LIST event was given out: where each domain stands."""
        if isinstance(event, MariaGtidEvent):
            self.domains[event.domain_id] = (event.header.server_id, event.seq_no)
        elif isinstance(event, MysqlGtidEvent):
            self.last_gtid = event.gtid
        elif isinstance(event, GtidListEvent):
            # the GTIDs before this binlog: for the domains not seen since the start
            for domain, server_id, seq_no in event.gtids:
                self.domains.setdefault(domain, (server_id, seq_no))

    def at_commit(self, name: str, header) -> Watermark | None:
        """The event ``header`` ended a transaction: a watermark after it, when due."""
        now = time.monotonic()
        if now < self.due:
            return None
        self.due = now + self.interval
        self.ts = max(self.ts, header.timestamp)
        return Watermark(name, header.end, self.ts, self.gtid)

    def at_heartbeat(self, name: str, beat: Heartbeat, offset: int) -> Watermark | None:
        """A heartbeat after the event ending at ``offset`` of binlog ``name``: a watermark
        there when the server names that very place (else it is elsewhere: no claim)."""
        if beat.pos is None or beat.file != name or beat.pos != offset & 0xFFFFFFFF:
            return None
        if beat.clock is not None:
            self.ts = max(self.ts, math.floor(beat.clock))
        self.due = time.monotonic() + self.interval
        return Watermark(name, offset, self.ts, self.gtid, idle=True)
