"""The partition directories of the lake's layout, named as Spark's partitioned writer
names them (``writer``): ``db=<db>/table=<table>/date=<YYYY-MM-DD>``, each value escaped
as Spark's ``ExternalCatalogUtils.escapePathName`` escapes it (not pyarrow's hive
partitioning, which URI-encodes: Spark decodes ``%XX`` as one character), null or empty
as ``__HIVE_DEFAULT_PARTITION__``.  No pyarrow here: ``binlog history`` finds a table's
directories with these names and needs only DuckDB.
"""
from __future__ import annotations

import hashlib

from binlog.output.paths import NAME_MAX

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# Spark's ExternalCatalogUtils.charToEscape (from Hive's FileUtils), outside Windows
_ESCAPED = frozenset([chr(c) for c in range(1, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
# and NUL, which Spark never meets but a hostile binlog's names can hold (a path cannot)
_ESCAPED |= {"\x00"}

def escape_path_name(value: str) -> str:
    """A partition value as Spark writes it in a directory name."""
    if not any(c in _ESCAPED for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def partition_value(value: str | None) -> str:
    """A partition value as a directory name's value part: Spark's escaping; a value
    whose escaped form does not fit a path component (a hostile binlog's name) gets the
    hashed form of ``paths.component`` instead (Spark then reads that form back)."""
    if not value:
        return DEFAULT_PARTITION
    text = escape_path_name(value)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:      # lone surrogates: bytes no file name can hold
        size = None
    if size is not None and size <= NAME_MAX - len("table="):
        return text
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    keep = text.encode("utf-8", "ignore")[:NAME_MAX - len("table=") - 17].decode("utf-8", "ignore")
    return f"{keep}~{digest}"


def partition_dir(db: str | None, table: str | None, date: str | None) -> str:
    value = partition_value

    return f"db={value(db)}/table={value(table)}/date={value(date)}"
