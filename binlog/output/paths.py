"""Output paths under ``--to`` (``binlog ingest``) and ``--output-dir`` (``binlog dump``) made
from database and table names.

Names come from the binlog (TABLE_MAP), which is untrusted input: a table called
``../../x``, ``/etc`` or ``a\\x00b`` must not choose where files go.  So a name never
becomes a path as it is:

- ``component(name)`` is one path component: every character that is not a plain
  printable one is percent-encoded as its UTF-8 bytes (``/``, ``\\``, ``.``, ``%``, ``~``,
  NUL and every control character included), so the result never holds a separator, is
  never ``.`` or ``..`` and never starts with a dot; the encoding is one-to-one (``%``
  itself is encoded), so two names never share a component.  An empty name is ``%``
  (which no encoded name can be).  A component longer than NAME_MAX bytes keeps its first
  bytes and ends in ``~`` and a hash of the whole name (``~`` is always encoded
  otherwise, so this form cannot collide with a short one).
- ``table_dir_name(db, table)`` is ``component(db) + "." + component(table)``: the dot
  between them is the only unencoded dot, so ``a.b`` + ``c`` (``a%2Eb.c``) and ``a`` +
  ``b.c`` (``a.b%2Ec``) are two directories (hashed as a pair when the two together
  are longer than NAME_MAX).
- ``inside(root, path)`` is the last check before anything is written: the path,
  resolved (symlinks followed), must lie under the resolved ``root``, else
  ``UnsafePathError``.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import BinlogError

# Linux/most file systems: a component is at most 255 bytes.
NAME_MAX = 255
# Kept as they are: letters, digits (any script) and these; everything else is encoded.
# (no glob or URI characters: Spark/Hadoop read these paths as globs and URIs)
_PLAIN_PUNCTUATION = frozenset("_-$@+")


class UnsafePathError(BinlogError):
    """An output path would leave the output directory (a hostile name or a symlink)."""


def _plain(c: str) -> bool:
    if c in _PLAIN_PUNCTUATION:
        return True
    if "\ud800" <= c <= "\udfff":
        return False
    return c.isalnum() and c.isprintable()


def component(name: str | None) -> str:
    """``name`` as one safe path component (see the module docstring)."""
    if not name:
        return "%"
    out = []
    for c in name:
        if _plain(c):
            out.append(c)
        else:
            out.append("".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")))
    text = "".join(out)
    if len(text.encode("utf-8", "surrogatepass")) <= NAME_MAX:
        return text
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    keep = text.encode("utf-8", "surrogatepass")[:NAME_MAX - 17].decode("utf-8", "ignore")
    return f"{keep}~{digest}"


def table_dir_name(db: str | None, table: str | None) -> str:
    """The directory of a table's typed output, ``<db>.<table>`` encoded.  Longer than
    NAME_MAX bytes (each part may be up to it): its start, ``~`` and a hash of the pair
    (a name that fits holds no ``~``: no component is hashed then)."""
    text = f"{component(db)}.{component(table)}"
    if len(text.encode("utf-8")) <= NAME_MAX:
        return text
    pair = json.dumps([db, table]).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(pair).hexdigest()[:16]
    keep = text.encode("utf-8")[:NAME_MAX - 17].decode("utf-8", "ignore")
    return f"{keep}~{digest}"


def inside(root, path) -> Path:
    """``path`` resolved, after checking that it lies under ``root`` (resolved)."""
    base = Path(os.path.realpath(root))
    full = Path(os.path.realpath(path))
    if full != base and base not in full.parents:
        raise UnsafePathError(f"output path {str(path)!r} resolves to {str(full)!r}, outside {str(base)!r}")
    return full
