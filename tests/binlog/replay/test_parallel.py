"""replay.parallel's checkpoint rows: the ends lists round-trip, a malformed one is a
ServerError, and the resume point is the highest mark with every listed end above it."""
from __future__ import annotations

import pytest

from binlog.errors import ServerError
from binlog.replay.parallel import decode_ends, encode_ends, resume_point


def key(position):
    name, pos = position
    return (name.rsplit(".", 1)[0], int(name.rsplit(".", 1)[1]) if "." in name else -1, pos)


def row(name, file, pos, committed=None, txs=1, rows=2):
    return {"name": name, "file": file, "pos": pos, "gtid": None, "gtid_pos": None,
            "resume_file": file, "resume_pos": pos, "transactions": txs, "row_changes": rows,
            "committed": committed}


def test_ends_round_trip_grouped_by_file():
    ends = [("b.000001", 900), ("b.000002", 4), ("b.000001", 120)]
    text = encode_ends(ends)
    assert text == "b.000001:120,900;b.000002:4"
    assert decode_ends(text, "x") == set(ends)
    assert decode_ends(None, "x") == set() == decode_ends("", "x")


@pytest.mark.parametrize("bad", ["b.000001", "b.000001:1,x", ":5", "b.000001:" + "9" * 25])
def test_a_malformed_list_is_a_server_error_naming_the_row(bad):
    with pytest.raises(ServerError, match="checkpoint row 'default/3'"):
        decode_ends(bad, "default/3")


def test_the_highest_mark_wins_and_ends_above_it_are_skipped():
    rows = [row("default", "b.000001", 500, "b.000001:700"),
            row("default/1", "b.000001", 800, "b.000001:900,1000"),
            row("default/2", "b.000001", 600, "b.000001:650,700,1200;b.000002:4")]
    found = resume_point(rows, key)
    assert found.mark.end == ("b.000001", 800)
    assert found.skip == {("b.000001", 900), ("b.000001", 1000), ("b.000001", 1200), ("b.000002", 4)}
    assert (found.transactions, found.row_changes) == (3, 6)


def test_rows_before_any_mark_resume_from_the_start():
    found = resume_point([row("default/1", "", 0, "b.000001:300")], key)
    assert found.mark.end is None and found.skip == {("b.000001", 300)}
    assert resume_point([], key) is None
