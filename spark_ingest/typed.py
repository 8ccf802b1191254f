"""Typed per-table output: one DataFrame per source table with real Spark types.

The column types come from the schema store (all versions of the table, so columns
added or dropped by ALTER TABLE are all there; a column whose type changed between
versions becomes STRING).  Values come from the change records' JSON images
(``records``), parsed once per row with ``from_json`` into string fields (a JSON string
as itself, any other value as its JSON text) and then ``try_cast`` - exact for DECIMAL,
microseconds kept for temporals:

========================================  =============================================
MariaDB / MySQL                            Spark
========================================  =============================================
TINYINT / SMALLINT / MEDIUMINT / INT       TINYINT, SMALLINT, INT, INT (UNSIGNED: next
BIGINT                                     wider); BIGINT (UNSIGNED: DECIMAL(20,0))
DECIMAL(p,s)                               DECIMAL(p,s) (p > 38: STRING)
FLOAT / DOUBLE                             FLOAT / DOUBLE
BIT(n)                                     BIGINT (n = 64: DECIMAL(20,0))
YEAR                                       SMALLINT
DATE                                       DATE (zero dates such as 0000-00-00: NULL)
DATETIME(N)                                TIMESTAMP_NTZ (wall-clock, microseconds)
TIMESTAMP(N)                               TIMESTAMP (an instant; values are read in the
                                           read's timezone option, default UTC)
TIME(N)                                    STRING (MySQL's text form, -838:59:59.99 ...)
CHAR / VARCHAR / TEXT / ENUM / SET / JSON  STRING
BINARY / VARBINARY / BLOB / GEOMETRY       BINARY (from the hex or base64 of the record)
========================================  =============================================

Columns: ``_file, _pos, _ts, _server_id, _gtid, _op`` (the record's fields), then the
table's columns holding the row *after* the change (for a delete: the deleted row), then
``_before``: a struct of the same typed columns with the row before an update (NULL for
inserts and deletes).  A column absent from a MINIMAL/NOBLOB row image is NULL.
Tables no schema describes get the keys seen in the records (``@1``... or names) as
STRING columns.
"""
from __future__ import annotations

import re

_INT_TYPES = {
    # data_type: (signed, unsigned)
    "tinyint": ("tinyint", "smallint"), "bool": ("tinyint", "smallint"),
    "boolean": ("tinyint", "smallint"), "smallint": ("smallint", "int"),
    "mediumint": ("int", "int"), "int": ("int", "bigint"), "integer": ("int", "bigint"),
    "bigint": ("bigint", "decimal(20,0)"),
}
_BINARY = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry",
           "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
           "geometrycollection", "geomcollection"}


def spark_type_sql(col) -> str:
    """Spark SQL type name of a schema_store.model.ColumnSchema."""
    t = (col.data_type or "").lower()
    if t in _INT_TYPES:
        return _INT_TYPES[t][1 if col.unsigned else 0]
    if t in ("decimal", "numeric", "dec", "fixed"):
        p = col.numeric_precision or 10
        s = col.numeric_scale or 0
        return f"decimal({p},{s})" if p <= 38 else "string"
    if t == "float":
        return "float"
    if t in ("double", "real", "double precision"):
        return "double"
    if t == "bit":
        return "bigint" if (col.length or 1) < 64 else "decimal(20,0)"
    if t == "year":
        return "smallint"
    if t == "date":
        return "date"
    if t == "datetime":
        return "timestamp_ntz"
    if t == "timestamp":
        return "timestamp"
    if t in _BINARY or (col.charset or "").lower() == "binary" or (col.collation or "").lower() == "binary":
        return "binary"
    return "string"


def table_columns(stores, db: str, table: str) -> list[tuple[str, str]] | None:
    """[(column name, Spark type)] over every version of the table in the store(s) (latest
    version's order first, then columns only older versions had); None if unknown."""
    if stores is None:
        return None
    if hasattr(stores, "history"):
        stores = [stores]
    elif isinstance(stores, dict):
        stores = list(stores.values())
    versions = [s for store in stores for _, _, s in store.history(db, table) if s is not None]
    if not versions:
        return None
    types: dict[str, set] = {}
    names: dict[str, str] = {}
    order: list[str] = []
    for schema in reversed(versions):
        for col in schema.columns:
            key = col.name.lower()
            if key not in names:
                names[key] = col.name
                order.append(key)
            types.setdefault(key, set()).add(spark_type_sql(col))
    return [(names[k], next(iter(types[k])) if len(types[k]) == 1 else "string") for k in order]


def _zone_suffix(timezone: str) -> str:
    return "Z" if timezone.upper() in ("UTC", "Z", "+00:00") else f" {timezone}"


def convert(text, spark_type: str, *, timezone: str = "UTC", binary_encoding: str = "hex"):
    """Column expression: the image value ``text`` (a Column of strings) as ``spark_type``."""
    from pyspark.sql import functions as F

    if spark_type == "string":
        return text
    if spark_type == "binary":
        return F.unhex(text) if binary_encoding == "hex" else F.try_to_binary(text, F.lit("base64"))
    if spark_type == "timestamp":
        return F.concat(text, F.lit(_zone_suffix(timezone))).try_cast("timestamp")
    return text.try_cast(spark_type)


_SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def image_key_order(key: str) -> tuple:
    """The place of a table's column named by an image key: ``@N`` (a column without a
    name) by its number, then names in code point order.  (ASCII digits only: ``str.isdigit``
    takes ``@²``, which ``int`` refuses; the key breaks ties such as ``@07`` and ``@7``.)"""
    digits = key[1:]
    if key.startswith("@") and digits.isascii() and digits.isdigit():
        return (0, int(digits), key)
    return (1, 0, key)


def image_keys(changes, db: str, table: str) -> list[str]:
    """Keys seen in the row changes of a table no schema describes (@N in column order;
    not the keys of its DDL records' JSON: sql, session, schema)."""
    from pyspark.sql import functions as F

    rows = (changes.where((F.col("db") == db) & (F.col("table") == table)
                          & F.col("op").isin("insert", "update", "delete"))
            .select(F.explode(F.json_object_keys(F.coalesce(F.col("after"), F.col("before")))).alias("k"))
            .distinct().collect())
    return sorted((r.k for r in rows), key=image_key_order)


def _string_struct(names):
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType([StructField(name, StringType()) for name in names])


def typed_table(changes, db: str, table: str, columns=None, *, store=None, timezone: str = "UTC",
                binary_encoding: str = "hex"):
    """The typed DataFrame of one table from a change-records DataFrame.  ``columns``:
    [(name, spark type)], else from ``store``, else every key seen as STRING."""
    from pyspark.sql import functions as F

    if columns is None:
        columns = table_columns(store, db, table)
    if columns is None:
        columns = [(k, "string") for k in image_keys(changes, db, table)]
    src = changes.where((F.col("db") == db) & (F.col("table") == table)
                        & F.col("op").isin("insert", "update", "delete"))
    op = F.col("op")
    # every column as a string field: from_json keeps a non-string JSON value as its text
    fields = _string_struct([name for name, _ in columns])
    before = F.from_json(F.col("before"), fields)
    image = F.when(op == "delete", before).otherwise(F.from_json(F.col("after"), fields))

    def conv(img, name, kind):
        return convert(img.getField(name), kind, timezone=timezone, binary_encoding=binary_encoding)

    out = [F.col("file").alias("_file"), F.col("pos").alias("_pos"), F.col("ts").alias("_ts"),
           F.col("server_id").alias("_server_id"), F.col("gtid").alias("_gtid"),
           op.alias("_op")]
    out += [conv(image, name, kind).alias(name) for name, kind in columns]
    if columns:
        out.append(F.when(op == "update", F.struct(*[conv(before, name, kind).alias(name)
                                                     for name, kind in columns]))
                   .alias("_before"))
    return src.select(*out)
