"""Every option of the ``binlog`` commands and of the Spark data source, declared once.

A declaration (:class:`Option`) holds what ``argparse.add_argument`` takes (flags, type,
default, choices, metavar, help) and, where the data source reads the same setting, its
:class:`Source` (the key of ``spark.read.format("binlog").option(KEY, ...)``, the
``ReadOptions`` field it sets, how the string is converted).  :data:`COMMAND_OPTIONS` lists,
per command line, which options it takes in which order and group (:data:`GROUPS` are the
shared sets); :func:`build` is the one place that calls ``add_argument``.  The data
source (``spark_ingest.options``) converts its values with :func:`source_value`, with the
same types, choices and defaults; ``tools/docs_reference.py`` renders the option tables
of docs/ from the parsers built here and the data source's table from :data:`SOURCES`.

A leaf: importing it costs nothing heavy (``binlog --help`` stays fast).  The same flag
may appear in two declarations only where it means something else in another command
(``--to`` is apply's target, fetch's directory, ingest's output...).
"""
from __future__ import annotations

import argparse
import re
from typing import Any, Callable

from .errors import ON_ERROR_CHOICES, UsageError

# seconds between two watermarks while a live stream is busy (--watermark-interval)
DEFAULT_WATERMARK_INTERVAL = 1.0
# rows of expected state verify-rows holds in memory before spilling (--memory-rows)
MEMORY_ROWS = 200_000
BINARY_ENCODINGS = ["hex", "base64"]
DUMP_FORMATS = ("json", "text", "sql", "flashback", "debezium")
ENGINES = ("local", "spark")
INGEST_FORMATS = ("parquet", "delta")
# Parquet codecs of binlog ingest's files (--compression), as pyarrow names them, and the
# default (spark_ingest/background.py says why zstd)
INGEST_COMPRESSIONS = ("zstd", "snappy", "lz4", "gzip", "none")
DEFAULT_INGEST_COMPRESSION = "zstd"


# -- values: the types and checks both the command line and the data source use ------------
def rewrite_rule(text: str) -> tuple[str, str]:
    """``FROM->TO`` (mariadb-binlog's --rewrite-db syntax) as (FROM, TO)."""
    source, sep, target = text.partition("->")
    source, target = source.strip(), target.strip()
    if not sep or not source or not target:
        raise argparse.ArgumentTypeError(f"expected FROM->TO, got {text!r}")
    return source, target


def collation_rule(text: str) -> tuple[str, str]:
    """``FROM=TO``: two collation names (--map-collation)."""
    source, sep, target = text.partition("=")
    source, target = source.strip().lower(), target.strip().lower()
    if not sep or not re.fullmatch(r"\w+", source) or not re.fullmatch(r"\w+", target):
        raise argparse.ArgumentTypeError(f"expected FROM=TO (two collation names), got {text!r}")
    return source, target


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.I)


def parse_size(text) -> int:
    """``134217728``, ``128m``, ``128MB``, ``1g``, ``64KiB``."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise UsageError(f"bad size {text!r}: use bytes or a number with k/m/g")
    return int(m.group(1)) << (10 * " kmgt".index((m.group(2) or " ").lower()))


def as_bool(name: str, text) -> bool:
    """A data source flag: true/false, 1/0, yes/no, on/off (an empty value is true)."""
    if isinstance(text, bool):
        return text
    low = str(text).strip().lower()
    if low in ("1", "true", "yes", "on", ""):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"option {name}: expected true or false, got {text!r}")


def as_list(text) -> list[str]:
    """A data source list: a JSON array or a comma-separated string."""
    if isinstance(text, (list, tuple)):
        return [str(t) for t in text]
    text = str(text).strip()
    if not text:
        return []
    if text.startswith("["):
        import json

        try:
            return [str(t) for t in json.loads(text)]
        except ValueError:
            raise UsageError(f"bad JSON list {text!r}") from None
    return [t.strip() for t in text.split(",") if t.strip()]


def as_path_list(text) -> list[str]:
    """``path``: one path (``load(PATH)``), or a JSON array of them."""
    return as_list(text) if str(text).lstrip().startswith("[") else [str(text)]


def as_algorithm(text) -> str | None:
    from .crypt import check_algorithm  # (the cipher code, only when the option is given)

    return check_algorithm(str(text))


def batch_size(text) -> int:
    """``batch-size``: rows per Arrow batch, at least 1."""
    return max(1, _number("batch-size", text, int))


# -- declarations ------------------------------------------------------------------------
class Source:
    """How the data source reads an option: its key, the ``ReadOptions`` field it sets,
    the conversion of the string (default: from the option's argparse type and choices),
    whether it is a negated flag (``no-track-ddl`` sets ``track_ddl`` false), whether a
    list adds to what earlier keys gave, and the data source docs' default and meaning.
    (Plain classes: importing dataclasses, with inspect, costs every command's start-up
    some 4 ms.)"""
    __slots__ = ("key", "field", "convert", "negate", "extend", "aliases", "default_text", "help")

    def __init__(self, key: str, field: str, *, convert: Callable[[Any], Any] | None = None,
                 negate: bool = False, extend: bool = False, aliases: tuple[str, ...] = (),
                 default_text: str | None = None, help: str | None = None):
        self.key, self.field, self.convert = key, field, convert
        self.negate, self.extend, self.aliases = negate, extend, aliases
        self.default_text, self.help = default_text, help   # (the data source docs' table)


class Option:
    """One option: ``flags`` and ``kw`` are add_argument's arguments, exactly."""
    __slots__ = ("key", "flags", "kw", "source")

    def __init__(self, key: str, flags: tuple[str, ...], kw: dict, source: Source | None):
        self.key, self.flags, self.kw, self.source = key, flags, kw, source

    def __repr__(self) -> str:
        return f"Option({self.key!r})"

    @property
    def help(self) -> str | None:
        return self.kw.get("help")


def _o(key: str, *flags: str, source: Source | None = None, **kw) -> Option:
    """``key``: the option's name in the table; ``CMD:FLAG`` where another command's
    option of that flag means something else.  ``flags``: add_argument's names (default
    ``--FLAG``)."""
    return Option(key, flags or (f"--{key.rpartition(':')[2]}",), kw, source)


def _flag(key: str, help: str, **kw) -> Option:
    """An on/off option (``store_true``)."""
    return _o(key, action="store_true", help=help, **kw)


PATHS_HELP = "binlog files, or directories (their binlogs in index order)"
FROM_HELP = ("read from a running server as a replica: mysql://user:password@host:port/ "
             "(?unix_socket=, ?ssl_ca=, ?connect_timeout=S (login, default 10), "
             "?read_timeout=S (each query, default 30), ?server_public_key=FILE, "
             "?allow_cleartext_password=1: docs/hostile-servers.md)")
RETRIES_HELP = ("reconnect attempts after the connection to the server is lost (default "
                "5; back-off 1, 2, 4 ... 30 s, resuming after the last event read); "
                "any event received resets the count")
SCHEMA_DDL_HELP = ("mysqldump/mariadb-dump --no-data file or CREATE TABLE script, as of "
                   "the binlog's start (repeatable)")

_DECLARATIONS: tuple[Option, ...] = (
    # argparse's version action prints the parser's ``version`` (binlog.cli looks it up)
    _o("version", action="version", help="show the version and exit"),
    # -- inputs ---------------------------------------------------------------------------
    _o("paths", "paths", nargs="*", metavar="FILE|DIR", help=PATHS_HELP + "; or --from DSN"),
    _o("paths:files", "paths", nargs="+", metavar="FILE|DIR", help=PATHS_HELP),
    _o("allow-gaps", action="store_true",
       help="read on when a binlog is missing between two (the index lists it, a "
            "ROTATE names it, or the GTIDs jump): a warning instead of an error",
       source=Source("allow-gaps", "allow_gaps", aliases=("allowGaps",),
                     help="read on past a binlog missing between two (a warning) instead "
                          "of failing")),
    _flag("no-verify-checksum", "do not verify CRC32 event checksums",
          source=Source("no-verify-checksum", "verify_checksums", negate=True,
                        help="do not verify CRC32 event checksums")),
    _flag("infer-precision", "when no schema knows a legacy temporal column's precision, infer "
                             "it from the row images (only an unambiguous fit is accepted)",
          source=Source("infer-precision", "infer_precision",
                        help="infer legacy temporal precisions from the row images "
                             "(unambiguous fits only)")),
    _flag("no-track-ddl", "do not follow CREATE/ALTER/DROP/RENAME in the binlog's QUERY events "
                          "(followed by default)",
          source=Source("no-track-ddl", "track_ddl", negate=True,
                        help="do not follow the DDL inside the binlogs")),
    _o("assume-charset", metavar="CHARSET",
       help="charset of the text columns whose charset neither the binlog nor "
            "the schema gives (e.g. latin1); without it their values are raw "
            "bytes, {\"bytes_hex\": ...}"),
    _o("binary-encoding", choices=BINARY_ENCODINGS, default="hex",
       help="how binary strings and BLOBs are printed (default hex)",
       source=Source("binary-encoding", "binary_encoding",
                     help="binary strings in the images as `hex` or `base64`")),
    _o("follow", action="store_true",
       help="at the end of the last file wait for more data (and follow a "
            "ROTATE to the next file) instead of stopping"),
    _o("follow-timeout", type=float, metavar="SECONDS",
       help="with --follow: stop after this many seconds without new data "
            "(default: wait until interrupted)"),
    # -- schema -------------------------------------------------------------------------------
    _o("schema-ddl", action="append", default=[], metavar="FILE", help=SCHEMA_DDL_HELP,
       source=Source("schema-ddl", "schema_ddl", extend=True,
                     help="`mariadb-dump --no-data` files with the tables as of the binlogs' "
                          "start")),
    _o("schema-store", metavar="PATH",
       help="SQLite file keeping versioned schemas (created if missing)"),
    _o("schema-store:read", "--schema-store", metavar="PATH",
       help="SQLite schema store to read (copied; the job never writes it)",
       source=Source("schema-store", "schema_store",
                     help="a `binlog schema` SQLite store, read only")),
    _o("schema-from", metavar="DSN",
       help="snapshot schemas from a live server, e.g. mysql://user:pw@host:3306/db",
       source=Source("schema-from", "schema_from",
                     help="a live server's DSN to snapshot schemas from "
                          "(`mysql://user:pw@host/`)")),
    _o("lower-case-table-names", type=int, choices=[0, 1, 2], metavar="N",
       help="the server's lower_case_table_names: 1 or 2 join TABLE_MAP names to "
            "the schema case-insensitively (default: what --schema-from or the "
            "binlog's CREATE DATABASE events say, else exact)"),
    # -- tables -------------------------------------------------------------------------------
    _o("table", action="append", default=[], metavar="DB.TABLE",
       help="keep only matching tables (wildcards %% _ *; repeatable)",
       source=Source("table", "table", extend=True,
                     help="keep only matching tables (`db.table`, wildcards `%` `_` `*`)")),
    _o("exclude-table", action="append", default=[], metavar="DB.TABLE",
       help="drop matching tables (wildcards %% _ *; repeatable)",
       source=Source("exclude-table", "exclude_table", extend=True,
                     help="drop matching tables (`db.table`, wildcards `%` `_` `*`)")),
    _o("database", action="append", default=[], metavar="DB",
       help="keep only tables of this database (repeatable)",
       source=Source("database", "database", extend=True,
                     help="keep only tables of this database")),
    # -- where reading starts and stops -----------------------------------------------------
    _o("start-position", type=int, metavar="N",
       help="skip events before offset N of the first file",
       source=Source("start-position", "start_position",
                     help="skip events before this byte offset of the first file")),
    _o("stop-position", type=int, metavar="N",
       help="stop at the first event at or after offset N of the last file",
       source=Source("stop-position", "stop_position",
                     help="stop at the first event at or after this offset of the last file")),
    _o("start-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
       help="skip events older than this (in --timezone)",
       source=Source("start-datetime", "start_datetime",
                     help="skip events older than this (`'YYYY-MM-DD hh:mm:ss'` in `timezone`)")),
    _o("stop-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
       help="stop at the first event at or after this time (in --timezone)",
       source=Source("stop-datetime", "stop_datetime",
                     help="stop at the first event at or after this time (in `timezone`)")),
    _o("start-gtid", metavar="GTIDS",
       help="MariaDB GTID list D-S-N[,...]: read only event groups after it (per "
            "domain, exclusive; unlisted domains from the start), as mariadb-binlog "
            "--start-position=GTID-list; with --from the server starts at the "
            "file holding it. Or a MySQL GTID set uuid:1-5[,...]: skip its "
            "transactions (mysqlbinlog --exclude-gtids)"),
    _o("stop-gtid", metavar="GTIDS",
       help="MariaDB GTID list: read event groups up to it (per domain, inclusive; "
            "unlisted domains not at all) and stop once every domain reached it. "
            "Or a MySQL GTID set: read only its transactions (mysqlbinlog "
            "--include-gtids), stop once all were read"),
    # --timezone means what the command does with it: render values, place the datetimes
    _o("timezone", default="UTC",
       help="zone for TIMESTAMP values and the datetime options (default UTC)",
       source=Source("timezone", "timezone",
                     help="the zone of TIMESTAMP values in the images and of the datetimes")),
    _o("timezone:positions", "--timezone", default="UTC",
       help="zone of the datetime options (default UTC)"),
    _o("timezone:values", "--timezone", default="UTC",
       help="zone TIMESTAMP values are rendered in (default UTC)"),
    # -- encrypted binlogs --------------------------------------------------------------------
    _o("key-file", action="append", default=[], metavar="FILE",
       help="the server's file_key_management key file (id;hex lines); repeatable: "
            "each binlog file uses the one whose key 1 decrypts it (key rotation)",
       source=Source("key-file", "key_file", extend=True,
                     help="key files of encrypted binlogs (file_key_management's format)")),
    _o("key-file-key", metavar="SECRET|FILE:path",
       help="secret of encrypted key files (file_key_management_filekey); "
            "prefer FILE:path, a secret on the command line is visible to ps",
       source=Source("key-file-key", "key_file_key",
                     help="the secret of an encrypted key file, or `FILE:path` (prefer this: "
                          "Spark does not redact option values in plans)")),
    _o("key-file-digest", default="sha1", metavar="DIGEST",
       help="digest of the key file's encryption (file_key_management_digest, "
            "openssl enc -md; default sha1)",
       source=Source("key-file-digest", "key_file_digest", convert=lambda t: str(t).lower(),
                     help="digest of an OpenSSL-encrypted key file")),
    _o("key-file-pbkdf2", type=int, default=0, metavar="N",
       help="PBKDF2 iterations of the key file's encryption "
            "(file_key_management_use_pbkdf2; default 0: none)",
       source=Source("key-file-pbkdf2", "key_file_pbkdf2",
                     help="its PBKDF2 iterations (0: EVP_BytesToKey)")),
    _o("encryption-algorithm", default="auto", metavar="cbc|ctr|auto",
       help="the server's file_key_management_encryption_algorithm (the binlog "
            "does not record it; auto: detected on the first encrypted event)",
       source=Source("encryption-algorithm", "encryption_algorithm", convert=as_algorithm,
                     default_text="detected", help="`cbc` or `ctr` (`auto`: detected)")),
    # -- a live server as the source ----------------------------------------------------------
    _o("from", dest="from_dsn", metavar="DSN", help=FROM_HELP),
    _o("server-id", type=int, metavar="N",
       help="replica id to register with (not 0; unique among the server's "
            "replicas: SHOW SLAVE HOSTS)"),
    _o("start-file", metavar="FILE",
       help="with --from: the binlog to start at (default: the server's first); "
            "--start-position applies to it"),
    _o("stop-never", action="store_true",
       help="with --from: keep following the server after its last event"),
    _o("heartbeat", type=float, default=2.0, metavar="SECONDS",
       help="heartbeat period asked of the server (default 2); no packet for "
            "twice that plus 5 s counts as a lost connection"),
    _o("source-retries", type=int, default=5, metavar="N", help=RETRIES_HELP),
    _o("watermark-interval", type=float, metavar="SECONDS",
       help="write watermark records (op \"watermark\": every change committed up "
            "to its file/pos came before it): at transaction ends at most every "
            f"SECONDS (0: after each) and at every server heartbeat; default "
            f"{DEFAULT_WATERMARK_INTERVAL:g} with --stop-never, none otherwise"),
    _flag("no-watermarks", "no watermark records (with --stop-never)"),
    # -- replaying changes (dump --format sql, apply) ---------------------------------------
    _o("rewrite-db", action="append", default=[], metavar="FROM->TO", type=rewrite_rule,
       help="database TO instead of FROM for rows (the TABLE_MAP's database) and "
            "as the default database of statements and DDL, as mariadb-binlog "
            "--rewrite-db; names qualified in statement text are not rewritten "
            "(a warning names such statements); repeatable"),
    _flag("routines", "replay CREATE/ALTER/DROP of triggers, procedures, functions and events "
                      "(default: not replayed - the row events already hold what triggers "
                      "wrote)"),
    _flag("strip-definer", "drop DEFINER=user@host from replayed DDL (the replaying account "
                           "becomes the definer)"),
    _flag("split-updates", "give each transaction as TiCDC does: net changes per row, UPDATEs "
                           "changing a primary/unique key as DELETE + INSERT, DELETEs first"),
    # -- dump ---------------------------------------------------------------------------------
    _o("format", choices=list(DUMP_FORMATS), default="json",
       help="json (default), text, sql (statements replaying the changes, one "
            "transaction per source transaction), flashback (statements "
            "undoing them, newest first) or debezium (the change-event envelope "
            "of Debezium's MySQL connector, one per line)"),
    _flag("with-types", "json: add each column's SQL type to each record (\"types\")"),
    _flag("timestamp-offset", "json/text: TIMESTAMP values as ISO 8601 with the offset "
                              "--timezone has at each value's instant (DST-correct), e.g. "
                              "2024-10-27T02:30:00+01:00 (debezium: always UTC 'Z' strings)"),
    _flag("bigint-as-string", "json/debezium: integers beyond 2^53 (what JavaScript and jq "
                              "hold exactly) as strings of their digits"),
    _o("output-dir", metavar="DIR",
       help="json/debezium: one file per table, DIR/<db>.<table>.<N>.jsonl "
            "(names encoded), a new file every --rotate-size bytes"),
    _o("rotate-size", default="256m", metavar="BYTES",
       help="with --output-dir: start a table's next file at this size "
            "(e.g. 64m; default 256m)"),
    _o("safe", action=argparse.BooleanOptionalAction, default=True,
       help="sql/flashback: INSERT as REPLACE, UPDATE as DELETE by key + REPLACE "
            "(idempotent; default); --no-safe for plain INSERT/UPDATE/DELETE"),
    _flag("extended-insert", "sql/flashback: consecutive row INSERTs (REPLACEs) of one table "
                             "in a transaction as multi-row statements of up to 1 MiB (as "
                             "mysqldump's option; many times faster through the mariadb "
                             "client)"),
    _flag("checksum", "json: add the TiCDC CRC32 row checksums of the images to each record"),
    _flag("stats", "print a summary on stderr at the end"),
    _o("on-error", choices=ON_ERROR_CHOICES, default="fail",
       help="fail: stop at the first damaged event (exit 1); skip: report it, "
            "skip it (resynchronising after a damaged header), read on, list "
            "the skipped byte ranges at the end and exit 3",
       source=Source("on-error", "on_error",
                     help="`fail`: the first damaged event fails the job; `skip`: read past "
                          "damage")),
    _flag("quiet", "no progress line on stderr (shown only when stderr is a terminal "
                   "and the output is not)"),
    # -- apply --------------------------------------------------------------------------------
    _o("apply:to", "--to", required=True, metavar="DSN",
       help="the target: mysql://user:pw@host:port/ (or ?unix_socket=/path)"),
    _o("checkpoint-table", default="binlog_apply.checkpoint", metavar="DB.TABLE",
       help="checkpoint table on the target (created if missing; default "
            "binlog_apply.checkpoint)"),
    _o("checkpoint-name", default="default", metavar="NAME",
       help="row of the checkpoint table for this stream (default 'default')"),
    _flag("reset-checkpoint", "ignore the stored checkpoint: start at the first file (or "
                              "--start-position) and overwrite it"),
    _o("batch-transactions", type=int, default=200, metavar="N",
       help="source transactions per target commit (default 200)"),
    _o("batch-rows", type=int, default=5000, metavar="N",
       help="commit once a batch holds this many row changes (default 5000)"),
    _o("method", choices=("sql", "binlog"), default="sql",
       help="sql (default): row changes as SQL statements, for any MySQL-protocol "
            "target (TiDB included); binlog: a MariaDB target applies the row "
            "events themselves (BINLOG statements, as `mariadb-binlog | mariadb` "
            "and a replica do; needs the BINLOG REPLAY or SUPER privilege): "
            "faster, rows go by column position, a row that is not as expected "
            "stops the run; legacy temporal columns and MySQL sources still go "
            "as SQL"),
    _o("apply:safe", "--safe", action=argparse.BooleanOptionalAction, default=None,
       help="REPLACE / DELETE by key (idempotent, the default with --method sql); "
            "--no-safe for plain INSERT/UPDATE/DELETE, which fail on a row that is "
            "not as expected (what --method binlog does)"),
    _flag("no-ddl", "do not replay DDL (CREATE/ALTER/DROP/RENAME/TRUNCATE); it is reported"),
    _flag("allow-triggers", "apply into target tables that have triggers (by default refused: "
                            "they would write again the rows the binlog already holds)"),
    _flag("skip-statements", "skip statement-based changes (binlog_format=STATEMENT/MIXED) "
                             "with a warning instead of executing them (their changes are "
                             "then missing)"),
    _o("map-collation", action="append", default=[], metavar="FROM=TO", type=collation_rule,
       help="TiDB target: create what the source gave collation FROM (one TiDB lacks, such "
            "as latin1_swedish_ci) with TiDB's collation TO of the same character set "
            "(latin1_bin), which compares otherwise; by default the run stops at it; "
            "repeatable"),
    _o("retries", type=int, default=3, metavar="N",
       help="on a lost connection or deadlock: reconnect and resume from the "
            "checkpoint up to N times (default 3)"),
    _o("retry-timeout", type=float, default=60.0, metavar="SECONDS",
       help="how long each reconnect keeps trying a target that refuses "
            "connections (a restart), with growing pauses (default 60)"),
    _o("workers", type=int, default=1, metavar="N",
       help="target connections applying source transactions at once (default 1: "
            "one connection, in source order). Transactions whose rows share a "
            "primary or unique key stay in order; DDL and what has no known key run "
            "alone. For a distributed target (TiDB) use 16 or more "
            "(docs/apply-workers.md)"),
    _flag("apply:quiet", "no summary and no progress line on stderr"),
    # -- stats, verify-rows --------------------------------------------------------------------
    _o("top", type=int, default=10, metavar="N",
       help="list the N largest transactions (default 10)"),
    _flag("stats:json", "print one JSON object instead of text"),
    _o("plot", metavar="OUT.png",
       help="draw row changes per minute per table into this PNG (matplotlib)"),
    _o("against", required=True, metavar="DSN",
       help="the server to check: mysql://user:pw@host:port/ (or ?unix_socket=)"),
    _flag("records", "the inputs are JSON Lines of `binlog dump --checksum` ('-': stdin), "
                     "not binlog files"),
    _o("max-report", type=int, default=50, metavar="N",
       help="list at most N differing rows (default 50; all are counted)"),
    _o("memory-rows", type=int, default=MEMORY_ROWS, metavar="N",
       help=f"rows of expected state held in memory (~500 bytes each) before "
            f"they go to temporary files (default {MEMORY_ROWS:,}, at least 1,000)"),
    # -- fetch --------------------------------------------------------------------------------
    _o("fetch:retries", "--retries", dest="source_retries", type=int, default=5, metavar="N",
       help=RETRIES_HELP),
    _flag("semi-sync", "register as a semi-synchronous replica: acknowledge each "
                       "transaction the server waits for once it is fsync'ed into DIR "
                       "(the source needs rpl_semi_sync_master_enabled=ON)"),
    _o("fetch:to", "--to", dest="directory", required=True, metavar="DIR",
       help="relay directory (created if missing; resumed if it holds a relay)"),
    _o("fetch:start-file", "--start-file", metavar="FILE",
       help="in an empty directory: start at this binlog (default: the server's first)"),
    _o("fetch:start-gtid", "--start-gtid", metavar="D-S-N[,...]",
       help="in an empty directory: start at the file holding this MariaDB "
            "GTID position (whole files are copied)"),
    # -- schema set / show --------------------------------------------------------------------
    _o("schema:table", "table", metavar="DB.TABLE"),
    _o("schema:column", "column", metavar="@N|NAME", help="1-based column number (@3) or name"),
    _o("schema:type", "type", metavar="TYPE", help="TIMESTAMP, DATETIME or TIME"),
    _o("schema:precision", "precision", type=int, metavar="PRECISION",
       help="fractional digits, 0..6"),
    _o("schema:from-position", "--from-position", metavar="FILE:POS",
       help="apply from this binlog position on (default: everywhere)"),
    _o("schema:any-table", "table", nargs="?", metavar="DB.TABLE"),
    # -- rewrite ------------------------------------------------------------------------------
    _o("rewrite:paths", "paths", nargs="*", metavar="FILE|DIR",
       help=PATHS_HELP + "; - for stdin; .gz/.zst are read as they are"),
    _o("rewrite:to", "--to", metavar="DIR",
       help="write the rewritten binlogs here, under their input names, each with "
            "its position map NAME.map, and an index; a rerun continues where "
            "the output ends"),
    _flag("keep-compressed", "write MariaDB compressed events (log_bin_compress) compressed "
                             "(default: uncompressed, as several consumers skip compressed "
                             "events)"),
    _flag("full-metadata", "add to every TABLE_MAP of a table the schema describes the "
                           "optional metadata binlog_row_metadata=FULL writes (column names, "
                           "signedness, charsets, primary key, ENUM/SET values)"),
    _flag("write-plaintext", "with --key-file: write the decrypted binlogs in clear (they are "
                             "no longer encrypted at rest; refused without this option)"),
    _o("map", metavar="OUTPUT_BINLOG",
       help="print the position map of a rewritten binlog (or its NAME.map file) and exit"),
    _o("input-position", type=int, metavar="N",
       help="with --map: print the output position of input position N (an "
            "event's start or end)"),
    _o("output-position", type=int, metavar="N",
       help="with --map: print the input position of output position N"),
    _flag("rewrite:quiet", "no summary on stderr"),
    # -- serve --------------------------------------------------------------------------------
    _o("listen", metavar="HOST:PORT", default="127.0.0.1:3307",
       help="address to listen on (default 127.0.0.1:3307; 0.0.0.0:PORT for every "
            "interface)"),
    _o("binlogs", metavar="DIR",
       help="serve these binlogs as they are (MySQL 5.6-format ones, the output of "
            "binlog rewrite), followed as they grow"),
    _o("relay", metavar="DIR",
       help="legacy binlogs (a relay of binlog fetch): rewritten as they grow into "
            "--rewritten DIR by a binlog rewrite --follow child, and that is served"),
    _o("rewritten", metavar="DIR",
       help="with --relay: where the rewritten binlogs go (default: DIR.rewritten "
            "beside the relay)"),
    _flag("serve:full-metadata", "with --relay: TABLE_MAPs carry column names, signedness, "
                                 "charsets and keys (binlog rewrite --full-metadata), and "
                                 "serve says binlog_row_metadata=FULL: clients need no "
                                 "information_schema"),
    _o("upstream", metavar="DSN",
       help="the source: clients log in with its accounts; with --relay, a binlog "
            "fetch --stop-never child keeps the relay of it (registered with "
            "--server-id); serving goes on while it is down"),
    _o("serve:server-id", "--server-id", type=int, metavar="N",
       help="the server id serve answers with and registers with upstream "
            "(different from every replica's)"),
    _o("users", metavar="FILE",
       help="accounts allowed in: 'name *HASH' lines (binlog serve --hash-password); "
            "with --upstream, any other account is checked by the upstream and may "
            "dump only if it holds REPLICATION SLAVE there"),
    _o("serve:status", "--status", metavar="FILE",
       help="keep a JSON status there for monitoring, replaced every second: the served "
            "binlogs' end, the relay's and the upstream's positions, the lag behind "
            "the upstream (bytes, seconds) and every client's position (also SHOW "
            "BINLOG SERVE STATUS)"),
    _o("max-clients", type=int, default=64, metavar="N",
       help="clients at once (default 64); one more is refused"),
    _o("tls-cert", metavar="FILE", help="offer TLS with this certificate (PEM)"),
    _o("tls-key", metavar="FILE", help="the certificate's private key (PEM)"),
    _o("idle-timeout", type=float, default=600, metavar="S",
       help="a client silent this long between commands before its dump is "
            "disconnected (default 600)"),
    _o("write-timeout", type=float, default=60, metavar="S",
       help="a client that takes nothing for this long is disconnected (default 60)"),
    _flag("hash-password", "read a password on standard input and print the line for the "
                           "users file's hash"),
    # -- doctor -------------------------------------------------------------------------------
    _o("doctor:from", "--from", dest="from_dsn", required=True, metavar="DSN",
       help="the source: mysql://user:password@host:port/ (?unix_socket=, ?ssl_ca=...)"),
    _o("target", dest="target_dsn", metavar="DSN",
       help="the target: its collations are checked; a TiDB is recognised by VERSION()"),
    _o("target-kind", choices=["mysql", "mariadb", "tidb"],
       help="what the target is, without connecting to it (tidb: TiDB's "
            "documented incompatibilities are checked)"),
    _o("doctor:database", "--database", action="append", default=[], metavar="DB",
       help="check only the tables of this database (repeatable; default: every "
            "non-system database)"),
    _o("migration-hours", type=float, default=24.0, metavar="H",
       help="how long the pipeline may need the binlogs, snapshot to catch-up "
            "(default 24): the binlog retention is checked against it"),
    _o("scan-bytes", type=int, default=64 << 20, metavar="N",
       help="read at most N bytes of the newest binlogs (default 64 MiB)"),
    _o("scan-seconds", type=float, default=30.0, metavar="S",
       help="stop reading the binlogs after S seconds (default 30)"),
    _flag("no-scan", "do not read the binlogs (no TABLE_MAP or statement checks)"),
    _flag("doctor:json", "print the report as one JSON document "
                         "(binlog/doctor/report.schema.json)"),
    # -- ingest -------------------------------------------------------------------------------
    _o("ingest:sources", "sources", nargs="+", metavar="SRC",
       help="binlog files, directories (their binlogs in index order) or globs"),
    _o("ingest:to", "--to", required=True, metavar="DIR",
       help="output directory (created if missing)"),
    _o("engine", choices=ENGINES, default=None,
       help="local (default): in this process and one worker process per CPU, "
            "Arrow only, no JVM; spark: a Spark job (the default with --master or "
            "under spark-submit)"),
    _o("ingest:format", "--format", choices=INGEST_FORMATS, default="parquet",
       help="parquet (default): Parquet files in Spark's partition layout; delta: "
            "changes/, errors/ and each tables/<db>.<table>/ as Delta Lake tables "
            "(local engine, needs the [delta] extra)"),
    _o("ingest:parallelism", "--parallelism", type=int, metavar="N",
       help="local engine: worker processes (default: the CPUs this process may use)"),
    _o("master", metavar="URL",
       help="Spark master (selects --engine spark; default: local[*], or "
            "spark-submit's --master)"),
    _o("conf", action="append", default=[], metavar="KEY=VALUE",
       help="extra Spark configuration (repeatable)"),
    _o("ingest:on-error", "--on-error", choices=ON_ERROR_CHOICES, default="skip",
       help="skip (default): damaged or undecodable input is reported in DIR/errors/ "
            "and the job goes on at the next transaction; fail: the first error stops "
            "the job (exit 1) and nothing is committed"),
    _o("follow-symlinks", action="store_true",
       help="search symlinked directories too (by default they are not followed); "
            "each directory is searched once and no file is read twice, so a "
            "symlink loop ends where it comes back",
       source=Source("follow-symlinks", "follow_symlinks", aliases=("followSymlinks",),
                     help="search symlinked directories (each directory and file once)")),
    _flag("reprocess-errors", "ingest again, from their start, the files that have records in "
                              "DIR/errors/ (e.g. with the --schema-ddl/--schema-from they "
                              "lacked), replacing their earlier rows in changes/, tables/ and "
                              "errors/"),
    _o("reprocess", action="append", default=[], metavar="NAME[..NAME]",
       help="ingest these binlogs again from their start, replacing their earlier "
            "output (a name, or FIRST..LAST of one numbered sequence; repeatable)"),
    _flag("ingest:with-types", "changes/: fill the `types` column (each column's SQL type, as "
                               "dump --with-types)",
          source=Source("with-types", "with_types",
                        help="fill the `types` column (each column's SQL type)")),
    _o("split-size", metavar="BYTES",
       help="split files larger than this at transaction boundaries (e.g. 64m; "
            "0: one task per file; default: min(128m, total / cores))",
       source=Source("split-size", "split_size", convert=parse_size,
                     default_text="min(128m, total / parallelism)",
                     help="bytes per split (`64m`...; `0`: one split per file)")),
    _flag("no-tables", "do not write the typed tables/"),
    _o("compression", choices=INGEST_COMPRESSIONS, default=DEFAULT_INGEST_COMPRESSION,
       help="Parquet compression of the files this run writes: zstd (default, level 1), "
            "snappy or lz4 (faster, files about twice as large: for readers without "
            "zstd), gzip, none"),
    # -- binlog history: a lake's changes/ read back ------------------------------------------
    _o("history:lake", "lake", metavar="LAKE",
       help="the directory binlog ingest --to wrote (its changes/ are read: Parquet or Delta)"),
    _o("history:table", "--table", metavar="DB.TABLE",
       help="only this table's changes (its exact name, no wildcards)"),
    _o("key", action="append", default=[], metavar="COLUMN=VALUE",
       help="the history of the row whose COLUMN holds VALUE, as its JSON images hold it "
            "(4711, abc, 2024-05-01 09:14:03; a column without a name: @1); repeat for "
            "a key of several columns; needs --table.  An update that changes the key is "
            "followed: the changes of the new key from there on are in the history too"),
    _o("gtid", metavar="GTID", help="only the changes of this transaction (D-S-N)"),
    _o("history:start-datetime", "--start-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
       help="only changes at or after this time (in --timezone)"),
    _o("history:stop-datetime", "--stop-datetime", metavar="'YYYY-MM-DD hh:mm:ss'",
       help="only changes before this time (in --timezone)"),
    _o("timezone:history", "--timezone", default="UTC",
       help="zone of --start-datetime and --stop-datetime (default UTC)"),
    _o("history:threads", "--threads", type=int, metavar="N",
       help="DuckDB's threads (default: one per CPU)"),
    _flag("no-progress", "no progress display on stderr"),
    _o("summary-json", metavar="FILE", help="also write the run's summary here"),
)

#: Every option, by key.
OPTIONS: dict[str, Option] = {o.key: o for o in _DECLARATIONS}

# The data source's keys that no command line has (what a command line gives otherwise:
# its positional paths, its own worker count, its fixed error policy).
_SOURCE_ONLY = (
    Source("path", "paths", convert=as_path_list, extend=True, default_text="-",
           help="files, directories (their binlogs in index order) or globs; `load(PATH)` "
                "is `path`"),
    Source("paths", "paths", convert=as_list, extend=True, default_text="-",
           help="files, directories (their binlogs in index order) or globs"),
    Source("track-ddl", "track_ddl", convert=bool, default_text="true",
           help="the opposite of `no-track-ddl`"),
    Source("verify-checksum", "verify_checksums", convert=bool, default_text="true",
           help="the opposite of `no-verify-checksum`"),
    Source("include-errors", "include_errors", convert=bool, default_text="false",
           help="with `skip`: damage as rows with `op = 'error'`"),
    Source("parallelism", "parallelism", convert=int, default_text="the driver's CPUs",
           help="for the default split size"),
    Source("batch-size", "batch_size", convert=batch_size,
           default_text="4096", help="rows per Arrow batch handed to Spark"),
    Source("plan", "", default_text="-",
           help="internal: the plan file `read_binlog` hands to the data source"),
)

# The data source's keys in the order its documentation lists them.
_SOURCE_ORDER = (
    "path", "paths", "schema-ddl", "schema-store", "schema-from", "no-track-ddl", "track-ddl",
    "table", "exclude-table", "database", "start-position", "stop-position", "start-datetime",
    "stop-datetime", "timezone", "on-error", "include-errors", "infer-precision",
    "binary-encoding", "no-verify-checksum", "verify-checksum", "with-types", "allow-gaps",
    "follow-symlinks", "split-size", "parallelism", "batch-size", "key-file", "key-file-key",
    "key-file-digest", "key-file-pbkdf2", "encryption-algorithm", "plan")


def _sources() -> dict[str, tuple[Option | None, Source]]:
    found: dict[str, tuple[Option | None, Source]] = {
        o.source.key: (o, o.source) for o in _DECLARATIONS if o.source is not None}
    found.update((s.key, (None, s)) for s in _SOURCE_ONLY)
    if sorted(found) != sorted(_SOURCE_ORDER):      # a key declared but not placed, or gone
        raise RuntimeError(f"_SOURCE_ORDER differs: {sorted(set(found) ^ set(_SOURCE_ORDER))}")
    return {key: found[key] for key in _SOURCE_ORDER}


#: The data source's keys (canonical spelling) -> (its command-line option or None, Source).
SOURCES = _sources()
# Spark lower-cases the keys it hands over: ``.option("allowGaps", True)`` arrives as allowgaps
SOURCE_ALIASES = {alias.lower(): key for key, (_, s) in SOURCES.items() for alias in s.aliases}


def source_table() -> str:
    """Markdown: the data source's options (docs/api.md; tools/docs_reference.py)."""
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for key, (_option, source) in SOURCES.items():
        names = ", ".join(f"`{name}`" for name in (key, *source.aliases))
        default = source.default_text
        if default is None:
            value = source_default(key)
            value = (not value) if source.negate else value   # the flag's own: no-... false
            default = ("[]" if isinstance(value, list) else "-" if value is None
                       else str(value).lower() if isinstance(value, bool) else str(value))
        rows.append(f"| {names} | {default} | {source.help} |")
    return "\n".join(rows) + "\n"


def source_default(key: str):
    """The data source's default of ``key``: its option's (negated for ``no-...``)."""
    option, source = SOURCES[key]
    if option is None:
        raise KeyError(f"{key} has no command-line option; its default is ReadOptions'")
    default = option.kw.get("default", False if option.kw.get("action") == "store_true" else None)
    if isinstance(default, list):
        return list(default)
    return (not default) if source.negate else default


def source_value(key: str, value):
    """The data source's string (or Python value) ``value`` of ``key``, converted and
    checked as the command line does (its type, its choices); UsageError if bad."""
    option, source = SOURCES[key]
    kw = option.kw if option is not None else {}
    convert = source.convert
    if kw.get("action") in ("store_true", argparse.BooleanOptionalAction) or convert is bool:
        flag = as_bool(key, value)
        return (not flag) if source.negate else flag
    if kw.get("action") == "append" or convert is as_list:
        return as_list(value)
    if convert is not None:
        if convert in (int, float):
            return _number(key, value, convert)
        return convert(value)
    if kw.get("type") in (int, float):
        value = _number(key, value, kw["type"])
    elif kw.get("type") is not None:
        value = kw["type"](str(value))
    else:
        value = str(value)
    choices = kw.get("choices")
    if choices is not None:
        given = value
        if isinstance(value, str):
            value = value.lower()       # (the data source's values are case-insensitive)
        if value not in choices:
            raise UsageError(f"option {key}: expected {' or '.join(map(str, choices))}, "
                             f"got {given!r}")
    return value


def _number(key: str, value, kind):
    try:
        return kind(str(value).strip())
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise UsageError(f"option {key}: expected {what}, got {value!r}") from None


# -- which command takes which options ---------------------------------------------------
class Group:
    """An argument group of --help (``title``), or with ``exclusive`` a mutually
    exclusive one."""
    __slots__ = ("title", "items", "exclusive")

    def __init__(self, title: str | None, items: tuple, *, exclusive: bool = False):
        self.title, self.items, self.exclusive = title, items, exclusive


class Use:
    """An option as one command takes it: required there."""
    __slots__ = ("key", "required")

    def __init__(self, key: str, *, required: bool = True):
        self.key, self.required = key, required


#: Named sets of options several commands take ("@NAME" in COMMAND_OPTIONS).
GROUPS: dict[str, tuple] = {
    "schema": ("schema-ddl", "schema-store", "schema-from", "lower-case-table-names"),
    "keys": (Group("encrypted binlogs (encrypt_binlog=ON)",
                   ("key-file", "key-file-key", "key-file-digest", "key-file-pbkdf2",
                    "encryption-algorithm")),),
    "filters": ("table", "exclude-table", "database"),
    "positions": ("start-position", "stop-position", "start-datetime", "stop-datetime",
                  "start-gtid", "stop-gtid"),
    "routines": ("routines", "strip-definer"),
    "live": (Group("live source", ("from", "server-id", "start-file", "stop-never",
                                   "heartbeat", "source-retries")),),
    "watermarks": (Group("watermarks", ("watermark-interval", "no-watermarks")),),
    # what every command reading binlogs through the reader takes after its positions
    "reading": ("timezone:positions", "allow-gaps", "no-verify-checksum", "@schema",
                "@filters", "infer-precision", "assume-charset", "no-track-ddl", "@keys"),
}

#: Each command line's options, in --help's order ("binlog": the top level's).
COMMAND_OPTIONS: dict[str, tuple] = {
    "binlog": ("version",),
    "dump": ("paths", "format", "with-types", "timestamp-offset", "bigint-as-string",
             "rewrite-db", "output-dir", "rotate-size", "safe", "extended-insert",
             "split-updates", "checksum", "@positions", "timezone", "binary-encoding",
             "allow-gaps", "no-verify-checksum", "stats", "on-error", "follow",
             "follow-timeout", "@live", "@watermarks", "@schema", "@keys", "@filters",
             "infer-precision", "assume-charset", "@routines", "no-track-ddl", "quiet"),
    "apply": ("paths", "@live", "@positions", "@reading", "apply:to", "checkpoint-table",
              "checkpoint-name", "reset-checkpoint", "batch-transactions", "batch-rows",
              "method", "apply:safe", "split-updates", "no-ddl", "@routines", "rewrite-db",
              "allow-triggers", "skip-statements", "map-collation", "retries", "retry-timeout",
              "workers", "apply:quiet"),
    "stats": ("paths", "@live", "@positions", "@reading", "top", "stats:json", "plot"),
    "verify-rows": ("paths:files", "@positions", "@reading", "against", "records",
                    "max-report", "memory-rows"),
    "fetch": (Use("from"), Use("server-id"), "stop-never", "semi-sync", "heartbeat",
              "fetch:retries", "fetch:to",
              Group(None, ("fetch:start-file", "fetch:start-gtid"), exclusive=True)),
    "schema set": ("schema:table", "schema:column", "schema:type", "schema:precision",
                   Use("schema-store"), "schema:from-position"),
    "schema show": ("schema:any-table", Use("schema-store")),
    "schema import": ("@schema",),
    "rewrite": ("rewrite:paths", "rewrite:to", "keep-compressed", "full-metadata",
                "write-plaintext", "no-verify-checksum", "no-track-ddl", "allow-gaps",
                "follow", "follow-timeout", "@schema", "@keys",
                Group("position map", ("map", "input-position", "output-position")),
                "rewrite:quiet"),
    "serve": ("listen", "binlogs", "relay", "rewritten", "serve:full-metadata", "upstream",
              "serve:server-id", "users", "serve:status", "max-clients", "tls-cert", "tls-key",
              "idle-timeout", "write-timeout", "hash-password", "@schema"),
    "doctor": ("doctor:from", "target", "target-kind", "doctor:database", "migration-hours",
               "scan-bytes", "scan-seconds", "no-scan", "doctor:json"),
    "ingest": ("ingest:sources", "ingest:to", "engine", "ingest:format", "ingest:parallelism",
               "master", "conf", "schema-ddl", "schema-store:read", "schema-from",
               "no-track-ddl", "@filters", "ingest:on-error", "allow-gaps", "follow-symlinks",
               "reprocess-errors", "reprocess", "infer-precision", "timezone:values",
               "binary-encoding", "no-verify-checksum", "ingest:with-types", "@keys",
               "split-size", "no-tables", "compression", "no-progress", "summary-json"),
    "history": ("history:lake", "history:table", "key", "gtid", "history:start-datetime",
                "history:stop-datetime", "timezone:history", "history:threads"),
}


def build(parser, command: str) -> None:
    """Add the options of ``command`` (a key of COMMAND_OPTIONS) to its argparse parser: the
    one place options are added to a parser."""
    _add(parser, COMMAND_OPTIONS[command])


def _add(target, items) -> None:
    for item in items:
        if isinstance(item, Group):
            group = (target.add_mutually_exclusive_group() if item.exclusive
                     else target.add_argument_group(item.title))
            _add(group, item.items)
        elif isinstance(item, Use):
            option = OPTIONS[item.key]
            target.add_argument(*option.flags, **{**option.kw, "required": item.required})
        elif item.startswith("@"):
            _add(target, GROUPS[item[1:]])
        else:
            option = OPTIONS[item]
            target.add_argument(*option.flags, **option.kw)


def options_of(command: str) -> list[Option]:
    """The options ``command`` takes, in order (its layout with the groups expanded)."""
    out: list[Option] = []

    def walk(items) -> None:
        for item in items:
            if isinstance(item, Group):
                walk(item.items)
            elif isinstance(item, Use):
                out.append(OPTIONS[item.key])
            elif item.startswith("@"):
                walk(GROUPS[item[1:]])
            else:
                out.append(OPTIONS[item])

    walk(COMMAND_OPTIONS[command])
    return out
