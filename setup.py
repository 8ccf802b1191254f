"""Builds the optional compiled hot paths (binlog/_speedups.c with its sections
binlog/_speedups_*.c, binlog/_scan.c).  Everything else is in pyproject.toml.  The
extension is optional: without a C compiler the install still succeeds and the pure-Python
decoders are used (set BINLOG_PURE=1 to force them)."""
from setuptools import Extension, setup

# binlog._speedups: the module table (_speedups.c) and one translation unit per section,
# sharing the private header _speedups.h
SPEEDUPS = ["binlog/_speedups.c"] + [f"binlog/_speedups_{section}.c" for section in (
    "out", "decode", "encode", "sql", "checksum", "images", "run", "verify", "typed", "shred",
    "rewrite")]
HEADERS = ["binlog/_rows_frame.h", "binlog/_column_kinds.h"]

setup(ext_modules=[Extension("binlog._speedups", SPEEDUPS, optional=True,
                             depends=HEADERS + ["binlog/_speedups.h"], extra_compile_args=["-O2"],
                             libraries=["z"]),
                   Extension("binlog._scan", ["binlog/_scan.c"], optional=True,
                             depends=HEADERS, extra_compile_args=["-O2"],
                             libraries=["z"])])
