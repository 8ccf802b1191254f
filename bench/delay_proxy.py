#!/usr/bin/env python3
"""A TCP proxy that delays every chunk of bytes by a fixed time in each direction: a
loopback MariaDB made to answer as a distributed database does (TiDB: every statement
and commit a network round trip or two away).

    python bench/delay_proxy.py --listen 25001 --to 127.0.0.1:3306 --delay-ms 1 --seconds 600

``--delay-ms`` applies to both directions (``--up-ms`` / ``--down-ms`` for each: client
to server, server to client), so a request and its answer cost 2 x 1 ms more than
directly.  Order is kept per direction; chunks are forwarded as they were read (no
coalescing beyond what TCP does).  Loopback only: it listens on 127.0.0.1 and forwards
only to a loopback address.  It stops by itself after ``--seconds`` (a bounded run),
or on SIGTERM/SIGINT.
"""
from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import sys
import time

CHUNK = 1 << 16


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Bytes from ``reader`` to ``writer``, each chunk ``delay`` seconds after it arrived."""
    pending: asyncio.Queue = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await pending.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    task = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(CHUNK)
            pending.put_nowait((time.monotonic() + delay, data or None))
            if not data:
                break
        await task
    except (ConnectionError, OSError):
        task.cancel()
    finally:
        writer.close()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve(port: int, host: str, target_port: int, up: float, down: float, seconds: float) -> None:
    async def handle(client_r, client_w):
        try:
            server_r, server_w = await asyncio.open_connection(host, target_port)
        except OSError as exc:
            sys.stderr.write(f"delay_proxy: cannot reach {host}:{target_port}: {exc}\n")
            client_w.close()
            return
        try:
            await asyncio.gather(_pump(client_r, server_w, up), _pump(server_r, client_w, down))
        except asyncio.CancelledError:
            return          # the proxy stops: open connections end with it

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    sys.stderr.write(f"delay_proxy: 127.0.0.1:{port} -> {host}:{target_port}, +{up * 1000:g} ms up, "
                     f"+{down * 1000:g} ms down, for at most {seconds:g} s\n")
    sys.stderr.flush()
    async with server:
        try:
            await asyncio.wait_for(stop.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            sys.stderr.write("delay_proxy: time is up\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", type=int, required=True, metavar="PORT", help="port on 127.0.0.1")
    ap.add_argument("--to", required=True, metavar="HOST:PORT", help="the server (loopback only)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="delay in each direction (default 1)")
    ap.add_argument("--up-ms", type=float, default=None, help="client -> server delay")
    ap.add_argument("--down-ms", type=float, default=None, help="server -> client delay")
    ap.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    args = ap.parse_args(argv)
    host, _, port = args.to.rpartition(":")
    if not _loopback(host) or not port.isdigit():
        ap.error("--to must be a loopback HOST:PORT (127.0.0.1, ::1, localhost)")
    up = (args.delay_ms if args.up_ms is None else args.up_ms) / 1000
    down = (args.delay_ms if args.down_ms is None else args.down_ms) / 1000
    asyncio.run(serve(args.listen, host, int(port), up, down, args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
