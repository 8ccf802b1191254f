#!/usr/bin/env python3
"""What writing a lake's Parquet costs alone: the floor under ``binlog ingest``.

    python bench/lake_floor.py LAKE [--rounds 3]

Reads every Parquet file of ``LAKE/changes`` and ``LAKE/tables`` (a lake ``binlog ingest``
just wrote) into memory, then writes each again with the settings it was written with (its
columns' dictionary pages and min/max statistics, 65,536-row groups) and each compression:
zstd level 1 (the lake's), lz4, none.  Prints a Markdown table of the CPU seconds of the
writes (best of ``--rounds``, ``resource.getrusage``: pin it with ``taskset -c 0``) and the
bytes written, for BENCHMARKS.md ("The lake", "Where the floor is").
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CODECS = (("zstd", 1), ("lz4", None), ("none", None))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _settings(meta) -> tuple[list[str], list[str]]:
    """The columns written with dictionary pages, and with statistics, in a file."""
    if not meta.num_row_groups:
        return [], []
    columns = [meta.row_group(0).column(i) for i in range(meta.num_columns)]
    dictionary = [c.path_in_schema for c in columns if any("DICTIONARY" in e for e in c.encodings)]
    statistics = [c.path_in_schema for c in columns if c.is_stats_set]
    return dictionary, statistics


def _load(files: list[str]) -> list:
    import pyarrow.parquet as pq

    return [(pq.read_table(path), *_settings(pq.ParquetFile(path).metadata)) for path in files]


def _write(tables: list, codec: str, level, out: str) -> int:
    import pyarrow.parquet as pq

    size = 0
    for at, (table, dictionary, statistics) in enumerate(tables):
        path = os.path.join(out, f"{at}.parquet")
        pq.write_table(table, path, compression=codec, compression_level=level, row_group_size=65536,
                       use_dictionary=dictionary or False, write_statistics=statistics or False)
        size += os.path.getsize(path)
        os.unlink(path)
    return size


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lake")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("| output | pages | " + " | ".join(codec for codec, _ in CODECS) + " |")
    print("|---|---:|" + "---:|" * len(CODECS))
    with tempfile.TemporaryDirectory(prefix="lake-floor-") as out:
        for part in ("changes", "tables"):
            files = sorted(glob.glob(os.path.join(args.lake, part, "**", "*.parquet"), recursive=True))
            tables = _load(files)
            cells, pages = [], 0
            for codec, level in CODECS:
                best = float("inf")
                for _ in range(args.rounds):
                    start = _cpu()
                    size = _write(tables, codec, level, out)
                    best = min(best, _cpu() - start)
                pages = size if codec == "none" else pages
                cells.append(f"{best:.2f} s, {size / 1e6:.1f} MB")
            print(f"| `{part}/` ({len(files)} files) | {pages / 1e6:.1f} MB | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
