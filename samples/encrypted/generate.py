"""Regenerate the encrypted sample binlogs (a real mariadbd with file_key_management).

    PATH=$PATH:/usr/sbin python samples/encrypted/generate.py

Writes, next to this script, for each case: ``<case>.binlog`` (the server's first binlog,
encrypted with encrypt_binlog=ON), and ``expected.json``: per case the server's own truth -
the table's rows at the end (SELECT ... CAST AS CHAR, binary as hex) and SHOW BINLOG
EVENTS (position and end position of every event, which the server reads by decrypting
its file).  The key files are test keys, committed on purpose: ``keys.txt`` (plain) and
``keys.enc`` (``openssl enc -aes-256-cbc -md sha1`` of keys.txt, secret in ``keys.secret``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests.support.mariadb_server import MariaDBServer  # noqa: E402

KEYS = "# test keys of the encrypted samples (not secret)\n1;" + "5e" * 16 + "c0" * 16 + "\n"
SECRET = "sample file key"
COLUMNS = ["id", "s", "n", "dt6", "ts2", "tm4", "b"]
CREATE = ("CREATE TABLE enc.t (id INT PRIMARY KEY, s VARCHAR(300), n DECIMAL(12,3),"
          " dt6 DATETIME(6), ts2 TIMESTAMP(2) NULL, tm4 TIME(4), b VARBINARY(40))"
          " CHARACTER SET utf8mb4")
CASES = {
    "aes_cbc": {"file_key_management_encryption_algorithm": "AES_CBC", "binlog_checksum": "CRC32"},
    "aes_ctr_nochecksum": {"file_key_management_encryption_algorithm": "AES_CTR",
                           "binlog_checksum": "NONE", "encrypted_key_file": True},
}


def workload() -> list[str]:
    """Legacy temporals (mysql56_temporal_format=OFF), rows of many lengths (every
    remainder of the last AES block), and enough transactions to split the file."""
    out = ["SET timestamp = 1700000000", "CREATE DATABASE enc", CREATE]
    for i in range(1, 41):
        out.append(f"INSERT INTO enc.t VALUES ({i}, REPEAT('r{i % 7}', {i * 3}), {i}.{i:03d},"
                   f" '2001-02-03 04:05:{i % 60:02d}.{i:06d}', '2022-11-10 21:12:33.{i % 100:02d}',"
                   f" '-{i}:00:00.{i:04d}', X'{i:02x}ff')")
    out += ["UPDATE enc.t SET s = 'updated', tm4 = '838:59:59.0000' WHERE id % 5 = 0",
            "DELETE FROM enc.t WHERE id % 7 = 0",
            "INSERT INTO enc.t VALUES (100, 'héllo wörld €', NULL, NULL, NULL, NULL, X'')"]
    return out


def rows(srv) -> dict:
    exprs = ", ".join(f"LOWER(HEX(`{c}`))" if c == "b" else f"CAST(`{c}` AS CHAR)" for c in COLUMNS)
    return {str(r[0]): dict(zip(COLUMNS, r, strict=True)) for r in srv.query(f"SELECT {exprs} FROM enc.t ORDER BY id")}


def make(case: str, options: dict, work: Path) -> dict:
    keys = HERE / "keys.txt"
    server_options = {"plugin_load_add": "file_key_management", "encrypt_binlog": "ON",
                      "binlog_row_metadata": "FULL", "mysql56_temporal_format": "OFF",
                      "default_time_zone": "+00:00",
                      "file_key_management_filename": str(keys)}
    server_options.update({k: v for k, v in options.items() if k != "encrypted_key_file"})
    if options.get("encrypted_key_file"):
        server_options["file_key_management_filename"] = str(HERE / "keys.enc")
        server_options["file_key_management_filekey"] = f"FILE:{HERE / 'keys.secret'}"
    with MariaDBServer(server_options, basedir=work / case) as srv:
        for sql in workload():
            srv.execute(sql)
        expected = rows(srv)
        srv.flush_logs()
        first = srv.binlog_files()[0]
        events = [[int(r[1]), int(r[4])] for r in srv.query(f"SHOW BINLOG EVENTS IN '{first.name}'")]
        shutil.copy(first, HERE / f"{case}.binlog")
        version = srv.version
    return {"server": version, "options": options, "rows": expected, "events": events}


def main() -> int:
    (HERE / "keys.txt").write_text(KEYS)
    (HERE / "keys.secret").write_text(SECRET + "\n")
    subprocess.run(["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass",
                    f"file:{HERE / 'keys.secret'}", "-in", str(HERE / "keys.txt"),
                    "-out", str(HERE / "keys.enc")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        expected = {case: make(case, options, Path(tmp)) for case, options in CASES.items()}
    (HERE / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
