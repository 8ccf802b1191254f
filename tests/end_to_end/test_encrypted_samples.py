"""The committed encrypted samples (samples/encrypted/, written by a real mariadbd with
file_key_management; samples/encrypted/generate.py) decrypted without a server: every
event where the server's SHOW BINLOG EVENTS puts it, and the table's rows as the
server's SELECT ... CAST AS CHAR gave them."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from binlog.cli import main as cli_main
from binlog.crypt import KeyRing, decrypt_key_file, parse_key_file
from binlog.errors import KeyFileError, WrongKeyError
from binlog.reader import BinlogReader
from binlog.sources.keys import load_key_ring
from binlog.stream import Damage

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "encrypted"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))
CASES = sorted(EXPECTED)


@pytest.fixture
def keys(tmp_path) -> dict:
    """The sample key files, copied readable by their owner only."""
    out = {}
    for name in ("keys.txt", "keys.enc", "keys.secret"):
        shutil.copy(SAMPLES / name, tmp_path / name)
        (tmp_path / name).chmod(0o600)
        out[name] = tmp_path / name
    return out


def reader(paths, **settings) -> BinlogReader:
    """As ``binlog dump`` reads: the CREATE TABLE in the binlog gives the precisions."""
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    return BinlogReader(paths, schema=SchemaResolver(SchemaStore()), **settings)


def dump(capfd, *args):
    code = cli_main(["dump", *map(str, args)])
    out, err = capfd.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def replayed(records) -> dict:
    state = {}
    for r in records:
        if r["op"] not in ("insert", "update", "delete"):
            continue            # statement and DDL records
        if r["op"] == "delete":
            state.pop(str(r["before"]["id"]))
        else:
            state[str(r["after"]["id"])] = {k: None if v is None else str(v) for k, v in r["after"].items()}
    return state


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("key_args", [("--key-file", "keys.txt"),
                                      ("--key-file", "keys.enc", "--key-file-key", "FILE:keys.secret")])
def test_sample_decrypts_to_the_servers_rows(case, key_args, keys, capfd):
    args = [keys.get(a, a) if not a.startswith("FILE:") else f"FILE:{keys['keys.secret']}"
            for a in key_args]
    code, records, err = dump(capfd, *args, SAMPLES / f"{case}.binlog")
    assert code == 0, err
    assert replayed(records) == EXPECTED[case]["rows"]
    assert "5e5e" not in err and "warning" not in err


@pytest.mark.parametrize("case", CASES)
def test_sample_events_are_where_the_server_says(case, keys):
    ring = load_key_ring([keys["keys.txt"]])
    stream_events = [(i.event.offset, i.event.header.log_pos)
                     for i in reader([SAMPLES / f"{case}.binlog"], keys=ring).items() if hasattr(i, "event")]
    assert [list(e) for e in stream_events] == EXPECTED[case]["events"]


@pytest.mark.parametrize("case", CASES)
def test_sample_with_the_other_algorithm_is_a_wrong_key(case, keys):
    used = EXPECTED[case]["options"]["file_key_management_encryption_algorithm"][4:].lower()
    ring = load_key_ring([keys["keys.txt"]], algorithm="ctr" if used == "cbc" else "cbc")
    with pytest.raises(WrongKeyError) as info:
        list(reader([SAMPLES / f"{case}.binlog"], keys=ring).items())
    assert (info.value.key_id, info.value.key_version) == (1, 1)
    assert "5e5e" not in str(info.value)


def test_bit_flips_are_damage_never_garbage(keys, tmp_path):
    """Every 197th byte of the encrypted part flipped, one at a time: skip mode gives only
    rows the undamaged file gives too (as they are), and damage records of whole events
    (a lost CREATE TABLE also loses the rows that need its precisions: damage too)."""
    ring = load_key_ring([keys["keys.txt"]])
    src = SAMPLES / "aes_cbc.binlog"
    data = src.read_bytes()
    good = {(c.pos, repr(c.before), repr(c.after))
            for c in reader([src], keys=ring).changes()}
    start = EXPECTED["aes_cbc"]["events"][2][0]         # the first encrypted event
    bounds = {pos for pos, end in EXPECTED["aes_cbc"]["events"]} | {len(data)}
    for at in range(start, len(data), 197):
        bad = bytearray(data)
        bad[at] ^= 1 << (at % 8)
        path = tmp_path / "flipped.binlog"
        path.write_bytes(bytes(bad))
        damage = []
        flipped = reader([path], keys=ring, on_error="skip", on_damage=damage.append)
        got = {(c.pos, repr(c.before), repr(c.after)) for c in flipped.changes()}
        assert got <= good, at
        assert damage and all(isinstance(d, Damage) for d in damage), at
        # each skipped range is whole events: the stream found the next event exactly
        assert all(d.start in bounds and d.end in bounds for d in damage), at
        assert damage[0].start <= at < damage[0].end, at


def test_key_file_formats(keys):
    text = keys["keys.txt"].read_bytes()
    plain = decrypt_key_file(keys["keys.enc"].read_bytes(), b"sample file key", "keys.enc")
    assert parse_key_file(plain, "keys.enc") == parse_key_file(text, "keys.txt")
    with pytest.raises(KeyFileError, match="wrong secret"):
        decrypt_key_file(keys["keys.enc"].read_bytes(), b"not the secret", "keys.enc")
    assert parse_key_file(b"  # c\n\n7;" + b"ab" * 24 + b" trailing\n1;" + b"00" * 16, "k") == {
        7: bytes.fromhex("ab" * 24), 1: bytes(16)}
    for bad, why in [(b"1;abc\n", "invalid key"), (b"x;" + b"00" * 16, "syntax"),
                     (b"0;" + b"00" * 16, "invalid key id"), (b"1:" + b"00" * 16, "syntax")]:
        with pytest.raises(KeyFileError, match=why):
            parse_key_file(bad, "k")
    assert "5e" not in repr(load_key_ring([keys["keys.txt"]])) and isinstance(
        load_key_ring([keys["keys.txt"]]), KeyRing)


@pytest.mark.parametrize("digest, iterations", [("sha256", 0), ("sha512", 1000), ("sha1", 1)])
def test_key_file_encrypted_by_openssl_with_digest_and_pbkdf2(keys, tmp_path, digest, iterations):
    """file_key_management_digest / file_key_management_use_pbkdf2 as `openssl enc -md
    DIGEST [-pbkdf2 -iter N]` writes the file."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command")
    enc = tmp_path / "keys.enc2"
    extra = ["-pbkdf2", "-iter", str(iterations)] if iterations else []
    subprocess.run([openssl, "enc", "-aes-256-cbc", "-md", digest, *extra, "-pass",
                    f"file:{keys['keys.secret']}", "-in", str(keys["keys.txt"]), "-out", str(enc)],
                   check=True, capture_output=True)
    enc.chmod(0o600)
    ring = load_key_ring([enc], key_file_key=f"FILE:{keys['keys.secret']}", digest=digest,
                         pbkdf2_iterations=iterations)
    assert ring.keys == load_key_ring([keys["keys.txt"]]).keys
    with pytest.raises(KeyFileError, match="wrong secret"):
        load_key_ring([enc], key_file_key=f"FILE:{keys['keys.secret']}",
                      digest="sha224", pbkdf2_iterations=iterations)


def test_stats_reads_encrypted_files_and_world_readable_keys_warn(keys, capfd):
    keys["keys.txt"].chmod(0o644)
    code = cli_main(["stats", "--key-file", str(keys["keys.txt"]), str(SAMPLES / "aes_cbc.binlog")])
    out, err = capfd.readouterr()
    assert code == 0, err
    # the workload (samples/encrypted/generate.py): 41 inserts, 8 updates, 5 deletes
    assert ["enc.t", "41", "8", "5"] in [line.split()[:4] for line in out.splitlines()]
    assert "readable by every user" in err and "5e5e" not in err + out
