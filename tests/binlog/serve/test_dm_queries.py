"""What TiDB DM asks its source over SQL before and beside its binlog stream, answered by
``binlog serve`` from the served binlogs of a real source (DM's binlog connection itself is
go-mysql: tests/peers/test_go_mysql.py records what it sends).

Read from pingcap/tiflow: dm/pkg/conn/db.go (GetFlavor through tidb's dbutil.ShowVersion,
GetServerID, GetMariaDBGtidDomainID, GetSlaveServerID, GetServerUnixTS), dm/pkg/conn/utils.go
(GetMasterStatus with gtid_binlog_pos for MariaDB, FetchLowerCaseTableNamesSetting,
GetSessionVariable sql_mode), dm/pkg/binlog/status.go (GetBinaryLogs), dm/syncer/util.go
str2TimezoneOrFromDB (the upstream's UTC offset), dm/pkg/checker/conn_checker.go
(max_connections), dm/pkg/checker/privilege.go (SHOW GRANTS FOR CURRENT_USER, parsed with
TiDB's parser)."""
from __future__ import annotations

import subprocess
from datetime import timedelta

import pymysql
import pytest
from support.serve_process import PASSWORD, Serve, copy_binlogs, workload

pytestmark = pytest.mark.server

#: a --users account's grants as serve shows them: what a replication client needs
OWN_GRANTS = "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `repl`@`%`"
#: (statement, what the answer must be: a function of (rows, source, served names))
DM_QUERIES = [
    ("SHOW GLOBAL VARIABLES LIKE 'version';", lambda rows, src, names: "MariaDB" in rows[0][1]),
    ("SELECT version()", lambda rows, src, names: "MariaDB" in rows[0][0]),
    ("SHOW GLOBAL VARIABLES LIKE 'server_id'", lambda rows, src, names: rows == (("server_id", "100"),)),
    ("SHOW GLOBAL VARIABLES LIKE 'gtid_domain_id'", lambda rows, src, names: rows == (("gtid_domain_id", "0"),)),
    ("SHOW SLAVE HOSTS", lambda rows, src, names: rows == ()),
    ("SHOW MASTER STATUS", lambda rows, src, names: rows[0][:2] == (names[-1], src.binlog_files()[-1].stat().st_size)),
    ("SHOW GLOBAL VARIABLES LIKE 'gtid_binlog_pos'",
     lambda rows, src, names: rows == (("gtid_binlog_pos", src.query("SELECT @@gtid_binlog_pos")[0][0]),)),
    ("SHOW BINARY LOGS", lambda rows, src, names: [r[0] for r in rows] == names),
    ("SELECT UNIX_TIMESTAMP()", lambda rows, src, names: abs(int(rows[0][0]) - src.query(
        "SELECT UNIX_TIMESTAMP()")[0][0]) < 60),
    ("SELECT @@lower_case_table_names;", lambda rows, src, names: rows == (("0",),)),
    ("SHOW VARIABLES LIKE 'sql_mode'", lambda rows, src, names: rows[0][0] == "sql_mode"),
    ("SELECT cast(TIMEDIFF(NOW(6), UTC_TIMESTAMP(6)) as time);", lambda rows, src, names: rows == (("00:00:00",),)),
    ("SHOW GLOBAL VARIABLES LIKE 'max_connections'", lambda rows, src, names: rows == (("max_connections", "64"),)),
    ("SHOW GRANTS FOR CURRENT_USER", lambda rows, src, names: rows == ((OWN_GRANTS,),)),
]


def _served_answers(mariadb_factory, tmp_path, queries, rows: int):
    """(the source, [(first column's name, rows)] of each query): the source's binlogs
    after a workload of ``rows`` rows, served without an upstream, asked by serve's own
    --users account; serve answered every query itself."""
    source = mariadb_factory({"server_id": 1})
    workload(source, rows=rows)
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
        with conn.cursor() as cur:
            answers = []
            for sql in queries:
                cur.execute(sql)
                answers.append((cur.description[0][0], cur.fetchall()))
        conn.close()
    finally:
        serve.stop()
    assert "asked what is not served" not in serve.text()
    return source, answers


def test_serve_answers_what_dm_asks(mariadb_factory, tmp_path):
    source, answers = _served_answers(mariadb_factory, tmp_path, [sql for sql, _ in DM_QUERIES], rows=5)
    for (sql, check), (_, rows) in zip(DM_QUERIES, answers, strict=True):
        assert check(rows, source, source.binlog_names()), (sql, rows)


def test_the_grants_serve_shows_are_a_replication_clients(mariadb_factory, tmp_path):
    """Serve's answer to SHOW GRANTS (DM's precheck and Debezium ask it) is a statement the
    server takes: given to an account of the source, it is all that account needs to read
    the binlog positions and dump the binlogs, as a replication client of serve does.  With
    ``--upstream`` an upstream account's grants are the upstream's own."""
    source, answers = _served_answers(mariadb_factory, tmp_path,
                                      ("SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()"), rows=2)
    assert answers == [("Grants for repl@%", ((OWN_GRANTS,),))] * 2
    source.execute(f"CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'")
    source.execute(OWN_GRANTS)
    assert source.query("SHOW GRANTS FOR repl@'%'")[0][0].startswith(
        "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`%`")
    login = pymysql.connect(host="127.0.0.1", port=source.port, user="repl", password=PASSWORD)
    with login.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        assert cur.fetchall()
        cur.execute("SHOW BINARY LOGS")
        assert [r[0] for r in cur.fetchall()] == source.binlog_names()
    login.close()
    first = source.binlog_names()[0]
    done = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                           "--port", str(source.port), "--user", "repl", f"--password={PASSWORD}",
                           "--raw", "--result-file", f"{tmp_path}/dumped-", first],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"dumped-{first}").read_bytes() == (tmp_path / "served" / first).read_bytes()

    # an account of the source (not one of serve's --users): its session passes through
    source.execute("CREATE USER dm@'%' IDENTIFIED BY 'dm-Pw1'")
    source.execute("GRANT REPLICATION SLAVE, SELECT ON *.* TO dm@'%'")
    (tmp_path / "upstream").mkdir()
    serve = Serve(tmp_path / "served", tmp_path / "upstream", "--upstream",
                  f"mysql://root@localhost/?unix_socket={source.socket}")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="dm", password="dm-Pw1")
        with conn.cursor() as cur:
            cur.execute("SHOW GRANTS FOR CURRENT_USER")
            assert list(cur.fetchall()) == [tuple(r) for r in source.query("SHOW GRANTS FOR dm@'%'")]
        conn.close()
    finally:
        serve.stop()


def test_with_an_upstream_dm_gets_the_sources_time_zone(mariadb_factory, tmp_path):
    """DM replays a DDL logged with time_zone SYSTEM in the source's zone, which it asks
    with the UTC-offset query: with ``--upstream`` that query is the source's."""
    source = mariadb_factory({"server_id": 1, "default_time_zone": "+08:00"})
    source.execute("CREATE USER dm@'%' IDENTIFIED BY 'dm-Pw1'")        # an account of the source
    source.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO dm@'%'")
    workload(source, rows=2)
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path, "--upstream", f"mysql://root@localhost/?unix_socket={source.socket}")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="dm", password="dm-Pw1")
        with conn.cursor() as cur:
            cur.execute("SELECT cast(TIMEDIFF(NOW(6), UTC_TIMESTAMP(6)) as time);")
            assert cur.fetchall() == ((timedelta(hours=8),),)       # the source's TIME column
        conn.close()
    finally:
        serve.stop()
