"""Level 2 of the differential fuzzing (fuzz/differential.py has level 1, one rows
event): a whole ``binlog dump`` of a binlog (the option byte of fuzz/target.py and the
file's bytes), through the reader and through the command line, and ``binlog stats``, on
the compiled and the pure paths (``check_dump``): byte-identical output, the same error,
the same damage records in ``--on-error skip``; and ``binlog ingest`` with runs of events
in one compiled call against event by event (``check_ingest_runs``)."""
from __future__ import annotations

import io
import sys
from pathlib import Path

from binlog import TableFilter
from binlog.errors import BinlogError
from binlog.reader import RowCount

sys.path.insert(0, str(Path(__file__).resolve().parent))

import target  # noqa: E402
from pure_paths import Difference, error_key, pure, short  # noqa: E402

# Table filter of the dump cases whose option byte has 0x10 (fuzz/target.py's
# --infer-precision bit: its search is slow and no compiled path): about half of the
# samples' tables, so that filtered rows events are skipped between kept ones.
FILTER = 0x10
EXCLUDE_TABLES = ["%.%i%", "%.t1"]
# Option bit 0x80 (fuzz_binlog.py's names target; unused by fuzz/target.py): binlog stats'
# reading, rows counted (binlog/_scan.c count_rows), not decoded; one line per count.
COUNT = 0x80


def dump(data: bytes, path: Path) -> tuple:
    """``binlog dump`` of ``data`` (fuzz/target.py's option byte + file): (output bytes,
    error key or None, damage keys, incomplete key)."""
    if not data:
        return (b"", None, (), None)
    options, body = data[0], data[1:]
    if options & target.FIX_CRC:
        body = target.fix_crcs(body)
    path.write_bytes(body)
    sink = io.BytesIO()
    text = bool(options & target.TEXT)
    writer = (target.TextWriter if text else target.JsonLinesWriter)(sink, "hex")
    error = None
    reader = None
    try:
        reader = target.BinlogReader([path], on_error="skip" if options & target.SKIP else "fail",
                                     verify_checksums=not options & target.NO_VERIFY,
                                     schema=target._schema() if options & target.TRACK_DDL == target.TRACK_DDL
                                     else None,
                                     table_filter=TableFilter(exclude=EXCLUDE_TABLES) if options & FILTER else None,
                                     count_rows=bool(options & COUNT))
        for item in reader.items():
            if isinstance(item, RowCount):
                sink.write(f"{item.file} {item.pos} {item.db}.{item.table} {item.op} {item.count}\n".encode())
            elif isinstance(item, target.RowChange):
                writer.write(item)
            elif text:
                writer.event(item)
    except BinlogError as exc:
        error = error_key(exc)
    damage = tuple(error_key(d.error) for d in reader.stats.damage) if reader else ()
    incomplete = None
    if reader is not None and reader.stats.incomplete is not None:
        incomplete = str(reader.stats.incomplete)
    return (sink.getvalue(), error, damage, incomplete)


# The command line's dump, in-process: --format by option bits 0x20 and 0x80 (json,
# text, sql, debezium: every writer the batch path can feed), the other bits as dump().
_CLI_FORMATS = {0x00: "json", 0x20: "text", 0x80: "sql", 0xA0: "debezium"}


def cli_dump(data: bytes, path: Path) -> tuple:
    """``binlog dump`` run through ``binlog.cli.main``: (exit status, stdout bytes,
    stderr text)."""
    if not data:
        return (0, b"", "")
    options = data[0]
    argv = ["dump", "--quiet", "--format", _CLI_FORMATS[options & 0xA0], str(path)]
    if options & 0xA8 == 0x08:      # json, TRACK_DDL half set (--no-track-ddl): --checksum
        argv.append("--checksum")
    if options & target.SKIP:
        argv += ["--on-error", "skip"]
    if options & target.TRACK_DDL != target.TRACK_DDL:
        argv.append("--no-track-ddl")
    return _cli(data, path, argv)


def cli_stats(data: bytes, path: Path) -> tuple:
    """``binlog stats --json`` of the same binlog through ``binlog.cli.main`` (runs of
    rows events counted by binlog/_scan.c count_run): (exit status, stdout, stderr)."""
    if not data:
        return (0, b"", "")
    return _cli(data, path, ["stats", "--json", str(path)])


def _cli(data: bytes, path: Path, argv: list) -> tuple:
    """``binlog.cli.main(argv)`` over the binlog of ``data`` (its option byte, then the
    file) written to ``path``, with the options both commands share."""
    from binlog import cli

    options, body = data[0], data[1:]
    if options & target.FIX_CRC:
        body = target.fix_crcs(body)
    path.write_bytes(body)
    if options & target.NO_VERIFY:
        argv.append("--no-verify-checksum")
    if options & FILTER:
        for pattern in EXCLUDE_TABLES:
            argv += ["--exclude-table", pattern]
    stdout, stderr = io.TextIOWrapper(io.BytesIO(), write_through=True), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        status = cli.main(argv)
    finally:
        sys.stdout, sys.stderr = saved
    stdout.flush()
    return (status, stdout.buffer.getvalue(), stderr.getvalue())


def _ingest(path: Path, out: Path, runs: bool):
    """What ``binlog ingest``'s task makes of ``path`` (on-error skip): the change
    records and the typed table of ru.t (``runs_binlog``'s), as lists; or the error.
    ``runs``: the stream writes runs of like events in one call (records.ImagesEncoder),
    else every event goes through the encoder alone."""
    import pyarrow.parquet as pq

    from spark_ingest import records
    from spark_ingest.arrow_typed import TypedWriter
    from spark_ingest.options import parse_options
    from spark_ingest.plan import build_plan

    run_parts = records.ImagesEncoder.run_parts
    if not runs:
        records.ImagesEncoder.run_parts = lambda self, change, event: None   # type: ignore[method-assign]
    try:
        plan = build_plan(parse_options({"path": str(path), "on-error": "skip"}))
        changes = []
        for split in plan.splits:
            typed = TypedWriter(str(out), 1, split.index,
                                # (its text column's charset is unknown: Python-typed)
                                lambda db, table: [("@1", "int")] if (db, table) == ("ru", "t") else None)
            for batch in records.read_split(split, plan.options, plan.snapshots[split.group], batch_size=64,
                                            typed=typed):
                changes += batch.to_pylist()
            typed.close()
    except Exception as exc:  # noqa: BLE001 - the outcome compared: the same error both ways
        return ("error", type(exc).__name__, str(exc))
    finally:
        records.ImagesEncoder.run_parts = run_parts     # type: ignore[method-assign]
    files = sorted(out.rglob("*.parquet"), key=lambda p: (str(p.parent), int(p.stem.rsplit("-", 1)[1])))
    return changes, [(str(p.relative_to(out).parent), pq.read_table(p).to_pylist()) for p in files]


def check_ingest_runs(data: bytes, path: Path) -> None:
    """``binlog ingest`` of a binlog (``runs_binlog``'s, mutated) with runs of events in
    one compiled call (``_speedups.encode_run`` flags 48: images and typed columns) and
    with every event alone: the same change records, the same typed table, in the same
    order, or the same error."""
    import shutil

    path.write_bytes(data)
    outcomes = []
    for runs in (True, False):
        out = path.parent / f"{path.name}.{'runs' if runs else 'events'}"
        shutil.rmtree(out, ignore_errors=True)
        outcomes.append(_ingest(path, out, runs))
        shutil.rmtree(out, ignore_errors=True)
    if outcomes[0] != outcomes[1]:
        raise Difference(f"ingest with runs differs from ingest event by event:\n  runs {str(outcomes[0])[:2000]}\n"
                         f"  events {str(outcomes[1])[:2000]}")


def check_dump(data: bytes, path: Path) -> None:
    """Dump ``data`` on both paths, through the reader and through the command line, and
    count it with ``binlog stats``; raise Difference if output or errors differ."""
    for run in (dump, cli_dump, cli_stats):
        with pure():
            reference = run(data, path)
        got = run(data, path)
        if got != reference:
            raise Difference(f"{run.__name__} differs:\n  compiled {short(got)}\n  pure     {short(reference)}")
