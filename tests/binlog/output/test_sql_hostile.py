"""`binlog dump --format sql | mariadb` with statement text and names an attacker wrote:
the real `mariadb` client runs no shell command, sources no file
and selects no other database, whatever the DDL text holds; a DDL ending in a
``-- comment`` ends there; the script still replays everything exactly."""
from __future__ import annotations

import subprocess

import pytest
from replay_helpers import assert_same_contents, cli, mariadb_client
from support.mariadb_server import find_tool

pytestmark = pytest.mark.server


def _hostile_statements(marks, sourced) -> list[str]:
    bang, system = marks
    # The server takes "--" followed by a control character as a comment; the client does
    # not, so after "--\x01 '" the client is inside a string and the server is not: the
    # next line's "'" flips both, and the line after it is outside any string for the
    # client only.  The last line flips them back.
    return [
        "CREATE DATABASE hq CHARACTER SET utf8mb4",
        "USE hq",
        f"CREATE TABLE t1 (a INT) --\x01 '\nCOMMENT '\n\\! touch {bang}\n' --\x01 '",
        f"CREATE TABLE t2 (a INT) --\x01 '\nCOMMENT '\n\\. {sourced}\n' --\x01 '",
        # with --force: the client ends a statement at the delimiter, then "system" starts one
        f'CREATE TABLE t3 (a VARCHAR(200) DEFAULT --\x01 "\n" /*!*/;\nsystem touch {system}\n" --\x01 "\n)',
        "CREATE TABLE t4 (a INT PRIMARY KEY, s VARCHAR(50)) -- a trailing comment",
        "CREATE TABLE t5 (a INT PRIMARY KEY, s VARCHAR(50))",
        "CREATE TABLE `t6\n\\! true` (a INT PRIMARY KEY)",
        "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'",
        "CREATE TABLE t7 (a INT PRIMARY KEY, s VARCHAR(10) DEFAULT 'x\\') COMMENT 'y\\'",
        "SET SESSION sql_mode = DEFAULT",
        "CREATE DATABASE `hq``x`",                         # a backtick: USE must not misread it
        "USE `hq``x`",
        "CREATE TABLE tt (a INT PRIMARY KEY)",
        "INSERT INTO tt VALUES (1)",
        "USE hq",
        "INSERT INTO t4 VALUES (1, '--\x01 x'), (2, '\\\\! touch nothing'), (3, 'a\nsystem ls')",
        "INSERT INTO t5 VALUES (1, 'after the comment')",
        "INSERT INTO `t6\n\\! true` VALUES (1)",
        "INSERT INTO t7 (a) VALUES (1)",
    ]


def _show_create(server, db) -> dict:
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (db,))
        names = sorted(r[0] for r in cur.fetchall())
        out = {}
        for name in names:
            cur.execute(f"SHOW CREATE TABLE `{db.replace('`', '``')}`.`{name.replace('`', '``')}`")
            out[name] = cur.fetchone()[1]
        return out
    finally:
        conn.close()


def test_hostile_statement_text_runs_nothing_in_the_client(mariadb_factory, tmp_path):
    source = mariadb_factory({"binlog_row_metadata": "FULL"})
    target = mariadb_factory({})
    marks = (tmp_path / "pwned-bang", tmp_path / "pwned-system")
    sourced = tmp_path / "sourced.sql"
    sourced.write_text("CREATE DATABASE pwned_source;\n")
    conn = source.connect()
    try:
        cur = conn.cursor()
        cur.execute("SET NAMES utf8mb4")
        cur.execute("SET time_zone = '+00:00'")
        for sql in _hostile_statements(marks, sourced):
            cur.execute(sql)
    finally:
        conn.close()
    files = [str(p) for p in source.binlog_files()]
    dump = cli("dump", "--format", "sql", *files)
    assert dump.returncode == 0, dump.stderr.decode()
    text = dump.stdout

    run = mariadb_client(target, text, "--force")
    assert not marks[0].exists() and not marks[1].exists(), run.stderr.decode()
    assert b"sandbox" not in run.stderr           # nothing even tried a client command
    assert run.returncode == 0, run.stderr.decode()
    names = {r[0] for r in target.query("SHOW DATABASES")}
    assert "pwned_source" not in names and {"hq", "hq`x"} <= names
    assert_same_contents(source, target, ["hq", "hq`x"])
    for db in ("hq", "hq`x"):
        assert _show_create(source, db) == _show_create(target, db)

    # the first line is mariadb-dump's own sandbox line, byte for byte
    theirs = subprocess.run([find_tool("mariadb-dump", "mysqldump"), "--no-defaults",
                             f"--socket={target.socket}", "-uroot", "--no-data", "mysql", "db"],
                            capture_output=True, check=True).stdout
    assert text.split(b"\n")[0] == theirs.split(b"\n")[0] == b"/*M!999999\\- enable the sandbox mode */ "


def test_a_script_with_a_client_command_is_refused_in_sandbox_mode(mariadb_server, tmp_path):
    """The sandbox line really is honoured by this client: a command after it fails."""
    mark = tmp_path / "pwned"
    script = f"/*M!999999\\- enable the sandbox mode */ \nSELECT 1;\n\\! touch {mark}\n".encode()
    run = mariadb_client(mariadb_server, script, "--force")
    assert not mark.exists() and b"sandbox" in run.stderr
