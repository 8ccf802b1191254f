"""What ``binlog serve`` tells monitoring (binlog/serve/status.py): ``--status FILE`` and
``SHOW BINLOG SERVE STATUS`` give the served binlogs' end, the relay's and the upstream's
positions (``upstream.json``, kept by the fetch child), the lag behind the upstream and
each client's position, on a real source followed through fetch and rewrite."""
from __future__ import annotations

import json
import time

import pymysql
import pytest
from support.serve_process import PASSWORD, Serve, follow_raw

from binlog.serve.status import _behind

pytestmark = pytest.mark.server


def wait_for(read, ready, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if value is not None and ready(value):
            return value
        assert time.monotonic() < deadline, f"not there in time: {value}"
        time.sleep(0.1)


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def test_status_file_and_query_follow_the_upstream(mariadb_factory, tmp_path):
    source = mariadb_factory({"server_id": 1})
    source.execute("SET GLOBAL mysql56_temporal_format = OFF")
    source.execute(f"CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'")
    source.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%'")
    source.execute("CREATE DATABASE d")
    source.execute("CREATE TABLE d.t (id INT PRIMARY KEY, at DATETIME(3))")
    status_path = tmp_path / "status.json"
    serve = Serve(None, tmp_path, "--upstream", f"mysql://root@localhost/?unix_socket={source.socket}",
                  "--relay", tmp_path / "relay", "--status", status_path)
    first = source.binlog_names()[0]
    follower = None
    try:
        for i in range(20):
            source.execute(f"INSERT INTO d.t VALUES ({i}, '2024-01-02 03:04:05.{i:03d}')")
        end = source.master_status()[1]
        status = wait_for(lambda: read_json(status_path),
                          lambda s: (s["upstream"] or {}).get("position") == end
                          and s["behind_upstream"] == {"bytes": 0, "seconds": 0})
        assert status["served"]["file"] == first and status["relay"]["file"] == first
        assert status["served"]["input_position"] == end        # the rewrite's map: the relay's end
        assert status["served"]["position"] >= end               # rewritten: legacy columns grew
        assert status["upstream"]["caught_up"] is True
        (tmp_path / "copy").mkdir()
        follower = follow_raw(serve, first, tmp_path / "copy")
        status = wait_for(lambda: read_json(status_path), lambda s: any(
            c["command"] == "Binlog Dump" and c["position"] == s["served"]["position"] for c in s["clients"]))
        client = next(c for c in status["clients"] if c["command"] == "Binlog Dump")
        assert client["bytes_behind"] == 0 and client["file"] == first and client["user"] == "repl"
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW BINLOG SERVE STATUS")
                (text,), = cur.fetchall()
        finally:
            conn.close()
        queried = json.loads(text)
        assert set(queried) == set(status) and queried["served"]["file"] == first
    finally:
        if follower is not None:
            follower.kill()
            follower.wait()
        serve.stop()


def test_the_lag_counts_the_relay_files_between():
    """Bytes from the served position (in the relay's coordinates) to the upstream's,
    over the relay's files between; None when the upstream or the relay is unknown."""
    relay = {"file": "b.000003", "position": 700, "files": {"b.000001": 1000, "b.000002": 504, "b.000003": 700}}
    served = {"file": "b.000001", "position": 900, "input_position": 800, "event_time": None}
    upstream = {"file": "b.000003", "position": 900}

    class Logs:
        @staticmethod
        def last_event_time(name):
            return int(time.time()) - 30

    behind = _behind(served, relay, upstream, Logs)
    assert behind["bytes"] == (1000 - 800) + (504 - 4) + (900 - 4)
    assert 29 <= behind["seconds"] <= 31
    caught = _behind({**served, "file": "b.000003", "input_position": 900}, relay, upstream, Logs)
    assert caught == {"bytes": 0, "seconds": 0}
    assert _behind(served, relay, None, Logs) is None
    assert _behind(served, None, upstream, Logs) is None
