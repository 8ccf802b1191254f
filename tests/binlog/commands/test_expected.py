"""verify-rows' expected state in bounded memory (binlog/commands/_expected.py): whatever
the limit, spilled to temporary files and split again or not, every (table, key) comes
out once, with its last change, as a plain dict of the same puts gives it."""
from __future__ import annotations

import random

import pytest

from binlog.commands import _expected
from binlog.commands._expected import Expected, ExpectedRows

TABLES = [("d", "t"), ("d", "u"), ("other", "t"), ("d\udcff", "bad\udcfe")]   # undecodable names too


def workload(seed: int, n: int):
    rnd = random.Random(seed)
    for i in range(n):
        table = rnd.choice(TABLES)
        width = 1 if table[1] != "u" else 2
        key = tuple(rnd.randrange(300).to_bytes(2, "big") + bytes([w]) for w in range(width))
        checksum = None if rnd.random() < 0.2 else rnd.randrange(1 << 32)
        yield table, Expected(key, tuple(f"'{k.hex()}\udcfd'" for k in key), checksum,
                              f"mariadb-bin.000001 @ {i} op", known=rnd.random() < 0.9)


def as_dict(groups) -> dict:
    out = {}
    for group in groups:
        for table, rows in group.items():
            for e in rows:
                assert (table, e.key) not in out, "a row came out twice"
                out[table, e.key] = (e.key_lits, e.checksum, e.origin, e.known)
    return out


@pytest.mark.parametrize("limit", [1, 7, 100, 10_000])
@pytest.mark.parametrize("batch", [1, 50])
def test_every_row_once_with_its_last_change(limit, batch):
    model: dict = {}
    rows = ExpectedRows(limit)
    pending: dict = {}
    for table, e in workload(limit * 31 + batch, 3000):
        model[table, e.key] = (e.key_lits, e.checksum, e.origin, e.known)
        pending.setdefault(table, {})[e.key] = e
        if sum(map(len, pending.values())) >= batch:
            for t, held in pending.items():
                rows.update(t, held)
            pending = {}
    for t, held in pending.items():
        rows.update(t, held)
    try:
        assert as_dict(rows.groups()) == model
        assert (rows.spilled > 0) == (limit < len(model))
    finally:
        rows.close()


def test_a_large_bucket_is_split_and_memory_stays_bounded(monkeypatch):
    """With 8 buckets and a limit of 50 rows, 2,000 keys (2,667 records) are split
    again: more groups than buckets, none far over the limit (a split is by hash: about
    the limit, not exactly)."""
    monkeypatch.setattr(_expected, "FANOUT", 8)
    rows = ExpectedRows(50)
    for i in range(2000):
        key = (i.to_bytes(4, "big"),)
        rows.put(("d", "t"), Expected(key, (str(i),), i, f"@ {i}"))
    for i in range(0, 2000, 3):         # a later change of every third key
        key = (i.to_bytes(4, "big"),)
        rows.put(("d", "t"), Expected(key, (str(i),), None, f"@ {i} again"))
    sizes = []
    seen = {}
    for group in rows.groups():
        sizes.append(sum(map(len, group.values())))
        for e in group.get(("d", "t"), []):
            seen[e.key] = (e.checksum, e.origin)
    rows.close()
    assert len(seen) == 2000 and max(sizes) <= 2 * 50 and len(sizes) > 8 * 4
    assert seen[(3).to_bytes(4, "big"),] == (None, "@ 3 again")
    assert seen[(4).to_bytes(4, "big"),] == (4, "@ 4")


def test_nothing_is_spilled_within_the_limit():
    rows = ExpectedRows(10)
    rows.update(("d", "t"), {(b"1",): Expected((b"1",), ("1",), 5, "x")})
    groups = list(rows.groups())
    assert rows.spilled == 0 and len(groups) == 1 and groups[0][("d", "t")][0].checksum == 5


def test_a_full_temporary_directory_is_named(monkeypatch, tmp_path):
    """A spill that cannot be written says where (the CLI prints "cannot write" + the
    name, exit 1), not "the output"."""
    full = tmp_path / "full"
    monkeypatch.setattr(_expected.tempfile, "tempdir", str(full))

    def no_space(*args, **kwargs):      # what a full TMPDIR gives
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_expected.tempfile, "TemporaryFile", no_space)
    rows = ExpectedRows(1)
    rows.put(("d", "t"), Expected((b"1",), ("1",), 1, "x"))
    with pytest.raises(OSError) as caught:
        rows.put(("d", "t"), Expected((b"2",), ("2",), 2, "x"))
    assert caught.value.filename == f"verify-rows' spill files in {full} (TMPDIR; or a larger --memory-rows)"
    assert caught.value.strerror == "No space left on device"
