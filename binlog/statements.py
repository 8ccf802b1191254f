"""What a QUERY event's statement is, from its text: what kind (``classify_query``) and
whether a table filter keeps it (``statement_kept``).  Text only, no I/O: the reader,
the replay and the outputs share it."""
from __future__ import annotations

import re

_FIRST_WORDS = re.compile(r"^\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)(?:\s+([A-Za-z]+))?(?:\s+([A-Za-z]+))?", re.S)

#: Statement kinds (``classify_query``).
DDL, DML, ADMIN, CONTROL = "ddl", "dml", "admin", "control"

_DDL_OBJECTS = {"TABLE", "DATABASE", "SCHEMA", "INDEX", "VIEW", "TRIGGER", "PROCEDURE",
                "FUNCTION", "EVENT", "SEQUENCE", "PACKAGE"}
_DML_WORDS = {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "CALL", "DO", "SELECT",
              "WITH", "HANDLER", "EXECUTE"}


def classify_query(query: str) -> str:
    """``ddl`` (schema changes a replay must repeat: CREATE/ALTER/DROP/RENAME/TRUNCATE of
    tables, databases, indexes, views, routines...), ``dml`` (a statement-based data
    change), ``control`` (BEGIN, COMMIT, ROLLBACK, XA, SAVEPOINT) or ``admin``
    (GRANT, FLUSH, ANALYZE, CREATE USER...: not data, not replayed)."""
    m = _FIRST_WORDS.match(query)
    if not m:
        return ADMIN
    w1 = (m.group(1) or "").upper()
    w2 = (m.group(2) or "").upper()
    w3 = (m.group(3) or "").upper()
    if w1 in ("BEGIN", "COMMIT", "ROLLBACK", "XA", "SAVEPOINT", "RELEASE"):
        return CONTROL
    if w1 == "TRUNCATE" or w1 == "RENAME" and w2 == "TABLE":
        return DDL
    if w1 in ("CREATE", "ALTER", "DROP"):
        # CREATE [OR REPLACE] [TEMPORARY|UNIQUE|FULLTEXT|SPATIAL|DEFINER=...] object
        words = [w2, w3]
        if any(w in _DDL_OBJECTS for w in words):
            return DDL
        if w2 in ("OR", "UNIQUE", "FULLTEXT", "SPATIAL", "ALGORITHM", "DEFINER", "SQL",
                  "ONLINE", "IGNORE", "TEMPORARY", "AGGREGATE"):
            # CREATE OR REPLACE TABLE / CREATE DEFINER=`u`@`h` TRIGGER ...: look further
            rest = query[m.end(1):].upper()
            if re.search(r"\b(TABLE|VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT|SEQUENCE|INDEX|PACKAGE)\b", rest):
                return DDL
        return ADMIN            # CREATE USER / ROLE / SERVER, DROP USER ...
    if w1 in _DML_WORDS:
        return DML
    return ADMIN



_NAME = r"(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(`(?:[^`]|``)+`|[\w$]+)(?:\.(`(?:[^`]|``)+`|[\w$]+))?"
_DDL_TABLE = re.compile(r"\b(?:TABLE|INTO|ON|TO)\s+" + _NAME, re.I)
# DML names its tables after these too: UPDATE t, DELETE FROM t, ... JOIN t
_DML_TABLE = re.compile(r"\b(?:TABLE|INTO|UPDATE|FROM|JOIN)\s+" + _NAME, re.I)


def statement_kept(query: str, db: str, table_filter, *, dml: bool = False) -> bool:
    """Whether a statement concerns a table the filter keeps (database statements: a
    database the filter can keep).  Without an active filter every statement is kept;
    a statement naming no table the patterns below find is kept (when in doubt, keep:
    nothing is dropped silently)."""
    if table_filter is None or not table_filter.active:
        return True
    q = query
    m = re.search(r"\b(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?`?([^`\s;]+)`?", q, re.I)
    if m and not re.search(r"\bTABLE\b", q[:m.start()], re.I):
        # CREATE DATABASE of a kept table's database: the target needs it (item 8)
        return table_filter.keeps_database(m.group(1))
    found = False
    for m in (_DML_TABLE if dml else _DDL_TABLE).finditer(q):
        a, b = m.group(1).strip("`"), (m.group(2) or "").strip("`")
        table_db, table = (a, b) if b else (db, a)
        found = True
        if table_db and table_filter.keeps(table_db, table):
            return True
    return not found
