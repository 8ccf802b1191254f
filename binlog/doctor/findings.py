"""A finding of ``binlog doctor``: what, how bad, where, why (one line) and the fix."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BLOCKER, WARNING, INFO = "blocker", "warning", "info"
SEVERITIES = (BLOCKER, WARNING, INFO)


@dataclass
class Finding:
    severity: str               # blocker | warning | info
    check: str                  # the check's id, e.g. "legacy-temporal"
    reason: str                 # one line
    fix: str                    # what to do ("" when nothing needs doing)
    table: str | None = None    # db.table when the finding is about one table
    details: dict[str, Any] = field(default_factory=dict)   # JSON values only

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")

    def as_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "check": self.check, "table": self.table,
                "reason": self.reason, "fix": self.fix, "details": self.details}


def blocks(findings: list[Finding]) -> bool:
    return any(f.severity == BLOCKER for f in findings)


def counts(findings: list[Finding]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}


def ordered(findings: list[Finding]) -> list[Finding]:
    """Blockers first, then warnings, then info; the checks' own order within each."""
    return sorted(findings, key=lambda f: SEVERITIES.index(f.severity))
