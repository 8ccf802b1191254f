"""Hand-made binlogs for the hostile-input tests: the magic, the FORMAT_DESCRIPTION of a
real MariaDB 10.11 sample, then events built here with correct framing (sizes, log_pos
chain and, when asked, CRC32 footers), so only the bytes under test are wrong."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

from binlog.cursor import pack_lenenc as lenenc

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"

TABLE_MAP, WRITE_ROWS_V1, XID, QUERY, GTID = 19, 23, 16, 2, 162


def fde(checksums: bool) -> bytes:
    """The magic and the FORMAT_DESCRIPTION of a sample with or without checksums."""
    name = "types_full.binlog" if checksums else "checksum_none.binlog"
    data = (SAMPLES / name).read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")
    return data[:4 + size]


def event(type_code: int, body: bytes, pos: int, checksums: bool, *, server_id: int = 1,
          timestamp: int = 1700000000) -> bytes:
    size = 19 + len(body) + (4 if checksums else 0)
    head = struct.pack("<IBIIIH", timestamp, type_code, server_id, size, pos + size, 0)
    raw = head + body
    if checksums:
        raw += zlib.crc32(raw).to_bytes(4, "little")
    return raw


def binlog(bodies, checksums: bool = True) -> bytes:
    """``bodies``: (type_code, body) pairs after the FORMAT_DESCRIPTION."""
    out = bytearray(fde(checksums))
    for type_code, body in bodies:
        out += event(type_code, body, len(out), checksums)
    return bytes(out)


def table_map(table_id: int, db: str, table: str, types: bytes, meta: bytes,
              nullable: bytes | None = None) -> bytes:
    n = len(types)
    nullable = nullable if nullable is not None else b"\xff" * ((n + 7) // 8)
    return (table_id.to_bytes(6, "little") + b"\x01\x00"
            + bytes([len(db)]) + db.encode() + b"\0" + bytes([len(table)]) + table.encode() + b"\0"
            + lenenc(n) + types + lenenc(len(meta)) + meta + nullable)


def write_rows(table_id: int, width: int, present: bytes, rows: bytes) -> bytes:
    return table_id.to_bytes(6, "little") + b"\x01\x00" + lenenc(width) + present + rows


def json_shared_offsets(depth: int = 30) -> bytes:
    """Binary JSON: arrays whose two entries both point at the same child array."""
    inner = struct.pack("<HH", 0, 4)
    for _ in range(depth):
        header = 4 + 3 * 2
        inner = (struct.pack("<HH", 2, header + len(inner))
                 + (b"\x02" + struct.pack("<H", header)) * 2 + inner)
    return b"\x02" + inner


def json_nested(depth: int) -> bytes:
    """Binary JSON: ``depth`` arrays, each holding the next."""
    inner = struct.pack("<HH", 0, 4)
    for _ in range(depth - 1):
        inner = struct.pack("<HH", 1, 7 + len(inner)) + b"\x02" + struct.pack("<H", 7) + inner
    return b"\x02" + inner


def json_table(doc: bytes, checksums: bool = True) -> bytes:
    """A MySQL JSON column (type 245, 4-byte length) holding ``doc`` in one row."""
    value = len(doc).to_bytes(4, "little") + doc
    return binlog([(TABLE_MAP, table_map(70, "h", "j", bytes([245]), b"\x04")),
                   (WRITE_ROWS_V1, write_rows(70, 1, b"\x01", b"\x00" + value))], checksums)


def no_column_present(checksums: bool = True) -> bytes:
    """A rows event with an empty present-columns bitmap but rows data."""
    return binlog([(TABLE_MAP, table_map(71, "h", "n", bytes([3]), b"")),
                   (WRITE_ROWS_V1, write_rows(71, 1, b"\x00", b"\x00" * 8))], checksums)
