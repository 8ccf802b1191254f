"""Fixtures of the tests of binlog's own modules."""
from __future__ import annotations

import pytest

from binlog import scan


@pytest.fixture(params=["compiled", "pure"])
def scan_mode(request, monkeypatch):
    """Run once with binlog._scan's compiled walks and once with the pure-Python reference."""
    if request.param == "compiled":
        if scan.compiled is None:
            pytest.skip("binlog._scan is not built")
    else:
        monkeypatch.setattr(scan, "compiled", None)
    return request.param
