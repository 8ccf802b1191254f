"""Event decoders keyed by type code.

A decoder is ``decode(cur, ctx, header) -> Event`` where ``cur`` spans the event body
(after the common header, before the checksum).  Modules in ``binlog.events`` register
themselves with ``@register(EventType.X, ...)``; ``binlog.events`` imports them all
explicitly, so the table is complete once that package is imported.
"""
from __future__ import annotations

from typing import Callable

EVENT_DECODERS: dict[int, Callable] = {}


def register(*codes: int):
    def wrap(func):
        for code in codes:
            if code in EVENT_DECODERS:
                raise RuntimeError(f"two decoders for event type {code}")
            EVENT_DECODERS[int(code)] = func
        return func
    return wrap
