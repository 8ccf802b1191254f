"""Runs of rows events written by one compiled call (``_speedups.encode_run``,
``reader.run_writer``): ``binlog dump --format json|text`` must give the same bytes as the
event-by-event batch path (BINLOG_BATCH=0: the per-row writers) and the pure-Python path,
on a real server's binlog whose statements span many 8 KiB rows events - several tables
and kinds per transaction, GTIDs, an ALTER between transactions (a new TABLE_MAP layout
for a table), NULLs, keys (pk), and every option that changes a row's line."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from binlog.stream_runs import RunModes

pytestmark = [pytest.mark.server, pytest.mark.usefixtures("compiled")]

OPTIONS = [[], ["--with-types"], ["--binary-encoding", "base64"], ["--rewrite-db", "cr->other"],
           ["--stop-position", "200000"], ["--no-verify-checksum"], ["--format", "text"],
           ["--format", "text", "--binary-encoding", "base64", "--stop-position", "200000"]]


@pytest.fixture(scope="module")
def binlog_and_counts(tmp_path_factory):
    from support.compiled import require_compiled
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_compiled()                  # before the server: without the build there is no subject
    require_mariadbd()
    with MariaDBServer({"binlog_format": "ROW", "binlog_row_metadata": "FULL"}) as srv:
        yield _workload(srv, tmp_path_factory.mktemp("runs"))


def _workload(srv, tmp):
    from support.workloads import runs_workload

    expected = runs_workload(srv)
    path = tmp / "runs.binlog"
    path.write_bytes(srv.binlog_files()[-2].read_bytes())
    return path, expected


def dump(path, options, **env):
    import os

    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *options, str(path)],
                          capture_output=True, env={**os.environ, **env}, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc.stdout


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "default")
def test_runs_write_what_the_per_row_path_writes(binlog_and_counts, options):
    path, expected = binlog_and_counts
    runs = dump(path, options)
    assert runs == dump(path, options, BINLOG_BATCH="0")
    if options == ["--format", "text"]:
        assert runs == dump(path, options, BINLOG_PURE="1")
    if not options:
        assert runs == dump(path, options, BINLOG_PURE="1")
        rows = [json.loads(line) for line in runs.splitlines()]
        got = Counter((f"{r['db']}.{r['table']}", r["op"]) for r in rows if r["op"] != "ddl")
        assert got == expected          # the server's affected rows
        assert all(r["pk"] == ["id"] for r in rows if r["op"] != "ddl")
        last = {}
        for r in rows:                  # one commit per transaction, on its last row
            if r["op"] != "ddl":
                last[r["gtid"]] = r
        assert all(r["commit"] is True and r["xid"] is not None for r in last.values())
        assert sum(r["commit"] is True for r in rows if r["op"] != "ddl") == 3


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_runs_are_long(binlog_and_counts, monkeypatch, fmt):
    """The binlog does exercise runs: most rows events go through encode_run."""
    from binlog.cli import main

    path, _ = binlog_and_counts
    written = []
    original = RunModes._encode

    def spy(self, *args):
        got = original(self, *args)
        if got is not None:
            written.append(len(got[0].events))
        return got
    monkeypatch.setattr(RunModes, "_encode", spy)
    out = open("/dev/null", "w")
    monkeypatch.setattr(sys, "stdout", out)
    try:
        assert main(["dump", "--quiet", "--format", fmt, str(path)]) == 0
    finally:
        out.close()
    stats = subprocess.run([sys.executable, "-m", "binlog.cli", "stats", "--json", str(path)],
                           capture_output=True, check=True).stdout
    events = sum(t["rows_events"] for t in json.loads(stats)["tables"].values())
    # all but the first event of each table and kind in each transaction
    assert sum(written) >= 0.8 * events and max(written) >= 8, (written, events)
