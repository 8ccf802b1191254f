"""``binlog serve`` in front of real, unmodified clients: a MariaDB replica (CHANGE MASTER
TO our port, by file/position and by GTID), ``mariadb-binlog --read-from-remote-server``
and the PyPI python-mysql-replication.  Expected values come from the source server
(CHECKSUM TABLE, ``CAST(col AS CHAR)``, its own binlog files)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.serve_process import PASSWORD, REPO, Serve, copy_binlogs, follow_raw, rows, workload

pytestmark = pytest.mark.server


@pytest.fixture
def source(mariadb_factory):
    src = mariadb_factory({"server_id": 1})
    workload(src)
    return src


def test_mariadb_binlog_copies_what_is_served(source, tmp_path):
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        out = tmp_path / "out"
        out.mkdir()
        done = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                               "--port", str(serve.port), "--user", "repl", f"--password={PASSWORD}",
                               "--raw", "--to-last-log", source.binlog_names()[0]],
                              cwd=out, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        for name in source.binlog_names():
            served, copied = (tmp_path / "served" / name).read_bytes(), (out / name).read_bytes()
            # the FORMAT_DESCRIPTION's in-use flag goes cleared, as the server sends it
            assert copied[:21] + copied[22:] == served[:21] + served[22:]
    finally:
        assert serve.stop() == 0
    log = serve.text()
    assert "client 1 (repl@127.0.0.1" in log and "dumps from" in log and "stopped" in log


@pytest.mark.parametrize("use_gtid", ["no", "slave_pos"])
def test_a_mariadb_replica_replicates_through_serve(source, mariadb_factory, tmp_path, use_gtid):
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    replica = mariadb_factory({"server_id": 2})
    try:
        replica.execute(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={serve.port}, "
                        f"MASTER_USER='repl', MASTER_PASSWORD='{PASSWORD}', MASTER_CONNECT_RETRY=1, "
                        f"MASTER_USE_GTID={use_gtid}")
        replica.execute("START SLAVE")
        wait_replica(replica, source)
        assert rows(replica) == rows(source)
        assert replica.query("CHECKSUM TABLE d.t, d.big") == source.query("CHECKSUM TABLE d.t, d.big")
    finally:
        replica.execute("STOP SLAVE")
        serve.stop()


def wait_replica(replica, source, timeout: float = 60) -> None:
    want = source.query("CHECKSUM TABLE d.t, d.big")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = replica.query("SHOW SLAVE STATUS")
        if status:
            cur = replica.connect().cursor()
            cur.execute("SHOW SLAVE STATUS")
            names = [c[0] for c in cur.description]
            info = dict(zip(names, cur.fetchone(), strict=True))
            cur.connection.close()
            # a reconnect while serve restarts is expected; a fatal error is not
            assert "fatal" not in info["Last_IO_Error"] and not info["Last_SQL_Error"], info
            try:
                if replica.query("CHECKSUM TABLE d.t, d.big") == want:
                    return
            except Exception:   # noqa: BLE001 - the tables are not there yet
                pass
        time.sleep(0.3)
    raise AssertionError(f"the replica did not catch up: {replica.query('SHOW SLAVE STATUS')}")


def test_python_mysql_replication_reads_through_serve(source, tmp_path):
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import WriteRowsEvent

    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        stream = BinLogStreamReader(connection_settings={"host": "127.0.0.1", "port": serve.port,
                                                         "user": "repl", "password": PASSWORD},
                                    server_id=77, blocking=False, only_events=[WriteRowsEvent],
                                    only_tables=["t"], is_mariadb=True)
        try:
            got = [row["values"] for event in stream for row in event.rows]
        finally:
            stream.close()
    finally:
        serve.stop()
    # python-mysql-replication asks information_schema for the column names: serve does
    # not answer that, so the values come keyed by position (its UNKNOWN_COL<n>)
    ids = sorted(values[next(iter(values))] for values in got)
    assert ids == list(range(60))


def test_a_replica_follows_a_growing_relay_through_serve(source, mariadb_factory, tmp_path):
    """binlog fetch --stop-never keeps a relay of the source; serve follows it as it
    grows; a replica through serve sees the writes made after it connected, and a
    restart of serve in the middle loses nothing."""
    relay = tmp_path / "relay"
    fetch = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from",
                              f"mysql://root@localhost/?unix_socket={source.socket}", "--to", relay,
                              "--server-id", "61", "--stop-never", "--heartbeat", "0.5"],
                             cwd=REPO, stderr=subprocess.PIPE)
    replica = mariadb_factory({"server_id": 2})
    serve = None
    try:
        deadline = time.monotonic() + 30
        while not list(relay.glob("*.index")):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        serve = Serve(relay, tmp_path)
        replica.execute(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={serve.port}, "
                        f"MASTER_USER='repl', MASTER_PASSWORD='{PASSWORD}', MASTER_CONNECT_RETRY=1, "
                        f"MASTER_USE_GTID=slave_pos")
        replica.execute("START SLAVE")
        wait_replica(replica, source)
        for i in range(100, 130):
            source.execute(f"INSERT INTO d.t VALUES ({i}, 'later {i}', NOW(3), {i})")
        source.flush_logs()
        source.execute("UPDATE d.t SET n = n + 1 WHERE id >= 100")
        wait_replica(replica, source)
        port = serve.port
        serve.stop()
        serve = Serve(relay, tmp_path, "--listen", f"127.0.0.1:{port}")
        source.execute("DELETE FROM d.t WHERE id BETWEEN 100 AND 110")
        wait_replica(replica, source)
        assert rows(replica) == rows(source)
    finally:
        replica.execute("STOP SLAVE")
        if serve is not None:
            serve.stop()
        fetch.terminate()
        fetch.wait(timeout=30)


def test_processlist_shows_each_client_and_its_lag(source, tmp_path):
    import pymysql

    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    follower = follow_raw(serve, source.binlog_names()[0], tmp_path)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
        deadline = time.monotonic() + 20
        while True:
            with conn.cursor() as cur:
                cur.execute("SHOW PROCESSLIST")
                listed = cur.fetchall()
            dumps = [r for r in listed if r[4] == "Binlog Dump"]
            if dumps and dumps[0][6].endswith(" 0 bytes behind"):
                break
            assert time.monotonic() < deadline, listed
            time.sleep(0.2)
        last = source.binlog_names()[-1]
        assert f"at {last}:{(tmp_path / 'served' / last).stat().st_size}" in dumps[0][6]
        conn.close()
    finally:
        follower.kill()
        follower.wait()
        serve.stop()


def test_our_own_fetch_copies_through_serve(source, tmp_path):
    """binlog fetch (our client, with its clock query and checksum checks) against serve:
    the copy equals the served files."""
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        done = subprocess.run([sys.executable, "-m", "binlog.cli", "fetch", "--from",
                               f"mysql://repl:{PASSWORD}@127.0.0.1:{serve.port}/", "--to", tmp_path / "copy",
                               "--server-id", "71", "--retries", "0"], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        for name in source.binlog_names():
            served, copied = (tmp_path / "served" / name).read_bytes(), (tmp_path / "copy" / name).read_bytes()
            assert copied[:21] + copied[22:] == served[:21] + served[22:]
    finally:
        serve.stop()


def test_clients_log_in_with_the_upstreams_accounts(source, tmp_path):
    """With --upstream, an account the upstream accepts gets in (its proof checked by the
    upstream: the password never passes through serve), may dump only with REPLICATION
    SLAVE there, and a wrong password is the upstream's refusal; with the upstream down,
    only the --users accounts get in."""
    import pymysql

    source.execute("CREATE USER cdc@'%' IDENTIFIED BY 'cdc-Pw9'")
    source.execute("GRANT REPLICATION SLAVE ON *.* TO cdc@'%'")
    source.execute("CREATE USER reader@'%' IDENTIFIED BY 'reader-Pw9'")
    source.execute("GRANT SELECT ON d.* TO reader@'%'")
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path, "--upstream", f"mysql://x@127.0.0.1:{source.port}/")

    def copy(user: str, password: str, out):
        out.mkdir()
        return subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                               "--port", str(serve.port), f"--user={user}", f"--password={password}", "--raw",
                               "--to-last-log", source.binlog_names()[0]], cwd=out, capture_output=True,
                              text=True, timeout=60)
    try:
        assert copy("cdc", "cdc-Pw9", tmp_path / "cdc").returncode == 0
        refused = copy("reader", "reader-Pw9", tmp_path / "reader")
        assert refused.returncode != 0 and "REPLICATION SLAVE" in refused.stderr
        with pytest.raises(pymysql.err.OperationalError) as wrong:
            pymysql.connect(host="127.0.0.1", port=serve.port, user="cdc", password="nope", connect_timeout=5)
        assert wrong.value.args[0] == 1045
        source.stop()
        pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD).close()
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(host="127.0.0.1", port=serve.port, user="cdc", password="cdc-Pw9", connect_timeout=5)
    finally:
        serve.stop()
    assert "cdc-Pw9" not in serve.text() and "not reachable" in serve.text()


def _process_tree(pid: int) -> list[int]:
    """pid and every descendant, from /proc's parent links."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        tree.append(todo.pop())
        todo.extend(parents.get(tree[-1], []))
    return tree


def test_the_upstreams_password_is_on_no_command_line(source, tmp_path):
    """serve --upstream with ?password_file=: the fetch child relays the upstream (its
    binlogs arrive byte for byte) while neither serve's nor any child's command line or
    environment holds the password (/proc/PID/cmdline is readable by every local user)."""
    secret = "Relay-Pw9-secret"
    source.execute(f"CREATE USER relay@'%' IDENTIFIED BY '{secret}'")
    source.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO relay@'%'")
    (tmp_path / "pw").write_text(secret + "\n")
    upstream = f"mysql://relay@127.0.0.1:{source.port}/?password_file={tmp_path / 'pw'}"
    serve = Serve(None, tmp_path, "--upstream", upstream, "--relay", tmp_path / "relay")
    try:
        name = source.binlog_names()[0]
        expected = (source.binlog_dir / name).read_bytes()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            relayed = tmp_path / "relay" / name
            if relayed.exists() and relayed.stat().st_size >= len(expected):
                break
            time.sleep(0.1)
        got = relayed.read_bytes()[:len(expected)]
        # the FORMAT_DESCRIPTION's in-use flag (byte 21) goes cleared, as the server sends it
        assert got[:21] + got[22:] == expected[:21] + expected[22:], serve.text()
        tree = _process_tree(serve.proc.pid)
        assert len(tree) >= 3, (tree, serve.text())  # serve, its fetch and rewrite children
        for pid in tree:
            for part in ("cmdline", "environ"):
                try:
                    data = (Path(f"/proc/{pid}") / part).read_bytes()
                except OSError:
                    continue                        # ended meanwhile
                assert secret.encode() not in data, (pid, part)
    finally:
        serve.stop()
    assert secret not in serve.text()


def test_an_upstream_session_keeps_the_clients_settings(source, tmp_path):
    """As JDBC's MariaDB driver runs Debezium's snapshot: a SET runs on the upstream too (its
    time_zone then holds for the snapshot's SELECTs there), serve's own answers carry the
    upstream session's status (autocommit off after SET autocommit=0: the driver keeps it
    from every OK and EOF), and ``SET STATEMENT var=value FOR`` (the driver's query
    timeout) wraps a query serve answers as well as one it passes on."""
    import pymysql

    source.execute("CREATE USER cdc@'%' IDENTIFIED BY 'cdc-Pw9'")
    source.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO cdc@'%'")
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path, "--upstream", f"mysql://x@127.0.0.1:{source.port}/")
    conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="cdc", password="cdc-Pw9")
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+05:00'")
            cur.execute("SELECT CAST(FROM_UNIXTIME(0) AS CHAR)")            # run on the upstream
            assert cur.fetchall() == (("1970-01-01 05:00:00",),)
            conn.autocommit(False)
            assert not conn.get_autocommit()
            conn.ping(reconnect=False)                                      # answered by serve
            assert not conn.get_autocommit()
            cur.execute("SET STATEMENT max_statement_time=600 FOR SHOW GLOBAL VARIABLES LIKE 'server_id'")
            assert cur.fetchall() == (("server_id", "100"),)                 # serve's, not the source's 1
            assert not conn.get_autocommit()
            cur.execute("SET STATEMENT max_statement_time=600 FOR SHOW MASTER STATUS")
            last = source.binlog_names()[-1]
            assert cur.fetchall()[0][:2] == (last, (tmp_path / "served" / last).stat().st_size)
            cur.execute("SET STATEMENT max_statement_time=600 FOR SELECT COUNT(*) FROM d.t")
            assert cur.fetchall() == ((50 + 1,),)
            cur.execute("SHOW VARIABLES WHERE Variable_name IN ('server_id', 'time_zone')")   # the source's
            assert cur.fetchall() == (("server_id", "1"), ("time_zone", "+05:00"))
    finally:
        conn.close()
        serve.stop()
    assert "not served" not in serve.text()


def test_a_jdbc_client_without_upstream_gets_its_settings_and_variables(source, tmp_path):
    """A serve account (no upstream): what JDBC's MariaDB driver and Debezium's MariaDB
    connector ask at start is answered from serve's own variables."""
    import pymysql

    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute("set sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES'),time_zone='+00:00',NAMES utf8mb4")
            cur.execute("SET STATEMENT max_statement_time=600 FOR SHOW VARIABLES")
            everything = dict(cur.fetchall())
            assert everything["server_id"] == "100" and everything["binlog_format"] == "ROW"
            cur.execute("SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')")
            assert cur.fetchall() == (("character_set_server", "utf8mb4"), ("collation_server", "utf8mb4_general_ci"))
    finally:
        conn.close()
        serve.stop()
    assert "not served" not in serve.text()
