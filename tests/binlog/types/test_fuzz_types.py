"""Any bytes given to any decoder raise only BinlogError subclasses (hypothesis)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from binlog.constants import ColumnType as T
from binlog.errors import BinlogError
from binlog.types import decoder_for, make_column, parse_json_binary, parse_json_diffs

COLUMNS = []
for t, meta, extra in [
    (T.TINY, 0, {}), (T.LONGLONG, 0, {"unsigned": True}), (T.FLOAT, 4, {}), (T.DOUBLE, 8, {}),
    (T.NEWDECIMAL, 65 << 8 | 30, {}), (T.NEWDECIMAL, 10 << 8 | 2, {}), (T.BIT, 0x0102, {}),
    (T.YEAR, 0, {}), (T.DATE, 0, {}),
    (T.TIMESTAMP, 0, {"precision": 0}), (T.TIMESTAMP, 0, {"precision": 5}),
    (T.DATETIME, 0, {"precision": 0}), (T.DATETIME, 0, {"precision": 3}),
    (T.TIME, 0, {"precision": 0}), (T.TIME, 0, {"precision": 6}),
    (T.TIMESTAMP2, 3, {}), (T.DATETIME2, 6, {}), (T.TIME2, 2, {}), (T.TIME2, 5, {}),
    (T.VARCHAR, 300, {"encoding": "utf-8"}), (T.STRING, 0xFE0A, {"encoding": "mysql_latin1"}),
    (T.BLOB, 2, {}), (T.BLOB_COMPRESSED, 1, {"encoding": "utf-8"}),
    (T.VARCHAR_COMPRESSED, 101, {}), (T.STRING, 0xF801, {"enum_values": ("a",)}),
    (T.STRING, 0xF801, {"set_values": ("a", "b")}), (T.JSON, 1, {}), (T.GEOMETRY, 1, {}),
    (T.VECTOR, 1, {}),
]:
    col = make_column(0, t, meta)
    for k, v in extra.items():
        setattr(col, k, v)
    COLUMNS.append(col)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(COLUMNS), st.binary(max_size=40))
def test_decoders_raise_only_binlog_errors(col, data):
    try:
        decoder_for(col)(data, 0, len(data), col)
    except BinlogError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_json_raises_only_binlog_errors(data):
    for parse in (parse_json_binary, lambda d: parse_json_diffs(d, 0, len(d))):
        try:
            parse(data)
        except BinlogError:
            pass
