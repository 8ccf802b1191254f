"""Numbers the C sources say again because they cannot import Python's: each must be the
one its Python home holds.  The sources are parsed, so the check runs without a compiler."""
from __future__ import annotations

import re

import pytest
from support.paths import REPO

from binlog import constants
from binlog.constants import ColumnType
from binlog.output.routing import SAFE_INTEGER
from binlog.types.strings import LARGE_VALUE

SOURCES = {name: (REPO / "binlog" / name).read_text() for name in ("_rows_frame.h", "_speedups.h")}

#: (C file, macro) -> its Python home
TIED = {
    ("_rows_frame.h", "FRAME_MAX_EVENT"): constants.MAX_EVENT_SIZE,
    ("_rows_frame.h", "FRAME_HEADER_LEN"): constants.HEADER_LEN,
    ("_speedups.h", "LARGE_VALUE"): LARGE_VALUE,
    ("_speedups.h", "SAFE_INTEGER"): SAFE_INTEGER,
    ("_speedups.h", "TYPE_GEOMETRY"): int(ColumnType.GEOMETRY),
}


def macro(source: str, name: str) -> int:
    """The value of ``#define NAME expr``: integer literals, shifts, sums and casts."""
    found = re.search(rf"^#define {name}\s+(.+?)\s*(?:/\*.*)?$", SOURCES[source], re.M)
    assert found, f"{source} has no #define {name}"
    expr = re.sub(r"\((?:Py_ssize_t|int64_t|long long)\)", "", found.group(1))
    expr = re.sub(r"(?<=[0-9a-fA-F])(?:LL|L|U)+\b", "", expr)
    assert re.fullmatch(r"[0-9xa-fA-F ()<+\-*]+", expr), expr
    return int(eval(expr, {"__builtins__": {}}))        # digits and operators only (checked)


@pytest.mark.parametrize(("source", "name"), sorted(TIED))
def test_c_says_what_python_says(source, name):
    assert macro(source, name) == TIED[(source, name)]
