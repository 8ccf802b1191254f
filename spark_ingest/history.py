"""``binlog history``: the changes of one row, one transaction or one time range, read from
a lake's ``changes/`` (``binlog ingest``) with DuckDB, as ``binlog dump --format json``
prints them.

What it adds to a hand-written query: only the partition directories that can hold the
answer are read (``changes/run=N/db=D/table=T/date=YYYY-MM-DD/``, the names escaped as
the writer escapes them, the days of the time range); a key column is found in the JSON
images by a JSON pointer (any name: ``@3``, quotes, slashes); the history of a row
follows an update that changes its key to the row's new key (and keeps the old one); the
records come in binlog order (run, file, position, row).  A Delta lake (``--format
delta``) is read through its log (``deltalake``): its directories may hold files a later
commit removed.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from binlog.errors import UsageError

from .partitions import DEFAULT_PARTITION, partition_value

# a record's fields in binlog dump's order (before and after: JSON text already)
FIELDS = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op", "before", "after", "row", "pk",
          "commit", "xid", "end_pos")
_SELECT = ", ".join('epoch_us("ts")' if name == "ts" else f'"{name}"' for name in FIELDS)
# the partition columns of the Parquet layout, as they are (a database named 2024 is a name)
_HIVE_TYPES = "{'run': BIGINT, 'db': VARCHAR, 'table': VARCHAR, 'date': VARCHAR}"
_MAX_KEY_CHANGES = 64


def pointer(column: str) -> str:
    """The JSON pointer (RFC 6901) of an image's key."""
    return "/" + column.replace("~", "~0").replace("/", "~1")


def utc_days(start: int | None, stop: int | None) -> tuple[str | None, str | None]:
    """The first and the last UTC day (``date=`` partition) of [start, stop)."""
    from datetime import datetime, timezone

    def day(epoch: int) -> str:
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d")
    return (None if start is None else day(start)), (None if stop is None else day(max(stop - 1, 0)))


def parquet_files(lake: Path, table: tuple[str, str] | None, days: tuple[str | None, str | None]) -> list[str]:
    """The Parquet files of ``changes/`` that can hold rows of ``table`` (None: any) on the
    days ``days`` (first, last; None: open)."""
    first, last = days
    want = None if table is None else (f"db={partition_value(table[0])}", f"table={partition_value(table[1])}")
    found: list[str] = []
    for run in sorted(_dirs(lake / "changes", "run=")):
        for db in _dirs(run, "db="):
            if want is not None and db.name != want[0]:
                continue
            for tab in _dirs(db, "table="):
                if want is not None and tab.name != want[1]:
                    continue
                for date in _dirs(tab, "date="):
                    value = date.name[len("date="):]
                    if value == DEFAULT_PARTITION:
                        if first is not None or last is not None:
                            continue
                    elif (first is not None and value < first) or (last is not None and value > last):
                        continue
                    found += sorted(str(f) for f in date.iterdir()
                                    if f.name.endswith(".parquet") and not f.name.startswith("."))
    return found


def _dirs(parent: Path, prefix: str) -> list[Path]:
    if not parent.is_dir():
        return []
    return [p for p in parent.iterdir() if p.name.startswith(prefix) and p.is_dir()]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Lake:
    """A DuckDB connection whose view ``changes`` holds the rows of a lake that can match."""

    def __init__(self, path: Path, threads: int | None = None):
        try:
            import duckdb
        except ImportError:
            raise UsageError("binlog history needs DuckDB (the [duckdb] extra)",
                             hint="pip install 'binlog-temporal[duckdb]'") from None
        if not (path / "changes").is_dir():
            raise UsageError(f"{path}: no changes/ here (give the directory binlog ingest --to wrote)")
        if any(c in str(path) for c in "*?[]{}"):
            raise UsageError(f"{path}: DuckDB would read the path as a pattern; give one without * ? [ ] {{ }}")
        self.path = path
        self.delta = (path / "changes" / "_delta_log").is_dir()
        self.con = duckdb.connect()
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")

    def bind(self, table: tuple[str, str] | None, days: tuple[str | None, str | None]) -> bool:
        """The view ``changes``: the rows of ``table`` on ``days``; False when no file can
        hold one."""
        if self.delta:
            self._bind_delta(table, days)
            return True
        files = parquet_files(self.path, table, days)
        if not files:
            return False
        self.con.execute("CREATE TEMP VIEW changes AS SELECT * FROM read_parquet(["
                         + ", ".join(_literal(f) for f in files) + "], hive_partitioning = true, "
                         f"union_by_name = true, hive_types = {_HIVE_TYPES})")
        return True

    def _bind_delta(self, table, days) -> None:
        try:
            from deltalake import DeltaTable
        except ImportError:
            raise UsageError(f"{self.path} is a Delta lake: reading it needs deltalake (the [delta] extra)",
                             hint="pip install 'binlog-temporal[delta]'") from None
        import pyarrow.dataset as ds

        dataset = DeltaTable(str(self.path / "changes")).to_pyarrow_dataset()
        tests = [] if table is None else [ds.field("db") == table[0], ds.field("table") == table[1]]
        if days[0] is not None:
            tests.append(ds.field("date") >= days[0])
        if days[1] is not None:
            tests.append(ds.field("date") <= days[1])
        for test in tests:
            dataset = dataset.filter(test)
        self.con.register("changes", dataset)

    def records(self, where: str, params: list, extra: tuple[str, ...] = ()) -> Iterator[tuple]:
        """The rows of ``changes`` matching ``where``, in binlog order: FIELDS (``ts`` in
        microseconds; ``db``, ``table`` from the directory names, which DuckDB unescapes
        as Spark does), then ``extra``'s values."""
        select = ", ".join((_SELECT, *extra))
        cursor = self.con.execute(f'SELECT {select} FROM changes WHERE {where} ORDER BY run, file, pos, "row"',
                                  params)
        while chunk := cursor.fetchmany(4096):
            yield from chunk


def key_columns(key: list[str]) -> list[tuple[str, str]]:
    """--key COL=VALUE options as (column, value)."""
    out = []
    for item in key:
        column, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--key {item!r}: give it as COLUMN=VALUE (the value as the JSON images "
                             "hold it: 4711, 2024-05-01 09:14:03, abc)")
        out.append((column, value))
    return out


def row_history(lake: Lake, key: list[tuple[str, str]], where: str, params: list) -> Iterator[tuple]:
    """The changes of the row whose key columns hold ``key``: each change whose before or
    after image has those values; once an update changed the key, also the changes under
    its new values after that update (the changes of the key are all there: a row that
    takes the old key later is in the history too)."""
    pointers = [pointer(column) for column, _ in key]
    # the key values of both images of each record, after FIELDS
    extra = tuple(f"json_extract_string({image}, ?)" for image in ("before", "after") for _ in key)
    extra_args = [p for _ in ("before", "after") for p in pointers]
    renamed = ("(op = 'update' AND (" + " OR ".join("json_extract_string(before, ?) IS DISTINCT FROM "
                                                    "json_extract_string(after, ?)" for _ in key) + "))")
    renamed_args = [p for p in pointers for _ in (0, 1)]
    wanted = {tuple(value for _, value in key)}
    for _ in range(_MAX_KEY_CHANGES):
        tests, args = [renamed], list(renamed_args)
        for values in sorted(wanted):
            for image in ("before", "after"):
                tests.append("(" + " AND ".join(f"json_extract_string({image}, ?) = ?" for _ in key) + ")")
                args += [x for p, value in zip(pointers, values, strict=True) for x in (p, value)]
        found = lake.records(f"({where}) AND op IN ('insert', 'update', 'delete') AND ({' OR '.join(tests)})",
                             extra_args + params + args, extra)
        rows, had = follow(list(found), len(key), {tuple(v for _, v in key)})
        if had <= wanted:
            yield from rows
            return
        wanted |= had
    raise UsageError(f"the row's key changed more than {_MAX_KEY_CHANGES} times; narrow the range with "
                     "--start-datetime/--stop-datetime")


def follow(found: list[tuple], width: int, start: set) -> tuple[list[tuple], set]:
    """The records of ``found`` (binlog order; each ending with the key values of its
    before image, then of its after image) with a key of ``start`` in an image, or the
    new key of an update that changed such a key, from that update on; the keys seen."""
    keys = set(start)
    out = []
    op_at = FIELDS.index("op")
    for record in found:
        tail = record[len(FIELDS):]
        old = None if all(v is None for v in tail[:width]) else tuple(tail[:width])
        new = None if all(v is None for v in tail[width:]) else tuple(tail[width:])
        if old not in keys and new not in keys:
            continue
        out.append(record[:len(FIELDS)])
        if record[op_at] == "update" and new is not None:
            keys.add(new)
    return out, keys


def query(path: str, *, table: str | None = None, key: tuple[str, ...] | list[str] = (), gtid: str | None = None,
          start: int | None = None, stop: int | None = None, threads: int | None = None) -> Iterator[tuple]:
    """The records asked for (module docstring): FIELDS per record."""
    if key and not table:
        raise UsageError("--key needs --table DB.TABLE (the table of the row)")
    name = None
    if table is not None:
        db, dot, tab = table.partition(".")
        if not dot:
            raise UsageError(f"--table {table!r}: give it as DB.TABLE")
        name = (db, tab)
    lake = Lake(Path(path), threads)
    if not lake.bind(name, utc_days(start, stop)):
        return
    where: list[str] = ["TRUE"]          # (the table: in the files or rows bound)
    params: list = []
    if gtid is not None:
        where.append("gtid = ?")
        params.append(gtid)
    if start is not None:
        where.append("ts >= to_timestamp(?)")
        params.append(start)
    if stop is not None:
        where.append("ts < to_timestamp(?)")
        params.append(stop)
    sql = " AND ".join(where)
    if key:
        yield from row_history(lake, key_columns(list(key)), sql, params)
    else:
        yield from (row[:len(FIELDS)] for row in lake.records(sql, params))


def json_line(record: tuple) -> bytes:
    """A record as binlog dump --format json prints it (the images' JSON text as it is)."""
    import orjson

    out = []
    for name, value in zip(FIELDS, record, strict=True):
        if value is None:
            text = b"null"
        elif name in ("before", "after"):
            text = value.encode()
        elif name == "ts":
            text = orjson.dumps(_utc(value))
        elif name == "xid":
            text = str(int(value)).encode()
        else:
            text = orjson.dumps(value)
        out.append(b'"' + name.encode() + b'":' + text)
    return b"{" + b",".join(out) + b"}"


def _utc(micros: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(micros // 1_000_000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
