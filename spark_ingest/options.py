"""Options of the ``binlog`` data source, declared with the command line's in ``binlog.options``.

Spark hands data source options over as strings with lower-cased keys; here ``_`` and
``-`` are the same (``start-position`` = ``start_position``).  Lists (``table``,
``exclude-table``, ``database``, ``schema-ddl``, ``paths``) are a JSON array or a
comma-separated string.  Booleans: true/false/1/0/yes/no.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from binlog.errors import UsageError
from binlog.options import (
    DEFAULT_INGEST_COMPRESSION,
    SOURCE_ALIASES,
    SOURCES,
    parse_size,
    source_default,
    source_value,
)
from binlog.user_values import parse_epoch, parse_zone

DEFAULT_MAX_SPLIT = 128 << 20
MIN_SPLIT = 4 << 20

#: Every option the data source understands (canonical spelling; binlog.options declares
#: them, with the command line's options they share).
OPTION_NAMES = tuple(SOURCES)

__all__ = ["OPTION_NAMES", "ReadOptions", "parse_options", "parse_size"]


@dataclass
class ReadOptions:
    """The data source's settings; the defaults of those a command line has too are its
    options' (binlog.options)."""
    paths: list[str] = field(default_factory=list)
    schema_ddl: list[str] = field(default_factory=list)
    schema_store: str | None = source_default("schema-store")
    schema_from: str | None = source_default("schema-from")
    track_ddl: bool = source_default("no-track-ddl")
    table: list[str] = field(default_factory=list)
    exclude_table: list[str] = field(default_factory=list)
    database: list[str] = field(default_factory=list)
    start_position: int | None = source_default("start-position")
    stop_position: int | None = source_default("stop-position")
    start_datetime: str | None = source_default("start-datetime")
    stop_datetime: str | None = source_default("stop-datetime")
    timezone: str = source_default("timezone")
    on_error: str = source_default("on-error")
    infer_precision: bool = source_default("infer-precision")
    binary_encoding: str = source_default("binary-encoding")
    verify_checksums: bool = source_default("no-verify-checksum")
    split_size: int | None = source_default("split-size")   # None: automatic; 0: never split
    parallelism: int | None = None
    include_errors: bool = False
    with_types: bool = source_default("with-types")   # the records' `types` column
    batch_size: int = 4096
    compression: str = DEFAULT_INGEST_COMPRESSION    # binlog ingest's Parquet files (--compression)
    # Encrypted binlogs: the driver reads the key files (build_plan) and hands the keys to
    # the tasks inside the plan, as it does the schema snapshot; the secret of encrypted
    # key files is never written into a plan (to_dict) nor printed (repr).
    key_file: list[str] = field(default_factory=list)
    key_file_key: str | None = field(default=None, repr=False)
    key_file_digest: str = source_default("key-file-digest")
    key_file_pbkdf2: int = source_default("key-file-pbkdf2")
    encryption_algorithm: str | None = None
    allow_gaps: bool = source_default("allow-gaps")   # a missing binlog: a warning, not an error
    follow_symlinks: bool = source_default("follow-symlinks")   # (each file read once)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "key_file_key"}

    def key_ring(self, on_warning=None):
        """The keys of the key file options (None without key files): on the driver."""
        from binlog.sources.keys import load_key_ring

        return load_key_ring(self.key_file, key_file_key=self.key_file_key,
                             algorithm=self.encryption_algorithm, digest=self.key_file_digest,
                             pbkdf2_iterations=self.key_file_pbkdf2, on_warning=on_warning)

    @classmethod
    def from_dict(cls, data: dict) -> "ReadOptions":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    # -- derived ---------------------------------------------------------------------
    @property
    def zone(self):
        return parse_zone(self.timezone)

    def epochs(self) -> tuple[int | None, int | None]:
        zone = self.zone
        return parse_epoch(self.start_datetime, zone), parse_epoch(self.stop_datetime, zone)

    def table_filter(self):
        from binlog.reader_options import table_filter_of

        return table_filter_of(self)

    def split_bytes(self, total_bytes: int) -> int:
        """Target split size: the option, or like Spark's file sources
        min(128 MiB, max(4 MiB, total / parallelism))."""
        if self.split_size is not None:
            return self.split_size
        cores = self.parallelism or os.cpu_count() or 1
        return min(DEFAULT_MAX_SPLIT, max(MIN_SPLIT, -(-total_bytes // cores)))


def _key(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    return SOURCE_ALIASES.get(key, key)


def parse_options(options) -> ReadOptions:
    """Data source options (any case, ``-`` or ``_``; Spark's camelCase where
    binlog.options gives one) -> ReadOptions; UsageError if bad.  Each value is
    converted and checked as its command-line option's (``binlog.options.source_value``)."""
    opts = ReadOptions()
    for raw_key, value in dict(options).items():
        key = _key(raw_key)
        if value is None:
            continue
        if key not in SOURCES:
            raise UsageError(f"unknown option {raw_key!r} of the binlog data source "
                             f"(known: {', '.join(OPTION_NAMES)})")
        source = SOURCES[key][1]
        if not source.field:
            continue                               # plan: handled by the data source
        converted = source_value(key, value)
        if source.extend:
            getattr(opts, source.field).extend(converted)
        else:
            setattr(opts, source.field, converted)
    opts.epochs()          # validate the time zone and datetimes now (UsageError)
    opts.table_filter()
    return opts
