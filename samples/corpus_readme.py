"""The corpus README (samples/README.md, or README.md beside another output directory):
what each case of samples/generate.py wrote, from its expected.json and events.txt."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def event_counts(out: Path, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    path = out / f"{name}.events.txt"
    if not path.exists():
        return counts
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        kind = line.split("\t")[2]
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def column_types(expected: dict) -> list[str]:
    seen: list[str] = []
    for meta in expected["tables"].values():
        for c in meta["columns"]:
            t = c["column_type"]
            if t not in seen:
                seen.append(t)
    return seen


README_HEAD = """\
# Binlog sample corpus

Real binlog files written by a real MariaDB server, the SQL that made them, and the ground
truth the SERVER reported after every statement. Regenerate with

    python samples/generate.py [--out samples/mariadb-10.11] [--case NAME ...]
    python samples/generate.py --server docker:mariadb:10.0 [--case NAME ...]

The default is a local `mariadbd` (here: MariaDB 10.11 from the Debian package; see
`tests/support/mariadb_server.py`). `--server docker:IMAGE` (or `--docker IMAGE`) starts
one service of `docker/compose.yml` through testcontainers (`tests/support/docker_server.py`)
and writes to `samples/<flavor>-<major.minor>/` (e.g. `samples/mariadb-10.0/`); without a
reachable Docker engine it stops with an error before doing anything. The SQL scripts live
in `samples/sql/`; each output directory is named after the server version series, and
every `expected.json` says which server wrote it (`server`, below).

`python samples/generate.py --add-server-info` adds the `server` key to existing
`expected.json` files without re-running their cases (the values come from a fresh server
of the same version started with the case's options; nothing else in the file changes).

## Files per case (in `mariadb-10.11/`)

| file | what |
|---|---|
| `<case>.binlog` | the one binlog file of the case; cases spanning several files have a directory `<case>/` with `mariadb-bin.00000N` files and `mariadb-bin.index` (names in index order) instead |
| `<case>.events.txt` | `SHOW BINLOG EVENTS IN '<file>'` for every stored file, tab separated: `Log_name Pos Event_type Server_id End_log_pos Info` (newlines/tabs/backslashes in Info escaped as `\\n` `\\t` `\\\\`) |
| `<case>.expected.json` | server-side ground truth, below |
| `<case>.schema.sql` | cases with `--! dump-schema` only: the output of a real `mariadb-dump --no-data --skip-dump-date --databases <db>` (10.11's own dump tool over the server's socket) at that point of the script; 10.11 writes `/* mariadb-5.3 */` after the type of every legacy temporal column |
| `<case>.schema-nomarkers.sql` | the same text with exactly the ` /* mariadb-5.3 */` comments (and their leading space) removed, nothing else. This is how a dump of the same tables looks on servers before 10.5.1, which do not print the marker (10.0/10.1, where the seed's tables come from) - **derived** from the 10.11 dump, not written by a 10.0/10.1 `mysqldump` (those also lack 10.11's first line `/*M!999999\\- enable the sandbox mode */` and may differ in other details, e.g. `utf8` instead of `utf8mb3`). A real old dump comes from `--server docker:mariadb:10.0` |

Every stored file is closed: it ends with ROTATE (the generator runs `FLUSH BINARY LOGS` at
the end and does not store the new, empty file) or with STOP (a `--! restart` in the script).

## Script directives (`samples/sql/*.sql`)

| directive | effect |
|---|---|
| `--! restart` | clean shutdown (the binlog ends with STOP) and start on the same datadir (new file) |
| `--! set-global NAME=VALUE` | `SET GLOBAL` on the script's session; a step `{"directive": "set-global", "value": <new value as SHOW GLOBAL VARIABLES prints it>}`, or `"skipped": "..."` when the server has no such variable (mysql56_temporal_format on 10.0). On 10.11 the new mysql56_temporal_format applies to the next CREATE/ALTER of the same session (checked: see `temporal_cells`) |
| `--! if-variable NAME` ... `--! end-if` | the lines between run only if the server has global variable NAME; skipped lines are listed in `skipped` |
| `--! dump-schema [DB ...]` | writes `<case>.schema.sql` (+ `-nomarkers`); `schema_files`, `schema_dump` in the JSON; not a step |
| `--! start-binlog` | `FLUSH BINARY LOGS` + `PURGE BINARY LOGS TO` the new file: the stored binlog starts here (its Gtid_list names the setup's GTIDs, its first Binlog_checkpoint the purged file); earlier statements are setup (`setup_steps`), the state at this point is `binlog_start` |

## `<case>.expected.json`

```
{
 "server_version": "10.11.19-MariaDB-0+deb12u1-log",      # SELECT VERSION()
 "case": "types_full",
 "description": "...",
 "options": {"server_id": 1, "binlog_format": "ROW", ...}, # server options (besides paths)
 "server": {"version": "10.11.19-MariaDB-0+deb12u1-log",   # which server wrote the files
            "source": "local mariadbd (Debian package)",   # or "docker:mariadb:10.0", ...
            "variables": {"binlog_row_metadata": "FULL",   # SHOW GLOBAL VARIABLES values
                          "mysql56_temporal_format": "OFF", ...},  # when the script starts
            "unsupported_options": {...}},                 # docker only: options the server lacks
 "session_init": ["SET time_zone = '+00:00'", "SET NAMES utf8mb4"],
 "binlog": ["mariadb-bin.000001", ...],                    # original names, index order
 "binlog_paths": ["types_full.binlog"],                    # relative to this directory
 "schema_files": ["<case>.schema.sql", "<case>.schema-nomarkers.sql"],  # --! dump-schema
 "schema_dump": {"databases": ["tp"], "binlog_pos": [...], "gtid_binlog_pos": "0-1-7"},
 "tables": {"db.tbl": {                                    # latest metadata of every table
    "columns": [{"name", "ordinal", "data_type", "column_type", "charset", "collation",
                 "datetime_precision", "nullable", "numeric_precision", "numeric_scale",
                 "character_maximum_length", "character_octet_length",
                 "legacy_temporal", "render"}, ...],
    "primary_key": ["id"],
    "create_table": "CREATE TABLE ..."}},                   # SHOW CREATE TABLE
 "binlog_start": {"binlog_pos": [...], "gtid_binlog_pos": "...",  # --! start-binlog only:
    "tables": {"db.tbl": {...}},                           # metadata and rows of every
    "snapshot": {"db.tbl": [[...], ...]}},                 # table when the binlog starts
 "setup_steps": [{...}],                                   # --! start-binlog only: steps before it
 "steps": [{
    "sql": "INSERT ...",                                   # statement text as run
    "gtid": "0-1-5",                                       # GTID it wrote ('' if none)
    "binlog_pos": ["mariadb-bin.000001", 1234],            # SHOW MASTER STATUS after it
    "snapshot": {"db.tbl": [["1", null, "abc"], ...]},     # tables it named or changed
    "tables_after": {"db.tbl": {...} | null}               # only when a table was created,
 }],                                                       # altered (new metadata) or dropped (null)
 "skipped": [{"line", "sql", "reason"}]}                   # --! if-variable / set-global only
```

- `columns[].data_type`, `column_type`, `charset`, `collation`, `datetime_precision` are
  `information_schema.COLUMNS` (`column_type` keeps MariaDB's comments, e.g.
  `timestamp(6) /* mariadb-5.3 */` marks a legacy temporal column - `legacy_temporal` is
  true then - and `text /*M!100301 COMPRESSED*/` a compressed column). Servers before
  10.5.1 print no marker: there `legacy_temporal` is true for every TIME/DATETIME/TIMESTAMP
  on a server without mysql56_temporal_format (10.0) and null (unknown) on 10.1-10.5.0.
- Snapshot rows are ordered by the primary key (or by all rendered columns when there is
  none); every value is a string rendered by the server, or null:
  - `render: "char"`: `CAST(col AS CHAR)` in session time zone `+00:00` (TIMESTAMPs are
    UTC; temporals carry exactly N fractional digits; DECIMAL exact; FLOAT/DOUBLE as the
    server prints them - compare numerically using `data_type`; ENUM/SET labels; text
    converted to utf8mb4; CHAR without trailing spaces; INET6/UUID in their text form -
    note UUID is stored (and so logged) in a different byte order than its text).
  - `render: "hex"`: `LOWER(HEX(col))` for BINARY/VARBINARY/BLOBs, binary-charset strings
    and GEOMETRY (GEOMETRY hex is MariaDB's internal form: 4-byte LE SRID + WKB, which is
    what the row image carries).
  - `render: "bit"`: `CAST(col+0 AS CHAR)`, the unsigned integer value.
- `snapshot` is taken on a second connection at READ UNCOMMITTED right after the
  statement, so rows of an open transaction (also XA, prepared or not) are visible.
- `gtid` is `@@last_gtid` of the script's session when the statement changed
  `@@gtid_binlog_pos` (when the session cannot run a SELECT, e.g. XA IDLE/PREPARED, the new
  `@@gtid_binlog_pos`, identical with one writer and one domain); `''` when the statement
  wrote no transaction (SET, SELECT, a statement inside BEGIN..COMMIT before the COMMIT).
- A `--! restart` directive appears as a step `{"sql": "--! restart", "directive":
  "restart", "gtid": "", "binlog_pos": [new file, pos], "snapshot": {}}`; a `--! set-global`
  as `{"sql": "--! set-global NAME=VALUE", "directive": "set-global", "gtid": "", "value":
  "ON", "binlog_pos": [...], "snapshot": {}}`.
- With `--! start-binlog`, a replay must start from `binlog_start.snapshot` (rows that
  exist before the first stored event; UPDATEs/DELETEs in the binlog name them).
- `server` was added to the first ten cases afterwards with `--add-server-info` (fresh
  server, same binary and options, values at start); their other keys are unchanged.

## mysql56_temporal_format: the seed's four cells (`temporal_cells`)

The article this project started from ("从主从复制层面看 MySQL / MariaDB 对时间精度支持的演进"), section 4.6, states that the value of `mysql56_temporal_format` when a
table is CREATEd decides its format, and the value at INSERT time does not. `temporal_cells`
reproduces the four cells on 10.11 (same values in every cell; tables
`tc.<create>_<insert>_ts|dt|tm`, TIMESTAMP/DATETIME/TIME(N), N = 0..6):

| created with | inserted with | tables | `column_type` | TABLE_MAP types (metadata) | decodable from the binlog alone |
|---|---|---|---|---|---|
| OFF | OFF | `off_off_*` | `timestamp(N) /* mariadb-5.3 */` ... | TIMESTAMP 7, DATETIME 12, TIME 11 (none) | no: N is only in the schema |
| OFF | ON | `off_on_*` | `... /* mariadb-5.3 */` | 7 / 12 / 11 (none) | no |
| ON | OFF | `on_off_*` | `timestamp(N)` ... | TIMESTAMP2 17, DATETIME2 18, TIME2 19 (fsp) | yes |
| ON | ON | `on_on_*` | `timestamp(N)` ... | 17 / 18 / 19 (fsp) | yes |

The table confirms the seed on 10.11. `mariadb-binlog -vv` started at the `on_off` /
`on_on` parts of `temporal_cells.binlog` (`--start-position` = the Gtid event before the
first `on_off_ts` / `on_on_ts` Table_map in `events.txt`) prints `TIMESTAMP(N) meta=N` etc.
for every column and exits 0; over the whole file it stops (exit 1, nothing on stderr) at
the first rows event of a legacy table, like for every case with legacy columns.

## Cases
"""


README_TAIL = """
## Not covered (yet)

- START_ENCRYPTION_EVENT (needs `encrypt_binlog` and a key management plugin), INCIDENT,
  and MySQL-only events (MySQL GTID/PREVIOUS_GTIDS, ROWS v2, TRANSACTION_PAYLOAD, binary
  JSON): need other servers (see `docker/`; the generator refuses `mysql:8.0` for now: it
  records MariaDB GTIDs).
- Binlogs written by MariaDB 10.0/10.1 themselves: `--server docker:mariadb:10.0` /
  `docker:mariadb:10.1.9` is written but has never run (no Docker engine where this corpus
  was made). Until then legacy temporals are made here with `mysql56_temporal_format=OFF`
  on 10.11, which writes the same row format, and `*.schema-nomarkers.sql` stands in for
  an old server's dump. On the Docker path a case's options are applied with `SET GLOBAL`
  (the compose file fixes each server's command line): options the server lacks (e.g.
  binlog_row_metadata before 10.5) are listed in `server.unsupported_options`; cases whose
  script needs a newer server are skipped (`Case.min_version`).
- The seed's `test2` (`ct timestamp(2)`, no NULL clause) is nullable with `DEFAULT NULL`
  here (explicit_defaults_for_timestamp=ON, the default since 10.10); on the seed's
  10.0/10.1 master (default OFF) it would have been `NOT NULL DEFAULT CURRENT_TIMESTAMP(2)
  ON UPDATE ...`: same row bytes, but the TABLE_MAP null bit of the column differs.
- A TABLE_MAP mixing legacy and MySQL 5.6 temporal columns: 10.11 does not produce one
  (a table-copying ALTER converts every temporal column of the table to the format the
  global is set to at that moment, in both directions; INSTANT / INPLACE are refused:
  see `temporal_alter`).
- INET6/INET4/UUID are rendered in their text form; the row image carries them as
  BINARY(16)/BINARY(4) (STRING type code) bytes.
"""


def write_readme(out: Path, cases: dict[str, Any], readme: Path) -> None:
    """``readme``: a section per case of ``cases`` that has its files in ``out``."""
    parts = [README_HEAD]
    for name, case in cases.items():
        exp_path = out / f"{name}.expected.json"
        if not exp_path.exists():
            continue
        exp = json.loads(exp_path.read_text(encoding="utf-8"))
        counts = event_counts(out, name)
        opts = ", ".join(f"{k}={v}" for k, v in exp["options"].items())
        parts.append(f"\n### `{name}`\n\n{case.description}\n\n")
        source = exp.get("server", {}).get("source")
        parts.append(f"- server: `{exp['server_version']}`"
                     + (f" ({source})" if source else "") + f"; options: `{opts}`\n")
        parts.append(f"- files: {', '.join('`' + p + '`' for p in exp['binlog_paths'])}"
                     + "".join(f", `{p}`" for p in exp.get("schema_files", []))
                     + f"; {len(exp['steps'])} steps"
                     + (f" (+ {len(exp['setup_steps'])} setup steps before the binlog)"
                        if exp.get("setup_steps") else "") + "\n")
        parts.append("- events (SHOW BINLOG EVENTS): "
                     + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())) + "\n")
        types = [t if len(t) <= 60 else t[:45] + "...)" for t in column_types(exp)]
        parts.append("- column types: " + ", ".join(f"`{t}`" for t in types) + "\n")
        if case.legacy:
            parts.append("- legacy temporal columns: decoding needs an external schema "
                         "(precision is not in the binlog); `mariadb-binlog -v` stops at "
                         "the first legacy rows event with exit code 1.\n")
    parts.append(README_TAIL)
    readme.write_text("".join(parts), encoding="utf-8")
