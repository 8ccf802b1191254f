"""Every install line of the README works alone, as a new user runs it: a fresh virtual
environment (no system site-packages), the line itself run in a copy of the project, then
the commands that need what the line installs, on bundled samples.

The lines are read from the README's Install section, so a line added there is tested (and
one without commands here fails ``test_every_readme_line_is_covered``).  pip's own cache is
used, so after the first run the lines install from cached wheels in seconds.  A dependency
that the code imports but the line does not install fails here with the command's
traceback, as it would for the user.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from project_copy import REPO, copy_project

pytestmark = pytest.mark.slow

SAMPLES = REPO / "samples"
TYPES_FULL = SAMPLES / "mariadb-10.11/types_full.binlog"
CELLS = SAMPLES / "mariadb-10.11/temporal_cells.binlog"
ENCRYPTED = SAMPLES / "encrypted/aes_ctr_nochecksum.binlog"


def readme_install_lines() -> list[str]:
    """The ``pip install ...`` lines of the README's Install section, comments cut."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Install", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in section.splitlines()]
    return [line for line in lines if line.startswith("pip install")]


def _extras(line: str) -> str:
    """``pip install -e '.[spark,delta]'`` -> ``spark,delta``; the base line -> ``base``."""
    target = shlex.split(line)[-1]
    found = re.fullmatch(r"\.\[([a-z0-9_,]+)\]", target)
    return found.group(1) if found else "base"


class Venv:
    def __init__(self, root: Path, project: Path):
        self.root, self.project = root, project
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "BINLOG_PURE", "VIRTUAL_ENV", "PYTHONHOME")}
        self.env["PATH"] = f"{root / 'bin'}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    def install(self, line: str) -> None:
        """The README line as written, its ``pip`` this venv's, in the project copy."""
        args = shlex.split(line)
        assert args[:2] == ["pip", "install"], line
        done = subprocess.run([str(self.root / "bin" / "python"), "-m", "pip", *args[1:]], cwd=self.project,
                              env=self.env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"

    def run(self, *args, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.root / "bin" / args[0]), *map(str, args[1:])], cwd=cwd or self.root,
                              env=self.env, capture_output=True, text=True, timeout=timeout)

    def ok(self, *args, **kw) -> str:
        done = self.run(*args, **kw)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr[-4000:]}"
        return done.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("install-lines"))


def _venv(tmp_path: Path, project: Path, line: str) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    venv = Venv(tmp_path / "venv", project)
    venv.install(line)
    return venv


def _without(venv: Venv, *args, extra: str) -> None:
    """A command whose extra is not installed: a usage error naming the extra, no traceback."""
    done = venv.run(*args)
    assert done.returncode == 2 and f"[{extra}]" in done.stderr and "Traceback" not in done.stderr, done.stderr


def check_base(venv: Venv, tmp: Path) -> None:
    out = venv.ok("binlog", "dump", "--format", "json", TYPES_FULL)
    assert out.count("\n") > 40 and '"op":"insert"' in out
    venv.ok("binlog", "stats", TYPES_FULL)
    _without(venv, "binlog", "ingest", CELLS, "--to", tmp / "lake", extra="spark")
    _without(venv, "binlog", "stats", "--plot", tmp / "p.png", TYPES_FULL, extra="plot")
    _without(venv, "binlog", "dump", ENCRYPTED, "--key-file", SAMPLES / "encrypted/keys.txt", extra="crypt")
    _without(venv, "binlog", "history", tmp / "lake", "--gtid", "0-1-1", extra="duckdb")


def _lake_rows(venv: Venv, lake: Path) -> int:
    """Rows of changes/ read back with the venv's own pyarrow."""
    code = "import pyarrow.dataset as d, sys; print(d.dataset(sys.argv[1], format='parquet').count_rows())"
    return int(venv.ok("python", "-c", code, lake / "changes"))


def check_spark(venv: Venv, tmp: Path) -> None:
    venv.ok("binlog", "ingest", CELLS, "--to", tmp / "local")
    local = _lake_rows(venv, tmp / "local")
    assert local > 100
    venv.ok("binlog", "ingest", "--engine", "spark", CELLS, "--to", tmp / "spark", timeout=600)
    assert _lake_rows(venv, tmp / "spark") == local


def check_spark_delta(venv: Venv, tmp: Path) -> None:
    venv.ok("binlog", "ingest", "--format", "delta", CELLS, "--to", tmp / "delta")
    # every row read back by deltalake's own engine (DataFusion); its pyarrow dataset
    # (to_pyarrow_table) reads them too, but the process then aborts at exit in most runs
    # ("terminate called without an active exception": a reader thread outlives the
    # interpreter), whatever the files hold
    code = ("import sys; import pyarrow as pa; from deltalake import DeltaTable, QueryBuilder; "
            "query = QueryBuilder().register('c', DeltaTable(sys.argv[1])); "
            "print(pa.table(query.execute('SELECT count(after) AS n FROM c').read_all())['n'][0])")
    assert int(venv.ok("python", "-c", code, tmp / "delta" / "changes")) > 100


def check_crypt(venv: Venv, tmp: Path) -> None:
    keys = tmp / "keys.txt"
    keys.write_bytes((SAMPLES / "encrypted/keys.txt").read_bytes())
    keys.chmod(0o600)
    out = venv.ok("binlog", "dump", ENCRYPTED, "--key-file", keys)
    assert '"op":"insert"' in out


def check_plot(venv: Venv, tmp: Path) -> None:
    venv.ok("binlog", "stats", "--plot", tmp / "stats.png", TYPES_FULL)
    assert (tmp / "stats.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def check_duckdb(venv: Venv, tmp: Path) -> None:
    """binlog history on a lake made here (this interpreter has the [spark] extra): the
    lines of binlog dump for one transaction."""
    import subprocess

    lake = tmp / "lake"
    subprocess.run([sys.executable, "-m", "binlog.cli", "ingest", "--no-progress", CELLS, "--to", lake],
                   check=True, cwd=REPO, capture_output=True)
    dump = venv.ok("binlog", "dump", CELLS).splitlines()
    gtid = next(line for line in dump if '"op":"update"' in line).split('"gtid":"', 1)[1].split('"', 1)[0]
    got = venv.ok("binlog", "history", lake, "--gtid", gtid).splitlines()
    assert got and got == [line for line in dump if f'"gtid":"{gtid}"' in line and '"op":"' in line
                           and '"op":"ddl"' not in line and '"op":"statement"' not in line]


def check_dev_spark(venv: Venv, tmp: Path) -> None:
    for tool in ("pytest", "ruff", "mypy", "mkdocs"):
        venv.ok("python", "-m", tool, "--version")
    check_spark(venv, tmp)


CHECKS = {"base": check_base, "spark": check_spark, "spark,delta": check_spark_delta, "crypt": check_crypt,
          "plot": check_plot, "duckdb": check_duckdb, "dev,spark": check_dev_spark}
#: the lines whose commands need a real server: a test of their own each (below)
WITH_SERVER = {"ed25519"}


def _line(extras: str) -> str:
    return next(line for line in readme_install_lines() if _extras(line) == extras)


def test_every_readme_line_is_covered():
    extras = [_extras(line) for line in readme_install_lines()]
    assert extras and set(extras) == set(CHECKS) | WITH_SERVER, extras


@pytest.mark.parametrize("line", [line for line in readme_install_lines() if _extras(line) in CHECKS], ids=_extras)
def test_readme_install_line_alone_in_a_fresh_venv(line, project, tmp_path):
    venv = _venv(tmp_path, project, line)
    CHECKS[_extras(line)](venv, tmp_path)


def test_ed25519_line_logs_in_with_an_ed25519_account(project, tmp_path, mariadb_factory):
    """PyNaCl signs a real mariadbd's nonce: fetch logs in as an ed25519 account and copies its binlog."""
    venv = _venv(tmp_path, project, _line("ed25519"))
    server = mariadb_factory({"plugin_load_add": "auth_ed25519"})
    server.execute("CREATE USER repl@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')")
    server.execute("GRANT ALL PRIVILEGES ON *.* TO repl@'%'")
    server.execute("CREATE DATABASE t")
    venv.ok("binlog", "fetch", "--from", f"mysql://repl:ed-pw@127.0.0.1:{server.port}/", "--to", tmp_path / "relay",
            "--server-id", "32", "--retries", "0", timeout=120)
    first = server.binlog_files()[0]
    assert (tmp_path / "relay" / first.name).read_bytes()[22:] == first.read_bytes()[22:]
