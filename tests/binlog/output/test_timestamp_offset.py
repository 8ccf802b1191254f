"""``binlog dump --timestamp-offset --timezone ZONE``: TIMESTAMP values as ISO 8601 with
the zone's offset at each value's instant, across DST changes (both ways, and Lord Howe's
30-minute one).  Expected values come from mariadbd with the zones loaded by
mariadb-tzinfo-to-sql: with ``time_zone`` set to the zone, CAST AS CHAR gives the wall
clock, and TO_SECONDS(ts) - (FLOOR(UNIX_TIMESTAMP(ts)) + TO_SECONDS('1970-01-01')) the offset
(UNIX_TIMESTAMP of a TIMESTAMP column is its stored instant: no ambiguous hour)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.server
REPO = Path(__file__).resolve().parents[3]
ZONES = ("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata")
# UTC instants either side of DST changes of those zones
INSTANTS = [
    "2024-03-31 00:59:59.999999", "2024-03-31 01:00:00", "2024-10-27 00:30:00.5",
    "2024-10-27 01:30:00.5", "2024-03-10 06:59:59", "2024-03-10 07:00:00", "2024-11-03 05:30:00",
    "2024-11-03 06:30:00", "2024-04-06 14:59:59", "2024-04-06 15:00:00", "2024-10-05 15:59:59",
    "2024-10-05 16:00:00", "1970-01-01 00:00:01", "2038-01-19 03:14:07.999999",
]


def _load_zones(server) -> None:
    from support.mariadb_server import find_tool

    tzinfo = find_tool("mariadb-tzinfo-to-sql", "mysql_tzinfo_to_sql")
    client = find_tool("mariadb", "mysql")
    for zone in ZONES:
        sql = subprocess.run([tzinfo, f"/usr/share/zoneinfo/{zone}", zone], capture_output=True,
                             check=True, timeout=60).stdout
        subprocess.run([client, "--no-defaults", f"--socket={server.socket}", "-uroot", "mysql"],
                       input=sql, capture_output=True, check=True, timeout=60)


@pytest.fixture(scope="module")
def binlog(mariadb_server, tmp_path_factory):
    srv = mariadb_server
    _load_zones(srv)
    srv.execute("CREATE DATABASE IF NOT EXISTS tzo")
    srv.execute("DROP TABLE IF EXISTS tzo.t")
    srv.flush_logs()
    srv.execute("CREATE TABLE tzo.t (id INT PRIMARY KEY, ts6 TIMESTAMP(6) NULL, ts0 TIMESTAMP NULL)")
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00', binlog_format = 'ROW'")
        for i, instant in enumerate(INSTANTS):
            cur.execute("INSERT INTO tzo.t VALUES (%s, %s, %s)", (i, instant, instant))
    conn.commit()
    conn.close()
    name, _ = srv.master_status()
    srv.flush_logs()
    path = tmp_path_factory.mktemp("tzo") / name
    srv.copy_binlog(name, path)
    return path


def _server_values(srv, zone: str) -> dict:
    conn = srv.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = %s", (zone,))
            cur.execute("""SELECT id, CAST(ts6 AS CHAR), CAST(ts0 AS CHAR),
                   TO_SECONDS(ts6) - (FLOOR(UNIX_TIMESTAMP(ts6)) + TO_SECONDS('1970-01-01 00:00:00')),
                   TO_SECONDS(ts0) - (UNIX_TIMESTAMP(ts0) + TO_SECONDS('1970-01-01 00:00:00'))
                   FROM tzo.t ORDER BY id""")
            rows = cur.fetchall()
    finally:
        conn.close()
    return {row[0]: (_iso(row[1], row[3]), _iso(row[2], row[4])) for row in rows}


def _iso(wall: str, offset_seconds) -> str:
    minutes = int(offset_seconds) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{wall.replace(' ', 'T')}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _dump(path, *args) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *args, str(path)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return [r for r in map(json.loads, out.stdout.splitlines()) if r["op"] == "insert"]


@pytest.mark.parametrize("zone", ZONES)
def test_offsets_are_the_servers(mariadb_server, binlog, zone):
    want = _server_values(mariadb_server, zone)
    rows = _dump(binlog, "--timestamp-offset", "--timezone", zone)
    got = {r["after"]["id"]: (r["after"]["ts6"], r["after"]["ts0"]) for r in rows}
    assert got == want
    offsets = {v[0][-6:] for v in got.values()}
    assert zone == "Asia/Kolkata" or len(offsets) >= 2, offsets      # both sides of a change


def test_the_ambiguous_hour_is_told_apart(binlog):
    """02:30 happened twice in Berlin on 2024-10-27: the offset tells which."""
    rows = {r["after"]["id"]: r["after"]["ts6"] for r in
            _dump(binlog, "--timestamp-offset", "--timezone", "Europe/Berlin")}
    assert rows[2] == "2024-10-27T02:30:00.500000+02:00"
    assert rows[3] == "2024-10-27T02:30:00.500000+01:00"


def test_without_the_option_nothing_changes_and_the_api_agrees(binlog):
    from zoneinfo import ZoneInfo

    from binlog import BinlogReader

    plain = _dump(binlog, "--timezone", "UTC")
    assert plain[0]["after"]["ts6"] == "2024-03-31 00:59:59.999999"
    utc = _dump(binlog, "--timestamp-offset")
    assert utc[0]["after"]["ts6"] == "2024-03-31T00:59:59.999999+00:00"
    cli = {r["after"]["id"]: r["after"]["ts0"] for r in
           _dump(binlog, "--timestamp-offset", "--timezone", "America/New_York")}
    api = {c.after["id"]: c.after["ts0"] for c in
           BinlogReader([binlog], tz=ZoneInfo("America/New_York"), timestamp_offset=True).changes()
           if c.table == "t"}
    assert api == cli


def test_debezium_gives_zoned_timestamps_in_utc_whatever_the_zone(mariadb_server, binlog):
    """Debezium's ZonedTimestamp: ISO 8601 in UTC with 'Z' (the MySQL connector's
    documented form), with or without --timezone / --timestamp-offset."""
    conn = mariadb_server.connect()
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT id, DATE_FORMAT(ts6, '%Y-%m-%dT%H:%i:%s.%fZ') FROM tzo.t")
        want = dict(cur.fetchall())
    conn.close()
    for extra in ((), ("--timezone", "Europe/Berlin"), ("--timezone", "Australia/Lord_Howe", "--timestamp-offset")):
        out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "debezium", *extra,
                              str(binlog)], capture_output=True, text=True, timeout=120, cwd=REPO)
        assert out.returncode == 0, out.stderr
        events = [json.loads(line) for line in out.stdout.splitlines() if '"op":"c"' in line]
        assert {e["after"]["id"]: e["after"]["ts6"] for e in events} == want, extra
