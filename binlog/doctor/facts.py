"""What ``binlog doctor`` learns from a server, as plain data: read once, checked later.

Every read is a SELECT or SHOW on a connection the caller opened (``read_source``,
``read_target``); nothing is changed on the server.  What the user is not allowed to
read is recorded as not known (``None`` and the server's reason), never guessed: the
privilege check then says what is missing.

Where each fact comes from:

- variables: ``SHOW GLOBAL VARIABLES`` (a missing one: the server has no such variable,
  e.g. ``mysql56_temporal_format`` before MariaDB 10.1.2);
- binlogs: ``SHOW BINARY LOGS`` (needs BINLOG MONITOR / REPLICATION CLIENT);
- privileges: information_schema USER_PRIVILEGES, SCHEMA_PRIVILEGES and
  TABLE_PRIVILEGES of ``CURRENT_USER()``, and the ``GRANT ... ON ... TO`` lines of ``SHOW
  GRANTS`` (which alone include the enabled roles' grants; MariaDB sql_acl.cc
  mysql_show_grants).  Only the privilege list and the object are taken from a line,
  never the rest: the user's line holds the password hash;
- tables: information_schema TABLES, COLUMNS (COLUMN_TYPE carries the ``/* mariadb-5.3 */``
  marker of a legacy temporal column on MariaDB 10.5.1+, sql/field.cc
  Field::sql_type_comment), STATISTICS, TRIGGERS, REFERENTIAL_CONSTRAINTS; only the
  tables the user can see.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schema_store.live import SYSTEM_DATABASES

from ..errors import ServerError

#: The server variables the checks read (absent ones are simply not in ``variables``).
VARIABLES = ("log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata",
             "binlog_checksum", "log_bin_compress", "encrypt_binlog", "server_id",
             "gtid_binlog_pos", "gtid_current_pos", "gtid_strict_mode", "gtid_domain_id",
             "gtid_mode", "enforce_gtid_consistency", "expire_logs_days",
             "binlog_expire_logs_seconds", "mysql56_temporal_format", "version",
             "version_comment", "lower_case_table_names")

# Server errors that mean "not allowed" (include/mysqld_error.h): access denied to a
# command, a database, a table, a specific privilege.
_DENIED = {1044, 1045, 1142, 1143, 1227, 1370}

LEGACY_MARKER = "/* mariadb-5.3 */"


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str              # DATA_TYPE: "datetime" (it has no legacy marker)
    column_type: str            # COLUMN_TYPE: "datetime(6) /* mariadb-5.3 */"
    precision: int | None       # DATETIME_PRECISION (temporal N)
    nullable: bool
    charset: str | None
    collation: str | None
    extra: str                  # EXTRA: "STORED GENERATED", "VIRTUAL GENERATED", ...

    @property
    def legacy_marked(self) -> bool:
        return LEGACY_MARKER in self.column_type

    @property
    def stored_generated(self) -> bool:
        return "STORED GENERATED" in self.extra.upper() or "PERSISTENT" in self.extra.upper()


@dataclass(frozen=True)
class Index:
    name: str
    unique: bool
    kind: str                   # INDEX_TYPE: BTREE, HASH, FULLTEXT, SPATIAL
    columns: tuple[str, ...]


@dataclass
class Table:
    db: str
    name: str
    engine: str | None
    collation: str | None
    data_length: int
    index_length: int
    rows: int
    columns: list[Column] = field(default_factory=list)
    indexes: list[Index] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    cascades: list[str] = field(default_factory=list)   # "fk_name ON DELETE CASCADE"

    @property
    def qualified(self) -> str:
        return f"{self.db}.{self.name}"

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass
class Privileges:
    user: str                                   # CURRENT_USER(): 'u'@'%'
    global_: set[str] = field(default_factory=set)
    schema: dict[str, set[str]] = field(default_factory=dict)
    table: dict[tuple[str, str], set[str]] = field(default_factory=dict)

    def has(self, privilege: str, db: str | None = None, table: str | None = None) -> bool:
        """Granted globally, on the database or on the table (ALL PRIVILEGES included)."""
        levels = [self.global_]
        if db is not None:
            levels.append(self.schema.get(db, set()))
            if table is not None:
                levels.append(self.table.get((db, table), set()))
        return any(privilege in level or "ALL PRIVILEGES" in level for level in levels)


@dataclass
class SourceFacts:
    address: str                     # host:port or socket (never the DSN: it has the password)
    version: str
    variables: dict[str, str]
    now: int                         # the server's UNIX_TIMESTAMP()
    privileges: Privileges
    tables: list[Table]
    binlogs: list[tuple[str, int]] | None   # SHOW BINARY LOGS; None: not allowed
    binlogs_denied: str | None = None        # the server's reason

    @property
    def mariadb(self) -> bool:
        return "mariadb" in self.version.lower()

    def version_tuple(self) -> tuple[int, ...]:
        return version_numbers(self.version)


@dataclass
class TargetFacts:
    address: str | None              # None: --target-kind without --target
    version: str | None
    tidb: bool                       # VERSION() says TiDB, or --target-kind tidb
    collations: set[str] | None      # None: no --target (a kind only)
    charsets: set[str] | None


def version_numbers(version: str) -> tuple[int, ...]:
    """``10.11.19-MariaDB-0+deb12u1-log`` -> (10, 11, 19); MySQL-style 5.5.5- prefixes
    (old MariaDB servers in the greeting) are not in VERSION()."""
    head = version.split("-")[0]
    return tuple(int(p) for p in head.split(".") if p.isdigit())


def _text(value: Any) -> Any:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, (bytes, bytearray)) else value


def rows(conn, sql: str, args=None, *, denied_ok: bool = False, where: str = "the source"):
    """The rows of one read (``None`` when ``denied_ok`` and the server says the user
    may not: the reason is then in the second item)."""
    import pymysql

    try:
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return [tuple(_text(v) for v in r) for r in cur.fetchall()], None
    except pymysql.err.MySQLError as exc:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        text = str(exc.args[-1]) if exc.args else str(exc)
        if denied_ok and code in _DENIED:
            return None, f"{text} (error {code})"
        raise ServerError(f"{where}: {sql.split()[0]} ... failed: {text}", code=code) from None


def read_source(conn, address: str, *, databases: list[str] | None = None) -> SourceFacts:
    """Everything the checks need from the source, through an open connection."""
    (version, now), = rows(conn, "SELECT VERSION(), UNIX_TIMESTAMP()")[0] or [("", 0)]
    variables = read_variables(conn)
    binlogs, denied = rows(conn, "SHOW BINARY LOGS", denied_ok=True)
    return SourceFacts(address=address, version=str(version), variables=variables,
                       now=int(now), privileges=read_privileges(conn),
                       tables=read_tables(conn, databases),
                       binlogs=[(str(r[0]), int(r[1])) for r in binlogs] if binlogs is not None else None,
                       binlogs_denied=denied)


def read_variables(conn, where: str = "the source") -> dict[str, str]:
    marks = ", ".join(["%s"] * len(VARIABLES))
    found, _ = rows(conn, f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({marks})", VARIABLES,
                    where=where)
    return {str(name).lower(): "" if value is None else str(value) for name, value in found or ()}


def read_privileges(conn) -> Privileges:
    (user,), = rows(conn, "SELECT CURRENT_USER()")[0] or [("",)]
    name, _, host = str(user).rpartition("@")
    grantee = f"'{name}'@'{host}'"
    privs = Privileges(user=str(user))
    for (priv,) in rows(conn, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES "
                              "WHERE GRANTEE = %s", (grantee,))[0] or ():
        privs.global_.add(str(priv).upper())
    for db, priv in rows(conn, "SELECT TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema."
                               "SCHEMA_PRIVILEGES WHERE GRANTEE = %s", (grantee,))[0] or ():
        privs.schema.setdefault(str(db), set()).add(str(priv).upper())
    for db, table, priv in rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE FROM "
                                      "information_schema.TABLE_PRIVILEGES WHERE GRANTEE = %s",
                                (grantee,))[0] or ():
        privs.table.setdefault((str(db), str(table)), set()).add(str(priv).upper())
    for (line,) in rows(conn, "SHOW GRANTS")[0] or ():
        add_grant(privs, str(line))
    return privs


# GRANT <privileges> ON <db>.<table> TO ...: the privileges and the object only.
_GRANT = re.compile(r"GRANT (.+?) ON ((?:`(?:[^`]|``)*`|\*)(?:\.(?:`(?:[^`]|``)*`|\*))?) TO ", re.S)
_NAME = re.compile(r"`((?:[^`]|``)*)`|\*")


def add_grant(privs: Privileges, line: str) -> None:
    """Add one ``SHOW GRANTS`` line's privileges (column-level ones, ``SELECT (a)``,
    grant no table-wide privilege and are left out; routine grants have no match)."""
    m = _GRANT.match(line)
    if m is None:
        return
    names = [n.group(1).replace("``", "`") if n.group(1) is not None else "*"
             for n in _NAME.finditer(m.group(2))]
    granted = {p.strip().upper() for p in re.sub(r"\([^)]*\)", "\0", m.group(1)).split(",")
               if "\0" not in p}
    db, table = (names + ["*"])[:2]
    if db == "*":
        privs.global_ |= granted
    elif table == "*":
        privs.schema.setdefault(db, set()).update(granted)
    else:
        privs.table.setdefault((db, table), set()).update(granted)


def _scope(databases: list[str] | None, column: str = "TABLE_SCHEMA") -> tuple[str, tuple]:
    if databases:
        return f"{column} IN ({', '.join(['%s'] * len(databases))})", tuple(databases)
    return (f"{column} NOT IN ({', '.join(['%s'] * len(SYSTEM_DATABASES))})", SYSTEM_DATABASES)


def read_tables(conn, databases: list[str] | None = None) -> list[Table]:
    where, args = _scope(databases)
    found, _ = rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, TABLE_COLLATION, DATA_LENGTH, "
                          "INDEX_LENGTH, TABLE_ROWS FROM information_schema.TABLES "
                          f"WHERE {where} AND TABLE_TYPE = 'BASE TABLE' "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME", args)
    tables = {(str(r[0]), str(r[1])): Table(str(r[0]), str(r[1]), r[2], r[3], int(r[4] or 0),
                                            int(r[5] or 0), int(r[6] or 0)) for r in found or ()}
    _add_columns(conn, tables, where, args)
    _add_indexes(conn, tables, where, args)
    _add_triggers(conn, tables, databases)
    _add_cascades(conn, tables, databases)
    return list(tables.values())


def _add_columns(conn, tables: dict, where: str, args: tuple) -> None:
    found, _ = rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
                          "DATETIME_PRECISION, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME, "
                          f"EXTRA FROM information_schema.COLUMNS WHERE {where} "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", args)
    for db, name, col, data_type, col_type, prec, nullable, cs, coll, extra in found or ():
        table = tables.get((db, name))
        if table is not None:
            table.columns.append(Column(str(col), str(data_type).lower(), str(col_type),
                                        None if prec is None else int(prec), nullable == "YES",
                                        cs, coll, str(extra or "")))


def _add_indexes(conn, tables: dict, where: str, args: tuple) -> None:
    found, _ = rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, INDEX_TYPE, "
                          f"COLUMN_NAME FROM information_schema.STATISTICS WHERE {where} "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", args)
    grouped: dict[tuple, tuple[bool, str, list[str]]] = {}
    for db, name, index, non_unique, kind, col in found or ():
        entry = grouped.setdefault((db, name, index), (int(non_unique) == 0, str(kind), []))
        entry[2].append(str(col))
    for (db, name, index), (unique, kind, cols) in grouped.items():
        table = tables.get((db, name))
        if table is not None:
            table.indexes.append(Index(str(index), unique, kind.upper(), tuple(cols)))


def _add_triggers(conn, tables: dict, databases: list[str] | None) -> None:
    where, args = _scope(databases, "EVENT_OBJECT_SCHEMA")
    found, _ = rows(conn, "SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, TRIGGER_NAME FROM "
                          f"information_schema.TRIGGERS WHERE {where} ORDER BY TRIGGER_NAME", args)
    for db, name, trigger in found or ():
        if (db, name) in tables:
            tables[db, name].triggers.append(str(trigger))


def _add_cascades(conn, tables: dict, databases: list[str] | None) -> None:
    where, args = _scope(databases, "CONSTRAINT_SCHEMA")
    found, _ = rows(conn, "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, "
                          "DELETE_RULE, REFERENCED_TABLE_NAME FROM information_schema."
                          f"REFERENTIAL_CONSTRAINTS WHERE {where}", args)
    for db, name, constraint, on_update, on_delete, parent in found or ():
        rules = [f"ON {what} {rule}" for what, rule in (("DELETE", on_delete), ("UPDATE", on_update))
                 if str(rule).upper() in ("CASCADE", "SET NULL", "SET DEFAULT")]
        if rules and (db, name) in tables:
            tables[db, name].cascades.append(f"{constraint} -> {parent} {' '.join(rules)}")


def read_target(conn, address: str, *, kind: str | None) -> TargetFacts:
    """The target's version and the collations and charsets it has."""
    (version,), = rows(conn, "SELECT VERSION()", where="the target")[0] or [("",)]
    found, _ = rows(conn, "SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM "
                          "information_schema.COLLATIONS", where="the target")
    collations = {str(r[0]).lower() for r in found or ()}
    charsets = {str(r[1]).lower() for r in found or ()}
    return TargetFacts(address, str(version), kind == "tidb" or "tidb" in str(version).lower(),
                       collations, charsets)


def connect(dsn: str, *, what: str):
    """A read-only-minded PyMySQL connection for a DSN (the password stays in PyMySQL);
    ServerError naming only host:port when it fails, UsageError for a bad DSN."""
    import pymysql

    from ..user_values import dsn_address, parse_dsn

    kw = parse_dsn(dsn)
    kw.pop("database", None)
    kw.setdefault("connect_timeout", 10)
    address = dsn_address(kw)
    try:
        return pymysql.connect(charset="utf8mb4", autocommit=True, **kw), address
    except pymysql.err.MySQLError as exc:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        text = str(exc.args[-1]) if exc.args else str(exc)
        raise ServerError(f"cannot connect to {what} ({address}): {text}", code=code) from None
