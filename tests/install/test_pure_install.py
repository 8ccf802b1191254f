"""The install succeeds without a C compiler, with the pure-Python path, and that path
gives what the compiled build gives (the compiled extensions are optional: setup.py marks them so).

The project is copied, then installed (pip, not editable) into two fresh virtual
environments: one with the compiler disabled (CC=/bin/false), one with gcc.  Both run
``binlog dump`` on samples; the outputs must be byte-identical, and the first must
really have no compiled module.  Dependencies come from this interpreter's
site-packages, added to each venv by a path-only .pth line (so the shared editable
install's finder is not loaded: it would hand the venv the main checkout's extension).
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from project_copy import REPO, copy_project

SAMPLES = [REPO / "samples/mariadb-10.11/types_full.binlog", REPO / "samples/mariadb-10.11/legacy_temporal.binlog"]


def _venv(where: Path, src: Path, cc: str) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    venv_python = where / "bin" / "python"
    purelib = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # a path line only: the shared site-packages' own .pth files (the editable finder) stay unread
    shared = [p for p in site.getsitepackages() if Path(p).is_dir()] + [sysconfig.get_paths()["purelib"]]
    Path(purelib, "shared-deps.pth").write_text("\n".join(dict.fromkeys(shared)) + "\n")
    env = dict(os.environ, CC=cc, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(venv_python), "-m", "pip", "install", "-q", "--no-deps",
                           str(src)], env=env, capture_output=True, text=True, cwd=where)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return where


def _run(venv: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BINLOG_PURE")}
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], env=env, capture_output=True, cwd=venv)


@pytest.fixture(scope="module")
def venvs(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: no compiled build to compare with")
    tmp = tmp_path_factory.mktemp("install")
    src = copy_project(tmp)
    return _venv(tmp / "pure", src, "/bin/false"), _venv(tmp / "compiled", src, "gcc")


_HAS_EXTENSION = "import binlog.rows as r, sys; print(r._speedups is not None, r.__file__)"


def test_install_without_a_compiler_uses_the_pure_path(venvs):
    pure, compiled = venvs
    assert not list(pure.rglob("_speedups*.so"))
    out = _run(pure, "python", "-c", _HAS_EXTENSION).stdout.decode()
    assert out.startswith("False ") and str(pure) in out
    out = _run(compiled, "python", "-c", _HAS_EXTENSION).stdout.decode()
    assert out.startswith("True ") and str(compiled) in out


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_pure_install_dumps_what_the_compiled_one_dumps(venvs, sample, fmt):
    pure, compiled = venvs
    expected = _run(compiled, "binlog", "dump", "--format", fmt, str(sample))
    got = _run(pure, "binlog", "dump", "--format", fmt, str(sample))
    assert expected.returncode == 0, expected.stderr.decode()
    assert (got.returncode, got.stdout) == (0, expected.stdout)
    assert expected.stdout.count(b"\n") > 10
