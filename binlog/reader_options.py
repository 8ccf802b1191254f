"""What a ``BinlogReader`` is told: ``ReaderOptions`` (how it reads) and ``ReaderHooks``
(what it calls back), and ``reader_options``, the one place where option values - a
command's parsed options, or the Spark data source's - become ReaderOptions."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .errors import UsageError, check_on_error
from .filters import TableFilter
from .user_values import parse_epoch, parse_zone

if TYPE_CHECKING:
    from .events import TableMapEvent, UnknownEvent
    from .rows import DecodePlan
    from .stream import Damage


@dataclass(frozen=True)
class ReaderOptions:
    """How a ``BinlogReader`` reads: one object the CLI builds from its arguments and the
    Spark source from its options.

    Positions follow mysqlbinlog: ``start_position`` applies to the first binlog and
    ``stop_position`` to the last; events before ``start_datetime`` (epoch seconds) are
    skipped and reading stops at the first event at or after ``stop_datetime``.
    ``tz``: the zone TIMESTAMP values are given in; with ``timestamp_offset`` as ISO 8601
    with that zone's offset at each value's instant (``2024-10-27T02:30:00+01:00``).
    ``on_error``: "fail" or "skip"
    (see ``BinlogReader``).  ``follow``/``follow_timeout``/``poll_interval``: following
    files that grow (used when the reader is given paths).  ``keys``: a
    ``crypt.KeyRing`` to decrypt encrypted binlogs with; each binlog picks its key and
    algorithm after its START_ENCRYPTION_EVENT."""
    verify_checksums: bool = True
    start_position: int | None = None
    stop_position: int | None = None
    start_datetime: int | None = None
    stop_datetime: int | None = None
    tz: Any = None
    infer_precision: bool = False
    table_filter: Any = None
    on_error: str = "fail"
    follow: bool = False
    follow_timeout: float | None = None
    poll_interval: float = 0.25
    keys: Any = None        # binlog.crypt.KeyRing for encrypted binlogs (never printed)
    start_gtid: str | None = None       # MariaDB GTID lists, as binlog.gtids reads them
    stop_gtid: str | None = None
    assume_charset: str | None = None
    allow_gaps: bool = False        # a binlog missing between two: a warning, not an error
    count_rows: bool = False        # rows events give one RowCount (row values not decoded)
    timestamp_offset: bool = False  # TIMESTAMP as ISO 8601 with tz's offset (DST-correct)
    # Watermark records (binlog.watermarks): None none; S at transaction ends at most every
    # S seconds (0: after each), and at every heartbeat of a live server
    watermark_interval: float | None = None
    # with count_rows: runs of rows events whose tables' rows were counted before are
    # counted by the stream in one compiled call and given out as one CountedRows item
    # (binlog stats); no GTID window or --start-datetime
    count_runs: bool = False
    # SourceEvents and CountedRows carry their events' bytes (decrypted, as framed):
    # ``binlog apply --method binlog`` sends them on as they are
    keep_raw: bool = False

    def __post_init__(self) -> None:
        check_on_error(self.on_error)
        if self.watermark_interval is not None and not 0 <= self.watermark_interval < 1e9:
            raise UsageError(f"--watermark-interval must be 0 or more seconds, not "
                             f"{self.watermark_interval}")
        if self.assume_charset is not None:
            assumed_codec(self.assume_charset)


@dataclass(frozen=True)
class ReaderHooks:
    """Callbacks of a ``BinlogReader``: ``on_unknown(name, event)`` for an event type
    this parser does not know, ``on_inferred(name, offset, plan, {index: N})`` for an
    inferred precision, ``on_damage(Damage)`` for each skipped range, ``on_idle()``
    before each wait while following; ``decode_table(table_map, fde) -> bool`` (with
    ``count_rows``): the rows of the tables it says yes to are decoded (RowChanges)
    instead of counted."""
    on_unknown: Callable[[str, UnknownEvent], None] | None = None
    on_inferred: Callable[[str, int, DecodePlan, dict], None] | None = None
    on_damage: Callable[[Damage], None] | None = None
    on_idle: Callable[[], None] | None = None
    on_warning: Callable[[str], None] | None = None     # e.g. a gap read past (allow_gaps)
    decode_table: Callable[[TableMapEvent, Any], bool] | None = None


def assumed_codec(charset: str) -> str:
    """The Python codec of an --assume-charset name; UsageError for a name without one."""
    from .charsets import CHARSET_CODECS

    codec = CHARSET_CODECS.get(charset.lower())
    if codec is None:
        raise UsageError(f"--assume-charset {charset}: not a character set this reader can "
                         f"decode (e.g. latin1, utf8mb4, gbk)")
    return codec


def table_filter_of(values: Any) -> TableFilter:
    """The TableFilter of --table, --exclude-table and --database (``table``,
    ``exclude_table``, ``database``: lists of patterns)."""
    return TableFilter(list(getattr(values, "table", None) or []),
                       list(getattr(values, "exclude_table", None) or []),
                       list(getattr(values, "database", None) or []))


def reader_options(values: Any, **fields: Any) -> ReaderOptions:
    """ReaderOptions from option values by their names: a command's parsed options
    (``args``: ``no_verify_checksum``...) or the Spark data source's
    ``spark_ingest.options.ReadOptions`` (``verify_checksums``); what ``values`` does not
    have takes ReaderOptions' default.  Converted here, once: --start/--stop-datetime in
    --timezone to epoch seconds, the table filter, the checksum flag; TIMESTAMP values in
    --timezone (``tz``).  ``fields``: ReaderOptions fields the caller decides itself
    (where it resumes, the key ring it loaded, the zone of the values...), given last."""
    def get(name: str, default: Any = None) -> Any:
        return getattr(values, name, default)

    zone = parse_zone(get("timezone") or "UTC")
    verify = get("verify_checksums")
    settings = dict(
        verify_checksums=not get("no_verify_checksum", False) if verify is None else verify,
        start_position=get("start_position"), stop_position=get("stop_position"),
        start_datetime=parse_epoch(get("start_datetime"), zone),
        stop_datetime=parse_epoch(get("stop_datetime"), zone), tz=zone,
        table_filter=table_filter_of(values), infer_precision=get("infer_precision", False),
        on_error=get("on_error", "fail"), follow=get("follow", False),
        follow_timeout=get("follow_timeout"), start_gtid=get("start_gtid"),
        stop_gtid=get("stop_gtid"), assume_charset=get("assume_charset"),
        allow_gaps=get("allow_gaps", False), timestamp_offset=get("timestamp_offset", False))
    settings.update(fields)
    return ReaderOptions(**settings)
