"""Every binlog of MySQL's test suite (samples/mysql-test) is read to its end; the
damaged ones stop with a typed error at the documented place."""
from __future__ import annotations

from pathlib import Path

import pytest
from support.corpus import DAMAGED
from support.paths import CORPUS

from binlog.errors import BinlogError, IncompleteEventError
from binlog.reader import BinlogReader, RowChange

FILES = sorted(p for p in CORPUS.glob("*") if p.name != "README.md")

def read_all(path: Path) -> list:
    return list(BinlogReader([path]).items())


def test_corpus_is_there():
    assert len(FILES) == 35, f"expected the 35 mysql-test binlogs in {CORPUS}"


@pytest.mark.parametrize("path", [p for p in FILES if p.name not in DAMAGED], ids=lambda p: p.name)
def test_reads_to_the_end(path):
    items = read_all(path)
    assert items, "no events"
    last = items[-1]
    end = last.event.header.end if not isinstance(last, RowChange) else None
    if end is not None and not last.event.header.type_code == 40:
        assert end == path.stat().st_size


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_file_gives_typed_error(name):
    error, offset, event_type = DAMAGED[name]
    reader = BinlogReader([CORPUS / name])
    if error is IncompleteEventError:
        # A file ending inside an event (cut short, or still being written) is a clean
        # stop: the incomplete event is reported, not raised.
        list(reader.items())
        exc = reader.stats.incomplete
    else:
        with pytest.raises(BinlogError) as info:
            list(reader.items())
        exc = info.value
    assert isinstance(exc, error), repr(exc)
    assert exc.event_offset == offset
    assert exc.event_type == event_type
    assert exc.source == name
    assert name in str(exc) and str(offset) in str(exc)


def test_mysql_type_bit_row():
    """The README: the file holds a row (BIT = 0b100, 'foo', BIT = 0b100000)."""
    rows = [c for c in read_all(CORPUS / "mysql_type_bit.000001") if isinstance(c, RowChange)]
    values = [list(c.after.values()) for c in rows if c.op == "insert"]
    assert [0b100, "foo", 0b100000] in [[v.decode() if isinstance(v, bytes) else v for v in row]
                                         for row in values]
