#!/usr/bin/env python3
"""The cost of decrypting encrypted binlogs: the same workload written by a
real mariadbd three times - unencrypted, encrypt_binlog=ON with AES-CBC, with AES-CTR
(file_key_management) - then each file read pinned to one core:

  decrypt   every event decrypted, nothing decoded (binlog.crypt.EventDecryptor alone)
  api       decode-only Python API: for change in BinlogReader(..., keys=...).changes()
  json      binlog dump --format json [--key-file KEYS] FILE > /dev/null

    PATH=$PATH:/usr/sbin python bench/crypt_bench.py [--rows 300000] [--out bench/crypt_results.json]
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []
KEY = "1;" + "3c" * 32 + "\n"


def write(work: Path, rows: int, algorithm: str | None) -> Path:
    from tests.support.mariadb_server import MariaDBServer

    keys = work / "keys.txt"
    keys.write_text(KEY)
    keys.chmod(0o600)
    options = {"binlog_row_metadata": "FULL", "max_binlog_size": "1G"}
    if algorithm:
        options.update({"plugin_load_add": "file_key_management", "encrypt_binlog": "ON",
                        "file_key_management_filename": str(keys),
                        "file_key_management_encryption_algorithm": algorithm})
    name = algorithm or "plain"
    with MariaDBServer(options, basedir=work / name) as srv:
        srv.execute("CREATE DATABASE b")
        srv.execute("CREATE TABLE b.t (id INT PRIMARY KEY, s VARCHAR(64), n DECIMAL(12,2),"
                    " d DATETIME(6), x BIGINT UNSIGNED)")
        step = 50_000
        for lo in range(0, rows, step):
            srv.execute(f"INSERT INTO b.t SELECT seq, REPEAT(CHAR(97 + seq % 26), seq % 64),"
                        f" seq / 7, '2024-01-01' + INTERVAL seq SECOND, seq * 977"
                        f" FROM b.seq_{lo + 1}_to_{min(rows, lo + step)}")
        srv.execute("UPDATE b.t SET s = 'updated' WHERE id % 5 = 0")
        srv.flush_logs()
        out = work / f"{name}.binlog"
        shutil.copy(srv.binlog_files()[0], out)
    return out


def timed(cmd, repeat: int = 3) -> float:
    """The least CPU time (user + system, of the child) of ``repeat`` runs: on a shared,
    loaded machine wall time measures the other jobs too, CPU time does not."""
    best = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(PIN + cmd, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    return best


DECRYPT_ONLY = """
import sys, time
from binlog.crypt import EventDecryptor, KeyRing, parse_key_file
data = open(sys.argv[1], 'rb').read()
ring = KeyRing(algorithm=sys.argv[3]); ring.add_file(parse_key_file(open(sys.argv[2], 'rb').read(), 'k'), 'k')
pos = 4
pos += int.from_bytes(data[pos + 9:pos + 13], 'little')            # FORMAT_DESCRIPTION
size = int.from_bytes(data[pos + 9:pos + 13], 'little')            # START_ENCRYPTION
dec = EventDecryptor.start(ring, data[pos + 19], int.from_bytes(data[pos + 20:pos + 24], 'little'),
                           data[pos + 24:pos + 36], 'f')
pos += size
n = 0
while pos < len(data):
    size = int.from_bytes(data[pos + 9:pos + 13], 'little')
    dec.decrypt(data[pos:pos + size], pos)
    pos += size
    n += 1
"""

API = ("import sys; from binlog.reader import BinlogReader; from binlog.sources.keys import load_key_ring; "
       "ring = load_key_ring(sys.argv[2:]); "
       "sum(1 for _ in BinlogReader([sys.argv[1]], keys=ring).changes())")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--out", default=str(REPO / "bench" / "crypt_results.json"))
    args = ap.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for algorithm in (None, "AES_CBC", "AES_CTR"):
            path = write(work, args.rows, algorithm)
            keys = [str(work / "keys.txt")] if algorithm else []
            mb = path.stat().st_size / 1e6
            entry = {"bytes": path.stat().st_size, "cpu": "seconds of CPU (user+sys), best of 3"}
            if algorithm:
                entry["startup_s"] = timed([sys.executable, "-c", "import binlog.crypt, cryptography.hazmat.primitives.ciphers"])
                wall = timed([sys.executable, "-c", DECRYPT_ONLY, str(path), keys[0], algorithm[4:].lower()])
                entry["decrypt_s"] = wall
                entry["decrypt_mb_s"] = mb / max(wall - entry["startup_s"], 1e-6)
            wall = timed([sys.executable, "-c", API, str(path), *keys])
            entry["api_s"], entry["api_mb_s"] = wall, mb / wall
            key_args = ["--key-file", keys[0]] if keys else []
            wall = timed([sys.executable, "-m", "binlog.cli", "dump", "--format", "json", *key_args, str(path)])
            entry["json_s"], entry["json_mb_s"] = wall, mb / wall
            results[algorithm or "plain"] = entry
            print(algorithm or "plain", json.dumps(entry), flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
