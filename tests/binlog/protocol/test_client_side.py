"""What the client side builds (``protocol.client_side``), the server side parses
(``protocol.server_side``) to the same values: decode(encode(x)) == x, the bytes read
through ``PacketReader`` whole, byte by byte, in odd chunks and with trailing data.  The
server's parsers also take what real clients add after the fields they need (connection
attributes, COM_REGISTER_SLAVE's rank and master id)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st
from protocol_helpers import every_way

from binlog.errors import ServerProtocolError
from binlog.protocol import client_side as c, constants as pc, server_side as s

CUTS = st.lists(st.integers(0, 600), max_size=8)
TEXT = st.text(st.characters(min_codepoint=1, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
               max_size=40)
ASCII = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)
OPTIONAL_CAPS = [pc.CLIENT_PLUGIN_AUTH, pc.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, pc.CLIENT_LONG_FLAG,
                 pc.CLIENT_TRANSACTIONS, pc.CLIENT_MULTI_RESULTS, pc.CLIENT_LONG_PASSWORD]


@st.composite
def responses(draw):
    caps = pc.CLIENT_PROTOCOL_41 | pc.CLIENT_SECURE_CONNECTION
    for flag in OPTIONAL_CAPS:
        caps |= flag if draw(st.booleans()) else 0
    database = draw(st.one_of(st.none(), TEXT.filter(bool)))
    if database is not None:            # as sources.wire asks: only with a database
        caps |= pc.CLIENT_CONNECT_WITH_DB
    limit = None if caps & pc.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA else 255
    auth = draw(st.binary(max_size=limit if limit is not None else 600))
    return draw(TEXT.filter(lambda u: len(u) <= 128)), auth, draw(ASCII), caps, database


@settings(max_examples=200, deadline=None)
@given(responses(), CUTS)
def test_handshake_response(response, cuts):
    user, auth, plugin, caps, database = response
    (payload,) = every_way([c.handshake_response(user, auth, plugin, caps, database=database)], cuts)
    got = s.parse_handshake_response(payload)
    assert (got.capabilities, got.user, got.auth, got.database, got.ssl_only) == (
        caps, user, auth, database, False)
    assert got.plugin == (plugin if caps & pc.CLIENT_PLUGIN_AUTH else "")
    attrs = b"\x0c\x05_name\x05mysql"           # CLIENT_CONNECT_ATTRS: not read, no harm
    assert s.parse_handshake_response(payload + attrs if got.plugin else payload) == got


@given(st.sampled_from([0, pc.CLIENT_PLUGIN_AUTH]))
def test_ssl_request(extra):
    caps = c.CLIENT_CAPS | pc.CLIENT_SSL | extra
    (payload,) = every_way([c.ssl_request(caps)])
    got = s.parse_handshake_response(payload)
    assert got.ssl_only and got.capabilities == caps


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF), st.integers(0, 2**32 - 1),
       st.text(st.characters(min_codepoint=1, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
               max_size=100), CUTS)
def test_binlog_dump(position, flags, server_id, file, cuts):
    (payload,) = every_way([c.command(pc.COM_BINLOG_DUMP, c.binlog_dump(position, flags, server_id, file))], cuts)
    assert payload[0] == pc.COM_BINLOG_DUMP
    assert s.parse_binlog_dump(payload[1:]) == s.DumpRequest(position, flags, server_id, file)


def test_binlog_dump_four_nuls():
    """python-mysql-replication names the file with four NULs: the first binlog."""
    assert s.parse_binlog_dump(struct.pack("<IHI", 4, 0, 9) + b"\0\0\0\0").file == ""


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), CUTS)
def test_register_slave(server_id, cuts):
    (payload,) = every_way([c.command(pc.COM_REGISTER_SLAVE, c.register_slave(server_id))], cuts)
    assert s.parse_register_slave(payload[1:]) == server_id


def test_register_slave_of_a_real_replica():
    """MariaDB's replica sends its host, user and password (sql/slave.cc register_slave_on_master)."""
    body = struct.pack("<I", 12) + b"\x09127.0.0.1" + b"\x04repl" + b"\x02pw" + struct.pack("<HII", 3307, 0, 1)
    assert s.parse_register_slave(body) == 12


@pytest.mark.parametrize("payload", [b"", b"\x01\x00", struct.pack("<I", 1) + b"\x09abc"])
def test_register_slave_cut(payload):
    with pytest.raises(ServerProtocolError):
        s.parse_register_slave(payload)


@pytest.mark.parametrize("cut", range(0, 10))
def test_binlog_dump_cut(cut):
    with pytest.raises(ServerProtocolError):
        s.parse_binlog_dump(c.binlog_dump(4, 2, 9, "")[:cut])


@settings(max_examples=100, deadline=None)
@given(ASCII, st.integers(4, 2**64 - 1))
def test_semi_sync_ack(file, position):
    """The acknowledgement MariaDB's primary reads (sql/semisync_master.cc
    Repl_semi_sync_master::report_reply_packet): magic, position u64, the name."""
    ack = c.semi_sync_ack(file, position)
    assert ack[0] == pc.SEMI_SYNC_MAGIC
    assert (int.from_bytes(ack[1:9], "little"), ack[9:].decode()) == (position, file)
