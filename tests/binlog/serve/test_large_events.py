"""A 1 GiB event through ``binlog serve`` into ``binlog fetch``: copied byte for byte, and
held in memory at most once on each side (fetch: its packets are put together where
they arrive, not joined again; serve: sent as it is read, a window at a time).

Peak RSS (VmHWM of serve, ru_maxrss of fetch) is measured against the event's size.
"""
from __future__ import annotations

import filecmp
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from support.serve_process import PASSWORD, Serve

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"
EVENT = 1 << 30


def big_binlog(path: Path, size: int) -> None:
    """The sample's FORMAT_DESCRIPTION, then one QUERY-typed event of ``size`` bytes
    (its body is not read by serve or fetch, only its CRC32), written in pieces."""
    sample = SAMPLE.read_bytes()
    fde = sample[4:4 + int.from_bytes(sample[4 + 9:4 + 13], "little")]
    head = (1700000000).to_bytes(4, "little") + bytes([2]) + (1).to_bytes(4, "little") \
        + size.to_bytes(4, "little") + (4 + len(fde) + size).to_bytes(4, "little") + b"\0\0"
    piece = bytes(range(256)) * 4096                  # 1 MiB
    with open(path, "wb") as fh:
        fh.write(b"\xfebin" + fde + head)
        crc, left = zlib.crc32(head), size - len(head) - 4
        while left:
            chunk = piece[:min(left, len(piece))]
            fh.write(chunk)
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
        fh.write(crc.to_bytes(4, "little"))


def test_a_1_gib_event_is_held_once_by_serve_and_by_fetch(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    big_binlog(served / "mariadb-bin.000001", EVENT)
    (served / "mariadb-bin.index").write_text("mariadb-bin.000001\n")
    serve = Serve(served, tmp_path)
    try:
        before = serve.rss_kb()
        proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from",
                                 f"mysql://repl:{PASSWORD}@127.0.0.1:{serve.port}/", "--to", tmp_path / "relay",
                                 "--server-id", "77", "--retries", "0"],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        serve_peak = serve.rss_kb()
    finally:
        serve.stop()
    assert proc.returncode == 0, err
    assert filecmp.cmp(served / "mariadb-bin.000001", tmp_path / "relay" / "mariadb-bin.000001", shallow=False)
    fetch_peak = usage.ru_maxrss * 1024
    assert fetch_peak < 1.2 * EVENT, f"fetch peaked at {fetch_peak / EVENT:.2f}x the event"
    assert (serve_peak - before) * 1024 < 0.2 * EVENT, f"serve grew by {(serve_peak - before) / 1024:.0f} MiB"
