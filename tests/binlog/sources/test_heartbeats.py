"""Heartbeats as the server sends them (sql_repl.cc send_heartbeat_event: 'when' 0, log_pos
the dump's position, the file name as body, a CRC32 when the file has checksums) read
into Heartbeats, and the watermarks made of them.  With a server: tests/binlog/test_watermarks_live.py."""
from __future__ import annotations

import struct
import zlib

import pytest

from binlog.errors import MalformedEventError
from binlog.sources.base import Heartbeat
from binlog.sources.server import DumpTracker, ServerOptions, ServerSource
from binlog.watermarks import Watermarks

HEARTBEAT_LOG_EVENT = 27
HEARTBEAT_LOG_EVENT_V2 = 41


def heartbeat(name: bytes, log_pos: int, *, checksum: bool = True, code: int = HEARTBEAT_LOG_EVENT) -> bytes:
    size = 19 + len(name) + (4 if checksum else 0)
    data = struct.pack("<IBIIIH", 0, code, 1, size, log_pos, 0) + name
    return data + struct.pack("<I", zlib.crc32(data)) if checksum else data


def source(checksum: bool = True) -> ServerSource:
    src = ServerSource(ServerOptions("mysql://root@127.0.0.1:28001/", 28001))
    src.client.tracker = DumpTracker("mariadb-bin.000007", 1188, checksum)
    return src


def test_a_heartbeat_names_the_file_and_the_dumps_position():
    src = source()
    event = src.client._tracker().take(heartbeat(b"mariadb-bin.000007", 1188))
    beat = src.heartbeat_of(event)
    assert beat == Heartbeat("mariadb-bin.000007", 1188, None)     # not connected: no clock
    src = source(checksum=False)
    event = src.client._tracker().take(heartbeat(b"mariadb-bin.000007", 1188, checksum=False))
    assert src.heartbeat_of(event).pos == 1188


def test_damaged_and_unread_heartbeats():
    src = source()
    data = bytearray(heartbeat(b"mariadb-bin.000007", 1188))
    data[-6] ^= 1
    with pytest.raises(MalformedEventError, match="CRC32"):
        src.heartbeat_of(src.client._tracker().take(bytes(data)))
    # beyond 4 GiB (log_pos 0, the position in a sub-header) and MySQL's v2: no position
    assert src.heartbeat_of(src.client._tracker().take(heartbeat(b"mariadb-bin.000007", 0))).pos is None
    v2 = src.client._tracker().take(heartbeat(b"\x01\x08mariadb-", 0, code=HEARTBEAT_LOG_EVENT_V2))
    assert src.heartbeat_of(v2).pos is None


def test_a_watermark_only_where_the_reader_stands():
    marks = Watermarks(1.0, start_gtid="0-1-3")
    assert marks.at_heartbeat("mariadb-bin.000007", Heartbeat("mariadb-bin.000007", 1100, 5.0), 1188) is None
    assert marks.at_heartbeat("mariadb-bin.000007", Heartbeat("mariadb-bin.000006", 1188, 5.0), 1188) is None
    assert marks.at_heartbeat("mariadb-bin.000007", Heartbeat("mariadb-bin.000007", None, 5.0), 1188) is None
    mark = marks.at_heartbeat("mariadb-bin.000007", Heartbeat("mariadb-bin.000007", 1188, 1700000000.9), 1188)
    assert (mark.file, mark.pos, mark.ts, mark.gtid, mark.idle) == \
        ("mariadb-bin.000007", 1188, 1700000000, "0-1-3", True)
    # the position in 32 bits, as the heartbeat's header holds it
    far = marks.at_heartbeat("b.000001", Heartbeat("b.000001", (5 << 32) + 7 & 0xFFFFFFFF, None), (5 << 32) + 7)
    assert far is not None and far.pos == (5 << 32) + 7 and far.ts == 1700000000   # never back


def test_gtid_list_fills_domains_not_seen():
    from binlog.events.gtid import GtidListEvent
    from binlog.header import EventHeader

    marks = Watermarks(0.0, start_gtid="1-2-70")
    header = EventHeader(0, 163, 1, 0, 0, 0, 4)
    marks.taken(GtidListEvent(header, [(0, 1, 40), (1, 2, 60)]))
    assert marks.gtid == "0-1-40,1-2-70"


def test_apply_lag_on_the_progress_line():
    import io

    from binlog.sources.progress import Progress

    out = io.StringIO()
    progress = Progress(out, interval=0, force=True)
    progress.note("applied lag 3 s")
    progress.event("mariadb-bin.000007", 1188, 100, 0)
    assert out.getvalue().rstrip("\x1b[K").endswith("lag 0 s  applied lag 3 s")


@pytest.mark.parametrize("answer", ["NaN", "inf", "-5", "1e20", "soon", None])
def test_a_clock_answer_that_is_no_time_is_refused(answer):
    from binlog.errors import ServerError
    from binlog.sources.server import server_epoch

    with pytest.raises(ServerError, match="@@timestamp"):
        server_epoch(answer, "db1:3306")
    assert server_epoch("1795698756.123456", "db1:3306") == 1795698756.123456
