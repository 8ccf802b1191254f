"""Record every sample's byte outputs, then compare another checkout's against them.

A refactoring that should change nothing a user sees is checked this way: on the tree
before it, ``python3 tools/sample_outputs.py record DIR``; on the tree after it,
``python3 tools/sample_outputs.py compare DIR``.  For each binlog of ``samples/`` (the
MariaDB corpus, the encrypted samples, MySQL's mysql-test binlogs) it runs
``binlog dump`` in each output format and ``binlog rewrite`` (plain, ``--keep-compressed``,
``--full-metadata``), and keeps stdout, stderr, the exit status and every file written
(the rewritten binlogs, their position maps, the index).  The checkout whose code runs is
the one this script is in (``python -m binlog.cli`` from its root); ``--pure`` runs it
with ``BINLOG_PURE=1`` (the compiled paths off).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
FORMATS = ("json", "text", "sql", "flashback", "debezium")
ENV = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT)}
REWRITES = {"plain": [], "keep-compressed": ["--keep-compressed"],
            "full-metadata": ["--full-metadata"]}


def inputs() -> dict[str, tuple[list[str], list[str]]]:
    """name -> (the binlog arguments, the schema and key arguments)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    maria = SAMPLES / "mariadb-10.11"
    for path in sorted(maria.iterdir()):
        if path.suffix == ".binlog" or path.is_dir():
            schema = maria / f"{path.stem}.schema.sql"
            extra = ["--schema-ddl", str(schema)] if schema.exists() else []
            found[f"mariadb/{path.stem}"] = ([str(path)], extra)
    keys = ["--key-file", str(SAMPLES / "encrypted" / "keys.txt"), "--write-plaintext"]
    for path in sorted((SAMPLES / "encrypted").glob("*.binlog")):
        found[f"encrypted/{path.stem}"] = ([str(path)], keys)
    for path in sorted((SAMPLES / "mysql-test").iterdir()):
        if path.name != "README.md":
            found[f"mysql-test/{path.name}"] = ([str(path)], [])
    return found


def run(args: list[str], cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", *args], cwd=cwd,
                          capture_output=True, timeout=600, env=ENV)
    return {"status": proc.returncode, "stdout": _digest(proc.stdout),
            "stderr": proc.stderr.decode("utf-8", "replace").replace(str(cwd), "<tmp>")
                                 .replace(str(ROOT), "<root>")}


def _digest(data: bytes) -> str:
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()}"


def outputs() -> dict:
    """Every (sample, command) -> what it gave."""
    result: dict = {}
    for name, (files, extra) in inputs().items():
        dump_extra = [a for a in extra if a != "--write-plaintext"]
        for fmt in FORMATS:
            with tempfile.TemporaryDirectory() as tmp:
                result[f"{name} dump {fmt}"] = run(["dump", "--format", fmt, *dump_extra, *files],
                                                   Path(tmp))
        for label, flags in REWRITES.items():
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "out"
                got = run(["rewrite", "--to", str(out), *flags, *extra, *files], Path(tmp))
                got["files"] = {str(p.relative_to(out)): _digest(p.read_bytes())
                                for p in sorted(out.rglob("*")) if p.is_file()} if out.exists() else {}
                result[f"{name} rewrite {label}"] = got
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("dir", type=Path, help="where the recorded outputs are kept")
    parser.add_argument("--pure", action="store_true", help="BINLOG_PURE=1: compiled paths off")
    args = parser.parse_args(argv)
    if args.pure:
        ENV["BINLOG_PURE"] = "1"
    got = outputs()
    record = args.dir / "outputs.json"
    if args.action == "record":
        args.dir.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(got, indent=1, sort_keys=True), encoding="utf-8")
        print(f"{len(got)} outputs recorded in {record}")
        return 0
    before = json.loads(record.read_text(encoding="utf-8"))
    differ = sorted(k for k in before.keys() | got.keys() if before.get(k) != got.get(k))
    for key in differ:
        print(f"DIFFERS {key}\n  before: {before.get(key)}\n  after:  {got.get(key)}")
    print(f"{len(got)} outputs, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
