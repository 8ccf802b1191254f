"""Encrypted binlogs (encrypt_binlog=ON) written by a real mariadbd with the
file_key_management plugin, read offline with its key file.

Ground truth is the server's: the rows it holds (SELECT ... CAST AS CHAR) after the
workload, and SHOW BINLOG EVENTS (the server decrypts its own file) for every event's
position and end position - which lie in the encrypted part of each event.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from support.records import row_records

from binlog.cli import main as cli_main
from binlog.crypt import KeyRing, parse_key_file
from binlog.errors import (
    ChecksumMismatchError,
    EncryptedBinlogError,
    IncompleteEventError,
    MissingKeyError,
    WrongKeyError,
)
from binlog.reader import BinlogReader
from tests.support.mariadb_server import MariaDBServer, find_tool

pytestmark = pytest.mark.server

KEY_A = "a1" * 32                     # AES-256
KEY_B = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"   # AES-128: the rotated key 1
SECRET = "s3cret file key"

# Legacy (mariadb-5.3) temporals: mysql56_temporal_format=OFF when the table is created;
# their precision comes from the CREATE TABLE in the binlog (DDL tracking).
WORKLOAD = [
    "CREATE DATABASE enc",
    "CREATE TABLE enc.t (id INT PRIMARY KEY, s VARCHAR(300), n DECIMAL(12,3), d DATETIME(3),"
    " dt6 DATETIME(6), ts2 TIMESTAMP(2) NULL, tm4 TIME(4), b VARBINARY(40)) CHARACTER SET utf8mb4",
    "INSERT INTO enc.t VALUES (1, 'secret', 1.5, '2020-01-02 03:04:05.678',"
    " '2001-02-03 04:05:06.070809', '2022-11-10 21:12:33.99', '-838:59:59.0000', X'00ff')",
    "INSERT INTO enc.t VALUES (2, REPEAT('x', 77), NULL, NULL, '1000-01-01 00:00:00.000001',"
    " NULL, '12:34:56.7891', NULL), (3, 'héllo wörld €', -7.25, '9999-12-31 23:59:59.999',"
    " '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.01', '00:00:00.0001', X'')",
    "INSERT INTO enc.t VALUES (4, REPEAT('long row ', 30), 0, NULL, NULL, NULL, NULL, X'01')",
    "UPDATE enc.t SET s = 'y', dt6 = '2021-06-07 08:09:10.111213' WHERE id = 2",
    "DELETE FROM enc.t WHERE id = 4",
]
COLUMNS = ["id", "s", "n", "d", "dt6", "ts2", "tm4", "b"]


def key_file(path, *lines):
    path.write_text("# file_key_management keys\n\n" + "".join(f"{line}\n" for line in lines))
    path.chmod(0o600)
    return path


def start(basedir, keys, algorithm, checksum, **extra):
    options = {"plugin_load_add": "file_key_management",
               "file_key_management_filename": str(keys),
               "file_key_management_encryption_algorithm": algorithm,
               "encrypt_binlog": "ON", "binlog_checksum": checksum,
               "binlog_row_metadata": "FULL", "mysql56_temporal_format": "OFF",
               "default_time_zone": "+00:00"}
    options.update(extra)
    return MariaDBServer(options, basedir=basedir).start()


def server_rows(srv) -> dict:
    exprs = ", ".join(f"LOWER(HEX(`{c}`))" if c == "b" else f"CAST(`{c}` AS CHAR)" for c in COLUMNS)
    return {int(r[0]): dict(zip(COLUMNS, r, strict=True)) for r in srv.query(f"SELECT {exprs} FROM enc.t")}


def server_events(srv, name) -> list:
    return [(int(r[1]), int(r[4])) for r in srv.query(f"SHOW BINLOG EVENTS IN '{name}'")]


def run_workload(srv) -> dict:
    for sql in WORKLOAD:
        srv.execute(sql)
    rows = server_rows(srv)
    srv.flush_logs()
    return rows


def replayed(records) -> dict:
    """The table's contents after the change records of ``binlog dump``: what the
    server holds (values in the server's text form, binary as hex)."""
    state = {}
    for r in records:
        if r["db"] != "enc":
            continue
        if r["op"] == "delete":
            state.pop(r["before"]["id"])
        else:
            state[r["after"]["id"]] = r["after"]
    return {i: {k: None if v is None else str(v) for k, v in row.items()}
            for i, row in state.items()}


def dump_json(capfd, *args) -> tuple[int, list, str]:
    code = cli_main(["dump", *map(str, args)])
    out, err = capfd.readouterr()
    return code, row_records(out), err


def reader(paths, keys) -> BinlogReader:
    """As ``binlog dump`` reads: DDL in the binlog followed (legacy precisions)."""
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    return BinlogReader(paths, keys=keys, schema=SchemaResolver(SchemaStore(None)))


def ring(*paths) -> KeyRing:
    r = KeyRing()
    for p in paths:
        r.add_file(parse_key_file(p.read_bytes(), p.name), p.name)
    return r


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Per (algorithm, checksum): the server's first binlog, its rows and events."""
    out = {}
    for algorithm in ("AES_CBC", "AES_CTR"):
        for checksum in ("CRC32", "NONE"):
            base = tmp_path_factory.mktemp(f"{algorithm}-{checksum}")
            keys = key_file(base / "keys.txt", f"1;{KEY_A}", "2;" + "b2" * 16)
            srv = start(base / "srv", keys, algorithm, checksum)
            try:
                rows = run_workload(srv)
                first = srv.binlog_files()[0]
                events = server_events(srv, first.name)
                copy = base / first.name
                shutil.copy(first, copy)
            finally:
                srv.stop()
                srv.cleanup()
            out[(algorithm, checksum)] = (copy, keys, rows, events)
    base = tmp_path_factory.mktemp("plain")
    srv = MariaDBServer({"binlog_row_metadata": "FULL", "mysql56_temporal_format": "OFF",
                         "default_time_zone": "+00:00"}, basedir=base / "srv").start()
    try:
        rows = run_workload(srv)
        first = srv.binlog_files()[0]
        shutil.copy(first, base / first.name)
    finally:
        srv.stop()
        srv.cleanup()
    out["plain"] = (base / first.name, None, rows, None)
    return out


def test_decrypted_output_equals_the_unencrypted_servers(written, capfd):
    """The same workload on a server without encryption: the same change records
    (positions and times aside: the encrypted file has its START_ENCRYPTION event)."""
    def records(*args):
        code, out, err = dump_json(capfd, *args)
        assert code == 0, err
        return [(r["gtid"], r["db"], r["table"], r["op"], r["before"], r["after"]) for r in out]

    plain_path, _, plain_rows, _ = written["plain"]
    want = records(plain_path)
    assert len(want) == 6          # 4 inserts, 1 update, 1 delete
    for algorithm in ("AES_CBC", "AES_CTR"):
        for checksum in ("CRC32", "NONE"):
            path, keys, rows, events = written[(algorithm, checksum)]
            assert records("--key-file", keys, path) == want and rows == plain_rows


@pytest.mark.parametrize("algorithm", ["AES_CBC", "AES_CTR"])
@pytest.mark.parametrize("checksum", ["CRC32", "NONE"])
def test_decrypted_rows_and_events_match_the_server(written, algorithm, checksum, capfd):
    path, keys, rows, events = written[(algorithm, checksum)]
    assert b"secret" not in path.read_bytes() and b"enc" not in path.read_bytes()
    ours = [(i.event.offset, i.event.header.log_pos) for i in reader([path], ring(keys)).items()
            if hasattr(i, "event")]
    assert ours == events
    code, records, err = dump_json(capfd, "--key-file", keys, path)
    assert code == 0 and replayed(records) == rows
    # the algorithm forced: the same; the other one: a wrong-key error, not garbage rows
    alg = algorithm[4:].lower()
    code, records, err = dump_json(capfd, "--key-file", keys, "--encryption-algorithm", alg, path)
    assert code == 0 and replayed(records) == rows
    forced = ring(keys)
    forced.algorithm = "ctr" if alg == "cbc" else "cbc"
    with pytest.raises(WrongKeyError) as info:
        list(reader([path], forced).items())
    assert info.value.key_id == 1 and info.value.key_version == 1


def test_checksums_are_over_the_plain_event(written):
    """The CRC32 footer is encrypted with the event and matches its plain bytes: a
    bit flipped in an encrypted row event is a checksum mismatch after decryption."""
    path, keys, rows, events = written[("AES_CBC", "CRC32")]
    rows_at = [pos for pos, end in events][-4]       # a late event, not the first encrypted
    data = bytearray(path.read_bytes())
    data[rows_at + 30] ^= 0x04
    broken = path.with_name("flipped.bin")
    broken.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError) as info:
        list(reader([broken], ring(keys)).items())
    assert info.value.event_offset == rows_at


def test_without_key_file_is_reported(written):
    path, keys, rows, events = written[("AES_CTR", "CRC32")]
    with pytest.raises(EncryptedBinlogError) as info:
        list(reader([path], None).items())
    exc = info.value
    assert exc.event_type == "START_ENCRYPTION_EVENT" and exc.source == path.name
    assert "key id 1 version 1" in str(exc) and "--key-file" in exc.hint


def test_wrong_and_missing_keys(written, tmp_path, capfd):
    path, keys, rows, events = written[("AES_CBC", "CRC32")]
    wrong = key_file(tmp_path / "wrong.txt", "1;" + "c3" * 32)
    other = key_file(tmp_path / "other.txt", "2;" + "a1" * 32)
    with pytest.raises(WrongKeyError) as info:
        list(reader([path], ring(wrong)).items())
    assert (info.value.key_id, info.value.key_version) == (1, 1)
    assert info.value.event_offset == events[2][0]       # the first encrypted event
    with pytest.raises(MissingKeyError) as info:
        list(reader([path], ring(other)).items())
    assert "key id 1 version 1" in str(info.value)
    # the command line: exit 1, the key id and version named, no key material printed
    code, out, err = dump_json(capfd, "--key-file", wrong, path)
    assert code == 1 and out == [] and "WrongKeyError" not in err
    assert "key id 1 version 1" in err and "c3c3" not in err and "a1a1" not in err
    # a wrong key file first, the right one second: each file uses the key that works
    code, out, err = dump_json(capfd, "--key-file", wrong, "--key-file", keys, path)
    assert code == 0 and replayed(out) == rows


def test_truncated_and_damaged_files(written, tmp_path, capfd):
    path, keys, rows, events = written[("AES_CTR", "CRC32")]
    data = path.read_bytes()
    last_rows = events[-4][0]                        # DELETE's rows event region
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:last_rows + 25])
    with pytest.raises(IncompleteEventError) as info:
        list(reader([cut, path], ring(keys)).items())
    assert "key id 1 version 1" in str(info.value) and info.value.event_offset == last_rows
    # the header's size field (in clear) damaged: skip mode resynchronises on the next
    # event that decrypts with its own offset's IV, and loses only that event
    changes = list(reader([path], ring(keys)).changes())
    first_rows = changes[0].pos
    bad = bytearray(data)
    bad[first_rows + 11] ^= 0x40
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(bytes(bad))
    code, out, err = dump_json(capfd, "--key-file", keys, "--on-error", "skip", damaged)
    assert code == 3 and f"damaged.bin {first_rows}.." in err
    lost = [c for c in changes if c.pos == first_rows]
    assert lost and len(out) == len(changes) - len(lost)
    assert [r["pos"] for r in out] == [c.pos for c in changes if c.pos != first_rows]


def test_encrypted_key_file_and_key_rotation(tmp_path, capfd):
    """One server: binlog 1 with key A (key file encrypted with openssl, the secret in
    a FILE:), then a restart with a new key file holding key B for id 1 (the only way to
    rotate file_key_management's key: it has key version 1 only), binlog 2."""
    plain = key_file(tmp_path / "keys-a.txt", f"1;{KEY_A}")
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    enc = tmp_path / "keys-a.enc"
    subprocess.run(["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass", f"file:{secret}",
                    "-in", str(plain), "-out", str(enc)], check=True)
    enc.chmod(0o600)
    live = tmp_path / "live.enc"
    shutil.copy(enc, live)
    srv = start(tmp_path / "srv", live, "AES_CTR", "CRC32",
                file_key_management_filekey=f"FILE:{secret}")
    try:
        srv.execute("CREATE DATABASE enc")
        srv.execute("CREATE TABLE enc.r (id INT PRIMARY KEY, v VARCHAR(20))")
        srv.execute("INSERT INTO enc.r VALUES (1, 'under key A')")
        srv.stop()
        keys_b = key_file(tmp_path / "keys-b.txt", f"1;{KEY_B}")
        srv.options.pop("file_key_management_filekey")
        srv.options["file_key_management_filename"] = str(keys_b)
        srv.start()
        srv.execute("INSERT INTO enc.r VALUES (2, 'under key B')")
        expected = {int(i): v for i, v in srv.query("SELECT id, CAST(v AS CHAR) FROM enc.r")}
        srv.flush_logs()
        files = [tmp_path / p.name for p in srv.binlog_files()[:-1]]
        for p in srv.binlog_files()[:-1]:
            shutil.copy(p, tmp_path / p.name)
    finally:
        srv.stop()
        srv.cleanup()
    assert len(files) == 2
    # the old key file (encrypted) and the new one (plain): each binlog uses its own key
    code, out, err = dump_json(capfd, "--key-file", enc, "--key-file-key", f"FILE:{secret}",
                               "--key-file", keys_b, *files)
    assert code == 0 and {r["after"]["id"]: r["after"]["v"] for r in out} == expected
    code, out, err = dump_json(capfd, "--key-file", enc, "--key-file-key", SECRET, files[0])
    assert code == 0 and [r["after"]["v"] for r in out] == ["under key A"]
    assert SECRET not in err
    code, out, err = dump_json(capfd, "--key-file", enc, "--key-file-key", "not it", files[0])
    assert code == 2 and "wrong secret" in err and KEY_A not in err
    # only the new key: file 1 cannot be decrypted
    with pytest.raises(WrongKeyError) as info:
        list(reader(files, ring(keys_b)).items())
    assert info.value.source == files[0].name
    assert os.stat(enc).st_mode & 0o077 == 0


def test_replication_sends_decrypted_events(tmp_path, mariadb_factory, capfd):
    """What a relay (mariadb-binlog --read-from-remote-server --raw, binlog fetch)
    stores from an encrypted server: plain events after a START_ENCRYPTION_EVENT that
    the server flagged ignorable; read without a key, and a key given changes nothing."""
    keys = key_file(tmp_path / "keys.txt", f"1;{KEY_A}")
    srv = mariadb_factory({"plugin_load_add": "file_key_management",
                           "file_key_management_filename": str(keys),
                           "file_key_management_encryption_algorithm": "AES_CTR",
                           "encrypt_binlog": "ON"})
    srv.execute("CREATE DATABASE enc")
    srv.execute("CREATE TABLE enc.t (id INT PRIMARY KEY, s VARCHAR(20))")
    srv.execute("INSERT INTO enc.t VALUES (1, 'sent plain'), (2, 'twice')")
    expected = {int(i): v for i, v in srv.query("SELECT id, CAST(s AS CHAR) FROM enc.t")}
    srv.flush_logs()
    name = srv.binlog_names()[0]
    assert b"sent plain" not in (srv.binlog_files()[0]).read_bytes()
    out = tmp_path / "relay"
    out.mkdir()
    subprocess.run([find_tool("mariadb-binlog", "mysqlbinlog"),
                    "--read-from-remote-server", "--raw", "-h127.0.0.1", f"-P{srv.port}",
                    "-uroot", f"--result-file={out}/", name], check=True)
    fetched = out / name
    assert b"sent plain" in fetched.read_bytes()
    for extra in ([], ["--key-file", keys]):
        code, records, err = dump_json(capfd, *extra, fetched)
        assert code == 0, err
        assert {r["after"]["id"]: r["after"]["s"] for r in records} == expected
    # binlog fetch keeps the bytes it receives: a relay of plain events, read without a key
    relay = tmp_path / "fetched"
    assert cli_main(["fetch", "--from", f"mysql://root@127.0.0.1:{srv.port}/", "--server-id", "77",
                     "--to", str(relay)]) == 0
    assert b"sent plain" in (relay / name).read_bytes()
    code, records, err = dump_json(capfd, relay)
    assert code == 0, err
    assert {r["after"]["id"]: r["after"]["s"] for r in records} == expected


def test_start_position_reads_the_encryption_event_first(written, capfd, tmp_path):
    """A jump to a position (and a Spark split) still needs the START_ENCRYPTION_EVENT
    after the FORMAT_DESCRIPTION: its nonce makes every later event's IV."""
    path, keys, rows, events = written[("AES_CBC", "NONE")]
    code, full, err = dump_json(capfd, "--key-file", keys, path)
    gtids = [i.event.offset for i in reader([path], ring(keys)).items()
             if hasattr(i, "event") and i.event.type_name == "GTID_EVENT"]
    middle = gtids[3]                 # a transaction's start, past the CREATE TABLE
    ddl = tmp_path / "schema.sql"      # the legacy columns' precisions, as of the start
    ddl.write_text(f"{WORKLOAD[1]};\n")
    code, part, err = dump_json(capfd, "--key-file", keys, "--start-position", middle,
                                "--schema-ddl", ddl, path)
    assert code == 0, err
    assert part == [r for r in full if r["pos"] >= middle] and part
