"""Replay the inputs kept in tests/hostile/regressions/ (found by fuzzing or review):
each must end in a BinlogError or a clean stop, quickly."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import target  # fuzz/target.py (tests/hostile/conftest.py puts fuzz/ on the path)

REGRESSIONS = sorted((Path(__file__).parent / "regressions").glob("*.bin"))
# Bugs reported to the owner of the code, not fixed yet (see regressions/README.md).
OPEN: set[str] = set()


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.name)
def test_regression_input(path, tmp_path):
    if path.name in OPEN:
        pytest.xfail("open bug, reported to the lead: see tests/hostile/regressions/README.md")
    target.lower_infer_bound()
    started = time.monotonic()
    with _no_known_bugs():
        target.run(path.read_bytes(), tmp_path / "input.binlog")
    assert time.monotonic() - started < 15


class _no_known_bugs:
    """Replay without the harness's known-bug filter: a regression must really pass."""

    def __enter__(self):
        self.saved, target.KNOWN_BUGS = target.KNOWN_BUGS, ()

    def __exit__(self, *exc):
        target.KNOWN_BUGS = self.saved
