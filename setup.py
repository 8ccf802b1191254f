"""Builds the optional compiled hot paths (binlog/_speedups.c, binlog/_scan.c).  Everything else is in
pyproject.toml.  The extension is optional: without a C compiler the install still
succeeds and the pure-Python decoders are used (set BINLOG_PURE=1 to force them)."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("binlog._speedups", ["binlog/_speedups.c"], optional=True,
                             depends=["binlog/_rows_frame.h", "binlog/_column_kinds.h"], extra_compile_args=["-O2"],
                             libraries=["z"]),
                   Extension("binlog._scan", ["binlog/_scan.c"], optional=True,
                             depends=["binlog/_rows_frame.h", "binlog/_column_kinds.h"], extra_compile_args=["-O2"],
                             libraries=["z"])])
