"""Helpers for the replay tests: scripts on real servers, the CLI as a subprocess, and
table contents compared by CHECKSUM TABLE and row by row."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SQL_DIR = Path(__file__).resolve().parent / "sql"
SAMPLES_SQL = REPO / "samples" / "sql"
SYSTEM_DBS = ("mysql", "information_schema", "performance_schema", "sys", "binlog_apply")

_split_sql = None


def split_sql(text: str):
    """samples/generate.py's statement splitter (quotes, comments, ``--!`` directives)."""
    global _split_sql
    if _split_sql is None:
        spec = importlib.util.spec_from_file_location("_samples_generate", REPO / "samples" / "generate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["_samples_generate"] = module      # dataclasses look their module up
        spec.loader.exec_module(module)
        _split_sql = module.split_sql
    return _split_sql(text)


def run_script(server, text: str) -> None:
    """Run a workload script statement by statement on one session (UTC, utf8mb4);
    ``--! set-global NAME=VALUE`` directives are honoured, others ignored."""
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SET NAMES utf8mb4")
        for item in split_sql(text):
            if item.directive:
                if item.directive.startswith("set-global "):
                    name, _, value = item.directive[len("set-global "):].partition("=")
                    server.set_global(name.strip(), value.strip())
                continue
            if item.sql:
                cur.execute(item.sql)
    finally:
        conn.close()


def script(name: str) -> str:
    path = SQL_DIR / name if (SQL_DIR / name).exists() else SAMPLES_SQL / name
    return path.read_text(encoding="utf-8")


def dsn(server) -> str:
    return f"mysql://root@localhost/?unix_socket={server.socket}"


def cli(*args, input: bytes | None = None, env: dict | None = None, timeout: float = 120):
    """``python -m binlog.cli ARGS`` -> CompletedProcess (bytes)."""
    full_env = dict(os.environ)
    full_env.pop("BINLOG_APPLY_FAULT", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                          input=input, capture_output=True, env=full_env, timeout=timeout)


def mariadb_client(server, sql: bytes, *extra) -> subprocess.CompletedProcess:
    from support.mariadb_server import find_tool

    tool = find_tool("mariadb", "mysql")
    return subprocess.run([tool, "--no-defaults", f"--socket={server.socket}", "-uroot",
                           "--default-character-set=utf8mb4", *extra], input=sql,
                          capture_output=True, timeout=120)


def raw_connection(server):
    import pymysql
    import pymysql.converters

    encoders = {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}
    conn = server.connect(conv=encoders, use_unicode=False)
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SET character_set_results = NULL")
    return conn


def contents(server, databases=None) -> dict:
    """{db.table: (CHECKSUM TABLE, [rows])}: rows as raw bytes in each column's charset,
    FLOATs widened to DOUBLE (their text form has 6 digits only), ordered by every column."""
    conn = raw_connection(server)
    try:
        cur = conn.cursor()
        cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "
                    "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN %s", (SYSTEM_DBS,))
        tables = sorted((d.decode(), t.decode()) for d, t in cur.fetchall())
        out = {}
        for db, table in tables:
            if databases is not None and db not in databases:
                continue
            cur.execute("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE "
                        "TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (db, table))
            cols = cur.fetchall()
            exprs = []
            for name, dtype in cols:
                q = "`" + name.decode().replace("`", "``") + "`"
                exprs.append(f"CAST({q} AS DOUBLE)" if dtype == b"float" else q)
            order = ", ".join(str(i + 1) for i in range(len(exprs)))
            qname = "`" + db.replace("`", "``") + "`.`" + table.replace("`", "``") + "`"
            cur.execute(f"SELECT {', '.join(exprs)} FROM {qname} ORDER BY {order}")
            rows = list(cur.fetchall())
            cur.execute(f"CHECKSUM TABLE {qname}")
            checksum = cur.fetchone()[1]
            out[f"{db}.{table}"] = (checksum, rows)
        return out
    finally:
        conn.close()


def assert_same_contents(source, target, databases=None, *, checksum=True) -> None:
    a, b = contents(source, databases), contents(target, databases)
    assert sorted(a) == sorted(b), f"tables differ: {sorted(set(a) ^ set(b))}"
    for name in a:
        rows_a, rows_b = a[name][1], b[name][1]
        if rows_a != rows_b:
            only_a = [r for r in rows_a if r not in rows_b][:3]
            only_b = [r for r in rows_b if r not in rows_a][:3]
            raise AssertionError(f"{name}: rows differ ({len(rows_a)} vs {len(rows_b)}); "
                                 f"source only: {only_a}; target only: {only_b}")
        if checksum:
            assert a[name][0] == b[name][0], f"{name}: CHECKSUM TABLE {a[name][0]} != {b[name][0]}"


@contextmanager
def apply_batches_source(tmp_dir: Path):
    """A source server after sql/apply_batches.sql (binlog_row_metadata=FULL): (server,
    the binlog files of its DML, its schema dump written in ``tmp_dir``)."""
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"binlog_row_metadata": "FULL"}) as source:
        ddl, _, dml = script("apply_batches.sql").partition("--! flush")
        source.execute("CREATE DATABASE ab CHARACTER SET utf8mb4")
        run_script(source, ddl)
        schema = source.dump_schema(["ab"])
        source.flush_logs()
        first = source.master_status()[0]
        run_script(source, dml)
        source.flush_logs()
        names = source.binlog_names()
        files = [str(p) for p in source.binlog_files() if names.index(p.name) >= names.index(first)]
        schema_file = tmp_dir / "schema.sql"
        schema_file.write_text(schema)
        yield source, files, str(schema_file)


def load_schema(target, dump: str) -> None:
    """Run a mariadb-dump --no-data file on the target; tables the dump marks
    ``/* mariadb-5.3 */`` are created with mysql56_temporal_format=OFF, so the target keeps
    their storage format (and CHECKSUM TABLE can compare them byte for byte)."""
    conn = target.connect()
    try:
        cur = conn.cursor()
        for item in split_sql(dump):
            if not item.sql:
                continue
            legacy = "/* mariadb-5.3 */" in item.sql
            if legacy:
                target.set_global("mysql56_temporal_format", "OFF")
            try:
                cur.execute(item.sql)
            finally:
                if legacy:
                    target.set_global("mysql56_temporal_format", "ON")
    finally:
        conn.close()


def apply_transactions(paths, renderer, encode=True, statements=False, *, schema_ddl=None) -> list:
    """[(changes, statements)] of each transaction of ``paths`` as ``binlog apply --method
    sql`` reads them (the key catalog fed the TABLE_MAPs; with ``encode`` the rows events
    the compiled walk renders come as EncodedInserts/EncodedKeyeds), its multi-row
    statements (``statements``) made at its COMMIT, with the key catalog of that moment.
    The schema is apply's: the binlog's own DDL followed, and ``schema_ddl`` (a
    --schema-ddl file) as of its start."""
    from functools import partial

    from binlog.assembly.transactions import Transaction, TxAssembler
    from binlog.reader import BinlogReader, SourceEvent
    from binlog.replay.batch import encode_event, row_numbers, row_statements
    from schema_store.loading import load_resolver

    schema = load_resolver(ddl_paths=[schema_ddl] if schema_ddl else [], required=True)
    reader = BinlogReader(list(paths), schema=schema)
    if encode:
        reader.set_output_paths(row_encoder=partial(encode_event, renderer))
    assembler = TxAssembler()
    out = []
    for item in reader.items():
        if isinstance(item, SourceEvent):
            renderer.keys.observe(item.event)
        for unit in assembler.feed(item):
            if isinstance(unit, Transaction) and unit.changes:
                made = (list(row_statements(renderer, unit.changes, row_numbers(unit.changes, 0)))
                        if statements else None)
                out.append((unit.changes, made))
    return out


def assert_encoded_statements_match(paths, safe: bool = True, **options) -> list:
    """apply's statements from EncodedInserts/EncodedKeyeds (no row decoded) are those of
    the decoded rows, cut at the same rows, and their rows (LazyRows) are the decoded rows,
    numbered alike; gives the encoded items (``options``: apply_transactions')."""
    from binlog.output.sql.renderer import SqlRenderer
    from binlog.replay.batch import EncodedEvent, EncodedInsert, EncodedKeyed, EncodedStatements, LazyRows
    from binlog.replay.keys import KeyCatalog

    def rows(batch):
        return [(i, ch.file, ch.pos, ch.row, ch.op, ch.before, ch.after) for i, ch in batch.rows]

    decoded = apply_transactions(paths, SqlRenderer(KeyCatalog(), safe=safe), False, True, **options)
    encoded = apply_transactions(paths, SqlRenderer(KeyCatalog(), safe=safe), True, True, **options)
    assert [sum(ch.count if isinstance(ch, EncodedEvent) else 1 for ch in changes)
            for changes, _ in encoded] == [len(changes) for changes, _ in decoded]
    expected = [b for _, batches in decoded for b in batches]
    got = [b for _, batches in encoded for b in batches]
    items = [ch for changes, _ in encoded for ch in changes]
    assert [b.sql for b in got] == [b.sql for b in expected]
    assert [rows(b) for b in got] == [rows(b) for b in expected]
    for b, e in zip(got, expected, strict=True):
        assert [b.row_sql(ch) for _, ch in b.rows] == [e.row_sql(ch) for _, ch in e.rows]
        assert (b.first.db, b.first.table) == (b.rows[0][1].db, b.rows[0][1].table)
    for kind in (EncodedInsert, EncodedKeyed, EncodedStatements):
        if any(isinstance(ch, kind) and ch.count > 1 for ch in items):
            assert any(isinstance(b.rows, LazyRows) and isinstance(b.first, kind) for b in got)
    return [ch for ch in items if isinstance(ch, EncodedEvent)]
