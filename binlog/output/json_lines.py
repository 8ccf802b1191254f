"""``--format json``: one object per changed row, one per line (DESIGN.md).

All rows of one rows event share file, pos, ts, server_id, gtid, db, table and op: that
part of the line is serialised once per event and reused, so a row costs two orjson
calls on its images.  ``record(change)`` gives the same object as a dict."""
from __future__ import annotations

import orjson

from .values import bytes_renderer, iso_ts, json_default, render_row

_dumps = orjson.dumps
# PartialJson is a dataclass: let json_default render it instead of orjson's own walk.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS


def image_json(row, plan, render_bytes) -> bytes:
    """One row image as the JSON object of a line (``null`` for no image); the Spark
    records carry the same bytes (spark_ingest.records)."""
    return _dumps(render_row(row, plan, render_bytes), default=json_default, option=_OPTIONS)


class JsonLinesWriter:
    def __init__(self, out, binary_encoding: str = "hex"):
        self.out = out            # a binary stream
        self.render_bytes = bytes_renderer(binary_encoding)
        self._head_key = None
        self._head = b""

    def record(self, change) -> dict:
        """The JSON object of one row change, as plain JSON values (what `write` prints)."""
        return orjson.loads(_dumps(self._record(change), default=json_default, option=_OPTIONS))

    def _record(self, change) -> dict:
        plan = change.plan
        return {
            "file": change.file, "pos": change.pos, "ts": iso_ts(change.ts),
            "server_id": change.server_id, "gtid": change.gtid, "db": change.db,
            "table": change.table, "op": change.op,
            "before": render_row(change.before, plan, self.render_bytes),
            "after": render_row(change.after, plan, self.render_bytes),
        }

    def _prefix(self, change) -> bytes:
        key = (change.file, change.pos, change.op, change.gtid, change.db, change.table)
        if key != self._head_key:
            head = {"file": change.file, "pos": change.pos, "ts": iso_ts(change.ts),
                    "server_id": change.server_id, "gtid": change.gtid, "db": change.db,
                    "table": change.table, "op": change.op}
            self._head = _dumps(head)[:-1] + b',"before":'
            self._head_key = key
        return self._head

    def write(self, change) -> None:
        plan, render = change.plan, self.render_bytes
        self.out.write(b"".join((
            self._prefix(change), image_json(change.before, plan, render),
            b',"after":', image_json(change.after, plan, render), b"}\n")))

    def event(self, item) -> None:
        """Events other than row changes are not part of the JSON output."""
