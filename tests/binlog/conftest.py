"""Fixtures of the tests of binlog's own modules."""
from __future__ import annotations

import pytest
from support.compiled import require_compiled

from binlog import scan


@pytest.fixture(params=["compiled", "pure"])
def scan_mode(request, monkeypatch):
    """Run once with binlog._scan's compiled walks and once with the pure-Python reference."""
    if request.param == "compiled":
        require_compiled()
    else:
        monkeypatch.setattr(scan, "compiled", None)
    return request.param
