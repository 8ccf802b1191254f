"""The public API is fully annotated (mypy checks the annotations, this test checks
they are there): every public function and method of the library's public
modules annotates each parameter and its return value."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: What a library user imports (docs/api.md, CONTRIBUTING.md).
PUBLIC_MODULES = (
    "binlog/api.py", "binlog/reader.py", "binlog/errors.py", "binlog/filters.py",
    "binlog/user_values.py", "binlog/stream.py", "binlog/cursor.py", "binlog/header.py",
    "binlog/column.py", "binlog/gtids.py", "binlog/sources/base.py", "binlog/sources/file.py",
    "schema_store/store.py", "schema_store/loading.py", "schema_store/ddl.py",
    "schema_store/model.py", "schema_store/resolver.py", "schema_store/catalog.py",
    "schema_store/parser.py", "schema_store/live.py", "schema_store/snapshot.py",
)


def unannotated(tree: ast.Module) -> list[str]:
    """``name: what is missing`` for each public function or method lacking annotations."""
    found = []

    def check(fn, owner: str | None) -> None:
        if (fn.name.startswith("_") and fn.name != "__init__") or (owner or "").startswith("_"):
            return
        a = fn.args
        missing = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs
                   if p.annotation is None and p.arg not in ("self", "cls")]
        missing += [f"*{v.arg}" for v in (a.vararg, a.kwarg) if v is not None and v.annotation is None]
        if fn.returns is None and fn.name != "__init__":
            missing.append("return")
        if missing:
            found.append(f"{owner + '.' if owner else ''}{fn.name}: {', '.join(missing)}")

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            check(node, None)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    check(sub, node.name)
    return found


@pytest.mark.parametrize("path", PUBLIC_MODULES)
def test_public_functions_are_annotated(path):
    assert unannotated(ast.parse((REPO / path).read_text(encoding="utf-8"))) == []


def test_the_check_sees_a_missing_annotation():
    tree = ast.parse("def f(a, b: int): pass\nclass C:\n    def m(self) -> None: pass\n"
                     "    def _private(self, x): pass\n")
    assert unannotated(tree) == ["f: a, return"]


def test_the_packages_say_they_are_typed():
    assert (REPO / "binlog" / "py.typed").exists() and (REPO / "schema_store" / "py.typed").exists()
