"""The listener of ``binlog serve``: accepts clients on loopback or any address, one
thread per client, at most ``max_clients`` at once (one more is told "Too many
connections" and closed), a log line per connect and disconnect, KILL between clients,
and a clean stop (SIGTERM: no new client, every session ended, the threads joined).
"""
from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from ..protocol import constants as pc, server_side as s
from ..sources.served import ServedLogs
from .queries import ServeState
from .session import Limits, Session, SessionInfo


def load_users(path: str | Path | None) -> dict[str, str]:
    """A users file: one account a line, ``name *HASH`` (the ``PASSWORD()`` form of a
    mysql_native_password, as ``binlog serve --hash-password`` prints it); ``#`` starts
    a comment.  No anonymous account: an empty name is refused."""
    users: dict[str, str] = {}
    if path is None:
        return users
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"--users {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, stored = line.rpartition(" ")
        name = name.strip()
        if not name or not stored.startswith("*") or len(stored) != 41:
            raise UsageError(f"--users {path} line {number}: expected 'name *HASH' (41 characters "
                             f"of hash, as binlog serve --hash-password prints)")
        users[name] = stored.upper()
    if not users:
        raise UsageError(f"--users {path}: no account (nobody could log in)")
    return users


class Server:
    def __init__(self, logs: ServedLogs, *, server_id: int, users: dict[str, str],
                 listen: tuple[str, int], limits: Limits | None = None, max_clients: int = 64,
                 tls: ssl.SSLContext | None = None, log: Callable[[str], None] = print,
                 full_metadata: bool = False, upstream: dict | None = None):
        self.logs = logs
        self.server_id = server_id
        self.users = users
        self.limits = limits or Limits()
        self.max_clients = max_clients
        self.tls = tls
        self.log = log
        self.full_metadata = full_metadata
        self.upstream = upstream
        self.sessions: dict[int, SessionInfo] = {}
        self._lock = threading.Lock()
        self._next_id = 1
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        try:
            self.listener = socket.create_server(listen, reuse_port=False)
        except OSError as exc:
            raise UsageError(f"--listen {listen[0]}:{listen[1]}: {exc.strerror or exc}") from None
        self.address = self.listener.getsockname()[:2]
        self._state_cache: tuple[float, ServeState] | None = None

    def state(self) -> ServeState:
        """The served binlogs' facts, computed at most every 0.2 s whatever the clients ask."""
        now = time.monotonic()
        if self._state_cache is not None and now - self._state_cache[0] < 0.2:
            return self._state_cache[1]
        names = self.logs.names()
        files = [(n, self.logs.size(n)) for n in names]
        info = self.logs.info(names[-1]) if names else None
        with self._lock:
            replicas = [(i.server_id, i.host, 0, self.server_id) for i in self.sessions.values() if i.server_id]
        state = ServeState(self.server_id, info.server_version if info else "10.11.0-MariaDB-log",
                           info.checksum if info else False, files, self.logs.gtid_state(),
                           replicas=replicas, clients=self.status(), full_metadata=self.full_metadata,
                           max_clients=self.max_clients)
        self._state_cache = (now, state)
        return state

    def status(self) -> list[tuple]:
        """(id, user, host, command, file, position, seconds) of each client."""
        with self._lock:
            return [(i.id, i.user, i.host, i.command, i.file, i.position, int(time.time() - i.started))
                    for i in self.sessions.values()]

    def kill(self, target: int, user: str) -> bool:
        """KILL from a client: ends another session of the same user."""
        with self._lock:
            info = self.sessions.get(target)
        if info is None or info.user != user:
            return False
        info.stop.set()
        return True

    def serve_forever(self) -> None:
        self.listener.settimeout(0.2)
        self.log(f"binlog serve: listening on {self.address[0]}:{self.address[1]}, serving {self.logs.dir}")
        while not self._stop.is_set():
            try:
                sock, peer = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            self._start(sock, f"{peer[0]}:{peer[1]}")
        self._shutdown()

    def _start(self, sock: socket.socket, host: str) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            if len(self.sessions) >= self.max_clients:
                full = True
            else:
                full = False
                info = SessionInfo(self._next_id, host)
                self._next_id += 1
                self.sessions[info.id] = info
        if full:
            self._refuse(sock)
            return
        session = Session(sock, info, logs=self.logs, state=self.state, users=self.users,
                          limits=self.limits, log=self.log, kill=self.kill, tls=self.tls,
                          upstream=self.upstream)
        thread = threading.Thread(target=self._run, args=(session,), daemon=True,
                                  name=f"serve-client-{info.id}")
        self._threads.append(thread)
        thread.start()

    def _refuse(self, sock: socket.socket) -> None:
        try:
            sock.settimeout(1.0)
            data = s.error(pc.ER_CON_COUNT_ERROR, "Too many connections")
            sock.sendall(len(data).to_bytes(3, "little") + b"\0" + data)
        except OSError:
            pass            # it is being refused: whether it heard why is its business
        finally:
            sock.close()
        self.log(f"binlog serve: refused a client: {self.max_clients} connected already")

    def _run(self, session: Session) -> None:
        try:
            session.run()
        finally:
            with self._lock:
                self.sessions.pop(session.info.id, None)

    def stop(self) -> None:
        self._stop.set()

    def _shutdown(self) -> None:
        self.listener.close()
        with self._lock:
            for info in self.sessions.values():
                info.stop.set()
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=5)
        self.log("binlog serve: stopped")
