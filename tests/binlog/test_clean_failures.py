"""Each failure an operator can meet is one clear line on stderr and a
documented exit code (docs/troubleshooting.md "Exit codes"), never a traceback: unreadable input (a real
EIO from the kernel), an empty file, an empty FIFO, a directory without binlogs, unusable
schema stores, malformed DSNs on every command that takes one, a refused or denied
connection, a full disk, and `ingest --to` paths Spark cannot use."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from replay_helpers import REPO, cli

SAMPLE = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"

BAD_DSNS = ["mysql://root@127.0.0.1:notaport/", "mysql://root@127.0.0.1:99999/",
            "mysql://root@[::1/", "mysql://root@127.0.0.1/?connect_timeout=abc"]


def _dsn_commands(dsn, tmp):
    return [
        ["dump", "--schema-from", dsn, SAMPLE],
        ["stats", "--schema-from", dsn, SAMPLE],
        ["schema", "import", "--schema-store", tmp / "s.db", "--schema-from", dsn],
        ["apply", "--to", dsn, SAMPLE],
        ["verify-rows", "--against", dsn, SAMPLE],
        ["ingest", "--to", tmp / "out", "--schema-from", dsn, SAMPLE],
        ["fetch", "--from", dsn, "--server-id", "99", "--to", tmp / "relay"],
        ["dump", "--from", dsn, "--server-id", "99"],
    ]


def _cases():
    cases = []
    for i, dsn in enumerate(BAD_DSNS):
        for j, command in enumerate(_dsn_commands(dsn, Path("/tmp"))):
            cases.append(pytest.param(("dsn", i, j), 2, "bad DSN", id=f"{command[0]}{j}-dsn{i}"))
    cases += [
        pytest.param(("eio",), 1, "read failed: Input/output error", id="eio"),
        pytest.param(("empty",), 1, "empty input (0 bytes): not a binlog", id="empty-file"),
        pytest.param(("fifo",), 1, "empty input (0 bytes): not a binlog", id="empty-fifo"),
        pytest.param(("no-binlogs",), 2, "no binlog files in directory", id="no-binlogs"),
        pytest.param(("store-dir",), 1, "is a directory, not an SQLite file", id="store-dir"),
        pytest.param(("store-corrupt",), 1, "not an SQLite database", id="store-corrupt"),
        pytest.param(("store-under-file",), 1, "cannot create or open", id="store-under-file"),
        pytest.param(("refused",), 5, "Connection refused", id="verify-refused"),
        pytest.param(("full", "json"), 1, "No space left on device", id="full-json"),
        pytest.param(("full", "sql"), 1, "No space left on device", id="full-sql"),
        pytest.param(("full-stats",), 1, "No space left on device", id="full-stats"),
        pytest.param(("to-under-file",), 2, "exists and is not a directory", id="ingest-to-file"),
        pytest.param(("to-glob",), 2, "may not contain *", id="ingest-to-glob"),
    ]
    return cases


def _argv(case, tmp):
    kind = case[0]
    if kind == "dsn":
        return _dsn_commands(BAD_DSNS[case[1]], tmp)[case[2]], None
    if kind == "eio":
        # /proc/self/mem is a regular file whose read at offset 0 (an unmapped address)
        # fails with EIO: the kernel's own I/O error, no simulation
        return ["dump", "/proc/self/mem"], None
    if kind == "empty":
        (tmp / "empty.000001").write_bytes(b"")
        return ["dump", tmp / "empty.000001"], None
    if kind == "fifo":
        fifo = tmp / "fifo"
        os.mkfifo(fifo)

        def writer():           # a writer that closes without writing anything
            os.close(os.open(fifo, os.O_WRONLY))
        return ["dump", fifo], writer
    if kind == "no-binlogs":
        (tmp / "d").mkdir()
        (tmp / "d" / "notes.txt").write_text("x")
        return ["dump", tmp / "d"], None
    if kind == "store-dir":
        return ["dump", "--schema-store", tmp, SAMPLE], None
    if kind == "store-corrupt":
        (tmp / "bad.db").write_bytes(b"SQLite format 3\0" + b"\xff" * 4000)
        return ["dump", "--schema-store", tmp / "bad.db", SAMPLE], None
    if kind == "store-under-file":
        (tmp / "plain").write_text("x")
        return ["schema", "show", "--schema-store", tmp / "plain" / "s.db"], None
    if kind == "refused":
        return ["verify-rows", "--against", "mysql://root@127.0.0.1:1/", SAMPLE], None
    if kind == "full":
        return ["dump", "--format", case[1], SAMPLE], None
    if kind == "full-stats":
        return ["stats", SAMPLE], None
    if kind == "to-under-file":
        (tmp / "plain").write_text("x")
        return ["ingest", "--to", tmp / "plain" / "out", SAMPLE], None
    if kind == "to-glob":
        return ["ingest", "--to", tmp / "out*", SAMPLE], None
    raise AssertionError(kind)


def _run(argv, stdout):
    """The CLI as a subprocess, its stdout to ``stdout`` (None: captured)."""
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, argv)], cwd=REPO,
                          stdout=stdout if stdout else subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=120)


@pytest.mark.parametrize("case, code, words", _cases())
def test_failure_is_a_message_and_an_exit_code(tmp_path, case, code, words):
    argv, writer = _argv(case, tmp_path)
    thread = threading.Thread(target=writer) if writer else None
    if thread:
        thread.start()
    stdout = open("/dev/full", "wb") if case[0].startswith("full") else None
    try:
        done = _run(argv, stdout)
    finally:
        if thread:
            thread.join(10)
        if stdout:
            stdout.close()
    err = done.stderr.decode()
    assert done.returncode == code, err
    assert words in err, err
    assert "Traceback" not in err and err.startswith("binlog: error:"), err
    assert err.count("\n") <= 3, err     # one message (and a hint), not a stack


@pytest.mark.server
def test_verify_rows_access_denied_is_exit_5(mariadb_server):
    dsn = f"mysql://nobody:wrong@127.0.0.1:{mariadb_server.port}/"
    done = cli("verify-rows", "--against", dsn, SAMPLE)
    err = done.stderr.decode()
    assert done.returncode == 5, err
    assert "Access denied" in err and "Traceback" not in err and "wrong" not in err
