"""An encrypted binlog (encrypt_binlog=ON) stops with a clear, typed error at the
START_ENCRYPTION event, written by a real server with the file_key_management plugin."""
from __future__ import annotations

import pytest

from binlog.errors import EncryptedBinlogError
from binlog.reader import BinlogReader

pytestmark = pytest.mark.server


def test_encrypted_binlog_is_reported(mariadb_factory, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("1;" + "a1" * 32 + "\n")
    srv = mariadb_factory({"plugin_load_add": "file_key_management",
                           "file_key_management_filename": str(keys),
                           "encrypt_binlog": "ON"})
    srv.execute("CREATE DATABASE enc")
    srv.execute("CREATE TABLE enc.t (id INT PRIMARY KEY, s VARCHAR(10))")
    srv.execute("INSERT INTO enc.t VALUES (1, 'secret')")
    srv.flush_logs()
    first = srv.binlog_files()[0]
    assert b"secret" not in first.read_bytes()
    with pytest.raises(EncryptedBinlogError) as info:
        list(BinlogReader([first]).items())
    exc = info.value
    assert exc.event_type == "START_ENCRYPTION_EVENT" and exc.source == first.name
    assert "encrypted" in str(exc) and exc.hint
