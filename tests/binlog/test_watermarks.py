"""Watermarks on binlog files (``--watermark-interval``): one after every transaction with
interval 0, at the ends the server's SHOW BINLOG EVENTS gives (samples/*.events.txt),
after every record of the transactions before it.  The live side: tests/binlog/test_watermarks_live.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"
CASES = ["checksum_none", "legacy_temporal", "compressed", "row_image_minimal"]


def dump(*args):
    return subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def transaction_ends(case: str) -> list[tuple[int, str]]:
    """(end offset, GTID) of each transaction, from the server's SHOW BINLOG EVENTS."""
    out, current, explicit = [], None, False
    lines = (SAMPLES / f"{case}.events.txt").read_text().splitlines()[1:]
    for line in lines:
        fields = line.split("\t")
        if len(fields) < 6:
            continue            # a continuation of a multi-line Info
        kind, end, info = fields[2], int(fields[4]), fields[5]
        if kind == "Gtid":
            current, explicit = info.split()[-1], info.startswith("BEGIN")
        elif current and (kind == "Xid" or kind.startswith("Query") and (
                not explicit or info.strip().upper() in ("COMMIT", "ROLLBACK"))):
            out.append((end, current))
            current = None
    return out


@pytest.mark.parametrize("case", CASES)
def test_one_after_each_transaction(case):
    done = dump("--watermark-interval", "0", SAMPLES / f"{case}.binlog")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    marks = [r for r in lines if r["op"] == "watermark"]
    assert [(m["pos"], m["gtid"]) for m in marks] == transaction_ends(case)
    assert all(set(m) == {"op", "ts", "file", "pos", "gtid", "idle"} and not m["idle"] for m in marks)
    # every record before a watermark is of a transaction that ends at or before it
    last = 0
    for r in lines:
        if r["op"] == "watermark":
            last = r["pos"]
        else:
            assert r["pos"] >= last, (r, last)
    assert [m["ts"] for m in marks] == sorted(m["ts"] for m in marks)


def test_off_by_default_and_debezium_form():
    path = SAMPLES / "checksum_none.binlog"
    assert '"watermark"' not in dump(path).stdout
    done = dump("--format", "debezium", "--watermark-interval", "0", path)
    assert done.returncode == 0, done.stderr
    beats = [json.loads(line) for line in done.stdout.splitlines() if '"topic"' in line]
    ends = transaction_ends("checksum_none")
    assert [(b["sourceOffset"]["pos"], b["sourceOffset"]["gtids"]) for b in beats] == ends
    assert beats[0]["key"] == {"serverName": "binlog"}


def test_bad_interval():
    done = dump("--watermark-interval", "-1", SAMPLES / "checksum_none.binlog")
    assert done.returncode == 2 and "--watermark-interval" in done.stderr
