"""The CDC fields of `binlog dump --format json` records (binlog/output/cdc.py): row
index, commit marker with xid and end position, primary key names, --with-types.  The
expected values come from the server: its SHOW BINLOG EVENTS of each sample
(``*.events.txt``) and the CREATE TABLE statements it ran (``*.sql``)."""
from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.records import row_records

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / "mariadb-10.11"


def dump(*args) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return row_records(out.stdout)


def server_events(name: str) -> list[dict]:
    lines = (SAMPLES / f"{name}.events.txt").read_text().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t", len(head) - 1), strict=True)) for line in lines[1:]]


@pytest.mark.parametrize("name", ["compressed", "types_full", "checksum_none"])
def test_commit_markers_are_the_servers_xid_events(name):
    records = dump(SAMPLES / f"{name}.binlog")
    events = server_events(name)
    xids = {int(e["End_log_pos"]): int(re.search(r"xid=(\d+)", e["Info"]).group(1))
            for e in events if e["Event_type"] == "Xid"}
    commits = [(r["end_pos"], r["xid"]) for r in records if r["commit"]]
    # every transaction with rows ends in exactly one marked row, at the server's XID event
    assert commits and all(xids.get(end) == xid for end, xid in commits)
    by_gtid = Counter(r["gtid"] for r in records if r["commit"])
    assert set(by_gtid.values()) == {1} and set(by_gtid) == {r["gtid"] for r in records}
    for r in records:
        if r["commit"]:
            assert r == [x for x in records if x["gtid"] == r["gtid"]][-1]
        else:
            assert r["xid"] is None and r["end_pos"] is None


def test_row_index_inside_each_event():
    records = dump(SAMPLES / "types_full.binlog")
    by_event: dict = {}
    for r in records:
        by_event.setdefault(r["pos"], []).append(r["row"])
    assert all(rows == list(range(len(rows))) for rows in by_event.values())
    assert any(len(rows) > 1 for rows in by_event.values())


def test_primary_key_names_are_the_create_tables():
    text = (REPO / "samples" / "sql" / "types_full.sql").read_text()
    records = dump(SAMPLES / "types_full.binlog")
    for table in {r["table"] for r in records}:
        create = re.search(rf"CREATE TABLE (?:\w+\.)?{table} \((.*?)\)\s*(?:ENGINE|CHARSET|DEFAULT|;)", text, re.S | re.I)
        assert create, table
        body = create.group(1)
        inline = re.findall(r"^\s*`?(\w+)`?\s+[^,]*PRIMARY KEY", body, re.M | re.I)
        clause = re.search(r"PRIMARY KEY\s*\(([^)]*)\)", body, re.I)
        want = inline or ([c.strip(" `") for c in clause.group(1).split(",")] if clause else [])
        assert {tuple(r["pk"]) for r in records if r["table"] == table} == {tuple(want)}, table


def test_with_types():
    records = dump("--with-types", SAMPLES / "types_full.binlog")
    types = {r["table"]: r["types"] for r in records}
    assert types["ints"]["biu"] == "bigint unsigned" and types["ints"]["ti"] == "tinyint"
    assert types["decimals"]["d10_2"] == "decimal(10,2)" and types["decimals"]["d65_30"] == "decimal(65,30)"
    assert types["datetimes"]["dt6"] == "datetime(6)" and types["bits"]["b17"] == "bit(17)"
    assert "types" not in dump(SAMPLES / "types_full.binlog")[0]


def test_xa_rows_end_uncommitted_at_xa_prepare():
    """An XA transaction's rows end at the server's XA_prepare event; its XA COMMIT is an
    event group of its own (other transactions may come between): no commit marker."""
    events = [e for e in server_events("events_misc") if e["Log_name"] == "mariadb-bin.000001"]
    records = [r for r in dump(SAMPLES / "events_misc") if r["file"] == "mariadb-bin.000001"]
    xa_groups, group, xa = set(), None, False
    for e in events:
        if e["Event_type"] == "Gtid":
            group, xa = int(e["Pos"]), "XA START" in e["Info"]
        elif e["Event_type"] == "XA_prepare" and xa:
            xa_groups.add(group)
    rows_events = [int(e["Pos"]) for e in events if "_rows" in e["Event_type"]]
    gtid_starts = sorted(int(e["Pos"]) for e in events if e["Event_type"] == "Gtid")
    in_xa = [r for r in records if max(g for g in gtid_starts if g < r["pos"]) in xa_groups]
    assert in_xa and all(r["pos"] in rows_events for r in in_xa)
    assert all(not r["commit"] and r["xid"] is None and r["end_pos"] is None for r in in_xa)
    assert any(r["commit"] for r in records if r not in in_xa)
