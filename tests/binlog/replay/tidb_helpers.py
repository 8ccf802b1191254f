"""What the tests with TiDB as the target share: the sources' server charset, a table's
rows as both servers print them, the collations both servers report."""
from __future__ import annotations

#: The sources' server charset: utf8mb4 (utf8mb4_general_ci, MariaDB's default collation of
#: utf8mb4), which TiDB has; a database created without a charset gets it on both sides.
#: (MariaDB's own default, latin1_swedish_ci, TiDB lacks: test_apply_tidb_sessions.py.)
UTF8MB4 = {"character_set_server": "utf8mb4", "collation_server": "utf8mb4_general_ci"}

#: Compared as HEX (a MariaDB prints invalid UTF-8 as '?', TiDB as NULL) and as doubles (a
#: MariaDB prints -2.25e-300, TiDB -0.000...0225): the same values either way.
_HEX = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit"}
_DOUBLE = {"float", "double"}


def table_rows(server, db: str, table: str):
    """(columns, rows) of a table as the server prints them, in UTC: ``CAST(col AS CHAR)``,
    binary strings and BIT as ``HEX(col)``, FLOAT and DOUBLE as ``CAST(col AS DOUBLE)``."""
    columns = server.query("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE "
                           "TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (db, table))
    server.execute("SET SESSION time_zone = '+00:00'")
    exprs = [f"HEX(`{c}`)" if t in _HEX else f"CAST(`{c}` AS DOUBLE)" if t in _DOUBLE
             else f"CAST(`{c}` AS CHAR)" for c, t in columns]
    return [c for c, _ in columns], server.query(f"SELECT {', '.join(exprs)} FROM `{db}`.`{table}` ORDER BY 1")


def _name(collation):
    """MariaDB 10.6+ says utf8mb3_general_ci where TiDB (and MariaDB before) says utf8_..."""
    return collation.replace("utf8mb3", "utf8") if collation else collation


def collations(server, databases) -> dict:
    """What the server says the databases, tables and text columns were created with:
    {"db": collation, "db.table": collation, "db.table.column": (charset, collation)}."""
    marks = ", ".join(["%s"] * len(databases))
    out: dict = {}
    for db, coll in server.query(f"SELECT SCHEMA_NAME, DEFAULT_COLLATION_NAME FROM "
                                 f"information_schema.SCHEMATA WHERE SCHEMA_NAME IN ({marks})", databases):
        out[db] = _name(coll)
    for db, table, coll in server.query(f"SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION FROM "
                                        f"information_schema.TABLES WHERE TABLE_SCHEMA IN ({marks})",
                                        databases):
        out[f"{db}.{table}"] = _name(coll)
    for db, table, column, charset, coll in server.query(
            f"SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM "
            f"information_schema.COLUMNS WHERE TABLE_SCHEMA IN ({marks}) AND COLLATION_NAME IS NOT NULL",
            databases):
        out[f"{db}.{table}.{column}"] = (_name(charset), _name(coll))
    return out
