"""Every third-party module the packages import is declared by pyproject.toml: a base
dependency or a user extra ([dev] does not count: users do not install it).  The quick,
static half of test_install_lines.py, which installs each README line for real."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib

from project_copy import REPO

PACKAGES = ("binlog", "schema_store", "spark_ingest")


def _norm(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {_norm(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "dev":
            names |= {_norm(r) for r in requirements}
    return names


def imported() -> dict[str, str]:
    """Top-level third-party module -> the first place that imports it."""
    seen: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    root = name.split(".")[0]
                    if root not in sys.stdlib_module_names and root not in PACKAGES and not root.startswith("_"):
                        seen.setdefault(root, f"{path.relative_to(REPO)}:{node.lineno}")
    return seen


#: import names whose distribution is named otherwise (for when it is not installed here)
DISTRIBUTIONS = {"nacl": {"pynacl"}, "pymysql": {"pymysql"}}


def test_every_third_party_import_is_declared_by_a_user_extra():
    dists = md.packages_distributions()
    have = declared()
    missing = {module: where for module, where in imported().items()
               if not ({_norm(d) for d in dists.get(module, ())} | DISTRIBUTIONS.get(module, {module})) & have}
    assert not missing, f"imported but declared by no extra: {missing}"
