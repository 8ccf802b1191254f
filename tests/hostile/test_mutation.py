"""Hypothesis mutation test (CI, bounded): small real binlogs with bytes flipped,
overwritten, inserted, deleted, duplicated or cut, read the way ``binlog dump`` reads
them (fail and skip modes, checksums fixed up or not, JSON and text output, DDL
tracking, --infer-precision): only BinlogError may come out, and quickly.

The long-running counterpart is the atheris harness (``make fuzz``, fuzz/); both run the
same target (fuzz/target.py).  Bounds: MAX_EXAMPLES examples, each under
PER_INPUT_SECONDS; the whole test takes well under a minute.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fuzz"))

import make_seeds  # noqa: E402
import target  # noqa: E402

pytestmark = pytest.mark.fuzz

MAX_EXAMPLES = 1500
PER_INPUT_SECONDS = 10

_SOURCES = ["samples/mariadb-10.11/types_full.binlog", "samples/mariadb-10.11/compressed.binlog",
            "samples/mariadb-10.11/compressed_columns.binlog",
            "samples/mariadb-10.11/legacy_temporal.binlog",
            "samples/mariadb-10.11/checksum_none.binlog"]
_CORPUS = ["json.binlog.000001", "transaction_compression.000001", "mysql_type_bit.000001",
           "binlog_transaction_previous_GTID_no_tag.000001", "ver_trunk_row_v2.001",
           "mariadb-bin.000001", "write-partial-row.binlog", "update-partial-row.binlog"]


def _seeds() -> list[bytes]:
    from support.paths import CORPUS

    paths = [REPO / p for p in _SOURCES] + [CORPUS / p for p in _CORPUS]
    seeds = []
    for path in paths:
        found = make_seeds.seeds_of(path)
        seeds.extend(found[:: max(1, len(found) // 12)])
    return [s[1:] for s in seeds]          # without the option byte: hypothesis picks it


SEEDS = _seeds()
_TMP = Path(tempfile.mkdtemp(prefix="binlog-mutation-"))

_byte = st.integers(0, 255)
_mutation = st.one_of(
    st.tuples(st.just("xor"), st.integers(0, 1 << 16), st.integers(1, 255)),
    st.tuples(st.just("set"), st.integers(0, 1 << 16), _byte),
    st.tuples(st.just("insert"), st.integers(0, 1 << 16), st.binary(min_size=1, max_size=24)),
    st.tuples(st.just("delete"), st.integers(0, 1 << 16), st.integers(1, 64)),
    st.tuples(st.just("dup"), st.integers(0, 1 << 16), st.integers(1, 256)),
    st.tuples(st.just("cut"), st.integers(0, 1 << 16), st.just(0)),
    # values that matter to a parser: lengths and counts at their limits
    st.tuples(st.just("int"), st.integers(0, 1 << 16),
              st.sampled_from([0, 1, 0x7F, 0x80, 0xFB, 0xFC, 0xFE, 0xFF, 0xFFFF, 0xFFFFFF,
                               0xFFFFFFFF, 1 << 30])),
)


@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(SEEDS), options=_byte,
       mutations=st.lists(_mutation, min_size=1, max_size=6))
def test_mutated_binlogs_raise_only_typed_errors(seed, options, mutations):
    target.lower_infer_bound()
    data = bytes([options]) + target.mutate(seed, mutations)
    started = time.monotonic()
    target.run(data, _TMP / "mutated.binlog")      # anything but a BinlogError fails here
    assert time.monotonic() - started < PER_INPUT_SECONDS
