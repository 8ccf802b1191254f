"""A TCP relay on loopback that records the commands a MySQL-protocol client sends: put it
between a peer (Debezium, DM...) and ``binlog serve`` to keep the list of what the peer
asks.  Bytes pass unchanged both ways; the client's packets are parsed only to record them.

A command is a client packet with sequence id 0 (the protocol restarts the sequence at
each command; the login's packets have ids 1, 2...: MariaDB KB "0 - Packet", "Connection").
COM_QUERY (3) is recorded as its text, any other command as ``COM_<code>``.  TLS would hide
the commands: the peers are run without it.
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

COM_QUERY = 3
COMMANDS = {1: "COM_QUIT", 2: "COM_INIT_DB", 14: "COM_PING", 18: "COM_BINLOG_DUMP",
            21: "COM_REGISTER_SLAVE", 22: "COM_STMT_PREPARE", 23: "COM_STMT_EXECUTE"}


@dataclass
class Connection:
    """One client connection through the relay and the commands it sent, in order."""
    number: int
    commands: list[str] = field(default_factory=list)


class RecordingProxy:
    """``RecordingProxy(port).start()``: listens on 127.0.0.1:<free port> (``.port``) and
    relays every connection to 127.0.0.1:``target_port``."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.connections: list[Connection] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = threading.Event()

    def start(self) -> RecordingProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def retarget(self, port: int) -> None:
        """New connections go to ``port`` (a restarted serve on another port)."""
        self.target_port = port

    def close(self) -> None:
        self._closed.set()
        self._listener.close()

    def commands(self) -> list[str]:
        """Every command of every connection so far, in connection order."""
        with self._lock:
            return [c for conn in self.connections for c in conn.commands]

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                conn = Connection(len(self.connections))
                self.connections.append(conn)
            threading.Thread(target=self._pump, args=(client, upstream, conn), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: Connection | None) -> None:
        parser = _Packets() if record is not None else None
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if parser is not None and record is not None:
                    for seq, payload in parser.feed(data):
                        if seq == 0 and payload:
                            with self._lock:
                                record.commands.append(_command(payload))
                dst.sendall(data)
        except OSError:
            pass            # either side went away: the relay of this connection ends
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


def _command(payload: bytes) -> str:
    if payload[0] == COM_QUERY:
        return payload[1:].decode("utf-8", "replace")
    return COMMANDS.get(payload[0], f"COM_{payload[0]}")


class _Packets:
    """MySQL packets (3-byte length, 1-byte sequence id, payload) from a byte stream."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self.buffer += data
        out = []
        while len(self.buffer) >= 4:
            length = int.from_bytes(self.buffer[:3], "little")
            if len(self.buffer) < 4 + length:
                break
            out.append((self.buffer[3], self.buffer[4:4 + length]))
            self.buffer = self.buffer[4 + length:]
        return out
