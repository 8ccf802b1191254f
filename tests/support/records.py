"""Reading `binlog dump --format json` output in tests: the row-change records of it.

Dump also prints `op: "statement"` and `op: "ddl"` records (statement-logged changes
and schema changes, in binlog order); tests about row images take the rows only."""
from __future__ import annotations

import json

ROW_OPS = frozenset({"insert", "update", "delete"})


def row_records(text: str) -> list[dict]:
    """The row-change records of JSON Lines output."""
    return [r for r in map(json.loads, text.splitlines()) if r.get("op") in ROW_OPS]
