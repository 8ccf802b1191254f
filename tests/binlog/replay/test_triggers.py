"""Replaying a binlog written under triggers and stored routines.

The source server runs a real trigger workload: an AFTER INSERT trigger on ``orders``
writes ``audit`` rows, a procedure updates ``orders``; both are defined by another account
(``DEFINER=`app`@`%```).  In ROW format the binlog holds every row the trigger and the
procedure wrote, so a replay must give the target exactly those rows: the definitions are
not replayed by default, ``apply`` refuses target tables with triggers unless told, and
``--strip-definer`` drops the account the target may not have.
"""
from __future__ import annotations

import pytest
from replay_helpers import cli, dsn, mariadb_client

pytestmark = pytest.mark.server

WORKLOAD = [
    "CREATE USER 'app'@'%'",
    "CREATE DATABASE shop",
    "GRANT ALL ON shop.* TO 'app'@'%'",
    "CREATE TABLE shop.orders (id INT PRIMARY KEY, amount INT)",
    "CREATE TABLE shop.audit (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT, note VARCHAR(20))",
    "CREATE DEFINER=`app`@`%` TRIGGER shop.orders_ai AFTER INSERT ON shop.orders FOR EACH ROW "
    "INSERT INTO shop.audit (order_id, note) VALUES (NEW.id, 'created')",
    "CREATE DEFINER=`app`@`%` PROCEDURE shop.bump() UPDATE shop.orders SET amount = amount + 1",
    "INSERT INTO shop.orders VALUES (1, 10), (2, 20)",
    "CALL shop.bump()",
    "UPDATE shop.orders SET amount = 5 WHERE id = 1",
    "INSERT INTO shop.orders VALUES (3, 30)",
]
TABLES = ("shop.orders", "shop.audit")


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from support.mariadb_server import MariaDBServer

    with MariaDBServer({"binlog_row_metadata": "FULL"}) as srv:
        srv.start()
        srv.flush_logs()
        first = srv.master_status()[0]
        for stmt in WORKLOAD:
            srv.execute(stmt)
        srv.flush_logs()
        names = srv.binlog_names()
        srv.files = [srv.binlog_dir / n for n in names[names.index(first):-1]]
        srv.rows = {t: srv.query(f"SELECT * FROM {t} ORDER BY id") for t in TABLES}
        assert len(srv.rows["shop.audit"]) == 3          # the trigger fired three times
        yield srv


def executable(script: str) -> str:
    """The script without its comment lines (they quote the statements not replayed)."""
    return "\n".join(line for line in script.splitlines() if not line.startswith("-- "))


def rows(server):
    return {t: server.query(f"SELECT * FROM {t} ORDER BY id") for t in TABLES}


def test_sql_replay_gives_exactly_the_binlog_rows(source, mariadb_factory):
    target = mariadb_factory({})
    dump = cli("dump", "--format", "sql", *source.files)
    assert dump.returncode == 0, dump.stderr.decode()
    script = dump.stdout.decode()
    assert "TRIGGER" not in executable(script) and "TRIGGER definition not replayed" in script
    assert "PROCEDURE definition not replayed" in script
    warnings = [w for w in dump.stderr.decode().splitlines() if "--routines" in w]
    assert len(warnings) == 1
    loaded = mariadb_client(target, dump.stdout)
    assert loaded.returncode == 0, loaded.stderr.decode()
    assert rows(target) == source.rows
    assert target.query("SELECT COUNT(*) FROM information_schema.TRIGGERS") == [(0,)]


def test_routines_and_strip_definer_on_request(source):
    dump = cli("dump", "--format", "sql", "--routines", "--strip-definer", *source.files)
    assert dump.returncode == 0, dump.stderr.decode()
    script = executable(dump.stdout.decode())
    assert "DEFINER" not in script
    assert "CREATE TRIGGER shop.orders_ai AFTER INSERT" in script
    assert "CREATE PROCEDURE `shop`.`bump`()" in script
    kept = cli("dump", "--format", "sql", "--routines", *source.files).stdout.decode()
    assert "CREATE DEFINER=`app`@`%` TRIGGER" in kept


def test_apply_refuses_target_tables_with_triggers(source, mariadb_factory):
    target = mariadb_factory({})
    for i in (1, 3, 4, 5):              # the schema and its trigger, no data
        target.execute(WORKLOAD[i].replace("DEFINER=`app`@`%` ", ""))
    refused = cli("apply", "--to", dsn(target), "--no-ddl", *source.files)
    assert refused.returncode == 5, refused.stderr.decode()
    assert "shop.orders has trigger(s) orders_ai" in refused.stderr.decode()
    assert target.query("SELECT COUNT(*) FROM shop.orders") == [(0,)]
    told = cli("apply", "--to", dsn(target), "--no-ddl", "--allow-triggers", *source.files)
    assert told.returncode == 0, told.stderr.decode()
    # What the refusal prevents: the target's trigger wrote its own audit rows again.
    assert len(target.query("SELECT * FROM shop.audit")) > len(source.rows["shop.audit"])


def test_apply_into_a_fresh_target_skips_the_definitions(source, mariadb_factory):
    target = mariadb_factory({})
    applied = cli("apply", "--to", dsn(target), *source.files)
    assert applied.returncode == 0, applied.stderr.decode()
    assert "--routines" in applied.stderr.decode()
    assert rows(target) == source.rows
