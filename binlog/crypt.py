"""Encrypted MariaDB binlogs (``encrypt_binlog=ON``): keys and per-event decryption, sans-IO.

What the server writes (MariaDB 10.1.7+; cited files are in github.com/MariaDB/server):

- After the FORMAT_DESCRIPTION, in clear, a START_ENCRYPTION_EVENT: scheme u8 (1),
  key_version u32, nonce[12] (``sql/log_event.h`` Start_encryption_log_event,
  ``sql/rpl_constants.h`` BINLOG_NONCE_LENGTH).  Every later event is encrypted alone.
- The key is the encryption plugin's key id 1 (ENCRYPTION_KEY_SYSTEM_DATA) at that key
  version (``sql/rpl_constants.h`` Binlog_crypt_data::init).
- IV = nonce + the event's file offset as u32 LE (``Binlog_crypt_data::set_iv``).
- The writer computes the CRC32 over the *plain* event, moves the 4 timestamp bytes
  over the event-length field, encrypts bytes 4.. (event size - 4 bytes, the CRC
  included, no padding), and writes the 4 length bytes in clear at offset 9 with the
  first 4 encrypted bytes moved to the start (``sql/log_event_server.cc``
  Log_event_writer::write_header / maybe_write_event_len).  The reader undoes it:
  ``sql/log_event.cc`` Log_event::read_log_event, ``memcpy(src + EVENT_LEN_OFFSET, src,
  4)``, decrypt ``src + 4``, then timestamp back, length back.  So the checksum is
  checked over the decrypted bytes (verified on real files by tests/binlog/test_crypt.py).
- The cipher is the plugin's: file_key_management uses AES-CBC or AES-CTR by
  ``file_key_management_encryption_algorithm``
  (``plugin/file_key_management/file_key_management_plugin.cc`` mode(): CTR when no
  padding is asked for), with the key's length choosing AES-128/192/256.  CBC without
  padding encrypts a last partial block by XOR with AES-ECB(key, IV)
  (``mysys_ssl/my_crypt.cc`` MyCTX_nopad::finish).  The binlog does not record which:
  ``EventDecryptor`` tries both on the first encrypted event and keeps the one whose
  plain event passes its checks (known type, log_pos = its end, CRC32).

Key files (``plugin/file_key_management/parser.cc``): lines ``id;hex`` (16, 24 or 32
bytes), ``#`` comments, blank lines; optionally encrypted as ``openssl enc -aes-256-cbc
-md sha1 -k SECRET`` writes it: ``Salted__`` + 8-byte salt + AES-256-CBC with PKCS#7
padding, key and IV from EVP_BytesToKey(SHA1, 1 round) (Parser::bytes_to_key); the
secret may be ``FILE:path`` (its first 256 bytes, trailing CR/LF dropped,
Parser::read_filekey).  Newer plugins add ``file_key_management_digest`` and
``file_key_management_use_pbkdf2`` (openssl enc -md / -pbkdf2 -iter), mirrored here.

file_key_management has key version 1 only ("no automatic key rotation",
get_latest_version); rotating its key means a new key file (and a restart), so a
``KeyRing`` keeps every key given for an id and version and each binlog file uses the
one that decrypts it.  Nothing here prints key bytes or secrets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .constants import HEADER_LEN
from .errors import DecryptionError, KeyFileError, MissingKeyError, UsageError
from .header import event_crc

SYSTEM_KEY_ID = 1               # ENCRYPTION_KEY_SYSTEM_DATA: the binlog's key id
NONCE_LEN = 12                  # BINLOG_NONCE_LENGTH
ALGORITHMS = ("cbc", "ctr")
DIGESTS = ("sha1", "sha224", "sha256", "sha384", "sha512")
MAX_KEY_FILE_SIZE = 1 << 20     # parser.cc MAX_KEY_FILE_SIZE
MAX_SECRET_SIZE = 256           # parser.cc MAX_SECRET_SIZE
SALTED = b"Salted__"
_BLOCK = 16


def _cipher_module():
    """The ``cryptography`` package's cipher primitives (an optional dependency: the
    ``crypt`` extra), with a usage error saying how to get it."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        raise UsageError("reading encrypted binlogs needs the 'cryptography' package: "
                         "pip install 'binlog-temporal[crypt]'") from None
    return Cipher, algorithms, modes


# --- key files -------------------------------------------------------------------------
def parse_key_file(text: bytes, name: str) -> dict[int, bytes]:
    """``id;hex`` lines -> {id: key}, by parser.cc's rules (Parser::parse_line): leading
    blanks, ``#`` comments, ids 1..2**32-1, keys of 16/24/32 bytes, anything after the
    hex digits ignored.  Errors name the line and column, never the key."""
    keys: dict[int, bytes] = {}
    for number, line in enumerate(text.split(b"\n"), 1):
        stripped = line.lstrip(b" \t\r\v\f")
        if not stripped or stripped.startswith(b"#"):
            continue
        column = len(line) - len(stripped) + 1
        digits = len(stripped) - len(stripped.lstrip(b"0123456789"))
        if not digits:
            raise KeyFileError(f"{name} line {number}, column {column}: syntax error "
                               f"(expected a key id)")
        key_id = int(stripped[:digits])
        if not 1 <= key_id <= 0xFFFFFFFF:
            raise KeyFileError(f"{name} line {number}, column {column}: invalid key id")
        rest = stripped[digits:]
        if not rest.startswith(b";"):
            raise KeyFileError(f"{name} line {number}, column {column + digits}: syntax "
                               f"error (expected ';' after the key id)")
        hexpart = rest[1:]
        n = len(hexpart) - len(hexpart.lstrip(b"0123456789abcdefABCDEF"))
        if n not in (32, 48, 64):
            raise KeyFileError(f"{name} line {number}: invalid key for id {key_id} "
                               f"({n} hex digits; keys have 32, 48 or 64)")
        keys[key_id] = bytes.fromhex(hexpart[:n].decode("ascii"))
    if not keys:
        raise KeyFileError(f"{name}: no key in it; is it a file_key_management key file?")
    # The plugin also refuses a file without key id 1 ("System key id 1 is missing");
    # here a binlog that needs it says so (MissingKeyError), naming the id and version.
    return keys


def read_secret(data: bytes) -> bytes:
    """The secret in a ``FILE:`` file: its first 256 bytes, trailing CR/LF dropped
    (Parser::read_filekey)."""
    secret = data[:MAX_SECRET_SIZE + 1].rstrip(b"\r\n")
    if len(secret) > MAX_SECRET_SIZE:
        raise KeyFileError(f"the file key is longer than {MAX_SECRET_SIZE} bytes")
    return secret


def _bytes_to_key(secret: bytes, salt: bytes, digest: str) -> tuple[bytes, bytes]:
    """OpenSSL EVP_BytesToKey(md, count=1) for AES-256-CBC: 32 key + 16 IV bytes
    (Parser::bytes_to_key)."""
    import hashlib  # (here, not at import: OpenSSL's load is ~2 ms of every start-up)

    out, block = b"", b""
    while len(out) < 48:
        block = hashlib.new(digest, block + secret + salt).digest()
        out += block
    return out[:32], out[32:48]


def decrypt_key_file(data: bytes, secret: bytes, name: str, *, digest: str = "sha1",
                     pbkdf2_iterations: int = 0) -> bytes:
    """The plain text of a key file encrypted by ``openssl enc -aes-256-cbc -md DIGEST
    [-pbkdf2 -iter N] -k SECRET`` (parser.cc read_and_decrypt_file)."""
    if not data.startswith(SALTED) or len(data) < 16 + _BLOCK:
        raise KeyFileError(f"{name}: not an encrypted key file (no 'Salted__' header) "
                           f"but a key file secret was given")
    if digest not in DIGESTS:
        raise UsageError(f"unknown key file digest {digest!r} (one of {', '.join(DIGESTS)})")
    salt, body = data[8:16], data[16:]
    if len(body) % _BLOCK:
        raise KeyFileError(f"{name}: encrypted key file of {len(data)} bytes is truncated")
    if pbkdf2_iterations:
        import hashlib

        both = hashlib.pbkdf2_hmac(digest, secret, salt, pbkdf2_iterations, 48)
        key, iv = both[:32], both[32:]
    else:
        key, iv = _bytes_to_key(secret, salt, digest)
    Cipher, algorithms, modes = _cipher_module()
    dec = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    plain = dec.update(body) + dec.finalize()
    pad = plain[-1]
    # A wrong secret leaves random bytes: valid padding by chance (about 1 in 256) is
    # caught by the text check, key files being ASCII text.
    if (not 1 <= pad <= _BLOCK or plain[-pad:] != bytes([pad]) * pad
            or not _TEXT.fullmatch(plain[:-pad])):
        raise KeyFileError(f"{name}: cannot decrypt the key file: wrong secret "
                           f"(or digest/PBKDF2 settings)")
    return plain[:-pad]


_TEXT = re.compile(rb"[\t\n\r\x20-\x7e]*")


@dataclass
class KeyRing:
    """Keys by (key id, key version); several per pair when several key files were
    given (an old and a new key 1).  ``algorithm``: "cbc", "ctr" or None (detect)."""
    keys: dict = field(default_factory=dict)     # (id, version) -> [key bytes, ...]
    algorithm: str | None = None
    sources: list = field(default_factory=list)  # key file names, for messages

    def add_file(self, keys: dict[int, bytes], name: str, version: int = 1) -> None:
        for key_id, key in keys.items():
            found = self.keys.setdefault((key_id, version), [])
            if key not in found:
                found.append(key)
        self.sources.append(name)

    def candidates(self, key_id: int, version: int) -> list[bytes]:
        return list(self.keys.get((key_id, version), ()))

    def __repr__(self) -> str:      # never the key bytes
        pairs = ", ".join(f"{i}v{v}" for i, v in sorted(self.keys))
        return f"KeyRing(keys=[{pairs}], algorithm={self.algorithm!r})"

    __str__ = __repr__

    # Plain data (hex) to ship to Spark executors inside the read plan.
    def to_dict(self) -> dict:
        return {"keys": [[i, v, [k.hex() for k in ks]] for (i, v), ks in self.keys.items()],
                "algorithm": self.algorithm, "sources": list(self.sources)}

    @classmethod
    def from_dict(cls, data: dict) -> "KeyRing":
        ring = cls(algorithm=data.get("algorithm"), sources=list(data.get("sources", ())))
        for key_id, version, keys in data.get("keys", ()):
            ring.keys[(int(key_id), int(version))] = [bytes.fromhex(k) for k in keys]
        return ring


def check_algorithm(name: str | None) -> str | None:
    if name is None or name == "auto":
        return None
    low = name.lower().replace("aes_", "").replace("aes-", "")
    if low not in ALGORITHMS:
        raise UsageError(f"unknown encryption algorithm {name!r} (cbc, ctr or auto)")
    return low


# --- per-event decryption --------------------------------------------------------------
class _Cipher:
    """AES with one key in one mode, as my_aes_crypt does it without padding.

    Both modes run on one AES-ECB context per key (a new CBC/CTR context per event costs
    more than decrypting a typical event): CBC is D(C_i) xor C_(i-1) with C_(-1) = IV,
    CTR XORs with the encrypted counter blocks IV, IV+1, ... (128-bit big-endian, as
    OpenSSL counts); long CTR events use a CTR context, which makes its counters in C."""

    _CTR_BY_ECB = 32        # blocks up to which CTR counters are made here

    def __init__(self, key: bytes, algorithm: str):
        Cipher, algorithms, modes = _cipher_module()
        self._Cipher, self._modes = Cipher, modes
        self._aes = algorithms.AES(key)
        self.algorithm = algorithm
        self._ecb_enc = Cipher(self._aes, modes.ECB()).encryptor()
        self._ecb_dec = Cipher(self._aes, modes.ECB()).decryptor()

    def decrypt(self, data, iv: bytes) -> bytes:
        data = bytes(data)
        if self.algorithm == "ctr":
            return self._ctr(data, iv)
        whole = len(data) - len(data) % _BLOCK
        out = b""
        if whole:
            out = _xor(self._ecb_dec.update(data[:whole]), iv + data[:whole - _BLOCK])
        if whole < len(data):
            # MyCTX_nopad::finish: the partial last block is XORed with AES-ECB(key, IV).
            out += _xor(data[whole:], self._ecb_enc.update(iv))
        return out

    def _ctr(self, data: bytes, iv: bytes) -> bytes:
        blocks = -(-len(data) // _BLOCK)
        if blocks > self._CTR_BY_ECB:
            return self._Cipher(self._aes, self._modes.CTR(iv)).decryptor().update(data)
        first = int.from_bytes(iv, "big")
        counters = b"".join(((first + i) & _U128).to_bytes(_BLOCK, "big") for i in range(blocks))
        return _xor(data, self._ecb_enc.update(counters))


_U128 = (1 << 128) - 1


def _xor(data: bytes, mask: bytes) -> bytes:
    """data xor the first len(data) bytes of mask."""
    n = len(data)
    return (int.from_bytes(data, "little") ^ int.from_bytes(mask[:n], "little")).to_bytes(n, "little")


def _to_cipher_order(event) -> bytes:
    """The encrypted stream of a stored event: the 4 bytes at the length field are the
    first 4 encrypted bytes written (Log_event_writer::maybe_write_event_len)."""
    return bytes(event[4:9]) + bytes(event[0:4]) + bytes(event[13:])


def _to_event_order(plain: bytes, size: int) -> bytearray:
    """Plain event from the decrypted stream: the timestamp was moved to the length
    field (Log_event::read_log_event: ``memcpy(dst, dst + EVENT_LEN_OFFSET, 4)``)."""
    out = bytearray(plain[5:9])
    out += plain[0:5]
    out += size.to_bytes(4, "little")
    out += plain[9:]
    return out


def plain_header_bytes(first16: bytes, size: int) -> bytes:
    """The 19 header bytes from the first 15 decrypted ones and the clear size."""
    return bytes(first16[5:9]) + bytes(first16[0:5]) + size.to_bytes(4, "little") + bytes(first16[9:15])


@dataclass
class EventDecryptor:
    """Decrypts the events of one binlog file after its START_ENCRYPTION_EVENT."""
    nonce: bytes
    key_version: int
    candidates: list                    # [_Cipher, ...] still possible
    source: str = "<bytes>"
    detected: bool = False              # candidates[0] decrypted the first event

    @classmethod
    def start(cls, ring: KeyRing, scheme: int, key_version: int, nonce: bytes,
              source: str) -> "EventDecryptor":
        if scheme != 1:
            raise DecryptionError(f"unknown binlog encryption scheme {scheme} (MariaDB "
                                  f"writes 1)", key_id=SYSTEM_KEY_ID, key_version=key_version)
        keys = ring.candidates(SYSTEM_KEY_ID, key_version)
        if not keys:
            have = sorted(v for i, v in ring.keys if i == SYSTEM_KEY_ID)
            raise MissingKeyError(
                f"the binlog is encrypted with key id {SYSTEM_KEY_ID} version {key_version}, "
                f"which no key file given has" + (f" (key id 1 versions there: {have})" if have else ""),
                key_id=SYSTEM_KEY_ID, key_version=key_version,
                hint="give the server's key file with --key-file (file_key_management keys "
                     "are version 1; other key management plugins' keys cannot be read)")
        algorithms = [ring.algorithm] if ring.algorithm else list(ALGORITHMS)
        ciphers = [_Cipher(k, a) for k in keys for a in algorithms]
        return cls(bytes(nonce), key_version, ciphers, source)

    @property
    def key_id(self) -> int:
        return SYSTEM_KEY_ID

    @property
    def algorithm(self) -> str | None:
        return self.candidates[0].algorithm if self.detected else None

    def describe(self) -> str:
        text = describe_key(self.key_id, self.key_version)
        algorithm = self.algorithm
        return text + (f", AES-{algorithm.upper()}" if algorithm is not None else "")

    def iv(self, offset: int) -> bytes:
        return self.nonce + (offset & 0xFFFFFFFF).to_bytes(4, "little")

    def decrypt(self, event, offset: int, cipher: "_Cipher | None" = None) -> bytearray:
        """The plain bytes of the whole encrypted event stored at ``offset``."""
        size = len(event)
        plain = (cipher or self.candidates[0]).decrypt(_to_cipher_order(event), self.iv(offset))
        return _to_event_order(plain, size)

    def detect(self, event, offset: int, plausible) -> bytearray | None:
        """Decrypt the first encrypted event with every candidate key and algorithm and
        keep the one whose plain event ``plausible(plain)`` accepts; None: none did."""
        for cipher in self.candidates:
            plain = self.decrypt(event, offset, cipher)
            if plausible(plain):
                self.candidates = [cipher]
                self.detected = True
                return plain
        return None

    def plain_prefix(self, stored, offset: int, size: int, n: int) -> bytes | None:
        """The first ``n`` plain bytes (at most ``size``) of the event of ``size`` bytes
        stored at ``offset``, from as few stored bytes as that takes (a prefix of whole
        AES blocks; all of a short event); None when ``stored`` is shorter than needed."""
        cipher = self.candidates[0]
        n = min(n, size)
        stream_len = size - 4
        want = -(-max(n - 4, 0) // _BLOCK) * _BLOCK     # whole blocks of the stream
        if cipher.algorithm == "cbc" and want > stream_len - stream_len % _BLOCK:
            want = stream_len                 # the masked partial block needs it all
        want = min(want, stream_len)
        if len(stored) < 4 + want:
            return None
        stream = _to_cipher_order(stored[:4 + want])[:want]
        plain = cipher.decrypt(stream, self.iv(offset))
        return bytes(_to_event_order(plain, size)[:n]) if n >= 13 else None

    def peek_header(self, head, offset: int, size: int) -> bytes | None:
        """Plain header bytes of the event at ``offset`` from its first 20 stored bytes
        (all of it when shorter); None when fewer are given."""
        return self.plain_prefix(head, offset, size, HEADER_LEN)


def crc_ok(plain) -> bool:
    """The CRC32 footer of a plain event (FDE in-use flag cleared, as written)."""
    if len(plain) < HEADER_LEN + 4:
        return False
    return event_crc(plain) == int.from_bytes(plain[-4:], "little")


def describe_key(key_id: int, key_version: int) -> str:
    return f"key id {key_id} version {key_version}"


def key_fingerprint(key: bytes) -> str:
    """A short, non-reversible name for a key (for 'which key file matched' notes)."""
    import hashlib

    return hashlib.sha256(b"binlog-temporal key " + key).hexdigest()[:12]


__all__ = ["KeyRing", "EventDecryptor", "parse_key_file", "decrypt_key_file", "read_secret",
           "check_algorithm", "crc_ok", "ALGORITHMS", "DIGESTS", "SYSTEM_KEY_ID", "NONCE_LEN",
           "DecryptionError", "MissingKeyError", "KeyFileError"]
