"""The column kinds and their widths have one C copy (binlog/_column_kinds.h, included by
both extensions) and one Python copy (binlog/column_kinds.py, the pure path): the two
must agree.  The header is parsed here, so the check runs without a compiler too; when
the extension is built, what it was compiled with is compared as well."""
from __future__ import annotations

import re

import pytest
from support.paths import REPO

from binlog import column_kinds as ck
from binlog.extensions import load_extension

HEADER = (REPO / "binlog" / "_column_kinds.h").read_text()


def header_enum() -> list[str]:
    body = re.search(r"enum \{(.*?)\};", HEADER, re.S).group(1)
    names = [n.strip().split("=")[0].strip() for n in body.split(",") if n.strip()]
    assert re.search(r"K_PY\s*=\s*0", body)
    return names


def header_table(name: str) -> list[int]:
    body = re.search(rf"static const int {name}\[\w+\] = \{{(.*?)\}};", HEADER, re.S).group(1)
    return [int(v) for v in re.sub(r"/\*.*?\*/", "", body).split(",") if v.strip()]


def test_kind_names_and_numbers():
    assert header_enum() == list(ck.KIND_NAMES) + ["K_COUNT"]
    for number, name in enumerate(ck.KIND_NAMES):
        assert getattr(ck, name) == number


def test_fixed_widths():
    body = re.search(r"KIND_FIXED_BYTES\[K_COUNT\] = \{(.*?)\};", HEADER, re.S).group(1)
    found = {getattr(ck, k): int(v) for k, v in re.findall(r"\[(K_\w+)\]\s*=\s*(\d+)", body)}
    assert found == ck.KIND_FIXED_BYTES


@pytest.mark.parametrize("name", ["SEC_PART_BYTES", "DATETIME_HIRES_BYTES", "TIME_HIRES_BYTES",
                                  "FSP_BYTES", "FSP_MULT", "DIG2BYTES"])
def test_size_tables(name):
    assert header_table(name) == list(getattr(ck, name))


def test_the_built_extension_agrees(compiled):
    speedups = load_extension("_speedups")
    count, fixed, temporal, decimal = speedups.kind_widths()
    assert count == len(ck.KIND_NAMES)
    assert fixed == [ck.KIND_FIXED_BYTES.get(k, 0) for k in range(count)]
    assert temporal == [[ck.kind_temporal_bytes(k, n) for n in range(-1, 8)] for k in range(count)]
    assert decimal == [[ck.decimal_bin_size(p, s) for s in range(32)] for p in range(67)]


def test_decimal_size_is_the_decoders_layout():
    """The decoder's group layout (types/decimal.py) takes as many bytes as the size."""
    from binlog.types.decimal import decimal_layout

    for p in range(1, 66):
        for s in range(min(p, 30) + 1):
            assert decimal_layout(p, s)[0] == ck.decimal_bin_size(p, s)
