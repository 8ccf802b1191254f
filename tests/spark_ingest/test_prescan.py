"""Pre-scan and splits without Spark: every split point of every sample, read split by
split, gives exactly the records of one whole read."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

from spark_helpers import SAMPLES, SCHEMA_DDL, arrow_key, dump_records, record_key  # noqa: E402

from binlog.sources.file import discover  # noqa: E402
from spark_ingest.options import parse_options  # noqa: E402
from spark_ingest.plan import build_plan  # noqa: E402
from spark_ingest.prescan import plan_splits, scan_file  # noqa: E402
from spark_ingest.records import read_split  # noqa: E402

pytestmark = pytest.mark.spark

SEQUENCES = discover([str(SAMPLES)])


def read_plan(plan, batch_size=None):
    out = []
    for split in plan.splits:
        for batch in read_split(split, plan.options, plan.snapshots[split.group], batch_size=batch_size):
            out.extend(arrow_key(r) for r in batch.to_pylist())
    return out


@pytest.mark.parametrize("key,files", SEQUENCES, ids=[k.rsplit("/", 1)[-1] for k, _ in SEQUENCES])
def test_every_split_point_gives_the_unsplit_records(key, files):
    want = [record_key(r) for r in dump_records(files, SCHEMA_DDL)]
    big = sum(Path(f).stat().st_size for f in files) > 30_000
    opts = parse_options({"paths": files, "schema-ddl": SCHEMA_DDL, "split-size": "2k" if big else "1"})
    plan = build_plan(opts)
    boundaries = sum(len(s.boundaries) for s in plan.splits)
    assert len(plan.splits) > len(files), "samples have several transactions: they must split"
    assert big or boundaries == 0, "split-size 1 cuts at every safe point"
    assert read_plan(plan) == want
    whole = build_plan(parse_options({"paths": files, "schema-ddl": SCHEMA_DDL, "split-size": "0"}))
    assert len(whole.splits) == len(files)
    assert read_plan(whole) == want
    # a batch after every row: the last row of a transaction waits for its commit fields
    assert read_plan(whole, batch_size=1) == want


def test_split_points_are_transaction_starts():
    path = SAMPLES / "types_full.binlog"
    scan = scan_file(path)
    assert scan.ok and scan.closed and scan.end == scan.size
    from binlog.events import MariaGtidEvent
    from binlog.reader import BinlogReader

    gtids = [item.event.offset for item in BinlogReader([path]).items()
             if hasattr(item, "event") and isinstance(item.event, MariaGtidEvent)]
    assert scan.boundaries == gtids
    pieces = plan_splits(scan, 8 << 10)
    assert pieces[0][0] == 4 and pieces[-1][1] == scan.size
    assert all(b in gtids for _, b in pieces[:-1])
    assert all(a < b for a, b in pieces)


def test_partial_tail_of_the_last_file_is_no_error(tmp_path):
    src = SAMPLES / "types_full.binlog"
    scan = scan_file(src)
    cut = scan.boundaries[len(scan.boundaries) // 2] + 30     # inside an event
    path = tmp_path / "mariadb-bin.000001"
    path.write_bytes(src.read_bytes()[:cut])
    strict = scan_file(path)
    assert strict.error["error"] == "IncompleteEventError"
    tolerant = scan_file(path, tolerate_partial_tail=True)
    assert tolerant.error is None and not tolerant.closed
    assert tolerant.safe_end <= tolerant.end < cut
    assert tolerant.safe_end in scan.boundaries


def test_stop_datetime_and_positions_as_dump(tmp_path):
    files = [str(p) for p in sorted((SAMPLES / "events_misc").glob("mariadb-bin.0*"))]
    recs = dump_records(files)
    middle = recs[len(recs) // 2]
    from datetime import datetime, timezone

    moment = datetime.strptime(middle["ts"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    want = [record_key(r) for r in dump_records(files, stop_datetime=int(moment.timestamp()))]
    plan = build_plan(parse_options({"paths": files, "stop-datetime": text, "split-size": "1"}))
    assert read_plan(plan) == want
    first = recs[3]["pos"] - 1
    want = [record_key(r) for r in dump_records(files, start_position=4, stop_position=None)]
    plan = build_plan(parse_options({"paths": files, "split-size": "1"}))
    assert read_plan(plan) == want
    del first


def test_a_file_growing_during_the_read_is_read_only_to_the_planned_end(tmp_path):
    # A file still being written (ingest's active file) ends at a transaction boundary
    # when the plan is made, then the server writes on before the splits are read: the
    # read stops where the plan (and so the checkpoint) says this run ends, or the next
    # run would read the rest a second time (found by tests/end_to_end/test_relay_ingest.py).
    full = (SAMPLES / "types_full.binlog").read_bytes()
    scan = scan_file(SAMPLES / "types_full.binlog")
    cut = scan.boundaries[len(scan.boundaries) // 2]
    path = tmp_path / "types_full.binlog"
    path.write_bytes(full[:cut])
    plan = build_plan(parse_options({"paths": [str(path)], "split-size": "0"}),
                      active=frozenset({str(path)}))
    assert plan.scans[0].safe_end == cut
    path.write_bytes(full)                      # the server wrote on
    want = [record_key(r) for r in dump_records([SAMPLES / "types_full.binlog"], stop_position=cut)]
    assert read_plan(plan) == [w for w in want if w[1] < cut] and want


def test_a_binlog_closed_since_the_last_run_is_read_on(tmp_path):
    # The server clears LOG_EVENT_BINLOG_IN_USE_F in the FORMAT_DESCRIPTION (file offset
    # 21) when it closes a binlog: the file read while it was written is the same file
    # (an incremental ingest of a live server's binlog directory said FileChangedError
    # and reported a gap; found by tests/end_to_end/test_relay_ingest.py).
    from spark_ingest.ingest import select_work

    full = bytearray((SAMPLES / "types_full.binlog").read_bytes())
    scan = scan_file(SAMPLES / "types_full.binlog")
    cut = scan.boundaries[len(scan.boundaries) // 2]
    path = tmp_path / "mariadb-bin.000001"
    active = bytearray(full[:cut])
    active[21] |= 1
    state = {"files": {str(path): {"name": path.name, "size": cut, "end": cut, "closed": False,
                                   "head": bytes(active[:256]).hex(), "run": 1, "damaged": None}}}
    path.write_bytes(bytes(full))              # closed: the flag cleared, the rest written
    ranges, _, errors, _ = select_work([str(path)], state)
    assert errors == [] and ranges == {str(path): (cut, None)}
    changed = bytearray(full)
    changed[30] ^= 0xFF                        # any other byte of the head: another file
    path.write_bytes(bytes(changed))
    ranges, _, errors, _ = select_work([str(path)], state)
    assert ranges == {} and errors[0]["error"] == "FileChangedError"
