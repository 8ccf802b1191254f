"""The kinds of tests are markers (tests/conftest.py MARKERS): each folder kind marks
every test of its folder, and ``server`` every test that starts a real server, so
``pytest -m "not ..."`` leaves out exactly those."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def collected(*args: str) -> list[str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                       capture_output=True, text=True, cwd=TESTS.parent, timeout=300)
    assert r.returncode in (0, 5), r.stdout + r.stderr          # 5: nothing selected
    return [line for line in r.stdout.splitlines() if "::" in line]


@pytest.mark.parametrize("kind", ["spark", "live", "fuzz"])
def test_a_folder_kind_marks_its_whole_folder(kind):
    folder = f"tests/{kind}"
    everything = collected(folder)
    assert everything
    assert collected("-m", kind, folder) == everything
    assert collected("-m", f"not {kind}", folder) == []


def test_tests_starting_a_server_are_marked_server():
    # tests/replay/test_sql_replay.py uses the server fixtures throughout
    assert collected("-m", "not server", "tests/replay/test_sql_replay.py") == []
    assert collected("-m", "server", "tests/unit/test_cursor.py") == []
