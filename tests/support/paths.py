"""Where the shared, read-only test data lives: ``../shared`` beside the checkout (as in
CI), beside the repository a local clone was made from (``git clone /work/main /tmp/x``),
or wherever ``BINLOG_SHARED`` points."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _origin() -> Path | None:
    """The directory this checkout was cloned from, when that is a local path."""
    try:
        url = subprocess.run(["git", "-C", str(REPO), "config", "--get", "remote.origin.url"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):      # no git: only the checkout's parents
        return None
    path = Path(url[len("file://"):] if url.startswith("file://") else url)
    return path.resolve() if url and path.is_dir() else None


def shared_dir() -> Path:
    env = os.environ.get("BINLOG_SHARED")
    if env:
        return Path(env)
    origin = _origin()
    for base in (REPO, origin):
        for parent in (base.parents if base else ()):
            candidate = parent / "shared"
            if (candidate / "corpus" / "mysql-test").is_dir():
                return candidate
    return REPO.parent / "shared"


CORPUS = shared_dir() / "corpus" / "mysql-test"
