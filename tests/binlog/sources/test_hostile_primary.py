"""A hostile or broken primary in front of ``binlog fetch`` (and ``dump``/``stats``/``apply
--from``): a fake primary on loopback (tests/support/fake_primary.py) serves a real
sample binlog and attacks one step at a time.  In every case: the password never reaches
it unless the user allowed it, the relay never holds a bad event, stderr holds no control
character, no password and no traceback, and the run ends within its timeouts, in
bounded memory, with one error line and its exit code.
"""
from __future__ import annotations

import os
import re
import resource
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from support import fake_primary as fp

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"
FAST = "connect_timeout=2&read_timeout=2"
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f\x9b]")


class Run:
    def __init__(self, code: int, err: str, seconds: float):
        self.code, self.err, self.seconds = code, err, seconds


def binlog(*args, timeout: float = 60, memory: int | None = None) -> Run:
    """The command in a child process; its exit code, stderr and time.  ``memory``: a
    limit on its address space (RLIMIT_AS): going over it is a MemoryError, a traceback."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=limit if memory else None)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
    reader.start()
    while True:
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > timeout:
            proc.kill()
            os.waitpid(proc.pid, 0)
            reader.join()
            raise AssertionError(f"binlog {args[0]} still running after {timeout} s: "
                                 f"{b''.join(err)[-2000:]!r}")
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    return Run(proc.returncode, b"".join(err).decode("utf-8", "replace"), time.monotonic() - started)


def fetch(server: fp.FakePrimary, relay: Path, query: str = FAST, *extra, timeout: float = 60,
          memory: int | None = None) -> Run:
    return binlog("fetch", "--from", server.dsn(query=query), "--to", relay, "--server-id", "9",
                  "--retries", "0", "--heartbeat", "1", *extra, timeout=timeout, memory=memory)


def assert_clean_failure(run: Run, server: fp.FakePrimary, code: int) -> None:
    """One error line (and its hint), nothing a terminal would act on, no secret."""
    assert run.code == code, run.err
    assert "Traceback" not in run.err, run.err
    assert not CONTROL.search(run.err), repr(run.err)
    assert server.password.decode() not in run.err
    lines = [line for line in run.err.splitlines() if line.startswith("binlog: error:")]
    assert len(lines) == 1, run.err


def never_sent_password(server: fp.FakePrimary) -> None:
    assert server.password not in bytes(server.received)


# -- 1. the password ----------------------------------------------------------------------
class SwitchTo(fp.FakePrimary):
    """Logs in with native, then switches the client to ``target`` and reads its answer."""
    target = b"mysql_clear_password"
    answer_sent: bytes | None = None

    def authenticate(self, s):
        s.send(b"\xfe" + self.target + b"\0" + fp.SCRAMBLE + b"\0")
        self.answer_sent = s.recv_packet()
        s.send(fp.err(1045, b"Access denied"))
        return False


class SwitchToDialog(SwitchTo):
    target = b"dialog"


@pytest.mark.parametrize("server_class", [SwitchTo, SwitchToDialog])
def test_cleartext_methods_are_refused_without_tls(server_class, tmp_path):
    with server_class() as server:
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 5)
    assert "allow_cleartext_password" in run.err
    never_sent_password(server)


def test_cleartext_is_sent_when_the_user_allows_it(tmp_path):
    """The opt-in works (and so the refusal above is the rule, not a broken method)."""
    with SwitchTo() as server:
        run = fetch(server, tmp_path / "relay", FAST + "&allow_cleartext_password=1")
    assert run.code == 5
    assert server.answer_sent == server.password + b"\0"


class CachingSha2Full(fp.FakePrimary):
    """caching_sha2_password: asks for full authentication, offering its own key."""
    plugin = b"caching_sha2_password"
    key_pem: bytes = b""
    private_key = None
    got: bytes | None = None

    def authenticate(self, s):
        s.send(b"\x01\x04")                 # perform full authentication
        reply = s.recv_packet()
        if reply == b"\x02":                # the client asks for our key: we would read it
            s.send(b"\x01" + self.key_pem)
            reply = s.recv_packet()
        self.got = reply
        s.send(fp.err(1045, b"Access denied"))
        return False


def _rsa():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    return key, pem


def test_caching_sha2_full_authentication_never_uses_the_servers_key(tmp_path):
    with CachingSha2Full() as server:
        server.private_key, server.key_pem = _rsa()
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 5)
    assert "server_public_key" in run.err
    assert server.got is None              # nothing after the request for full authentication
    never_sent_password(server)


def test_caching_sha2_full_authentication_with_the_users_key(tmp_path):
    """With ?server_public_key=FILE the password goes RSA-OAEP-encrypted with that key:
    the fake server decrypts it with its private key (the real server's check)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    with CachingSha2Full() as server:
        server.private_key, server.key_pem = _rsa()
        key_file = tmp_path / "server.pem"
        key_file.write_bytes(server.key_pem)
        fetch(server, tmp_path / "relay", f"{FAST}&server_public_key={key_file}")
    assert server.got is not None and server.got != b"\x02"
    plain = server.private_key.decrypt(server.got, padding.OAEP(
        mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
    salt = fp.SCRAMBLE
    assert bytes(b ^ salt[i % 20] for i, b in enumerate(plain)) == server.password + b"\0"
    never_sent_password(server)


class Sha256Greeting(fp.FakePrimary):
    plugin = b"sha256_password"


class UnknownMethod(fp.FakePrimary):
    plugin = b"auth_from_mars"


@pytest.mark.parametrize("server_class", [Sha256Greeting, UnknownMethod])
def test_other_methods_are_refused_by_name(server_class, tmp_path):
    with server_class() as server:
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 5)
    never_sent_password(server)


def test_native_password_logs_in_and_proves_the_password(tmp_path):
    """The challenge-response reply is the one the server checks, not the password."""
    class Check(fp.FakePrimary):
        def authenticate(self, s):
            user_end = s.handshake.index(b"\0", 32)
            length = s.handshake[user_end + 1]
            self.proof = s.handshake[user_end + 2:user_end + 2 + length]
            s.send(fp.ok())
            return True

    with Check(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert run.code == 0, run.err
    assert server.proof == fp.native_scramble(server.password)
    never_sent_password(server)
    assert (tmp_path / "relay" / "mysql-bin.000001").read_bytes() == SAMPLE.read_bytes()


# -- 2. checksums -------------------------------------------------------------------------
class CorruptEvent(fp.FakePrimary):
    """Flips a byte inside event number ``bad`` (its CRC32 no longer matches)."""
    bad = 5

    def __init__(self, binlog):
        super().__init__(binlog)
        event = bytearray(self.events[self.bad])
        event[25] ^= 0x40
        self.events[self.bad] = bytes(event)


def test_fetch_stops_at_a_bad_checksum_and_keeps_only_good_events(tmp_path):
    with CorruptEvent(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 1)
    good = 4 + sum(len(e) for e in server.events[:server.bad])
    assert "CRC32" in run.err and f"@ {good}" in run.err
    assert (tmp_path / "relay" / "mysql-bin.000001").read_bytes() == SAMPLE.read_bytes()[:good]


# -- 3. server text -----------------------------------------------------------------------
class EscapingError(fp.FakePrimary):
    def answer(self, s, sql):
        s.send(fp.err(1105, b"\x1b]0;owned\x07\x1b[2J\x1b[1;31mfake prompt$ \r\n"
                      + self.password + b" \xe2\x80\xae evil"))


@pytest.mark.parametrize("command", ["fetch", "dump", "stats"])
def test_server_text_is_inert_and_without_the_password(command, tmp_path):
    with EscapingError() as server:
        if command == "fetch":
            run = fetch(server, tmp_path / "relay")
        else:
            run = binlog(command, "--from", server.dsn(query=FAST), "--server-id", "9",
                         "--source-retries", "0")
    assert_clean_failure(run, server, 5)
    assert "\\x1b" in run.err and "***" in run.err


@pytest.mark.server
def test_apply_from_a_hostile_primary(mariadb_server):
    """apply --from with a real target: the source's text is inert there too, and a
    silent source ends the run."""
    target = f"mysql://root@localhost/?unix_socket={mariadb_server.socket}"
    for server_class in (EscapingError, SilentQuery):
        with server_class(SAMPLE) as server:
            run = binlog("apply", "--from", server.dsn(query=FAST), "--server-id", "9",
                         "--source-retries", "0", "--to", target, timeout=40)
        assert_clean_failure(run, server, 5)


# -- 4. hangs -----------------------------------------------------------------------------
class SilentGreeting(fp.FakePrimary):
    def greeting(self, s):
        self.hold()


class SilentAuth(fp.FakePrimary):
    def authenticate(self, s):
        self.hold()
        return False


class SilentQuery(fp.FakePrimary):
    def answer(self, s, sql):
        self.hold()


class TrickleQuery(fp.FakePrimary):
    """Answers the first query one byte every 0.5 s: each byte resets a per-read
    timeout, never the step's deadline."""
    def answer(self, s, sql):
        data = b"".join(fp.packet(p, i + 1) for i, p in enumerate(
            fp.result_set([b"a", b"b", b"c"], [[b"10.11", b"1", b"CRC32"]])))
        self.trickle(s, data)


class SilentDump(fp.FakePrimary):
    def dump(self, s, request):
        s.send(b"\x00" + fp.fake_rotate(self.binlog_name, 4, True))
        self.hold()


class TrickleEvent(fp.FakePrimary):
    def dump(self, s, request):
        s.send(b"\x00" + fp.fake_rotate(self.binlog_name, 4, True))
        self.trickle(s, fp.packet(b"\x00" + self.events[0], s.seq))


class StallInsideALargeEvent(fp.FakePrimary):
    """Announces a 1 GiB event (its header in a full 16 MiB packet), sends 1 MiB of it,
    then nothing: what it announced earns it no time."""
    def dump(self, s, request):
        s.send(b"\x00" + fp.fake_rotate(self.binlog_name, 4, True))
        size = 1 << 30
        head = struct.pack("<IBIIIH", 0, 2, 1, size, (4 + size) & 0xFFFFFFFF, 0)
        s.sock.sendall(b"\xff\xff\xff" + bytes([s.seq]) + b"\x00" + head + b"q" * ((1 << 20) - 20))
        self.hold()


@pytest.mark.parametrize("server_class", [SilentGreeting, SilentAuth, SilentQuery, TrickleQuery,
                                          SilentDump, TrickleEvent, StallInsideALargeEvent])
def test_every_step_ends_within_its_timeout(server_class, tmp_path):
    with server_class(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay", timeout=40)
    assert_clean_failure(run, server, 5)
    assert run.seconds < 20, (run.seconds, run.err)
    assert "timed out" in run.err


class SteadyLargeEvent(fp.FakePrimary):
    """An honest 12 MiB event sent a MiB at a time, 0.75 s apart: 9 s for the packet,
    more than the dump's 7 s read timeout (--heartbeat 1), but bytes keep coming."""
    def dump(self, s, request):
        fde = self.events[0]
        s.send(b"\x00" + fp.fake_rotate(self.binlog_name, 4, True))
        s.send(b"\x00" + fde)
        size = 12 << 20
        head = struct.pack("<IBIIIH", 1700000000, 2, 1, size, 4 + len(fde) + size, 0)
        event = head + bytes(range(256)) * ((size - 23) // 256) + b"q" * ((size - 23) % 256)
        event += struct.pack("<I", zlib.crc32(event))
        wire = b"".join(fp.packet(part, s.seq + i) for i, part in
                        enumerate([(b"\x00" + event)[k:k + 0xFFFFFF] for k in range(0, size + 1, 0xFFFFFF)]))
        s.seq += (size + 1) // 0xFFFFFF + 1
        for k in range(0, len(wire), 1 << 20):
            if self._stop.wait(0.75):
                return
            s.sock.sendall(wire[k:k + (1 << 20)])
        s.send(fp.eof())


def test_a_large_event_that_keeps_coming_is_not_cut(tmp_path):
    """The dump's deadline moves with the bytes that arrive (sources/wire.MovingDeadline):
    a packet that takes longer than the read timeout in all, steadily, is taken whole."""
    with SteadyLargeEvent(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert run.code == 0, run.err
    relay = tmp_path / "relay" / server.binlog_name.decode()
    assert relay.stat().st_size == 4 + len(server.events[0]) + (12 << 20)
    assert run.seconds > 7


def test_stats_and_dump_from_a_silent_primary_end(tmp_path):
    with SilentQuery(SAMPLE) as server:
        for command in ("dump", "stats"):
            run = binlog(command, "--from", server.dsn(query=FAST), "--server-id", "9",
                         "--source-retries", "0", timeout=40)
            assert_clean_failure(run, server, 5)


# -- 5. memory ----------------------------------------------------------------------------
class PacketTrain(fp.FakePrimary):
    """An event whose header says 200 bytes, in a packet that says 16 MiB, then more
    16 MiB packets: the client must refuse at the first header, not after 1 GiB."""
    sent = 0

    def dump(self, s, request):
        s.send(b"\x00" + fp.fake_rotate(self.binlog_name, 4, True))
        head = struct.pack("<IBIIIH", 0, 2, 1, 200, 204, 0)
        chunk = b"\x00" + head + b"x" * (0xFFFFFF - 20)
        try:
            for _ in range(64):         # 1 GiB if the client kept reading
                s.sock.sendall(fp.packet(chunk, s.seq))
                s.seq += 1
                self.sent += len(chunk)
                chunk = b"y" * 0xFFFFFF
        except OSError:
            return


def test_a_packet_train_longer_than_its_event_is_refused_early(tmp_path):
    with PacketTrain(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay", memory=512 << 20)     # the train is 1 GiB
    assert_clean_failure(run, server, 5)
    assert "more than 201 bytes" in run.err
    assert server.sent < 200 * 0xFFFFFF // 64


# -- 6. ROTATE into a file that is not the relay's -----------------------------------------
class RotateElsewhere(fp.FakePrimary):
    binlog_name = b"notes.000001"


def test_a_rotate_cannot_take_over_a_file_outside_the_relay(tmp_path):
    relay = tmp_path / "relay"
    relay.mkdir()
    (relay / "notes.000001").write_bytes(b"abc")
    with RotateElsewhere(SAMPLE) as server:
        run = fetch(server, relay)
    assert_clean_failure(run, server, 1)
    assert "notes.000001" in run.err
    assert (relay / "notes.000001").read_bytes() == b"abc"


# -- 7. malformed replies ------------------------------------------------------------------
class Reply(fp.FakePrimary):
    """Answers the first query with ``payloads``."""
    payloads: list[bytes] = []

    def answer(self, s, sql):
        if sql.startswith("SELECT VERSION()"):
            for p in self.payloads:
                s.send(p)
        else:
            s.send(fp.ok())


def reply(*payloads) -> type:
    return type("R", (Reply,), {"payloads": list(payloads)})


MALFORMED = {
    "too few columns": reply(*fp.result_set([b"a", b"b"], [[b"1", b"1"]])),
    "too many columns": reply(*fp.result_set([b"a", b"b", b"c", b"d"], [[b"1", b"1", b"1", b"1"]])),
    "no row": reply(*fp.result_set([b"a", b"b", b"c"], [])),
    "two rows": reply(*fp.result_set([b"a", b"b", b"c"], [[b"10", b"1", b"CRC32"]] * 2)),
    "NULL log_bin": reply(*fp.result_set([b"a", b"b", b"c"], [[b"10", None, b"CRC32"]])),
    "odd log_bin": reply(*fp.result_set([b"a", b"b", b"c"], [[b"10", b"yes\x1b[2J", b"CRC32"]])),
    "odd checksum": reply(*fp.result_set([b"a", b"b", b"c"], [[b"10", b"1", b"MD5"]])),
    "OK for rows": reply(fp.ok()),
    "short row": reply(*fp.result_set([b"a", b"b", b"c"], [])[:5], b"\x05ab", fp.eof()),
    "column count 0xFF": reply(b"\xff"),
    "huge column count": reply(b"\xfc\xff\xff"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_replies_are_typed_errors(case, tmp_path):
    with MALFORMED[case](SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 5)


class BadGreeting(fp.FakePrimary):
    payload = b""

    def greeting(self, s):
        s.send(self.payload)


GREETINGS = {
    "empty": b"",
    "protocol 9": b"\x09" + fp.greeting()[1:],
    "no NUL after version": b"\x0a10.11.6-MariaDB",
    "non-numeric version": fp.greeting(version=b"\x1b[31mten\x00\xff"),
    "cut after capabilities": fp.greeting()[:40],
    "cut scramble": fp.greeting()[:-40],
    "no secure connection": fp.greeting(caps=fp.CAPS & ~0x8000),
    "error instead": fp.err(1129, b"Host is blocked \x1b[2J"),
}


@pytest.mark.parametrize("case", sorted(GREETINGS))
def test_malformed_greetings_are_typed_errors(case, tmp_path):
    server_class = type("G", (BadGreeting,), {"payload": GREETINGS[case]})
    with server_class(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert_clean_failure(run, server, 5)
    never_sent_password(server)


def test_a_fake_rotate_with_a_bad_checksum_is_refused(tmp_path):
    class BadRotate(fp.FakePrimary):
        def dump(self, s, request):
            rotate = bytearray(fp.fake_rotate(self.binlog_name, 4, True))
            rotate[-1] ^= 1
            s.send(b"\x00" + bytes(rotate))
            s.send(fp.eof())

    with BadRotate(SAMPLE) as server:
        run = fetch(server, tmp_path / "relay")
    assert run.code in (1, 5) and "Traceback" not in run.err
    assert not (tmp_path / "relay" / "mysql-bin.000001").exists()


def test_crc_helper_matches_zlib():
    """The fake primary's ROTATE is a real one: its CRC32 is zlib's over the event."""
    event = fp.fake_rotate(b"mysql-bin.000001", 4, True)
    assert struct.unpack("<I", event[-4:])[0] == zlib.crc32(event[:-4])


# -- PyMySQL connections: --schema-from and a replay target follow the same rules ----------
def test_schema_from_a_primary_that_asks_for_the_password_in_clear(tmp_path):
    with SwitchTo() as server:
        run = binlog("dump", "--schema-from", server.dsn(query=FAST), SAMPLE)
    assert_clean_failure(run, server, 5)
    assert "allow_cleartext_password" in run.err
    never_sent_password(server)


def test_a_target_that_wants_the_password_with_its_own_key(tmp_path):
    with CachingSha2Full() as server:
        server.private_key, server.key_pem = _rsa()
        run = binlog("apply", SAMPLE, "--to", server.dsn(query=FAST))
    assert_clean_failure(run, server, 5)
    assert "server_public_key" in run.err
    assert server.got in (None, b"\x02")        # asked for the key at most, never sent anything
    never_sent_password(server)
