"""The compiled extensions under AddressSanitizer + UndefinedBehaviorSanitizer.

    python fuzz/sanitize.py build OUT        # setup.py's extensions, instrumented, into OUT
    python fuzz/sanitize.py run OUT -- CMD   # CMD under the sanitizers, with OUT's builds
    python fuzz/sanitize.py run-libfuzzer OUT -- CMD   # the same with atheris's runtime
    python fuzz/sanitize.py self-check OUT   # a scratch copy with one bound removed: ASan must report it

``make fuzz`` builds into a temporary directory (never into the package: the shared
install keeps its normal build), then runs the differential test, the fuzz regressions
and the atheris targets with these builds.  How they get loaded: ``run`` sets
BINLOG_SANITIZED_EXT=OUT and imports this module first (``python -m pytest -p
sanitize`` or the atheris harnesses' first import); on import it loads every
``OUT/binlog/_*.so`` as ``binlog._*`` and rebinds module attributes that already hold
the normal build, then checks that ``binlog.rows`` uses the instrumented one.

Runtime settings: the python binary is not instrumented, so libasan is LD_PRELOADed
(it must come first); ASAN_OPTIONS=detect_leaks=0 (CPython keeps interned objects and
arenas to exit on purpose); UBSAN_OPTIONS=halt_on_error=1 (and -fno-sanitize-recover):
the first undefined behaviour is fatal; PYTHONMALLOC=malloc, so that every Python
object, bytes buffers included, is a malloc block with ASan red zones (pymalloc's pools
would hide an overrun into the next small object).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV_DIR = "BINLOG_SANITIZED_EXT"
SANITIZE = "-fsanitize=address,undefined"
# -fno-wrapv: CPython's own CFLAGS say -fwrapv, which makes signed overflow defined (and
# invisible to UBSan); the extension's arithmetic must not rely on it.
# --param asan-use-after-return=0: the one gcc ASan hook clang's runtime (atheris's
# asan_with_fuzzer.so) lacks.  Linked without the runtimes (no -fsanitize in LDFLAGS):
# the run preloads one, gcc's libasan + libubsan or atheris's clang ASan+UBSan+libFuzzer
# - two ASan runtimes in one process refuse to start, and gcc's libasan also defines
# libFuzzer's coverage hooks (weakly), which would blind atheris if it were loaded.
# The flags go into CC (compile only): distutils adds CFLAGS to the link line too.
CC = (f"gcc {SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer "
      "--param asan-use-after-return=0 -g")
CFLAGS = "-fno-wrapv -O1"


def runtimes(libfuzzer: bool) -> str:
    """LD_PRELOAD value: atheris's clang ASan+UBSan runtime with libFuzzer (coverage
    reaches atheris), or gcc's libasan and libubsan."""
    if libfuzzer:
        import atheris

        path = os.path.join(atheris.path(), "asan_with_fuzzer.so")
        if not os.path.exists(path):
            raise SystemExit(f"{path} missing: reinstall atheris (pip install atheris)")
        return path
    found = []
    for lib in ("libasan.so", "libubsan.so"):
        path = subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        if not os.path.isabs(path):
            raise SystemExit(f"{lib} not found: apt-get install libasan8 libubsan1 (gcc's sanitizer runtimes)")
        found.append(path)
    return " ".join(found)


def runtime_env(ext_dir: Path, libfuzzer: bool = False) -> dict:
    env = dict(os.environ)
    env.update(LD_PRELOAD=runtimes(libfuzzer), ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1", PYTHONMALLOC="malloc")
    env[ENV_DIR] = str(ext_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "fuzz")] +
                                        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("BINLOG_PURE", None)
    return env


def build(out: Path, source_root: Path = ROOT) -> list[Path]:
    """setup.py's extensions of ``source_root``, instrumented, into ``out``; the .so files."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CC=CC, CFLAGS=CFLAGS, LDSHARED="gcc -shared", LDFLAGS="")
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(out),
                    "--build-temp", str(out / "tmp"), "--force"], cwd=source_root, env=env, check=True)
    built = sorted((out / "binlog").glob("_*.so"))
    expected = _extension_names(source_root)
    missing = expected - {p.name.split(".")[0] for p in built}
    if missing:
        # setup.py marks the extensions optional: a failed build must not pass silently here
        raise SystemExit(f"sanitized build of {sorted(missing)} failed (see the compiler output above)")
    return built


def _extension_names(source_root: Path) -> set[str]:
    """The modules setup.py builds (binlog._speedups is built from several .c files)."""
    return set(re.findall(r'Extension\("binlog\.(\w+)"', (source_root / "setup.py").read_text()))


def use_sanitized(ext_dir: Path) -> list[str]:
    """Load the instrumented builds as ``binlog._*``; rebind attributes that hold the
    normal builds.  Returns the loaded files."""
    loaded = []
    for path in sorted((ext_dir / "binlog").glob("_*.so")):
        name = "binlog." + path.name.split(".")[0]
        old = sys.modules.get(name)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
        loaded.append(str(path))
        if old is not None:
            for other in list(sys.modules.values()):
                for attr, value in list(vars(other).items()) if other is not None else ():
                    if value is old:
                        setattr(other, attr, module)
    from binlog import rows

    if rows._speedups is None or not rows._speedups.__file__.startswith(str(ext_dir)):
        raise SystemExit(f"binlog.rows does not use the sanitized build: {rows._speedups}")
    return loaded


def run(ext_dir: Path, cmd: list[str], libfuzzer: bool = False) -> int:
    return subprocess.run(cmd, env=runtime_env(ext_dir, libfuzzer), cwd=ROOT).returncode


# A bound to remove in the self-check: the length check of CHAR/VARCHAR/BLOB values
# (string_shape in binlog/_speedups.h, in the unpack step every renderer of the compiled
# walk reads through).
BROKEN_FROM = "    if (avail - s->width < len) return -1;\n    u->span.p = p + s->width;\n"
BROKEN_TO = "    u->span.p = p + s->width;\n"

# A VARCHAR(300) value declaring 290 bytes in a rows event that holds 3: the compiled walk
# without its bound reads 287 bytes past the end of the event's bytes object.
SELF_CHECK = """
import sys
sys.path.insert(0, "fuzz")
import differential as diff
from binlog.constants import ColumnType as T
fde, crc = diff.fdes()[0]
data = b"\\x00" + (290).to_bytes(2, "little") + b"abc"
case = diff.RowsCase(fde, crc, diff.table_map_body([(T.VARCHAR, (300).to_bytes(2, "little"))]),
                     diff.WRITE_V2, diff.rows_body(diff.WRITE_V2, 1, b"\\x01", b"\\x01", data))
print(diff.check_rows(case))
"""


def self_check(out: Path) -> int:
    """Build a scratch copy of the sources with one bound removed and run an input that
    crosses it: ASan must report a heap-buffer-overflow.  Exit status 0 if it does."""
    scratch = Path(tempfile.mkdtemp(prefix="binlog-sanitize-scratch-"))
    try:
        for name in ("setup.py", "pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, scratch / name)
        shutil.copytree(ROOT / "binlog", scratch / "binlog", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        source = (scratch / "binlog" / "_speedups.h").read_text()
        if BROKEN_FROM not in source:
            raise SystemExit("self-check: the bound to remove is not in binlog/_speedups.h any more")
        (scratch / "binlog" / "_speedups.h").write_text(source.replace(BROKEN_FROM, BROKEN_TO))
        build(out, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    failed = 0
    for libfuzzer in (False, True):      # under both runtimes make fuzz uses
        proc = subprocess.run([sys.executable, "-c", "import sanitize\n" + SELF_CHECK],
                              env=runtime_env(out, libfuzzer), cwd=ROOT, capture_output=True, text=True)
        report = [line for line in proc.stderr.splitlines() if "ERROR: AddressSanitizer" in line]
        print(f"self-check ({'clang/atheris' if libfuzzer else 'gcc'} runtime): exit status "
              f"{proc.returncode}; " + (report[0].strip() if report else "no AddressSanitizer report"))
        if not report or "heap-buffer-overflow" not in report[0]:
            print(proc.stdout[-2000:], proc.stderr[-4000:], file=sys.stderr)
            failed = 1
    return failed


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("build", "run", "run-libfuzzer", "self-check"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1]).resolve()
    if argv[0] == "build":
        for path in build(out):
            print(f"sanitized build: {path}")
        return 0
    if argv[0] == "self-check":
        return self_check(out)
    cmd = argv[3:] if argv[2:3] == ["--"] else argv[2:]
    return run(out, cmd, libfuzzer=argv[0] == "run-libfuzzer")


if os.environ.get(ENV_DIR) and __name__ != "__main__":
    # imported by a run under the sanitizers (python -m pytest -p sanitize, the harnesses)
    for _path in use_sanitized(Path(os.environ[ENV_DIR])):
        print(f"sanitize: using {_path}", file=sys.stderr)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
