"""Every subcommand, driven into every outcome the exit-code table
(binlog/exitcodes.py, docs/troubleshooting.md "Exit codes") documents for it - and no traceback anywhere.

Inputs are real: samples written by MariaDB, copies of them damaged or cut, a fresh
mariadbd for apply/verify-rows, and a closed loopback port for an unreachable server."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from binlog.exitcodes import COMMANDS, Exit

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mariadb-10.11" / "checksum_none.binlog"
UNREACHABLE = "mysql://root:sekret@127.0.0.1:1/"      # nothing listens on port 1
BAD_DSN = "mysql://root:sekret@127.0.0.1:notaport/"


def binlog(*args, env=None, **kw):
    cmd = [sys.executable, "-m", "binlog.cli", *map(str, args)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, **kw)
    # no outcome, documented or not, ends in a traceback or shows a password
    assert "Traceback" not in result.stderr, result.stderr
    assert "sekret" not in result.stderr + result.stdout
    return result


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("exit")
    data = SAMPLE.read_bytes()
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0xFF           # inside an event's body: its CRC32 fails
    (d / "damaged.binlog").write_bytes(damaged)
    (d / "cut.binlog").write_bytes(data[:-5])  # ends inside the last event
    (d / "bad.sql").write_text("CREATE TABLE t (a INT) PARTITION BY nonsense(;\n")
    return d


def test_dump(inputs):
    assert binlog("dump", SAMPLE).returncode == Exit.OK
    r = binlog("dump", inputs / "damaged.binlog")
    assert r.returncode == Exit.INPUT_ERROR and "damaged.binlog @" in r.stderr
    assert binlog("dump", inputs / "missing.binlog").returncode == Exit.USAGE
    assert binlog("dump", "--on-error", "skip", inputs / "damaged.binlog").returncode == Exit.SKIPPED
    assert binlog("dump", inputs / "cut.binlog").returncode == Exit.INCOMPLETE
    r = binlog("dump", "--schema-from", UNREACHABLE, SAMPLE)
    assert r.returncode == Exit.SERVER and "cannot connect" in r.stderr
    # a malformed DSN is bad usage in every command (it was 1 in dump, 2 in apply)
    assert binlog("dump", "--schema-from", BAD_DSN, SAMPLE).returncode == Exit.USAGE


def test_dump_interrupted(inputs):
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "dump", "--follow", SAMPLE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the first line means start-up is over (a fixed sleep raced it on a loaded machine)
    assert proc.stdout is not None and proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == Exit.INTERRUPTED and "Traceback" not in err


def test_stats(inputs):
    assert binlog("stats", SAMPLE).returncode == Exit.OK
    assert binlog("stats", inputs / "damaged.binlog").returncode == Exit.INPUT_ERROR
    assert binlog("stats", "--top", "x", SAMPLE).returncode == Exit.USAGE
    r = binlog("stats", inputs / "cut.binlog")
    assert r.returncode == Exit.INCOMPLETE and "ends inside the event" in r.stderr
    assert binlog("stats", "--schema-from", UNREACHABLE, SAMPLE).returncode == Exit.SERVER


def test_schema(inputs, tmp_path):
    store = tmp_path / "s.sqlite"
    assert binlog("schema", "show", "--schema-store", store).returncode == Exit.OK
    r = binlog("schema", "import", "--schema-store", store, "--schema-ddl", inputs / "bad.sql")
    assert r.returncode == Exit.INPUT_ERROR, r.stderr
    assert binlog("schema", "set", "a.b", "@1", "BLOB", "1",
                  "--schema-store", store).returncode == Exit.USAGE
    assert binlog("schema", "import", "--schema-store", store,
                  "--schema-from", UNREACHABLE).returncode == Exit.SERVER


def test_rewrite(inputs, tmp_path):
    assert binlog("rewrite", SAMPLE, "--to", tmp_path / "a").returncode == Exit.OK
    r = binlog("rewrite", inputs / "damaged.binlog", "--to", tmp_path / "b")
    assert r.returncode == Exit.INPUT_ERROR and "damaged.binlog @" in r.stderr
    assert binlog("rewrite", SAMPLE).returncode == Exit.USAGE      # no --to
    assert binlog("rewrite", inputs / "cut.binlog", "--to", tmp_path / "c").returncode == Exit.INCOMPLETE
    r = binlog("rewrite", SAMPLE, "--to", tmp_path / "d", "--schema-from", UNREACHABLE)
    assert r.returncode == Exit.SERVER and "cannot connect" in r.stderr


def test_apply_and_verify_without_a_server(inputs):
    for command, option in (("apply", "--to"), ("verify-rows", "--against")):
        r = binlog(command, option, UNREACHABLE, SAMPLE)
        assert r.returncode == Exit.SERVER and "cannot connect" in r.stderr, (command, r.stderr)
        assert binlog(command, option, BAD_DSN, SAMPLE).returncode == Exit.USAGE


@pytest.mark.server
def test_apply_and_verify(inputs, mariadb_factory):
    target = mariadb_factory({})
    dsn = f"mysql://root@127.0.0.1:{target.port}/"
    r = binlog("apply", "--to", dsn, SAMPLE)
    assert r.returncode == Exit.OK, r.stderr
    # (safe mode: the rows before the damage are replaced again, the DDL is not rerun)
    r = binlog("apply", "--to", dsn, "--checkpoint-name", "again", "--no-ddl", inputs / "damaged.binlog")
    assert r.returncode == Exit.INPUT_ERROR and "damaged.binlog @" in r.stderr, r.stderr
    assert binlog("verify-rows", "--against", dsn, SAMPLE).returncode == Exit.OK
    assert binlog("verify-rows", "--against", dsn, inputs / "damaged.binlog").returncode == Exit.INPUT_ERROR
    target.execute("UPDATE cs.t SET n = n + 1 ORDER BY id LIMIT 1")
    assert binlog("verify-rows", "--against", dsn, SAMPLE).returncode == Exit.DIFFERENT


def test_ingest_without_the_spark_extra(inputs, tmp_path):
    # The extra's absence, for real: its modules cannot be imported in this interpreter.
    code = ("import sys; sys.modules['pyspark'] = None; sys.modules['pyarrow'] = None; "
            "from binlog.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", code, "ingest", str(SAMPLE), "--to", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == Exit.USAGE, r.stderr
    assert "Traceback" not in r.stderr and "[spark] extra" in r.stderr


def test_history(inputs, tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    lake = tmp_path / "lake"
    assert binlog("ingest", "--no-progress", SAMPLE, "--to", lake).returncode == Exit.OK
    assert binlog("history", lake, "--start-datetime", "2000-01-01 00:00:00").returncode == Exit.OK
    assert binlog("history", tmp_path).returncode == Exit.USAGE         # no changes/ there
    for part in (lake / "changes").rglob("*.parquet"):
        part.write_bytes(b"PAR1 not a Parquet file")
    r = binlog("history", lake, "--start-datetime", "2000-01-01 00:00:00")
    assert r.returncode == Exit.INPUT_ERROR, r.stderr


def test_doctor_without_a_server():
    # 0 and 1 need a real source: tests/binlog/doctor/test_doctor_server.py drives them
    assert binlog("doctor", "--from", UNREACHABLE).returncode == Exit.SERVER
    assert binlog("doctor", "--from", BAD_DSN).returncode == Exit.USAGE
    assert binlog("doctor").returncode == Exit.USAGE


def test_every_command_is_in_the_table():
    from binlog.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


def test_a_subcommand_imports_only_its_own_module(tmp_path):
    """`binlog dump` builds only dump's parser: importing every command module (PyMySQL,
    Spark's options, importlib.metadata for --version) was most of every run's start-up."""
    code = ("import sys; from binlog.cli import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('pymysql', 'importlib.metadata', 'binlog.commands.apply', "
            "'spark_ingest.command') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, "dump", str(SAMPLE)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "[]"


def test_version_and_help_still_list_everything():
    from binlog.cli import build_parser

    r = subprocess.run([sys.executable, "-m", "binlog.cli", "--version"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("binlog "), r.stderr
    sub = next(a for a in build_parser(["--help"])._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)
