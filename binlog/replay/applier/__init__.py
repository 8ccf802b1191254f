"""The applier of ``binlog apply`` (binlog.commands.apply): source transactions from a
reader applied on a target through PyMySQL, with the checkpoint row in the same target
transaction (exactly once).  The command's module docstring says what it does; this
package is the machinery, in parts:

- ``options``: what it is given (``ApplyOptions``, ``ApplyInput``);
- ``failures``: a target failure as ConnectionLost (reconnect, resume) or TargetError;
- ``context``: what the sessions of one run share (``Run``: keys, renderer, --rewrite-db,
  information_schema, how a transaction becomes statements);
- ``executor``: one target session executing a transaction's statements;
- ``checkpoint``: the checkpoint table (``CheckpointStore``); ``faults``: its test hooks;
- ``ddl``: which DDL is replayed, and how (``DdlPolicy``);
- ``pipeline`` and ``batches``: --workers 1, decoding in a thread, batches committed on
  one session; ``workers``: --workers N (replay.parallel's pool of ``WorkerSession``).

``Applier`` composes them: a run connects, reads the checkpoint, opens the input and
applies it; a lost connection makes it reconnect and resume from the checkpoint."""
from __future__ import annotations

import sys
import time
from functools import partial
from typing import TYPE_CHECKING

import pymysql

from ...assembly.transactions import TxAssembler
from ...errors import TargetError, UsageError
from ...filters import TableFilter
from ...sources.file import expand_paths
from ...sources.stream import binlog_name
from ..batch import encode_event
from . import pipeline
from .batches import Batches
from .checkpoint import CheckpointStore, pos_key
from .context import BinlogMethod, LiveTables, Run, needs_sql
from .ddl import DdlPolicy
from .executor import Executor, Replaced
from .failures import ConnectionLost, translate
from .faults import Faults
from .options import MAX_WORKERS, ApplyInput, ApplyOptions

if TYPE_CHECKING:       # imported where used: a run of --workers 1 needs it not
    from .workers import Workers

__all__ = ["Applier", "ApplyInput", "ApplyOptions", "MAX_WORKERS", "needs_sql"]


class Applier:
    def __init__(self, args: ApplyOptions, io: ApplyInput):
        self.args = args
        self.io = io
        self.warn = io.warn
        self.store = CheckpointStore(args.checkpoint_table, args.checkpoint_name)
        self.ddl = DdlPolicy(args, io.warn)
        self.faults = Faults.from_environment()
        self.live = LiveTables(lambda: io.connect(args.to, autocommit=True))
        self.replaced = Replaced(io.warn)
        self.schema = None
        # what the target committed (a batch counts once its COMMIT succeeded)
        self.stats = {"transactions": 0, "rows": 0, "ddl": 0, "statements": 0, "skipped": 0,
                      "commits": 0, "replaced": 0}
        self.session: Executor | None = None     # the run's target session (from _connect on)
        self.feed: pipeline.Feed | None = None      # --workers 1: the running pipeline
        self.parallel: Workers | None = None        # --workers N: the running workers

    @property
    def target(self) -> Executor:
        if self.session is None:
            raise RuntimeError("the applier used its target connection before connecting")
        return self.session

    def checkpoint_text(self) -> str:
        return self.store.text()

    # -- the run and its retries ---------------------------------------------------------
    def run(self) -> int:
        self.schema = self.io.open_schema()
        attempts = 0
        while True:
            try:
                try:
                    self._connect()
                    self.store.ensure_table(self.target)
                    self._run_once()
                except (pymysql.err.Error, OSError) as exc:
                    # anything not already translated (checkpoint table, information_schema)
                    raise translate(exc, None) from exc
                self.report(final=True)
                return 0
            except ConnectionLost as exc:
                self.abort()
                attempts += 1
                if attempts > self.args.retries:
                    raise TargetError(f"{exc}; gave up after {self.args.retries} retries",
                                      hint="the target's checkpoint says where to resume: run "
                                           "the same command again") from None
                self.warn(f"{exc}; reconnecting and resuming from the checkpoint (retry {attempts} "
                          f"of {self.args.retries}, for up to {self.args.retry_timeout:g}s)")
                self._wait_for_target()
            finally:
                self._stop_pipeline()
                self.live.close()
                if self.session is not None:
                    self.session.close()
                    self.session = None

    def _connect(self) -> None:
        self.live.forget()
        run = Run.open(self.args, self.schema, self.live, self.warn)
        self.session = Executor.connect(self.io, self.args, run, self.stats, self.replaced)

    def _wait_for_target(self) -> None:
        """After a lost connection: try to connect with growing pauses (0.5 s doubling up
        to 10 s) until the target accepts or --retry-timeout seconds have passed (a
        restarting server refuses connections for a while); the run then reconnects."""
        deadline = time.monotonic() + self.args.retry_timeout
        delay = 0.5
        while True:
            try:
                probe = self.io.connect(self.args.to)
                probe.close()
                return
            except TargetError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TargetError(f"{exc.message}; still refused after "
                                      f"{self.args.retry_timeout:g}s of retries",
                                      hint="the target's checkpoint says where to resume: run "
                                           "the same command again once it is up") from None
                time.sleep(min(delay, left))
                delay = min(delay * 2, 10)

    def abort(self) -> None:
        self._stop_pipeline()
        pool = self.parallel.pool if self.parallel is not None else None
        if pool is not None:
            pool.stop()
        self.replaced.batch = 0
        self.live.close()
        if self.session is not None:
            self.session.rollback()
            self.session.close()
            self.session = None

    def _stop_pipeline(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    def _idle(self) -> None:
        """The live source has nothing new (a heartbeat): commit the open batch(es)."""
        pool = self.parallel.pool if self.parallel is not None else None
        if pool is not None:
            pool.flush()
        elif self.feed is not None:
            self.feed.put(("idle",))

    # -- one run -------------------------------------------------------------------------
    def _run_once(self) -> None:
        args, session = self.args, self.target
        skip: set = set()
        if args.reset_checkpoint:
            self.store.current = None
            self.store.clear_workers(session)
            args.reset_checkpoint = False         # a retry resumes from what this run wrote
        else:
            skip = self.store.load(session)
        opened = self._open_input()
        if opened is None:
            return
        files, start_position, source = opened
        live = source is not None
        run = session.run
        base = self.io.table_filter()
        run.filter = TableFilter(base.include, base.exclude + [f"{self.store.db}.{self.store.table}"],
                                 base.databases)
        if self.store.current is None and not live:
            self.io.check_positions(files, start_position, args.stop_position)
        binlog = {}
        if args.method == "binlog":
            # the reader counts the rows of the tables whose events go on as they are (and
            # keeps their bytes); those of the others are decoded for SQL
            run.binlog = self._binlog_method()
            binlog = dict(count_runs=True, keep_raw=True, decode_table=needs_sql)
        reader = self.io.open_reader(paths=source if live else files, start_position=start_position,
                                     schema=self.schema, table_filter=run.filter,
                                     count_rows=args.method == "binlog",
                                     watermark_interval=self.io.watermark_interval if live else None,
                                     **binlog)
        if args.method == "sql" and not args.split_updates:
            # the rows events of the transaction being read: the compiled walk writes their
            # row images' VALUES from their bytes (SqlRenderer.row_values)
            run.renderer.events = {}
            reader.set_output_paths(rows_hook=run.renderer.note_event,
                                    row_encoder=partial(encode_event, run.renderer))
        assembler = TxAssembler(on_warning=self.warn)
        own = (f"--exclude-table {self.store.db}.{self.store.table}",)
        if args.workers > 1:
            from .workers import Workers

            self.parallel = Workers(session, self.store, self.ddl, args, self.io, self.faults, skip)
            self.parallel.run(reader, assembler, own)
            return
        batches = Batches(session, self.store, self.ddl, args, self.faults, skip,
                          getattr(source, "progress", None))
        self.feed = batches.feed
        producer = pipeline.Producer(batches.feed, run, args, self.io, batches.applied, skip, own)
        pipeline.run(batches.feed, partial(producer, reader, assembler), batches.consume)
        batches.commit()

    def _open_input(self):
        """(files, start position, live source or None) from the checkpoint and the
        options; None when the checkpoint is past every file given."""
        args = self.args
        cp = self.store.current
        live = bool(args.from_dsn)
        files = [] if live else expand_paths(args.paths, allow_gaps=args.allow_gaps, on_warning=self.warn)
        start_position = args.start_position
        source = None
        if live and cp is not None:
            source = self.io.open_live(start=(cp["resume_file"], cp["resume_pos"]), on_idle=self._idle)
            start_position = 4          # the source starts at the checkpoint itself
            if args.start_position is not None or args.start_file:
                self.warn(f"--start-file/--start-position ignored: resuming from the checkpoint "
                          f"{self.checkpoint_text()}")
        elif live:
            source = self.io.open_live(on_idle=self._idle)
        elif cp is not None:
            names = [binlog_name(f) for f in files]
            if cp["resume_file"] not in names:
                if all(pos_key((n, 0)) < pos_key((cp["resume_file"], 0)) for n in names):
                    sys.stderr.write(f"binlog apply: the checkpoint ({self.checkpoint_text()}) is "
                                     f"past every file given: nothing to do\n")
                    return None
                raise UsageError(
                    f"the target's checkpoint resumes at {cp['resume_file']}:{cp['resume_pos']}, "
                    f"which is not among the files given ({names[0]} ... {names[-1]})",
                    hint="give the files from that one on, or --reset-checkpoint to start over")
            files = files[names.index(cp["resume_file"]):]
            start_position = cp["resume_pos"]
            if args.start_position is not None:
                self.warn(f"--start-position ignored: resuming from the checkpoint {self.checkpoint_text()}")
        return files, start_position, source

    def _binlog_method(self) -> BinlogMethod:
        """--method binlog: the target's packet limit, and the rows events kept for the
        BINLOG statements of the tables whose events go on as they are (needs_sql)."""
        from ..binlog_statements import RawEvents

        conn = self.target.conn
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), @@max_allowed_packet")
            version, packet = cur.fetchone()
        conn.commit()
        if "mariadb" not in str(version).lower():
            raise UsageError(f"--method binlog needs a MariaDB target; this one is {version}",
                             hint="use --method sql (the default)")
        max_packet = int(packet)
        raw = RawEvents(lambda table_map, fde: not needs_sql(table_map, fde), dict(self.args.rewrite_db))
        # a statement's events before base64 (4/3 larger), below the target's limit
        return BinlogMethod(raw, max_packet, min(8 << 20, max(1, (max_packet - 1024) * 3 // 4)))

    # -- report --------------------------------------------------------------------------
    def report(self, final: bool) -> None:
        if self.args.quiet and final:
            return
        s = self.stats
        sys.stderr.write(f"binlog apply: {s['transactions']} transaction(s), {s['rows']} row "
                         f"change(s), "
                         + (f"{s['statements']} statement-logged change(s), " if s['statements'] else "")
                         + f"{s['ddl']} DDL committed on the target in {s['commits']} "
                         f"commit(s)"
                         + (f"; {s['skipped']} already applied, skipped" if s['skipped'] else "")
                         + (f"; {s['replaced']} target row(s) deleted and replaced by REPLACE"
                            if s['replaced'] else "")
                         + f"; checkpoint {self.checkpoint_text()}\n")
