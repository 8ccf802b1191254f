"""``binlog ingest --reprocess-errors`` / ``--reprocess NAME[..NAME]``: ingest binlogs
again, replacing what earlier runs wrote for them (a damaged file fixed, a schema
supplied late).

Typical use: a legacy temporal column without a schema sent rows to ``errors/`` (exit 3);
the user reruns with ``--schema-ddl`` and ``--reprocess-errors``.  The files are read
from their start in a new run N, as new files would be, and then every row earlier runs
wrote for them is removed from ``changes/``, ``tables/`` and ``errors/``: no row twice,
and error records gone when the rows now decode.

Rows are matched by binlog name (the ``file`` / ``_file`` column): every checkpointed file
of that name is reprocessed together, so two directories holding a ``mariadb-bin.000042``
each cannot leave half of one behind.

Crash semantics, as for incremental runs (``checkpoint``):

- until run N commits, nothing of the earlier output is touched: a crash leaves
  ``inflight.json`` and the next run removes run N's partial output - the previous
  output stands as it was;
- the commit saves the checkpoint with ``replacing: {"run": N, "names": [...]}``, then
  removes the earlier rows (Parquet files rewritten under a hidden name and renamed;
  Delta: ``DELETE``), then saves the checkpoint without it.  A crash in between is
  finished by the next run before anything else (the removal is idempotent: rows of
  those names in runs before N).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from binlog.continuity import numbered
from binlog.errors import UsageError

_RANGE = re.compile(r"^(.+?)\.\.(.+)$")


def error_paths(out: Path) -> set[tuple[str, str | None]]:
    """(file name, path) of every error record in ``out/errors`` (Parquet or Delta)."""
    import pyarrow.dataset as ds

    from .delta import is_delta

    errors = out / "errors"
    if not errors.is_dir():
        return set()
    if is_delta(errors):
        from deltalake import DeltaTable

        table = DeltaTable(str(errors)).to_pyarrow_table(columns=["file", "path"])
    else:
        table = ds.dataset(str(errors), format="parquet", partitioning="hive",
                           ignore_prefixes=[".", "_"]).to_table(columns=["file", "path"])
    return {(r["file"], r["path"]) for r in table.to_pylist()}


def _in_range(name: str, spec: str) -> bool:
    m = _RANGE.match(spec)
    if not m:
        return name == spec
    lo, hi, got = numbered(m.group(1)), numbered(m.group(2)), numbered(name)
    if lo is None or hi is None or lo[0] != hi[0]:
        raise UsageError(f"--reprocess {spec}: a range is FIRST..LAST of one numbered sequence "
                         f"(mariadb-bin.000005..mariadb-bin.000007)")
    return got is not None and got[0] == lo[0] and lo[1] <= got[1] <= hi[1]


def select(out: Path, state: dict, *, errors: bool, specs: list[str]) -> list[str]:
    """The checkpointed paths to read again: those with error records (``errors``) and
    those whose names ``specs`` give (``NAME`` or ``FIRST..LAST``), plus every other
    checkpointed file of the same names."""
    files = state.get("files") or {}
    names: set[str] = set()
    if errors:
        for name, path in error_paths(out):
            if path in files:
                names.add(files[path]["name"])
            elif name:
                names.add(name)
    for spec in specs:
        matched = {entry["name"] for entry in files.values() if _in_range(entry["name"], spec)}
        if not matched:
            raise UsageError(f"--reprocess {spec}: no binlog of that name was ingested into {out}")
        names |= matched
    return sorted(path for path, entry in files.items() if entry["name"] in names)


def remove_replaced(out: Path, run: int, names: list[str]) -> list[str]:
    """Remove the rows of binlogs ``names`` that runs before ``run`` wrote, from changes/,
    errors/ and every tables/ table.  Idempotent.  Returns what changed."""
    from .delta import is_delta

    done: list[str] = []
    targets = [(out / "changes", "file", "run"), (out / "errors", "file", "run")]
    tables = out / "tables"
    if tables.is_dir():
        targets += [(d, "_file", "_run") for d in sorted(tables.iterdir()) if d.is_dir()]
    for path, column, run_column in targets:
        if not path.is_dir():
            continue
        if is_delta(path):
            done += _delete_delta(path, column, run_column, run, names)
        else:
            done += _rewrite_parquet(path, column, run_column, run, names)
    return done


def _delete_delta(path: Path, column: str, run_column: str, run: int, names: list[str]) -> list[str]:
    from deltalake import DeltaTable

    # names come from file names, not from binlog content; quoted all the same
    listed = ", ".join("'" + n.replace("'", "''") + "'" for n in names)
    metrics = DeltaTable(str(path)).delete(f"{run_column} < {int(run)} AND {column} IN ({listed})")
    return [f"{path} ({metrics.get('num_deleted_rows', 0)} rows)"] if metrics.get("num_deleted_rows") else []


def _run_of(file: Path, root: Path, run_column: str) -> int | None:
    """The run a Parquet file belongs to, from its ``run=N`` / ``_run=N`` directory."""
    for part in file.relative_to(root).parts[:-1]:
        key, _, value = part.partition("=")
        if key == run_column and value.isdigit():
            return int(value)
    return None


def _rewrite_parquet(root: Path, column: str, run_column: str, run: int, names: list[str]) -> list[str]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    done = []
    wanted = pa.array(names, pa.string())
    for file in sorted(root.rglob("*.parquet")):
        if file.name.startswith(".") or (_run_of(file, root, run_column) or run) >= run:
            continue
        handle = pq.ParquetFile(file)
        mask = pc.is_in(handle.read(columns=[column]).column(0), value_set=wanted)
        hits = pc.sum(mask).as_py() or 0
        handle.close()
        if not hits:
            continue
        crc = file.with_name(f".{file.name}.crc")       # Spark's checksum of the old bytes
        if hits == len(mask):
            file.unlink()
        else:
            _write_filtered(file, pc.invert(mask))
        crc.unlink(missing_ok=True)
        done.append(str(file))
    return done


def _write_filtered(file: Path, keep) -> None:
    """Rewrite one Parquet file with the rows ``keep`` selects, in the same physical
    types (Spark's INT96 timestamps stay INT96: Spark reads no nanosecond timestamps)
    and compression."""
    import pyarrow.parquet as pq

    from .background import codec_of, codec_options

    handle = pq.ParquetFile(file)
    codec = codec_of(handle.metadata)
    int96 = any(handle.schema.column(i).physical_type == "INT96" for i in range(len(handle.schema)))
    table = pq.read_table(file, partitioning=None, coerce_int96_timestamp_unit="us")
    handle.close()
    temp = file.with_name(f".{file.name}.tmp")
    pq.write_table(table.filter(keep), temp, **codec_options(codec),
                   use_deprecated_int96_timestamps=int96)
    os.replace(temp, file)
