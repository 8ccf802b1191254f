"""Peak RSS of `binlog dump` on one compressed LONGBLOB (or LONGTEXT) row.

    python bench/large_value_bench.py --mib 200
    python bench/large_value_bench.py --mib 200 --text a      # utf8mb4 LONGTEXT of 'a'
    python bench/large_value_bench.py --mib 200 --text 'é€'   # 2- and 3-byte characters

Builds a binlog (a few hundred KB) whose one WRITE_ROWS_COMPRESSED event inflates to a
row holding a MiB-sized LONGBLOB, then runs `binlog dump` on it under GNU time for
--format json, json --checksum and sql, and prints each peak RSS (%M) in MB, against a
tiny binlog's (the interpreter's own size).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hostile.build import TABLE_MAP, XID, binlog, lenenc, table_map  # noqa: E402

WRITE_ROWS_COMPRESSED_V1 = 166
FORMATS = {"json": ["--format", "json"], "json --checksum": ["--format", "json", "--checksum"],
           "sql": ["--format", "sql"]}


def blob_binlog(path: Path, size: int, unit: bytes = b"\xff") -> Path:
    value = unit * (size // len(unit))
    row = b"\x00" + len(value).to_bytes(4, "little") + value
    body = ((5).to_bytes(6, "little") + b"\x01\x00" + lenenc(1) + b"\x01"
            + b"\x84" + len(row).to_bytes(4, "big") + zlib.compress(row, 9))
    path.write_bytes(binlog([(TABLE_MAP, table_map(5, "h", "big", bytes([252]), b"\x04")),
                             (WRITE_ROWS_COMPRESSED_V1, body), (XID, (1).to_bytes(8, "little"))]))
    return path


def peak_mb(args: list[str]) -> float:
    cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "binlog.cli", "dump", *args]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=200)
    parser.add_argument("--text", metavar="CHARS",
                        help="a utf8mb4 LONGTEXT of these characters repeated, not a LONGBLOB")
    opts = parser.parse_args()
    column = "LONGTEXT CHARACTER SET utf8mb4" if opts.text else "LONGBLOB"
    unit = opts.text.encode() if opts.text else b"\xff"
    with tempfile.TemporaryDirectory() as tmp:
        schema = Path(tmp) / "schema.sql"
        schema.write_text(f"CREATE DATABASE h;\nCREATE TABLE h.big (b {column});\n")
        small = blob_binlog(Path(tmp) / "small.binlog", 12, unit)
        big = blob_binlog(Path(tmp) / "big.binlog", opts.mib << 20, unit)
        print(f"binlog: {big.stat().st_size / 1e3:.0f} KB holding a {opts.mib} MiB {column}")
        for name, args in FORMATS.items():
            base = peak_mb([*args, "--schema-ddl", str(schema), str(small)])
            peak = peak_mb([*args, "--schema-ddl", str(schema), str(big)])
            print(f"{name:16s} peak RSS {peak:7.0f} MB (tiny binlog {base:.0f} MB): "
                  f"{(peak - base) / opts.mib * 1.048576:.2f}x the value")


if __name__ == "__main__":
    main()
