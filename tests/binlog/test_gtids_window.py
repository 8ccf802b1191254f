"""``--start-gtid`` / ``--stop-gtid``: the event groups selected are those mariadb-binlog
selects with ``--start-position=GTID-list`` / ``--stop-position=GTID-list`` on the same
files (the expected values come from the server's own tool), and a live stream gives the
same rows as the files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[2]


def cli(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def server():
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"binlog_checksum": "CRC32"}) as srv:
        srv.execute("CREATE DATABASE g")
        srv.execute("CREATE TABLE g.t (a INT PRIMARY KEY, domain INT)")
        conn = srv.connect()
        try:
            with conn.cursor() as cur:
                for i in range(24):     # two domains, interleaved, across two files
                    cur.execute(f"SET gtid_domain_id = {i % 2}")
                    cur.execute("INSERT INTO g.t VALUES (%s, %s)", (i, i % 2))
                    if i == 11:
                        cur.execute("FLUSH BINARY LOGS")
        finally:
            conn.close()
        yield srv


def mariadb_binlog_gtids(server, start, stop) -> list[str]:
    """GTIDs of the row transactions mariadb-binlog prints for the window."""
    from support.mariadb_server import find_tool

    tool = find_tool("mariadb-binlog", "mysqlbinlog")
    args = ([f"--start-position={start}"] if start else []) + \
           ([f"--stop-position={stop}"] if stop else [])
    done = subprocess.run([tool, *args, *map(str, server.binlog_files())], capture_output=True,
                          text=True, check=True)
    return [line.split("\tGTID ")[1].split()[0] for line in done.stdout.splitlines()
            if "\tGTID " in line and line.endswith(" trans")]


def gtid_options(start, stop) -> list[str]:
    return (["--start-gtid", start] if start else []) + (["--stop-gtid", stop] if stop else [])


WINDOWS = [("0-1-5,1-1-3", "0-1-9,1-1-6"), ("0-1-5", None), (None, "1-1-4"),
           ("0-1-7,1-1-2", None)]


@pytest.mark.parametrize("start,stop", WINDOWS)
def test_files_select_what_mariadb_binlog_selects(server, start, stop):
    expected = mariadb_binlog_gtids(server, start, stop)
    done = cli("dump", *gtid_options(start, stop), *server.binlog_files())
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["gtid"] for line in done.stdout.splitlines()] == expected
    assert expected


@pytest.mark.parametrize("start,stop", [("0-1-5,1-1-3", "0-1-9,1-1-6"), ("0-1-9,1-1-9", None)])
def test_live_stream_gives_the_rows_the_files_give(server, start, stop):
    # the live stream starts at the file holding the GTIDs, past the CREATE TABLE: the
    # column names come from the same server's schema
    dsn = f"mysql://root@localhost/?unix_socket={server.socket}"
    on_files = cli("dump", "--schema-from", dsn, *gtid_options(start, stop),
                   *server.binlog_files())
    live = cli("dump", "--from", dsn, "--server-id", "51", "--schema-from", dsn,
               *gtid_options(start, stop))
    assert live.returncode == 0, live.stderr
    assert live.stdout == on_files.stdout and live.stdout


def test_stop_gtid_ends_a_followed_stream(server):
    live = cli("dump", "--from", f"mysql://root@localhost/?unix_socket={server.socket}",
               "--server-id", "51", "--stop-never", "--stop-gtid", "0-1-4", timeout=30)
    assert live.returncode == 0, live.stderr
    rows = [r for r in map(json.loads, live.stdout.splitlines()) if r["op"] in ("insert", "update", "delete")]
    assert [r["gtid"] for r in rows] == ["0-1-3", "0-1-4"]


@pytest.mark.parametrize("value,message", [
    ("0-1", "expected a MariaDB domain-server-seq"),
    ("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5", "this binlog has MariaDB GTIDs"),
    ("0-1-5,0-2-7", "domain 0 is given twice"),
])
def test_bad_gtid_lists_are_usage_errors(server, value, message):
    done = cli("dump", "--start-gtid", value, *server.binlog_files())
    assert done.returncode == 2 and message in done.stderr


def test_a_mysql_set_as_a_live_start_is_refused_with_a_way_out(server):
    done = cli("dump", "--from", f"mysql://root@localhost/?unix_socket={server.socket}",
               "--server-id", "51", "--start-gtid", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    assert done.returncode == 2
    assert "COM_BINLOG_DUMP_GTID is not supported" in done.stderr and "--start-file" in done.stderr
