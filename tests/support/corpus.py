"""The damaged binlogs of MySQL's test suite (samples/mysql-test) and where each stops:
the corpus test checks the errors, the tests that read the whole corpus expect them."""
from __future__ import annotations

from binlog.errors import IncompleteEventError, MalformedEventError, TruncatedError

# file -> (error class, event offset, event type or None): from the corpus README, with
# offsets read off the files' own headers.  IncompleteEventError: the file ends inside an
# event (a clean stop, reported in the reader's stats, not raised).
DAMAGED = {
    "binlog_truncated_event.000001": (IncompleteEventError, 4, None),
    "binlog_truncated_prev_gtid_event.000001": (IncompleteEventError, 120, None),
    "ver_5_1-wl2325_r.001": (MalformedEventError, 428, "XID_EVENT"),
    "corrupt-relay-bin.000624": (TruncatedError, 91204, "QUERY_EVENT"),
}
