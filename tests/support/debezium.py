"""Debezium's MariaDB connector as the tests run it (the ``debezium`` peer of
tests/peers/build.py: the embedded engine, file offsets, file schema history, change events
as JSON lines), and Debezium's temporal encodings turned back into the server's own text.

Debezium's encodings (``time.precision.mode=adaptive_time_microseconds``, the default;
debezium-connector-binlog ``BinlogValueConverters``, debezium-core ``io.debezium.time``):

- DATETIME(0..3): ``io.debezium.time.Timestamp``, epoch milliseconds of the wall-clock value
  read as UTC; DATETIME(4..6): ``MicroTimestamp``, epoch microseconds;
- TIMESTAMP(N): ``ZonedTimestamp``, an ISO-8601 string in UTC (``2022-11-02T11:11:22.326Z``);
- TIME(N): ``MicroTime``, signed microseconds (``-838:59:59`` is -3020399000000);
- a DATETIME or TIMESTAMP whose date has a zero month or day (``0000-00-00 ...``,
  ``2022-00-00 ...``) is null ("Invalid value ... converted to empty value",
  ``containsZeroValuesInDatePart``), except the zero TIMESTAMP read from a binlog: it is 0
  seconds since the epoch there (sql/field.cc Field_timestamp stores the zero value as 0),
  and Debezium gives ``1970-01-01T00:00:00Z``.

``server_text`` turns such a value back into ``CAST(col AS CHAR)``'s text with the column's
N digits; ``matches`` compares one with the server's text under the rules above.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

EPOCH = datetime(1970, 1, 1)
CONNECTOR = "io.debezium.connector.mariadb.MariaDbConnector"
#: a short-lived JVM on a shared 2-core machine: the C1 compiler only and the serial
#: collector start it in less CPU than the defaults (tests run it dozens of times)
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto")
EPOCH_TEXT = "1970-01-01 00:00:00"


def properties(*, port: int, user: str, password: str, workdir: Path, server_id: int,
               **extra: str) -> dict[str, str]:
    """A complete set of the embedded engine's properties for one pipeline (docs/serve.md
    shows the same)."""
    props = {
        "name": "legacy",
        "connector.class": CONNECTOR,
        "database.hostname": "127.0.0.1",
        "database.port": str(port),
        "database.user": user,
        "database.password": password,
        "database.server.id": str(server_id),
        "database.ssl.mode": "disable",
        "topic.prefix": "legacy",
        "database.include.list": "rw",
        "snapshot.mode": "initial",
        "time.precision.mode": "adaptive_time_microseconds",
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(workdir / "schema-history.dat"),
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(workdir / "offsets.dat"),
        "offset.flush.interval.ms": "200",
        # the binlog client reconnects a lost connection (serve restarting) within seconds
        "connect.keep.alive.interval.ms": "5000",
    }
    props.update(extra)
    return props


@dataclass
class Change:
    """One change event: its table, op (r c u d), before and after images and source block."""
    table: str
    op: str
    before: dict | None
    after: dict | None
    source: dict
    fields: dict[str, dict] = field(default_factory=dict)    # column -> its schema (type, name)


class Debezium:
    """The runner jar in a child process, writing JSON lines into ``output``."""

    def __init__(self, jar: Path, props: dict[str, str], workdir: Path, output: Path):
        workdir.mkdir(parents=True, exist_ok=True)
        self.output = output
        self.log_path = workdir / f"{output.stem}.log"
        path = workdir / f"{output.stem}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self._log = open(self.log_path, "a")
        self.proc = subprocess.Popen(["java", *JVM_OPTIONS, "-jar", str(jar), "--output", str(output), "--properties", str(path)],
                                     stdout=self._log, stderr=self._log, stdin=subprocess.DEVNULL)

    def lines(self) -> list[dict]:
        if not self.output.exists():
            return []
        text = self.output.read_text()
        return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines() if line]

    def changes(self) -> list[Change]:
        return changes(self.lines())

    def completed(self) -> dict | None:
        """The engine's last line, when it stopped: success, message, error."""
        done = [line for line in self.lines() if line.get("engine") == "completed"]
        return done[-1] if done else None

    def wait_for(self, predicate, timeout: float = 180, what: str = "the events") -> list[Change]:
        """Wait until ``predicate(changes)`` holds; fail with the engine's end or log."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.changes()
            if predicate(got):
                return got
            done = self.completed()
            if done is not None or self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"Debezium did not deliver {what}: {len(got)} changes, "
                                     f"engine {done}, log tail:\n{self.log_tail()}")
            time.sleep(0.3)

    def wait_end(self, timeout: float = 180) -> dict:
        deadline = time.monotonic() + timeout
        while self.completed() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"Debezium did not stop:\n{self.log_tail()}")
            time.sleep(0.3)
        self.proc.wait(timeout=60)
        self._log.close()
        done = self.completed()
        assert done is not None
        return done

    def stop(self) -> dict:
        """A clean stop (SIGTERM: the engine commits its offsets)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_end()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def log_tail(self, n: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-n:]


def read_to_end(engine: Debezium, file: str, end: int, limit: float = 120.0) -> dict:
    """Let a connector started at a served binlog's start read it: until the engine stops
    by itself, or a record's offset says it has read the whole of ``file`` (``end`` bytes;
    a heartbeat's: Debezium makes one after any event once heartbeat.interval.ms has
    passed, serve's own heartbeats at the end included), then a clean stop.  How the
    engine ended (its "completed" line)."""
    deadline = time.monotonic() + limit
    while engine.completed() is None and time.monotonic() < deadline:
        if any(_past(line.get("offset") or {}, file, end) for line in engine.lines()):
            break
        time.sleep(0.3)
    return engine.completed() or engine.stop()


def _past(offset: dict, file: str, end: int) -> bool:
    """An offset at ``file``'s end, or in a later file (its closing ROTATE names the next)."""
    name = offset.get("file") or ""
    return name > file or (name == file and offset.get("pos", 0) >= end)


def changes(lines: list[dict]) -> list[Change]:
    """The row change events of the runner's lines (not tombstones, schema changes or the
    engine's own lines)."""
    out = []
    for line in lines:
        value = line.get("value")
        if not isinstance(value, dict) or "op" not in (value.get("payload") or {}):
            continue
        payload = value["payload"]
        fields = {}
        for part in value["schema"]["fields"]:
            if part["field"] in ("before", "after"):
                fields = {f["field"]: f for f in part["fields"]}
        out.append(Change(payload["source"]["table"], payload["op"], payload["before"], payload["after"],
                          payload["source"], fields))
    return out


def server_text(value, schema: dict, n: int) -> str | None:
    """A Debezium value as ``CAST(col AS CHAR)`` prints it with the column's N digits
    (raises ValueError when Debezium's value has digits N cannot hold)."""
    if value is None:
        return None
    name = schema.get("name") or ""
    if name == "io.debezium.time.ZonedTimestamp":
        found = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", value)
        if not found:
            raise ValueError(f"not a ZonedTimestamp: {value!r}")
        micros = int((found.group(3) or "").ljust(9, "0")[:9])
        if micros % 1000:
            raise ValueError(f"nanoseconds in {value!r}")
        day = found.group(1)
        if f"{day} {found.group(2)}" == EPOCH_TEXT and not micros:
            day = "0000-00-00"      # the zero TIMESTAMP (0 seconds) read from a binlog
        return f"{day} {found.group(2)}" + _fraction(micros // 1000, n)
    if name == "io.debezium.time.Timestamp":
        return _datetime(value * 1000, n)
    if name == "io.debezium.time.MicroTimestamp":
        return _datetime(value, n)
    if name == "io.debezium.time.MicroTime":
        sign = "-" if value < 0 else ""
        seconds, micros = divmod(abs(value), 1_000_000)
        return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" + _fraction(micros, n)
    return str(value)


def _datetime(micros: int, n: int) -> str:
    m = EPOCH + timedelta(microseconds=micros)
    return (f"{m.year:04d}-{m.month:02d}-{m.day:02d} {m.hour:02d}:{m.minute:02d}:{m.second:02d}"
            + _fraction(m.microsecond, n))


def _fraction(micros: int, n: int) -> str:
    digits = f"{micros:06d}"
    if digits[n:].strip("0"):
        raise ValueError(f"a fraction of {digits} in a column of {n} digits")
    return "." + digits[:n] if n else ""


def zero_date(text: str | None) -> bool:
    """A DATETIME/TIMESTAMP text whose date has a zero month or day (Debezium: null)."""
    return bool(text) and re.match(r"\d{4}-(00-|\d\d-00)", text) is not None


def matches(want: str | None, got, schema: dict, n: int) -> bool:
    """Debezium's ``got`` is the server's ``want`` under the rules of this module."""
    if zero_date(want) and got is None:
        return True         # Debezium's empty value for a zero date
    try:
        return server_text(got, schema, n) == want
    except ValueError:
        return False
