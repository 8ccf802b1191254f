"""TiDB 8.5's collations, and the source's collations as TiDB names them.

TiDB with its new collation framework (``new_collations_enabled_on_first_bootstrap``, on
by default since v6.0) has only the collations below, each under the id MySQL and MariaDB
give it (``SHOW COLLATION`` of the ``tidb-8.5`` peer, pkg/util/collate/collate.go;
``tests/binlog/doctor/test_doctor_tidb.py`` compares this table with a running one,
so a TiDB that changes it fails there).  A collation of the same id is the same
comparison on both sides (TiDB implements MySQL's general_ci, bin and unicode_ci: UCA
4.0.0), so it is the documented equivalent of the source's; the defaults differ: TiDB's
default for utf8mb4, utf8 and latin1 is the ``_bin`` one, MariaDB's the ``_general_ci`` /
``_swedish_ci`` one (schema_store.model.DEFAULT_COLLATIONS).

A collation TiDB lacks (``latin1_swedish_ci``, MariaDB's latin1 default) has no
equivalent there: the replay stops naming it, unless ``--map-collation FROM=TO`` names
the TiDB collation of the same character set to use instead (``CollationMap``).
"""
from __future__ import annotations

from dataclasses import dataclass

from schema_store.model import normalize_collation

from ...errors import UsageError

#: (name, id, the default of its charset), as ``SHOW COLLATION`` lists them in TiDB 8.5.
COLLATIONS_8_5: tuple[tuple[str, int, bool], ...] = (
    ("ascii_bin", 65, True), ("binary", 63, True), ("gbk_bin", 87, False),
    ("gbk_chinese_ci", 28, True), ("latin1_bin", 47, True), ("utf8_bin", 83, True),
    ("utf8_general_ci", 33, False), ("utf8_unicode_ci", 192, False),
    ("utf8mb4_0900_ai_ci", 255, False), ("utf8mb4_0900_bin", 309, False),
    ("utf8mb4_bin", 46, True), ("utf8mb4_general_ci", 45, False),
    ("utf8mb4_unicode_ci", 224, False),
)

NAMES: frozenset[str] = frozenset(name for name, _, _ in COLLATIONS_8_5)
BY_ID: dict[int, str] = {cid: name for name, cid, _ in COLLATIONS_8_5}
#: Its character sets (``utf8mb3`` is TiDB's alias of ``utf8``).
CHARSETS: frozenset[str] = frozenset({name.partition("_")[0] for name in NAMES} | {"utf8mb3"})
DEFAULTS: dict[str, str] = {name.partition("_")[0]: name for name, _, default in COLLATIONS_8_5
                            if default}


def tidb_name(collation: str) -> str:
    """TiDB's spelling of a collation name: ``utf8mb3_general_ci`` -> ``utf8_general_ci``."""
    name = normalize_collation(collation) or ""
    return "utf8_" + name[len("utf8mb3_"):] if name.startswith("utf8mb3_") else name


def tidb_charset(charset: str) -> str:
    charset = charset.lower()
    return "utf8" if charset == "utf8mb3" else charset


@dataclass(frozen=True)
class CollationMap:
    """``--map-collation FROM=TO``: a source collation TiDB lacks, created as TiDB's
    collation TO of the same character set (not equivalent: the user's choice)."""

    rules: dict[str, str]

    @classmethod
    def of(cls, rules) -> CollationMap:
        """From the option's (FROM, TO) pairs; UsageError for a TO TiDB lacks or one of
        another character set (the column's bytes would change meaning)."""
        out: dict[str, str] = {}
        for source, target in rules:
            source, target = tidb_name(source), tidb_name(target)
            if target not in NAMES:
                raise UsageError(f"--map-collation {source}={target}: TiDB 8.5 has no collation "
                                 f"{target}; it has {', '.join(sorted(NAMES))}")
            if source.partition("_")[0] != target.partition("_")[0]:
                raise UsageError(f"--map-collation {source}={target}: not the same character set")
            out[source] = target
        return cls(out)

    def get(self, collation: str) -> str | None:
        """TiDB's collation for a source collation: the same one when TiDB has it, the
        mapped one, else None."""
        name = tidb_name(collation)
        return name if name in NAMES else self.rules.get(name)

    def mapped(self, collation: str) -> bool:
        return tidb_name(collation) in self.rules
