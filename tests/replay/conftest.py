"""Fixtures of the replay tests (helpers: replay_helpers.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def two_servers(mariadb_factory):
    """(source, target): two fresh mariadbd on loopback; the source logs full row metadata."""
    source = mariadb_factory({"binlog_row_metadata": "FULL"})
    target = mariadb_factory({})
    return source, target
