"""``binlog serve --binlogs DIR`` sends files named as the server names its binlogs
(BASE.NNNNNN): an index naming any other file (``x.binlog``) is a clear error - at start,
or for the client asking once the index has changed - never a dump that waits forever for
a file it will not send."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

from support.paths import write_index
from support.serve_process import PASSWORD, REPO, Serve

SAMPLE = REPO / "samples" / "mariadb-10.11" / "legacy_temporal.binlog"


def served_dir(directory: Path, name: str) -> Path:
    directory.mkdir()
    shutil.copyfile(SAMPLE, directory / name)
    write_index(directory, [name])
    return directory


def test_serve_refuses_at_start_an_index_naming_an_odd_file(tmp_path):
    directory = served_dir(tmp_path / "odd", "x.binlog")
    users = tmp_path / "users"
    users.write_text(f"repl *{hashlib.sha1(hashlib.sha1(PASSWORD.encode()).digest()).hexdigest().upper()}\n")
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "serve", "--binlogs", str(directory),
                             "--listen", "127.0.0.1:0", "--server-id", "100", "--users", str(users)],
                            cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:         # serve is up, waiting for clients: no error at start
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert "mariadb-bin.index names 'x.binlog', not a binlog name" in stderr, stderr[-2000:]
    assert "listening" not in stderr


def test_a_dump_fails_when_the_index_comes_to_name_an_odd_file(tmp_path):
    """The index changes under a running serve (a relay's is rewritten by hand): the dump
    that asks next gets the error, in bounded time, and serve's log says why."""
    directory = served_dir(tmp_path / "served", "mariadb-bin.000001")
    serve = Serve(directory, tmp_path)
    try:
        (directory / "mariadb-bin.000001").rename(directory / "x.binlog")
        (directory / "mariadb-bin.index").write_text("./x.binlog\n")
        time.sleep(0.3)         # past serve's cache of its state (0.2 s)
        done = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                               "--port", str(serve.port), "--user", "repl", f"--password={PASSWORD}",
                               "--raw", "--stop-never", "--result-file", f"{tmp_path}/",
                               "mariadb-bin.000001"], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        assert "names 'x.binlog', not a binlog name" in done.stderr, done.stderr[-2000:]
    finally:
        serve.stop()
    assert "names 'x.binlog', not a binlog name" in serve.text()
