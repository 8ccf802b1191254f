"""What the differential fuzzing (fuzz/differential.py, fuzz/differential_dump.py)
compares and how: every compiled path switched off (``pure()``), and the outcomes two
paths must agree on (``error_key``, ``value_key``, ``rows_key``; ``short`` prints one).
A difference raises ``Difference`` (an AssertionError: a finding)."""
from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from binlog.errors import BinlogError


class Difference(AssertionError):
    """The compiled and the pure path disagree on an input."""


# --- switching the compiled paths off ----------------------------------------------

def compiled_bindings() -> list[tuple[types.ModuleType, str]]:
    """(module, attribute) of every loaded ``binlog`` module attribute bound to a
    compiled ``binlog._*`` extension module."""
    found = []
    for name, module in list(sys.modules.items()):
        if not (name == "binlog" or name.startswith("binlog.")) or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if (isinstance(value, types.ModuleType) and value.__name__.startswith("binlog._")
                    and not getattr(value, "__file__", "").endswith(".py")):
                found.append((module, attr))
    return found


@contextmanager
def pure() -> Iterator[None]:
    """Run the body with every compiled path off (as BINLOG_PURE=1 would at import)."""
    saved = [(module, attr, getattr(module, attr)) for module, attr in compiled_bindings()]
    for module, attr, _ in saved:
        setattr(module, attr, None)
    try:
        yield
    finally:
        for module, attr, value in saved:
            setattr(module, attr, value)


def compiled_calls(run) -> set[str]:
    """Names of the functions of compiled ``binlog._*`` modules that ``run()`` calls:
    none may be called under ``pure()`` (a compiled path that pure() does not switch
    off would be compared with itself)."""
    called: set[str] = set()

    def profile(frame, what, arg):
        if what == "c_call":
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, types.ModuleType) and owner.__name__.startswith("binlog._"):
                called.add(f"{owner.__name__}.{arg.__name__}")

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return called


def compiled_available() -> bool:
    return bool(compiled_bindings())


def stale_builds() -> list[str]:
    """Compiled modules older than the C source beside them: a checkout updated (a merge)
    without rebuilding (``python setup.py build_ext --inplace`` or ``make install``).
    Comparing them with the new pure path would report the rebuild, not a bug."""
    stale = []
    for module, attr in compiled_bindings():
        built = Path(getattr(module, attr).__file__)
        source = built.parent / (built.name.split(".")[0] + ".c")
        if source.exists() and source.stat().st_mtime > built.stat().st_mtime:
            stale.append(str(built))
    return list(dict.fromkeys(stale))


# --- outcomes ----------------------------------------------------------------------

def error_key(exc: BinlogError) -> tuple:
    """What two paths must agree on when they fail."""
    return (type(exc).__name__, str(exc), exc.source, exc.event_offset, exc.field_offset,
            exc.event_type, exc.table, exc.column)


def value_key(value) -> tuple:
    """A value with its type: 1 == 1.0 == True and Decimal('0') == Decimal('-0') must not
    pass for equal."""
    if isinstance(value, dict):
        return ("dict", tuple((k, value_key(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(value_key(v) for v in value))
    return (type(value).__name__, repr(value))


def rows_key(decoded: list) -> tuple:
    return tuple((value_key(before), value_key(after)) for before, after in decoded)


def short(outcome: tuple) -> str:
    if len(outcome) == 3:
        status, out, err = outcome
        return f"exit {status}, {len(out)} bytes {out[-300:]!r}, stderr {err[-500:]!r}"
    out, error, damage, incomplete = outcome
    return f"{len(out)} bytes {out[-300:]!r}, error {error}, damage {damage}, incomplete {incomplete}"
