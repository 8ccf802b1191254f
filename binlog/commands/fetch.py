"""``binlog fetch --from DSN --to DIR``: copy a running server's binlogs, byte for byte.

A relay like ``mariadb-binlog --read-from-remote-server --raw``: connects as a replica
(``--server-id``), asks for the binlog and writes every event that is in the server's
file into a file of the same name (``sources.relay``); the fake ROTATE, the resent
FORMAT_DESCRIPTION and heartbeats the server adds to the stream are not written.  The
one byte that may differ from the server's own file is the FORMAT_DESCRIPTION's
LOG_EVENT_BINLOG_IN_USE_F flag of the file the server is still writing: the server sends
it cleared (sql/sql_repl.cc send_format_descriptor_event), as the file will be once closed.

Where it starts: where the directory's copy ends (after truncating a partial event a
crash left); in an empty directory at ``--start-file`` (default: the server's first
binlog) or at the start of the file holding ``--start-gtid``.  It stops at the end of the
server's last binlog, or with ``--stop-never`` keeps following it.  A lost connection
(server restart) is retried ``--retries`` times with back-off (1, 2, 4 ... 30 s), each
time resuming where the copy ends; any event received resets the count.

``--semi-sync``: register as a semi-synchronous replica (sources.server); when the server
asks for an acknowledgement (the last event of a transaction a commit waits for), the
event is written and fsync'ed into the relay first, then acknowledged, so a commit that
returned on the server is on the relay's disk.

Every event's CRC32 is checked (when the server's binlog has them) before it is written:
at the first that does not match, the relay ends at the last good event and the run
stops with the error (exit 1), as MariaDB's own replica refuses such an event.  A ROTATE
may only continue a file of the relay's index or start a new one (``sources.relay``).

Exit codes (binlog/exitcodes.py): 0 done (or stopped by SIGTERM / SIGINT after
flushing), 1 the stream (a bad checksum) or the relay directory is damaged, 2 bad usage, 5 the server
refused or failed (message and hint on stderr).
"""
from __future__ import annotations

import signal
import sys
import time

from ..errors import ServerConnectionError
from ..options import build
from ..sources.progress import Progress
from ..sources.relay import RelayDir
from ..sources.server import (
    HEARTBEAT_TYPES,
    ReplicationClient,
    ServerOptions,
    check_binlog_name,
    gtid_start_file,
    verify_event,
)
from ._common import server_options

FLUSH_INTERVAL = 0.2        # seconds: under a steady stream, the copy lags by at most this
NOTE_INTERVAL = 1.0         # seconds between two notes of where the server stands (upstream.json)


def add_parser(sub) -> None:
    p = sub.add_parser("fetch")
    build(p, "fetch")
    p.set_defaults(run=run)


class _Stop(Exception):
    """SIGTERM: stop after flushing what was received."""


def _on_sigterm(signum, frame):
    raise _Stop()


def run(args) -> int:
    options = server_options(args)
    if args.start_file:
        check_binlog_name(args.start_file, what="--start-file")
    relay = RelayDir(args.directory)
    fetcher = Fetcher(options, relay, blocking=args.stop_never, retries=args.source_retries)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        fetcher.run(start_file=args.start_file, start_gtid=args.start_gtid)
    except (_Stop, KeyboardInterrupt):
        pass
    finally:
        relay.close()
        fetcher.client.close()
        fetcher.progress.close()
        signal.signal(signal.SIGTERM, previous)
    return 0


class Fetcher:
    def __init__(self, options: ServerOptions, relay: RelayDir, *, blocking: bool, retries: int):
        self.options = options
        self.relay = relay
        self.blocking = blocking
        self.retries = retries
        self.client = ReplicationClient(options)
        self.progress = Progress()
        self.events = 0
        self.bytes = 0
        self.acks = 0           # semi-sync acknowledgements sent

    def run(self, *, start_file: str | None = None, start_gtid: str | None = None) -> None:
        start = self.relay.resume_point()
        if start is not None and (start_file or start_gtid):
            _warn(f"--start-{'file' if start_file else 'gtid'} ignored: {self.relay.dir} "
                  f"already holds a relay, resuming at {start[0]}:{start[1]}")
        elif start is None:
            start = (start_file or "", 4) if not start_gtid else (gtid_start_file(self.client, start_gtid), 4)
        failures = 0
        while True:
            before = self.events
            try:
                self._fetch(*start)
                return
            except ServerConnectionError as exc:
                self.client.close()
                self.relay.close()
                failures = 0 if self.events > before else failures
                failures += 1
                if failures > self.retries:
                    exc.hint = (f"gave up after {self.retries} retries; run the same command "
                                f"again to resume where the copy ends")
                    raise
                delay = min(2 ** (failures - 1), 30)
                _warn(f"{exc}; reconnecting in {delay}s (retry {failures} of {self.retries})")
                time.sleep(delay)
                start = self.relay.resume_point() or start

    def _fetch(self, file: str, position: int) -> None:
        client, relay = self.client, self.relay
        client.start(file=file, position=position, blocking=self.blocking)
        flushed = noted = time.monotonic()
        progress = self.progress
        upstream: tuple[str, int] = (file, position)
        event_time = None
        noted_caught_up = None
        for event in client.events():
            if event.in_file:
                if client.tracker is not None and client.tracker.checksum:
                    verify_event(event)     # nothing damaged goes into the relay
                relay.write(event.file, event.offset, event.data)
                self.events += 1
                self.bytes += len(event.data)
                progress.event(event.file, event.end, len(event.data), event.header.timestamp)
                upstream, event_time = (event.file, event.end), event.header.timestamp
                if event.need_ack:
                    # semi-sync: the commit on the server waits until the transaction
                    # is on our disk, so the acknowledgement comes after the fsync
                    relay.sync()
                    client.ack(event.file, event.end)
                    self.acks += 1
                    flushed = time.monotonic()
            elif event.header.type_code in HEARTBEAT_TYPES:
                progress.idle()
                if event.header.log_pos:        # the server's position in the file it names
                    upstream = (event.file, event.header.log_pos)
            now = time.monotonic()
            # flushed when nothing more has arrived (the next read would wait: readers of the
            # relay, binlog serve among them, see a burst's end at once) and at least every
            # FLUSH_INTERVAL under a steady stream
            caught_up = client.caught_up()
            if now - flushed >= FLUSH_INTERVAL or caught_up:
                relay.flush()
                flushed = now
            if now - noted >= NOTE_INTERVAL or caught_up != noted_caught_up:
                relay.note_upstream(*upstream, event_time, caught_up)
                noted, noted_caught_up = now, caught_up
        relay.flush()
        client.close()


def _warn(message: str) -> None:
    sys.stderr.write(f"binlog fetch: warning: {message}\n")

