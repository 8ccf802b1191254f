"""The compiled walk (binlog/_speedups*.c) gives exactly what the pure-Python decoders give,
and keeps nothing alive (fuzzing found it pinning plans through uncollectable cycles)."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest

from binlog import rows
from binlog.errors import BinlogError
from binlog.reader import BinlogReader
from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11").glob("*.binlog"))
pytestmark = pytest.mark.usefixtures("compiled")


def decode(path):
    try:
        return [(c.pos, c.op, c.before, c.after) for c in
                BinlogReader([path], schema=SchemaResolver(SchemaStore())).changes()]
    except BinlogError as exc:
        return str(exc)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_compiled_and_pure_decoders_agree(path, monkeypatch):
    compiled = decode(path)
    monkeypatch.setattr(rows, "_speedups", None)
    assert decode(path) == compiled


def test_no_plan_outlives_its_reader():
    def live_plans():
        gc.collect()
        return sum(isinstance(o, rows.DecodePlan) for o in gc.get_objects())

    for path in SAMPLES:
        decode(path)
    before = live_plans()
    for _ in range(5):
        for path in SAMPLES:
            decode(path)
    assert live_plans() <= before
