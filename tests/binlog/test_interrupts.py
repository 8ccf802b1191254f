"""SIGTERM (and SIGINT) while `binlog dump --format json` writes large records: the
output ends with a whole line, never half a JSON object, and the exit code is 130."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from hostile.build import TABLE_MAP, WRITE_ROWS_V1, XID, binlog, table_map, write_rows
from support.paths import REPO

from binlog.exitcodes import Exit

ROW_BYTES = 1 << 20


@pytest.fixture(scope="module")
def big_rows(tmp_path_factory):
    """40 rows of one LONGBLOB column, 1 MiB each: 2 MiB JSON lines (hex)."""
    events = [(TABLE_MAP, table_map(5, "h", "big", bytes([252]), b"\x04"))]
    for i in range(40):
        value = bytes([0x80 | i]) * ROW_BYTES          # charset unknown: {"bytes_hex": ...}
        events.append((WRITE_ROWS_V1, write_rows(5, 1, b"\x01", b"\x00" + len(value).to_bytes(4, "little") + value)))
    events.append((XID, (1).to_bytes(8, "little")))
    path = tmp_path_factory.mktemp("sig") / "big.binlog"
    path.write_bytes(binlog(events))
    return path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_never_leaves_half_a_record(big_rows, signum):
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "dump", "--format", "json", str(big_rows)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    got = bytearray()
    while len(got) < 5 * ROW_BYTES:          # inside the third line or so: writes are blocked
        chunk = proc.stdout.read1(65536)
        assert chunk, proc.stderr.read().decode()
        got += chunk
    proc.send_signal(signum)
    got += proc.stdout.read()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert proc.returncode == Exit.INTERRUPTED, (proc.returncode, err)
    assert "Traceback" not in err
    assert got.endswith(b"\n")
    lines = got.split(b"\n")[:-1]
    assert 2 <= len(lines) < 40
    for line in lines:
        record = json.loads(line)
        assert len(record["after"]["@1"]["bytes_hex"]) == 2 * ROW_BYTES
