"""The command line keeps the megabyte buffers it frees for reuse (binlog/_speedups_verify.c
``tune_allocator``): without it glibc gives each back to the kernel and the next chunk's
output faults its pages in afresh (~70,000 page faults, 0.1-0.15 s of a 200 MB JSON dump).

Measured in a child process (the tuning is process-wide) by its minor page faults over
the pattern the JSON encoder has: a C buffer grown by realloc to 4 MiB, copied into the
bytes object handed out, freed."""
from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11" / "checksum_none.binlog"
pytestmark = [
    pytest.mark.usefixtures("compiled"),
    pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the tuning is glibc's mallopt"),
]

CHURN = """
import resource
def churn_faults():
    def run():
        buf = bytearray()
        while len(buf) < (4 << 20):
            buf += piece
        return bytes(buf)[-100:]
    piece = b"z" * 65536
    for _ in range(3):
        run()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        run()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
"""


def child_faults(setup: str) -> int:
    run = subprocess.run([sys.executable, "-c", CHURN + setup + "\nprint(churn_faults())\n"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return int(run.stdout.split()[-1])


@pytest.fixture(scope="module")
def untuned() -> int:
    faults = child_faults("")
    if faults < 20 * 256:
        pytest.skip(f"this glibc keeps the buffers by itself ({faults} faults untuned)")
    return faults


def test_freed_buffers_are_reused_once_tuned(untuned):
    tuned = child_faults("from binlog import _speedups\nassert _speedups.tune_allocator()")
    assert tuned < untuned // 10, (tuned, untuned)


def test_the_command_line_tunes_its_process(untuned):
    cli = child_faults("import runpy, sys\n"
                       f"sys.argv = ['binlog', 'dump', {str(SAMPLE)!r}]\n"
                       "sys.stdout = open('/dev/null', 'w')\n"
                       "try:\n    runpy.run_module('binlog.cli', run_name='__main__')\n"
                       "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
                       "sys.stdout = sys.__stdout__\n")
    assert cli < untuned // 10, (cli, untuned)
