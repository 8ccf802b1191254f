"""verify-rows holds at most --memory-rows rows of expected state; past it they go to
temporary files and come back a bucket at a time (binlog/commands/_expected.py).  The
report is the same either way, differences included; the memory is not."""
from __future__ import annotations

import pytest
from hostile.test_large_values import MIB, _peak_rss
from replay_helpers import cli, dsn, run_script

pytestmark = pytest.mark.server

SOURCE = """CREATE DATABASE vm;
CREATE TABLE vm.t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT);
CREATE TABLE vm.pair (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b));
INSERT INTO vm.t SELECT seq, CONCAT('row', seq), seq * 7 FROM vm.seq_1_to_3000;
INSERT INTO vm.pair SELECT seq % 50, CONCAT('k', seq), seq FROM vm.seq_1_to_1200;
UPDATE vm.t SET v = 'updated' WHERE id % 10 = 0;
UPDATE vm.t SET id = id + 10000 WHERE id BETWEEN 100 AND 120;
DELETE FROM vm.t WHERE id % 97 = 0;
UPDATE vm.pair SET v = -v WHERE a = 7;
"""


def report(result) -> tuple:
    lines = result.stdout.decode().splitlines()
    return result.returncode, sorted(l for l in lines if l.startswith("DIFF ")), lines[-1]


def test_spilled_and_held_reports_are_the_same(two_servers):
    source, target = two_servers
    run_script(source, SOURCE)
    files = [str(p) for p in source.binlog_files()]
    applied = cli("apply", "--to", dsn(target), *files)
    assert applied.returncode == 0, applied.stderr.decode()
    run_script(target, """UPDATE vm.t SET n = 0 WHERE id = 5;
DELETE FROM vm.t WHERE id = 10110;
INSERT INTO vm.t VALUES (194, 'back', 1);
UPDATE vm.pair SET v = 1 WHERE a = 7 AND b = 'k7';
""")
    held = cli("verify-rows", "--max-report", "100", "--against", dsn(target), *files)
    spilled = cli("verify-rows", "--max-report", "100", "--memory-rows", "1000", "--against",
                  dsn(target), *files)
    assert report(held) == report(spilled)
    code, diffs, summary = report(held)
    assert code == 6 and len(diffs) == 4, held.stdout.decode()
    # 3000 + 21 moved away + 1200 rows; the 4 differences the target was given
    assert summary == "verify-rows: 4221 row(s) checked, 4217 equal, 4 different"
    assert any("vm.t (id=5): checksum" in d for d in diffs)
    assert any("vm.t (id=10110): missing on the target" in d for d in diffs)
    assert any("vm.t (id=194): deleted by the input" in d for d in diffs)
    assert any("vm.pair (a=7, b='k7'): checksum" in d for d in diffs)
    assert cli("verify-rows", "--memory-rows", "10", "--against", dsn(target), *files).returncode == 2


def test_memory_stays_flat_past_the_limit(two_servers):
    """202,000 rows of expected state (~100 MiB held) against 2,000, with a 5,000-row
    limit: the peak differs by a few MiB."""
    source, target = two_servers
    run_script(source, """CREATE DATABASE vf;
CREATE TABLE vf.t (id INT PRIMARY KEY, v VARCHAR(64));
INSERT INTO vf.t SELECT seq, CONCAT('value-', seq, '-', MD5(seq)) FROM vf.seq_1_to_2000;
""")
    small = [str(p) for p in source.binlog_files()]
    source.flush_logs()
    # one transaction of 100,000 rows (held until its COMMIT: spilled too), then five
    # of 20,000
    for first, last in [(2001, 102000)] + [(n, n + 19999) for n in range(102001, 202001, 20000)]:
        source.execute(f"INSERT INTO vf.t SELECT seq, CONCAT('value-', seq, '-', MD5(seq)) "
                       f"FROM vf.seq_{first}_to_{last}")
    big = [str(p) for p in source.binlog_files()]
    applied = cli("apply", "--to", dsn(target), *big, timeout=300)
    assert applied.returncode == 0, applied.stderr.decode()
    peaks = {name: _peak_rss("--memory-rows", "5000", "--against", dsn(target), *files,
                             command="verify-rows") for name, files in (("small", small), ("big", big))}
    assert peaks["big"] - peaks["small"] < 24 * MIB, (peaks["big"] - peaks["small"]) / MIB
    done = cli("verify-rows", "--memory-rows", "5000", "--against", dsn(target), *big, timeout=300)
    assert done.stdout.decode().splitlines()[-1] == "verify-rows: 202000 row(s) checked, 202000 equal, 0 different"
