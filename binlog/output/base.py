"""What a writer takes: the interface ``binlog dump`` (and any other caller) wires writers
by, instead of asking a writer object which attributes it happens to have.

Every writer takes row changes (``write``) and the reader's other items (``event``: a
``SourceEvent``, for transaction ends and key tracking).  What more it takes it declares
by overriding the defaults of ``Writer``, which take nothing more:

- statement records: statement-logged changes and DDL (``takes_statements`` and
  ``statement``; by default none: text and SQL write the QUERY event itself, from
  ``event``);
- watermarks (``takes_watermarks`` and ``watermark``);
- encoded rows (``row_encoder()``: the batch path's encoder, a rows event straight to
  output bytes, whose ``EncodedRows`` come back to ``write_encoded``);
- encoded runs (``run_writer()``: the writer whose ``run_parts`` / ``run_tail`` /
  ``run_flags`` let the stream write runs of like rows events in one compiled call);
- the rows events themselves (``rows_hook()``: called with each rows event whose rows
  come as row changes, before them: SQL renders VALUES from the event's bytes);
- ``close()`` at the end, ``end_open_record()`` on an interrupt, ``release()`` when a
  row of another writer follows (``--output-dir``), ``not_replayed`` (statement changes a
  SQL script lacks).

A writer subclasses ``Writer`` (a Protocol, so the type checker holds it to the
signatures); ``Wrapping`` is the base of writers around another one, forwarding all of
it except the encoded runs, which would write past the wrapper.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..reader import RowChange, RunWriter, SourceEvent, StatementChange
    from ..rows import DecodePlan, EncodedRows
    from ..watermarks import Watermark

    RowEncoder = Callable[[RowChange, object], EncodedRows | None]
    RowsHook = Callable[[str, object, DecodePlan], None]


class Writer(Protocol):
    """A writer of the reader's items; the capabilities below default to none."""

    def write(self, change: RowChange) -> None: ...

    def event(self, item: SourceEvent) -> None: ...

    @property
    def takes_statements(self) -> bool:
        return False

    def statement(self, record: StatementChange) -> None:
        """A statement-logged change or DDL (given only when ``takes_statements``)."""
        return None

    @property
    def takes_watermarks(self) -> bool:
        return False

    def watermark(self, mark: Watermark) -> None:
        return None

    def row_encoder(self) -> RowEncoder | None:
        """The encoder of the batch path (``reader.set_output_paths``), or None."""
        return None

    def write_encoded(self, item: EncodedRows) -> None:
        # only a writer with a row_encoder is given EncodedRows (dump wires them together)
        raise TypeError(f"{type(self).__name__} takes no encoded rows")

    def run_writer(self) -> RunWriter | None:
        """The writer the stream writes runs of rows events for, or None."""
        return None

    def rows_hook(self) -> RowsHook | None:
        return None

    @property
    def not_replayed(self) -> Sequence[object]:
        return ()

    def close(self) -> None:
        return None

    def end_open_record(self) -> None:
        return None

    def release(self) -> None:
        return None


class Wrapping(Writer):
    """A writer around ``self.writer``: everything forwarded but the encoded runs (the
    stream would write them past this writer; the row encoder is the inner writer's,
    which does itself what its wrappers do to rows, e.g. --bigint-as-string)."""

    def __init__(self, writer: Writer):
        self.writer = writer

    def write(self, change: RowChange) -> None:
        self.writer.write(change)

    def event(self, item: SourceEvent) -> None:
        self.writer.event(item)

    @property
    def takes_statements(self) -> bool:
        return self.writer.takes_statements

    def statement(self, record: StatementChange) -> None:
        self.writer.statement(record)

    @property
    def takes_watermarks(self) -> bool:
        return self.writer.takes_watermarks

    def watermark(self, mark: Watermark) -> None:
        self.writer.watermark(mark)

    def row_encoder(self) -> RowEncoder | None:
        return self.writer.row_encoder()

    def write_encoded(self, item: EncodedRows) -> None:
        self.writer.write_encoded(item)

    def rows_hook(self) -> RowsHook | None:
        return self.writer.rows_hook()

    @property
    def not_replayed(self) -> Sequence[object]:
        return self.writer.not_replayed

    def close(self) -> None:
        self.writer.close()

    def end_open_record(self) -> None:
        self.writer.end_open_record()

    def release(self) -> None:
        self.writer.release()
