"""Options of the ``binlog`` data source, declared with the command line's in ``binlog.options``.

Spark hands data source options over as strings with lower-cased keys; here ``_`` and
``-`` are the same (``start-position`` = ``start_position``).  Lists (``table``,
``exclude-table``, ``database``, ``schema-ddl``, ``paths``) are a JSON array or a
comma-separated string.  Booleans: true/false/1/0/yes/no.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, fields

from binlog.errors import UsageError
from binlog.options import SOURCE_ALIASES, SOURCES, parse_size, source_default, source_value
from binlog.user_values import parse_epoch, parse_zone

DEFAULT_MAX_SPLIT = 128 << 20
MIN_SPLIT = 4 << 20

#: Every option the data source understands (canonical spelling; binlog.options declares
#: them, with the command line's options they share).
OPTION_NAMES = tuple(SOURCES)

__all__ = ["OPTION_NAMES", "ReadOptions", "parse_options", "parse_size", "discover",
           "expand_sources"]


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
        from binlog.filters import TableFilter

        return TableFilter(list(self.table), list(self.exclude_table), list(self.database))

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


def expand_sources(paths) -> list[str]:
    """Globs expanded (sorted, ``*.index`` files left out); other items kept, in order."""
    out: list[str] = []
    for item in paths:
        item = str(item)
        if any(ch in item for ch in "*?["):
            matches = sorted(m for m in glob.glob(item) if not m.endswith(".index"))
            if not matches:
                raise UsageError(f"no file matches {item!r}")
            out.extend(matches)
        else:
            out.append(item)
    return out


def _is_binlog(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\xfebin"
    except OSError:
        return False


def discover(paths, on_warning=None, *, allow_gaps: bool = False,
             follow_symlinks: bool = False) -> list[tuple[str, list[str]]]:
    """The sources as *sequences*: [(key, [file, ...])], each read like one `binlog dump`
    (DDL followed from file to file, positions ordered).

    - files given one after another form one sequence, as on dump's command line;
    - a directory with a ``*.index`` or numbered files (``mariadb-bin.000042``) is one
      sequence, its files in index order;
    - any other directory is searched recursively: each such directory inside it is a
      sequence, and each other binlog file (checked by its magic bytes) is a sequence of
      its own (e.g. ``samples/``: unrelated sample binlogs, each with its own DDL).

    The search does not follow symlinks to directories (a link to a parent would loop:
    the same files read again and again) unless ``follow_symlinks``: then each directory
    is searched once (by device and inode: a loop ends where it comes back), and in any
    case no file is read twice: a file met again
    (a symlink, an index naming it twice, a path given twice) is left out.  Both are
    reported through ``on_warning`` (default: stderr), never dropped silently.  An index
    naming a binlog that is not there is a GapError (``allow_gaps``: a warning).
    """
    import os
    import sys
    from pathlib import Path

    from binlog.sources.file import directory_binlogs

    def to_stderr(message: str) -> None:
        sys.stderr.write(f"binlog: warning: {message}\n")

    warn = on_warning or to_stderr
    groups: list[tuple[str, list[str]]] = []
    loose: list[str] = []
    seen: dict[tuple[int, int], str] = {}      # (device, inode) -> the path read

    def once(paths: list[str]) -> list[str]:
        kept = []
        for path in paths:
            st = os.stat(path)
            first = seen.setdefault((st.st_dev, st.st_ino), path)
            if first == path and path not in kept:
                kept.append(path)
            else:
                warn(f"{path} is the same file as {first}: read once")
        return kept

    def add(key: str, paths: list[str]):
        paths = once(paths)
        if paths:
            groups.append((key, paths))

    def flush():
        if loose:
            add(f"files:{loose[0]}", list(loose))
            loose.clear()

    searched: set[tuple[int, int]] = set()     # (device, inode) of the directories searched

    def walk(directory: Path):
        st = os.stat(directory)
        if (st.st_dev, st.st_ino) in searched:
            warn(f"{directory} is a directory already searched (a symlink loop): searched once")
            return
        searched.add((st.st_dev, st.st_ino))
        try:
            files = [str(p) for p in directory_binlogs(directory, allow_gaps=allow_gaps,
                                                        on_warning=warn)]
        except UsageError:
            files = []
        if files:
            add(f"dir:{directory}", files)
            return
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink() and entry.is_dir():
                if follow_symlinks:
                    walk(entry.resolve())      # by its real path: the checkpoint's key
                else:
                    warn(f"{entry} is a symlink to a directory: not followed "
                         f"(--follow-symlinks follows it)")
            elif entry.is_dir():
                walk(entry)
            elif entry.is_file() and not entry.name.endswith(".index") and (
                    entry.name.endswith(".binlog") or _is_binlog(str(entry))):
                add(f"file:{entry}", [str(entry)])

    for item in expand_sources(paths):
        path = Path(item)
        if path.is_dir():
            flush()
            before = len(groups)
            walk(path.resolve())
            if len(groups) == before:
                raise UsageError(f"no binlog files in directory {path}")
        elif path.exists():
            loose.append(str(path.resolve()))
        else:
            raise UsageError(f"no such file or directory: {path}")
    flush()
    return groups
