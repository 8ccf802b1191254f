"""Fixtures of the fault tests: the replay helpers (CLI as a subprocess, DSNs) and a
pair of fresh servers."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))


@pytest.fixture
def two_servers(mariadb_factory):
    """(source, target): two fresh mariadbd on loopback; the source logs full row metadata."""
    return mariadb_factory({"binlog_row_metadata": "FULL"}), mariadb_factory({})
