"""Several statements in one request (binlog.replay.packets), on a real server: the
results of each, the server stopping at the first that fails, warnings refused, and the
request's transaction left for the caller to roll back."""
from __future__ import annotations

import pytest

from binlog.replay.packets import PacketFailed, execute_packet
from binlog.sql_connection import connect

pytestmark = pytest.mark.server


@pytest.fixture
def conn(mariadb_server):
    from pymysql.constants import CLIENT

    mariadb_server.execute("DROP DATABASE IF EXISTS packets")
    mariadb_server.execute("CREATE DATABASE packets")
    mariadb_server.execute("CREATE TABLE packets.t (id INT PRIMARY KEY, v TINYINT)")
    c = connect({"host": "127.0.0.1", "port": mariadb_server.port, "user": "root"},
                autocommit=False, client_flag=CLIENT.MULTI_STATEMENTS)
    yield c
    c.close()
    mariadb_server.execute("DROP DATABASE packets")


def rows(srv):
    return srv.query("SELECT id, v FROM packets.t ORDER BY id")


def test_the_affected_rows_of_each_statement(conn, mariadb_server):
    got = execute_packet(conn, ["INSERT INTO packets.t VALUES (1, 1), (2, 2)",
                                "REPLACE INTO packets.t VALUES (2, 3)",
                                "DELETE FROM packets.t WHERE id = 9"])
    assert got == [2, 2, 0]         # REPLACE of an existing row: deleted and inserted
    assert rows(mariadb_server) == []       # not committed: the caller commits
    conn.commit()
    assert rows(mariadb_server) == [(1, 1), (2, 3)]


def test_the_server_stops_at_the_first_failure(conn, mariadb_server):
    with pytest.raises(PacketFailed) as failed:
        execute_packet(conn, ["INSERT INTO packets.t VALUES (1, 1)",
                              "INSERT INTO packets.t VALUES (1, 2)",
                              "INSERT INTO packets.t VALUES (3, 3)"])
    assert "statement 2 of 3" in str(failed.value) and "Duplicate entry" in str(failed.value)
    assert not failed.value.retryable
    # the first ran (in the open transaction), the third never did
    with conn.cursor() as cur:
        cur.execute("SELECT id FROM packets.t ORDER BY id")
        assert cur.fetchall() == ((1,),)
    conn.rollback()
    assert rows(mariadb_server) == []


def test_a_warning_is_refused(conn, mariadb_server):
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")    # out of range: a warning, not an error
    with pytest.raises(PacketFailed, match="warning"):
        execute_packet(conn, ["INSERT INTO packets.t VALUES (1, 1)",
                              "INSERT INTO packets.t VALUES (2, 1000)"])
    conn.rollback()
    assert rows(mariadb_server) == []


def test_a_lock_wait_timeout_is_retryable(conn, mariadb_server):
    mariadb_server.execute("INSERT INTO packets.t VALUES (1, 1)")
    other = mariadb_server.connect()
    try:
        with other.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("UPDATE packets.t SET v = 2 WHERE id = 1")
        with conn.cursor() as cur:
            cur.execute("SET SESSION innodb_lock_wait_timeout = 1")
        with pytest.raises(PacketFailed) as failed:
            execute_packet(conn, ["INSERT INTO packets.t VALUES (5, 5)",
                                  "UPDATE packets.t SET v = 3 WHERE id = 1"])
        assert failed.value.retryable, str(failed.value)
        conn.rollback()
    finally:
        other.rollback()
        other.close()


def test_workers_send_their_queued_transactions_in_one_request(two_servers):
    """``apply --workers 4``: a worker sends the statements of the transactions queued to
    it as one request, and its checkpoint row with COMMIT as one; the target ends equal
    to the source with each transaction's marker committed once."""
    from replay_helpers import assert_same_contents, cli, dsn, run_script
    from workers_helpers import committed_markers, general_log_on, many_script, sent_statements

    source, target = two_servers
    run_script(source, many_script("pk", 400, 5))
    files = [str(p) for p in source.binlog_files()]
    general_log_on(target)
    done = cli("apply", "--to", dsn(target), "--workers", "4", "--no-safe", *files)
    assert done.returncode == 0, done.stderr.decode()
    sent = sent_statements(target)
    requests = [s for s in sent if s.startswith(("INSERT INTO `pk`", "UPDATE `pk`"))]
    assert any(s.count(";\n") >= 2 for s in requests), requests[:5]     # several transactions
    commits = [s for s in sent if "binlog_apply" in s and "'default/N'" in s]   # the workers' rows
    assert commits and all(s.endswith(";\nCOMMIT") for s in commits), commits[:3]
    assert_same_contents(source, target, ["pk"])
    assert sorted(committed_markers(target, "pk")) == list(range(1, 401))


def test_a_query_event_holding_two_statements_runs_as_one(mariadb_factory, tmp_path):
    """Workers' connections take multi-statement requests (for the rows they render), but
    a QUERY event's text from the binlog still runs as one statement, as with one worker:
    a forged event "CREATE TABLE ...; CREATE TABLE evil ...#" is a syntax error on the
    target, and evil is never created."""
    import subprocess
    import sys
    import zlib
    from pathlib import Path

    source, target = mariadb_factory(), mariadb_factory()
    padding = "x" * 40
    source.execute("CREATE DATABASE pk")
    source.execute(f"CREATE TABLE pk.a (id INT PRIMARY KEY) COMMENT '{padding}'")
    path = source.binlog_files()[-1]
    data = bytearray(path.read_bytes())
    old = f"COMMENT '{padding}'".encode()
    new = b"; CREATE TABLE pk.evil (i INT)#".ljust(len(old), b" ")
    at = data.index(old)
    data[at:at + len(old)] = new
    start = 4                                   # the event holding the text: walk the headers
    while not start <= at < start + (size := int.from_bytes(data[start + 9:start + 13], "little")):
        start += size
    assert data[start + 4] == 2                 # a QUERY event
    data[start + size - 4:start + size] = zlib.crc32(data[start:start + size - 4]).to_bytes(4, "little")
    forged = tmp_path / path.name
    forged.write_bytes(bytes(data))
    for workers in ("4", "1"):
        done = subprocess.run([sys.executable, "-m", "binlog.cli", "apply", str(forged), "--workers", workers,
                               "--to", f"mysql://root@127.0.0.1:{target.port}/"],
                              cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 5 and "1064" in done.stderr, done.stderr
        assert target.query("SELECT COUNT(*) FROM information_schema.tables "
                            "WHERE table_schema = 'pk' AND table_name = 'evil'") == [(0,)]
