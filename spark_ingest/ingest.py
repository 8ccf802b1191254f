"""``binlog ingest SRC... --to DIR``: the bulk job.

Writes, under DIR (docs/lake.md, `binlog ingest`):

- ``changes/run=<N>/db=<db>/table=<table>/date=<YYYY-MM-DD>/*.parquet``: the change
  records (``records``), the columns named as in the JSON of ``binlog dump``; ``date`` is
  the UTC day of ``ts``, ``run`` the ingest run that wrote them.
- ``tables/<db>.<table>/_run=<N>/_date=<YYYY-MM-DD>/*.parquet``: typed per-table output
  (``typed``); read with ``mergeSchema`` when ALTER TABLE added columns between runs.
- ``errors/run=<N>/*.parquet``: damaged input seen (file, pos, error, message, ...).
- ``_checkpoint/``: what was ingested (``checkpoint``).

One Spark job decodes everything once: one task per split decodes it and writes its
Parquet files with Arrow's writer (``writer``; the records never pass through the JVM),
returning its counts and error records; the driver writes errors/, then the typed tables
are projected by Spark from each table's partition of changes/.  A rerun reads only new
files and the grown part of files still being written.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from binlog.errors import BinlogError, UsageError
from binlog.options import DEFAULT_INGEST_COMPRESSION
from binlog.output.paths import table_dir_name

from .checkpoint import Checkpoint
from .options import ReadOptions
from .prescan import ERROR_KEYS, HEAD_BYTES

ERROR_COLUMNS = ("run", "file", "path", "pos") + ERROR_KEYS


class Progress:
    """One status line on stderr (redrawn on a terminal, every few seconds otherwise)."""

    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if hasattr(self.stream, "isatty") else False
        self._last = 0.0
        self._width = 0

    def line(self, text: str, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.time()
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
            self.stream.flush()
        elif force or now - self._last >= 5:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last = now

    def done(self, text: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.line(text)
            self.stream.write("\n")
            self._width = 0
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def say(self, text: str, *, always: bool = False) -> None:
        """A line of its own; ``always``: also with --no-progress (warnings)."""
        if self.enabled or always:
            if self.tty and self._width:
                self.stream.write("\n")
                self._width = 0
            self.stream.write(text + "\n")
            self.stream.flush()


class StageMonitor:
    """Polls Spark's status tracker for the jobs of a job group: tasks done / total."""

    def __init__(self, spark, group: str, progress: Progress, label: str, nbytes: int = 0):
        self.sc = spark.sparkContext
        self.group = group
        self.progress = progress
        self.label = label
        self.nbytes = nbytes
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.time()

    def __enter__(self):
        self.sc.setJobGroup(self.group, self.label, interruptOnCancel=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        self.sc.setLocalProperty("spark.jobGroup.id", None)
        self.sc.setLocalProperty("spark.job.description", None)

    def counts(self) -> tuple[int, int, int]:
        tracker = self.sc.statusTracker()
        total = done = running = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            for stage_id in job.stageIds:
                stage = tracker.getStageInfo(stage_id)
                if stage is None:
                    continue
                total += stage.numTasks
                done += stage.numCompletedTasks
                running += stage.numActiveTasks
        return total, done, running

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                total, done, running = self.counts()
            except Exception:      # the tracker is best effort
                continue
            elapsed = time.time() - self.started
            text = f"binlog ingest: {self.label}: {done}/{total or '?'} tasks, {running} running, {elapsed:.0f} s"
            if self.nbytes and total:
                mb = self.nbytes * done / total / 1e6
                text += f", ~{mb:.0f} of {self.nbytes / 1e6:.0f} MB"
            self.progress.line(text)


def options_from_args(args) -> ReadOptions:
    from .options import parse_size

    opts = ReadOptions(
        paths=list(args.sources), schema_ddl=list(args.schema_ddl), schema_store=args.schema_store,
        schema_from=args.schema_from, track_ddl=not args.no_track_ddl, table=list(args.table),
        exclude_table=list(args.exclude_table), database=list(args.database),
        timezone=args.timezone, on_error=args.on_error, infer_precision=args.infer_precision,
        binary_encoding=args.binary_encoding, verify_checksums=not args.no_verify_checksum,
        split_size=parse_size(args.split_size) if args.split_size is not None else None,
        include_errors=True, with_types=getattr(args, "with_types", False),
        key_file=list(getattr(args, "key_file", None) or []),
        key_file_key=getattr(args, "key_file_key", None),
        key_file_digest=getattr(args, "key_file_digest", "sha1"),
        key_file_pbkdf2=getattr(args, "key_file_pbkdf2", 0) or 0,
        encryption_algorithm=_algorithm(getattr(args, "encryption_algorithm", None)),
        allow_gaps=bool(getattr(args, "allow_gaps", False)),
        follow_symlinks=bool(getattr(args, "follow_symlinks", False)),
        compression=getattr(args, "compression", None) or DEFAULT_INGEST_COMPRESSION)
    opts.epochs()          # validate the time zone now (UsageError)
    opts.table_filter()
    return opts


def _algorithm(name):
    from binlog.crypt import check_algorithm

    return check_algorithm(name)


# The FORMAT_DESCRIPTION's flags byte (file offset 4 + 17): the server clears
# LOG_EVENT_BINLOG_IN_USE_F there when it closes the binlog (sql/log.cc
# MYSQL_BIN_LOG::close), so a file first read while it was being written is the same
# file once closed.
_FDE_FLAGS = 4 + 17


def _same_head(path: str, head: str) -> bool:
    """Whether the file still starts with the bytes ``head`` (hex) recorded, the in-use
    flag aside."""
    from binlog.constants import LOG_EVENT_BINLOG_IN_USE_F

    with open(path, "rb") as fh:
        now = bytearray(fh.read(HEAD_BYTES))
    then = bytearray.fromhex(head)
    for data in (now, then):
        if len(data) > _FDE_FLAGS:
            data[_FDE_FLAGS] &= ~LOG_EVENT_BINLOG_IN_USE_F & 0xFF
    return now.startswith(then)


def select_work(sources: list[str], state: dict, *, allow_gaps: bool = False,
                follow_symlinks: bool = False):
    """What to read: ({path: (start, None)}, active paths, driver-side errors, file list)."""
    from binlog.sources.file import discover

    ranges: dict[str, tuple] = {}
    active: set[str] = set()
    errors: list[dict] = []
    files: list[str] = []
    # symlinked directories and files met twice are reported by the plan's warnings
    for _key, expanded in discover(sources, on_warning=lambda message: None, allow_gaps=allow_gaps,
                                   follow_symlinks=follow_symlinks):
        if expanded:
            active.add(expanded[-1])          # the newest file may still be being written
        for path in expanded:
            if path in files:
                continue
            files.append(path)
            size = os.stat(path).st_size
            seen = state["files"].get(path)
            if seen is None:
                ranges[path] = (None, None)
                continue
            if seen.get("damaged") is not None or (seen.get("closed") and size == seen["size"]):
                continue
            head = seen.get("head") or ""
            if size < seen["end"] or (head and not _same_head(path, head)):
                errors.append({"file": Path(path).name, "path": path, "pos": 0, "error": "FileChangedError",
                               "message": f"the file changed since run {seen.get('run')} ingested it "
                                          f"({seen['size']} bytes then, {size} now): not read again",
                               "event_type": None, "table": None, "column": None,
                               "detail": "remove its entry from _checkpoint/state.json (or use a new --to "
                                         "directory) to ingest it from the start"})
                continue
            if size > seen["end"]:
                ranges[path] = (seen["end"], None)
    return ranges, active, errors, files


# Spark and Hadoop read a path as a glob pattern: an output directory holding these
# characters would be read back as other directories, or none.
_GLOB_CHARACTERS = set("*?[]{}\\")


def output_directory(to: str) -> Path:
    """``--to`` resolved, checked before anything starts: UsageError (exit 2) for glob
    characters, or an existing part of the path that is not a directory."""
    found = sorted(_GLOB_CHARACTERS.intersection(to))
    if found:
        raise UsageError(f"--to {to}: the output directory may not contain {' '.join(found)} "
                         f"(Spark reads its output paths back as glob patterns)")
    out = Path(to).resolve()
    for part in (out, *out.parents):
        if part.exists():
            if not part.is_dir():
                raise UsageError(f"--to {to}: {part} exists and is not a directory")
            if not os.access(part, os.W_OK):
                raise UsageError(f"--to {to}: {part} is not writable")
            break
    return out


def start_run(args):
    """What both engines do first: the options, the checkpoint (a run that did not finish
    is removed), and the work.  None when there is nothing new to read."""
    started = time.time()
    out = output_directory(args.to)
    if args.schema_from:
        from schema_store.live import parse_dsn

        parse_dsn(args.schema_from)         # a bad DSN stops here, before Spark starts
    opts = options_from_args(args)
    progress = Progress(enabled=not args.no_progress)
    checkpoint = Checkpoint(out)
    state = checkpoint.load()
    pending = checkpoint.inflight()
    if pending is not None and pending <= state["runs"]:
        checkpoint.end()          # it committed; only inflight.json's removal was missed
    elif pending is not None:
        removed = checkpoint.discard_run(pending)
        checkpoint.end()
        progress.say(f"binlog ingest: run {pending} did not finish; removed its partial output "
                     f"({len(removed)} directories)")
    finish_replacing(checkpoint, state, out, progress)
    ranges, active, driver_errors, files = select_work(args.sources, state, allow_gaps=opts.allow_gaps,
                                                       follow_symlinks=opts.follow_symlinks)
    if getattr(args, "reprocess_errors", False) or getattr(args, "reprocess", None):
        ranges, driver_errors = _reprocess(args, out, state, ranges, files, progress)
    if not ranges and not driver_errors:
        progress.say(f"binlog ingest: nothing new in {len(files)} file(s); {out} is up to date")
        return None
    return Job(out, opts, progress, started, checkpoint, state, ranges, active, driver_errors,
               files, state["runs"] + 1)


def _reprocess(args, out: Path, state: dict, ranges: dict, files: list, progress):
    """The work of a reprocessing run: the selected files from their start, nothing
    else (new files wait for the next run).  Their checkpoint entries are dropped here,
    in memory; the commit replaces them and removes their earlier rows (``reprocess``)."""
    from .reprocess import select

    paths = select(out, state, errors=bool(args.reprocess_errors), specs=list(args.reprocess or []))
    gone = [p for p in paths if p not in files]
    if gone:
        raise UsageError(f"cannot reprocess {', '.join(gone)}: not among the sources given "
                         f"(give the same sources as the runs that ingested it)")
    if not paths:
        progress.say("binlog ingest: no file to reprocess", always=True)
        return {}, []
    names = sorted({state["files"][p]["name"] for p in paths})
    for path in paths:
        del state["files"][path]
    state["replacing"] = {"run": state["runs"] + 1, "names": names}
    progress.say(f"binlog ingest: reprocessing {len(paths)} file(s): {', '.join(names)}", always=True)
    return {p: (None, None) for p in paths}, []


def finish_replacing(checkpoint: Checkpoint, state: dict, out: Path, progress) -> None:
    """A reprocessing run committed but did not finish removing the rows it replaced
    (a crash): remove them now, before anything else (``reprocess``)."""
    replacing = state.get("replacing")
    if not replacing or replacing["run"] > state["runs"]:
        state.pop("replacing", None)
        return
    from .reprocess import remove_replaced

    changed = remove_replaced(out, replacing["run"], replacing["names"])
    state.pop("replacing")
    checkpoint.save(state)
    progress.say(f"binlog ingest: run {replacing['run']} reprocessed {', '.join(replacing['names'])}: "
                 f"removed their earlier rows ({len(changed)} files or tables)", always=True)


@dataclass
class Job:
    out: Path
    opts: ReadOptions
    progress: Progress
    started: float
    checkpoint: Checkpoint
    state: dict
    ranges: dict
    active: set
    driver_errors: list
    files: list
    run: int


def run_ingest(args) -> int:
    job = start_run(args)
    if job is None:
        return 0
    out, opts, progress, started = job.out, job.opts, job.progress, job.started
    checkpoint, state, ranges, active = job.checkpoint, job.state, job.ranges, job.active
    driver_errors, files, run = job.driver_errors, job.files, job.run
    conf = dict(kv.split("=", 1) for kv in args.conf)
    starting = SparkStart(args.master, conf)
    opts.parallelism = local_parallelism(args.master, conf) or starting.result().sparkContext.defaultParallelism
    plan, t_scan = _plan(opts, progress, ranges, state, active)
    spark = starting.result()
    # read back partition values as strings (a table named 2024 stays "2024"); write the
    # typed tables' partitions with concurrent writers instead of sorting every task's rows
    session_conf = {"spark.sql.sources.partitionColumnTypeInference.enabled": "false",
                    "spark.sql.maxConcurrentOutputFileWriters": "256"}
    saved = {k: spark.conf.get(k, None) for k in session_conf}
    for key, value in session_conf.items():
        if key not in conf:
            spark.conf.set(key, value)
    try:
        return _run(spark, args, opts, plan, t_scan, progress, started, checkpoint, state, active,
                    driver_errors, files, run, out)
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


class SparkStart:
    """Spark's start-up (JVM, session: 10-15 s) in a background thread, so that the driver
    pre-scans the binlogs meanwhile.  PySpark supports a context made outside the main
    thread (it then installs no SIGINT handler).  A daemon thread: an error in the
    pre-scan ends the command without waiting for the JVM."""

    def __init__(self, master: str | None, conf: dict):
        self._spark = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, args=(master, conf), name="spark-start",
                                        daemon=True)
        self._thread.start()

    def _start(self, master, conf) -> None:
        from .session import get_spark

        try:
            # binlog ingest runs its tasks as Python functions: registering the data source
            # would start a Python worker to look it up; and its JVM only schedules them,
            # so C1 alone compiles it (C2's compiler threads cost more CPU than they save:
            # JVM 12.8-15.1 s of CPU against 8.1-8.2 s, 168 MB on one core, the same decode)
            self._spark = get_spark(master, conf=conf, data_source=False, java_options="-XX:TieredStopAtLevel=1")
        except BaseException as exc:      # handed to the main thread by result()
            self._error = exc

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._spark


def local_parallelism(master: str | None, conf: dict) -> int | None:
    """Spark's defaultParallelism, when it is known without a running Spark: the
    ``spark.default.parallelism`` setting, or the threads of a local master (local[*]:
    the CPUs this process may run on, as the JVM counts them).  None otherwise."""
    from .session import submitted

    if conf.get("spark.default.parallelism"):
        return int(conf["spark.default.parallelism"])
    if master is None and submitted():
        return None
    master = master or "local[*]"
    if master == "local":
        return 1
    if master.startswith("local[") and master.endswith("]"):
        threads = master[len("local["):-1].split(",")[0]
        if threads == "*":
            return len(os.sched_getaffinity(0))
        if threads.isdigit():
            return int(threads)
    return None


def _plan(opts, progress, ranges, state, active):
    from .plan import build_plan

    scan_bytes = [0, 0]

    def scanned(scan):
        scan_bytes[0] += 1
        scan_bytes[1] += scan.size
        progress.line(f"binlog ingest: pre-scan {scan_bytes[0]}/{len(ranges)} files, "
                      f"{scan_bytes[1] / 1e6:.0f} MB")

    t_scan = time.time()
    plan = build_plan(opts, ranges=ranges, tracked=state.get("tracked_ddl"), active=frozenset(active),
                      progress=scanned, chains=state.get("chains"),
                      follow_chain=not state.get("replacing"))
    t_scan = time.time() - t_scan
    progress.done(f"binlog ingest: pre-scan {len(plan.scans)} file(s), {scan_bytes[1] / 1e6:.1f} MB, "
                  f"{len(plan.splits)} split(s) in {t_scan:.1f} s")
    for warning in plan.warnings:
        progress.say(f"binlog: warning: {warning}", always=True)
    return plan, t_scan


def _run(spark, args, opts, plan, t_scan, progress, started, checkpoint, state, active, driver_errors,
         files, run, out) -> int:
    checkpoint.begin(run)
    changes_dir = out / "changes"
    run_dir = changes_dir / f"run={run}"
    t_decode = time.time()
    stats: dict = {}
    error_rows: list[dict] = []
    # a failure from here on leaves inflight.json: the next run removes this run's output
    typed = None
    if not args.no_tables:
        # the tasks write tables/ too, from the rows they decode (arrow_typed: the
        # compiled walk's Arrow columns; the tables no schema describes from their images)
        from .tasks import table_columns_of

        typed = (str(out / "tables"), run, table_columns_of(plan))
    results: list[dict] = []
    if plan.splits:
        with StageMonitor(spark, f"binlog-ingest-{run}", progress, "decode", plan.nbytes):
            try:
                results = decode_to_parquet(spark, plan, str(run_dir), typed)
            except Exception as exc:        # a task's decoding error with on-error=fail
                raise _task_error(exc) from None
        progress.done(f"binlog ingest: decoded {plan.nbytes / 1e6:.1f} MB in "
                      f"{time.time() - t_decode:.1f} s")
        for result in results:
            error_rows.extend(result["errors"])
            for db, table, op, n in result["counts"]:
                # (db, table) pairs, not "db.table" split again later: `a.b`.`c` is not
                # `a`.`b.c`; the summary names a table as its directory under tables/
                # (paths.table_dir_name: one-to-one, no control characters for the terminal)
                if op not in ("insert", "update", "delete"):
                    # statement-logged changes and DDL: no typed table; counted per database
                    key = f"{table_dir_name(db or '-', 'statements')} (statement/ddl records)"
                    ops = stats.setdefault(key, {})
                    ops[op] = ops.get(op, 0) + n
                    continue
                ops = stats.setdefault(table_dir_name(db, table), {})
                ops[op] = ops.get(op, 0) + n
    t_decode = time.time() - t_decode
    paths = {Path(p).name: p for p in files}
    all_errors = [dict(e, path=e.get("path") or paths.get(e["file"])) for e in driver_errors + error_rows]
    if all_errors:
        _write_errors(spark, out / "errors", run, all_errors, opts.compression)
    t_tables = time.time()
    if typed is not None:
        from .shredded import conform_files

        conform_files(results)      # the tables no schema describes: the run's keys in each file
    t_tables = time.time() - t_tables

    seconds = {"prescan": t_scan, "decode": t_decode, "tables": t_tables}
    return commit_run(args, plan, state, active, driver_errors, error_rows, stats, run, started, seconds,
                      checkpoint, out, {"master": spark.sparkContext.master})


def commit_run(args, plan, state, active, driver_errors, error_rows, stats, run, started, seconds,
               checkpoint, out, extra) -> int:
    """The run's end, for both engines: the checkpoint moves on only now."""
    from .plan import tracked_snapshot

    for scan in plan.scans:
        path = str(Path(scan.path).resolve())
        end = scan.end
        if path in active and not scan.closed and scan.error is None:
            end = scan.safe_end
        entry = {"name": scan.name, "size": scan.size, "end": end, "closed": scan.closed,
                 "head": scan.head, "run": run, "damaged": None}
        if scan.error is not None and not (path in active and scan.error.get("error") == "IncompleteEventError"):
            entry["damaged"] = scan.error
            entry["end"] = scan.size
        state["files"][path] = entry
    for e in driver_errors:
        state["files"][e["path"]]["damaged"] = e
    tracked = dict(state.get("tracked_ddl") or {})
    for key, store in plan.stores.items():
        tracked[key] = tracked_snapshot(store)
    state["tracked_ddl"] = tracked
    state["chains"] = {**(state.get("chains") or {}), **plan.chains}
    state["runs"] = run
    rows = sum(sum(v.values()) for v in stats.values())
    elapsed = time.time() - started
    summary = {"run": run, "files": len(plan.scans), "bytes": plan.nbytes, "splits": len(plan.splits),
               "rows": rows, "tables": stats, "errors": len(driver_errors) + len(error_rows),
               "seconds": {"total": round(elapsed, 3),
                           **{k: round(v, 3) for k, v in seconds.items()}},
               "parallelism": plan.options.parallelism, **extra,
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    checkpoint.save_run(run, summary)
    checkpoint.save(state)
    checkpoint.end()
    # a reprocessing run: the checkpoint says so (state["replacing"]) until the earlier
    # rows of its files are gone; a crash here is finished by the next run
    finish_replacing(checkpoint, state, out, Progress(enabled=not args.no_progress))
    _print_summary(Progress(enabled=True), summary, out, error_rows + driver_errors)
    if args.summary_json:
        Path(args.summary_json).write_text(json.dumps(summary, indent=1))
    if summary["errors"]:
        # rows went to errors/: the run is not complete, and says so in its exit code
        # (binlog.exitcodes: 3, damaged or undecodable input skipped and reported)
        from binlog.exitcodes import Exit

        sys.stderr.write(f"binlog ingest: {summary['errors']} error record(s) in "
                         f"{out / 'errors'}/run={run}: their changes are not in changes/\n")
        return Exit.SKIPPED
    return 0


def decode_to_parquet(spark, plan, run_dir: str, typed=None) -> list[dict]:
    """One Spark task per split decodes it and writes its Parquet files itself
    (``writer.write_split``); the schema snapshots reach the tasks as a broadcast.  The
    results: one {"rows", "counts", "errors"} per split.  ``typed``: (tables directory,
    run, ``tasks.table_columns_of(plan)``): the tasks also write the typed tables, as
    the local engine's do (``tasks.write_split_local``), and the results name the tables
    no schema describes ("schemaless")."""
    from .writer import write_split

    splits, opts = list(plan.splits), plan.options
    snapshots = spark.sparkContext.broadcast(list(plan.snapshots))
    keys = spark.sparkContext.broadcast(plan.keys)        # encrypted binlogs: as the snapshots

    def task(index: int) -> dict:
        from binlog.crypt import KeyRing

        split = splits[index]
        if typed is not None:
            from .tasks import write_split_local

            tables_dir, run, columns = typed
            return write_split_local(split, opts, snapshots.value[split.group], run_dir, tables_dir,
                                     run, columns, keys.value)
        ring = KeyRing.from_dict(keys.value) if keys.value is not None else None
        return write_split(split, opts, snapshots.value[split.group], run_dir, keys=ring)

    try:
        return spark.sparkContext.parallelize(range(len(splits)), len(splits)).map(task).collect()
    finally:
        snapshots.unpersist()
        keys.unpersist()


def _task_error(exc: BaseException) -> BaseException:
    """A decoding error raised in a task (on-error=fail) as a BinlogError with its text."""
    from .records import SplitFailed

    text = str(exc)
    marker = SplitFailed.MARKER
    if marker in text:
        message = text[text.index(marker) + len(marker):].splitlines()[0].replace(" | ", "\n")
        return BinlogError(message)
    return exc


def _local(path: Path) -> str:
    """``path`` for Spark's readers and writers.  --to is a path every node mounts (the
    tasks and the driver use plain file access): a bare path would go to the cluster's
    default file system (HDFS).  Not ``Path.as_uri()``: Hadoop's Path takes the text
    unencoded, so %20 would stay %20."""
    return "file://" + str(path)


# pyarrow's codec names (binlog.options.INGEST_COMPRESSIONS) as Spark's Parquet writer spells
# them (its "lz4" is Hadoop's framed LZ4; pyarrow's is LZ4_RAW)
_SPARK_CODECS = {"none": "none", "snappy": "snappy", "lz4": "lz4_raw", "gzip": "gzip", "zstd": "zstd"}


def _write_errors(spark, errors_dir: Path, run: int, rows: list[dict], codec: str) -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema = StructType([StructField("run", LongType())] + [
        StructField(c, LongType() if c == "pos" else StringType()) for c in ERROR_COLUMNS[1:]])
    data = [tuple([run] + [None if r.get(c) is None else (int(r[c]) if c == "pos" else str(r[c]))
                          for c in ERROR_COLUMNS[1:]]) for r in rows]
    (spark.createDataFrame(data, schema).coalesce(1).write.mode("append").partitionBy("run")
     .option("compression", _SPARK_CODECS[codec]).parquet(_local(errors_dir)))


def _print_summary(progress: Progress, summary: dict, out: Path, errors: list[dict]) -> None:
    s = summary["seconds"]
    mb = summary["bytes"] / 1e6
    rate = mb / s["total"] if s["total"] else 0
    progress.say(f"binlog ingest: run {summary['run']}: {summary['files']} file(s), {mb:.1f} MB, "
                 f"{summary['splits']} split(s), {summary['rows']} rows, {summary['errors']} error(s) "
                 f"in {s['total']:.1f} s ({rate:.1f} MB/s) -> {out}")
    for table, ops in sorted(summary["tables"].items()):
        detail = ", ".join(f"{op} {n}" for op, n in sorted(ops.items()))
        progress.say(f"binlog ingest:   {table}: {detail}")
    for e in errors[:20]:
        progress.say(f"binlog ingest:   error: {e.get('file')} @ {e.get('pos')}: {e.get('error')}: "
                     f"{e.get('message')}")
    if len(errors) > 20:
        progress.say(f"binlog ingest:   ... {len(errors) - 20} more in {out / 'errors'}")
