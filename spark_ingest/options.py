"""Options of the ``binlog`` data source, mirroring ``binlog dump``'s command line.

Spark hands data source options over as strings with lower-cased keys; here ``_`` and
``-`` are the same (``start-position`` = ``start_position``).  Lists (``table``,
``exclude-table``, ``database``, ``schema-ddl``, ``paths``) are a JSON array or a
comma-separated string.  Booleans: true/false/1/0/yes/no.
"""
from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field, fields

from binlog.errors import ON_ERROR_CHOICES, UsageError
from binlog.user_values import parse_epoch, parse_zone

DEFAULT_MAX_SPLIT = 128 << 20
MIN_SPLIT = 4 << 20

#: Every option the data source understands (canonical spelling).
OPTION_NAMES = (
    "path", "paths", "schema-ddl", "schema-store", "schema-from", "no-track-ddl",
    "table", "exclude-table", "database", "start-position", "stop-position",
    "start-datetime", "stop-datetime", "timezone", "on-error", "infer-precision",
    "binary-encoding", "no-verify-checksum", "split-size", "parallelism",
    "include-errors", "batch-size", "plan", "key-file", "key-file-key", "key-file-digest",
    "key-file-pbkdf2", "encryption-algorithm", "allow-gaps", "follow-symlinks", "with-types",
)


@dataclass
class ReadOptions:
    paths: list[str] = field(default_factory=list)
    schema_ddl: list[str] = field(default_factory=list)
    schema_store: str | None = None
    schema_from: str | None = None
    track_ddl: bool = True
    table: list[str] = field(default_factory=list)
    exclude_table: list[str] = field(default_factory=list)
    database: list[str] = field(default_factory=list)
    start_position: int | None = None
    stop_position: int | None = None
    start_datetime: str | None = None
    stop_datetime: str | None = None
    timezone: str = "UTC"
    on_error: str = "fail"
    infer_precision: bool = False
    binary_encoding: str = "hex"
    verify_checksums: bool = True
    split_size: int | None = None      # None: automatic; 0: never split a file
    parallelism: int | None = None
    include_errors: bool = False
    with_types: bool = False            # the records' `types` column (as dump --with-types)
    batch_size: int = 4096
    # Encrypted binlogs: the driver reads the key files (build_plan) and hands the keys to
    # the tasks inside the plan, as it does the schema snapshot; the secret of encrypted
    # key files is never written into a plan (to_dict) nor printed (repr).
    key_file: list[str] = field(default_factory=list)
    key_file_key: str | None = field(default=None, repr=False)
    key_file_digest: str = "sha1"
    key_file_pbkdf2: int = 0
    encryption_algorithm: str | None = None
    allow_gaps: bool = False           # a binlog missing from a sequence: a warning, not an error
    follow_symlinks: bool = False      # search symlinked directories too (each file read once)

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


# Spark's camel-case spellings (``.option("allowGaps", True)``: Spark lower-cases keys)
_ALIASES = {"allowgaps": "allow-gaps", "followsymlinks": "follow-symlinks"}


def _key(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    return _ALIASES.get(key, key)


def _bool(name: str, text) -> bool:
    if isinstance(text, bool):
        return text
    low = str(text).strip().lower()
    if low in ("1", "true", "yes", "on", ""):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"option {name}: expected true or false, got {text!r}")


def _int(name: str, text) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise UsageError(f"option {name}: expected an integer, got {text!r}") from None


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.I)


def parse_size(text) -> int:
    """``134217728``, ``128m``, ``128MB``, ``1g``, ``64KiB``."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise UsageError(f"bad size {text!r}: use bytes or a number with k/m/g")
    return int(m.group(1)) << (10 * " kmgt".index((m.group(2) or " ").lower()))


def _list(text) -> list[str]:
    if isinstance(text, (list, tuple)):
        return [str(t) for t in text]
    text = str(text).strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            return [str(t) for t in json.loads(text)]
        except ValueError:
            raise UsageError(f"bad JSON list {text!r}") from None
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_options(options) -> ReadOptions:
    """Data source options (any case, ``-`` or ``_``) -> ReadOptions; UsageError if bad."""
    opts = ReadOptions()
    for raw_key, value in dict(options).items():
        key = _key(raw_key)
        if value is None:
            continue
        if key == "path":
            opts.paths.extend(_list(value) if str(value).lstrip().startswith("[") else [str(value)])
        elif key == "paths":
            opts.paths.extend(_list(value))
        elif key == "schema-ddl":
            opts.schema_ddl.extend(_list(value))
        elif key == "schema-store":
            opts.schema_store = str(value)
        elif key == "schema-from":
            opts.schema_from = str(value)
        elif key == "no-track-ddl":
            opts.track_ddl = not _bool(key, value)
        elif key == "track-ddl":
            opts.track_ddl = _bool(key, value)
        elif key == "table":
            opts.table.extend(_list(value))
        elif key == "exclude-table":
            opts.exclude_table.extend(_list(value))
        elif key == "database":
            opts.database.extend(_list(value))
        elif key == "start-position":
            opts.start_position = _int(key, value)
        elif key == "stop-position":
            opts.stop_position = _int(key, value)
        elif key == "start-datetime":
            opts.start_datetime = str(value)
        elif key == "stop-datetime":
            opts.stop_datetime = str(value)
        elif key == "timezone":
            opts.timezone = str(value)
        elif key == "on-error":
            if str(value).lower() not in ON_ERROR_CHOICES:
                raise UsageError(f"option on-error: expected fail or skip, got {value!r}")
            opts.on_error = str(value).lower()
        elif key == "infer-precision":
            opts.infer_precision = _bool(key, value)
        elif key == "binary-encoding":
            if str(value).lower() not in ("hex", "base64"):
                raise UsageError(f"option binary-encoding: expected hex or base64, got {value!r}")
            opts.binary_encoding = str(value).lower()
        elif key == "no-verify-checksum":
            opts.verify_checksums = not _bool(key, value)
        elif key == "verify-checksum":
            opts.verify_checksums = _bool(key, value)
        elif key == "split-size":
            opts.split_size = parse_size(value)
        elif key == "parallelism":
            opts.parallelism = _int(key, value)
        elif key == "include-errors":
            opts.include_errors = _bool(key, value)
        elif key == "with-types":
            opts.with_types = _bool(key, value)
        elif key == "batch-size":
            opts.batch_size = max(1, _int(key, value))
        elif key == "key-file":
            opts.key_file.extend(_list(value))
        elif key == "key-file-key":
            opts.key_file_key = str(value)
        elif key == "key-file-digest":
            opts.key_file_digest = str(value).lower()
        elif key == "key-file-pbkdf2":
            opts.key_file_pbkdf2 = _int(key, value)
        elif key == "encryption-algorithm":
            from binlog.crypt import check_algorithm

            opts.encryption_algorithm = check_algorithm(str(value))
        elif key == "allow-gaps":
            opts.allow_gaps = _bool(key, value)
        elif key == "follow-symlinks":
            opts.follow_symlinks = _bool(key, value)
        elif key == "plan":
            pass                                   # handled by the data source
        else:
            raise UsageError(f"unknown option {raw_key!r} of the binlog data source "
                             f"(known: {', '.join(OPTION_NAMES)})")
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
