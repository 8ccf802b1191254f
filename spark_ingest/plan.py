"""Planning a read on the driver: files, pre-scan, schema store snapshot, splits.

``build_plan(options)`` does what ``binlog dump`` does before decoding a single row, once,
on the driver: expands the sources (directories in index order, globs), pre-scans every
file by its headers (``prescan``), follows the DDL of the binlog's QUERY events into an
in-memory copy of the schema store (in file order, as a sequential read would), finds
where ``--stop-datetime`` / ``--stop-position`` end the read, and cuts files into splits
at transaction boundaries.  Executors get the store as a JSON snapshot inside the plan
(never a database connection) with DDL tracking off, since the snapshot already holds
every version at its binlog position.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from binlog.continuity import Continuity
from binlog.errors import BinlogError, UsageError
from binlog.sources.file import discover

from .options import ReadOptions
from .prescan import FileScan, plan_splits, scan_file


@dataclass
class Split:
    index: int
    path: str
    name: str
    start: int                      # reader start_position (<= 4: the whole file)
    stop: int | None                # reader stop_position; None: to the end of the file
    boundaries: tuple = ()          # safe restart points inside, for on-error=skip
    error: dict | None = None       # damage the pre-scan found at the split's end
    read: bool = True               # False: nothing readable, only the error is reported
    nbytes: int = 0
    group: int = 0                  # which sequence (and schema snapshot) it belongs to
    track_from: int | None = None   # follow DDL from here on (past damage the pre-scan stopped at)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["boundaries"] = list(self.boundaries)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Split":
        d = dict(d)
        d["boundaries"] = tuple(d.get("boundaries", ()))
        return cls(**d)


@dataclass
class ReadPlan:
    options: ReadOptions
    splits: list[Split]
    snapshots: list                 # per sequence: schema store JSON; None: no schema (as dump)
    scans: list[FileScan] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stores: dict = field(default_factory=dict)   # sequence key -> the driver's store (not serialized)
    groups: list = field(default_factory=list)   # [(sequence key, [files])]
    keys: dict | None = field(default=None, repr=False)   # binlog.crypt.KeyRing.to_dict(), for the tasks
    chains: dict = field(default_factory=dict)   # sequence key -> Continuity.state() after the read

    def key_ring(self):
        """The tasks' KeyRing (None: no key files given)."""
        if self.keys is None:
            return None
        from binlog.crypt import KeyRing

        return KeyRing.from_dict(self.keys)

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.splits)

    def to_json(self) -> str:
        # (api.write_plan writes it to a file only its user can read: it holds the keys)
        return json.dumps({"options": self.options.to_dict(),
                           "splits": [s.to_dict() for s in self.splits],
                           "snapshots": self.snapshots, "warnings": self.warnings,
                           "keys": self.keys})

    @classmethod
    def from_json(cls, text: str) -> "ReadPlan":
        data = json.loads(text)
        return cls(ReadOptions.from_dict(data["options"]),
                   [Split.from_dict(s) for s in data["splits"]], data["snapshots"],
                   warnings=data.get("warnings", []), keys=data.get("keys"))


# Pre-scan errors the reader cannot read past: the end of the input, and an encrypted
# binlog without its key (everything after START_ENCRYPTION is unreadable): reported as
# the split's error, never left to a reader that would stop before them.
_NOT_RESUMABLE = ("IncompleteEventError", "EncryptedBinlogError", "DecryptionError",
                  "MissingKeyError", "WrongKeyError")


class PrescanError(BinlogError):
    """Damage found by the pre-scan, with on-error=fail."""


def make_store(opts: ReadOptions, *, tracked=None, on_warning=None):
    """An in-memory schema store from the options (a --schema-store file is copied, never
    written), plus ``tracked`` (a snapshot dict of binlog DDL versions from earlier runs).
    None when the options name no schema and DDL tracking is off (as ``binlog dump``)."""
    from schema_store.loading import load_resolver

    return load_resolver(store_path=opts.schema_store, ddl_paths=opts.schema_ddl,
                         dsn=opts.schema_from, track_ddl=opts.track_ddl, required=opts.track_ddl,
                         copy_store=True, tracked=tracked, on_warning=on_warning)


def tracked_snapshot(store) -> dict:
    """Only what DDL tracking added (sources ``binlog:...``): kept in the checkpoint so an
    incremental run knows the DDL of the files ingested before."""
    from schema_store.snapshot import export_snapshot

    data = export_snapshot(store)
    for table in ("versions", "databases"):
        cols = data["columns"][table]
        i = cols.index("source")
        data[table] = [r for r in data[table] if str(r[i]).startswith("binlog:")]
    data["overrides"] = []
    return data


def build_plan(opts: ReadOptions, *, ranges: dict | None = None, tracked: dict | None = None,
               active: frozenset = frozenset(), progress=None, chains: dict | None = None,
               follow_chain: bool = True) -> ReadPlan:
    """Plan a read.  ``ranges`` {path: (start, end)} restricts it to byte ranges of some
    files (incremental ingest; the position options are then not used); ``tracked``:
    {sequence key: DDL versions from earlier runs} (see ``tracked_snapshot``); ``active``:
    paths of files still being written - read only up to the end of their last whole
    transaction, and a partial event at their end is no error; ``chains``: {sequence key:
    ``Continuity.state()``} where earlier runs left each sequence.  A binlog missing from
    a sequence (``binlog.continuity``: a gap between two binlogs) is a GapError here, before any
    task runs, unless ``opts.allow_gaps``.  ``follow_chain=False``: files read again
    (ingest --reprocess), whose chain earlier runs checked: no check, no new state."""
    from schema_store.snapshot import export_snapshot, snapshot_json

    if not opts.paths:
        raise UsageError("no binlog path given (load(path) or option paths)")
    warnings: list[str] = []
    groups = discover(opts.paths, on_warning=warnings.append, allow_gaps=opts.allow_gaps,
                      follow_symlinks=opts.follow_symlinks)
    base = make_store(opts, on_warning=warnings.append)
    base_rows = export_snapshot(base.store) if base is not None else None
    ring = opts.key_ring(on_warning=warnings.append)
    every = [f for _, files in groups for f in files]

    def work(path):
        if ranges is not None:
            return ranges.get(path)
        return (opts.start_position if path == every[0] else None,
                opts.stop_position if path == every[-1] else None)

    planner = _Planner(opts, opts.split_bytes(_total_bytes(every, work)), active, progress, ring)
    snapshots: list = []
    stores: dict = {}
    states: dict = {}
    for gi, (key, files) in enumerate(groups):
        # (reprocessing: a chain that accepts anything, its warnings dropped)
        chain = (Continuity(allow_gaps=opts.allow_gaps, on_warning=warnings.append) if follow_chain
                 else Continuity(allow_gaps=True))
        chain.restore((chains or {}).get(key))
        planner.chain = chain
        resolver = None
        if base is not None or (tracked or {}).get(key):
            resolver = _group_resolver(opts, base_rows, (tracked or {}).get(key), warnings)
        for path in files:
            r = work(path)
            if r is not None and not planner.file(path, r, gi, resolver, last=path == files[-1]):
                break                # --stop-datetime ends this sequence here
        if follow_chain:
            states[key] = chain.state()
        snapshots.append(snapshot_json(resolver.store) if resolver is not None else None)
        if resolver is not None:
            stores[key] = resolver.store
    # The tasks get the keys (keys=), never the secret of the key files.
    return ReadPlan(replace(opts, key_file_key=None), planner.splits, snapshots, planner.scans,
                    warnings, stores, groups, keys=ring.to_dict() if ring is not None else None,
                    chains=states)


def _total_bytes(paths, work) -> int:
    """The bytes the read covers (what the split size is computed from)."""
    total = 0
    for path in paths:
        r = work(path)
        if r is not None:
            size = os.stat(path).st_size
            total += max(0, (r[1] if r[1] is not None else size) - (r[0] or 0))
    return total


def _group_resolver(opts: ReadOptions, base_rows, tracked, warnings: list):
    """A sequence's own copy of the base store (plus its DDL from earlier runs)."""
    from schema_store.resolver import SchemaResolver
    from schema_store.snapshot import import_snapshot
    from schema_store.store import SchemaStore

    store = import_snapshot(base_rows) if base_rows is not None else SchemaStore()
    if tracked:
        import_snapshot(tracked, store)
    return SchemaResolver(store, track_ddl=opts.track_ddl, on_warning=warnings.append)


class _Planner:
    """Pre-scans files one by one and cuts them into splits."""

    def __init__(self, opts: ReadOptions, split_bytes: int, active, progress, keys=None):
        self.opts, self.split_bytes, self.active, self.progress = opts, split_bytes, active, progress
        self.keys = keys
        self.stop_datetime = opts.epochs()[1]
        self.scans: list[FileScan] = []
        self.splits: list[Split] = []
        self.chain = Continuity()

    def file(self, path: str, r: tuple, gi: int, resolver, *, last: bool) -> bool:
        """Scan one file and add its splits; False when --stop-datetime ends the sequence."""
        opts = self.opts
        start, end = r
        name = Path(path).name
        tracking = resolver is not None and resolver.track_ddl

        def on_query(event, _name=name, _resolver=resolver):
            _resolver.observe_query(event, (_name, event.header.offset))

        scan = scan_file(path, start=start, stop=end, stop_datetime=self.stop_datetime,
                         verify_checksums=opts.verify_checksums,
                         on_query=on_query if tracking else None,
                         tolerate_partial_tail=last or path in self.active, keys=self.keys)
        self.scans.append(scan)
        if self.progress:
            self.progress(scan)
        self._follow(scan, resumed=(start or 0) > 4)
        if scan.error is not None and opts.on_error == "fail":
            e = scan.error
            raise PrescanError(e["message"], source=e["file"], event_offset=e["pos"],
                               event_type=e.get("event_type"))
        self._cut(scan, path, name, gi)
        return scan.stopped_at is None

    def _follow(self, scan: FileScan, *, resumed: bool) -> None:
        """The file in the sequence's chain, as the reader follows it file by file
        (``BinlogReader``): a GapError when a binlog is missing before this one.  A file
        read on from where an earlier run stopped is not a new link."""
        chain = self.chain
        if not resumed:
            chain.next_binlog(scan.name)
            if scan.gtid_list is not None:
                chain.gtid_list(scan.gtid_list)
            else:
                chain.first_event()
        for domain, seq in scan.gtids.items():
            chain.gtid(domain, seq)
        chain.end_binlog(scan.name, scan.rotated_to)

    def _cut(self, scan: FileScan, path: str, name: str, gi: int) -> None:
        splits = self.splits
        hi = scan.end
        if path in self.active and not scan.closed and scan.error is None:
            hi = scan.safe_end          # ingest: up to the last whole transaction
        error, track_from = scan.error, None
        if error is not None and error.get("error") not in _NOT_RESUMABLE:
            # damaged framing, skip mode: the reader resynchronises and reports it itself;
            # the last split reads on to the end and follows DDL past the damage
            error, track_from = None, scan.end
        # A file still being written grows while the splits are read: its last split
        # stops where the pre-scan (and so the checkpoint) says this run ends, or the
        # next run reads what grew after the pre-scan a second time.
        growing = path in self.active and not scan.closed
        limited = scan.stopped_at is not None or error is not None or hi < scan.size or growing
        pieces = plan_splits(scan, self.split_bytes, end=hi)
        if not pieces:
            if error is not None:
                splits.append(Split(len(splits), path, name, scan.start, scan.end, (), error,
                                    read=False, group=gi))
            elif track_from is not None:
                pieces = [(scan.start, max(scan.start, scan.end))]
        for k, (a, b) in enumerate(pieces):
            last = k == len(pieces) - 1
            stop = None if (last and not limited) else b
            inner = tuple(x for x in scan.boundaries if a < x < b)
            splits.append(Split(len(splits), path, name, a, stop, inner,
                                error if last else None, nbytes=max(b - a, 0), group=gi,
                                track_from=track_from if last else None))
