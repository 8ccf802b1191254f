"""Seed inputs for the atheris harness (fuzz/fuzz_binlog.py): small binlogs cut from
the samples and the mysql-test corpus.

Each seed is one option byte (see fuzz_binlog.OPTIONS) and a binlog: the magic, the
file's FORMAT_DESCRIPTION and a window of a few consecutive events (a GTID, a
TABLE_MAP, its rows events, the XID...), so that the fuzzer mutates events of every
kind while each input stays small (fast runs).  Whole files under 4 KiB are seeds too.

    python fuzz/make_seeds.py OUT_DIR
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.paths import CORPUS  # noqa: E402

from binlog.errors import BinlogError  # noqa: E402
from binlog.sources.file import read_events  # noqa: E402

MAX_SEED = 4096
WINDOWS = (1, 2, 3, 5, 8)
PER_FILE = 60


def sources() -> list[Path]:
    files = sorted((ROOT / "samples").rglob("*.binlog"))
    files += sorted((ROOT / "samples").rglob("mariadb-bin.0*"))
    files += sorted(p for p in CORPUS.glob("*") if p.name != "README.md")
    files += sorted((ROOT / "tests" / "hostile" / "regressions").glob("*.bin"))
    return files


def frames(path: Path) -> list[tuple[int, int, int]]:
    out = []
    try:
        for event in read_events(path):
            h = event.header
            if not out or out[-1][0] != h.offset:      # payload inner events share one offset
                out.append((h.offset, h.event_size, h.type_code))
    except BinlogError:
        pass
    return out


def seeds_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if path.suffix == ".bin":                  # a regression input: option byte included
        return [data]
    found = [b"\x01" + data] if len(data) <= MAX_SEED else []
    events = frames(path)
    if not events or events[0][2] != 15:
        return found
    fde_off, fde_size, _ = events[0]
    head = data[:fde_off + fde_size]
    rest = events[1:]
    windows = []
    for k in WINDOWS:
        for i in range(0, len(rest) - k + 1):
            start = rest[i][0]
            end = rest[i + k - 1][0] + rest[i + k - 1][1]
            if len(head) + end - start <= MAX_SEED:
                windows.append(head + data[start:end])
    # spread the windows over the file
    step = max(1, len(windows) // PER_FILE)
    for n, body in enumerate(windows[::step][:PER_FILE]):
        found.append(bytes([0x01 | (n % 4) << 1]) + body)   # fix CRCs; vary mode/verify
    return found


# Inputs of the names target (option byte 0x80, fuzz/names.py): fields split by 0xFE -
# database, table, column, DDL text after "CREATE TABLE ", a string value.
NAME_SEEDS = [
    b"shop\xfeorders\xfeid\xfet (a INT)\xfeplain",
    b"..\xfe../../x\xfe`c\xfet (a INT) --\x01 '\nCOMMENT '\n\\! touch /tmp/p\n' --\x01 '\xfe\\! x",
    b"a.b\xfec\xfed\xfet (a INT) -- trailing comment\xfe';\nsystem id;",
    b"/abs\xfet\x00n\xfe\n\\.\xfet (a VARCHAR(9) DEFAULT 'x\\') /*!*/;\nsource /etc/x\xfe\x1a\x00",
]


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for seed in NAME_SEEDS:
        (out / f"seed-names-{hashlib.sha1(seed).hexdigest()[:12]}").write_bytes(b"\x80" + seed)
        count += 1
    for path in sources():
        for seed in seeds_of(path):
            name = hashlib.sha1(seed).hexdigest()[:16]
            (out / f"seed-{name}").write_bytes(seed)
            count += 1
    print(f"{count} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "fuzz" / "corpus"))
