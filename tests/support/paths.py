"""Where the shared, read-only test data lives: ``../shared`` beside the checkout (as in
CI), or wherever ``BINLOG_SHARED`` points."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    env = os.environ.get("BINLOG_SHARED")
    if env:
        return Path(env)
    for parent in REPO.parents:
        candidate = parent / "shared"
        if (candidate / "corpus" / "mysql-test").is_dir():
            return candidate
    return REPO.parent / "shared"


CORPUS = shared_dir() / "corpus" / "mysql-test"
