"""Rooms a newcomer can hold (docs/style.md "Rules"): no source file the repository holds
(Python or C) is over ``MAX_LINES`` lines but the option table, and no class has more
than ``MAX_METHODS`` methods, except those named in ``LONG_FILES`` / ``BIG_CLASSES``
with the reason they still are.  An entry that is no longer over its limit fails too,
so the lists only ever shrink."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("binlog", "schema_store", "spark_ingest", "tools", "bench", "fuzz", "samples",
         "tests", "docker", "setup.py")
SUFFIXES = (".py", ".c", ".h")

MAX_LINES = 900
MAX_METHODS = 40

#: Every option of every command, declared once (binlog/options.py): one home per option
#: is worth more than a short file, so it is not held to MAX_LINES.
OPTION_TABLE = "binlog/options.py"

#: Files over MAX_LINES today, and why they have not been split yet.
LONG_FILES: dict[str, str] = {}

#: Classes ("path::Class") over MAX_METHODS today, and why.
BIG_CLASSES: dict[str, str] = {}


def sources() -> list[Path]:
    found = []
    for root in ROOTS:
        path = REPO / root
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p for p in sorted(path.rglob("*"))
                         if p.suffix in SUFFIXES and p.is_file())
    assert len(found) > 300, "the walk found too few sources: ROOTS out of date?"
    return found


def name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def file_lengths() -> dict[str, int]:
    return {name(p): len(p.read_text(encoding="utf-8", errors="replace").splitlines())
            for p in sources()}


def class_sizes() -> dict[str, int]:
    sizes = {}
    for path in sources():
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [m for m in node.body
                           if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
                sizes[f"{name(path)}::{node.name}"] = len(methods)
    return sizes


def test_no_file_over_the_limit_but_the_listed_ones():
    lengths = file_lengths()
    over = {f: n for f, n in lengths.items()
            if n > MAX_LINES and f != OPTION_TABLE and f not in LONG_FILES}
    assert not over, f"over {MAX_LINES} lines (split them, docs/architecture.md): {over}"


def test_no_class_over_the_limit_but_the_listed_ones():
    over = {c: n for c, n in class_sizes().items() if n > MAX_METHODS and c not in BIG_CLASSES}
    assert not over, f"over {MAX_METHODS} methods (compose it of smaller parts): {over}"


def test_the_lists_hold_only_what_is_still_over():
    lengths, sizes = file_lengths(), class_sizes()
    stale = [f for f in LONG_FILES if lengths.get(f, 0) <= MAX_LINES]
    stale += [c for c in BIG_CLASSES if sizes.get(c, 0) <= MAX_METHODS]
    assert not stale, f"no longer over the limit (or gone): take them off the list: {stale}"
