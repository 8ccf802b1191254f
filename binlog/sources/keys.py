"""Key files for encrypted binlogs: the only code that reads them (parsing and the
``Salted__`` decryption are in ``binlog.crypt``, over bytes).

A key file, and a ``FILE:`` secret, that others can read is reported through
``on_warning`` (the server's own key file should be readable by its user only); the
message names the file, never its content.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ..crypt import MAX_KEY_FILE_SIZE, SALTED, KeyRing, check_algorithm, decrypt_key_file, parse_key_file, read_secret
from ..errors import KeyFileError

FILE_PREFIX = "FILE:"


def _read(path: Path, what: str, limit: int, on_warning) -> bytes:
    try:
        info = path.stat()
        if info.st_mode & stat.S_IROTH and on_warning is not None:
            on_warning(f"{what} {path} is readable by every user (chmod o-r it)")
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise KeyFileError(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) > limit:
        raise KeyFileError(f"{what} {path} is larger than {limit} bytes")
    return data


def secret_bytes(spec: str, on_warning=None) -> bytes:
    """``--key-file-key``: the secret itself, or ``FILE:path`` (file_key_management_filekey)."""
    if spec.startswith(FILE_PREFIX):
        path = Path(spec[len(FILE_PREFIX):])
        return read_secret(_read(path, "key file secret", 4096, on_warning))
    return os.fsencode(spec)


def load_key_ring(key_files, *, key_file_key: str | None = None, algorithm: str | None = None,
                  digest: str = "sha1", pbkdf2_iterations: int = 0,
                  on_warning=None) -> KeyRing | None:
    """A KeyRing from the key files (None when none is given).  With ``key_file_key``
    every key file that starts with ``Salted__`` is decrypted with it (plain ones are
    read as they are: an old encrypted and a new plain key file can go together); as
    in the plugin, a secret with no encrypted key file is an error."""
    if not key_files:
        if key_file_key:
            raise KeyFileError("--key-file-key needs a --key-file")
        return None
    ring = KeyRing(algorithm=check_algorithm(algorithm))
    secret = secret_bytes(key_file_key, on_warning) if key_file_key else None
    encrypted = 0
    for item in key_files:
        path = Path(item)
        data = _read(path, "key file", MAX_KEY_FILE_SIZE, on_warning)
        if data.startswith(SALTED):
            if secret is None:
                raise KeyFileError(f"key file {path} is encrypted: give its secret with "
                                   f"--key-file-key SECRET or --key-file-key FILE:path")
            data = decrypt_key_file(data, secret, path.name, digest=digest,
                                    pbkdf2_iterations=pbkdf2_iterations)
            encrypted += 1
        ring.add_file(parse_key_file(data, path.name), path.name)
    if secret is not None and not encrypted:
        # As the plugin: a secret for a key file that is not encrypted is a mistake.
        raise KeyFileError("--key-file-key was given but no key file is encrypted "
                           "(none starts with 'Salted__')")
    return ring
