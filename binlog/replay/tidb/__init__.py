"""What a TiDB target needs beyond what MariaDB and MySQL targets do, found by running
TiDB 8.5 (tests/binlog/replay/test_apply_tidb.py, a real tidb-server):

- its session: a row of up to 120 MiB (TiDB's default entry limit is 6 MiB,
  ``txn-entry-size-limit``; a larger row the source holds is refused, error 8025, unless the
  session raises ``tidb_txn_entry_size_limit``: pkg/config/config.go MaxTxnEntrySizeLimit);
- DDL that rebuilds a table and changes nothing TiDB holds (``ALTER TABLE t FORCE``, which
  ``binlog doctor`` advises on a legacy source): TiDB refuses it (error 8200), so it is not
  replayed there, with a warning;
- hints for the errors of what TiDB cannot take: syntax its parser lacks (GEOMETRY and SPATIAL,
  triggers, functions, events, MariaDB-only clauses: error 1064; procedures: 8108), character
  sets and collations (1115, 1273), values (a TIME beyond 838:59:59: 1292), transactions over
  ``txn-total-size-limit`` (8004);
- the source's session and collations as TiDB names them, or a stop where TiDB has no
  equivalent: ``collations`` (TiDB's list, ``--map-collation``), ``session``
  (statement-logged changes), ``ddl`` (the collations of replayed DDL made explicit).

TiDB says which it is in ``VERSION()`` (``8.0.11-TiDB-v8.5.4``, pkg/parser/mysql/const.go).
"""
from __future__ import annotations

import re

#: The session settings a TiDB target gets after output.sql.session.SESSION_SETUP.
SESSION_SETUP = ("SET SESSION tidb_txn_entry_size_limit = 125829120",)

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)(?:\s*\.\s*(?:`(?:[^`]|``)+`|[\w$]+))?"
_OPTION = r"(?:ALGORITHM|LOCK)\s*=?\s*\w+"
_REBUILD = re.compile(rf"^\s*ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\s+{_NAME}\s+"
                      rf"(?:{_OPTION}\s*,\s*)*FORCE(?:\s*,\s*{_OPTION})*\s*;?\s*$", re.I)


def is_tidb(version: str) -> bool:
    return "tidb" in version.lower()


def rebuild_only(query: str) -> bool:
    """``ALTER TABLE t FORCE`` (with ALGORITHM/LOCK options at most): a table rebuild."""
    return bool(_REBUILD.match(query))


#: Hints for the errors of a DDL statement TiDB refuses, by error code.
_DDL_HINTS = {
    1064: "TiDB's parser lacks this syntax (GEOMETRY and SPATIAL, triggers, functions, events, "
          "MariaDB-only clauses such as CREATE OR REPLACE, INVISIBLE, PERSISTENT, WITH SYSTEM "
          "VERSIONING)",
    8108: "TiDB has no stored procedures",
    8200: "TiDB does not support this DDL",
    1115: "TiDB has only the character sets ascii, latin1, binary, utf8, utf8mb4 and gbk",
    1273: "TiDB (new collations, the default) has only the collations information_schema."
          "COLLATIONS lists there",
}


def ddl_hint(code: int | None) -> str | None:
    """What to do about a DDL statement TiDB refused (None: nothing TiDB-specific)."""
    reason = _DDL_HINTS.get(code) if code is not None else None
    if reason is None:
        return None
    return (f"{reason}: leave the table out (--exclude-table DB.TABLE), or create it on TiDB in "
            f"a form TiDB takes and run past this statement with --no-ddl; routines: without "
            f"--routines their definitions are not replayed (docs/replay.md, TiDB)")
