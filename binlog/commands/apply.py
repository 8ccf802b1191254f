"""``binlog apply --to DSN SRC...``: replay binlog row changes on a target through PyMySQL.

``--from DSN`` reads a running server instead of files (``sources.server``): with
``--stop-never`` that is continuous replication; a run starts at the checkpoint's
resume position on that server, and a batch is committed once it is
LIVE_BATCH_SECONDS old and whenever the source is idle (a heartbeat).

Exactly once, across crashes: a checkpoint row on the target (``--checkpoint-table``,
default ``binlog_apply.checkpoint``) is updated *in the same target transaction* as the
data of the source transactions it covers, so after a crash, a kill -9 or Ctrl-C either
both are committed or neither is.  A new run reads the checkpoint and starts where it
says; source transactions that end at or before it are skipped.  Several source
transactions go into one target transaction (``--batch-transactions``, ``--batch-rows``);
a source transaction is never split.

Checkpoint table::

    name          VARCHAR(64) PRIMARY KEY   --checkpoint-name: one row per replication stream
    binlog_file   VARCHAR(255)              file of the last applied transaction's end
    binlog_pos    BIGINT UNSIGNED           byte after its COMMIT: the next one starts here
    gtid          VARCHAR(255)              GTID of the last applied transaction
    gtid_pos      TEXT                      MariaDB: the last GTID of every domain (d-s-n,...)
    resume_file   VARCHAR(255)              where the next run starts reading: binlog_file/
    resume_pos    BIGINT UNSIGNED           pos, or earlier while an XA PREPARE is pending
    transactions  BIGINT UNSIGNED           source transactions applied (all runs)
    row_changes   BIGINT UNSIGNED           row changes applied (all runs)
    updated_at    TIMESTAMP(6)
    source_ts     TIMESTAMP NULL            --from: the source's clock up to which everything
                                            it committed is applied (the last watermark's
                                            ts, binlog.watermarks); lag = now - source_ts

Lag: ``SELECT name, TIMESTAMPDIFF(SECOND, source_ts, UTC_TIMESTAMP()) AS lag_s FROM
binlog_apply.checkpoint`` in a session with time_zone '+00:00' (or UNIX_TIMESTAMP() -
UNIX_TIMESTAMP(source_ts) in any); the progress line shows it too.  While the source is
idle its heartbeats move source_ts on (an UPDATE of the row per heartbeat).

Statement-logged changes (binlog_format STATEMENT/MIXED) are executed in binlog order with
the session context their QUERY event carries (output.sql.session.statement_sql: database,
sql_mode, charsets, time zone, INSERT_ID/LAST_INSERT_ID, RAND seeds, user variables);
LOAD DATA cannot be executed again and stops the run (exit 1) naming it.

DDL (CREATE/ALTER/DROP/RENAME/TRUNCATE) is replayed under the source's sql_mode; as DDL
commits implicitly, its checkpoint follows it in a transaction of its own, and the first
DDL after a resume tolerates "already exists / does not exist" errors (it may have been
applied just before a crash).

Errors: a lost connection (or a deadlock / lock wait timeout) rolls back the open batch
and, with ``--retries``, reconnects (a refusing target is tried with growing pauses for
``--retry-timeout`` seconds) and resumes from the checkpoint; anything else the target
refuses (duplicate key, foreign key, a missing table) stops the run with the source
transaction (GTID, file, positions), the row (its number in the transaction, operation,
table, key) and the server's message.  So does a warning (the session is not strict): a
value the target stored changed, e.g. truncated by a narrower column.  The summary
counts what the target committed, and the rows safe mode's REPLACE deleted and replaced.  Exit codes: 0 done, 1 a
decoding error, 2 bad usage, 5 the target failed, 130 interrupted.
"""
from __future__ import annotations

import sys
from dataclasses import fields, replace
from functools import partial

from ..options import build
from ..replay.applier import MAX_WORKERS, Applier, ApplyInput, ApplyOptions
from ..replay.tidb.collations import CollationMap
from ._common import (
    DEFAULT_WATERMARK_INTERVAL,
    check_positions,
    connect,
    make_reader,
    open_schema,
    source_of,
    table_filter_of,
    warn,
    warn_unmatched,
)
from ._progress import with_progress


def add_parser(sub) -> None:
    p = sub.add_parser("apply")
    build(p, "apply")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..errors import BinlogError
    from ..exitcodes import for_exception

    applier = Applier(options_of(args), input_of(args))
    try:
        return applier.run()
    except BinlogError as exc:
        # the target refused (5), or the input cannot be applied (1): say what was done
        sys.stderr.write(f"binlog: error: {exc}\n")
        applier.report(final=False)
        return for_exception(exc)
    except KeyboardInterrupt:
        applier.abort()
        cp = applier.checkpoint_text()
        done = ("every worker committed what it had applied" if args.workers > 1
                else "the open batch was rolled back")
        sys.stderr.write(f"binlog: interrupted: {done}; the target's checkpoint is {cp}; run "
                         f"the same command to resume\n")
        return 130


def options_of(args) -> ApplyOptions:
    """The applier's options: the parsed ones of the same names, checked (UsageError)."""
    from ..errors import UsageError

    if "." not in args.checkpoint_table:
        raise UsageError("--checkpoint-table must be DB.TABLE")
    if args.batch_transactions < 1 or args.batch_rows < 1:
        raise UsageError("--batch-transactions and --batch-rows must be at least 1")
    if args.method == "binlog" and (args.safe or args.split_updates):
        raise UsageError("--method binlog applies row events as a replica does (a row that is "
                         "not as expected stops the run); --safe and --split-updates need "
                         "--method sql")
    if args.workers < 1 or args.workers > MAX_WORKERS:
        raise UsageError(f"--workers must be 1 to {MAX_WORKERS}")
    if args.workers > 1 and args.method != "sql":
        raise UsageError("--workers applies rendered SQL statements; --method binlog needs "
                         "--workers 1")
    if len(args.checkpoint_name) > 60:
        raise UsageError("--checkpoint-name: at most 60 characters (the workers' rows add "
                         "'/N')")
    CollationMap.of(args.map_collation)         # a TO TiDB lacks: exit 2 before anything runs
    options = ApplyOptions(**{f.name: getattr(args, f.name) for f in fields(ApplyOptions)})
    # safe mode by default with SQL statements (the BINLOG statements are never safe)
    return replace(options, safe=args.method == "sql" if args.safe is None else args.safe)


def input_of(args) -> ApplyInput:
    """The applier's target connections and input, as the reader options describe them."""
    return ApplyInput(
        connect=connect,
        open_schema=partial(open_schema, args, required=not args.no_track_ddl),
        table_filter=partial(table_filter_of, args),
        open_reader=partial(make_reader, args),
        open_live=partial(source_of, args),
        check_positions=check_positions,
        progress=lambda reader, items: with_progress(reader, items, args),
        warn_unmatched=warn_unmatched,
        warn=warn,
        watermark_interval=DEFAULT_WATERMARK_INTERVAL)
