"""`binlog apply` and `verify-rows` read encrypted binlogs as `dump` does: the committed
encrypted samples (written by a real mariadbd with file_key_management, see
samples/encrypted/generate.py) applied to a fresh real server give exactly the rows the
encrypting server held (its SELECT ... CAST AS CHAR, kept in expected.json)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from replay_helpers import cli, dsn

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "encrypted"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))
COLUMNS = ["id", "s", "n", "dt6", "ts2", "tm4", "b"]

pytestmark = pytest.mark.server


def _rows(server) -> dict:
    exprs = ", ".join(f"LOWER(HEX(`{c}`))" if c == "b" else f"CAST(`{c}` AS CHAR)" for c in COLUMNS)
    return {str(r[0]): dict(zip(COLUMNS, r, strict=True))
            for r in server.query(f"SELECT {exprs} FROM enc.t ORDER BY id")}


@pytest.fixture
def key_file(tmp_path) -> Path:
    path = tmp_path / "keys.txt"
    shutil.copy(SAMPLES / "keys.txt", path)
    path.chmod(0o600)
    return path


def test_apply_and_verify_an_encrypted_binlog(mariadb_factory, key_file):
    target = mariadb_factory({"default_time_zone": "+00:00"})
    binlog = SAMPLES / "aes_cbc.binlog"

    without = cli("apply", "--to", dsn(target), binlog)
    assert without.returncode != 0
    assert b"key" in without.stderr.lower()

    done = cli("apply", "--to", dsn(target), "--key-file", key_file, binlog)
    assert done.returncode == 0, done.stderr.decode()
    assert _rows(target) == EXPECTED["aes_cbc"]["rows"]

    verified = cli("verify-rows", "--against", dsn(target), "--key-file", key_file, binlog)
    assert verified.returncode == 0, verified.stderr.decode() + verified.stdout.decode()


@pytest.mark.parametrize("name", ["aes_cbc", "aes_ctr_nochecksum"])
def test_apply_method_binlog_sends_the_decrypted_events(mariadb_factory, key_file, name):
    """--method binlog: the target is given the events as decrypted here (it has no key):
    the same rows the encrypting server held."""
    target = mariadb_factory({"default_time_zone": "+00:00"})
    done = cli("apply", "--method", "binlog", "--to", dsn(target), "--key-file", key_file,
               SAMPLES / f"{name}.binlog")
    assert done.returncode == 0, done.stderr.decode()
    assert _rows(target) == EXPECTED[name]["rows"]
