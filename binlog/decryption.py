"""The encrypted part of one binlog file, as ``EventStream`` reads it (sans-IO).

A START_ENCRYPTION_EVENT (in clear, after the FORMAT_DESCRIPTION) says every later event
is encrypted alone, with the IV of its own file offset (``binlog.crypt``; the server:
``sql/log_event.cc`` Log_event::read_log_event, ``sql/rpl_constants.h``
Binlog_crypt_data).  ``Decryption`` holds what that event starts: the decryptor (the
key ring's candidates, then the key and algorithm that fit) and how far the stream's
buffer holds plain bytes.  It decrypts events in the buffer, in place, and gives plain
headers for a look; the stream keeps the framing (the size in clear at offset +9), the
checks of what a plain event looks like (passed in as ``check(plain) -> bool``) and what
a failure means (damage, resync, errors).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .constants import LOG_EVENT_IGNORABLE_F
from .errors import EncryptedBinlogError, MalformedEventError, WrongKeyError
from .header import EventHeader, parse_header

if TYPE_CHECKING:                # crypt is imported when a binlog turns out encrypted
    from .crypt import EventDecryptor, KeyRing
    from .events import StartEncryptionEvent

#: A check of a decrypted event (a bytearray of the whole event).
PlainCheck = Callable[[bytearray], bool]


class Decryption:
    """The decryption state of one file from its START_ENCRYPTION_EVENT on."""

    def __init__(self, decryptor: EventDecryptor, plain_end: int):
        self.decryptor = decryptor
        self.plain_end = plain_end      # absolute offset up to which the buffer holds plain bytes

    @classmethod
    def start(cls, keys: KeyRing | None, event: StartEncryptionEvent,
              source: str) -> Decryption | None:
        """What ``event`` starts (None: nothing, what follows is plain).  Raises
        EncryptedBinlogError without keys, DecryptionError/MissingKeyError when the
        keys cannot decrypt this scheme and key version."""
        from .crypt import SYSTEM_KEY_ID, EventDecryptor

        if event.header.flags & LOG_EVENT_IGNORABLE_F:
            # Sent over replication: the dump thread decrypts every event it sends and
            # marks this one ignorable ("Make it Ignorable_log_event and send it",
            # sql/sql_repl.cc send_format_descriptor_event): what follows is plain.
            return None
        if keys is None:
            raise EncryptedBinlogError(
                f"the binlog is encrypted (scheme {event.scheme}, key id {SYSTEM_KEY_ID} "
                f"version {event.key_version}); events after this point cannot be read "
                f"without the server's key", field_offset=event.offset,
                hint="give the server's file_key_management key file: --key-file FILE "
                     "(and --key-file-key SECRET|FILE:path if it is encrypted)")
        return cls(EventDecryptor.start(keys, event.scheme, event.key_version, event.nonce, source),
                   event.header.end)

    def encrypted(self, offset: int) -> bool:
        """The bytes at ``offset`` are still encrypted."""
        return offset >= self.plain_end

    @property
    def detected(self) -> bool:
        """The key and algorithm are known (the first encrypted event decrypted)."""
        return self.decryptor.detected

    def describe(self) -> str:
        """Key id, version and (once known) algorithm, for messages."""
        return self.decryptor.describe()

    def header(self, buf: bytearray, i: int, offset: int) -> EventHeader | None:
        """The plain header of the still encrypted event at buffer index ``i`` (stored
        at ``offset``; the key known); None: fewer than its first 20 bytes are buffered."""
        size = int.from_bytes(buf[i + 9:i + 13], "little")
        head = self.decryptor.peek_header(buf[i:i + 20], offset, size)
        return parse_header(head, 0, offset) if head is not None else None

    def decrypt_next(self, buf: bytearray, i: int, offset: int, size: int,
                     check: PlainCheck) -> bool:
        """Decrypt the event of ``size`` bytes at buffer index ``i`` in place.  The first
        one is tried with every key and algorithm and kept with the first whose plain
        event ``check`` accepts; False: none did (nothing changed)."""
        raw = bytes(buf[i:i + size])
        plain: bytearray | None
        if self.decryptor.detected:
            plain = self.decryptor.decrypt(raw, offset)
        else:
            plain = self.decryptor.detect(raw, offset, check)
            if plain is None:
                return False
        self._store(buf, i, offset, size, plain)
        return True

    def decrypt_if(self, buf: bytearray, i: int, offset: int, size: int,
                   check: PlainCheck) -> bool:
        """Decrypt the candidate event at buffer index ``i`` (a resync) with the key that
        fits; keep the plain bytes only when ``check`` accepts them."""
        plain = self.decryptor.decrypt(bytes(buf[i:i + size]), offset)
        if not check(plain):
            return False
        self._store(buf, i, offset, size, plain)
        return True

    def decrypts(self, buf: bytearray, i: int, offset: int, size: int, check: PlainCheck) -> bool:
        """Does the (first) event at buffer index ``i`` decrypt with some candidate?
        The buffer is left as it is; the candidate that fits is kept."""
        return self.decryptor.detect(bytes(buf[i:i + size]), offset, check) is not None

    def _store(self, buf: bytearray, i: int, offset: int, size: int, plain: bytearray) -> None:
        buf[i:i + size] = plain
        self.plain_end = offset + size

    def damaged_error(self, source: str, offset: int) -> MalformedEventError:
        """The first encrypted event fails its checks but the one after it decrypts."""
        return MalformedEventError(
            f"encrypted event fails its checks after decryption with "
            f"{self.describe()} (the next event decrypts: this one is damaged)",
            source=source, event_offset=offset)

    def wrong_key_error(self, source: str, offset: int) -> WrongKeyError:
        """The first encrypted event fails its checks with every key and algorithm."""
        dec = self.decryptor
        return WrongKeyError(
            f"the keys given do not decrypt this binlog: its first encrypted event fails its "
            f"checks with all {len(dec.candidates)} key/algorithm combinations tried for key id "
            f"{dec.key_id} version {dec.key_version}",
            key_id=dec.key_id, key_version=dec.key_version, source=source,
            event_offset=offset,
            hint="give the key file the server used when it wrote this file (--key-file, "
                 "repeatable), or check --encryption-algorithm")
