"""Authentication methods of the client, in a table keyed by the method's name, with the
one rule that matters against a hostile server: **the password is revealed only where
the user allowed it**.

A server picks the method (in its greeting, or later with an authentication switch), so
a hostile one picks the method that gives it the password: ``mysql_clear_password`` and
``dialog`` send it as it is, and the full authentication of ``caching_sha2_password`` /
``sha256_password`` sends it as it is over TLS, or encrypted with an RSA key the server
itself supplies (so the server reads it).  Here:

- ``mysql_native_password``, the fast path of ``caching_sha2_password`` and MariaDB's
  ``client_ed25519`` are challenge-response: the reply proves the password without
  revealing it (sql/sql_acl.cc native_password_authenticate; sql/auth/sha2_password.cc
  for MySQL; plugin/auth_ed25519/server_ed25519.c for MariaDB);
- the full path of ``caching_sha2_password`` and ``sha256_password`` send the password
  only over a *secure* channel (TLS with a verified certificate, or a unix socket, as the
  MySQL clients count them), or encrypted with the public key the user gave
  (``?server_public_key=FILE``); never with a key the server sends;
- ``mysql_clear_password`` and ``dialog`` only with ``?allow_cleartext_password=1``, the
  same opt-in the MySQL clients ask for (``--enable-cleartext-plugin``), or over a
  secure channel;
- anything else (``mysql_old_password``, ``auth_gssapi_client``, ``parsec``, an unknown
  name) is refused by name.

A refusal is ``ServerAccessError``: it says which method the server asked for and what
the user can do; the password is in no message.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ServerAccessError, ServerProtocolError, UsageError
from ..inert import inert
from .constants import NATIVE_PASSWORD

STEP = "authenticating"


@dataclass(frozen=True)
class Credentials:
    user: str
    password: bytes
    secure: bool                        # verified TLS or a unix socket
    public_key: bytes | None = None     # the user's copy of the server's RSA key (PEM)
    allow_cleartext: bool = False


class Method:
    """One authentication method: ``start`` gives the first reply to the server's
    scramble; ``more`` answers an AuthMoreData packet (None: nothing to send, wait)."""
    name = ""

    def __init__(self, cred: Credentials, scramble: bytes):
        self.cred = cred
        self.scramble = scramble
        self.rounds = 0

    def start(self) -> bytes:
        raise NotImplementedError

    def more(self, data: bytes) -> bytes | None:
        raise ServerProtocolError(f"{STEP}: the server sent more authentication data for "
                                  f"{self.name}, which takes none", step=STEP)


def _sha1(*parts: bytes) -> bytes:
    return hashlib.sha1(b"".join(parts)).digest()


def _sha256(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


class NativePassword(Method):
    """SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))) (sql/password.c scramble)."""
    name = NATIVE_PASSWORD

    def start(self) -> bytes:
        if not self.cred.password:
            return b""
        stage1 = _sha1(self.cred.password)
        return _xor(stage1, _sha1(self.scramble[:20], _sha1(stage1)))


class CachingSha2(Method):
    """Fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble); the
    server answers 0x03 (known, OK follows) or 0x04 (full authentication: the password
    itself is needed) (MySQL sql/auth/sha2_password.cc, client caching_sha2_password_auth_client)."""
    name = "caching_sha2_password"

    def start(self) -> bytes:
        if not self.cred.password:
            return b""
        digest = _sha256(self.cred.password)
        return _xor(digest, _sha256(_sha256(digest), self.scramble[:20]))

    def more(self, data: bytes) -> bytes | None:
        self.rounds += 1
        if data == b"\x03" and self.rounds == 1:
            return None                     # fast authentication succeeded
        if data == b"\x04" and self.rounds == 1:
            return full_password(self.cred, self.scramble, self.name)
        raise ServerProtocolError(f"{STEP}: unexpected {self.name} data from the server "
                                  f"({len(data)} bytes)", step=STEP)


class Sha256Password(Method):
    """The password in clear over a secure channel, else RSA-encrypted with the user's
    copy of the server's key (MySQL sql/auth/sha2_password.cc sha256_password_authenticate)."""
    name = "sha256_password"

    def start(self) -> bytes:
        if not self.cred.password:
            return b"\0"
        return full_password(self.cred, self.scramble, self.name)


class Ed25519(Method):
    """MariaDB's ed25519: an Ed25519 signature of the server's 32-byte nonce whose secret
    scalar comes from SHA-512(password) as a seed of any length (plugin/auth_ed25519/ref10
    sign.c crypto_sign: az = SHA512(pw), clamped; r = SHA512(az[32:] + m); S = r + H(R+A+m)*a),
    so the server checks it against the stored public key and learns nothing of the
    password.  The group arithmetic is libsodium's, through PyNaCl (the ``ed25519`` extra,
    as PyMySQL does it)."""
    name = "client_ed25519"

    def start(self) -> bytes:
        try:
            from nacl import bindings as sodium
        except ImportError:
            raise ServerAccessError("the account uses MariaDB's ed25519 authentication, which "
                                    "needs the PyNaCl package", code=None,
                                    hint="pip install 'binlog-temporal[ed25519]'") from None
        if len(self.scramble) < 32:
            raise ServerProtocolError(f"{STEP}: an ed25519 nonce of {len(self.scramble)} bytes, "
                                      f"not 32", step=STEP)
        nonce = self.scramble[:32]
        az = bytearray(hashlib.sha512(self.cred.password).digest())
        az[0] &= 248
        az[31] &= 63
        az[31] |= 64
        a = bytes(az[:32])
        r = sodium.crypto_core_ed25519_scalar_reduce(hashlib.sha512(bytes(az[32:]) + nonce).digest())
        big_r = sodium.crypto_scalarmult_ed25519_base_noclamp(r)
        big_a = sodium.crypto_scalarmult_ed25519_base_noclamp(a)
        k = sodium.crypto_core_ed25519_scalar_reduce(hashlib.sha512(big_r + big_a + nonce).digest())
        return big_r + sodium.crypto_core_ed25519_scalar_add(sodium.crypto_core_ed25519_scalar_mul(k, a), r)


class ClearPassword(Method):
    """The password as it is, NUL-terminated (KB "Authentication Plugin - mysql_clear_password")."""
    name = "mysql_clear_password"

    def start(self) -> bytes:
        cleartext_allowed(self.cred, self.name)
        return self.cred.password + b"\0"


class Dialog(Method):
    """MariaDB's PAM conversation: the server asks questions (a flag byte, the prompt);
    every answer is the password (plugin/auth_pam, client plugin dialog.c)."""
    name = "dialog"
    MAX_QUESTIONS = 3

    def start(self) -> bytes:
        cleartext_allowed(self.cred, self.name)
        return self.cred.password + b"\0"

    def more(self, data: bytes) -> bytes | None:
        self.rounds += 1
        if self.rounds > self.MAX_QUESTIONS:
            raise ServerProtocolError(f"{STEP}: the server asked more than {self.MAX_QUESTIONS} "
                                      f"dialog questions", step=STEP)
        return self.start()


def cleartext_allowed(cred: Credentials, method: str) -> None:
    if not cred.password or cred.secure or cred.allow_cleartext:
        return
    raise ServerAccessError(
        f"the server asks for the password in clear text ({method}) over a connection that "
        f"is not secure; refused", code=None,
        hint="connect over TLS with a verified certificate (?ssl_ca=FILE) or a unix socket, "
             "or accept the risk with ?allow_cleartext_password=1 in the DSN")


def full_password(cred: Credentials, scramble: bytes, method: str) -> bytes:
    """The password itself: in clear over a secure channel, else RSA-OAEP-encrypted
    (XORed with the scramble first) with the key the user gave."""
    if cred.secure:
        return cred.password + b"\0"
    if cred.public_key is None:
        raise ServerAccessError(
            f"the server asks for the password itself ({method} full authentication) over a "
            f"connection that is not secure; sending it encrypted with a key the server "
            f"supplies would let the server read it: refused",
            hint="connect over TLS with a verified certificate (?ssl_ca=FILE) or a unix socket, "
                 "or give the server's RSA public key: ?server_public_key=FILE (the server's "
                 "caching_sha2_password_public_key_path / sha256_password_public_key_path)")
    return rsa_encrypt(cred.public_key, _xor_repeat(cred.password + b"\0", scramble[:20]))


def _xor_repeat(data: bytes, key: bytes) -> bytes:
    return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))


def rsa_encrypt(pem: bytes, data: bytes) -> bytes:
    """RSA with OAEP padding (SHA-1, MGF1-SHA-1), as MySQL 8.0.5+ expects (mysys
    my_rsa_encrypt with RSA_PKCS1_OAEP_PADDING)."""
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
    except ImportError:
        raise UsageError("?server_public_key needs the 'cryptography' package: "
                         "pip install 'binlog-temporal[crypt]'") from None
    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError:
        raise UsageError("?server_public_key: the file is not a PEM public key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise UsageError("?server_public_key: the file is not an RSA public key")
    return key.encrypt(data, padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(),
                                          label=None))


METHODS: dict[str, Callable[[Credentials, bytes], Method]] = {
    cls.name: cls for cls in (NativePassword, CachingSha2, Sha256Password, Ed25519, ClearPassword,
                              Dialog)
}


def method(name: str, cred: Credentials, scramble: bytes) -> Method:
    """The method ``name`` (an empty name: the protocol's default, native)."""
    factory = METHODS.get(name or NativePassword.name)
    if factory is None:
        raise ServerAccessError(f"the server asks for authentication method {inert(name, limit=64)!r}, "
                                f"which this client does not support",
                                hint="give the replication user a mysql_native_password, "
                                     "ed25519 or caching_sha2_password account")
    return factory(cred, scramble)
