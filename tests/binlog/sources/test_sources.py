"""The source interface: the reader reads any ``BinlogSource`` as it reads files.

A source here is a real implementation of the interface over bytes (the shape stdin
and a replication connection have: no seeking, bytes arriving in pieces of any size);
the expected output is what the same bytes give as files.
"""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from binlog.errors import UsageError
from binlog.reader import BinlogReader, ReaderHooks, ReaderOptions, RowChange
from binlog.sources import Binlog, BinlogSource, FileSource, Position

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
MULTI = SAMPLES / "events_misc"          # three binlogs and an index


class PipeBinlog(Binlog):
    """A binlog read once from a pipe, ``piece`` bytes at a time."""

    def __init__(self, name: str, data: bytes, piece: int):
        self.name = name
        self._fh = io.BytesIO(data)
        self.piece = piece

    def read(self, size: int) -> bytes:
        return self._fh.read(min(size, self.piece))


class PipeSource(BinlogSource):
    def __init__(self, files: list[Path], piece: int):
        self.paths = files
        self.piece = piece
        self.rotations: list[str] = []

    def binlogs(self):
        for number, path in enumerate(self.paths):
            binlog = PipeBinlog(path.name, path.read_bytes(), self.piece)
            binlog.last = number == len(self.paths) - 1
            yield binlog

    def rotated(self, name: str) -> None:
        self.rotations.append(name)


def _records(reader: BinlogReader) -> list:
    out = []
    for item in reader.items():
        if isinstance(item, RowChange):
            out.append((item.file, item.pos, item.gtid, item.db, item.table, item.op,
                        item.before, item.after))
        else:
            out.append((item.file, item.event.header.offset, item.event.type_name))
    return out


def _files() -> list[Path]:
    return sorted(MULTI.glob("mariadb-bin.0*"))


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_a_source_of_pieces_reads_like_the_files(piece):
    expected = _records(BinlogReader([MULTI]))
    source = PipeSource(_files(), piece)
    assert _records(BinlogReader(source)) == expected
    assert expected and any(len(r) > 3 for r in expected)


def test_the_source_hears_of_each_rotation():
    source = PipeSource(_files(), 1 << 20)
    list(BinlogReader(source).items())
    # file 1 ends with a ROTATE to file 2, file 2 with a STOP (the server was restarted),
    # file 3 with a ROTATE to file 4, which the set does not hold
    assert source.rotations == ["mariadb-bin.000002", "mariadb-bin.000004"]


def test_file_source_equals_paths():
    assert _records(BinlogReader(FileSource([MULTI]))) == _records(BinlogReader([MULTI]))


def test_a_source_that_cannot_seek_says_so_for_a_start_position():
    source = PipeSource(_files()[:1], 1 << 20)
    with pytest.raises(UsageError, match="cannot start at position 500"):
        list(BinlogReader(source, ReaderOptions(start_position=500)).items())


def test_options_object_and_keywords_are_the_same_reader():
    last = _files()[-1]
    stop = 600
    by_object = BinlogReader([last], ReaderOptions(stop_position=stop, verify_checksums=False))
    by_words = BinlogReader([last], stop_position=stop, verify_checksums=False)
    assert by_object.options == by_words.options
    assert _records(by_object) == _records(by_words)
    assert all(r[1] < stop for r in _records(BinlogReader([last], stop_position=stop)))


def test_options_are_frozen_and_checked():
    options = ReaderOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.on_error = "skip"  # type: ignore[misc]
    with pytest.raises(ValueError, match="on_error"):
        ReaderOptions(on_error="ignore")
    with pytest.raises(UsageError):
        BinlogReader([MULTI], ReaderOptions(), stop_position=5)
    with pytest.raises(UsageError):
        BinlogReader([MULTI], hooks=ReaderHooks(), on_damage=print)
    with pytest.raises(TypeError, match="stop_postion"):
        BinlogReader([MULTI], stop_postion=5)


def test_rotate_names_never_leave_the_directory(tmp_path):
    source = FileSource([_files()[0]])
    source.rotated("../../etc/passwd")
    assert source._rotated_to == "passwd"


def test_position_prints_as_name_and_offset():
    assert str(Position("mariadb-bin.000002", 256)) == "mariadb-bin.000002:256"
