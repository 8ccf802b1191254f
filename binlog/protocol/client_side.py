"""The client side of the MySQL/MariaDB protocol, sans-IO: what a client or replica
(``sources/``, and ``binlog serve`` towards its upstream) parses - the greeting, OK, ERR,
EOF, authentication requests, result sets - and builds - the handshake response, commands,
COM_REGISTER_SLAVE and COM_BINLOG_DUMP, the semi-sync acknowledgement.  The other side,
what a server sends and parses, is ``server_side``.

Every parser reads through the bounds-checked ``Cursor`` and raises
``ServerProtocolError`` naming the step; nothing a server sends becomes an exception of
another type.  Layouts: KB "Connection" (Initial handshake packet, Handshake response
packet, SSLRequest), "OK_Packet", "ERR_Packet", "EOF_Packet", "Result Set Packets";
server side sql/sql_acl.cc send_server_handshake_packet, client side
sql-common/client.c send_client_reply_packet.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..cursor import Cursor, pack_lenenc
from ..errors import BinlogError, ServerProtocolError
from .constants import (
    CLIENT_CONNECT_WITH_DB,
    CLIENT_LONG_FLAG,
    CLIENT_LONG_PASSWORD,
    CLIENT_MULTI_RESULTS,
    CLIENT_PLUGIN_AUTH,
    CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
    CLIENT_PROTOCOL_41,
    CLIENT_SECURE_CONNECTION,
    CLIENT_TRANSACTIONS,
    EOF,
    ERR,
    SEMI_SYNC_MAGIC,
    UTF8MB4_GENERAL_CI,
)

#: What this client asks for; the server's greeting must offer the first two.
REQUIRED_CAPS = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION
CLIENT_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | REQUIRED_CAPS | CLIENT_TRANSACTIONS
               | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)

MAX_PACKET_SIZE = 1 << 30       # what the client accepts (the server's own maximum)

#: Bounds on a result set before the dump (the client only asks for a few variables).
MAX_COLUMNS = 64
MAX_ROWS = 10_000


def _protocol(step: str, what: str, exc: BinlogError | None = None) -> ServerProtocolError:
    detail = f": {exc.message}" if exc is not None else ""
    return ServerProtocolError(f"{step}: {what}{detail}", step=step)


@dataclass(frozen=True)
class Greeting:
    """The server's Initial Handshake Packet (protocol 10)."""
    version: str
    connection_id: int
    scramble: bytes                 # 20 bytes of auth plugin data (without the NUL)
    capabilities: int
    plugin: str                     # the default authentication method ("" if none)

    @property
    def mariadb(self) -> bool:
        return "mariadb" in self.version.lower()


def parse_greeting(payload: bytes) -> Greeting:
    step = "reading the server greeting"
    if payload[:1] == bytes([ERR]):
        raise _protocol(step, "the server sent an error instead of a greeting")  # caller reads it first
    try:
        return _greeting(Cursor(payload))
    except ServerProtocolError:
        raise
    except BinlogError as exc:
        raise _protocol(step, "malformed greeting", exc) from None


def _greeting(cur: Cursor) -> Greeting:
    step = "reading the server greeting"
    protocol = cur.u8("protocol version")
    if protocol != 10:
        raise _protocol(step, f"protocol version {protocol}, not 10")
    version = cur.cstring("server version").decode("ascii", "replace")
    connection_id = cur.u32("connection id")
    scramble = cur.bytes(8, "auth plugin data")
    cur.skip(1, "filler")
    caps = cur.u16("capabilities")
    if cur.at_end():
        raise _protocol(step, "a pre-4.1 server (no capabilities past the first two bytes)")
    cur.skip(1, "character set")
    cur.skip(2, "status")
    caps |= cur.u16("capabilities (upper)") << 16
    data_len = cur.u8("auth plugin data length")
    cur.skip(10, "reserved")
    if caps & REQUIRED_CAPS != REQUIRED_CAPS:
        raise _protocol(step, "the server does not speak protocol 4.1 with secure authentication")
    scramble += cur.bytes(max(13, data_len - 8), "auth plugin data (part 2)")
    scramble = scramble[:20]
    plugin = ""
    if caps & CLIENT_PLUGIN_AUTH and not cur.at_end():
        # The name ends with a NUL, or (an old server bug, MySQL bug #59453) the packet.
        raw = cur.rest()
        plugin = raw.split(b"\0", 1)[0].decode("ascii", "replace")
    if len(scramble) != 20:
        raise _protocol(step, f"a scramble of {len(scramble)} bytes, not 20")
    return Greeting(version, connection_id, scramble, caps, plugin)


@dataclass(frozen=True)
class ServerErrorPacket:
    code: int
    state: str
    message: bytes


def parse_error(payload: bytes, step: str) -> ServerErrorPacket:
    """ERR: 0xFF, code u16, then '#' and a 5-character SQL state (protocol 4.1), then
    the message to the end."""
    try:
        cur = Cursor(payload)
        cur.skip(1, "ERR marker")
        code = cur.u16("error code")
        state = ""
        if cur.remaining >= 6 and payload[cur.pos] == 0x23:       # '#'
            cur.skip(1)
            state = cur.bytes(5, "SQL state").decode("ascii", "replace")
        return ServerErrorPacket(code, state, cur.rest())
    except BinlogError as exc:
        raise _protocol(step, "malformed ERR packet", exc) from None


def status_flags(payload: bytes, *, ok: bool) -> int:
    """The server status flags of an OK packet (after its two length-encoded integers)
    or an EOF packet (after its warning count); 0 when the packet ends before them."""
    cur = Cursor(payload, 1)
    if ok:
        cur.lenenc("affected rows")
        cur.lenenc("insert id")
    else:
        cur.skip(2, "warnings")
    return cur.u16("status") if cur.remaining >= 2 else 0


def is_eof(payload: bytes | bytearray) -> bool:
    """An EOF packet (0xFE and at most 8 more bytes; a longer 0xFE payload is data)."""
    return payload[:1] == bytes([EOF]) and len(payload) < 9


@dataclass(frozen=True)
class AuthSwitch:
    plugin: str
    data: bytes


def parse_auth_switch(payload: bytes, step: str) -> AuthSwitch:
    """0xFE, the method's name NUL-terminated, its data (usually a new scramble, NUL
    at the end)."""
    try:
        cur = Cursor(payload)
        cur.skip(1, "switch marker")
        name = cur.cstring("authentication method name").decode("ascii", "replace")
        return AuthSwitch(name, cur.rest())
    except BinlogError as exc:
        raise _protocol(step, "malformed authentication switch request", exc) from None


def handshake_response(user: str, auth: bytes, plugin: str, caps: int, *, database: str | None = None) -> bytes:
    """HandshakeResponse41: capabilities u32, max packet u32, character set u8, 23 zero
    bytes, user NUL-terminated, the authentication data (length-encoded), the database,
    the method's name."""
    head = ssl_request(caps)
    body = user.encode("utf-8") + b"\0"
    if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        body += pack_lenenc(len(auth)) + auth
    else:
        if len(auth) > 255:
            raise ValueError("authentication data longer than 255 bytes")
        body += bytes([len(auth)]) + auth
    if database and caps & CLIENT_CONNECT_WITH_DB:
        body += database.encode("utf-8") + b"\0"
    if caps & CLIENT_PLUGIN_AUTH:
        body += plugin.encode("ascii") + b"\0"
    return head + body


def ssl_request(caps: int) -> bytes:
    """The first 32 bytes of a handshake response: sent alone, with CLIENT_SSL, before TLS."""
    return struct.pack("<IIB23x", caps, MAX_PACKET_SIZE, UTF8MB4_GENERAL_CI)


def command(code: int, payload: bytes = b"") -> bytes:
    return bytes([code]) + payload


# -- replication ----------------------------------------------------------------------
def register_slave(server_id: int) -> bytes:
    """COM_REGISTER_SLAVE after its command byte: server_id u32, hostname, user, password
    (each a length byte and text: all empty here, nothing secret is sent), port u16, rank
    u32, master_id u32 (https://mariadb.com/kb/en/com_register_slave/)."""
    return struct.pack("<IBBBHII", server_id, 0, 0, 0, 0, 0, 0)


def binlog_dump(position: int, flags: int, server_id: int, file: str) -> bytes:
    """COM_BINLOG_DUMP after its command byte: position u32, flags u16, server id u32,
    the file name to the end (https://mariadb.com/kb/en/com_binlog_dump/)."""
    return struct.pack("<IHI", position, flags, server_id) + file.encode()


def semi_sync_ack(file: str, position: int) -> bytes:
    """The semi-sync acknowledgement: the magic number, the position after the event u64,
    the binlog name (sql/semisync_slave.cc Repl_semi_sync_slave::slave_reply)."""
    return bytes([SEMI_SYNC_MAGIC]) + struct.pack("<Q", position) + file.encode()


# -- result sets ----------------------------------------------------------------------
def column_count(payload: bytes, step: str) -> int:
    try:
        cur = Cursor(payload)
        n = cur.count("column count")
        cur.expect_end("the column count")
    except BinlogError as exc:
        raise _protocol(step, "malformed column count", exc) from None
    if not 1 <= n <= MAX_COLUMNS:
        raise _protocol(step, f"a result set of {n} columns")
    return n


def column_name(payload: bytes, step: str) -> str:
    """A Column Definition packet (catalog, schema, table, org_table, name, org_name as
    length-encoded strings, then the fixed fields): its name."""
    try:
        cur = Cursor(payload)
        for what in ("catalog", "schema", "table", "original table"):
            cur.lenenc_bytes(what)
        name = cur.lenenc_bytes("column name")
        cur.lenenc_bytes("original column name")
        cur.count("length of the fixed fields")
        cur.skip(12, "column type, length, flags and decimals")
    except BinlogError as exc:
        raise _protocol(step, "malformed column definition", exc) from None
    return name.decode("utf-8", "replace")


def text_row(payload: bytes, columns: int, step: str) -> tuple[bytes | None, ...]:
    """A text-protocol row: each value a length-encoded string, or 0xFB for NULL."""
    try:
        cur = Cursor(payload)
        values: list[bytes | None] = []
        for _ in range(columns):
            if cur.remaining and payload[cur.pos] == 0xFB:
                cur.skip(1)
                values.append(None)
            else:
                values.append(cur.lenenc_bytes("value"))
        cur.expect_end("the row")
    except BinlogError as exc:
        raise _protocol(step, f"malformed row of {columns} columns", exc) from None
    return tuple(values)
