"""docs/compatibility.md is what a fresh run of every peer on the temporal corpus gives
(tests/peers/compat.py, ``make compat``): a peer that reads a cell differently, a new
peer version or a changed rewrite shows up here as a difference from the committed page."""
from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest
from support.mariadb_server import require_mariadbd

pytestmark = [pytest.mark.server, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "compatibility.md"


def test_the_committed_page_is_a_fresh_run(peers, tmp_path):
    require_mariadbd()
    from compat_runners import gomysql

    for version in gomysql.VERSIONS:        # built (or skipped, or failed) as a peer
        peers(f"go-mysql-{version}")
    fresh = tmp_path / "compatibility.md"
    done = subprocess.run([sys.executable, str(REPO / "tests" / "peers" / "compat.py"), "--out", str(fresh)],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    diff = "".join(difflib.unified_diff(PAGE.read_text().splitlines(True), fresh.read_text().splitlines(True),
                                        "docs/compatibility.md (committed)", "a fresh run"))
    assert not diff, (f"docs/compatibility.md differs from a fresh run (make compat writes it):\n{diff[:6000]}\n"
                      f"the runs that failed:\n{done.stderr[-4000:]}")
