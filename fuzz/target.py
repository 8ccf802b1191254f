"""The fuzz target: one input -> a whole ``binlog dump``, rendered, in-process.

An input is one option byte and the bytes of a binlog file.  Option bits:

======  ==========================================================================
0x01    rewrite every CRC32 footer first, so mutations reach the decoders
0x02    ``--on-error skip`` (else fail)
0x04    ``--no-verify-checksum``
0x08    follow DDL (an in-memory schema store, as the CLI does by default) when 0x40
        is set too (a quarter of the inputs: it is the slowest part)
0x10    ``--infer-precision``
0x20    text output (else JSON Lines)
======  ==========================================================================

``run(data, path)`` may raise only a ``BinlogError``; anything else is a bug.  Used by
the atheris harness (fuzz/fuzz_binlog.py), the hypothesis mutation test
(tests/hostile/test_mutation.py) and the regression samples (tests/hostile/regressions/).
"""
from __future__ import annotations

import io
import zlib
from pathlib import Path

from binlog.errors import BinlogError
from binlog.output.json_lines import JsonLinesWriter
from binlog.output.text import TextWriter
from binlog.reader import BinlogReader, RowChange

FIX_CRC, SKIP, NO_VERIFY, TRACK_DDL, INFER, TEXT = 0x01, 0x02, 0x04, 0x48, 0x10, 0x20

# Bugs found by fuzzing that are reported but not fixed yet (in code this harness does
# not own): (exception type, text in its message).  Matching exceptions are let through
# so a campaign can go on; fuzz/RESULTS.md lists them.  Empty this when they are fixed.
KNOWN_BUGS: tuple = ()


# --infer-precision's search is bounded by a step count (binlog/infer.py MAX_STEPS,
# 200,000 attempts, each decoding the event from its start): on hostile input with many
# legacy columns that bound is reached only after ~45 s, which libFuzzer's -timeout
# would report as a hang.  Fuzzing uses a lower bound so the rest of the search code is
# still exercised; the full-bound worst case is measured separately (fuzz/RESULTS.md).
FUZZ_INFER_MAX_STEPS = 200


def known_bug(exc: BaseException) -> bool:
    return any(isinstance(exc, kind) and text in str(exc) for kind, text in KNOWN_BUGS)


def fix_crcs(body: bytes) -> bytes:
    """Recompute the CRC32 footer of every event that the headers frame (from offset 4)."""
    data = bytearray(body)
    pos = 4
    while pos + 19 <= len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        if size < 23 or pos + size > len(data):
            break
        raw = bytes(data[pos:pos + size])
        if data[pos + 4] == 15:                  # FDE: CRC over the header with flag 0x1 clear
            raw = raw[:17] + (int.from_bytes(raw[17:19], "little") & ~1).to_bytes(2, "little") + raw[19:]
        data[pos + size - 4:pos + size] = zlib.crc32(raw[:-4]).to_bytes(4, "little")
        pos += size
    return bytes(data)


def mutate(data: bytes, mutations) -> bytes:
    """Apply (kind, where, argument) byte mutations (the hypothesis tests draw them):
    xor, set, insert, delete, dup(licate), cut, int (a 1/2/4-byte little-endian value)."""
    out = bytearray(data)
    for kind, where, arg in mutations:
        if not out:
            break
        i = where % len(out)
        if kind == "xor":
            out[i] ^= arg
        elif kind == "set":
            out[i] = arg
        elif kind == "insert":
            out[i:i] = arg
        elif kind == "delete":
            del out[i:i + arg]
        elif kind == "dup":
            out[i:i] = out[i:i + arg]
        elif kind == "cut":
            del out[i:]
        elif kind == "int":
            size = 1 if arg < 0x100 else 2 if arg < 0x10000 else 4
            out[i:i + size] = arg.to_bytes(size, "little")
    return bytes(out)


def _schema():
    from schema_store.resolver import SchemaResolver
    from schema_store.store import SchemaStore

    return SchemaResolver(SchemaStore(None), track_ddl=True, on_warning=lambda message: None)


def lower_infer_bound() -> None:
    import binlog.infer

    binlog.infer.MAX_STEPS = min(binlog.infer.MAX_STEPS, FUZZ_INFER_MAX_STEPS)


def run(data: bytes, path: Path) -> BinlogReader | None:
    """Decode ``data`` (option byte + file) as ``binlog dump`` would; return the reader,
    or None when a BinlogError stopped it."""
    if not data:
        return None
    options, body = data[0], data[1:]
    if options & FIX_CRC:
        body = fix_crcs(body)
    path.write_bytes(body)
    sink = io.BytesIO()
    text = bool(options & TEXT)
    writer = (TextWriter if text else JsonLinesWriter)(sink, "hex")
    try:
        reader = BinlogReader([path], on_error="skip" if options & SKIP else "fail",
                              verify_checksums=not options & NO_VERIFY,
                              schema=_schema() if options & TRACK_DDL == TRACK_DDL else None,
                              infer_precision=bool(options & INFER))
        for item in reader.items():
            if isinstance(item, RowChange):
                writer.write(item)
            elif text:
                writer.event(item)
            if sink.tell() > 1 << 20:
                sink.seek(0)
                sink.truncate()
    except BinlogError as exc:
        str(exc)          # the message must render too
        return None
    except Exception as exc:
        if known_bug(exc):
            return None
        raise
    for damage in reader.stats.damage:
        str(damage.error)
    if reader.stats.incomplete is not None:
        str(reader.stats.incomplete)
    return reader
