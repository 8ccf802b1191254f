"""What a TiDB target cannot take, from TiDB's documented MySQL compatibility
(https://docs.pingcap.com/tidb/stable/mysql-compatibility, "Unsupported features"):
triggers, FULLTEXT syntax and indexes, SPATIAL (GIS/GEOMETRY) functions, data types and
indexes, character sets other than ascii, latin1, binary, utf8, utf8mb4 and gbk.
Generated columns: a row replay cannot assign them (TiDB computes them, as MySQL does,
https://docs.pingcap.com/tidb/stable/generated-columns), so one in a key makes the
target find rows by a value it computed itself.
"""
from __future__ import annotations

from ..replay.tidb import collations as tidb_collations
from .facts import SourceFacts, Table, TargetFacts
from .findings import BLOCKER, WARNING, Finding

DOC = "https://docs.pingcap.com/tidb/stable/mysql-compatibility"
CHARSETS = tidb_collations.CHARSETS      # ascii, latin1, binary, utf8 (utf8mb3), utf8mb4, gbk
SPATIAL_TYPES = frozenset({"geometry", "point", "linestring", "polygon", "multipoint",
                           "multilinestring", "multipolygon", "geometrycollection"})


def check(source: SourceFacts, target: TargetFacts | None) -> list[Finding]:
    if target is None or not target.tidb:
        return []
    found: list[Finding] = []
    for table in source.tables:
        found += check_table(table)
    return found


def check_table(t: Table) -> list[Finding]:
    found = []
    spatial = [c.name for c in t.columns if c.data_type in SPATIAL_TYPES]
    if spatial:
        found.append(_blocker(t, "tidb-spatial", f"spatial column(s) {', '.join(spatial)}: TiDB "
                              "has no GEOMETRY types", "store them as WKB in a BLOB column "
                              "(ST_AsBinary) or leave the table out", spatial))
    for kind, check_id in (("FULLTEXT", "tidb-fulltext"), ("SPATIAL", "tidb-spatial-index")):
        names = [i.name for i in t.indexes if i.kind == kind]
        if names:
            found.append(_blocker(t, check_id, f"{kind} index(es) {', '.join(names)}: TiDB does "
                                  f"not support {kind} indexes", "drop them from the target's "
                                  "schema (and search elsewhere)", names))
    charsets = sorted({c.charset for c in t.columns if c.charset and c.charset.lower() not in CHARSETS})
    if charsets:
        found.append(_blocker(t, "tidb-charset", f"character set(s) {', '.join(charsets)}: TiDB "
                              "has only ascii, latin1, binary, utf8, utf8mb4 and gbk",
                              "convert the columns to utf8mb4 (on the source or while loading)",
                              charsets))
    if t.triggers:
        found.append(Finding(WARNING, "tidb-trigger", f"TiDB has no triggers: {', '.join(t.triggers)} "
                             "cannot follow the table", "move the triggers' logic into the "
                             "application before the cut-over", table=t.qualified,
                             details={"triggers": t.triggers, "doc": DOC}))
    keyed = _generated_key_columns(t)
    if keyed:
        found.append(Finding(WARNING, "tidb-generated-key", f"stored generated column(s) "
                             f"{', '.join(keyed)} in a key: the replay cannot write them, TiDB "
                             "computes them, and rows are found by that computed value",
                             "check the expressions give the same values on TiDB, or key the "
                             "table by ordinary columns", table=t.qualified,
                             details={"columns": keyed, "doc": DOC}))
    return found


def _blocker(t: Table, check_id: str, reason: str, fix: str, names: list[str]) -> Finding:
    return Finding(BLOCKER, check_id, reason, fix, table=t.qualified,
                   details={"names": names, "doc": DOC})


def _generated_key_columns(t: Table) -> list[str]:
    stored = {c.name for c in t.columns if c.stored_generated}
    return sorted({name for i in t.indexes if i.unique for name in i.columns if name in stored})
