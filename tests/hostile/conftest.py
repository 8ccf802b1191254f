"""Shared helpers of the hostile-input tests: the binlog files to torture and a decode
that records everything a user would see."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.paths import CORPUS

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "mariadb-10.11"
if str(REPO / "fuzz") not in sys.path:
    sys.path.insert(0, str(REPO / "fuzz"))


def binlog_files() -> list[Path]:
    files = sorted(SAMPLES.glob("*.binlog")) + sorted((SAMPLES / "events_misc").glob("mariadb-bin.0*"))
    files += sorted(p for p in CORPUS.glob("*") if p.name != "README.md")
    return files


@pytest.fixture
def scratch(tmp_path):
    return tmp_path
