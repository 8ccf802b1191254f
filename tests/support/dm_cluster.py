"""A real, throw-away DM cluster on loopback: one ``dm-master`` (its embedded etcd in a temp
dir) and one ``dm-worker``, driven with ``dmctl``, for the tests that run DM through
``binlog serve``.  The binaries are the ``dm-8.5`` peer (tests/peers/build.py, built from the
Go module proxy).  Ports are chosen by the OS, so several clusters can run at once::

    with DMCluster(peer_dir, tmp) as dm:
        dm.create_source(source_yaml)
        dm.start_task(task_yaml)
        dm.query_status("task")     # dmctl's JSON answer

Configuration keys are DM's own (dm/master/config.go, dm/worker/config.go of pingcap/tiflow).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from .sql_harness import free_port

__all__ = ["DMCluster", "DMError"]


class DMError(RuntimeError):
    """DM could not be started, or dmctl failed (the message has its output or the logs)."""


_CHECK_RESULT = re.compile(r'"checkResult": "(.*)"\s*\}\s*$', re.S)


def _toml(values: dict[str, Any]) -> str:
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())


class DMCluster:
    """dm-master + dm-worker in ``tmp`` (configs, data, logs), stopped by ``stop()``."""

    def __init__(self, bin_dir: Path, tmp: Path) -> None:
        self.bin_dir = Path(bin_dir)
        self.tmp = Path(tmp)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.master_addr = f"127.0.0.1:{free_port()}"
        peer_url = f"http://127.0.0.1:{free_port()}"
        self.worker_addr = f"127.0.0.1:{free_port()}"
        (self.tmp / "dm-master.toml").write_text(_toml({
            "name": "master1", "master-addr": self.master_addr, "advertise-addr": self.master_addr,
            "peer-urls": peer_url, "advertise-peer-urls": peer_url,
            "initial-cluster": f"master1={peer_url}", "data-dir": str(self.tmp / "master-data"),
            "log-file": str(self.tmp / "dm-master.log")}))
        (self.tmp / "dm-worker.toml").write_text(_toml({
            "name": "worker1", "worker-addr": self.worker_addr, "advertise-addr": self.worker_addr,
            "join": self.master_addr, "log-file": str(self.tmp / "dm-worker.log"),
            "relay-dir": str(self.tmp / "relay")}))
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, timeout: float = 120) -> "DMCluster":
        self._spawn("dm-master")
        self._wait(lambda: self.dmctl("list-member", "--master").get("result"), "dm-master", timeout)
        self._spawn("dm-worker")
        self._wait(lambda: any(w.get("name") == "worker1" and w.get("stage") != "offline"
                               for w in self._workers()), "dm-worker", timeout)
        return self

    def _spawn(self, name: str) -> None:
        out = open(self.tmp / f"{name}.stdout", "ab")
        try:
            self.procs[name] = subprocess.Popen(
                [str(self.bin_dir / name), "--config", str(self.tmp / f"{name}.toml")],
                cwd=self.tmp, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            out.close()

    def _wait(self, ready, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise DMError(f"{name} exited ({proc.returncode}):\n{self.log_tail(name)}")
            try:
                if ready():
                    return
            except DMError:
                pass
            time.sleep(0.5)
        raise DMError(f"{what} not ready after {timeout:.0f} s:\n{self.log_tail(what)}")

    def _workers(self) -> list[dict[str, Any]]:
        members = self.dmctl("list-member", "--worker").get("members") or []
        return [w for m in members for w in (m.get("worker") or {}).get("workers") or []]

    def log_tail(self, name: str, lines: int = 60) -> str:
        path = self.tmp / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        out = self.tmp / f"{name}.stdout"
        text += out.read_text(errors="replace") if out.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def dmctl(self, *args: str, timeout: float = 120) -> dict[str, Any]:
        """dmctl's JSON answer to one command (``dmctl --master-addr ADDR ARGS...``)."""
        done = subprocess.run([str(self.bin_dir / "dmctl"), "--master-addr", self.master_addr, *args],
                              capture_output=True, text=True, timeout=timeout, cwd=self.tmp)
        start = done.stdout.find("{")
        if start < 0:
            raise DMError(f"dmctl {' '.join(args)}: exit {done.returncode}\n{done.stdout}{done.stderr}")
        text = done.stdout[start:]
        # start-task's checkResult is the checker's JSON report pasted into a string unescaped
        # (dm/ctl/common/util.go PrettyPrintResponse): re-quote it
        text = _CHECK_RESULT.sub(lambda m: f'"checkResult": {json.dumps(m.group(1))}\n}}', text)
        try:
            return json.loads(text, strict=False)
        except json.JSONDecodeError as exc:
            raise DMError(f"dmctl {' '.join(args)}: not JSON ({exc})\n{done.stdout}{done.stderr}") from None

    def checked(self, *args: str) -> dict[str, Any]:
        """dmctl's answer, which must say ``"result": true``."""
        answer = self.dmctl(*args)
        if not answer.get("result"):
            raise DMError(f"dmctl {' '.join(args)} failed: {json.dumps(answer, indent=1)[:6000]}")
        return answer

    def create_source(self, path: Path) -> dict[str, Any]:
        return self.checked("operate-source", "create", str(path))

    def start_task(self, path: Path) -> dict[str, Any]:
        return self.checked("start-task", str(path))

    def query_status(self, task: str) -> dict[str, Any]:
        return self.dmctl("query-status", task)

    def stop(self) -> None:
        for name in ("dm-worker", "dm-master"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def __enter__(self) -> "DMCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
