"""python-mysql-replication (PyPI ``mysql-replication``) through serve: see pmr_stream.py
for how it is run and how its values become text."""
from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

from support.compat import Change, Run, Runner, Target

STREAM = Path(__file__).resolve().parent / "pmr_stream.py"


def run(target: Target) -> Run:
    done = subprocess.run([sys.executable, str(STREAM), target.host, str(target.port), target.user,
                           target.binlog.name, str(target.start_pos), target.start_after or ""],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TZ": "UTC", "PMR_PASSWORD": target.password})
    result = Run()
    for line in done.stdout.splitlines():
        record = json.loads(line)
        if "error" in record:
            result.errors.append((record["gtid"], record["error"]))
            result.finished = False
        else:
            result.changes.append(Change(record["table"], record["op"],
                                         None if record["before"] is None else tuple(record["before"]),
                                         None if record["after"] is None else tuple(record["after"]),
                                         record["gtid"]))
    if done.returncode != 0:
        result.errors.append((None, done.stderr.strip().splitlines()[-1][:300] if done.stderr.strip() else
                              f"exit {done.returncode}"))
        result.finished = False
    return result


RUNNERS = [Runner("python-mysql-replication", "network", lambda: importlib.metadata.version("mysql-replication"),
                  run, "BinLogStreamReader(is_mariadb=True), non-blocking; datetime, timedelta and date "
                       "values written as the server writes them")]
