"""The package graph goes one way (docs/style.md "Layout"): every module imports on
its own, no two modules import each other (directly or round a cycle), and no module
imports one of a higher layer.  Imports inside functions count: they are cycles too,
only deferred.  The same holds one level up: no two packages (``binlog.output``,
``binlog.replay``, ``binlog.commands``, ``spark_ingest``, ...; a module directly under
``binlog/`` counts as a package of its own) import each other round a cycle."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("binlog", "schema_store", "spark_ingest")

#: Highest first.  A module may import modules of its own group and of lower layers; the
#: groups of one layer do not import each other.  A module matches the longest prefix
#: (``=name`` matches that module only: a package's ``__init__``).
LAYERS: list[list[tuple[str, ...]]] = [
    [("binlog.cli", "spark_ingest.command", "spark_ingest.submit")],
    [("binlog.commands",)],
    [("spark_ingest",), ("binlog.doctor",), ("binlog.serve",)],
    [("=binlog", "binlog.api")],                # the library API (from binlog import ...)
    [("binlog.replay.applier",)],               # apply's machinery (commands.apply: its options)
    [("binlog.replay.batch",)],                 # apply's multi-row statements
    [("binlog.replay",)],                       # keys, parallel workers, packets, BINLOG statements
    [("binlog.output.sql", "binlog.output.extras", "binlog.output.cdc")],
    [("binlog.output.json_lines", "binlog.output.text", "binlog.output.debezium", "binlog.checksum")],
    [("binlog.output.values", "binlog.output")],
    [("binlog.assembly",)],                     # transactions, split, --rewrite-db, routines
    [("binlog.reader", "binlog.reader_options", "binlog.infer", "binlog.rows", "binlog.sources",
      "binlog.continuity", "binlog.rewrite", "binlog.watermarks"),
     ("schema_store",), ("binlog.options",)],
    [("binlog.stream", "binlog.stream_runs")],
    [("binlog.decryption",)],                   # the encrypted part of a file, for the stream
    [("binlog.events", "binlog.crypt")],
    [("binlog.types", "binlog.header", "binlog.registry", "binlog.compression", "binlog.protocol")],
    [("binlog.column", "binlog.cursor", "binlog.filters", "binlog.user_values", "binlog.sql_connection", "binlog.gtids",
      "binlog.statements", "binlog.scan")],
    [("binlog.constants", "binlog.errors", "binlog.charsets", "binlog._speedups", "binlog._scan", "binlog.extensions",
      "binlog.exitcodes", "binlog.column_kinds", "binlog.interrupts", "binlog.inert")],
]


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known) -> set[str]:
    """The project modules ``name`` imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(head + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:       # binlog.x.Name -> binlog.x
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def place(name: str) -> tuple[int, int]:
    """(layer, group) of a module: its longest matching prefix."""
    best = (-1, (0, 0))
    for layer, groups in enumerate(LAYERS):
        for group, prefixes in enumerate(groups):
            for prefix in prefixes:
                exact = prefix.startswith("=")
                hit = name == prefix[1:] if exact else name == prefix or name.startswith(prefix + ".")
                if hit and len(prefix) > best[0]:
                    best = (len(prefix), (layer, group))
    if best[0] < 0:
        raise AssertionError(f"{name} is in no layer: add it to LAYERS")
    return best[1]


def package_of(name: str) -> str:
    """``binlog.output.sql`` -> ``binlog.output``; ``spark_ingest.tasks`` -> ``spark_ingest``;
    a module directly under ``binlog/`` (``binlog.checksum``) is a node of its own."""
    top, _, rest = name.partition(".")
    if top != "binlog" or not rest:
        return top
    head = rest.partition(".")[0]
    return f"binlog.{head}" if (REPO / "binlog" / head).is_dir() else name


def package_graph(g) -> dict[str, set[str]]:
    """The module graph ``g`` folded onto packages (an import inside a package drops out)."""
    out: dict[str, set[str]] = {}
    for name, targets in g.items():
        source = package_of(name)
        out.setdefault(source, set()).update(package_of(t) for t in targets)
        out[source].discard(source)
    return out


def upward_imports(g) -> list[str]:
    bad = []
    for name, targets in sorted(g.items()):
        layer, group = place(name)
        for target in sorted(targets):
            t_layer, t_group = place(target)
            if t_layer < layer or (t_layer == layer and t_group != group):
                bad.append(f"{name} imports {target}")
    return bad


def cycles(g) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_a_higher_layer():
    assert upward_imports(graph()) == []


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_no_package_import_cycle():
    g = graph()
    found = cycles(package_graph(g))
    # name the module imports behind each cycle, so the message says which edge to cut
    edges = [f"{a} imports {b}" for a, targets in sorted(g.items()) for b in sorted(targets)
             for cycle in found if package_of(a) in cycle and package_of(b) in cycle
             and package_of(a) != package_of(b)]
    assert found == [], edges


def test_the_checks_see_an_upward_import_and_a_cycle():
    g = {"binlog.output.sql": {"binlog.cli"}, "binlog.cli": {"binlog.output.sql"}}
    assert upward_imports(g) == ["binlog.output.sql imports binlog.cli"]
    assert cycles(g) == [["binlog.cli", "binlog.output.sql"]]
    # a function-level import is an import
    found = imports("binlog.output.sql.script", REPO / "binlog/output/sql/script.py", modules())
    assert "binlog.assembly.transactions" in found


def test_the_package_check_sees_a_cycle_through_two_modules_each():
    g = {"binlog.output.sql": {"binlog.replay.split"}, "binlog.replay.batch": {"binlog.output.json_lines"},
         "binlog.replay.split": set(), "binlog.output.json_lines": set(), "binlog.checksum": {"binlog.cursor"}}
    assert cycles(g) == []
    assert cycles(package_graph(g)) == [["binlog.output", "binlog.replay"]]
    assert package_graph(g)["binlog.checksum"] == {"binlog.cursor"}
    assert package_of("spark_ingest.command") == "spark_ingest"
    assert package_of("binlog") == "binlog"


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_imports_on_its_own(name):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
