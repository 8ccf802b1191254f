"""``--infer-precision``: find the N of legacy TIMESTAMP/DATETIME/TIME columns from the
row images themselves, accepting only an unambiguous fit.

A legacy column's width depends on N (docs/binlog-formats.md §8 size table) and its bytes
decode to plausible values only for the right N (§10.4).  For one rows event we search
every assignment of N to the legacy columns that have non-NULL values in it: an
assignment fits when every row image of the event is consumed exactly (the rows data
ends on its last byte) and every decoded legacy value is plausible.  Exactly one fit is
accepted; none or several stop the run with the candidates - never a guess.
"""
from __future__ import annotations

import re
from dataclasses import replace

from .constants import LEGACY_TEMPORAL_TYPES, ColumnType as T
from .errors import BinlogError, PrecisionUnknownError
from .events.rows import UPDATE, RowsEvent
from .rows import DecodePlan, present_columns

MAX_FITS = 2          # we only need to know whether there is more than one
MAX_STEPS = 100_000   # bound on the search (each step decodes the event once; ~10 s at worst)

_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$")
_TIME = re.compile(r"^-?(\d+):(\d{2}):(\d{2})(?:\.\d+)?$")


class PrecisionAmbiguousError(PrecisionUnknownError):
    """Several precisions fit the row images equally well."""


def plausible(value: str, col_type: int) -> bool:
    """§10.4: dates in 1000..9999 (TIMESTAMP 1970..2038) or the zero date; TIME within
    ±838:59:59; minutes and seconds below 60."""
    if col_type == T.TIME:
        m = _TIME.match(value)
        return m is not None and int(m.group(1)) <= 838 and int(m.group(2)) < 60 and int(m.group(3)) < 60
    m = _DATETIME.match(value)
    if not m:
        return False
    year, month, day, hour, minute, second = map(int, m.groups())
    if year == month == day == hour == minute == second == 0:
        return True
    low, high = (1970, 2038) if col_type == T.TIMESTAMP else (1000, 9999)
    return (low <= year <= high and month <= 12 and day <= 31 and hour < 24
            and minute < 60 and second < 60)


def _null_bitmap_plausible(nulls: bytes, present: list[int], columns) -> bool:
    """The writers start the NULL bitmap as all ones and clear a bit per non-NULL value
    (pack_row in MariaDB sql/rpl_record.cc and MySQL's), so the bits past the present
    columns are 1; and a NOT NULL column (TABLE_MAP nullability) is never NULL.  A
    misaligned read - the seed's phantom row - breaks one of the two."""
    count = len(present)
    for bit in range(count, len(nulls) * 8):
        if not nulls[bit >> 3] >> (bit & 7) & 1:
            return False
    for k, ci in enumerate(present):
        if nulls[k >> 3] >> (k & 7) & 1 and not columns[ci].nullable:
            return False
    return True


def unknown_legacy_columns(plan: DecodePlan) -> list[int]:
    return [c.index for c in plan.columns if c.type in LEGACY_TEMPORAL_TYPES and c.precision is None]


def infer_precisions(event: RowsEvent, plan: DecodePlan) -> dict[int, int]:
    """The one assignment {column index: N} that fits the event, or raise."""
    from .types import decoder_for

    unknown = set(unknown_legacy_columns(plan))
    candidates = {}
    for i in unknown:
        cols = [replace(plan.columns[i], precision=n) for n in range(7)]
        candidates[i] = [(decoder_for(c), c) for c in cols]
    images = _image_layouts(event)
    search = _Search(event.data, plan, candidates, images)
    search.run()
    where = f"{plan.qualified_name} at {event.type_name} @ {event.offset}"
    if len(search.fits) == 1:
        return search.fits[0]
    columns = ", ".join(plan.columns[i].label for i in sorted(unknown))
    if not search.fits:
        raise PrecisionUnknownError(
            f"no precision of legacy column(s) {columns} fits the row images of {where}"
            + (" (search bound reached)" if search.steps > MAX_STEPS else ""),
            table=plan.qualified_name, hint="give the table's schema (--schema-ddl / --schema-store)")
    options = " or ".join("{" + ", ".join(f"{plan.columns[i].label}: N={n}" for i, n in sorted(fit.items())) + "}"
                          for fit in search.fits)
    raise PrecisionAmbiguousError(
        f"the row images of {where} fit more than one precision: {options}",
        table=plan.qualified_name,
        hint="give the table's schema (--schema-ddl / --schema-store) or set it with "
             "`binlog schema set DB.TABLE @N TYPE PRECISION`")


def _image_layouts(event: RowsEvent) -> list[list[int]]:
    """The present-column lists of the images of one row, in order."""
    before = present_columns(event.present, event.width)
    if event.kind == UPDATE:
        return [before, present_columns(event.after_present, event.width)]
    return [before]


class _Search:
    """Decode the whole event under a partial assignment {column: N}; the first legacy
    value whose column has no N yet asks for a choice, and the search tries the seven
    precisions there, restarting the decode (events are small: MariaDB cuts rows events
    at binlog_row_event_max_size, 8 KiB by default).  Iterative, so no recursion limit."""

    def __init__(self, data, plan, candidates, images):
        self.data, self.plan, self.candidates, self.images = data, plan, candidates, images
        self.fits: list[dict[int, int]] = []
        self.steps = 0

    def run(self) -> None:
        stack: list[dict[int, int]] = [{}]
        while stack and len(self.fits) < MAX_FITS:
            self.steps += 1
            if self.steps > MAX_STEPS:
                return
            assign = stack.pop()
            outcome = self._attempt(assign)
            if outcome is True:
                self.fits.append(assign)
            elif outcome is not None:
                column, pos = outcome
                # Only precisions whose value right there is readable and plausible are
                # worth a whole new attempt: that keeps the search small.
                stack.extend({**assign, column: n} for n in range(6, -1, -1)
                             if self._fits_here(column, n, pos))

    def _fits_here(self, column: int, n: int, pos: int) -> bool:
        decode, col = self.candidates[column][n]
        try:
            value, _ = decode(self.data, pos, len(self.data), col)
        except BinlogError:
            return False
        return plausible(value, col.type)

    def _attempt(self, assign: dict[int, int]):
        """True: a fit; None: no fit; (column, position): the column needs a choice."""
        data, end = self.data, len(self.data)
        columns, decoders = self.plan.columns, self.plan.decoders
        pos = 0
        if not any(self.images):
            return end == 0      # images of no column take no bytes: nothing to search
        try:
            while pos < end:
                for present in self.images:
                    nbytes = (len(present) + 7) >> 3
                    if pos + nbytes > end:
                        return None
                    nulls = data[pos:pos + nbytes]
                    pos += nbytes
                    if not _null_bitmap_plausible(nulls, present, columns):
                        return None
                    for k, ci in enumerate(present):
                        if nulls[k >> 3] >> (k & 7) & 1:
                            continue
                        col = columns[ci]
                        if ci in self.candidates:
                            if ci not in assign:
                                return ci, pos
                            decode, col = self.candidates[ci][assign[ci]]
                            value, pos = decode(data, pos, end, col)
                            if not plausible(value, col.type):
                                return None
                        else:
                            _, pos = decoders[ci](data, pos, end, col)
        except BinlogError:
            return None
        return pos == end
