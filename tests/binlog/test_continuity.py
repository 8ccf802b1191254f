"""A binlog missing in the middle of a set is an error naming it and the
GTIDs it held (or, with --allow-gaps, a warning), never silently skipped.

Binlogs 1..3 of a real mariadbd hold one insert each (FLUSH BINARY LOGS between them);
the input lacks the middle one.  Expected names and GTIDs come from the server (SHOW
BINARY LOGS, @@gtid_binlog_pos after each insert)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.paths import write_index

pytestmark = pytest.mark.server


def binlog(*args):
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    from support.gaps import gap_chain

    return gap_chain(tmp_path_factory, (1, 2, 3))


def rows(result):
    return [r for r in map(json.loads, result.stdout.splitlines()) if r["op"] == "insert"]


def test_no_gap_reads_everything(chain):
    r = binlog("dump", *[chain["full"] / n for n in chain["names"]])
    assert r.returncode == 0, r.stderr
    assert [x["after"]["id"] for x in rows(r)] == [1, 2, 3]


def test_index_naming_a_missing_binlog(chain):
    r = binlog("dump", chain["gap"])
    assert r.returncode == 1, r.stderr
    assert chain["names"][1] in r.stderr and "--allow-gaps" in r.stderr


def test_rotate_and_gtids_name_the_missing_binlog(chain):
    names, gtids = chain["names"], chain["gtids"]
    for args in ([chain["full"] / names[0], chain["full"] / names[2]], [chain["noindex"]]):
        r = binlog("dump", *args)
        assert r.returncode == 1, r.stderr
        assert f"missing from the input between {names[0]} and {names[2]}: {names[1]}" in r.stderr
        # the GTID the middle binlog held: the server's gtid_binlog_pos after its insert
        assert f"GTID(s) {gtids[1]} " in r.stderr, r.stderr
        # nothing of the binlog after the gap was given out
        assert [x["after"]["id"] for x in rows(r)] == [1]


def test_allow_gaps_reads_on_with_a_warning(chain):
    r = binlog("dump", "--allow-gaps", chain["gap"])
    assert r.returncode == 0, r.stderr
    assert "warning" in r.stderr and chain["names"][1] in r.stderr
    assert [x["after"]["id"] for x in rows(r)] == [1, 3]


def test_every_command_stops_at_the_gap(chain, mariadb_factory):
    assert binlog("stats", chain["noindex"]).returncode == 1
    target = mariadb_factory({})
    dsn = f"mysql://root@127.0.0.1:{target.port}/"
    r = binlog("apply", "--to", dsn, chain["gap"])
    assert r.returncode == 1 and chain["names"][1] in r.stderr, r.stderr
    r = binlog("verify-rows", "--against", dsn, chain["noindex"])
    assert r.returncode == 1 and chain["names"][1] in r.stderr, r.stderr


def test_an_index_naming_a_binlog_not_created_yet(chain, tmp_path):
    """A relay lists a file in its index before it creates it (sources/relay.py): the
    last binlog listed but not there is no gap - the ones there are read, a warning
    names it - and a follower started then goes on to it when it comes (by the ROTATE
    ending the binlog before it)."""
    import shutil
    import time

    names = chain["names"]
    for name in names[:2]:
        shutil.copy(chain["full"] / name, tmp_path / name)
    write_index(tmp_path, names)
    r = binlog("dump", tmp_path)
    assert r.returncode == 0, r.stderr
    assert [x["after"]["id"] for x in rows(r)] == [1, 2]
    assert f"lists {names[2]} after {names[1]}" in r.stderr, r.stderr

    follower = subprocess.Popen([sys.executable, "-m", "binlog.cli", "dump", "--follow", "--follow-timeout", "5",
                                 tmp_path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    shutil.copy(chain["full"] / names[2], tmp_path / names[2])
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 0, err
    assert [x["after"]["id"] for x in map(json.loads, out.splitlines()) if x["op"] == "insert"] == [1, 2, 3]
