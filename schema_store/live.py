"""Snapshot table schemas from a live server through PyMySQL (``--schema-from DSN``).

DSN: ``mysql://user:pass@host:port/db`` or ``mariadb://...``; ``?unix_socket=/path`` to
connect over a socket.  Without a database in the DSN every non-system database is read.

Everything comes from INFORMATION_SCHEMA: COLUMNS (COLUMN_TYPE is parsed for ``unsigned``,
ENUM/SET labels, ``COMPRESSED`` and, on MariaDB 10.5.1+, the ``/* mariadb-5.3 */`` legacy
marker), STATISTICS (the primary key), TABLES (table collation, system versioning),
SCHEMATA (database defaults).  On servers older than MariaDB 10.5.1 (and on MySQL) the
marker is never printed, so ``legacy`` is None there.
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol

from binlog import sql_connection, user_values
from binlog.errors import ServerError, UsageError

from .ddl import SYSTEM_VERSIONING_COLUMNS, parse_column_type
from .errors import SchemaError
from .model import TEMPORAL_FSP_TYPES, ColumnSchema, TableSchema, charset_of_collation


class VersionStore(Protocol):
    """What ``import_live`` records into (a ``schema_store.store.SchemaStore``)."""

    def set_database(self, db: str, charset: str | None, collation: str | None,
                     position: tuple[str, int] | None = None, *, source: str,
                     dropped: bool = False) -> None: ...

    def add_version(self, schema: TableSchema, position: tuple[str, int] | None = None, *,
                    source: str) -> int | None: ...

SYSTEM_DATABASES = ("information_schema", "mysql", "performance_schema", "sys")


class BadDsnError(SchemaError, UsageError):
    """A DSN that is not ``mysql://user:pass@host:port/db`` (exit code 2)."""


class SchemaServerError(SchemaError, ServerError):
    """The live schema source could not be reached or refused (exit code 5)."""


def parse_dsn(dsn: str) -> dict:
    """DSN -> keyword arguments for ``pymysql.connect`` (plus ``'database'``); a
    malformed one raises BadDsnError (its message never shows the password).  The one
    parser is ``binlog.user_values.parse_dsn``."""
    try:
        return user_values.parse_dsn(dsn)
    except UsageError as exc:
        raise BadDsnError(exc.message) from None


redact_dsn = user_values.redact_dsn


def _server_prints_marker(version: str) -> bool | None:
    """True for MariaDB >= 10.5.1 (legacy marker in COLUMN_TYPE), else None (unknown)."""
    if "mariadb" not in version.lower():
        return None
    head = version.split("-")[0]
    nums = tuple(int(p) for p in head.split(".") if p.isdigit())
    return True if nums >= (10, 5, 1) else None


#: The information_schema.COLUMNS fields ``read_columns`` gives, in this order.
COLUMN_FIELDS = ("TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "COLUMN_TYPE",
                 "IS_NULLABLE", "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION",
                 "CHARACTER_SET_NAME", "COLLATION_NAME", "CHARACTER_MAXIMUM_LENGTH", "EXTRA")


def table_condition(database: str | None = None, table: str | None = None,
                    column: str = "TABLE_SCHEMA") -> tuple[str, tuple]:
    """An information_schema WHERE clause and its arguments: one database (and table), or
    every database but the system ones."""
    if database is not None:
        where, args = [f"{column} = %s"], [database]
    else:
        where = [f"{column} NOT IN (" + ", ".join(["%s"] * len(SYSTEM_DATABASES)) + ")"]
        args = list(SYSTEM_DATABASES)
    if table is not None:
        where.append("TABLE_NAME = %s")
        args.append(table)
    return " AND ".join(where), tuple(args)


def read_columns(cur: Any, where: str, args: Iterable) -> list[tuple]:
    """The columns of the tables ``where`` selects (rows of COLUMN_FIELDS, in table and
    column order): the one read of information_schema.COLUMNS, for the schema snapshot
    and for the replay's keys (binlog.replay.keys)."""
    cur.execute(f"SELECT {', '.join(COLUMN_FIELDS)} FROM information_schema.COLUMNS "
                f"WHERE {where} ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", args)
    return [tuple(_text(v) for v in row) for row in cur.fetchall()]


def read_unique_keys(cur: Any, where: str,
                     args: Iterable) -> dict[tuple[str, str], dict[str, tuple[str, ...]]]:
    """(db, table) -> {index name: its columns in order} of every unique index (the
    primary key is ``"PRIMARY"``) of the tables ``where`` selects."""
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME "
                f"FROM information_schema.STATISTICS WHERE {where} AND NON_UNIQUE = 0 "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", args)
    keys: dict[tuple[str, str], dict[str, list[str]]] = {}
    for db, table, index, column in cur.fetchall():
        keys.setdefault((_text(db), _text(table)), {}).setdefault(_text(index), []).append(_text(column))
    return {t: {name: tuple(cols) for name, cols in found.items()} for t, found in keys.items()}


def _text(value):
    return value.decode("utf-8", "surrogateescape") if isinstance(value, (bytes, bytearray)) else value


def _connect(dsn: str) -> tuple[Any, str, str]:
    """A connection for a DSN, the DSN's database and the host label of messages."""
    import pymysql

    kw = parse_dsn(dsn)
    database = kw.pop("database")
    host = kw.get("host") or "localhost"
    try:
        return sql_connection.connect(kw, charset="utf8mb4"), database, host
    except pymysql.err.MySQLError as exc:
        raise SchemaServerError(f"cannot connect to {host}: {exc}", source=f"live:{host}") from exc


def server_lower_case_table_names(dsn: str) -> int:
    """The server's @@lower_case_table_names: how it compares (and logs) table names."""
    conn, _, _ = _connect(dsn)
    try:
        cur = conn.cursor()
        cur.execute("SELECT @@lower_case_table_names")
        return int(cur.fetchone()[0])
    finally:
        conn.close()


def snapshot(dsn: str) -> tuple[list[TableSchema], dict[str, tuple[str | None, str | None]], str]:
    """Read all tables: (schemas, database defaults, host label)."""
    import pymysql

    conn, database, host = _connect(dsn)
    try:
        cur = conn.cursor()
        cur.execute("SELECT VERSION()")
        markers = _server_prints_marker(cur.fetchone()[0])
        where, args = table_condition(database or None)
        swhere, _ = table_condition(database or None, column="SCHEMA_NAME")
        cur.execute("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "
                    f"FROM information_schema.SCHEMATA WHERE {swhere}", args)
        databases = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
        if database and database not in databases:
            # A snapshot of nothing would leave every table without a schema, silently.
            raise UsageError(f"--schema-from: database {database!r} does not exist on {host}",
                             hint="name an existing database in the DSN, or none to read them all")
        cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_COLLATION "
                    f"FROM information_schema.TABLES WHERE {where}", args)
        tables = {(r[0], r[1]): (r[2], r[3]) for r in cur.fetchall()
                  if r[2] in ("BASE TABLE", "SYSTEM VERSIONED", "SEQUENCE")}
        columns: dict[tuple[str, str], list] = {}
        extras: dict[tuple[str, str], list[str]] = {}
        for row in read_columns(cur, where, args):
            key = (row[0], row[1])
            if key not in tables:
                continue
            columns.setdefault(key, []).append(_column(row, markers, host))
            extras.setdefault(key, []).append((row[12] or "").upper())
        pks = {key: found["PRIMARY"] for key, found in read_unique_keys(cur, where, args).items()
               if "PRIMARY" in found}
    except pymysql.err.MySQLError as exc:
        raise SchemaServerError(f"reading information_schema on {host} failed: {exc}",
                                source=f"live:{host}") from exc
    finally:
        conn.close()

    schemas = []
    for key in sorted(columns):
        ttype, tcoll = tables[key]
        cols = columns[key]
        if ttype == "SYSTEM VERSIONED" and not any("ROW START" in e for e in extras[key]):
            # implicit row_start/row_end: hidden from COLUMNS but present in row images
            cols = cols + list(SYSTEM_VERSIONING_COLUMNS)
        schemas.append(TableSchema(
            db=key[0], table=key[1], columns=tuple(cols), primary_key=tuple(pks.get(key, ())),
            source=f"live:{host}", charset=charset_of_collation(tcoll) if tcoll else None,
            collation=tcoll))
    return schemas, databases, host


def _column(row, markers: bool | None, host: str) -> ColumnSchema:
    (db, table, name, data_type, column_type, is_nullable, nprec, nscale, dtprec, cs, coll,
     maxlen, _extra) = row
    try:
        parsed = parse_column_type(column_type, name)
    except SchemaError as exc:
        exc.add_context(table=f"{db}.{table}", column=name, source=f"live:{host}")
        raise
    data_type = data_type.lower()
    legacy = None
    if data_type in TEMPORAL_FSP_TYPES and markers:
        legacy = bool(parsed.legacy)
    if data_type in ("char", "varchar", "binary", "varbinary"):
        length = int(maxlen) if maxlen is not None else None
    elif data_type == "bit":
        length = int(nprec) if nprec is not None else parsed.length
    else:
        length = None
    return ColumnSchema(
        name=name, data_type=data_type, unsigned=parsed.unsigned,
        nullable=(is_nullable == "YES"), length=length,
        numeric_precision=int(nprec) if nprec is not None else None,
        numeric_scale=int(nscale) if nscale is not None else None,
        datetime_precision=int(dtprec) if dtprec is not None and data_type in TEMPORAL_FSP_TYPES else None,
        legacy=legacy, charset=cs, collation=coll,
        enum_values=parsed.enum_values, set_values=parsed.set_values,
        compressed=parsed.compressed)


def import_live(store: VersionStore, dsn: str, *,
                position: tuple[str, int] | None = None) -> list[tuple[str, str]]:
    """Snapshot ``dsn`` into ``store`` as versions at ``position`` (None: baseline)."""
    schemas, databases, host = snapshot(dsn)
    source = f"live:{host}"
    for db, (cs, coll) in sorted(databases.items()):
        store.set_database(db, cs, coll, position, source=source)
    out = []
    for schema in schemas:
        store.add_version(schema, position, source=source)
        out.append((schema.db, schema.table))
    return out


__all__ = ["parse_dsn", "snapshot", "import_live", "SYSTEM_DATABASES", "COLUMN_FIELDS",
           "table_condition", "read_columns", "read_unique_keys"]
