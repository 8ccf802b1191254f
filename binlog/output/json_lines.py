"""``--format json``: one object per changed row, one per line (DESIGN.md)."""
from __future__ import annotations

import orjson

from .values import bytes_renderer, iso_ts, json_default, render_row


class JsonLinesWriter:
    def __init__(self, out, binary_encoding: str = "hex"):
        self.out = out            # a binary stream
        self.render_bytes = bytes_renderer(binary_encoding)

    def record(self, change) -> dict:
        plan = change.plan
        return {
            "file": change.file, "pos": change.pos, "ts": iso_ts(change.ts),
            "server_id": change.server_id, "gtid": change.gtid, "db": change.db,
            "table": change.table, "op": change.op,
            "before": render_row(change.before, plan, self.render_bytes),
            "after": render_row(change.after, plan, self.render_bytes),
        }

    def write(self, change) -> None:
        self.out.write(orjson.dumps(self.record(change), default=json_default,
                                    option=orjson.OPT_APPEND_NEWLINE))

    def event(self, item) -> None:
        """Events other than row changes are not part of the JSON output."""
