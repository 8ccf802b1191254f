"""The documentation site (mkdocs.yml, docs/): it builds in strict mode, a broken link,
a missing page, a stale generated table or a layer of the code the architecture page
does not describe fails the build, and the generated tables (each command's options, the
exit codes, the layers) are those of the code."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import docs_reference  # noqa: E402

from binlog import cli  # noqa: E402
from binlog.exitcodes import markdown_table  # noqa: E402

PAGES = sorted((REPO / "docs").rglob("*.md"))


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the project at ``root``; the code (for the hook's
    tables) is this checkout's."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(root / "mkdocs.yml"), "-d", str(site)],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def copy(tmp_path):
    """A copy of the site's sources to break."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(REPO / "docs", root / "docs")
    shutil.copytree(REPO / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tests").mkdir()
    shutil.copy(REPO / "tests" / "test_layers.py", root / "tests")     # the layers' table
    return root


def test_the_site_builds_strict(tmp_path):
    r = build(REPO, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "site" / "cli" / "dump" / "index.html").is_file()
    assert (tmp_path / "site" / "binlog-formats" / "index.html").is_file()


def test_a_broken_link_fails_the_build(copy, tmp_path):
    assert build(copy, tmp_path / "ok").returncode == 0
    page = copy / "docs" / "replay.md"
    page.write_text(page.read_text() + "\nSee [the options](cli/no-such-page.md).\n")
    r = build(copy, tmp_path / "site")
    assert r.returncode != 0
    assert "no-such-page.md" in r.stderr


def test_a_broken_anchor_fails_the_build(copy, tmp_path):
    page = copy / "docs" / "index.md"
    page.write_text(page.read_text() + "\n[x](troubleshooting.md#no-such-section)\n")
    r = build(copy, tmp_path / "site")
    assert r.returncode != 0 and "no-such-section" in r.stderr


def test_a_missing_page_fails_the_build(copy, tmp_path):
    (copy / "docs" / "security.md").unlink()
    r = build(copy, tmp_path / "site")
    assert r.returncode != 0 and "security.md" in r.stderr


def test_a_stale_option_table_fails_the_build(copy, tmp_path):
    page = copy / "docs" / "cli" / "fetch.md"
    text = page.read_text()
    assert "<code>--semi-sync</code>" in text
    page.write_text(text.replace("<code>--semi-sync</code>", "<code>--semi-synchronous</code>"))
    r = build(copy, tmp_path / "site")
    assert r.returncode != 0 and "options:fetch" in r.stderr


def test_a_layer_added_to_the_layer_test_fails_the_build_until_described(copy, tmp_path):
    test = copy / "tests" / "test_layers.py"
    text = test.read_text()
    assert '[("binlog.decryption",)],' in text
    test.write_text(text.replace('[("binlog.decryption",)],',
                                 '[("binlog.decryption",)],\n    [("binlog.newpart",)],'))
    r = build(copy, tmp_path / "stale")
    assert r.returncode != 0 and "layers" in r.stderr, r.stderr
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, str(copy / "tools" / "docs_reference.py"), "--write"], env=env,
                   check=True, capture_output=True, timeout=300)    # the copy's table, afresh
    page = copy / "docs" / "architecture.md"
    assert "`binlog.newpart`" in page.read_text()
    r = build(copy, tmp_path / "undescribed")
    assert r.returncode != 0 and "binlog.newpart" in r.stderr, r.stderr
    page.write_text(page.read_text() + "\n- `binlog.newpart`: a new part.\n")
    r = build(copy, tmp_path / "site")
    assert r.returncode == 0, r.stderr


def test_generated_tables_match_the_code():
    assert docs_reference.check(PAGES) == []


def test_docs_show_the_exit_code_table():
    text = (REPO / "docs" / "troubleshooting.md").read_text()
    assert markdown_table() in text


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions if not isinstance(a, argparse._HelpAction) for s in a.option_strings]


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_has_a_page_with_every_option(command):
    page = (REPO / "docs" / "cli" / f"{command}.md").read_text()
    subs = docs_reference._subparsers(docs_reference.command_parser(command))
    parsers = {f"{command} {name}": p for name, p in subs.items()} if subs else {command: None}
    for name, parser in parsers.items():
        assert f"<!-- options:{name}:begin" in page
        for option in _option_strings(parser or docs_reference.command_parser(name)):
            assert f"<code>{option}" in page or f", {option}" in page, (name, option)


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"])
def test_links_of_the_top_level_pages_resolve(name):
    """The pages outside docs/ (GitHub shows them; MkDocs does not check them)."""
    text = (REPO / name).read_text()
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert links or name == "BENCHMARKS.md"
    missing = [link for link in links if "://" not in link and not (REPO / link).exists()]
    assert missing == []
