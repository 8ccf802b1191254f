"""Where binlogs come from: the only package that does I/O on them.

``base`` defines the interface (``BinlogSource`` hands out ``Binlog``s, each the bytes
of one binlog under its server name) and ``read_events``, the loop that feeds a
``Binlog`` to the sans-IO ``EventStream``; ``file`` implements it for files and
directories.
"""
from .base import Binlog, BinlogSource, Position, read_events
from .file import FileBinlog, FileSource

__all__ = ["Binlog", "BinlogSource", "FileBinlog", "FileSource", "Position", "read_events"]
