"""The client's protocol parsers against hostile server bytes (fuzz/protocol.py): random
streams and mutations of a valid session (greeting, OK, the result set and OKs of the
queries before the dump, the events of a real binlog, EOF) end in a BinlogError or a
clean end, never another exception, within the session's deadlines."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import fake_primary as fp

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fuzz"))

from protocol import run_session, valid_session  # noqa: E402

pytestmark = pytest.mark.fuzz

SAMPLE = REPO / "samples" / "mariadb-10.11" / "seed_tt_test2.binlog"


VALID = valid_session(SAMPLE)


def test_the_valid_session_reads_to_its_end():
    """The seed is a real session: the client reads every event (so mutations of it
    reach the dump)."""
    assert run_session(VALID) == len(fp.binlog_events(SAMPLE))


@st.composite
def mutated(draw):
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        pos = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[pos] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[pos:pos + draw(st.integers(1, 16))]
        if not data:
            break
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_sessions_end_in_typed_errors(data):
    started = time.monotonic()
    run_session(data)
    assert time.monotonic() - started < 5


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_random_bytes_end_in_typed_errors(data):
    run_session(data)
