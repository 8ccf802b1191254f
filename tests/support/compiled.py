"""The tests of the compiled extensions (binlog/_speedups.c with its sections
binlog/_speedups_*.c, binlog/_scan.c): skipped when they are not built (no compiler,
BINLOG_PURE=1), unless ``BINLOG_REQUIRE_COMPILED=1`` (make test sets it): then a missing
build fails them, as a missing server does under ``BINLOG_REQUIRE_SERVER=1``.  A build
older than any of its C sources or the headers they include counts as missing: comparing
it with the new pure path would report the rebuild, not a bug."""
from __future__ import annotations

import os
import re
from pathlib import Path

from binlog import rows, scan


def missing() -> list[str]:
    """What is not built, or built from an older source than the one beside it."""
    out = []
    for name, module in (("binlog._speedups", rows._speedups), ("binlog._scan", scan.compiled)):
        if module is None:
            out.append(f"{name} is not built")
            continue
        built = Path(module.__file__)
        newer = [source.name for source in sources(built) if source.stat().st_mtime > built.stat().st_mtime]
        if newer:
            out.append(f"{name} is older than {', '.join(newer)}")
    return out


def sources(built: Path) -> list[Path]:
    """What ``built`` is compiled from, as setup.py lists it: NAME.c and its sections
    NAME_*.c beside it, and every header they include ("..."), followed."""
    stem = built.name.split(".")[0]
    found = [path for path in [built.parent / f"{stem}.c", *sorted(built.parent.glob(f"{stem}_*.c"))]
             if path.exists()]
    todo = list(found)
    while todo:
        for name in re.findall(r'^#include "([^"]+)"', todo.pop().read_text(), re.M):
            header = built.parent / name
            if header.exists() and header not in found:
                found.append(header)
                todo.append(header)
    return found


def require_compiled() -> None:
    """Skip the calling test when the compiled extensions are missing (``missing``), or
    fail it under ``BINLOG_REQUIRE_COMPILED=1``."""
    import pytest

    gone = missing()
    if not gone:
        return
    message = ("; ".join(gone) + " (BINLOG_PURE=1, or no compiler; build them with "
               "python setup.py build_ext --inplace)")
    if os.environ.get("BINLOG_REQUIRE_COMPILED") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
