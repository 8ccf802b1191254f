"""Atheris (libFuzzer) harness of the differential fuzzing (fuzz/differential.py): for
every input the compiled paths and the pure-Python reference give the same rows, the
same output bytes or the same typed error; a Difference (or any other exception, a
sanitizer report, a hang) is a finding.

    python fuzz/fuzz_differential.py fuzz/corpus-differential -max_len=8192

Inputs: byte 0 < 0x20 a rows event against its TABLE_MAP (``RowsCase``), 0x20-0x3F a
whole rewrite, 0x40-0x7F a skip_run case, >= 0x80 a whole dump (see differential.py).  ``make fuzz`` seeds the corpus from the samples
(``differential.seed_inputs``) and runs this under AddressSanitizer/UBSan (sanitize.py).
Keep finding inputs in tests/hostile/differential_regressions/ (replayed by the tests).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import atheris  # noqa: E402

with atheris.instrument_imports(include=["binlog", "schema_store"]):
    # isort: off
    import sanitize  # noqa: F401  (first: loads the instrumented builds under make fuzz)
    # isort: on

    import differential

_TMP = Path(tempfile.mkdtemp(prefix="binlog-differential-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))


def test_one_input(data: bytes) -> None:
    differential.check_bytes(data, _TMP / "input.binlog")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
