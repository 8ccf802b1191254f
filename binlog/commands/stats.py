"""``binlog stats FILE...``: what a range of binlogs did, per table and per transaction.

Per table: rows inserted / updated / deleted and the bytes of its rows events; the
largest transactions (by row changes, with their bytes and GTID/positions); the time
range of the events; ``--plot out.png`` draws row changes per minute per table
(matplotlib, the ``plot`` extra: checked before the scan).  ``--json`` prints the same as one JSON object.
"""
from __future__ import annotations

import heapq
import os
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone

from ..exitcodes import Exit
from ..options import build
from ._common import make_reader, warn_unmatched
from ._progress import with_progress

PLOT_TABLES = 12


def add_parser(sub) -> None:
    p = sub.add_parser("stats")
    build(p, "stats")
    p.set_defaults(run=run)


class Stats:
    def __init__(self, top: int):
        self.top = top
        self.tables: dict[str, Counter] = defaultdict(Counter)
        self.per_minute: dict[str, Counter] = defaultdict(Counter)
        self.largest: list = []            # heap of (rows, bytes, seq, summary)
        self.transactions = 0
        self.statements: Counter[str] = Counter()
        self.statement_changes: Counter[str] = Counter()   # statement-logged changes per db
        self.first_ts = None
        self.last_ts = None
        self._seq = 0
        self._event_table: dict = {}

    def event(self, item) -> None:
        from ..events import RowsEvent
        from ..reader import FILE_HEADER_EVENTS

        header = item.event.header
        ts = header.timestamp
        # a file's FORMAT_DESCRIPTION/ROTATE/STOP carry when the file was opened or closed
        if ts and header.type_code not in FILE_HEADER_EVENTS:
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if isinstance(item.event, RowsEvent):
            self._event_table[(item.file, item.event.header.offset)] = item.event.header.event_size

    def change(self, change) -> None:
        """A RowCount: the rows of one rows event (counted, not decoded)."""
        name = f"{change.db}.{change.table}"
        counts = self.tables[name]
        counts[change.op] += change.count
        size = self._event_table.pop((change.file, change.pos), None)
        if size is not None:
            counts["bytes"] += size
            counts["events"] += 1
        self.per_minute[name][change.ts // 60 * 60] += change.count

    def counted(self, run) -> None:
        """A reader.CountedRows: what ``event`` and ``change`` take of each of its rows
        events and their RowCounts, for a run the stream counted in one go."""
        first, last = self.first_ts, self.last_ts
        for change, size in zip(run.counts, run.sizes, strict=True):
            ts = change.ts
            if ts:
                first = ts if first is None or ts < first else first
                last = ts if last is None or ts > last else last
            if change.count:
                name = f"{change.db}.{change.table}"
                counts = self.tables[name]
                counts[change.op] += change.count
                counts["bytes"] += size
                counts["events"] += 1
                self.per_minute[name][ts // 60 * 60] += change.count
        self.first_ts, self.last_ts = first, last

    def statement(self, record) -> None:
        """A statement-logged change (inside a transaction or not; its rows are unknown
        to the binlog): counted per default database."""
        if record.op == "statement":
            self.statement_changes[record.db or ""] += 1

    def unit(self, unit) -> None:
        from ..assembly.transactions import Statement

        if isinstance(unit, Statement):
            self.statements[unit.kind] += 1
            return
        if unit.incomplete:
            return
        self.transactions += 1
        per_table: Counter[str] = Counter()
        for c in unit.changes:
            per_table[f"{c.db}.{c.table}"] += c.count
        rows = sum(per_table.values())
        summary = {
            "gtid": unit.gtid, "file": unit.start[0], "start": unit.start[1],
            "end": unit.end[1] if unit.end else None, "rows": rows,
            "bytes": unit.bytes, "rows_bytes": unit.rows_bytes, "ts": _iso(unit.ts),
            "seconds": max(0, (unit.commit_ts or unit.ts) - unit.ts),
            "tables": dict(per_table.most_common(5)),
        }
        self._seq += 1
        item = (rows, unit.bytes, -self._seq, summary)
        if len(self.largest) < self.top:
            heapq.heappush(self.largest, item)
        elif self.top > 0:
            heapq.heappushpop(self.largest, item)

    def as_dict(self, reader_stats) -> dict:
        tables = {}
        for name, c in sorted(self.tables.items()):
            tables[name] = {"inserted": c["insert"], "updated": c["update"], "deleted": c["delete"],
                            "rows_events": c["events"], "bytes": c["bytes"]}
        largest = [s for *_, s in sorted(self.largest, key=lambda i: (i[0], i[1], i[2]), reverse=True)]
        return {
            "files": reader_stats.files, "events": sum(reader_stats.events.values()),
            "bytes": reader_stats.bytes,
            "time_range": {"first": _iso(self.first_ts), "last": _iso(self.last_ts),
                           "seconds": (self.last_ts - self.first_ts) if self.first_ts else 0},
            "transactions": self.transactions, "statements": dict(self.statements),
            "statement_logged_changes": dict(self.statement_changes),
            "tables": tables, "largest_transactions": largest,
        }


def _iso(ts):
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(args) -> int:
    from ..assembly.transactions import TxAssembler
    from ..reader import CountedRows, RowCount, StatementChange

    if args.plot:
        _matplotlib()        # before the scan, not after it
    # rows are counted, not decoded; transactions hold one RowCount per rows event, so
    # memory stays flat however large a transaction is
    reader = make_reader(args, count_rows=True,
                         count_runs=os.environ.get("BINLOG_BATCH", "1") != "0")  # runs counted in C
    stats = Stats(args.top)
    assembler = TxAssembler()
    for item in with_progress(reader, reader.items(statements=True), args):
        if isinstance(item, RowCount):
            stats.change(item)
        elif isinstance(item, CountedRows):
            stats.counted(item)
        elif isinstance(item, StatementChange):
            stats.statement(item)
        else:
            stats.event(item)
        for unit in assembler.feed(item):
            stats.unit(unit)
    for unit in assembler.finish():
        stats.unit(unit)
    warn_unmatched(reader)
    data = stats.as_dict(reader.stats)
    if args.json:
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(data))
    if args.plot:
        plot(stats.per_minute, args.plot)
        sys.stderr.write(f"binlog stats: plot written to {args.plot}\n")
    if reader.stats.incomplete is not None:
        # the counts stop before that event: say so, and say it in the exit code
        sys.stderr.write(f"binlog: warning: {reader.stats.incomplete}\n")
        return Exit.INCOMPLETE
    return Exit.OK


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def render_text(d: dict) -> str:
    lines = [f"files: {d['files']}, events: {d['events']}, bytes: {d['bytes']} ({_human(d['bytes'])})"]
    tr = d["time_range"]
    if tr["first"]:
        lines.append(f"time range: {tr['first']} .. {tr['last']} ({tr['seconds']} s)")
    stmts = ", ".join(f"{k}: {v}" for k, v in sorted(d["statements"].items()))
    lines.append(f"transactions: {d['transactions']}" + (f"; statements outside transactions: {stmts}" if stmts else ""))
    logged = d["statement_logged_changes"]
    if logged:
        lines.append(f"statement-logged changes (binlog_format STATEMENT/MIXED; rows not in the "
                     f"binlog): {sum(logged.values())} ("
                     + ", ".join(f"{db or '(no db)'}: {n}" for db, n in sorted(logged.items())) + ")")
    lines.append("")
    width = max([len(n) for n in d["tables"]] + [5])
    lines.append(f"{'table':<{width}}  {'inserted':>9}  {'updated':>9}  {'deleted':>9}  {'events':>7}  {'bytes':>11}")
    total: Counter[str] = Counter()
    for name, t in d["tables"].items():
        lines.append(f"{name:<{width}}  {t['inserted']:>9}  {t['updated']:>9}  {t['deleted']:>9}  "
                     f"{t['rows_events']:>7}  {t['bytes']:>11}")
        total.update(t)
    if len(d["tables"]) > 1:
        lines.append(f"{'total':<{width}}  {total['inserted']:>9}  {total['updated']:>9}  "
                     f"{total['deleted']:>9}  {total['rows_events']:>7}  {total['bytes']:>11}")
    if d["largest_transactions"]:
        lines.append("")
        lines.append("largest transactions (row changes):")
        for t in d["largest_transactions"]:
            tables = ", ".join(f"{k} {v}" for k, v in t["tables"].items())
            lines.append(f"  {t['rows']:>7} rows  {t['bytes']:>10} bytes  {t['gtid'] or '-':<14} "
                         f"{t['file']} @ {t['start']}..{t['end']}  {t['ts']}  ({tables})")
    return "\n".join(lines) + "\n"


def _matplotlib():
    """(matplotlib.dates, matplotlib.pyplot), drawing to files; UsageError without them."""
    from ..errors import UsageError

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.dates as mdates
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise UsageError("--plot needs matplotlib: pip install 'binlog-temporal[plot]' "
                         "(or pip install matplotlib)") from exc
    return mdates, plt


def plot(per_minute: dict, path: str) -> None:
    """Row changes per minute per table (the busiest tables; the rest as 'other')."""
    mdates, plt = _matplotlib()
    totals = sorted(per_minute, key=lambda n: -sum(per_minute[n].values()))
    shown = totals[:PLOT_TABLES]
    series = {n: per_minute[n] for n in shown}
    if len(totals) > PLOT_TABLES:
        other: Counter = Counter()
        for n in totals[PLOT_TABLES:]:
            other.update(per_minute[n])
        series[f"other ({len(totals) - PLOT_TABLES} tables)"] = other
    minutes = sorted({m for c in series.values() for m in c})
    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=100)
    if minutes:
        full = list(range(minutes[0], minutes[-1] + 60, 60))
        xs = [datetime.fromtimestamp(m, timezone.utc) for m in full]
        for name, counts in series.items():
            ax.plot(xs, [counts.get(m, 0) for m in full], marker="o" if len(full) < 90 else None,
                    markersize=3, linewidth=1.4, label=name)
        if len(full) <= 30:
            ax.xaxis.set_major_locator(mdates.MinuteLocator(tz=timezone.utc))
        if len(full) == 1:
            center = mdates.date2num(xs[0])
            ax.set_xlim(center - 1 / 1440, center + 1 / 1440)
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M", tz=timezone.utc))
        fig.autofmt_xdate()
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.text(0.5, 0.5, "no row changes", ha="center", va="center", transform=ax.transAxes)
    ax.set_title("binlog row changes per minute per table (UTC)")
    ax.set_xlabel("minute (UTC)")
    ax.set_ylabel("row changes")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
