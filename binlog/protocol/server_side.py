"""The server side of the MySQL/MariaDB protocol, sans-IO: what ``binlog serve`` sends
(greeting, authentication switch, OK, ERR, EOF, text result sets) and reads (the
handshake response, COM_BINLOG_DUMP, COM_REGISTER_SLAVE) from a client, which is
untrusted input like a primary is.  The other side is ``client_side``.

Layouts as ``client_side`` (KB "Connection", "OK_Packet", "ERR_Packet", "Result Set
Packets"; sql/sql_acl.cc send_server_handshake_packet and parse_client_handshake_packet,
sql/protocol.cc net_send_ok / net_send_error_packet / send_result_set_metadata).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import struct
from dataclasses import dataclass

from ..constants import ColumnType
from ..cursor import Cursor, pack_lenenc
from ..errors import BinlogError, ServerProtocolError
from . import constants as pc

#: What ``binlog serve`` offers: protocol 4.1, secure connection, plugin authentication.
SERVER_CAPS = (pc.CLIENT_LONG_PASSWORD | pc.CLIENT_LONG_FLAG | pc.CLIENT_CONNECT_WITH_DB | pc.CLIENT_PROTOCOL_41
               | pc.CLIENT_TRANSACTIONS | pc.CLIENT_SECURE_CONNECTION | pc.CLIENT_MULTI_RESULTS
               | pc.CLIENT_PLUGIN_AUTH | pc.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)


def new_scramble() -> bytes:
    """20 random printable-safe bytes (no NUL: the greeting ends part 2 with one)."""
    return bytes(b % 94 + 33 for b in os.urandom(20))


def greeting(version: str, connection_id: int, scramble: bytes, *, ssl: bool = False) -> bytes:
    caps = SERVER_CAPS | (pc.CLIENT_SSL if ssl else 0)
    return (b"\x0a" + version.encode("ascii") + b"\0" + struct.pack("<I", connection_id & 0xFFFFFFFF)
            + scramble[:8] + b"\0" + struct.pack("<H", caps & 0xFFFF) + bytes([pc.UTF8MB4_GENERAL_CI])
            + struct.pack("<H", pc.SERVER_STATUS_AUTOCOMMIT) + struct.pack("<H", caps >> 16)
            + bytes([21]) + b"\0" * 10 + scramble[8:20] + b"\0" + pc.NATIVE_PASSWORD.encode() + b"\0")


def auth_switch(plugin: str, data: bytes) -> bytes:
    """AuthSwitchRequest: 0xFE, the method's name NUL-terminated, its data (a scramble
    and a NUL) (sql/sql_acl.cc send_plugin_request_packet)."""
    return bytes([pc.SWITCH]) + plugin.encode("ascii") + b"\0" + data


def ok(affected: int = 0, info: bytes = b"") -> bytes:
    return (bytes([pc.OK]) + pack_lenenc(affected) + pack_lenenc(0) + struct.pack("<HH", pc.SERVER_STATUS_AUTOCOMMIT, 0)
            + info)


def eof() -> bytes:
    return bytes([pc.EOF]) + struct.pack("<HH", 0, pc.SERVER_STATUS_AUTOCOMMIT)


def error(code: int, message: str, state: str = "HY000") -> bytes:
    return bytes([pc.ERR]) + struct.pack("<H", code) + b"#" + state.encode("ascii")[:5] + message.encode("utf-8")[:500]


def _lenenc_str(data: bytes) -> bytes:
    return pack_lenenc(len(data)) + data


def column_definition(name: str, *, numeric: bool = False) -> bytes:
    raw = name.encode("utf-8")
    kind, charset, length = (ColumnType.LONGLONG, 63, 21) if numeric else (ColumnType.VAR_STRING, 33, 1024)
    return (_lenenc_str(b"def") + _lenenc_str(b"") + _lenenc_str(b"") + _lenenc_str(b"")
            + _lenenc_str(raw) + _lenenc_str(raw) + b"\x0c"
            + struct.pack("<HIBHB", charset, length, kind, 0, 0) + b"\0\0")


def text_row(values) -> bytes:
    out = bytearray()
    for value in values:
        if value is None:
            out.append(pc.NULL_VALUE)
        else:
            out += _lenenc_str(str(value).encode("utf-8"))
    return bytes(out)


def result_set(names: list[str], rows: list[tuple], *, numeric: frozenset[int] = frozenset()) -> list[bytes]:
    """The payloads of a text result set: column count, definitions, EOF, rows, EOF."""
    return ([pack_lenenc(len(names))] + [column_definition(n, numeric=i in numeric) for i, n in enumerate(names)]
            + [eof()] + [text_row(r) for r in rows] + [eof()])


def with_status(answer: list[bytes], status: int) -> list[bytes]:
    """An answer built here (``ok``, ``error`` or ``result_set``) with other status flags:
    those of the upstream session a client's other queries run in.  A driver keeps its
    autocommit and transaction state from every OK and EOF (MariaDB Connector/J
    ``Connection.getAutoCommit`` reads SERVER_STATUS_AUTOCOMMIT), so a served answer must
    not contradict the session's ``SET autocommit=0``."""
    if not answer or answer[0][:1] == bytes([pc.ERR]):
        return answer
    flags = struct.pack("<H", status & 0xFFFF)
    if answer[0][:1] == bytes([pc.OK]) and len(answer) == 1:     # OK: 0, two lenenc ints, status
        cur = Cursor(answer[0], 1)
        cur.lenenc("affected rows")
        cur.lenenc("insert id")
        return [answer[0][:cur.pos] + flags + answer[0][cur.pos + 2:]]
    eofs = (Cursor(answer[0]).count("column count") + 1, len(answer) - 1)
    return [p[:3] + flags + p[5:] if i in eofs else p for i, p in enumerate(answer)]    # EOF: fe, warnings, status


@dataclass(frozen=True)
class HandshakeResponse:
    capabilities: int
    user: str
    auth: bytes
    database: str | None
    plugin: str
    ssl_only: bool = False          # an SSLRequest: TLS comes next, then the response again


def parse_handshake_response(payload: bytes) -> HandshakeResponse:
    step = "reading the client's handshake response"
    try:
        cur = Cursor(payload)
        caps = cur.u32("capabilities")
        if not caps & pc.CLIENT_PROTOCOL_41:
            raise ServerProtocolError(f"{step}: a pre-4.1 client", step=step)
        cur.skip(4 + 1 + 23, "max packet, charset, filler")
        if cur.at_end() and caps & pc.CLIENT_SSL:
            return HandshakeResponse(caps, "", b"", None, "", ssl_only=True)
        user = cur.cstring("user").decode("utf-8", "replace")
        if caps & pc.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
            auth = cur.lenenc_bytes("authentication data")
        elif caps & pc.CLIENT_SECURE_CONNECTION:
            auth = cur.bytes(cur.u8("authentication data length"), "authentication data")
        else:
            auth = cur.cstring("authentication data")
        database = None
        if caps & pc.CLIENT_CONNECT_WITH_DB and not cur.at_end():
            database = cur.cstring("database").decode("utf-8", "replace")
        plugin = ""
        if caps & pc.CLIENT_PLUGIN_AUTH and not cur.at_end():
            plugin = cur.cstring("authentication method").decode("ascii", "replace")
        # connection attributes (CLIENT_CONNECT_ATTRS) may follow: not needed
    except ServerProtocolError:
        raise
    except BinlogError as exc:
        raise ServerProtocolError(f"{step}: {exc.message}", step=step) from None
    if len(user) > 128:
        raise ServerProtocolError(f"{step}: a user name of {len(user)} characters", step=step)
    return HandshakeResponse(caps, user, auth, database, plugin)


def native_hash(password: str) -> str:
    """The stored form of a mysql_native_password: ``*`` and SHA1(SHA1(password)) in hex,
    as the server's ``PASSWORD()`` gives it (sql/password.c my_make_scrambled_password)."""
    return "*" + hashlib.sha1(hashlib.sha1(password.encode("utf-8")).digest()).hexdigest().upper()


def native_check(stored: str, scramble: bytes, reply: bytes) -> bool:
    """The server's check of a native reply against the stored hash (sql/password.c
    check_scramble): SHA1(scramble + hash) XOR reply is the stage-1 hash whose SHA1 is
    the stored hash."""
    if not stored.startswith("*") or len(stored) != 41:
        return False
    try:
        stage2 = bytes.fromhex(stored[1:])
    except ValueError:
        return False
    if len(reply) != 20:
        return False
    mix = hashlib.sha1(scramble[:20] + stage2).digest()
    stage1 = bytes(a ^ b for a, b in zip(reply, mix, strict=True))
    return hmac.compare_digest(hashlib.sha1(stage1).digest(), stage2)


@dataclass(frozen=True)
class DumpRequest:
    position: int
    flags: int
    server_id: int
    file: str


def parse_binlog_dump(payload: bytes) -> DumpRequest:
    """COM_BINLOG_DUMP after its command byte: position u32, flags u16, server id u32,
    the file name to the end (KB "COM_BINLOG_DUMP")."""
    step = "reading COM_BINLOG_DUMP"
    try:
        cur = Cursor(payload)
        position = cur.u32("position")
        flags = cur.u16("flags")
        server_id = cur.u32("server id")
        # a C string to the end (the server copies it with strmake: sql/sql_parse.cc
        # COM_BINLOG_DUMP); python-mysql-replication sends four NULs for "the first"
        name = cur.rest().split(b"\0", 1)[0]
    except BinlogError as exc:
        raise ServerProtocolError(f"{step}: {exc.message}", step=step) from None
    if len(name) > 512:
        raise ServerProtocolError(f"{step}: a file name of {len(name)} bytes", step=step)
    return DumpRequest(position, flags, server_id, name.decode("utf-8", "replace"))


def parse_register_slave(payload: bytes) -> int:
    """COM_REGISTER_SLAVE after its command byte: the replica's server id (the rest:
    host, user, password, port, rank, master id, each checked for length)."""
    step = "reading COM_REGISTER_SLAVE"
    try:
        cur = Cursor(payload)
        server_id = cur.u32("server id")
        for what in ("host", "user", "password"):
            cur.bytes(cur.u8(f"{what} length"), what)
        cur.skip(2, "port")
    except BinlogError as exc:
        raise ServerProtocolError(f"{step}: {exc.message}", step=step) from None
    return server_id
