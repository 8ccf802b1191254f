#!/usr/bin/env python3
"""Writes docs/compatibility.md: which tools read which cells of the temporal corpus, from
real runs (``make compat``).

    python tests/peers/compat.py                      # writes docs/compatibility.md
    python tests/peers/compat.py --out PATH           # somewhere else (the page's test)
    python tests/peers/compat.py --only go-mysql      # some peers (printed, not written)

The corpus is ``samples/mariadb-10.11/temporal_cells.binlog``: tables created with
mysql56_temporal_format OFF or ON, rows written with it OFF or ON, TIMESTAMP/DATETIME/TIME
with N = 0..6, edge values, UPDATEs and DELETEs; the server's own values are in
``temporal_cells.expected.json``.  Every runner reads the original binlog and the one
``binlog rewrite`` makes of it; a network runner reads them from ``binlog serve --binlogs``
(serving the original unchanged, or the rewritten one).  A peer that stops with an error
is started again after the transaction it failed in, as an operator skipping it would, so
each cell says what the peer does on that cell's own events.

A runner is a ``Runner`` (tests/support/compat.py): the peer's name, its mode (file or
network), a function giving its version, and ``run(Target) -> Run``.  The runners of a peer
live in ``tests/peers/compat_runners/<peer>.py`` and are listed in ``RUNNERS`` below.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for path in (HERE, REPO / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from compat_runners import debezium, gomysql, mariadb_binlog, pmr, replica  # noqa: E402
from support.compat import (  # noqa: E402
    Run,
    Runner,
    Target,
    Verdict,
    expected_steps,
    final_rows,
    load_expected,
    position_after,
    verdict,
)
from support.paths import write_index  # noqa: E402
from support.serve_process import PASSWORD, Serve  # noqa: E402

CORPUS = REPO / "samples" / "mariadb-10.11" / "temporal_cells.binlog"
EXPECTED = CORPUS.with_name("temporal_cells.expected.json")
PAGE = REPO / "docs" / "compatibility.md"
#: the name the server gave the corpus file (its ROTATE names the next one)
BINLOG_NAME = "mariadb-bin.000001"
VARIANTS = ("original", "rewritten")
TYPES = {"ts": "TIMESTAMP", "dt": "DATETIME", "tm": "TIME"}
FORMATS = ("off_off", "off_on", "on_off", "on_on")

#: Every runner on the page, in its order.
RUNNERS: list[Runner] = [
    *gomysql.RUNNERS,
    *pmr.RUNNERS,
    *mariadb_binlog.RUNNERS,
    *replica.RUNNERS,
    *debezium.RUNNERS,
]

MAX_RESTARTS = 100


def prepare(tmp: Path) -> dict[str, Path]:
    """The original corpus file and its rewrite, each alone in a directory serve can serve."""
    binlogs = {}
    for variant in VARIANTS:
        folder = tmp / variant
        folder.mkdir()
        binlogs[variant] = folder / BINLOG_NAME
    shutil.copyfile(CORPUS, binlogs["original"])
    subprocess.run([sys.executable, "-m", "binlog.cli", "rewrite", "--quiet", "--to", str(tmp / "rewriting"),
                    str(binlogs["original"])], cwd=REPO, check=True, capture_output=True)
    shutil.copyfile(tmp / "rewriting" / BINLOG_NAME, binlogs["rewritten"])
    for binlog in binlogs.values():
        write_index(binlog.parent, [BINLOG_NAME])
    return binlogs


def run_resuming(runner: Runner, target: Target) -> Run:
    """The runner from the start, then after each transaction it failed in."""
    merged = Run(finished=False)
    for _ in range(MAX_RESTARTS):
        run = runner.run(target)
        _log(runner, target, run)
        merged.changes += run.changes
        merged.errors += run.errors
        if run.final is not None:
            merged.final = run.final
        if run.finished:
            merged.finished = True
            break
        failed = run.errors[-1][0] if run.errors else None
        if failed is None or failed == target.start_after:
            break
        start = position_after(target.binlog, failed)
        if start is None:
            merged.finished = True
            break
        target = replace(target, start_after=failed, start_pos=start)
    return merged


def _log(runner: Runner, target: Target, run: Run) -> None:
    """One line per run that stopped with an error, on stderr: the page's test shows them
    when the page differs, so a run that failed by itself can be told from a cell."""
    if run.errors:
        gtid, message = run.errors[-1]
        print(f"{runner.peer} ({runner.mode}) on {target.binlog.parent.name}, after {target.start_after or 'the start'}: "
              f"{len(run.changes)} changes, failed in {gtid}: {message}", file=sys.stderr)


def run_all(runners: list[Runner], tmp: Path) -> dict[tuple[int, str], Run]:
    binlogs = prepare(tmp)
    results = {}
    serves = {}
    try:
        for variant, binlog in binlogs.items():
            if any(r.mode == "network" for r in runners):
                (tmp / f"serve-{variant}").mkdir()
                serves[variant] = Serve(binlog.parent, tmp / f"serve-{variant}")
        for i, runner in enumerate(runners):
            for variant, binlog in binlogs.items():
                scratch = tmp / f"run-{i}-{variant}"
                scratch.mkdir()
                target = Target(binlog, scratch)
                if runner.mode == "network":
                    target = replace(target, port=serves[variant].port, user="repl", password=PASSWORD)
                results[i, variant] = run_resuming(runner, target)
    finally:
        for serve in serves.values():
            serve.stop()
    return results


def cells(expected: dict):
    """(table, create/insert formats, type, N, column index) of every cell."""
    for formats in FORMATS:
        for short, name in TYPES.items():
            table = f"tc.{formats}_{short}"
            for n in range(7):
                yield table, formats, name, n, n + 1


def verdicts(run: Run, expected: dict) -> dict[tuple[str, int], Verdict]:
    steps = expected_steps(expected)
    finals = final_rows(expected)
    out = {}
    for table, _formats, _type, n, column in cells(expected):
        mine = [s for s in steps if s.table == table]
        out[table, n] = verdict(mine, run, column, finals.get(table))
    return out


# -- the page ------------------------------------------------------------------------------
HEADER = """# Which tools read which cells

<!-- Generated by `make compat` (tests/peers/compat.py) from real runs; do not edit.
     tests/peers/test_compat_page.py fails when a fresh run differs. -->

A MariaDB column's temporal format is fixed when its table is created: with
`mysql56_temporal_format=OFF` (MariaDB 5.3 to 10.0, or any later server with the variable
off) `TIMESTAMP(N)`, `DATETIME(N)` and `TIME(N)` keep the old type codes and no precision in
the binlog; with it ON they are MySQL 5.6 columns. The corpus
(`samples/mariadb-10.11/temporal_cells.binlog`, written by MariaDB 10.11) has a table per
cell: format at CREATE x format at INSERT x type, a column per N = 0..6, edge values
(zero dates, 1000-01-01, 9999-12-31 23:59:59.999999, TIMESTAMP 1970/2038 limits,
TIME ±838:59:59.999999, -00:00:00.5), NULLs, UPDATEs and DELETEs. Each tool read the
original binlog and the one `binlog rewrite` makes of it (legacy columns re-encoded as
MySQL 5.6 columns); a network tool read them from `binlog serve --binlogs DIR`.

- **exact**: every value of the column, in every row image, equals the server's
  `CAST(col AS CHAR)` (compared as values: a temporal's fields, the fraction to six digits).
- **wrong**: the first value that differs (what the tool gave, then the server's value).
- **error**: the tool stopped on that table's events; its message. A tool that stops is
  started again after the transaction it failed in, so each cell shows what it does on
  its own events.
"""


def _cell_text(v: Verdict, notes: dict[str, int]) -> str:
    if v.status == "exact":
        return "exact"
    if v.status == "wrong":
        return "wrong: " + v.detail.replace("|", "\\|")
    number = notes.setdefault(v.detail, len(notes) + 1)
    return f"error [{number}]"


def _table(results: dict[tuple[str, int], Verdict], notes: dict[str, int]) -> list[str]:
    lines = ["| created / written | type | " + " | ".join(f"N={n}" for n in range(7)) + " |",
             "|---|---|" + "---|" * 7]
    for formats in FORMATS:
        create, insert = formats.split("_")
        for short, name in TYPES.items():
            table = f"tc.{formats}_{short}"
            row = [_cell_text(results[table, n], notes) for n in range(7)]
            lines.append(f"| {create.upper()} / {insert.upper()} | {name} | " + " | ".join(row) + " |")
    return lines


def _summary(results: dict[tuple[str, int], Verdict]) -> str:
    counts = Counter(v.status for v in results.values())
    return ", ".join(f"{counts[s]} {s}" for s in ("exact", "wrong", "error") if counts[s])


def render(runners: list[Runner], runs: dict[tuple[int, str], Run], expected: dict) -> str:
    judged = {key: verdicts(run, expected) for key, run in runs.items()}
    out = [HEADER, "## Summary", "", "Cells (84 per binlog): exact / wrong / error.", "",
           "| tool | version | mode | original binlog | rewritten binlog |", "|---|---|---|---|---|"]
    for i, runner in enumerate(runners):
        out.append(f"| {runner.peer} | {runner.version()} | {runner.mode} | {_summary(judged[i, 'original'])} "
                   f"| {_summary(judged[i, 'rewritten'])} |")
    for i, runner in enumerate(runners):
        out += ["", f"## {runner.peer} {runner.version()}, {runner.mode}", ""]
        if runner.note:
            out += [runner.note, ""]
        notes: dict[str, int] = {}
        for variant in VARIANTS:
            out += [f"{variant.capitalize()} binlog:", ""]
            out += _table(judged[i, variant], notes)
            out.append("")
        if notes:
            out += ["Errors:", ""]
            out += [f"{n}. `{' '.join(message.replace('`', chr(39)).split())}`" for message, n in notes.items()]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PAGE)
    parser.add_argument("--only", nargs="*", help="peer names: run only these, print the page")
    args = parser.parse_args(argv)
    runners = [r for r in RUNNERS if not args.only or r.peer in args.only]
    expected = load_expected(EXPECTED)
    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        runs = run_all(runners, Path(tmp))
    page = render(runners, runs, expected)
    if args.only:
        sys.stdout.write(page)
    else:
        args.out.write_text(page)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
