"""Every event of every sample is framed where the server says it is: offsets, types and
end positions equal the server's own SHOW BINLOG EVENTS (samples/*/<case>.events.txt)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from binlog.sources.file import read_events

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
LISTINGS = sorted(SAMPLES.glob("*/*.events.txt"))

# SHOW BINLOG EVENTS names (sql/log_event.cc get_type_str) -> our EventType names.
SERVER_NAMES = {
    "Format_desc": "FORMAT_DESCRIPTION_EVENT", "Gtid_list": "GTID_LIST_EVENT",
    "Binlog_checkpoint": "BINLOG_CHECKPOINT_EVENT", "Gtid": "GTID_EVENT", "Query": "QUERY_EVENT",
    "Annotate_rows": "ANNOTATE_ROWS_EVENT", "Table_map": "TABLE_MAP_EVENT",
    "Write_rows_v1": "WRITE_ROWS_EVENT_V1", "Update_rows_v1": "UPDATE_ROWS_EVENT_V1",
    "Delete_rows_v1": "DELETE_ROWS_EVENT_V1", "Xid": "XID_EVENT", "Rotate": "ROTATE_EVENT",
    "Stop": "STOP_EVENT", "Query_compressed": "QUERY_COMPRESSED_EVENT",
    "Write_rows_compressed_v1": "WRITE_ROWS_COMPRESSED_EVENT_V1",
    "Update_rows_compressed_v1": "UPDATE_ROWS_COMPRESSED_EVENT_V1",
    "Delete_rows_compressed_v1": "DELETE_ROWS_COMPRESSED_EVENT_V1",
    "Intvar": "INTVAR_EVENT", "RAND": "RAND_EVENT", "User var": "USER_VAR_EVENT",
    "Begin_load_query": "BEGIN_LOAD_QUERY_EVENT", "Execute_load_query": "EXECUTE_LOAD_QUERY_EVENT",
    "XA_prepare": "XA_PREPARE_LOG_EVENT",
}


def listing(path: Path) -> dict[str, list[tuple[int, str, int]]]:
    by_file: dict[str, list] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            by_file.setdefault(row["Log_name"], []).append(
                (int(row["Pos"]), SERVER_NAMES[row["Event_type"]], int(row["End_log_pos"])))
    return by_file


def stored_file(listing_path: Path, log_name: str, count: int) -> Path:
    case = listing_path.name.removesuffix(".events.txt")
    directory = listing_path.parent / case
    return directory / log_name if directory.is_dir() else listing_path.parent / f"{case}.binlog"


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: p.name.removesuffix(".events.txt"))
def test_events_match_show_binlog_events(path):
    by_file = listing(path)
    for log_name, expected in by_file.items():
        binlog = stored_file(path, log_name, len(by_file))
        ours = [(e.header.offset, e.type_name, e.header.log_pos) for e in read_events(binlog)]
        assert ours == expected, binlog
