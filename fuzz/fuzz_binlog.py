"""Atheris (libFuzzer) harness: any input must end in a BinlogError or a clean end,
never another exception, a hang (-timeout) or a memory blow-up (-rss_limit_mb).
Inputs whose option byte has 0x80 set go to the names target instead (fuzz/names.py:
mutated identifiers and statement text; the SQL script must hold no client command,
no output path may leave --to).

    python fuzz/fuzz_binlog.py fuzz/corpus -max_total_time=60 -max_len=8192

(``make fuzz`` does this, seeding fuzz/corpus with fuzz/make_seeds.py first).  Crash
inputs are written where -artifact_prefix says; keep them in
tests/hostile/regressions/ (tests/hostile/test_regressions.py replays them).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

with atheris.instrument_imports(include=["binlog", "schema_store", "spark_ingest"]):
    # isort: off
    import sanitize  # noqa: F401  (first: loads the instrumented builds under make fuzz)
    # isort: on
    from names import run_names
    from target import lower_infer_bound, run

    import binlog.output.json_lines  # noqa: F401
    import binlog.output.text  # noqa: F401
    import binlog.reader  # noqa: F401
    import schema_store.resolver  # noqa: F401

lower_infer_bound()

_TMP = Path(tempfile.mkdtemp(prefix="binlog-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
_FILE = _TMP / "fuzz.binlog"


def test_one_input(data: bytes) -> None:
    if data and data[0] & 0x80:
        # hostile names and statement text: the SQL script stays inert, paths stay under
        # --to (fuzz/names.py)
        run_names(data[1:], _TMP / "names")
        return
    run(data, _FILE)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
