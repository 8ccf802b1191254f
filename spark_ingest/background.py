"""Parquet writes in a thread of their own, while the task decodes the next rows.

pyarrow releases the GIL while it encodes and compresses a row group, so a task's
writes (changes/ and tables/) overlap its decoding.  The writes run one at a time in
the order given (a file's row groups, then its close and rename); at most ``depth``
wait, so memory stays bounded by a few row groups.  The first error of a write is
raised by the next call (and by ``close``), the writes after it are dropped.
"""
from __future__ import annotations

import queue
import threading

from binlog.options import DEFAULT_INGEST_COMPRESSION

# Parquet compression of ingest's files by default (--compression): zstd level 1 halves
# snappy's output (changes/ 33.1 -> 17.2 MB, tables/ 26.8 -> 14.8 MB on the 40.8 MB bench
# cut) for ~15% more encoding time (0.30 -> 0.34 s of CPU for both); docs/lake-speed.md
# has the table
COMPRESSION = DEFAULT_INGEST_COMPRESSION
# the level of a codec that takes one (level 3 cost a third more and gained nothing on
# the images); the others at their library's default
LEVELS = {"zstd": 1}
# a column chunk's codec as Parquet metadata spells it -> pyarrow's name
_CODEC_NAMES = {"UNCOMPRESSED": "none", "LZ4_RAW": "lz4", "LZ4": "lz4"}


def parquet_writer(path: str, schema, dictionary: list[str] | bool, statistics: list[str] | bool = True,
                   codec: str = COMPRESSION):
    """A Parquet file of ``schema``: ``codec``, and dictionary pages only for ``dictionary``
    (column paths, or False: none): the columns whose values repeat.  A dictionary built
    for a column of distinct values (the JSON images, most numbers) is thrown away when
    it outgrows its page.  The typed tables/ take none: on the 40.8 MB bench cut, zstd
    alone wrote them smaller and faster than with dictionaries for their strings (13.4
    against 14.9 MB, 0.13 against 0.17 s of CPU; docs/lake-speed.md).  Min/max
    statistics for the columns ``statistics`` names (True: all)."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(path, schema, **codec_options(codec), use_dictionary=dictionary,
                            write_statistics=statistics)


def codec_options(codec: str) -> dict:
    """pyarrow.parquet's keyword arguments for files compressed with ``codec``."""
    return {"compression": codec, "compression_level": LEVELS.get(codec)}


def codec_of(metadata) -> str:
    """The codec a Parquet file was written with (``pyarrow.parquet.FileMetaData``: its
    first column chunk's), as pyarrow names it: a file written again keeps it."""
    if not metadata.num_row_groups or not metadata.num_columns:
        return COMPRESSION
    name = metadata.row_group(0).column(0).compression
    return _CODEC_NAMES.get(name, name.lower())


class Background:
    """Runs the callables given to ``submit`` in one thread, in order."""

    # one write waits while another runs: the peak RSS of one worker on 1 GiB of the
    # bench binlog was 275 MiB with one waiting, 290 with two, for the same CPU time
    def __init__(self, depth: int = 1):
        self.queue: queue.Queue = queue.Queue(maxsize=depth)
        self.error: BaseException | None = None
        self.failed = False
        self.thread = threading.Thread(target=self._run, name="parquet-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            if not self.failed:
                try:
                    item[0](*item[1])
                except BaseException as exc:      # raised again in the task's thread
                    self.error, self.failed = exc, True

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def submit(self, fn, *args) -> None:
        self._raise()
        self.queue.put((fn, args))

    def close(self) -> None:
        """Waits for every write; raises the first error."""
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        self._raise()


class Inline:
    """The same interface, run at once (no thread)."""

    def submit(self, fn, *args) -> None:
        fn(*args)

    def close(self) -> None:
        pass
