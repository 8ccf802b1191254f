"""The kinds of tests are markers, never folders (docs/testing.md): ``server`` and ``spark``
come from the fixtures a test uses (tests/conftest.py FIXTURE_KINDS), the other kinds from
the module's ``pytestmark``; so ``pytest -m "not ..."`` leaves out exactly those."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def collected(*args: str) -> list[str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                       capture_output=True, text=True, cwd=TESTS.parent, timeout=300)
    assert r.returncode in (0, 5), r.stdout + r.stderr          # 5: nothing selected
    return [line for line in r.stdout.splitlines() if "::" in line]


def declaring(kind: str) -> list[str]:
    """The test modules whose ``pytestmark`` names the kind."""
    mark = re.compile(rf"^pytestmark = .*pytest\.mark\.{kind}\b|^ .*pytest\.mark\.{kind}\]", re.M)
    return sorted(str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py") if mark.search(p.read_text()))


@pytest.mark.parametrize("kind", ["spark", "live", "fuzz"])
def test_a_module_kind_marks_its_whole_module(kind):
    modules = declaring(kind)
    assert modules
    everything = collected(*modules)
    assert everything
    assert collected("-m", kind, *modules) == everything
    assert collected("-m", f"not {kind}", *modules) == []


def test_tests_starting_a_server_are_marked_server():
    # tests/binlog/output/test_sql_replay.py uses the server fixtures throughout
    assert collected("-m", "not server", "tests/binlog/output/test_sql_replay.py") == []
    assert collected("-m", "server", "tests/binlog/test_cursor.py") == []
