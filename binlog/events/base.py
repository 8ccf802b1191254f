"""Event classes shared by every module: the base, unknown and known-but-opaque events."""
from __future__ import annotations

from dataclasses import dataclass

from ..header import EventHeader


@dataclass
class Event:
    header: EventHeader

    @property
    def offset(self) -> int:
        return self.header.offset

    @property
    def type_name(self) -> str:
        return self.header.type_name


@dataclass
class UnknownEvent(Event):
    """A type code this parser does not know; kept raw and reported, never dropped."""
    body: bytes


@dataclass
class OpaqueEvent(Event):
    """A known event whose body matters to no row change (LOAD DATA blocks, group
    replication VIEW_CHANGE/TRANSACTION_CONTEXT, IGNORABLE); kept raw."""
    body: bytes


@dataclass
class SkippedRowsEvent(Event):
    """A rows event of a filtered table, stepped over by its length, never decoded."""
    table_id: int
