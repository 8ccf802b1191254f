"""`binlog rewrite` on the sample binlogs a real MariaDB 10.11 wrote (samples/): what
`mariadb-binlog -v` (the server's own client) prints of the output against the server's
table snapshots (``*.expected.json``), byte-identical output for binlogs with nothing to
rewrite, `binlog dump` of the output without a schema against the input with it, the
position map, reruns after a cut or an unknown precision, compressed events, exit codes."""
from __future__ import annotations

import calendar
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from binlog.exitcodes import Exit
from binlog.rewrite import StreamRewriter, lookup, parse_map
from binlog.stream import NEED_DATA

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / "mariadb-10.11"
MARIADB_BINLOG = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"

# samples with legacy temporal columns, and the schema option each needs (the others
# create their tables inside the binlog: the DDL is tracked)
LEGACY = {
    "temporal_predump": ["--schema-ddl", SAMPLES / "temporal_predump.schema.sql"],
    "seed_tt_test2": ["--schema-ddl", SAMPLES / "seed_tt_test2.schema.sql"],
    "legacy_temporal": [],
    "temporal_cells": [],
    "temporal_alter": [],
}
NOTHING_TO_REWRITE = sorted(
    [p for p in SAMPLES.glob("*.binlog") if p.stem not in LEGACY and p.stem != "compressed"]
    + list((SAMPLES / "events_misc").glob("mariadb-bin.0*"))
    + [p for p in (REPO / "samples" / "mysql-test").iterdir() if re.search(r"\.0*\d+$", p.name)])


def binlog(*args):
    result = subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)],
                            capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def rewrite(case: str, out: Path, *extra) -> subprocess.CompletedProcess:
    return binlog("rewrite", SAMPLES / f"{case}.binlog", *LEGACY.get(case, []), "--to", out, *extra)


def dump(path, *extra) -> list[dict]:
    result = binlog("dump", path, *extra)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


# --- mariadb-binlog -v against the server's snapshots ----------------------------------

def assert_same_records_mapped(before: list[dict], after: list[dict], entries) -> None:
    """The input's records equal the output's once their positions are mapped to the
    output's (the position map rewrite writes beside it)."""
    for x, y in zip(before, after, strict=True):
        x = dict(x, pos=lookup(entries, x["pos"]))
        if x.get("end_pos") is not None:
            x["end_pos"] = lookup(entries, x["end_pos"])
        assert x == y


def verbose_rows(path: Path) -> tuple[int, str, dict]:
    """(exit code, stderr+corruption notes, {table: rows}): the rows the row events of
    `mariadb-binlog -v` leave, as tuples of printed values (an UPDATE replaces its WHERE
    image, a DELETE removes it; rows from before the binlog are not there)."""
    result = subprocess.run([MARIADB_BINLOG, "-v", str(path)], capture_output=True, text=True,
                            errors="replace", timeout=120)
    tables: dict[str, list] = {}
    kind = table = None
    images: list[list[str]] = []

    def flush():
        if kind is None:
            return
        rows = tables.setdefault(table, [])
        if kind == "INSERT INTO":
            rows.append(tuple(images[0]))
        elif kind == "UPDATE":
            if tuple(images[0]) in rows:
                rows.remove(tuple(images[0]))
            rows.append(tuple(images[1]))
        elif tuple(images[0]) in rows:
            rows.remove(tuple(images[0]))

    for line in result.stdout.splitlines():
        m = re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) `(.*)`\.`(.*)`$", line)
        if m:
            flush()
            kind, table, images = m.group(1), f"{m.group(2)}.{m.group(3)}", []
        elif line in ("### SET", "### WHERE"):
            images.append([])
        elif line.startswith("###   @"):
            images[-1].append(line.split("=", 1)[1])
        elif not line.startswith("###"):
            flush()
            kind = None
    flush()
    notes = result.stderr + ("corrupted" if "Corrupted replication event" in result.stdout else "")
    return result.returncode, notes, tables


def printed(value, column: dict) -> str:
    """A server value (CAST AS CHAR, session time zone +00:00) as mariadb-binlog -v prints
    it (sql/log_event_client.cc log_event_print_value): TIMESTAMP as epoch seconds with its
    fraction, DATETIME/TIME/strings quoted, numbers bare."""
    if value is None:
        return "NULL"
    kind = column["data_type"]
    if kind == "timestamp":
        whole, _, frac = value.partition(".")
        seconds = 0 if whole.startswith("0000") else calendar.timegm(
            tuple(map(int, re.split("[- :]", whole))) + (0, 0, 0))
        return f"{seconds}.{frac}" if frac else str(seconds)
    if kind in ("int", "bigint", "smallint", "tinyint", "mediumint"):
        return str(value)
    return "'" + str(value) + "'"


def server_rows(case: str) -> dict:
    """{table: set of rows as mariadb-binlog prints them} of each table's last snapshot."""
    expected = json.loads((SAMPLES / f"{case}.expected.json").read_text())
    last: dict = {}
    for step in expected["steps"]:
        last.update(step["snapshot"])
    out = {}
    for table, rows in last.items():
        columns = expected["tables"][table]["columns"]
        out[table] = {tuple(printed(v, c) for v, c in zip(row, columns, strict=True)) for row in rows}
    return out


@pytest.mark.parametrize("case", ["temporal_predump", "legacy_temporal", "temporal_cells",
                                  "seed_tt_test2"])
def test_mariadb_binlog_prints_the_servers_values(case, tmp_path):
    assert rewrite(case, tmp_path).returncode == Exit.OK
    code, notes, rows = verbose_rows(tmp_path / f"{case}.binlog")
    assert code == 0 and not notes, notes
    snapshot = server_rows(case)
    checked = 0
    for table, left in rows.items():
        # a table ALTERed after its last row event has other columns now: not compared
        widths = {len(row) for row in snapshot.get(table, ())} | {len(row) for row in left}
        if table in snapshot and len(widths) == 1:
            assert set(left) <= snapshot[table], (table, set(left) - snapshot[table])
            checked += len(left)
    assert checked >= 2
    # the input: mariadb-binlog fails, says the event is corrupted, or prints other rows
    code, notes, rows = verbose_rows(SAMPLES / f"{case}.binlog")
    wrong = [t for t, left in rows.items() if t in snapshot and not set(left) <= snapshot[t]
             and len({len(row) for row in snapshot[t]} | {len(row) for row in left}) == 1]
    assert code != 0 or notes or wrong


# --- our dump: output without a schema = input with it ------------------------------------

@pytest.mark.parametrize("case", sorted(LEGACY))
def test_dump_of_the_output_needs_no_schema(case, tmp_path):
    assert rewrite(case, tmp_path, "--full-metadata").returncode == Exit.OK
    out = tmp_path / f"{case}.binlog"
    entries = parse_map((tmp_path / f"{case}.binlog.map").read_text(), "map")
    before = dump(SAMPLES / f"{case}.binlog", *LEGACY[case])
    after = dump(out)
    assert len(before) == len(after) > 0
    assert_same_records_mapped(before, after, entries)


def test_without_full_metadata_the_values_are_the_same(tmp_path):
    case = "temporal_predump"
    assert rewrite(case, tmp_path).returncode == Exit.OK
    before = [r for r in dump(SAMPLES / f"{case}.binlog", *LEGACY[case]) if r["op"] != "ddl"]
    after = [r for r in dump(tmp_path / f"{case}.binlog") if r["op"] != "ddl"]
    def text(v):        # a text column of unknown charset: its bytes
        return bytes.fromhex(v["bytes_hex"]).decode() if isinstance(v, dict) else v

    assert len(before) == len(after) > 5
    for x, y in zip(before, after, strict=True):
        for image in ("before", "after"):
            if x[image] is not None:
                assert list(x[image].values()) == [text(v) for v in y[image].values()]
        assert list(y["after"] or y["before"])[0] == "@1"      # no names in the binlog


def test_full_metadata_is_read_by_mariadb_binlog(tmp_path):
    assert rewrite("temporal_predump", tmp_path, "--full-metadata").returncode == Exit.OK
    result = subprocess.run([MARIADB_BINLOG, "--print-table-metadata",
                             str(tmp_path / "temporal_predump.binlog")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "# Columns(`id` INT NOT NULL,\n#         `ts0` TIMESTAMP,\n#         `ts1` TIMESTAMP(1)" \
        in result.stdout
    assert "`t6` TIME(6)" in result.stdout and "# Primary Key(id)" in result.stdout


# --- byte-identical when there is nothing to rewrite ----------------------------------------

@pytest.mark.parametrize("path", NOTHING_TO_REWRITE, ids=lambda p: p.name)
def test_nothing_to_rewrite_is_byte_identical(path):
    data = path.read_bytes()
    r = StreamRewriter(path.name)
    r.feed(data)
    out = [data[:4]]
    try:
        r.close()
        while (event := r.next()) is not NEED_DATA:
            out.append(event.data)
    except Exception as exc:        # damaged corpus files: what was rewritten before it
        from binlog.errors import BinlogError

        assert isinstance(exc, BinlogError)
    written = b"".join(out)
    assert written == data[:len(written)]
    assert r.rewriter.stats.changed == 0


def test_command_output_is_byte_identical(tmp_path):
    result = binlog("rewrite", SAMPLES / "events_misc", "--to", tmp_path)
    assert result.returncode == Exit.OK, result.stderr
    for name in ("mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"):
        assert (tmp_path / name).read_bytes() == (SAMPLES / "events_misc" / name).read_bytes()
    assert (tmp_path / "mariadb-bin.index").read_text().split() == [
        "mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"]


# --- compressed events --------------------------------------------------------------------

def test_compressed_events_are_written_uncompressed(tmp_path):
    assert binlog("rewrite", SAMPLES / "compressed.binlog", "--to", tmp_path).returncode == 0
    out = tmp_path / "compressed.binlog"
    listing = subprocess.run([MARIADB_BINLOG, "-v", str(out)], capture_output=True, text=True,
                             timeout=60)
    assert listing.returncode == 0
    assert "_compressed" not in listing.stdout.lower()
    source = subprocess.run([MARIADB_BINLOG, "-v", str(SAMPLES / "compressed.binlog")],
                            capture_output=True, text=True, timeout=60).stdout
    assert "compressed" in source.lower()
    assert dump(out)[1:] and [r for r in dump(out) if r["op"] != "ddl"] == [
        dict(r, pos=r["pos"]) | {"pos": _mapped(tmp_path, "compressed", r["pos"]),
                                 "end_pos": _mapped(tmp_path, "compressed", r["end_pos"])}
        for r in dump(SAMPLES / "compressed.binlog") if r["op"] != "ddl"]


def _mapped(out, case, pos):
    entries = parse_map((out / f"{case}.binlog.map").read_text(), "map")
    return None if pos is None else lookup(entries, pos)


def test_keep_compressed_is_byte_identical_without_legacy(tmp_path):
    result = binlog("rewrite", SAMPLES / "compressed.binlog", "--to", tmp_path, "--keep-compressed")
    assert result.returncode == 0
    assert (tmp_path / "compressed.binlog").read_bytes() == (SAMPLES / "compressed.binlog").read_bytes()


# --- reruns, the map ----------------------------------------------------------------------

def test_rerun_after_a_cut_continues_without_a_duplicate(tmp_path):
    whole = tmp_path / "whole"
    assert rewrite("temporal_predump", whole).returncode == Exit.OK
    reference = (whole / "temporal_predump.binlog").read_bytes()
    ref_map = (whole / "temporal_predump.binlog.map").read_text()
    cut = tmp_path / "cut"
    assert rewrite("temporal_predump", cut).returncode == Exit.OK
    out = cut / "temporal_predump.binlog"
    for size in (len(reference) - 7, 3001, 600, 5, 0):     # mid-event, mid-header, nothing
        with open(out, "r+b") as f:
            f.truncate(size)
        result = rewrite("temporal_predump", cut)
        assert result.returncode == Exit.OK, result.stderr
        assert out.read_bytes() == reference
        assert (cut / "temporal_predump.binlog.map").read_text() == ref_map
    # a map cut mid-line (written after the binlog) loses the event: it is written again
    mapped = cut / "temporal_predump.binlog.map"
    mapped.write_text(ref_map[:-3])
    assert rewrite("temporal_predump", cut).returncode == Exit.OK
    assert out.read_bytes() == reference and mapped.read_text() == ref_map
    result = rewrite("temporal_predump", cut)       # complete: nothing written twice
    assert result.returncode == Exit.OK and "0 events written" in result.stderr


def test_unknown_precision_stops_before_the_transaction_and_a_rerun_continues(tmp_path):
    result = binlog("rewrite", SAMPLES / "temporal_predump.binlog", "--to", tmp_path)
    assert result.returncode == Exit.INPUT_ERROR
    assert "PrecisionUnknown" not in result.stderr      # the message, as dump gives it
    assert "tp.legacy_all column @2: precision of a legacy MariaDB TIMESTAMP column is not " \
           "recorded in the binlog" in result.stderr and "--schema-ddl FILE" in result.stderr
    assert "cut back to 389 bytes" in result.stderr
    out = tmp_path / "temporal_predump.binlog"
    entries = parse_map((tmp_path / "temporal_predump.binlog.map").read_text(), "map")
    # the output ends where the transaction's GTID starts (the server's SHOW BINLOG EVENTS)
    events = (SAMPLES / "temporal_predump.events.txt").read_text()
    assert "\t389\tGtid\t" in events or " 389 " in events or "389" in events
    assert out.stat().st_size == entries[-1].out_end == 389
    result = rewrite("temporal_predump", tmp_path)
    assert result.returncode == Exit.OK, result.stderr
    whole = tmp_path / "whole"
    assert rewrite("temporal_predump", whole).returncode == Exit.OK
    assert out.read_bytes() == (whole / "temporal_predump.binlog").read_bytes()


def test_map_printing_and_lookups(tmp_path):
    assert rewrite("temporal_predump", tmp_path).returncode == Exit.OK
    out = tmp_path / "temporal_predump.binlog"
    listing = binlog("rewrite", "--map", out)
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0] == "in_start\tin_end\tout_start\tout_end" and lines[1] == "4\t256\t4\t256"
    entries = parse_map((tmp_path / "temporal_predump.binlog.map").read_text(), "map")
    # every event: the bytes at out_start are the event the header says, ending at log_pos
    data = out.read_bytes()
    for e in entries:
        size = int.from_bytes(data[e.out_start + 9:e.out_start + 13], "little")
        assert e.out_start + size == e.out_end
        assert int.from_bytes(data[e.out_start + 13:e.out_start + 17], "little") == e.out_end
    assert entries[-1].out_end == len(data)
    changed = next(e for e in entries if e.out_end != e.in_end)
    r = binlog("rewrite", "--map", out, "--input-position", changed.in_end)
    assert r.returncode == 0 and r.stdout.strip() == str(changed.out_end)
    r = binlog("rewrite", "--map", out, "--output-position", changed.out_end)
    assert r.returncode == 0 and r.stdout.strip() == str(changed.in_end)
    r = binlog("rewrite", "--map", out, "--output-position", changed.out_end - 1)
    assert r.returncode == Exit.USAGE and "not the start or end of an event" in r.stderr


def test_exit_codes(tmp_path):
    data = (SAMPLES / "checksum_none.binlog").read_bytes()
    (tmp_path / "cut.binlog").write_bytes(data[:-5])
    r = binlog("rewrite", tmp_path / "cut.binlog", "--to", tmp_path / "o")
    assert r.returncode == Exit.INCOMPLETE and "ends inside the event" in r.stderr
    assert (tmp_path / "o" / "cut.binlog").read_bytes() == data[:len((tmp_path / "o" / "cut.binlog").read_bytes())]
    assert binlog("rewrite", tmp_path / "missing.binlog", "--to", tmp_path / "o").returncode == Exit.USAGE
    assert binlog("rewrite", SAMPLES / "checksum_none.binlog").returncode == Exit.USAGE
    other = tmp_path / "other" / "checksum_none.binlog"
    other.parent.mkdir()
    other.write_bytes(data)
    r = binlog("rewrite", SAMPLES / "checksum_none.binlog", other, "--to", tmp_path / "twice")
    assert r.returncode == Exit.USAGE and "two inputs are named checksum_none.binlog" in r.stderr
    r = binlog("rewrite", SAMPLES / "checksum_none.binlog", "--to", tmp_path / "o",
               "--key-file", SAMPLES.parent / "encrypted" / "keys.txt")
    assert r.returncode == Exit.USAGE and "--write-plaintext" in r.stderr
    r = binlog("rewrite", SAMPLES / "checksum_none.binlog", "--to", tmp_path / "o",
               "--schema-from", "mysql://root:x@127.0.0.1:1/")
    assert r.returncode == Exit.SERVER


def test_decrypted_input_is_written_in_clear_only_when_asked(tmp_path):
    encrypted = SAMPLES.parent / "encrypted"
    keys = encrypted / "keys.txt"
    r = binlog("rewrite", encrypted / "aes_cbc.binlog", "--key-file", keys, "--to", tmp_path)
    assert r.returncode == Exit.USAGE and "--write-plaintext" in r.stderr
    assert not (tmp_path / "aes_cbc.binlog").exists()
    r = binlog("rewrite", encrypted / "aes_cbc.binlog", "--key-file", keys, "--write-plaintext",
               "--to", tmp_path)
    assert r.returncode == Exit.OK, r.stderr
    out = tmp_path / "aes_cbc.binlog"
    listing = subprocess.run([MARIADB_BINLOG, "-v", str(out)], capture_output=True, text=True,
                             errors="replace", timeout=60)
    # mariadb-binlog prints a START_ENCRYPTION as "# Encryption scheme: 1, ..." and stops
    assert listing.returncode == 0 and "Encryption scheme" not in listing.stdout
    assert "### INSERT INTO" in listing.stdout
    entries = parse_map((tmp_path / "aes_cbc.binlog.map").read_text(), "map")
    before = dump(encrypted / "aes_cbc.binlog", "--key-file", keys)
    after = dump(out)
    assert len(before) == len(after) > 10
    assert_same_records_mapped(before, after, entries)


def test_compressed_and_stdin_inputs(tmp_path):
    import gzip

    data = (SAMPLES / "temporal_predump.binlog").read_bytes()
    packed = tmp_path / "in" / "temporal_predump.binlog.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(data))
    schema = LEGACY["temporal_predump"]
    assert binlog("rewrite", packed, *schema, "--to", tmp_path / "gz").returncode == Exit.OK
    assert rewrite("temporal_predump", tmp_path / "plain").returncode == Exit.OK
    reference = (tmp_path / "plain" / "temporal_predump.binlog").read_bytes()
    assert (tmp_path / "gz" / "temporal_predump.binlog").read_bytes() == reference
    r = subprocess.run([sys.executable, "-m", "binlog.cli", "rewrite", "-", *map(str, schema),
                        "--to", str(tmp_path / "stdin")], input=data, capture_output=True,
                       timeout=120)
    assert r.returncode == Exit.OK, r.stderr
    assert (tmp_path / "stdin" / "stdin").read_bytes() == reference


def test_a_binlog_still_being_written_is_continued_by_a_rerun(tmp_path):
    """The input ends inside an event (a relay still growing): what is whole is written,
    exit 4; once the file is complete a rerun writes the rest."""
    data = (SAMPLES / "temporal_predump.binlog").read_bytes()
    growing = tmp_path / "in" / "temporal_predump.binlog"
    growing.parent.mkdir()
    schema = LEGACY["temporal_predump"]
    for size in (3000, 4500, len(data)):
        growing.write_bytes(data[:size])
        r = binlog("rewrite", growing, *schema, "--to", tmp_path / "out")
        assert r.returncode == (Exit.OK if size == len(data) else Exit.INCOMPLETE), r.stderr
    assert rewrite("temporal_predump", tmp_path / "whole").returncode == Exit.OK
    for name in ("temporal_predump.binlog", "temporal_predump.binlog.map"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_follow_writes_as_the_relay_grows(tmp_path):
    import time

    data = (SAMPLES / "temporal_predump.binlog").read_bytes()
    growing = tmp_path / "in" / "temporal_predump.binlog"
    growing.parent.mkdir()
    growing.write_bytes(data[:3000])
    cmd = [sys.executable, "-m", "binlog.cli", "rewrite", str(growing), *map(str, LEGACY["temporal_predump"]),
           "--to", str(tmp_path / "out"), "--follow", "--follow-timeout", "3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out" / "temporal_predump.binlog"
    deadline = time.monotonic() + 60
    while not (out.exists() and out.stat().st_size > 1000) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert out.stat().st_size > 1000        # flushed while waiting
    with open(growing, "ab") as f:
        f.write(data[3000:])
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == Exit.OK, err
    assert rewrite("temporal_predump", tmp_path / "whole").returncode == Exit.OK
    assert out.read_bytes() == (tmp_path / "whole" / "temporal_predump.binlog").read_bytes()


def test_following_an_empty_relay_waits_for_its_first_binlog(tmp_path):
    """serve starts rewrite --follow on a relay its fetch has not filled yet: it waits
    (not exit 2 and a restart), and --follow-timeout still ends an empty wait."""
    import time

    relay = tmp_path / "relay"
    relay.mkdir()
    cmd = [sys.executable, "-m", "binlog.cli", "rewrite", str(relay), *map(str, LEGACY["temporal_predump"]),
           "--to", str(tmp_path / "out"), "--follow", "--follow-timeout", "3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert proc.poll() is None
    (relay / "temporal_predump.000001").write_bytes((SAMPLES / "temporal_predump.binlog").read_bytes())
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == Exit.OK, err
    assert (tmp_path / "out" / "temporal_predump.000001").stat().st_size > 1000
    never_filled = tmp_path / "never-filled"
    never_filled.mkdir()
    empty = binlog("rewrite", never_filled, "--to", tmp_path / "out2", "--follow", "--follow-timeout", "0.5")
    assert empty.returncode == Exit.USAGE and "no binlog files" in empty.stderr
    # binlogs whose order is unknown are refused at once, not waited on
    (never_filled / "copy.bin").write_bytes((SAMPLES / "temporal_predump.binlog").read_bytes())
    unnamed = binlog("rewrite", never_filled, "--to", tmp_path / "out3", "--follow")
    assert unnamed.returncode == Exit.USAGE and "order is unknown" in unnamed.stderr
