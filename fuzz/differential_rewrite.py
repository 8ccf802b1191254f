"""Differential fuzzing of ``binlog rewrite`` (level 2, beside fuzz/differential_dump.py's
whole dumps): ``check_rewrite(data)`` rewrites a binlog (cli_rewrite's option byte, then
the file) on both paths - the compiled image walk and runs of rows events
(``_speedups.rewrite_rows`` / ``rewrite_run``) against rewrite/images.py's pure walk - and
wants the same output binlog and position map byte for byte, the same exit status and
messages.  ``legacy_runs_binlog`` is its seed: runs of rows events of every legacy
temporal layout; ``BinlogBuilder`` makes the runs binlogs of fuzz/differential.py too."""
from __future__ import annotations

import io
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import target  # noqa: E402
from differential import (  # noqa: E402
    DELETE_V1,
    DELETE_V2,
    TABLE_MAP,
    UPDATE_V1,
    UPDATE_V2,
    WRITE_V1,
    WRITE_V2,
    XID,
    packed,
    rows_body,
)
from pure_paths import Difference, pure  # noqa: E402

QUERY = 2


def cli_rewrite(data: bytes, path: Path) -> tuple:
    """``binlog rewrite`` of the binlog of ``data`` (its option byte: FIX_CRC, NO_VERIFY,
    and 0x02 ``--full-metadata``; then the file) through ``binlog.cli.main`` into a
    fresh directory: (exit status, the output binlog's bytes, its position map, stderr)."""
    import shutil

    from binlog import cli

    if not data:
        return (0, b"", "", "")
    options, body = data[0], data[1:]
    if options & target.FIX_CRC:
        body = target.fix_crcs(body)
    path.write_bytes(body)
    out = path.parent / f"{path.name}.rewritten"
    shutil.rmtree(out, ignore_errors=True)
    argv = ["rewrite", str(path), "--to", str(out)]
    if options & target.NO_VERIFY:
        argv.append("--no-verify-checksum")
    if options & 0x02:
        argv.append("--full-metadata")
    stderr = io.StringIO()
    saved = sys.stderr
    sys.stderr = stderr
    try:
        status = cli.main(argv)
    finally:
        sys.stderr = saved
    written = out / path.name
    mapped = out / f"{path.name}.map"
    outcome = (status, written.read_bytes() if written.exists() else None,
               mapped.read_text() if mapped.exists() else None, stderr.getvalue())
    shutil.rmtree(out, ignore_errors=True)
    return outcome


def check_rewrite(data: bytes, path: Path) -> None:
    """``binlog rewrite`` of ``data`` on both paths (the compiled image walk and runs of
    rows events, binlog/_speedups_rewrite.c rewrite_rows and rewrite_run, against rewrite/images.py's
    pure walk): the same output binlog and map byte for byte, the same exit status and
    messages (errors, the summary's counts)."""
    with pure():
        reference = cli_rewrite(data, path)
    got = cli_rewrite(data, path)
    if got != reference:
        raise Difference(f"rewrite differs:\n  compiled {_short_rewrite(got)}\n"
                         f"  pure     {_short_rewrite(reference)}")


def _short_rewrite(outcome: tuple) -> str:
    status, out, mapped, err = outcome
    size = None if out is None else len(out)
    return f"exit {status}, {size} bytes, map {str(mapped)[-200:]!r}, stderr {err[-500:]!r}"


class BinlogBuilder:
    """A binlog made event by event after a real FORMAT_DESCRIPTION (types_full's, or
    checksum_none's without ``checksums``): each event's log_pos is its end, its
    timestamp grows, a CRC32 footer when ``checksums``."""

    def __init__(self, checksums: bool):
        sample = (HERE.parent / ("samples/mariadb-10.11/types_full.binlog" if checksums
                                 else "samples/mariadb-10.11/checksum_none.binlog")).read_bytes()
        fde_size = int.from_bytes(sample[4 + 9:4 + 13], "little")
        self.checksums = checksums
        self.out = bytearray(sample[:4 + fde_size])

    def add(self, code: int, body: bytes) -> None:
        out = self.out
        size = 19 + len(body) + (4 if self.checksums else 0)
        raw = (1700000000 + len(out) // 4096).to_bytes(4, "little") + bytes([code]) + \
            (1).to_bytes(4, "little") + size.to_bytes(4, "little") + \
            (len(out) + size).to_bytes(4, "little") + b"\0\0" + body
        out.extend(raw + (zlib.crc32(raw).to_bytes(4, "little") if self.checksums else b""))


# The legacy runs binlog's table ru.t: (type code, metadata) of each column and its
# CREATE TABLE (the rewrite takes the legacy columns' precision from it); ru.p has no
# legacy column (its rows events are copied, moved by what ru.t's TABLE_MAP gains).
LEGACY_COLUMNS = [(3, b""), (12, b""), (7, b""), (11, b""), (12, b""), (11, b""), (7, b""),
                  (11, b""), (12, b""), (15, (60).to_bytes(2, "little"))]
LEGACY_DDL = ("CREATE TABLE t (id INT, a DATETIME(6), b TIMESTAMP(3) NULL, c TIME(2), d DATETIME, "
              "e TIME, f TIMESTAMP NULL, g TIME(5), h DATETIME(5), note VARCHAR(60))")
LEGACY_PRECISIONS = [None, 6, 3, 2, 0, 0, 0, 5, 5, None]


def _legacy_image(i: int, present: list[int]) -> bytes:
    """ru.t's row image i of the columns ``present`` (MariaDB 5.3 layouts, written by
    binlog/types/temporal.py's encoders; NULLs, negative and zero values among them)."""
    from types import SimpleNamespace

    from binlog.types.temporal import (
        encode_datetime0,
        encode_datetime_hires,
        encode_time0,
        encode_time_hires,
        encode_timestamp0,
        encode_timestamp_hires,
    )

    sec, usec = i * 7919 % 86400, i * 104729 % 1000000
    hms = f"{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
    day = f"20{i % 30:02d}-{1 + i % 12:02d}-{1 + i % 28:02d}"
    sign = "-" if i % 3 == 0 else ""
    values = []
    for index in present:
        code, n = LEGACY_COLUMNS[index][0], LEGACY_PRECISIONS[index]
        col = SimpleNamespace(precision=n, tz=None, ts_offset=False)
        frac = f".{usec:06d}"[:n + 1] if n else ""
        if index == 0:
            values.append(i.to_bytes(4, "little", signed=True))
        elif index == 9:
            text = (b"note-\x01'" * (i % 7))[:60]
            values.append(bytes([len(text)]) + text)
        elif (i + index) % 11 == 0:
            values.append(None)
        elif code == 12:
            text = "0000-00-00 00:00:00" + frac if i % 13 == 0 else f"{day} {hms}{frac}"
            values.append((encode_datetime_hires if n else encode_datetime0)(text, col))
        elif code == 7:
            text = f"{day} {hms}{frac}"
            values.append((encode_timestamp_hires if n else encode_timestamp0)(text, col))
        else:
            text = f"{sign}{i % 839:02d}:{hms[3:]}{frac}"
            values.append((encode_time_hires if n else encode_time0)(text, col))
    nulls = bytearray((len(present) + 7) // 8)
    for k, v in enumerate(values):
        if v is None:
            nulls[k >> 3] |= 1 << (k & 7)
    return bytes(nulls) + b"".join(v for v in values if v is not None)


def legacy_runs_binlog(checksums: bool = True) -> bytes:
    """A binlog of long runs of rows events with legacy temporal columns
    (``_speedups.rewrite_run``): the CREATE TABLE of ru.t, then two transactions, each
    the TABLE_MAPs of ru.t and ru.p (no legacy column), 12 WRITE, 6 UPDATE (after images
    of fewer columns: MINIMAL) and 6 DELETE rows events of ru.t of a few rows, v1 and v2,
    then 8 WRITE rows events of ru.p, then an XID."""
    made = BinlogBuilder(checksums)
    add = made.add

    def table_map(table_id: int, name: bytes, columns: list) -> bytes:
        meta = b"".join(m for _, m in columns)
        return (table_id.to_bytes(6, "little") + b"\x01\x00" + b"\x02ru\x00" + bytes([len(name)])
                + name + b"\x00" + packed(len(columns)) + bytes(c for c, _ in columns)
                + packed(len(meta)) + meta + b"\xff" * ((len(columns) + 7) // 8))

    width = len(LEGACY_COLUMNS)
    everything, some = list(range(width)), [0, 1, 3, 7, 9]
    all_bits, some_bits = b"\xff\x03", bytes([0x8b, 0x02])
    query = (b"\0" * 4 + b"\0" * 4 + b"\x02" + b"\0\0" + b"\0\0" + b"ru\0" + LEGACY_DDL.encode())
    add(QUERY, query)
    for tx in range(2):
        add(TABLE_MAP, table_map(42, b"t", LEGACY_COLUMNS))
        add(TABLE_MAP, table_map(43, b"p", [(3, b""), (15, (60).to_bytes(2, "little"))]))
        for n, (v1, v2) in enumerate(((WRITE_V1, WRITE_V2), (UPDATE_V1, UPDATE_V2), (DELETE_V1, DELETE_V2))):
            for k in range(12 if n == 0 else 6):
                code = v2 if (k // 3) % 2 else v1
                update = code in (UPDATE_V1, UPDATE_V2)
                rows = b"".join(_legacy_image(tx * 1000 + k * 3 + r, everything)
                                + (_legacy_image(tx * 1000 + k * 3 + r + 500, some) if update else b"")
                                for r in range(1 + k % 3))
                add(code, rows_body(code, width, all_bits, some_bits, rows))
        for k in range(8):
            code = WRITE_V2 if k % 2 else WRITE_V1
            rows = b"".join(b"\x00" + (tx * 100 + k + r).to_bytes(4, "little") + b"\x03p'\x02"
                            for r in range(1 + k % 4))
            add(code, b"\x2b" + rows_body(code, 2, b"\x03", b"\x03", rows)[1:])
        add(XID, (tx + 1).to_bytes(8, "little"))
    return bytes(made.out)
