"""The report of ``binlog doctor``: a JSON document (``document``, valid against
``report.schema.json`` beside this module) and its text form (``render_text``).

Names, versions and statement samples come from the server: the text form passes every
field through ``output.sql.literals.printable`` (control characters escaped), and the JSON form is
written with ``ensure_ascii`` (nothing but printable ASCII), so neither can move the
cursor or start an escape sequence on a terminal.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..output.sql.literals import printable
from .checks import Facts
from .findings import Finding, blocks, counts, ordered

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
FORMAT = "binlog-doctor/1"


def document(facts: Facts, findings: list[Finding]) -> dict[str, Any]:
    src, target = facts.source, facts.target
    return {
        "format": FORMAT,
        "source": {"address": src.address, "user": src.privileges.user, "version": src.version,
                   "tables": len(src.tables)},
        "target": None if target is None else {"address": target.address, "version": target.version,
                                               "tidb": target.tidb},
        "blocks": blocks(findings),
        "summary": counts(findings),
        "findings": [f.as_dict() for f in ordered(findings)],
    }


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def render_text(doc: dict[str, Any]) -> str:
    src, target, summary = doc["source"], doc["target"], doc["summary"]
    lines = [f"source {src['address']} ({src['version']}) as {src['user']}: {src['tables']} tables"]
    if target is not None:
        lines.append(f"target {target['address']} ({target['version']})"
                     + (" [TiDB]" if target["tidb"] else ""))
    for f in doc["findings"]:
        where = f" {f['table']}:" if f["table"] else ""
        lines.append("")
        lines.append(f"{f['severity'].upper():8} {f['check']}{where} {f['reason']}")
        if f["fix"]:
            lines.append(f"         fix: {f['fix']}")
    lines.append("")
    verdict = "BLOCKED" if doc["blocks"] else "OK"
    lines.append(f"{verdict}: {summary['blocker']} blocker(s), {summary['warning']} warning(s), "
                 f"{summary['info']} info")
    return "".join(printable(line) + "\n" for line in lines)


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
