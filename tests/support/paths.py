"""Where the project's own test data lives: everything is in the repository, so a clone
from anywhere runs its tests (``samples/mysql-test`` holds the binlogs of MySQL's and
MariaDB's test suites; see its README for their provenance)."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "samples" / "mysql-test"


def write_index(directory: Path, names, base: str = "mariadb-bin") -> Path:
    """``directory/<base>.index`` listing ``names`` in order, one ``./name`` a line, as
    the server writes its index (and ``binlog relay``: binlog/sources/relay.py)."""
    index = Path(directory) / f"{base}.index"
    index.write_text("".join(f"./{name}\n" for name in names))
    return index
