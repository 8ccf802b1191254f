#!/usr/bin/env python3
"""A TCP proxy that delays every chunk of bytes by a fixed time in each direction: a
loopback MariaDB made to answer as a distributed database does (TiDB: every statement
and commit a network round trip or two away).

    python bench/delay_proxy.py --listen 41001 --to 127.0.0.1:3306 --delay-ms 1 --seconds 600
    python bench/delay_proxy.py --ping 41001     # round trip of SELECT 1 through it

``--delay-ms`` applies to both directions (``--up-ms`` / ``--down-ms`` for each: client
to server, server to client), so a request and its answer cost 2 x 1 ms more than
directly.  Order is kept per direction; chunks are forwarded as they were read (bytes
that are due together go in one send, as a network's would).  Loopback only: it
listens on 127.0.0.1 and forwards only to a loopback address.  It stops by itself after
``--seconds`` (a bounded run), or on SIGTERM/SIGINT.

Each direction of a connection is two threads: one reads and queues (due time, bytes),
one sleeps until the oldest is due and sends it.  ``time.sleep`` waits with nanosecond
resolution, where an event loop's timers round up to whole milliseconds (an asyncio
version of this proxy gave a 2 ms round trip as 3.85 ms); ``--ping`` measures what it
really adds.
"""
from __future__ import annotations

import argparse
import collections
import ipaddress
import signal
import socket
import sys
import threading
import time

CHUNK = 1 << 16


class _Direction:
    """Bytes from ``src`` to ``dst``, each chunk ``delay`` seconds after it was read."""

    def __init__(self, src: socket.socket, dst: socket.socket, delay: float):
        self.src, self.dst, self.delay = src, dst, delay
        self.queue: collections.deque = collections.deque()
        self.cond = threading.Condition()

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._read, daemon=True),
                   threading.Thread(target=self._deliver, daemon=True)]
        for t in threads:
            t.start()
        return threads

    def _read(self) -> None:
        data = b""
        try:
            while data := self.src.recv(CHUNK):
                with self.cond:
                    self.queue.append((time.monotonic() + self.delay, data))
                    self.cond.notify()
        except OSError:
            pass            # the peer reset: the other side is closed after what is queued
        with self.cond:
            self.queue.append((time.monotonic() + self.delay, None))
            self.cond.notify()

    def _deliver(self) -> None:
        try:
            while True:
                with self.cond:
                    while not self.queue:
                        self.cond.wait()
                    due = self.queue[0][0]
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not self._send_due():
                    break
            self.dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass            # the receiver went away: nothing to deliver to
        finally:
            for s in (self.src, self.dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass    # already shut

    def _send_due(self) -> bool:
        """Send every chunk that is due (in one send); False at the end of the stream."""
        now = time.monotonic()
        out, end = [], False
        with self.cond:
            while self.queue and self.queue[0][0] <= now:
                data = self.queue.popleft()[1]
                if data is None:
                    end = True
                    break
                out.append(data)
        if out:
            self.dst.sendall(b"".join(out))
        return not end


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _handle(client: socket.socket, host: str, port: int, up: float, down: float) -> None:
    try:
        server = socket.create_connection((host, port))
    except OSError as exc:
        sys.stderr.write(f"delay_proxy: cannot reach {host}:{port}: {exc}\n")
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threads = _Direction(client, server, up).start() + _Direction(server, client, down).start()
    for t in threads:
        t.join()
    client.close()
    server.close()


def serve(port: int, host: str, target_port: int, up: float, down: float, seconds: float) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(256)
    listener.settimeout(0.2)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    sys.stderr.write(f"delay_proxy: 127.0.0.1:{port} -> {host}:{target_port}, +{up * 1000:g} ms up, "
                     f"+{down * 1000:g} ms down, for at most {seconds:g} s\n")
    sys.stderr.flush()
    deadline = time.monotonic() + seconds
    while not stop.is_set():
        if time.monotonic() >= deadline:
            sys.stderr.write("delay_proxy: time is up\n")
            break
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        client.settimeout(None)
        threading.Thread(target=_handle, args=(client, host, target_port, up, down),
                         daemon=True).start()
    listener.close()


def ping(port: int, count: int = 200) -> tuple[float, float]:
    """Median and 90th percentile (ms) of ``SELECT 1`` through 127.0.0.1:``port``."""
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=port, user="root")
    try:
        times = []
        with conn.cursor() as cur:
            for _ in range(count):
                t = time.perf_counter()
                cur.execute("SELECT 1")
                cur.fetchall()
                times.append((time.perf_counter() - t) * 1000)
    finally:
        conn.close()
    times.sort()
    return times[len(times) // 2], times[len(times) * 9 // 10]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", type=int, metavar="PORT", help="port on 127.0.0.1")
    ap.add_argument("--to", metavar="HOST:PORT", help="the server (loopback only)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="delay in each direction (default 1)")
    ap.add_argument("--up-ms", type=float, default=None, help="client -> server delay")
    ap.add_argument("--down-ms", type=float, default=None, help="server -> client delay")
    ap.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    ap.add_argument("--ping", type=int, metavar="PORT",
                    help="measure SELECT 1 through 127.0.0.1:PORT (user root, no password) and exit")
    args = ap.parse_args(argv)
    if args.ping:
        median, p90 = ping(args.ping)
        print(f"SELECT 1 round trip: median {median:.2f} ms, 90th percentile {p90:.2f} ms")
        return 0
    if args.listen is None or args.to is None:
        ap.error("--listen and --to are needed (or --ping)")
    host, _, port = args.to.rpartition(":")
    if not _loopback(host) or not port.isdigit():
        ap.error("--to must be a loopback HOST:PORT (127.0.0.1, ::1, localhost)")
    up = (args.delay_ms if args.up_ms is None else args.up_ms) / 1000
    down = (args.delay_ms if args.down_ms is None else args.down_ms) / 1000
    serve(args.listen, host, int(port), up, down, args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
