"""A copy of the project to install from, so that a build (an editable one compiles the C
extensions in place) never touches the checkout under test."""
from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_project(dest: Path) -> Path:
    """The files an install reads (setup, pyproject, README, the three packages) under ``dest/src``."""
    src = dest / "src"
    src.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for package in ("binlog", "schema_store", "spark_ingest"):
        shutil.copytree(REPO / package, src / package,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__", "build"))
    return src
