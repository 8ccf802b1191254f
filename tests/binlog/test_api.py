"""The library API (docs/api.md): every example of the page and of the public classes'
docstrings runs; the package's public names; the reader's defaults are the CLI's."""
from __future__ import annotations

import doctest
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "api.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)           # the examples name samples/ relative to the root


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_api_page_example_runs(index):
    exec(compile(EXAMPLES[index], f"{PAGE}:example {index + 1}", "exec"), {"__name__": "__example__"})


@pytest.mark.parametrize("module", ["binlog.api", "binlog.filters", "schema_store.store"])
def test_docstring_examples_run(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_public_names_version_and_py_typed():
    import binlog

    assert binlog.__all__ == ["BinlogReader", "TableFilter", "SchemaStore", "__version__"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    # one place for the version: the package's, which the build reads (and --version)
    assert "version" in project["project"]["dynamic"] and "version" not in project["project"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "binlog.__version__"}
    assert (REPO / "binlog" / "py.typed").exists()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["binlog"]
    from binlog.api import BinlogReader
    from schema_store.store import SchemaStore

    assert binlog.BinlogReader is BinlogReader and binlog.SchemaStore is SchemaStore
    for name in ("BinlogReader", "TableFilter", "SchemaStore"):
        assert ">>> " in getattr(binlog, name).__doc__


def test_importing_binlog_does_not_load_the_schema_store():
    code = "import sys, binlog.cursor; print('schema_store.store' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("name", ["types_nometa.binlog", "types_full.binlog", "checksum_none.binlog",
                                  "compressed.binlog"])
def test_reader_defaults_equal_the_cli(name):
    """What `binlog dump --format json FILE` prints is what the library's defaults give."""
    from binlog import BinlogReader
    from binlog.output.json_lines import JsonLinesWriter

    path = REPO / "samples" / "mariadb-10.11" / name
    cli = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "json", str(path)],
                         capture_output=True, cwd=REPO, env=dict(os.environ), timeout=120)
    assert cli.returncode == 0, cli.stderr
    out = io.BytesIO()
    writer = JsonLinesWriter(out)
    # records(): row changes and the statement/DDL records, as dump prints them
    for record in BinlogReader([str(path)]).records():
        (writer.write if hasattr(record, "before") else writer.statement)(record)
    # the CLI's records add the CDC fields (binlog/output/cdc.py) after these
    cdc = ("row", "pk", "commit", "xid", "end_pos")
    cli_records = [{k: v for k, v in json.loads(line).items() if k not in cdc} for line in cli.stdout.splitlines()]
    assert [json.loads(line) for line in out.getvalue().splitlines()] == cli_records


def test_checksums_are_verified_by_default(tmp_path):
    from binlog import BinlogReader
    from binlog.errors import ChecksumMismatchError

    data = bytearray((REPO / "samples" / "mariadb-10.11" / "types_full.binlog").read_bytes())
    data[-60] ^= 0xFF
    (tmp_path / "bad.binlog").write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError):
        list(BinlogReader([str(tmp_path / "bad.binlog")]).changes())
    assert list(BinlogReader([str(tmp_path / "bad.binlog")], verify_checksums=False).changes())


def test_every_data_source_option_is_documented():
    from spark_ingest.options import OPTION_NAMES

    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| option | default | meaning |"):]
    missing = [name for name in OPTION_NAMES if f"`{name}`" not in table]
    assert missing == []
