"""Row images with each legacy value re-encoded in the ``*2`` layout: the hot path of the
rewrite.

A walk is made once per (table, columns-present bitmap): one step per present column,
``(null byte, null mask, op, a, b, column)``.  The op says how the value is crossed:

- ``FIXED``: ``a`` bytes (the width from the kind table, ``binlog/_column_kinds.h`` and
  ``column_kinds.kind_width``, as the compiled walks take it);
- ``PREFIX``: a little-endian length of ``a`` bytes, then that many bytes;
- ``LEGACY``: a legacy TIMESTAMP/DATETIME/TIME value, re-encoded by ``a`` (a
  ``binlog.types.LEGACY_TRANSCODERS`` entry) at precision ``b``;
- ``DECODE``: the column's decoder ``a`` finds where the value ends.

Every other byte is copied.  A failure is an ``ImageError``: the typed error, where in
the rows data it happened and the column (the converter adds the event's context).

The compiled walk (binlog/_speedups_rewrite.c ``compile_rewrite``, ``rewrite_rows``,
``rewrite_run``) takes the same steps (``compiled_walk``: FIXED and PREFIX as they are,
LEGACY by the decoder's column kind, K_TS0..K_TIME_HIRES of _column_kinds.h) and writes
the same bytes; this pure walk is its reference (fuzz/differential_rewrite.py check_rewrite).  A
walk with a DECODE step has no compiled form.
"""
from __future__ import annotations

from ..column import Column
from ..column_kinds import (
    K_BLOB,
    K_DECIMAL,
    K_DT0,
    K_DT_HIRES,
    K_TIME0,
    K_TIME_HIRES,
    K_TS0,
    K_TS_HIRES,
    VARIABLE,
    kind_width,
)
from ..constants import LEGACY_TEMPORAL_TYPES
from ..errors import BinlogError, MalformedEventError, TruncatedError
from ..extensions import load_extension
from ..rows import DecodePlan, present_columns, speed_spec
from ..types import LEGACY_TRANSCODERS

FIXED, PREFIX, DECODE, LEGACY = range(4)
# The compiled walk; None: the pure walk does it all (not built, BINLOG_PURE=1).
_speedups = load_extension("_speedups")
# the column kinds of the legacy layouts, N = 0 and hires (_column_kinds.h)
_LEGACY_KINDS = frozenset({K_TS0, K_TS_HIRES, K_DT0, K_DT_HIRES, K_TIME0, K_TIME_HIRES})
_KINDS = {"insert": 0, "update": 1, "delete": 2}


class ImageError(Exception):
    def __init__(self, error: BinlogError, pos: int, col: Column | None):
        self.error, self.pos, self.col = error, pos, col


def walk(plan: DecodePlan, present: bytes) -> tuple:
    """(NULL bitmap bytes, steps, compiled ops by NULL bitmap) of the columns ``present``."""
    cols = present_columns(present, len(plan.columns))
    steps = tuple((k >> 3, 1 << (k & 7)) + step(plan.columns[ci], plan.decoders[ci])
                  for k, ci in enumerate(cols))
    return ((len(cols) + 7) >> 3, steps, {})


def step(col: Column, decoder) -> tuple:
    """(op, a, b, column) of one column in a row-image walk."""
    if col.type in LEGACY_TEMPORAL_TYPES:
        n = col.precision
        if n is None or not 0 <= n <= 6:
            raise MalformedEventError(f"invalid fractional precision {n}", column=col.label)
        return (LEGACY, LEGACY_TRANSCODERS[col.type], n, col)
    kind, n, length, _unsigned, precision, scale = speed_spec(col)[:6]
    width = kind_width(kind, n, length, precision, scale)
    if width >= 0:
        return (FIXED, width, None, col)
    if kind == K_DECIMAL:
        raise MalformedEventError(f"DECIMAL({col.precision},{col.scale}) metadata no server "
                                  f"writes", column=col.label)
    if width == VARIABLE:
        prefix = length if kind == K_BLOB else 1 if length <= 255 else 2
        if 1 <= prefix <= 4:
            return (PREFIX, prefix, None, col)
    return (DECODE, decoder, col, col)


def compiled_walk(pure: tuple):
    """``walk``'s steps as ``_speedups.compile_rewrite`` takes them: (null byte, mask,
    op, width or length bytes, kind, N), a legacy value's kind the decoder's
    (``rows.speed_spec``); None when a step has no compiled form or nothing is built."""
    nbytes, steps, _ = pure
    if _speedups is None:
        return None
    specs = []
    for byte, mask, op, a, b, col in steps:
        if op in (FIXED, PREFIX):
            specs.append((byte, mask, op, a, 0, 0))
            continue
        kind = speed_spec(col)[0]
        if op != LEGACY or kind not in _LEGACY_KINDS:
            return None
        specs.append((byte, mask, op, 0, kind, b))
    return _speedups.compile_rewrite(nbytes, tuple(specs))


def compiled_images(event, walk, walk_after) -> tuple[bytes, int] | None:
    """(new rows data, legacy values) of ``event`` from the compiled walk; None when it
    falls back (the pure walk then rewrites the event, and raises the typed error)."""
    if _speedups is None:
        return None
    try:
        return _speedups.rewrite_rows(event.data, _KINDS[event.kind], walk, walk_after)
    except _speedups.Fallback:
        return None


def rewrite_run():
    """``_speedups.rewrite_run`` (runs of rows events written in one call), or None."""
    return _speedups.rewrite_run if _speedups is not None else None


def rewrite_images(data, before, after) -> tuple[list, int]:
    """Every row image of a rows event's data (``after``: the walk of an UPDATE's after
    images, else None): the pieces of the new data and the legacy values re-encoded."""
    end, pos = len(data), 0
    out: list = []
    count = 0
    while pos < end:
        pos, n = rewrite_image(data, pos, end, before, out)
        count += n
        if after is not None:
            pos, n = rewrite_image(data, pos, end, after, out)
            count += n
    return out, count


def rewrite_image(data, pos: int, end: int, walk, out: list) -> tuple[int, int]:
    """One row image from ``pos``: its bytes into ``out`` with each legacy value
    re-encoded; returns (the position after it, legacy values re-encoded).  The walk's
    steps for one NULL bitmap are compiled once (``_ops``): NULL columns dropped, runs of
    fixed-width values one step."""
    nbytes, steps, compiled = walk
    if end - pos < nbytes:
        raise ImageError(TruncatedError(f"need {nbytes} bytes for the NULL bitmap, "
                                        f"{end - pos} left"), pos, None)
    nulls = data[pos:pos + nbytes]
    ops = compiled.get(nulls)
    if ops is None:
        ops = _ops(steps, nulls)
        if len(compiled) < 4096:        # NULL patterns of one table: few, but bounded
            compiled[nulls] = ops
    start = pos
    pos += nbytes
    count = 0
    for op, a, b, col in ops:
        at = pos
        try:
            if op == FIXED:
                pos += a
            elif op == PREFIX:
                if end - pos < a:
                    raise TruncatedError(f"need {a} bytes for a length, {end - pos} left")
                pos += a + int.from_bytes(data[pos:pos + a], "little")
            elif op == LEGACY:
                out.append(data[start:pos])
                value, pos = a(data, pos, end, b)
                out.append(value)
                start = pos
                count += 1
            else:
                _value, pos = a(data, pos, end, b)
        except BinlogError as exc:
            raise ImageError(exc, at, col) from exc
        if pos > end:
            where, col = _overrun(op, b, col, at, end)
            raise ImageError(TruncatedError(f"the value runs {pos - end} bytes past the end "
                                            f"of the rows data"), where, col)
    out.append(data[start:pos])
    return pos, count


def _ops(steps, nulls) -> list:
    """The steps of the non-NULL columns, consecutive fixed widths merged into one
    (b: their (width, column) pairs, for the error that names the column)."""
    ops: list = []
    for byte, mask, op, a, b, col in steps:
        if nulls[byte] & mask:
            continue
        if op == FIXED and ops and ops[-1][0] == FIXED:
            _, size, parts, first = ops[-1]
            ops[-1] = (FIXED, size + a, parts + ((a, col),), first)
        elif op == FIXED:
            ops.append((FIXED, a, ((a, col),), col))
        else:
            ops.append((op, a, b, col))
    return ops


def _overrun(op, b, col, at, end) -> tuple[int, Column]:
    """Where the value that runs past ``end`` starts, and its column."""
    if op == FIXED:
        for size, part in b:
            if at + size > end:
                return at, part
            at += size
    return at, col
