"""Atheris (libFuzzer) harness over the client's protocol parsers: each input is the
whole byte stream a server sends in one session (fuzz/protocol.py).

    python fuzz/fuzz_protocol.py fuzz/corpus-protocol -max_total_time=60
"""
from __future__ import annotations

import sys
from pathlib import Path

import atheris

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

with atheris.instrument_imports(include=["binlog"]):
    from protocol import run_session


def main() -> None:
    atheris.Setup(sys.argv, run_session)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
