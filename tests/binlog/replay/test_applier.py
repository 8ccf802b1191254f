"""The applier (binlog.replay.applier) driven in this process, against real mariadbd: a
source runs the sample workload, hostile strings and marked transactions; the Applier,
built from the options ``binlog apply`` parses, applies the source's own binlog files to
a private target.  The target must then hold the source's contents (CHECKSUM TABLE and
row by row, values as the server renders them), its checkpoint row must be the source's
end (file, position, GTID, number of transactions), and every source transaction must
have been committed on the target exactly once: the target's own binlog shows each
marker row once, across a second run over the same input, a resume after new source
transactions and a connection lost before a commit."""
from __future__ import annotations

import pytest
from replay_helpers import assert_same_contents, dsn, run_script, script
from workers_helpers import committed_markers, many_script

pytestmark = pytest.mark.server

DBS = ["tf", "hx", "ap"]
MARKED = 40         # transactions with a marker row (ap.mk) in the first part

#: (method, safe mode, workers) of the runs: the sequential pipeline, the parallel
#: workers, both with REPLACE (safe) and plain INSERT/UPDATE/DELETE, BINLOG statements
VARIANTS = [
    pytest.param(["--safe"], id="sql-safe"),
    pytest.param(["--no-safe"], id="sql-no-safe"),
    pytest.param(["--workers", "4", "--safe"], id="workers4-safe"),
    pytest.param(["--workers", "4", "--no-safe"], id="workers4-no-safe"),
    pytest.param(["--method", "binlog"], id="binlog"),
]


def applier_for(target, files, *options):
    """An Applier of ``binlog apply --to TARGET OPTIONS FILES`` (the command's parser,
    its checks and its reader functions), not run yet."""
    from binlog.cli import build_parser
    from binlog.commands.apply import input_of, options_of
    from binlog.replay.applier import Applier

    argv = ["apply", "--to", dsn(target), "--quiet", "--batch-transactions", "3",
            *options, *files]
    args = build_parser(argv).parse_args(argv)
    return Applier(options_of(args), input_of(args))


def checkpoint(target) -> tuple:
    rows = target.query("SELECT binlog_file, binlog_pos, gtid, resume_file, resume_pos, "
                        "transactions FROM binlog_apply.checkpoint WHERE name = 'default'")
    assert len(rows) == 1, rows
    return tuple(rows[0])


def source_end(source) -> tuple:
    """(file, position, GTID, transactions) after the source's last transaction: every
    one (DDL included) has a GTID of domain 0, server 1, numbered from 1."""
    file, pos = source.master_status()
    gtid = source.query("SELECT @@gtid_binlog_pos")[0][0]
    return file, pos, gtid, int(gtid.rsplit("-", 1)[1])


def assert_applied_to_the_end(source, target) -> None:
    file, pos, gtid, count = source_end(source)
    assert checkpoint(target) == (file, pos, gtid, file, pos, count)
    assert_same_contents(source, target, DBS)


@pytest.fixture
def loaded(two_servers):
    source, target = two_servers
    run_script(source, script("types_full.sql"))
    run_script(source, script("hostile.sql"))
    run_script(source, many_script("ap", MARKED, 3))
    return source, target, [str(p) for p in source.binlog_files()]


@pytest.mark.parametrize("options", VARIANTS)
def test_applies_the_source_once_and_a_second_run_nothing(loaded, options):
    source, target, files = loaded
    applier = applier_for(target, files, *options)
    assert applier.run() == 0
    assert applier.stats["transactions"] >= MARKED and applier.stats["skipped"] == 0
    assert_applied_to_the_end(source, target)

    again = applier_for(target, files, *options)
    assert again.run() == 0
    assert again.stats["transactions"] == again.stats["rows"] == again.stats["commits"] == 0
    assert again.stats["ddl"] == again.stats["statements"] == 0
    assert_applied_to_the_end(source, target)
    assert sorted(committed_markers(target, "ap")) == list(range(1, MARKED + 1))


@pytest.mark.parametrize("options", [VARIANTS[0], VARIANTS[3]])
def test_a_run_resumes_at_the_checkpoint_after_new_source_transactions(loaded, options):
    source, target, files = loaded
    assert applier_for(target, files, *options).run() == 0
    # more marked transactions (markers MARKED+1..) and DDL, in the same files and a new one
    source.flush_logs()
    run_script(source, "USE ap;\nALTER TABLE ap.c1 ADD COLUMN late INT NULL;\n" + "\n".join(
        f"BEGIN;\nINSERT INTO ap.mk VALUES ({i});\nUPDATE ap.hot SET n = n + {i} WHERE id = 1;\n"
        f"COMMIT;" for i in range(MARKED + 1, MARKED + 11)))
    files = [str(p) for p in source.binlog_files()]
    second = applier_for(target, files, *options)
    assert second.run() == 0
    assert second.stats["transactions"] == 10 and second.stats["ddl"] == 1
    assert_applied_to_the_end(source, target)
    assert sorted(committed_markers(target, "ap")) == list(range(1, MARKED + 11))


def test_a_connection_lost_before_a_commit_is_resumed_in_the_same_run(loaded, monkeypatch):
    """The socket is shut before the 2nd target COMMIT: that batch is rolled back by
    the server, the run reconnects and resumes from the checkpoint the 1st committed."""
    source, target, files = loaded
    monkeypatch.setenv("BINLOG_APPLY_FAULT", "drop-connection-before-commit:2")
    applier = applier_for(target, files, "--retries", "1", "--retry-timeout", "10")
    assert applier.run() == 0
    assert_applied_to_the_end(source, target)
    assert sorted(committed_markers(target, "ap")) == list(range(1, MARKED + 1))
