"""--on-error skip: damaged events are reported and skipped, a damaged header is
resynchronised past, and everything after the damage decodes as in the whole file;
the end of the input and --follow."""
from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time

import pytest

from binlog.errors import BinlogError, ChecksumMismatchError, IncompleteEventError, MalformedEventError
from binlog.reader import BinlogReader
from binlog.sources.file import read_events
from binlog.stream import NEED_DATA, Damage, EventStream

from .build import GTID, XID, binlog, fde
from .conftest import SAMPLES
from .decode import decode

TYPES_FULL = SAMPLES / "types_full.binlog"          # checksums
CHECKSUM_NONE = SAMPLES / "checksum_none.binlog"    # no checksums
MISC = SAMPLES / "events_misc"


def events_of(path):
    return [e.header for e in read_events(path)]


def rows_after(rows, offset):
    return [r for r in rows if r[0] >= offset]


def dump(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "binlog.cli", "dump", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


# --- resynchronisation ------------------------------------------------------------

@pytest.mark.parametrize("path", [TYPES_FULL, CHECKSUM_NONE], ids=["crc32", "no-checksum"])
def test_damaged_size_field_is_resynchronised_on_the_next_event(path, tmp_path):
    headers = events_of(path)
    victim = next(h for h in headers[len(headers) // 2:] if h.type_code == XID)
    data = bytearray(path.read_bytes())
    data[victim.offset + 9:victim.offset + 13] = (victim.event_size + 1000).to_bytes(4, "little")
    broken = tmp_path / path.name
    broken.write_bytes(bytes(data))
    full = decode(path, schema=None)

    failed = decode(broken, schema=None)
    assert isinstance(failed.error, BinlogError)

    got = decode(broken, on_error="skip", schema=None)
    assert got.error is None
    [damage] = got.damage
    assert (damage.start, damage.end) == (victim.offset, victim.end)
    assert damage.resynced and damage.one_event       # found by scanning; log_pos agrees
    assert rows_after(got.rows, victim.end) == rows_after(full.rows, victim.end)
    assert all(row in full.rows for row in got.rows)


@pytest.mark.parametrize("path", [TYPES_FULL, CHECKSUM_NONE], ids=["crc32", "no-checksum"])
def test_garbage_between_events_is_skipped_exactly(path, tmp_path):
    headers = events_of(path)
    at = headers[len(headers) // 3].offset
    junk = bytes(range(7, 250, 3))
    data = path.read_bytes()
    broken = tmp_path / path.name
    broken.write_bytes(data[:at] + junk + data[at:])
    got = decode(broken, on_error="skip", schema=None)
    [damage] = got.damage
    assert (damage.start, damage.end) == (at, at + len(junk))
    full = decode(path, schema=None)
    # the events after the junk keep their log_pos, so their offsets moved: compare values
    assert [r[1:] for r in got.rows] == [r[1:] for r in full.rows]


def test_bad_magic_is_skipped(tmp_path):
    data = bytearray(TYPES_FULL.read_bytes())
    data[0:4] = b"GIF8"
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))
    with pytest.raises(BinlogError, match="not a binlog file"):
        list(BinlogReader([broken]).items())
    got = decode(broken, on_error="skip", schema=None)
    assert [(d.start, d.end) for d in got.damage] == [(0, 4)]
    assert got.rows == decode(TYPES_FULL, schema=None).rows


def test_damaged_format_description_falls_back_and_finds_the_checksums(tmp_path):
    data = bytearray(TYPES_FULL.read_bytes())
    data[4 + 19 + 10] ^= 0x20                      # inside the server version
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError):
        list(BinlogReader([broken]).items())
    got = decode(broken, on_error="skip", schema=None)
    assert [(d.start, d.end) for d in got.damage] == [(4, 256)]
    assert got.rows == decode(TYPES_FULL, schema=None).rows


def test_chunked_and_bytewise_feeding_agree_in_skip_mode():
    """The sans-IO stream gives the same events and damage however the bytes arrive."""
    data = bytearray(TYPES_FULL.read_bytes()[:6000])
    data[1000] ^= 0xFF                               # a body byte
    data[2000 + 10] ^= 0x40                          # a size byte
    data = bytes(data)

    def run(chunk):
        stream, out = EventStream("t", on_error="skip"), []
        for i in range(0, len(data), chunk):
            stream.feed(data[i:i + chunk])
            while (item := stream.next_event()) is not NEED_DATA:
                out.append(item)
        try:
            stream.close()
            while (item := stream.next_event()) is not NEED_DATA:
                out.append(item)
        except IncompleteEventError as exc:
            out.append(("incomplete", exc.event_offset))
        return [(d.start, d.end) if isinstance(d, Damage) else
                d if isinstance(d, tuple) else (d.header.offset, d.header.type_code) for d in out]

    whole = run(len(data))
    assert any(isinstance(x, tuple) and len(x) == 2 and x[0] != "incomplete" for x in whole)
    assert run(1) == whole
    assert run(97) == whole


def test_rows_event_of_a_damaged_table_map_is_reported_not_guessed(tmp_path):
    headers = events_of(TYPES_FULL)
    tm = next(h for h in headers[40:] if h.type_code == 19)
    data = bytearray(TYPES_FULL.read_bytes())
    data[tm.offset + 30] ^= 0x01
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))
    got = decode(broken, on_error="skip", schema=None)
    assert got.damage[0].start == tm.offset
    lost = got.damage[1]
    assert lost.start == tm.end and "no TABLE_MAP" in str(lost.error)
    assert f"lost to the damage at {tm.offset}" in str(lost.error)


# --- the end of the input -----------------------------------------------------------

def test_truncated_last_file_is_a_clean_stop_and_a_middle_one_is_damage(tmp_path):
    for name in ("mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003", "mariadb-bin.index"):
        shutil.copy(MISC / name, tmp_path / name)
    first = tmp_path / "mariadb-bin.000001"
    cut = first.stat().st_size - 20
    first.write_bytes(first.read_bytes()[:cut])
    incomplete_at = [h.offset for h in events_of(MISC / "mariadb-bin.000001") if h.end > cut][0]

    alone = BinlogReader([first])
    list(alone.items())
    assert alone.stats.incomplete.event_offset == incomplete_at

    with pytest.raises(IncompleteEventError):
        list(BinlogReader([tmp_path]).items())
    reader = BinlogReader([tmp_path], on_error="skip")
    files = {c.file for c in reader.changes()}
    assert "mariadb-bin.000003" in files
    [damage] = reader.stats.damage
    assert (damage.source, damage.start, damage.end) == ("mariadb-bin.000001", incomplete_at, cut)


def test_tail_with_a_damaged_header_is_damage_not_truncation(tmp_path):
    headers = events_of(TYPES_FULL)
    last = [h for h in headers if h.type_code == 25][-1]     # the last DELETE_ROWS event
    data = bytearray(TYPES_FULL.read_bytes()[:last.end])
    data[last.offset + 11] = 0x7F                    # the size now runs far past the end
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))
    with pytest.raises(MalformedEventError, match="header is damaged"):
        list(BinlogReader([broken]).items())
    reader = BinlogReader([broken], on_error="skip")
    list(reader.items())
    assert reader.stats.incomplete is None
    assert [(d.start, d.end) for d in reader.stats.damage] == [(last.offset, last.end)]


def test_encrypted_rest_is_one_damaged_range_in_skip_mode(tmp_path):
    body = b"\x01" + (7).to_bytes(4, "little") + bytes(12)
    data = binlog([(164, body), (GTID, bytes(19))], checksums=True)
    path = tmp_path / "enc.binlog"
    path.write_bytes(data + b"\x8a" * 300)           # "encrypted" events
    with pytest.raises(BinlogError, match="encrypted"):
        list(BinlogReader([path]).items())
    reader = BinlogReader([path], on_error="skip")
    list(reader.items())
    start = len(fde(True))
    assert [(d.start, d.end, d.to_end) for d in reader.stats.damage] == [(start, len(data) + 300, True)]


# --- the command --------------------------------------------------------------------

def test_cli_exit_codes_and_damage_summary(tmp_path):
    headers = events_of(TYPES_FULL)
    victim = headers[100]
    data = bytearray(TYPES_FULL.read_bytes())
    data[victim.offset + 25] ^= 0x10
    broken = tmp_path / "types_full.binlog"
    broken.write_bytes(bytes(data))

    result = dump(broken)
    assert result.returncode == 1
    assert f"types_full.binlog @ {victim.offset}" in result.stderr and "CRC32 mismatch" in result.stderr

    result = dump("--on-error", "skip", broken)
    assert result.returncode == 3, result.stderr
    assert f"binlog: warning: skipped types_full.binlog bytes {victim.offset}..{victim.end}" in result.stderr
    assert "binlog: damage: 1 byte range(s) skipped" in result.stderr
    assert (f"binlog:   types_full.binlog {victim.offset}..{victim.end} ({victim.event_size} bytes, "
            f"one event): ChecksumMismatchError: CRC32 mismatch: stored 0x") in result.stderr

    clean = dump("--on-error", "skip", TYPES_FULL)
    assert clean.returncode == 0 and "damage" not in clean.stderr

    cut = tmp_path / "cut.binlog"
    cut.write_bytes(TYPES_FULL.read_bytes()[:victim.offset + 7])
    result = dump(cut)
    assert result.returncode == 4
    assert f"binlog: warning: cut.binlog @ {victim.offset}: input ends inside an event header" in result.stderr


def test_follow_waits_for_the_rest_of_a_growing_file(tmp_path):
    data = CHECKSUM_NONE.read_bytes()
    live = tmp_path / "live.binlog"
    live.write_bytes(data[:1100])                    # inside the XID at 1096

    def grow():
        time.sleep(0.6)
        with open(live, "ab") as fh:
            fh.write(data[1100:])

    writer = threading.Thread(target=grow)
    writer.start()
    reader = BinlogReader([live], follow=True, follow_timeout=2.0, poll_interval=0.05)
    rows = [c.pos for c in reader.changes()]
    writer.join()
    assert rows == [c.pos for c in BinlogReader([CHECKSUM_NONE]).changes()]
    assert reader.stats.incomplete is None


def test_follow_goes_on_to_the_next_file_after_a_rotate(tmp_path):
    shutil.copy(MISC / "mariadb-bin.000001", tmp_path / "mariadb-bin.000001")

    def rotate():
        time.sleep(0.5)
        shutil.copy(MISC / "mariadb-bin.000002", tmp_path / "mariadb-bin.000002")

    writer = threading.Thread(target=rotate)
    writer.start()
    reader = BinlogReader([tmp_path / "mariadb-bin.000001"], follow=True, follow_timeout=2.0,
                          poll_interval=0.05)
    files = [c.file for c in reader.changes()]
    writer.join()
    assert "mariadb-bin.000002" in files


def test_cli_follow_timeout_exits_4_when_still_inside_an_event(tmp_path):
    live = tmp_path / "live.binlog"
    live.write_bytes(CHECKSUM_NONE.read_bytes()[:1100])
    started = time.monotonic()
    result = dump("--follow", "--follow-timeout", "0.5", live)
    assert result.returncode == 4
    assert "live.binlog @ 1096" in result.stderr
    assert 0.5 <= time.monotonic() - started < 30
