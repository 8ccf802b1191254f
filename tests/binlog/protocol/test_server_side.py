"""What the server side builds (``protocol.server_side``, ``binlog serve``), the client
side parses (``protocol.client_side``, the live source) to the same values:
decode(encode(x)) == x, read through ``PacketReader`` whole, byte by byte, in odd chunks
and with trailing data."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st
from protocol_helpers import every_way

from binlog.protocol import client_side as c, constants as pc, server_side as s

CUTS = st.lists(st.integers(0, 3000), max_size=8)
ASCII = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)
TEXT = st.text(st.characters(min_codepoint=1, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
               max_size=60)
SCRAMBLES = st.binary(min_size=20, max_size=20).map(lambda b: bytes(x % 255 + 1 for x in b))


@settings(max_examples=200, deadline=None)
@given(ASCII, st.integers(0, 2**32 - 1), SCRAMBLES, st.booleans(), CUTS)
def test_greeting(version, connection_id, scramble, ssl, cuts):
    (payload,) = every_way([s.greeting(version, connection_id, scramble, ssl=ssl)], cuts)
    got = c.parse_greeting(payload)
    assert (got.version, got.connection_id, got.scramble, got.plugin) == (
        version, connection_id, scramble, pc.NATIVE_PASSWORD)
    assert got.capabilities == s.SERVER_CAPS | (pc.CLIENT_SSL if ssl else 0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0xFFFF), TEXT, st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=5, max_size=5), CUTS)
def test_error(code, message, state, cuts):
    (payload,) = every_way([s.error(code, message, state)], cuts)
    assert payload[0] == pc.ERR
    assert c.parse_error(payload, "test") == c.ServerErrorPacket(code, state, message.encode()[:500])


@settings(max_examples=100, deadline=None)
@given(ASCII, st.binary(max_size=64), CUTS)
def test_auth_switch(plugin, data, cuts):
    (payload,) = every_way([s.auth_switch(plugin, data)], cuts)
    assert payload[0] == pc.SWITCH
    assert c.parse_auth_switch(payload, "test") == c.AuthSwitch(plugin, data)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**64 - 1), st.binary(max_size=40))
def test_ok_and_eof(affected, info):
    ok, eof = every_way([s.ok(affected, info), s.eof()])
    assert ok[0] == pc.OK and c.status_flags(ok, ok=True) == pc.SERVER_STATUS_AUTOCOMMIT
    assert c.is_eof(eof) and c.status_flags(eof, ok=False) == pc.SERVER_STATUS_AUTOCOMMIT


@st.composite
def result_sets(draw):
    width = draw(st.integers(1, 6))
    names = draw(st.lists(TEXT, min_size=width, max_size=width))
    rows = draw(st.lists(st.tuples(*[st.one_of(st.none(), TEXT)] * width), max_size=8))
    return names, rows


@settings(max_examples=200, deadline=None)
@given(result_sets(), CUTS)
def test_result_set(result, cuts):
    """The text result sets serve answers queries with, read as the live source reads them
    (sources.wire.WireConnection.query): count, definitions, EOF, rows, EOF."""
    names, rows = result
    payloads = every_way(s.result_set(names, rows), cuts)
    width = c.column_count(payloads[0], "test")
    assert width == len(names)
    assert [c.column_name(p, "test") for p in payloads[1:1 + width]] == names
    assert c.is_eof(payloads[1 + width]) and c.is_eof(payloads[-1])
    got = [c.text_row(p, width, "test") for p in payloads[2 + width:-1]]
    assert got == [tuple(None if v is None else v.encode() for v in row) for row in rows]
