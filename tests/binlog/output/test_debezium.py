"""``--format debezium``: Debezium's envelope, checked with a JSON schema of it (jsonschema)
and, value by value, against what a real mariadbd says each value is."""
from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
from decimal import Context, Decimal
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCHEMA = json.loads((HERE / "debezium_envelope.schema.json").read_text())
SCHEMA_CHANGE = json.loads((HERE / "debezium_schema_change.schema.json").read_text())
SAMPLES = REPO / "samples" / "mariadb-10.11"


def dump(*args, fmt="debezium", everything=False) -> list[dict]:
    """Change events (and, with ``everything``, the schema change events and statement
    extension records too) of ``binlog dump --format debezium``."""
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", fmt, *map(str, args)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    if everything or fmt != "debezium":
        return records
    return [r for r in records if r.get("op") in ("c", "u", "d")]


@pytest.mark.parametrize("name", ["types_full.binlog", "types_nometa.binlog", "compressed.binlog",
                                  "row_image_minimal.binlog"])
def test_every_envelope_is_valid(name):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    records = dump(SAMPLES / name)
    assert records
    for record in records:
        validator.validate(record)
    # the row index tells rows of one event apart (an UPDATE of the primary key is a
    # delete and a create of the same row)
    rows = [(r["source"]["pos"], r["source"]["row"], r["op"]) for r in records]
    assert len(set(rows)) == len(rows)


def _unscaled(text: str, scale: int) -> int:
    return int(Decimal(text).scaleb(scale, Context(prec=100)))     # exact: up to 65 digits


@pytest.mark.server
def test_values_are_what_the_server_says(mariadb_server, tmp_path):
    srv = mariadb_server
    srv.execute("CREATE DATABASE IF NOT EXISTS dbz")
    srv.execute("DROP TABLE IF EXISTS dbz.v")
    srv.flush_logs()
    srv.execute("""CREATE TABLE dbz.v (id INT PRIMARY KEY, d DATE, dt3 DATETIME(3), dt6 DATETIME(6),
                   ts TIMESTAMP(6) NULL, t TIME(6), dec1 DECIMAL(12,4), b1 BIT(1), b10 BIT(10),
                   ub BIGINT UNSIGNED, bin VARBINARY(8), j JSON)""")
    srv.execute("""INSERT INTO dbz.v VALUES
        (1, '2024-02-29', '2024-02-29 12:34:56.789', '1969-07-20 20:17:40.123456',
         '2038-01-19 03:14:07.999999', '-838:59:59.000000', -12345678.9876, 1, 513,
         18446744073709551615, 0x00ff10, '{"a": [1, 2]}'),
        (2, '1000-01-01', '9999-12-31 23:59:59.999', '1970-01-01 00:00:00.000001',
         '1970-01-01 00:00:01', '00:00:00.5', 0.0001, 0, 0, 9223372036854775807, '', 'null')""")
    name, _ = srv.master_status()
    srv.flush_logs()
    path = tmp_path / name
    srv.copy_binlog(name, path)
    expected = {}
    for row in srv.query("""SELECT id, DATEDIFF(d, '1970-01-01'),
            CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', dt3) DIV 1000 AS CHAR),
            CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', dt6) AS CHAR),
            CAST(UNIX_TIMESTAMP(ts) AS CHAR), CAST(TIME_TO_SEC(t) AS CHAR), MICROSECOND(t),
            CAST(dec1 AS CHAR), b1 + 0, b10 + 0, CAST(ub AS CHAR), HEX(bin), CAST(j AS CHAR)
            FROM dbz.v ORDER BY id"""):
        expected[row[0]] = row[1:]
    srv.execute("SET time_zone = '+00:00'")
    iso = dict(srv.query("SELECT id, DATE_FORMAT(ts, '%Y-%m-%dT%H:%i:%s.%fZ') FROM dbz.v"))
    everything = dump(path, everything=True)
    records = [r for r in everything if "op" in r and r["source"]["table"] == "v"]
    assert [r["after"]["id"] for r in records] == [1, 2]
    # the CREATE TABLE: a schema change event whose table is what the server describes
    create = [r for r in everything if "ddl" in r and r["ddl"].startswith("CREATE TABLE dbz.v")]
    assert len(create) == 1
    jsonschema.Draft202012Validator(SCHEMA_CHANGE).validate(create[0])
    (change,) = create[0]["tableChanges"]
    assert change["type"] == "CREATE" and change["id"] == '"dbz"."v"'
    columns = srv.query("""SELECT COLUMN_NAME, IS_NULLABLE, DATA_TYPE, NUMERIC_PRECISION,
            NUMERIC_SCALE, DATETIME_PRECISION FROM information_schema.COLUMNS
            WHERE TABLE_SCHEMA = 'dbz' AND TABLE_NAME = 'v' ORDER BY ORDINAL_POSITION""")
    got = change["table"]["columns"]
    assert [c["name"] for c in got] == [c[0] for c in columns]
    assert [c["optional"] for c in got] == [c[1] == "YES" for c in columns]
    assert [c["position"] for c in got] == list(range(1, len(columns) + 1))
    # MariaDB's JSON is an alias of LONGTEXT (information_schema says longtext); the
    # connector types columns by the DDL's words, as the schema store does
    alias = {"json": "longtext"}
    assert [alias.get(t, t) for t in (c["typeName"].split()[0].lower() for c in got)] == [c[2] for c in columns]
    by_name = {c["name"]: c for c in got}
    assert (by_name["dec1"]["length"], by_name["dec1"]["scale"]) == (12, 4)
    assert by_name["dt6"]["length"] == 6 and by_name["ts"]["jdbcType"] == 2014
    keys = srv.query("""SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE
            TABLE_SCHEMA = 'dbz' AND TABLE_NAME = 'v' AND CONSTRAINT_NAME = 'PRIMARY'
            ORDER BY ORDINAL_POSITION""")
    assert change["table"]["primaryKeyColumnNames"] == [k[0] for k in keys]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for record in records:
        validator.validate(record)
        after = record["after"]
        days, dt3, dt6, unix_ts, secs, micro, dec1, b1, b10, ub, bin_hex, j = expected[after["id"]]
        assert after["d"] == days
        assert after["dt3"] == int(dt3) and after["dt6"] == int(dt6)
        assert after["ts"] == iso[after["id"]]
        assert after["ts"].startswith(__import__("datetime").datetime.fromtimestamp(
            int(Decimal(unix_ts)), __import__("datetime").timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
        sign = -1 if int(Decimal(secs)) < 0 else 1
        assert after["t"] == int(Decimal(secs)) * 1_000_000 + sign * micro
        raw = base64.b64decode(after["dec1"])
        assert int.from_bytes(raw, "big", signed=True) == _unscaled(dec1, 4)
        assert after["b1"] is bool(b1)
        assert int.from_bytes(base64.b64decode(after["b10"]), "little") == b10
        assert after["ub"] == int(ub) - (1 << 64 if int(ub) >= 1 << 63 else 0)
        assert base64.b64decode(after["bin"]).hex().upper() == bin_hex
        assert json.loads(after["j"]) == json.loads(j)
        assert record["transaction"]["id"] == record["source"]["gtid"]
    assert [r["source"]["row"] for r in records] == [0, 1]
    assert [r["transaction"]["total_order"] for r in records] == [1, 2]


def test_nothing_is_left_out_ddl_and_statements_in_binlog_order():
    """Every record of the JSON output has its line, in the same order: rows as change
    events, DDL as schema change events (with the tables the JSON's ``schema`` holds),
    statement-logged changes as the extension records (op "statement")."""
    path = SAMPLES / "events_misc"
    records = dump(path, fmt="json")
    lines = dump(path, everything=True)
    assert len(lines) == len(records)
    envelope = jsonschema.Draft202012Validator(SCHEMA)
    schema_change = jsonschema.Draft202012Validator(SCHEMA_CHANGE)
    kinds = set()
    for record, line in zip(records, lines, strict=True):
        assert (line["source"]["file"], line["source"]["pos"]) == (record["file"], record["pos"])
        kinds.add(record["op"])
        if record["op"] == "ddl":
            schema_change.validate(line)
            assert line["ddl"] == record["sql"] and "op" not in line
            want = [(t["db"], t["table"], None if t["columns"] is None else [c["name"] for c in t["columns"]])
                    for t in record["schema"] or ()]
            got = [(*json.loads("[" + c["id"].replace('"."', '","') + "]"),
                    None if c["table"] is None else [col["name"] for col in c["table"]["columns"]])
                   for c in line["tableChanges"]]
            assert got == want
        elif record["op"] == "statement":
            assert line["op"] == "statement" and line["source"]["query"] == record["sql"]
            assert line["statement"]["sql"] == record["sql"] and line["before"] is line["after"] is None
        else:
            envelope.validate(line)
    assert {"ddl", "statement", "insert"} <= kinds
    assert any(c["type"] == "DROP" for line in lines for c in line.get("tableChanges", ()))


def test_statements_are_named_on_stderr():
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "debezium",
                          str(SAMPLES / "events_misc")], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0
    statements = [json.loads(line) for line in out.stdout.splitlines() if '"op":"statement"' in line]
    warned = [line for line in out.stderr.splitlines() if 'extension record (op "statement")' in line]
    assert statements and len(warned) == len(statements)


def _server_rows(case: str) -> dict[tuple[str, str, str], list]:
    """(gtid, db.table, id) -> the row the server has after that transaction
    (``<case>.expected.json``: CAST(col AS CHAR), HEX() for binary columns)."""
    expected = json.loads((SAMPLES / f"{case}.expected.json").read_text())
    return {(step["gtid"], table, row[0]): row for step in expected["steps"]
            for table, rows in step.get("snapshot", {}).items() for row in rows}


def _float32(value) -> bytes:
    return struct.pack("<f", float(value))


def _digits(value) -> int:
    """Significant digits of a number's shortest text."""
    return len(Decimal(repr(float(value))).normalize().as_tuple().digits)


def test_types_full_values_where_the_connector_is_exact():
    """types_full (MySQL 5.6-format columns, as the server wrote them): each inserted or
    updated value of the types whose Debezium form is least obvious, against the server's
    own value of it: FLOAT in the fewest digits of its float32, DECIMAL(65,30) unscaled
    exactly (no 28-digit rounding), the zero TIMESTAMP as 0 seconds since the epoch,
    GEOMETRY's SRID (null for 0) and a POINT's coordinates."""
    rows = _server_rows("types_full")
    checked = 0
    for record in dump(SAMPLES / "types_full.binlog"):
        after, table = record["after"], record["source"]["table"]
        if after is None or table not in ("floats", "decimals", "timestamps", "geoms"):
            continue
        server = rows[record["source"]["gtid"], f"tf.{table}", str(after["id"])]
        for i, name in enumerate(after):
            got, want = after[name], server[i]
            if name == "id" or want is None:
                continue
            if table == "floats" and name in ("f", "fu"):
                assert _float32(got) == _float32(want) and _digits(got) <= max(_digits(want), 2), (name, got, want)
            elif table == "decimals":
                scale = len(want.partition(".")[2])
                assert int.from_bytes(base64.b64decode(got), "big", signed=True) == _unscaled(want, scale)
            elif table == "timestamps" and want.startswith("0000-00-00"):
                digits = want.partition(".")[2]
                assert got == "1970-01-01T00:00:00" + ("." + digits if digits else "") + "Z"
            elif table == "geoms":
                raw = bytes.fromhex(want)
                srid = int.from_bytes(raw[:4], "little")
                assert base64.b64decode(got["wkb"]) == raw[4:] and got["srid"] == (srid or None)
                assert (name == "p") == ("x" in got)
                if name == "p":
                    assert (got["x"], got["y"]) == struct.unpack("<dd", raw[9:25])
            else:
                continue
            checked += 1
    assert checked > 60


def test_an_update_of_the_primary_key_is_a_delete_and_a_create():
    """row_image_minimal: UPDATE t SET id = 40 WHERE id = 4 (the JSON record's one update
    whose key changes) is, as the connector gives it, the delete of row 4 and the create
    of row 40 at the same event and row; the other updates stay updates."""
    records = dump(SAMPLES / "row_image_minimal.binlog", fmt="json")
    moved = [r for r in records if r["op"] == "update"
             and any(k in r["after"] and r["before"][k] != r["after"][k] for k in r["pk"])]
    assert len(moved) == 1
    lines = dump(SAMPLES / "row_image_minimal.binlog")
    at = [(line["op"], line["before"], line["after"]) for line in lines
          if (line["source"]["pos"], line["source"]["row"]) == (moved[0]["pos"], moved[0]["row"])]
    assert [op for op, _, _ in at] == ["d", "c"]
    assert at[0][1]["id"] == 4 and at[1][2]["id"] == 40
    assert sum(line["op"] == "u" for line in lines) == sum(r["op"] == "update" for r in records) - 1
