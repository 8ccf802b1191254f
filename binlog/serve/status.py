"""What ``binlog serve`` reports to monitoring: ``--status FILE`` (a JSON object, replaced
whole every second) and ``SHOW BINLOG SERVE STATUS`` (the same object, one row, one
column ``Status``, for any client with an account).

- ``served``: the last served binlog, where its whole events end, the time of its last
  event and, for a rewrite's output, the position of the relay it has reached (its
  position map's last line);
- ``relay`` and ``upstream`` (with ``--relay``): the relay's last file and size, and where
  the upstream stood when ``binlog fetch`` last heard from it (``upstream.json`` in the
  relay: its binlog and position, the time of its last event, whether nothing more had
  come, when);
- ``behind_upstream``: the bytes of the upstream's binlogs not served yet and, when
  there are some, the seconds since the last served event was written upstream
  (MariaDB's Seconds_Behind_Master: 0 when caught up); null without ``--relay``;
- ``clients``: each client's id, user, host, server id, command, dump file and position,
  the bytes of the served binlogs it has still to read, and how long it is connected.
"""
from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..sources.relay import RelayDir

INTERVAL = 1.0          # seconds between two writes of --status FILE


def status(server: Any) -> dict:
    """The status object of a running ``serve.server.Server`` (module docstring)."""
    logs = server.logs
    state = server.state()
    names = logs.names()
    served = None
    if names:
        last = names[-1]
        position = logs.size(last)
        mapped = _mapped_end(logs.dir / f"{last}.map")
        served = {"file": last, "position": position, "event_time": _iso(logs.last_event_time(last)),
                  "input_position": mapped if mapped is not None else position}
    relay, upstream = _relay(server.relay)
    clients = [{"id": cid, "user": user, "host": host, "server_id": server_id, "command": command,
                "file": file or None, "position": pos if file else None,
                "bytes_behind": state.behind(file, pos) if file else None, "connected_seconds": seconds}
               for cid, user, host, command, file, pos, seconds, server_id in server.status(server_ids=True)]
    return {"time": _iso(time.time()), "served": served, "relay": relay, "upstream": upstream,
            "behind_upstream": _behind(served, relay, upstream, logs), "clients": clients}


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _mapped_end(path: Path) -> int | None:
    """The input end of a rewrite map's last whole line (rewrite/position_map.py), read
    from the file's tail; None without a map."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(size - 4096, 0))
            tail = fh.read()
    except OSError:
        return None
    lines = [line for line in tail.split(b"\n")[:-1] if line and not line.startswith(b"#")]
    parts = lines[-1].split(b" ") if lines else []
    return int(parts[1]) if len(parts) == 4 and parts[1].isdigit() else None


def _relay(directory: Path | None) -> tuple[dict | None, dict | None]:
    if directory is None or not directory.is_dir():
        return None, None
    relay = RelayDir(directory, create=False)
    names = relay.names()
    last = None
    if names and (directory / names[-1]).exists():
        last = {"file": names[-1], "position": (directory / names[-1]).stat().st_size,
                "files": {n: (directory / n).stat().st_size for n in names if (directory / n).exists()}}
    upstream = relay.upstream()
    if upstream is not None:
        upstream = {"file": upstream.get("file"), "position": upstream.get("position"),
                    "event_time": _iso(upstream.get("event_time")),
                    "caught_up": upstream.get("caught_up"), "seen": _iso(upstream.get("updated"))}
    return last, upstream


def _behind(served: dict | None, relay: dict | None, upstream: dict | None, logs) -> dict | None:
    """Bytes of the upstream's binlogs from the served position to the upstream's, over
    the relay's files between; seconds since the last served event when there are some."""
    if upstream is None or relay is None or not isinstance(upstream.get("position"), int):
        return None
    sizes: dict = relay["files"]
    names = list(sizes)
    here_file = served["file"] if served else (names[0] if names else None)
    here = served["input_position"] if served else 4
    there_file, there = upstream["file"], upstream["position"]
    if here_file not in names or there_file not in names:
        return None
    first, final = names.index(here_file), names.index(there_file)
    if first == final:
        behind = max(there - here, 0)
    else:
        behind = max(sizes[here_file] - here, 0) + sum(sizes[n] - 4 for n in names[first + 1:final]) + there - 4
    seconds: int | None = 0
    if behind:
        event_time = logs.last_event_time(served["file"]) if served else None
        seconds = max(int(time.time() - event_time), 0) if event_time else None
    return {"bytes": behind, "seconds": seconds}


class StatusFile:
    """``--status FILE``: the status object written there every INTERVAL seconds by a
    thread of its own (to a temporary file renamed over it: a reader never sees half)."""

    def __init__(self, server: Any, path: str | os.PathLike):
        self.server = server
        self.path = Path(path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="serve-status")

    def start(self) -> None:
        self.write()
        self._thread.start()

    def write(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(status(self.server), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            try:
                self.write()
            except OSError as exc:
                self.server.log(f"binlog serve: cannot write --status {self.path}: {exc.strerror or exc}")

    def stop(self) -> None:
        self._stop.set()
