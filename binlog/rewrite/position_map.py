"""The position map of a rewritten binlog: what ``binlog rewrite`` writes beside each
output binlog and what ``sources/`` (``rewritten``, ``served``) reads back.

A text file, ``<name>.map``: a first line naming the format, then one line per event
written, in order, four decimal numbers separated by one space: its start and end
offsets in the input, its start and end offsets in the output ("in_start in_end
out_start out_end").  An end offset is what the header's log_pos holds (what a
consumer's checkpoint stores); a start is where a reader may begin.  Events not written
(START_ENCRYPTION) have no line.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..errors import MalformedEventError, UsageError

MAP_HEADER = "# binlog rewrite position map v1: in_start in_end out_start out_end\n"


@dataclass(frozen=True, slots=True)
class MapEntry:
    in_start: int
    in_end: int
    out_start: int
    out_end: int

    def line(self) -> str:
        return f"{self.in_start} {self.in_end} {self.out_start} {self.out_end}\n"


def parse_map(text: str, source: str) -> list[MapEntry]:
    """The entries of a map file's text (a last line without its newline, cut by a
    crash, is left out: the rerun writes its event again); MalformedEventError names a
    bad line."""
    if not text.startswith(MAP_HEADER):
        raise MalformedEventError("not a binlog rewrite position map (first line)",
                                  source=source, event_offset=0)
    lines = text[len(MAP_HEADER):].split("\n")
    entries = []
    for number, line in enumerate(lines[:-1], 2):      # lines[-1]: after the last newline
        parts = line.split(" ")
        if len(parts) != 4 or not all(p.isdigit() for p in parts):
            raise MalformedEventError(f"line {number} is not four offsets: {line[:80]!r}",
                                      source=source)
        entries.append(MapEntry(*map(int, parts)))
    return entries


def lookup(entries: list[MapEntry], position: int, *, from_output: bool = False) -> int:
    """``position`` (an event's start or end, 4 for the first) in the other coordinate
    system; UsageError when it is neither."""
    starts = [e.out_start if from_output else e.in_start for e in entries]
    i = bisect.bisect_right(starts, position) - 1
    if i >= 0:
        e = entries[i]
        if position == starts[i]:
            return e.in_start if from_output else e.out_start
        if position == (e.out_end if from_output else e.in_end):
            return e.in_end if from_output else e.out_end
    side = "output" if from_output else "input"
    raise UsageError(f"{side} position {position} is not the start or end of an event the "
                     f"map lists")
