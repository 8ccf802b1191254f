"""``binlog doctor`` against real MariaDB 10.11 servers.

The facts the report rests on are measured here on the server, not assumed: the
``/* mariadb-5.3 */`` marker (N = 0 included, not in DATA_TYPE); a table copy under
``mysql56_temporal_format=ON`` converts (the next TABLE_MAP, read with our stream, has
codes 17/18/19), under OFF it does not; ALGORITHM=INPLACE and LOCK=NONE are refused
with error 1846.  Then doctor must find each planted problem on one source, nothing on
a clean one, no longer report a converted table, print JSON valid against its schema,
and never show the password nor raw control characters from the server.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pymysql
import pytest

from binlog.doctor.report import load_schema
from binlog.events import TableMapEvent
from binlog.stream import NEED_DATA, EventStream

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[3]
PASSWORD = "sekret-Pw-42"
ESC_TABLE = "odd\x1b[31mname"


def doctor(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "binlog.cli", "doctor", *map(str, args)],
                            cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    return result


def root_dsn(server) -> str:
    return f"mysql://root@localhost/?unix_socket={server.socket}"


def report(*args) -> tuple[int, dict]:
    result = doctor(*args, "--json")
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, load_schema())
    return result.returncode, doc


def of(doc: dict, check: str, table: str | None = None) -> list[dict]:
    return [f for f in doc["findings"] if f["check"] == check and (table is None or f["table"] == table)]


def table_maps(server) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every TABLE_MAP in the server's binlog files, read with our own stream."""
    found = []
    for path in server.binlog_files():
        stream = EventStream(path.name)
        stream.feed(path.read_bytes())
        stream.close()
        while (event := stream.next_event()) is not NEED_DATA:
            if isinstance(event, TableMapEvent):
                found.append((event.db, event.table, tuple(c.binlog_type for c in event.columns)))
    return found


def last_types(server, db: str, table: str) -> tuple[int, ...]:
    return [t for d, n, t in table_maps(server) if (d, n) == (db, table)][-1]


@pytest.fixture(scope="module")
def source():
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"mysql56_temporal_format": "OFF", "expire_logs_days": 0.1}) as srv:
        _plant(srv)
        yield srv


def _plant(srv) -> None:
    x = srv.execute
    x("CREATE DATABASE src")
    x("CREATE TABLE src.leg (id INT PRIMARY KEY, a DATETIME(6), b TIME(3), c TIMESTAMP(2) NULL, "
      "z DATETIME)")
    x("CREATE TABLE src.leg0 (id INT PRIMARY KEY, z DATETIME)")
    x("INSERT INTO src.leg VALUES (1, '2020-01-02 03:04:05.123456', '-01:02:03.5', NULL, "
      "'2020-01-01 00:00:00')")
    srv.set_global("mysql56_temporal_format", "ON")
    x("CREATE TABLE src.modern (id INT PRIMARY KEY, a DATETIME(6), b TIME(3))")
    x("INSERT INTO src.modern VALUES (1, '2020-01-02 03:04:05.123456', '01:02:03.5')")
    x("CREATE TABLE src.nokey (a INT, b VARCHAR(10))")
    x("CREATE TABLE src.trg (id INT PRIMARY KEY, n INT)")
    x("CREATE TRIGGER src.trg_bi BEFORE INSERT ON src.trg FOR EACH ROW SET NEW.n = NEW.n + 1")
    x("CREATE TABLE src.stm (id INT PRIMARY KEY, v INT)")
    x("SET SESSION binlog_format = STATEMENT")
    x("INSERT INTO src.stm VALUES (1, 1)")
    x("SET SESSION binlog_format = ROW")
    x("CREATE TABLE src.geo (id INT PRIMARY KEY, g GEOMETRY NOT NULL, SPATIAL INDEX (g))")
    x("CREATE TABLE src.ft (id INT PRIMARY KEY, body TEXT, FULLTEXT (body))")
    x(f"CREATE TABLE src.`{ESC_TABLE}` (a INT)")
    x("CREATE USER nomon@'%%' IDENTIFIED BY %s", (PASSWORD,))
    x("GRANT REPLICATION SLAVE, RELOAD ON *.* TO nomon@'%'")
    x("GRANT SELECT ON src.* TO nomon@'%'")
    # every privilege through a default role (information_schema does not show them)
    x("CREATE ROLE migr")
    x("GRANT REPLICATION SLAVE, BINLOG MONITOR, RELOAD ON *.* TO migr")
    x("GRANT SELECT, TRIGGER ON src.* TO migr")
    x("CREATE USER viarole@'%%' IDENTIFIED BY %s", (PASSWORD,))
    x("GRANT migr TO viarole@'%'")
    x("SET DEFAULT ROLE migr FOR viarole@'%'")


def test_the_server_marks_legacy_columns_n0_included(source):
    rows = dict(source.query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                             "WHERE TABLE_SCHEMA = 'src' AND TABLE_NAME = 'leg'"))
    assert rows["a"] == "datetime(6) /* mariadb-5.3 */"
    assert rows["z"] == "datetime /* mariadb-5.3 */"          # N = 0 is marked too
    types = dict(source.query("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
                              "WHERE TABLE_SCHEMA = 'src' AND TABLE_NAME = 'leg'"))
    assert types["a"] == "datetime"                            # DATA_TYPE is not
    create = source.query("SHOW CREATE TABLE src.leg")[0][1]
    assert "`b` time(3) /* mariadb-5.3 */" in create
    described = {r[0]: r[1] for r in source.query("DESCRIBE src.leg")}
    assert described["c"] == "timestamp(2) /* mariadb-5.3 */"
    # the binlog agrees: legacy codes 12/11/7 (DATETIME/TIME/TIMESTAMP), 18/19 for modern
    assert last_types(source, "src", "leg")[1:] == (12, 11, 7, 12)
    assert last_types(source, "src", "modern")[1:] == (18, 19)


def test_doctor_finds_each_planted_problem(source):
    code, doc = report("--from", root_dsn(source), "--database", "src")
    assert code == 1 and doc["blocks"]
    legacy, = of(doc, "legacy-temporal", "src.leg")
    assert legacy["severity"] == "blocker"
    assert [c["name"] for c in legacy["details"]["columns"]] == ["a", "b", "c", "z"]
    assert legacy["details"]["table_map"]["types"][1:] == [12, 11, 7, 12]
    assert "ALTER TABLE `src`.`leg` FORCE" in legacy["fix"] and "1846" in legacy["fix"]
    assert "go-mysql / TiDB DM" in legacy["details"]["consumers"]
    assert of(doc, "legacy-temporal-n0", "src.leg0")[0]["severity"] == "info"
    assert not [f for f in doc["findings"] if f["table"] == "src.modern"]
    assert of(doc, "no-key", "src.nokey")[0]["severity"] == "warning"
    assert of(doc, "trigger", "src.trg")[0]["details"]["triggers"] == ["trg_bi"]
    stm, = of(doc, "statement-logged-changes", "src.stm")
    assert stm["severity"] == "blocker" and stm["details"]["count"] == 1
    retention, = of(doc, "binlog-retention")
    assert retention["severity"] == "blocker"
    assert retention["details"]["retention_seconds"] == pytest.approx(0.1 * 86400)
    # the server keeps the two variables in step: expire_logs_days=0.1 reads back as 8640 s
    assert source.query("SELECT @@binlog_expire_logs_seconds")[0][0] == 8640
    # a clean table of the same server gets nothing
    assert not of(doc, "no-key", "src.leg")


def test_mariadb_binlog_fails_on_the_legacy_table(source, tmp_path):
    """The consumer the report names last: mariadb-binlog -v gives up on the legacy rows."""
    from support.mariadb_server import find_tool

    files = [str(p) for p in source.binlog_files()]
    done = subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"), "-v", *files],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr == ""
    assert "### INSERT INTO `src`.`leg`" not in done.stdout


def test_statement_logged_change_is_in_the_servers_binlog(source):
    events = source.query("SHOW BINLOG EVENTS")
    assert any("INSERT INTO src.stm" in str(e[5]) for e in events)


def test_user_without_replication_client(source):
    dsn = f"mysql://nomon:{PASSWORD}@127.0.0.1:{source.port}/"
    code, doc = report("--from", dsn, "--database", "src")
    assert code == 1
    privilege = [f for f in of(doc, "privilege") if "BINLOG MONITOR" in f["reason"]]
    assert privilege and privilege[0]["severity"] == "blocker"
    assert "error 1227" in privilege[0]["reason"]      # the server's own refusal
    assert not [f for f in of(doc, "privilege") if "REPLICATION SLAVE" in f["reason"]]
    assert doc["source"]["user"] == "nomon@%"
    # the text form too, and a failed login: the password is never printed
    text = doctor("--from", dsn, "--database", "src")
    assert text.returncode == 1 and "BLOCKER  privilege" in text.stdout
    wrong = doctor("--from", f"mysql://nomon:{PASSWORD}x@127.0.0.1:{source.port}/")
    assert wrong.returncode == 5 and "cannot connect to the source" in wrong.stderr


def test_privileges_through_a_role(source):
    code, doc = report("--from", f"mysql://viarole:{PASSWORD}@127.0.0.1:{source.port}/",
                       "--database", "src")
    assert of(doc, "privilege") == []
    assert of(doc, "trigger", "src.trg")                 # TRIGGER through the role too
    assert of(doc, "binlog-scan")[0]["details"]["complete"]


def test_server_text_is_inert(source):
    text = doctor("--from", root_dsn(source), "--database", "src")
    assert "\x1b" not in text.stdout and "odd\\x1b[31mname" in text.stdout
    raw = doctor("--from", root_dsn(source), "--database", "src", "--json").stdout
    assert "\x1b" not in raw and json.loads(raw)


def test_tidb_target_kind(source):
    code, doc = report("--from", root_dsn(source), "--database", "src", "--target-kind", "tidb")
    assert doc["target"] == {"address": None, "version": None, "tidb": True}
    assert of(doc, "tidb-spatial", "src.geo")[0]["severity"] == "blocker"
    assert of(doc, "tidb-spatial-index", "src.geo")
    assert of(doc, "tidb-fulltext", "src.ft")[0]["details"]["names"] == ["body"]
    assert of(doc, "tidb-trigger", "src.trg")


def test_exit_codes(source):
    assert doctor("--from", "mysql://root:x@127.0.0.1:1/").returncode == 5
    assert doctor("--from", "mysql://root:x@127.0.0.1:notaport/").returncode == 2
    assert doctor("--from", root_dsn(source), "--scan-bytes", "0").returncode == 2
    assert doctor().returncode == 2


def test_clean_server_no_false_alarm(mariadb_factory):
    clean = mariadb_factory()
    clean.execute("CREATE DATABASE shop")
    clean.execute("CREATE TABLE shop.orders (id BIGINT PRIMARY KEY AUTO_INCREMENT, "
                  "placed DATETIME(6) NOT NULL, t TIME(3), ts TIMESTAMP(2) NULL, "
                  "note VARCHAR(40), UNIQUE KEY (note))")
    clean.execute("INSERT INTO shop.orders (placed, t, note) VALUES (NOW(6), '12:00:00.5', 'a')")
    clean.flush_logs()                   # the scan crosses from one binlog into the next
    clean.execute("UPDATE shop.orders SET note = 'b'")
    # a replica with the id 1 is connected: doctor's dump (id 0) must not kill it
    replica = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from", root_dsn(clean),
                                "--to", clean.basedir / "relay", "--server-id", "1", "--stop-never"],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dump_threads = "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'"
    deadline = time.monotonic() + 60
    while not clean.query(dump_threads) and time.monotonic() < deadline:
        time.sleep(0.1)
    before = clean.query(dump_threads)
    assert len(before) == 1
    code, doc = report("--from", root_dsn(clean), "--target", root_dsn(clean))
    assert code == 0 and not doc["blocks"]
    assert doc["summary"]["blocker"] == 0 and doc["summary"]["warning"] == 0, doc["findings"]
    scan, = of(doc, "binlog-scan")
    assert scan["details"]["complete"] and scan["details"]["events"] > 0
    assert len(clean.binlog_names()) == 2 and scan["details"]["start_file"] == clean.binlog_names()[0]
    text = doctor("--from", root_dsn(clean))
    assert text.returncode == 0 and text.stdout.rstrip().endswith("info")
    try:
        assert replica.poll() is None, replica.stderr.read() if replica.stderr else ""
        # the replica's dump thread is the same one (not killed and reconnected); doctor's is gone
        assert clean.query(dump_threads) == before
    finally:
        replica.terminate()
        replica.wait(timeout=30)


def test_conversion_by_table_copy(mariadb_factory):
    srv = mariadb_factory({"mysql56_temporal_format": "OFF"})
    srv.execute("CREATE DATABASE c")
    srv.execute("CREATE TABLE c.t (id INT PRIMARY KEY, a DATETIME(6), b TIME(3), d TIMESTAMP(2) NULL)")
    srv.execute("INSERT INTO c.t VALUES (1, '2020-01-02 03:04:05.123456', '01:02:03.5', NULL)")
    assert last_types(srv, "c", "t")[1:] == (12, 11, 7)
    # with the setting OFF a table copy keeps the legacy format
    srv.execute("ALTER TABLE c.t FORCE")
    srv.execute("INSERT INTO c.t VALUES (2, NOW(6), '01:00:00', NULL)")
    assert last_types(srv, "c", "t")[1:] == (12, 11, 7)
    # the online variants are refused: the conversion always copies and blocks writes
    srv.set_global("mysql56_temporal_format", "ON")
    for clause in ("ALGORITHM=INPLACE", "ALGORITHM=NOCOPY", "ALGORITHM=INSTANT", "LOCK=NONE"):
        with pytest.raises(pymysql.err.MySQLError) as refused:
            srv.execute(f"ALTER TABLE c.t FORCE, {clause}")
        assert refused.value.args[0] == 1846, clause
    _, before = report("--from", root_dsn(srv), "--database", "c")
    assert of(before, "legacy-temporal", "c.t")[0]["severity"] == "blocker"
    # the suggested conversion, then the next TABLE_MAP has the *2 codes
    srv.execute("ALTER TABLE c.t FORCE")
    srv.execute("INSERT INTO c.t VALUES (3, NOW(6), '02:00:00', NULL)")
    assert last_types(srv, "c", "t")[1:] == (18, 19, 17)
    assert "mariadb-5.3" not in srv.query("SHOW CREATE TABLE c.t")[0][1]
    assert [r[0] for r in srv.query("SELECT CAST(a AS CHAR) FROM c.t WHERE id = 1")] == \
        ["2020-01-02 03:04:05.123456"]
    code, after = report("--from", root_dsn(srv), "--database", "c")
    assert not [f for f in after["findings"] if f["table"] == "c.t" and f["severity"] != "info"]
    history, = of(after, "legacy-temporal-history", "c.t")     # older binlog rows: said, as info
    assert history["details"]["legacy_table_map"]["file"].startswith("mariadb-bin.")


def test_compressed_binlog(mariadb_factory):
    """log_bin_compress=ON: a warning, and a statement in a QUERY_COMPRESSED event (over
    log_bin_compress_min_len) is still found."""
    srv = mariadb_factory({"log_bin_compress": "ON", "log_bin_compress_min_len": 10})
    srv.execute("CREATE DATABASE z")
    srv.execute("CREATE TABLE z.t (id INT PRIMARY KEY, v VARCHAR(300))")
    srv.execute("INSERT INTO z.t VALUES (1, REPEAT('a', 300))")
    srv.execute("SET SESSION binlog_format = STATEMENT")
    srv.execute("UPDATE z.t SET v = REPEAT('b', 300) WHERE id = 1")
    events = srv.query("SHOW BINLOG EVENTS")
    assert any(e[2] == "Query_compressed" and "UPDATE" in str(e[5]) for e in events)
    code, doc = report("--from", root_dsn(srv))
    assert code == 1
    assert of(doc, "log-bin-compress")[0]["severity"] == "warning"
    assert of(doc, "statement-logged-changes", "z.t")[0]["details"]["count"] == 1


def test_encrypted_binlog(mariadb_factory):
    """encrypt_binlog=ON: the server decrypts what it sends, so the TABLE_MAPs are read
    (the legacy table's codes are in the finding) and the encryption is an info."""
    keys = REPO / "samples" / "encrypted" / "keys.txt"
    srv = mariadb_factory({"plugin_load_add": "file_key_management", "encrypt_binlog": "ON",
                           "file_key_management_filename": str(keys),
                           "mysql56_temporal_format": "OFF"})
    srv.execute("CREATE DATABASE e")
    srv.execute("CREATE TABLE e.t (id INT PRIMARY KEY, a DATETIME(3))")
    srv.execute("INSERT INTO e.t VALUES (1, '2020-01-01 00:00:00.5')")
    on_disk = b"".join(p.read_bytes() for p in srv.binlog_files())
    assert b"CREATE TABLE e.t" not in on_disk        # encrypted on disk
    code, doc = report("--from", root_dsn(srv))
    assert code == 1
    assert of(doc, "encrypt-binlog")[0]["severity"] == "info"
    legacy, = of(doc, "legacy-temporal", "e.t")
    assert legacy["details"]["table_map"]["types"] == [3, 12]
    assert of(doc, "binlog-scan")[0]["details"]["complete"]


def test_scan_bounds_and_progress(source):
    """The scan itself: its TABLE_MAPs, the byte bound, and the progress line (forced
    here: it is written only when stderr is a terminal)."""
    import io

    from binlog.doctor.scan import scan
    from binlog.sources.progress import Progress

    binlogs = [(r[0], int(r[1])) for r in source.query("SHOW BINARY LOGS")]
    line = io.StringIO()
    whole = scan(root_dsn(source), binlogs, max_bytes=1 << 30, max_seconds=60,
                 progress=Progress(line, interval=0, force=True))
    assert whole.complete and whole.bytes_read == sum(size - 4 for _, size in binlogs)
    assert whole.table_maps["src", "leg"].types[1:] == (12, 11, 7, 12)
    assert "binlog: at mariadb-bin." in line.getvalue() and line.getvalue().endswith("\n")
    cut = scan(root_dsn(source), binlogs, max_bytes=500, max_seconds=60)
    assert not cut.complete and cut.stopped == "read limit reached" and cut.bytes_read < 2000


@pytest.mark.parametrize("statement, converts", [
    ("ALTER TABLE c.{t} ENGINE=InnoDB", True),
    ("OPTIMIZE TABLE c.{t}", True),
    ("ALTER TABLE c.{t} MODIFY b TIME(3) NULL", True),
    ("ALTER TABLE c.{t} ADD COLUMN x INT", True),
    ("ANALYZE TABLE c.{t}", False),
    ("TRUNCATE TABLE c.{t}", False),
    ("RENAME TABLE c.{t} TO c.{t}_r, c.{t}_r TO c.{t}", False),
])
def test_which_statements_convert(mariadb_factory, statement, converts):
    """Under mysql56_temporal_format=ON every table-copying statement converts all the
    table's temporal columns (the next TABLE_MAP); the others never do."""
    srv = mariadb_factory({"mysql56_temporal_format": "OFF"})
    srv.execute("CREATE DATABASE c")
    srv.execute("CREATE TABLE c.t (id INT PRIMARY KEY, a DATETIME(6), b TIME(3), d TIMESTAMP(2) NULL)")
    srv.set_global("mysql56_temporal_format", "ON")
    for sql in statement.format(t="t").split("; "):
        srv.query(sql)
    srv.execute("INSERT INTO c.t (id, a, b) VALUES (9, NOW(6), '01:00:00')")
    assert last_types(srv, "c", "t")[1:4] == ((18, 19, 17) if converts else (12, 11, 7))
    marked = "mariadb-5.3" in srv.query("SHOW CREATE TABLE c.t")[0][1]
    assert marked is not converts
