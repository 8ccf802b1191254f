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
# 33.1 -> 17.2 MB, tables/ 26.8 -> 14.8 MB on the 40.8 MB bench cut) for ~15% more
# encoding time (0.30 -> 0.34 s of CPU for both); docs/lake-speed.md has the table
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 1


def parquet_writer(path: str, schema, dictionary: list[str]):
    """A Parquet file of ``schema``: zstd, and dictionary pages only for ``dictionary``
    (column paths): the columns whose values repeat.  A dictionary built for a column of
    distinct values (the JSON images, most numbers) is thrown away when it outgrows its
    page: on the 40.8 MB bench cut, dictionaries for the typed tables' strings only made
    them 0.216 -> 0.162 s of CPU and 17.5 -> 14.7 MB."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(path, schema, compression=COMPRESSION, compression_level=COMPRESSION_LEVEL,
                            use_dictionary=dictionary)


def text_columns(schema) -> list[str]:
    """The column paths of a schema's strings and binaries (a struct's fields too)."""
    import pyarrow as pa

    def text(t):
        return pa.types.is_string(t) or pa.types.is_binary(t)

    out = []
    for field in schema:
        if pa.types.is_struct(field.type):
            out += [f"{field.name}.{child.name}" for child in field.type if text(child.type)]
        elif text(field.type):
            out.append(field.name)
    return out


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
