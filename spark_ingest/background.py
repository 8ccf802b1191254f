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

# Parquet compression of ingest's files: zstd level 1 halves snappy's output (changes/
# 33.2 -> 17.3 MB, tables/ 28.7 -> 17.5 MB on the 40.8 MB bench cut) for ~20% more
# encoding time (0.36 -> 0.41 s of CPU for both); BENCHMARKS.md has the table
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 1


def parquet_writer(path: str, schema):
    import pyarrow.parquet as pq

    return pq.ParquetWriter(path, schema, compression=COMPRESSION, compression_level=COMPRESSION_LEVEL)


class Background:
    """Runs the callables given to ``submit`` in one thread, in order."""

    def __init__(self, depth: int = 2):
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
