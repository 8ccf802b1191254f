"""Workloads and observations of the parallel-apply tests (``binlog apply --workers``):
what the target's general log shows a run sent, and what the target's own binlog shows
it committed."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from replay_helpers import run_script

DATA = Path(__file__).resolve().parent / "data"

#: Keys move within a transaction (the TiCDC split-update case), keys swap across
#: transactions, a unique secondary key moves, many transactions on few keys and on
#: disjoint keys, DDL in the middle.  Deterministic: the statements apply sends for it
#: do not depend on the run (tests/binlog/replay/data/workers1_statements.json).
MOVES = """CREATE DATABASE wk;
CREATE TABLE wk.t (a INT PRIMARY KEY, v VARCHAR(20));
CREATE TABLE wk.u (id INT PRIMARY KEY, code INT NOT NULL, note VARCHAR(20), UNIQUE KEY (code));
INSERT INTO wk.t VALUES (1, 'one'), (2, 'two');
BEGIN;
UPDATE wk.t SET a = 3 WHERE a = 2;
UPDATE wk.t SET a = 2 WHERE a = 1;
COMMIT;
INSERT INTO wk.u VALUES (1, 10, 'x'), (2, 20, 'y');
BEGIN;
UPDATE wk.u SET code = 30 WHERE id = 1;
COMMIT;
BEGIN;
UPDATE wk.u SET code = 10 WHERE id = 2;
COMMIT;
BEGIN;
UPDATE wk.u SET code = 20 WHERE id = 1;
COMMIT;
BEGIN;
UPDATE wk.t SET a = 9 WHERE a = 3;
COMMIT;
BEGIN;
UPDATE wk.t SET a = 3 WHERE a = 2;
COMMIT;
BEGIN;
UPDATE wk.t SET a = 2 WHERE a = 9;
COMMIT;
ALTER TABLE wk.t ADD COLUMN w INT NOT NULL DEFAULT 7;
INSERT INTO wk.t VALUES (4, 'four', 4);
DELETE FROM wk.u WHERE code = 10;
INSERT INTO wk.u VALUES (3, 10, 'moved');
"""


def moves_script() -> str:
    return MOVES


def many_script(db: str, transactions: int, hot_keys: int, cold: int = 10) -> str:
    """``transactions`` source transactions: each inserts a row of its own into one of
    ``cold`` tables (disjoint keys) and a marker row ``db.mk`` (its number: the
    target's binlog then shows each source transaction's commit); those of the second
    half also update one of ``hot_keys`` rows of ``db.hot`` (many transactions on few
    keys), every 7th swapping two rows' unique ``tag``; DDL at the middle."""
    lines = [f"CREATE DATABASE {db};", f"USE {db};",
             f"CREATE TABLE {db}.hot (id INT PRIMARY KEY, n INT NOT NULL, tag INT NOT NULL, UNIQUE KEY (tag));",
             f"CREATE TABLE {db}.mk (id INT PRIMARY KEY);"]
    for c in range(cold):
        lines.append(f"CREATE TABLE {db}.c{c} (id INT PRIMARY KEY, v VARCHAR(40));")
    lines.append(f"INSERT INTO {db}.hot SELECT seq, 0, seq FROM seq_1_to_{hot_keys};")
    tags = {k: k for k in range(1, hot_keys + 1)}
    for i in range(1, transactions + 1):
        k = i % hot_keys + 1
        stmts = [f"INSERT INTO {db}.c{i % cold} (id, v) VALUES ({i}, 'row {i}')",
                 f"INSERT INTO {db}.mk VALUES ({i})"]
        if i > transactions // 2:           # the second half: few keys as well
            stmts.insert(0, f"UPDATE {db}.hot SET n = n + 1 WHERE id = {k}")
        if i > transactions // 2 and i % 7 == 0 and hot_keys > 1:   # unique tags swap
            j = k % hot_keys + 1
            stmts += [f"UPDATE {db}.hot SET tag = 0 WHERE id = {k}",
                      f"UPDATE {db}.hot SET tag = {tags[k]} WHERE id = {j}",
                      f"UPDATE {db}.hot SET tag = {tags[j]} WHERE id = {k}"]
            tags[k], tags[j] = tags[j], tags[k]
        if i == transactions // 2:
            lines.append(f"ALTER TABLE {db}.c0 ADD COLUMN extra INT NULL;")
        lines.append("BEGIN;\n" + ";\n".join(stmts) + ";\nCOMMIT;")
    return "\n".join(lines) + "\n"


def run_many(source, db: str, transactions: int, hot_keys: int) -> None:
    run_script(source, many_script(db, transactions, hot_keys))


def general_log_on(server) -> None:
    server.execute("SET GLOBAL log_output = 'TABLE'")
    server.execute("TRUNCATE mysql.general_log")
    server.execute("SET GLOBAL general_log = 1")


def sent_statements(server, user_sessions_after: int = 0) -> list[str]:
    """The queries the target received (information_schema and the reading and making of
    the checkpoint table left out; its updates kept), in order; the
    checkpoint's positions and counts normalised (they depend on the binlog's bytes)."""
    server.execute("SET GLOBAL general_log = 0")
    rows = server.query("SELECT thread_id, CAST(argument AS CHAR) FROM mysql.general_log "
                        "WHERE command_type = 'Query' ORDER BY event_time, thread_id")
    out = []
    for _thread, text in rows:
        if ("information_schema" in text or "general_log" in text or "SHOW WARNINGS" in text
                or text.startswith(("SET GLOBAL", "SELECT VERSION"))):
            continue
        if "binlog_apply" in text and not text.startswith("INSERT INTO"):
            continue        # reading and making the checkpoint table: bookkeeping
        out.append(re.sub(r"\d+", "N", text) if "binlog_apply" in text else text)
    return out


def committed_markers(server, db: str) -> list[int]:
    """The marker ids of every row event the target committed into ``db.mk``, read from
    the target's own binlog by ``mariadb-binlog -v`` (a transaction applied twice shows
    twice; a rolled-back one not at all)."""
    from support.mariadb_server import find_tool

    server.execute("FLUSH BINARY LOGS")
    files = [str(p) for p in server.binlog_files()]
    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    text = subprocess.run([tool, "--no-defaults", "-v", *files], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")
    ids = []
    pattern = re.compile(rf"^### (?:INSERT INTO|UPDATE) `{db}`\.`mk`\n### (?:SET|WHERE)\n###   @1=(-?\d+)",
                         re.M)
    for m in pattern.finditer(text):
        ids.append(int(m.group(1)))
    return ids
