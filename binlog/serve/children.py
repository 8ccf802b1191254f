"""The long-running helpers of ``binlog serve``: ``binlog fetch --stop-never`` keeping a
relay of the upstream, ``binlog rewrite --follow`` rewriting the relay as it grows.  Each
runs as a child process of its own (a failure in one - an upstream down, a legacy
column whose precision no schema gives - never stops serve, which keeps serving what is
already there), is restarted with back-off (1, 2, 4 ... 30 s) when it ends, and its
stderr lines go to serve's log, made inert.  Both commands resume by themselves where
their output ends, so a restart repeats and loses nothing.

A child's command line is readable by every local user (/proc/PID/cmdline), so the
upstream's password never goes there: the child's DSN names ``?password_file=/dev/fd/N``
and the password is written into a pipe the child inherits as fd N, afresh at each
start."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

from ..inert import inert

#: in a child's argv, replaced by the number of the fd its secret is read from
SECRET_FD = "{secret_fd}"


class Child:
    def __init__(self, name: str, argv: list[str], log: Callable[[str], None],
                 secret: str | None = None):
        self.name = name
        self.argv = argv
        self.log = log
        self.secret = secret
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, daemon=True, name=f"serve-{name}")

    def start(self) -> None:
        self._thread.start()

    def _supervise(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            self.proc = self._spawn()
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log(f"{self.name}: {inert(line.rstrip(), limit=400)}")
            code = self.proc.wait()
            if self._stop.is_set():
                return
            self.restarts += 1
            self.log(f"{self.name} ended (exit {code}); restarting in {delay:g} s")
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, 30.0)

    def _spawn(self) -> subprocess.Popen:
        if self.secret is None:
            return self._popen(self.argv, ())
        read_end, write_end = os.pipe()
        try:
            # a password is far below a pipe's buffer (64 KiB on Linux): this never blocks
            os.write(write_end, self.secret.encode("utf-8") + b"\n")
            os.close(write_end)
            write_end = -1
            argv = [arg.replace(SECRET_FD, str(read_end)) for arg in self.argv]
            return self._popen(argv, (read_end,))
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    @staticmethod
    def _popen(argv: list[str], fds: tuple[int, ...]) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "binlog.cli", *argv], pass_fds=fds,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, errors="replace")

    def stop(self) -> None:
        self._stop.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=5)
