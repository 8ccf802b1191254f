"""verify-rows' expected state: the last change of every row the input changed, by table
and key, in bounded memory.

A day of a busy server's binlogs changes tens of millions of rows, ~500 bytes each held as
Python objects.  Past ``limit`` rows held, they are written out to unnamed temporary
files, spread over FANOUT buckets by key; the comparison then takes one bucket at a time
(its rows' last changes: a later write of a key replaces an earlier one) and splits a
bucket that is still too large the same way, with another hash.  Nothing is spilled for
an input within the limit.  (Measured: SQLite as the spill, an upsert per row, cost 5 us
a row against ~1.5 us for this.)"""
from __future__ import annotations

import pickle
import tempfile
from typing import Iterable, Iterator

FANOUT = 64
_PIECE = 10_000         # records a bucket buffers before it writes them
_MAX_DEPTH = 3          # splits of a bucket (a key written over and over does not split)


class Expected:
    __slots__ = ("key", "key_lits", "checksum", "origin", "known")

    def __init__(self, key, key_lits, checksum, origin, known=True):
        self.key = key              # encoded key values (tuple of bytes), to match target rows
        self.key_lits = key_lits    # SQL literals of the key values
        self.checksum = checksum    # None: the row must not exist
        self.origin = origin
        self.known = known          # False: partial image, checksum unknown


class ExpectedRows:
    """{(db, table): {key: Expected}}, spilled to temporary files past ``limit`` rows."""

    def __init__(self, limit: int):
        self.limit = limit
        self.spilled = 0                # row records written out (with repeats of a key)
        self._memory: dict = {}         # (db, table) -> {key: Expected}
        self._held = 0
        self._numbers: dict = {}        # (db, table) -> its number in the records (in order)
        self._buckets: list[_Bucket] | None = None

    def update(self, table: tuple, rows: dict) -> None:
        held = self._memory.setdefault(table, {})
        before = len(held)
        held.update(rows)
        self._held += len(held) - before
        if self._held > self.limit:
            self._spill()

    def put(self, table: tuple, expected: Expected) -> None:
        held = self._memory.get(table)
        if held is None:
            held = self._memory[table] = {}
        if expected.key not in held:
            self._held += 1
        held[expected.key] = expected
        if self._held > self.limit:
            self._spill()

    def move_to(self, out: ExpectedRows) -> None:
        """Everything here into ``out``, newer than what it holds (a transaction's rows at
        its COMMIT); this one is closed."""
        if self._buckets is None:
            for table, held in self._memory.items():
                out.update(table, held)
        else:
            for group in self.groups():
                for table, rows in group.items():
                    out.update(table, {e.key: e for e in rows})
        self._memory = {}
        self.close()

    def groups(self) -> Iterator[dict]:
        """{(db, table): [Expected]} groups that give every row once (its last change):
        one of everything when nothing was spilled, else one a bucket."""
        if self._buckets is None:
            yield {table: list(rows.values()) for table, rows in self._memory.items()}
            return
        self._spill()
        buckets, self._buckets = self._buckets, []
        for bucket in buckets:
            yield from self._load(bucket, 0)

    def close(self) -> None:
        for bucket in self._buckets or ():
            bucket.close()
        self._buckets = None

    def _spill(self) -> None:
        if self._buckets is None:
            self._buckets = [_Bucket() for _ in range(FANOUT)]
        _spread(self._records(), self._buckets, 0)
        self.spilled += self._held
        self._memory.clear()
        self._held = 0

    def _records(self) -> Iterator[tuple]:
        for table, held in self._memory.items():
            number = self._numbers.setdefault(table, len(self._numbers))
            for e in held.values():
                yield number, e.key, e.key_lits, e.checksum, e.origin, e.known

    def _load(self, bucket: _Bucket, depth: int) -> Iterator[dict]:
        if not bucket.count:
            return
        if bucket.count > self.limit and depth < _MAX_DEPTH:
            # as many parts as make the limit, at most FANOUT
            parts = [_Bucket() for _ in range(min(FANOUT, max(2, -(-bucket.count // self.limit))))]
            _spread(bucket.records(), parts, depth + 1)
            bucket.close()
            for part in parts:
                yield from self._load(part, depth + 1)
            return
        latest = {}
        for record in bucket.records():
            latest[record[0], record[1]] = record      # a later change of the key wins
        bucket.close()
        names = list(self._numbers)
        group: dict = {}
        for number, key, lits, checksum, origin, known in latest.values():
            group.setdefault(names[number], []).append(Expected(key, lits, checksum, origin, known))
        yield group


class _Bucket:
    """Row records in an unnamed temporary file, in the order they were added.  Pickle:
    the file is this process's own (no name, no other writer), the records plain tuples."""

    def __init__(self):
        self.file = None        # made at the first add
        self.count = 0

    def add(self, records: list) -> None:
        try:
            if self.file is None:
                self.file = tempfile.TemporaryFile()
            pickle.dump(records, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError as exc:
            # a full or unwritable temporary directory: say which, not "the output"
            raise OSError(exc.errno, exc.strerror or str(exc),
                          f"verify-rows' spill files in {tempfile.gettempdir()} (TMPDIR; or "
                          f"a larger --memory-rows)") from exc
        self.count += len(records)

    def records(self) -> Iterator[tuple]:
        if self.file is None:
            return
        self.file.seek(0)
        while True:
            try:
                piece = pickle.load(self.file)
            except EOFError:
                return
            yield from piece

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _spread(records: Iterable[tuple], buckets: list[_Bucket], salt: int) -> None:
    """Each record into the bucket its (table, key) hashes to, with ``salt``."""
    pending: list[list] = [[] for _ in buckets]
    for record in records:
        at = hash((salt, record[0], record[1])) % len(buckets)
        piece = pending[at]
        piece.append(record)
        if len(piece) >= _PIECE:
            buckets[at].add(piece)
            piece.clear()
    for bucket, piece in zip(buckets, pending, strict=True):
        if piece:
            bucket.add(piece)
