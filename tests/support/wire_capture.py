"""A loopback TCP relay between a client and a MySQL-protocol server that records the
commands the client sends: what a real peer (go-mysql, Debezium, a replica) asks before and
during its dump, as test data.

Every client packet with sequence number 0 starts a command (the login's packets have
sequence numbers from 1: KB "MariaDB/MySQL client/server protocol", "Packet sequence");
COM_QUERY (3) is recorded as its text, other commands by their names.  Bytes pass through
unchanged in both directions.  Not for TLS sessions (their packets are encrypted).
"""
from __future__ import annotations

import socket
import threading

COMMANDS = {0x01: "COM_QUIT", 0x02: "COM_INIT_DB", 0x0e: "COM_PING", 0x12: "COM_BINLOG_DUMP",
            0x15: "COM_REGISTER_SLAVE", 0x1e: "COM_BINLOG_DUMP_GTID", 0x11: "COM_CHANGE_USER",
            0x16: "COM_STMT_PREPARE", 0x17: "COM_STMT_EXECUTE"}


class Capture:
    """``Capture(port)`` listens on a free loopback port (``.port``) and relays every
    connection to 127.0.0.1:``port``; ``.commands`` lists what clients sent, in order."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.commands: list[str] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._start(self._accept)

    def _start(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
            except OSError:
                client.close()          # the server is down: this client sees a closed socket
                continue
            server.settimeout(None)
            self._sockets += [client, server]
            self._start(self._pump, server, client, None)
            self._start(self._pump, client, server, bytearray())

    def _pump(self, src: socket.socket, dst: socket.socket, parse: bytearray | None) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if parse is not None:
                    parse += data
                    self._packets(parse)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _packets(self, buf: bytearray) -> None:
        while len(buf) >= 4:
            length = int.from_bytes(buf[:3], "little")
            if len(buf) < 4 + length:
                return
            seq, payload = buf[3], bytes(buf[4:4 + length])
            del buf[:4 + length]
            if seq == 0 and payload:
                with self._lock:
                    self.commands.append(self._name(payload))

    @staticmethod
    def _name(payload: bytes) -> str:
        if payload[0] == 0x03:
            return payload[1:].decode("utf-8", "replace")
        return COMMANDS.get(payload[0], f"command {payload[0]}")

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            try:
                sock.close()
            except OSError:
                pass
