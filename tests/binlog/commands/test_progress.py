"""The progress line of dump, stats, apply and verify-rows: on stderr when it is a
terminal (a real pseudo-terminal here), never with --quiet, never mixed into output
that goes to the same terminal, erased at the end, and the items unchanged."""
from __future__ import annotations

import os
import pty
from argparse import Namespace
from pathlib import Path

import pytest

from binlog.cli import main as cli_main
from binlog.commands._progress import with_progress
from binlog.reader import BinlogReader, RowChange

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11" / "events_misc"


def _run(args, **kw) -> tuple[list, bytes]:
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    with os.fdopen(slave, "w") as terminal:
        reader = BinlogReader([SAMPLE])
        items = list(with_progress(reader, reader.items(), args, stream=terminal, interval=0.0, **kw))
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return items, shown


def _plain(items) -> list:
    return [(i.file, i.pos, i.after) if isinstance(i, RowChange) else (i.file, i.event.header.offset)
            for i in items]


def test_a_terminal_sees_the_line_and_the_items_are_unchanged():
    reader = BinlogReader([SAMPLE])
    expected = _plain(reader.items())
    items, shown = _run(Namespace(quiet=False))
    assert _plain(items) == expected
    total = sum(p.stat().st_size for p in SAMPLE.glob("mariadb-bin.0*"))
    assert f"of {total / 1e6:.1f} MB".encode() in shown
    assert b"MB/s" in shown
    assert shown.endswith(b"\r\x1b[K")          # erased at the end


@pytest.mark.parametrize("args, kw", [(Namespace(quiet=True), {}),
                                      (Namespace(quiet=False), {"output_is_terminal": True}),
                                      (Namespace(quiet=False, from_dsn="mysql://u@h/"), {})])
def test_quiet_output_on_the_terminal_and_live_sources_show_nothing(args, kw):
    items, shown = _run(args, **kw)
    assert items and shown == b""


def test_not_a_terminal_shows_nothing(capfd):
    assert cli_main(["stats", str(SAMPLE)]) == 0
    assert "MB/s" not in capfd.readouterr().err
    assert cli_main(["dump", "--quiet", str(SAMPLE)]) == 0
    assert "MB/s" not in capfd.readouterr().err
