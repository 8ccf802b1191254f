"""JSON Lines extras of ``binlog dump``: ``--checksum`` and ``--split-updates``."""
from __future__ import annotations

import orjson

from ..checksum import PlanChecksums, change_checksums
from .base import Writer
from .json_lines import JsonLinesWriter


class ChecksumJsonWriter(JsonLinesWriter):
    """JSON Lines with ``"checksum": {"current": N, "previous": N}``: the TiCDC CRC32 of
    the after and before images (null when there is no image, or a partial one)."""

    def __init__(self, out, binary_encoding: str = "hex"):
        super().__init__(out, binary_encoding)
        self._checksum = PlanChecksums()

    def record(self, change) -> dict:
        record = super().record(change)
        record["checksum"] = change_checksums(change, self._checksum(change.plan))
        return record

    def _tail(self, change) -> bytes:
        # the line of JsonLinesWriter.write, large values in pieces, with the checksums
        # (computed piece by piece: binlog.checksum) before its closing brace
        return (b',"checksum":' + orjson.dumps(change_checksums(change, self._checksum(change.plan)))
                + b"}\n")


class SplitUpdatesWriter(Writer):
    """Wraps a per-change writer: each source transaction is given to it as TiCDC would
    see it (``binlog.assembly.split``): net changes, key-changing UPDATEs as DELETE +
    INSERT, every DELETE first.  Needs ``event(item)`` for the transaction boundaries."""

    takes_statements = True
    takes_watermarks = True

    def __init__(self, inner, keys, on_warning=None):
        from ..assembly.transactions import TxAssembler

        self.inner = inner
        self.keys = keys
        self.assembler = TxAssembler(on_warning=on_warning)
        self.pending = []       # statement records of the open transaction

    def event(self, item) -> None:
        self.keys.observe(item.event)
        self._units(self.assembler.feed(item))

    def write(self, change) -> None:
        self._units(self.assembler.feed(change))

    def statement(self, record) -> None:
        """A statement or DDL record: given out at once outside a transaction; inside
        one, after the transaction's (split) row changes."""
        if self.assembler.current is None:
            self.inner.statement(record)
        else:
            self.pending.append(record)

    def watermark(self, mark) -> None:
        """Written when no transaction is open here (the reader makes watermarks only
        between transactions; one this writer still holds rows of gets none)."""
        if self.assembler.current is None and not self.pending and self.inner.takes_watermarks:
            self.inner.watermark(mark)

    def close(self) -> None:
        self._units(self.assembler.finish())
        self._flush()

    def _flush(self) -> None:
        for record in self.pending:
            self.inner.statement(record)
        self.pending.clear()

    def _units(self, units) -> None:
        from ..assembly.split import split_changes
        from ..assembly.transactions import Transaction

        for unit in units:
            if isinstance(unit, Transaction) and not unit.incomplete:
                for change in split_changes(unit.changes, self.keys.keys):
                    self.inner.write(change)
            elif isinstance(unit, Transaction):
                for change in unit.changes:      # no COMMIT seen: given as they are
                    self.inner.write(change)
            if isinstance(unit, Transaction):
                self._flush()
