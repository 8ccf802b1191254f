"""Large values stay bounded in memory: a compressed LONGBLOB is
written to the output in pieces (JSON and SQL), never held as bytes, hex text, statement
and encoded line at once; zstd payloads are inflated into one buffer of the declared size.
Peak RSS is measured in a child process (ru_maxrss), against a child that reads a tiny
binlog, so the interpreter's own size cancels out."""
from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tracemalloc
import zlib

import pytest
import zstandard

from binlog.cli import main
from binlog.compression import zlib_exact, zstd_exact
from binlog.errors import MalformedEventError
from binlog.output import json_lines, values
from binlog.output.sql import literals, script

from .build import TABLE_MAP, WRITE_ROWS_V1, XID, binlog, lenenc, table_map, write_rows

MIB = 1 << 20
WRITE_ROWS_COMPRESSED_V1 = 166


def _compressed_rows(table_id: int, rows: bytes) -> bytes:
    """A MariaDB compressed rows body: one column present, the rows part zlib-compressed."""
    return (table_id.to_bytes(6, "little") + b"\x01\x00" + lenenc(1) + b"\x01"
            + b"\x84" + len(rows).to_bytes(4, "big") + zlib.compress(rows, 9))


def _blob_binlog(path, size: int, byte: bytes = b"\xff", compressed: bool = True):
    return _value_binlog(path, byte * (size // len(byte)), compressed)


def _value_binlog(path, value: bytes, compressed: bool = True):
    """One LONGBLOB/LONGTEXT column (the TABLE_MAP says BLOB, meta 4: the schema tells
    which) and one row holding ``value``."""
    row = b"\x00" + len(value).to_bytes(4, "little") + value
    rows = ((WRITE_ROWS_COMPRESSED_V1, _compressed_rows(5, row)) if compressed
            else (WRITE_ROWS_V1, write_rows(5, 1, b"\x01", row)))
    path.write_bytes(binlog([(TABLE_MAP, table_map(5, "h", "big", bytes([252]), b"\x04")), rows,
                             (XID, (1).to_bytes(8, "little"))]))
    return path


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "schema.sql"
    path.write_text("CREATE DATABASE h;\nCREATE TABLE h.big (b LONGBLOB);\n")
    return path


@pytest.mark.parametrize("args", [["--format", "json"], ["--format", "json", "--binary-encoding", "base64"],
                                  ["--format", "sql"], ["--format", "flashback"], ["--format", "text"],
                                  ["--format", "text", "--binary-encoding", "base64"], ["--format", "debezium"]])
@pytest.mark.parametrize("byte", [b"\xff", b"a\"\\\n\x01\xc3\xa9"])     # hex; text (valid UTF-8)
def test_values_written_in_pieces_are_the_same_bytes(tmp_path, schema, capsysbinary, monkeypatch, args, byte):
    path = _blob_binlog(tmp_path / "b.binlog", 300_000, byte, compressed=False)
    argv = ["dump", "--schema-ddl", str(schema), *args, str(path)]
    assert main(argv) == 0
    whole = capsysbinary.readouterr().out
    monkeypatch.setattr(values, "LARGE_VALUE", 1000)
    monkeypatch.setattr(json_lines, "_PIECE", 3 * 1001)
    monkeypatch.setattr(literals, "LARGE_VALUE", 1000)
    monkeypatch.setattr(literals, "PIECE", 1001)
    monkeypatch.setattr(script, "PIECE", 1001)
    assert main(argv) == 0
    pieces = capsysbinary.readouterr().out
    assert pieces == whole and len(whole) > 300_000


@pytest.mark.parametrize("fmt", ["json", "text", "debezium"])
@pytest.mark.parametrize("encoding", ["hex", "base64"])
def test_raw_bytes_of_unknown_charset_in_pieces_are_the_same_object(tmp_path, capsysbinary,
                                                                     monkeypatch, encoding, fmt):
    # No schema: the LONGBLOB may be TEXT, its charset is unknown: {"bytes_hex": ...}.
    path = _blob_binlog(tmp_path / "b.binlog", 300_000, b"a\xc3\xa9", compressed=False)
    argv = ["dump", "--format", fmt, "--binary-encoding", encoding, str(path)]
    assert main(argv) == 0
    whole = capsysbinary.readouterr().out
    monkeypatch.setattr(values, "LARGE_VALUE", 1000)
    monkeypatch.setattr(json_lines, "_PIECE", 3 * 1001)
    assert main(argv) == 0
    pieces = capsysbinary.readouterr().out
    assert pieces == whole
    if fmt == "json":
        assert list(json.loads(whole)["after"]["@1"]) == [f"bytes_{encoding}"]
    elif fmt == "debezium":     # the connector's choice: valid UTF-8 is text
        assert json.loads(whole)["after"]["@1"] == "aé" * 100_000
    else:
        assert f'###   @1={{"bytes_{encoding}":"'.encode() in whole


def _peak_rss(*argv, command: str = "dump") -> int:
    """Peak RSS in bytes of ``binlog COMMAND ARGV`` run in a child (output discarded)."""
    code = ("import resource, subprocess, sys; "
            "r = subprocess.run([sys.executable, '-m', 'binlog.cli', *sys.argv[1:]], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
            "assert r.returncode == 0, r.stderr; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, command, *map(str, argv)], capture_output=True,
                         check=True)
    return int(out.stdout) * 1024


@pytest.mark.parametrize("args", [["--format", "json"], ["--format", "json", "--checksum"],
                                  ["--format", "sql"], ["--format", "text"], ["--format", "debezium"]])
def test_a_compressed_200_mib_blob_is_held_once(tmp_path, schema, args):
    # bench/large_value_bench.py: before, 2.1x the value for json and sql (the inflate's
    # blocks joined into a second buffer, then the value copied out of the rows part) and
    # 8.4x with --checksum (the record built whole); now the inflated rows part alone
    size = 200 * MIB
    small = _peak_rss(*args, "--schema-ddl", schema, _blob_binlog(tmp_path / "s.binlog", 10))
    big = _peak_rss(*args, "--schema-ddl", schema, _blob_binlog(tmp_path / "b.binlog", size))
    assert big - small < 1.3 * size, (args, (big - small) / size)


def test_a_large_zlib_inflate_needs_one_buffer():
    size = 32 * MIB
    stream = zlib.compress(b"\x00" * size)
    tracemalloc.start()
    try:
        out = zlib_exact(stream, size, "rows data")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == b"\x00" * size and type(out) is bytes and peak < 1.2 * size


@pytest.mark.parametrize("declared", [32 * MIB - 1, 32 * MIB + 1])
def test_a_large_zlib_stream_of_another_size_is_refused_without_inflating_it(declared):
    stream = zlib.compress(b"\x00" * 32 * MIB)
    tracemalloc.start()
    try:
        with pytest.raises(MalformedEventError, match="header says"):
            zlib_exact(stream, declared, "rows data")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB


def test_large_blobs_are_views_only_for_the_piece_writers(tmp_path, schema):
    # the library API keeps giving bytes; dump's writers get a view of the rows data
    from binlog.reader import BinlogReader, RowChange
    from binlog.types.strings import LARGE_VIEWS
    from schema_store.loading import load_resolver

    path = _blob_binlog(tmp_path / "b.binlog", 2 * MIB, b"ab")
    resolver = load_resolver(ddl_paths=[str(schema)])

    def value():
        rows = [r for r in BinlogReader([str(path)], schema=resolver).records() if isinstance(r, RowChange)]
        return rows[0].after["b"]
    assert type(value()) is bytes
    token = LARGE_VIEWS.set(MIB)
    try:
        got = value()
    finally:
        LARGE_VIEWS.reset(token)
    assert type(got) is memoryview and got.readonly and got == b"ab" * MIB


@pytest.mark.server
def test_a_real_servers_compressed_longblob(mariadb_factory, tmp_path):
    """A real mariadbd with log_bin_compress writes a 20 MiB LONGBLOB (over ONE_BUFFER):
    dump's JSON, --checksum and SQL give the server's HEX(b) and CRC32(b)."""
    srv = mariadb_factory({"log_bin_compress": "ON", "max_allowed_packet": "64M",
                           "binlog_row_metadata": "FULL"})
    srv.execute("CREATE DATABASE h")
    srv.execute("CREATE TABLE h.big (b LONGBLOB)")
    srv.execute("INSERT INTO h.big VALUES (REPEAT(UNHEX('00FF7F'), 7 * 1536 * 1024))")
    hex_value, crc = srv.query("SELECT HEX(b), CRC32(b) FROM h.big")[0]
    srv.flush_logs()
    path = srv.binlog_files()[-2]
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--checksum", str(path)],
                         capture_output=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if b'"op":"insert"' in line]
    assert rows[0]["after"]["b"] == hex_value.lower() and rows[0]["checksum"]["current"] == crc
    script = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql", str(path)],
                            capture_output=True, check=True).stdout
    assert f"X'{hex_value.lower()}'".encode() in script


def test_zstd_payload_is_inflated_into_one_buffer():
    size = 32 * MIB
    frame = zstandard.ZstdCompressor().compress(b"\x00" * size)
    tracemalloc.start()
    try:
        out = zstd_exact(frame, size, "payload")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out) == size and peak < 1.2 * size


# --- LONGTEXT: a LargeText (a view of the bytes and their codec), written in pieces ---

TEXTS = {
    # utf8mb4: quotes, backslashes, control characters, 2-, 3- and 4-byte characters
    "utf8mb4": "a\"\\\n\x01\x00é€😀'\r\x1a".encode(),
    "latin1": "façade «x» ' \\".encode("cp1252"),      # SQL: _latin1 X'...'
    "ascii-latin1": b"plain ASCII ' \\ \n",            # SQL: quoted, not hex
}


def _text_schema(tmp_path, charset: str):
    path = tmp_path / f"schema-{charset}.sql"
    path.write_text(f"CREATE DATABASE h;\nCREATE TABLE h.big (b LONGTEXT CHARACTER SET {charset});\n")
    return path


def _small_and_large(monkeypatch, argv, capsysbinary):
    """The output of ``argv`` with the usual thresholds (the value is a str), then with
    every large-value threshold under the value and pieces that cut characters."""
    from binlog import checksum
    from binlog.types import strings

    assert main(argv) == 0
    whole = capsysbinary.readouterr().out
    monkeypatch.setattr(values, "LARGE_VALUE", 1000)
    monkeypatch.setattr(literals, "LARGE_VALUE", 1000)
    monkeypatch.setattr(literals, "PIECE", 1001)
    monkeypatch.setattr(script, "PIECE", 1001)
    monkeypatch.setattr(checksum, "LARGE_VALUE", 1000)
    monkeypatch.setattr(strings, "TEXT_PIECE", 1001)     # odd: multi-byte characters are cut
    assert main(argv) == 0
    return whole, capsysbinary.readouterr().out


@pytest.mark.parametrize("args", [["--format", "json"], ["--format", "json", "--checksum"],
                                  ["--format", "sql"], ["--format", "flashback"], ["--format", "text"],
                                  ["--format", "debezium"]])
@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_text_written_in_pieces_is_the_same_bytes(tmp_path, capsysbinary, monkeypatch, args, kind):
    charset = "utf8mb4" if kind == "utf8mb4" else "latin1"
    value = TEXTS[kind] * (300_000 // len(TEXTS[kind]))
    path = _value_binlog(tmp_path / "t.binlog", value, compressed=False)
    argv = ["dump", "--schema-ddl", str(_text_schema(tmp_path, charset)), *args, str(path)]
    whole, pieces = _small_and_large(monkeypatch, argv, capsysbinary)
    assert pieces == whole and len(whole) > 300_000
    if args == ["--format", "json"]:
        assert json.loads(whole)["after"]["b"].encode(TEXTS_CODEC[charset]) == value
    if args[1] == "sql":
        assert (b"_latin1 X'" in whole) == (kind == "latin1")


TEXTS_CODEC = {"utf8mb4": "utf-8", "latin1": "cp1252"}


def test_large_text_is_a_view_and_its_codec_only_for_the_piece_writers(tmp_path):
    from binlog.reader import BinlogReader, RowChange
    from binlog.types.strings import LARGE_VIEWS, LargeText
    from schema_store.loading import load_resolver

    value = TEXTS["utf8mb4"] * (2 * MIB // len(TEXTS["utf8mb4"]))
    path = _value_binlog(tmp_path / "t.binlog", value)
    resolver = load_resolver(ddl_paths=[str(_text_schema(tmp_path, "utf8mb4"))])

    def decoded():
        rows = [r for r in BinlogReader([str(path)], schema=resolver).records() if isinstance(r, RowChange)]
        return rows[0].after["b"]
    assert decoded() == value.decode()
    token = LARGE_VIEWS.set(MIB)
    try:
        got = decoded()
    finally:
        LARGE_VIEWS.reset(token)
    assert type(got) is LargeText and got.text() == value.decode()
    assert "".join(got.pieces(size=7)) == value.decode()     # every cut through a character


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("bad", [b"\xff", b"\xe2\x82"])   # an invalid byte; a cut 3-byte character
def test_invalid_large_text_is_the_same_typed_error(tmp_path, capsys, monkeypatch, large, bad):
    value = b"x" * 5000 + bad + b"y" * 5000 if bad == b"\xff" else b"x" * 10_000 + bad
    path = _value_binlog(tmp_path / "t.binlog", value, compressed=False)
    if large:
        monkeypatch.setattr(values, "LARGE_VALUE", 1000)
    argv = ["dump", "--schema-ddl", str(_text_schema(tmp_path, "utf8mb4")), str(path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "are not valid" in err and "codec utf-8" in err and "h.big column `b`" in err, err


@pytest.mark.parametrize("args", [["--format", "json"], ["--format", "json", "--checksum"],
                                  ["--format", "sql"], ["--format", "text"], ["--format", "debezium"]])
@pytest.mark.parametrize("unit", ["a", "é€"])
def test_a_compressed_64_mib_text_is_held_once(tmp_path, args, unit):
    # bench/large_value_bench.py --text: before, the value was also a str (1x for ASCII,
    # 0.6x for 'é€' held as UCS-2) and its JSON/SQL text was built whole
    size = 64 * MIB
    value = unit.encode() * (size // len(unit.encode()))
    schema = _text_schema(tmp_path, "utf8mb4")
    small = _peak_rss(*args, "--schema-ddl", schema, _value_binlog(tmp_path / "s.binlog", value[:12]))
    big = _peak_rss(*args, "--schema-ddl", schema, _value_binlog(tmp_path / "b.binlog", value))
    assert big - small < 1.3 * size, (args, (big - small) / size)


@pytest.mark.server
def test_a_real_servers_compressed_longtext(mariadb_factory, tmp_path):
    """A real mariadbd with log_bin_compress writes a 22.5 MiB utf8mb4 LONGTEXT: dump's JSON
    holds the server's text (MD5), --checksum its CRC32, and the SQL script, run by the
    real client, puts the same text back (MD5)."""
    from support.mariadb_server import find_tool

    srv = mariadb_factory({"log_bin_compress": "ON", "max_allowed_packet": "64M",
                           "binlog_row_metadata": "FULL"})
    srv.execute("CREATE DATABASE h")
    srv.execute("CREATE TABLE h.big (t LONGTEXT CHARACTER SET utf8mb4)")
    srv.flush_logs()
    srv.execute("INSERT INTO h.big VALUES (REPEAT('aé€😀\\'\\\\\\n\\t\"', 1536 * 1024))")
    md5, crc, length = srv.query("SELECT MD5(t), CRC32(t), LENGTH(t) FROM h.big")[0]
    assert length > 22 * MIB
    srv.flush_logs()
    path = srv.binlog_files()[-2]
    out = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--checksum", str(path)],
                         capture_output=True, check=True).stdout
    row = next(json.loads(line) for line in out.splitlines() if b'"op":"insert"' in line)
    text = row["after"]["t"].encode()
    assert hashlib.md5(text).hexdigest() == md5 and row["checksum"]["current"] == crc
    script = subprocess.run([sys.executable, "-m", "binlog.cli", "dump", "--format", "sql", str(path)],
                            capture_output=True, check=True).stdout
    srv.execute("TRUNCATE h.big")
    run = subprocess.run([find_tool("mariadb", "mysql"), "--no-defaults", f"--socket={srv.socket}",
                          "-uroot", "--binary-mode", "--max-allowed-packet=256M"], input=script,
                         capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert srv.query("SELECT MD5(t) FROM h.big") == [(md5,)]


@pytest.mark.parametrize("unit", [b"a\xc3\xa9", b"a\xff"])     # text; not UTF-8: base64
def test_debezium_large_values_of_unknown_charset_choose_as_the_connector(tmp_path, capsysbinary,
                                                                        monkeypatch, unit):
    path = _blob_binlog(tmp_path / "b.binlog", 300_000, unit, compressed=False)
    argv = ["dump", "--format", "debezium", str(path)]
    assert main(argv) == 0
    whole = capsysbinary.readouterr().out
    monkeypatch.setattr(values, "LARGE_VALUE", 1000)
    assert main(argv) == 0
    assert capsysbinary.readouterr().out == whole
    after = json.loads(whole)["after"]["@1"]
    assert after == ("aé" * 100_000 if unit == b"a\xc3\xa9" else base64.b64encode(unit * 150_000).decode())
