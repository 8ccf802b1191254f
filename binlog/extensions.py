"""The optional compiled modules (binlog/_speedups*.c, binlog/_scan.c): each loads when it
was built, and BINLOG_PURE=1 forces the pure-Python reference paths instead."""
from __future__ import annotations

import importlib
import os
from typing import Any


def load_extension(name: str) -> Any:
    """``binlog.<name>``, or None (not built, or BINLOG_PURE=1)."""
    if os.environ.get("BINLOG_PURE"):
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None
