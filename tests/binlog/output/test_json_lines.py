"""PARTIAL_UPDATE_ROWS with MINIMAL images (json.binlog.000001): the JSON diffs whose base
document is not in the binlog come out as {"$json_diffs": [...]} (found by fuzzing: orjson
walked the dataclass itself and failed)."""
import io

import orjson
from support.paths import CORPUS

from binlog.output.json_lines import JsonLinesWriter
from binlog.reader import BinlogReader


def test_partial_json_diffs_are_printed():
    out = io.BytesIO()
    writer = JsonLinesWriter(out)
    for change in BinlogReader([CORPUS / "json.binlog.000001"]).changes():
        writer.write(change)
    records = [orjson.loads(line) for line in out.getvalue().splitlines()]
    partial = [r for r in records if r["pos"] == 3750]
    assert len(partial) == 6
    assert partial[0]["after"]["@2"] == {"$json_diffs": [{"op": "replace", "path": "$.age", "value": 26}]}
    assert writer.record(next(BinlogReader([CORPUS / "json.binlog.000001"]).changes()))["after"]["@2"] == \
        {"age": 24, "data": "xxxxxxxxxx", "name": "Joe"}
