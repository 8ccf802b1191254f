"""The dump's runs (binlog/serve/dump.py: a window of the file framed by _scan.frame_packets
and sent at once; events larger than the window streamed in packets as they are read)
send the very bytes that sending each event read whole, framed by protocol.packets.frame,
sends, for every kind of client
(capabilities, ANNOTATE_ROWS asked or not, a GTID start position), and do it in few calls."""
from __future__ import annotations

import shutil
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.paths import REPO

from binlog import scan
from binlog.protocol.packets import frame
from binlog.serve.dump import Dump
from binlog.serve.session import Limits, SessionInfo
from binlog.sources.served import ServedLogs

SAMPLES = REPO / "samples" / "mariadb-10.11"


class Recorder:
    """What a dump needs of its session, keeping the bytes it would put on the wire."""

    def __init__(self, logs: ServedLogs):
        self.logs, self.limits, self.info = logs, Limits(), SessionInfo(1, "test")
        self.seq = 0
        self.wire = bytearray()

    def state(self):
        return SimpleNamespace(server_id=9)

    def send(self, payload: bytes) -> None:
        data, self.seq = frame(payload, self.seq)
        self.wire += data

    def send_event(self, event: bytes) -> None:
        self.send(b"\x00" + event)

    def send_packets(self, packets: bytes, seq: int) -> None:
        self.wire += packets
        self.seq = seq

    def _fail(self, code: int, message: str) -> None:
        self.wire += f"FAIL {code} {message}".encode()


def dump_bytes(directory: Path, *, runs: bool, capability: int, annotate: bool, want) -> bytes:
    logs = ServedLogs(directory)
    session = Recorder(logs)
    dump = Dump(session, logs.names()[0], 4, aware=True, rotate_crc=True, capability=capability,
                annotate=annotate, want=want, blocking=False, heartbeat=0)
    if not runs:
        # the reference: every event read whole and framed by protocol.packets.frame
        def whole(size: int) -> None:
            session.send_event(logs.read(dump.name, dump.position, size))
            dump.position += size
        dump._send_run = lambda end: False      # type: ignore[method-assign]
        dump._stream = whole                    # type: ignore[method-assign]
    dump.run()
    return bytes(session.wire)


def large_binlog(path: Path, sizes: list[int]) -> None:
    """A sample's FORMAT_DESCRIPTION and GTID_LIST, then QUERY-typed events of these sizes."""
    sample = (SAMPLES / "types_full.binlog").read_bytes()
    pos, out = 4, bytearray(sample[:4])
    for _ in range(2):
        size = int.from_bytes(sample[pos + 9:pos + 13], "little")
        out += sample[pos:pos + size]
        pos += size
    for size in sizes:
        head = (0).to_bytes(4, "little") + b"\x02" + (1).to_bytes(4, "little") + size.to_bytes(4, "little") \
            + (len(out) + size).to_bytes(4, "little") + b"\0\0"
        event = head + bytes(range(251)) * ((size - 23) // 251) + b"z" * ((size - 23) % 251)
        out += event + zlib.crc32(event).to_bytes(4, "little")
    path.write_bytes(out)


@pytest.fixture(params=["types_full.binlog", "compressed.binlog", "temporal_cells.binlog", "large"])
def served(request, tmp_path) -> Path:
    directory = tmp_path / "served"
    directory.mkdir()
    target = directory / "mariadb-bin.000001"
    if request.param == "large":
        # larger than the window, than a packet (two of them), and exactly a packet's payload
        large_binlog(target, [3 << 20, 200, (0xFFFFFF * 2) + 5000, 0xFFFFFF - 1, 4000])
    else:
        shutil.copyfile(SAMPLES / request.param, target)
    return directory


@pytest.mark.parametrize("capability,annotate,want", [(4, True, None), (4, False, None), (2, False, None),
                                                      (0, True, None), (3, False, None), (4, True, {0: 3})])
def test_runs_send_what_one_event_at_a_time_sends(served, capability, annotate, want):
    kind = {"capability": capability, "annotate": annotate, "want": want}
    assert dump_bytes(served, runs=True, **kind) == dump_bytes(served, runs=False, **kind)


def test_a_plain_client_gets_the_file_in_a_few_framer_calls(tmp_path, monkeypatch):
    """Every event of the sample that a MariaDB 10 client gets as it is goes out through
    the compiled framer, a window's events per call, not one Python step per event."""
    directory = tmp_path / "served"
    directory.mkdir()
    shutil.copyfile(SAMPLES / "types_full.binlog", directory / "mariadb-bin.000001")
    calls = []
    original = scan.frame_packets

    def spy(*args):
        got = original(*args)
        calls.append(0 if got is None else got[3])
        return got
    monkeypatch.setattr(scan, "frame_packets", spy)
    dump_bytes(directory, runs=True, capability=4, annotate=True, want=None)
    events = sum(1 for _ in ServedLogs(directory).events("mariadb-bin.000001", 4, (directory / "mariadb-bin.000001").stat().st_size))
    assert sum(calls) == events - 1         # all but the FORMAT_DESCRIPTION the dump sends first
    assert len(calls) <= 3
