"""The inputs users have - ``-`` for stdin, ``.gz``/``.zst`` files
(streamed), and a directory whose binlogs have no numbered names and no index.

The binlog is a sample written by MariaDB; compressed copies are made with Python's gzip
and the zstandard library (the format the ``gzip``/``zstd`` tools write)."""
from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
PLAIN = SAMPLES / "types_full.binlog"


def dump(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                          capture_output=True, timeout=120, stdin=stdin)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    data = PLAIN.read_bytes()
    (d / "mariadb-bin.000001.gz").write_bytes(gzip.compress(data))
    (d / "mariadb-bin.000001.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (d / "cut.000001.gz").write_bytes(gzip.compress(data)[: len(gzip.compress(data)) // 2])
    zst = zstandard.ZstdCompressor().compress(data)
    (d / "cut.000001.zst").write_bytes(zst[: len(zst) // 2])
    return d


def same_records(result, name):
    assert result.returncode == 0, result.stderr.decode()
    plain = dump(PLAIN).stdout.decode()
    return result.stdout.decode().replace(f'"file":"{name}"', '"file":"types_full.binlog"') == plain


def test_gz_zst_and_stdin_read_as_the_plain_file(copies):
    assert same_records(dump(copies / "mariadb-bin.000001.gz"), "mariadb-bin.000001")
    assert same_records(dump(copies / "mariadb-bin.000001.zst"), "mariadb-bin.000001")
    with open(PLAIN, "rb") as fh:
        assert same_records(dump("-", stdin=fh), "stdin")


def test_start_position_on_a_stream(copies):
    # a transaction's GTID event well into the file, as the server listed the sample
    rows = [line.split("\t") for line in (SAMPLES / "types_full.events.txt").read_text().splitlines()[1:]]
    start = [int(r[1]) for r in rows if r[2] == "Gtid"][5]
    want = dump("--start-position", start, PLAIN).stdout.decode()
    with open(PLAIN, "rb") as fh:
        got = dump("--start-position", start, "-", stdin=fh)
    assert got.returncode == 0 and got.stdout.decode().replace('"file":"stdin"', '"file":"types_full.binlog"') == want
    got = dump("--start-position", start, copies / "mariadb-bin.000001.gz")
    assert got.returncode == 0
    assert got.stdout.decode().replace('"file":"mariadb-bin.000001"', '"file":"types_full.binlog"') == want


def test_cut_compressed_files_are_errors_after_what_was_there(copies):
    for name in ("cut.000001.gz", "cut.000001.zst"):
        r = dump(copies / name)
        assert r.returncode == 1, (name, r.stderr)
        assert b"cut.000001" in r.stderr and b"Traceback" not in r.stderr


def test_directory_of_compressed_binlogs_with_an_index(copies, tmp_path):
    shutil.copy(copies / "mariadb-bin.000001.gz", tmp_path / "mariadb-bin.000001.gz")
    (tmp_path / "mariadb-bin.index").write_text("./mariadb-bin.000001\n")
    assert same_records(dump(tmp_path), "mariadb-bin.000001")


def test_directory_of_unnamed_binlogs_says_what_to_do(tmp_path):
    shutil.copy(PLAIN, tmp_path / "a.binlog")
    shutil.copy(SAMPLES / "checksum_none.binlog", tmp_path / "b.binlog")
    r = dump(tmp_path)
    assert r.returncode == 2
    assert b"names are not NAME.NNNNNN and no .index" in r.stderr and b"a.binlog" in r.stderr


def test_empty_file_is_not_silently_empty(tmp_path):
    (tmp_path / "mariadb-bin.000001").write_bytes(b"")
    r = dump(tmp_path / "mariadb-bin.000001")
    assert r.returncode == 1 and b"empty input" in r.stderr
    # the magic number alone (a binlog the server just created): like a file cut short
    (tmp_path / "mariadb-bin.000001").write_bytes(b"\xfebin")
    r = dump(tmp_path / "mariadb-bin.000001")
    assert r.returncode == 4 and b"holds no event" in r.stderr


def test_a_decompression_bomb_is_streamed(tmp_path):
    # 256 MB of zeros compress to a few hundred KB: the reader stops at the bad magic
    # number of the first chunk, without inflating the rest
    bomb = tmp_path / "bomb.000001.zst"
    cctx = zstandard.ZstdCompressor()
    with open(bomb, "wb") as fh, cctx.stream_writer(fh) as w:
        for _ in range(256):
            w.write(bytes(1 << 20))
    r = dump(bomb)
    assert r.returncode == 1 and b"not a binlog" in r.stderr
