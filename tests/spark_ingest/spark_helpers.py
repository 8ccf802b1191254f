"""`binlog dump --format json` records, and DataFrame rows, in one comparable form."""
from __future__ import annotations

import io
from pathlib import Path

import orjson

from binlog.output.cdc import CdcJsonWriter
from binlog.reader import BinlogReader, RowChange, StatementChange
from binlog.replay.keys import KeyCatalog
from schema_store.resolver import SchemaResolver
from schema_store.store import SchemaStore

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "mariadb-10.11"
# the two samples whose legacy tables were created before their binlog starts
SCHEMA_DDL = [str(SAMPLES / "temporal_predump.schema.sql"), str(SAMPLES / "seed_tt_test2.schema.sql")]


def dump_records(paths, schema_ddl=(), with_types=False, **reader_options) -> list[dict]:
    """Exactly the JSON objects `binlog dump --format json [--schema-ddl ...] PATHS` prints
    (the CDC writer of binlog.output.cdc, as dump uses it)."""
    store = SchemaStore()
    for path in schema_ddl:
        store.import_ddl(Path(path).read_text(encoding="utf-8"), source=f"ddl:{path}")
    out = io.BytesIO()
    schema = SchemaResolver(store)
    writer = CdcJsonWriter(out, keys=KeyCatalog(schema=schema), with_types=with_types)
    for item in BinlogReader([str(p) for p in paths], schema=schema, **reader_options).items(statements=True):
        if isinstance(item, RowChange):
            writer.write(item)
        elif isinstance(item, StatementChange):
            writer.statement(item)
        else:
            writer.event(item)
    writer.close()
    return [as_change_row(orjson.loads(line)) for line in out.getvalue().splitlines()]


HEAD_KEYS = ("file", "pos", "ts", "server_id", "gtid", "db", "table", "op")
#: the CDC fields (changes/ has them as columns; null on statement and DDL rows)
CDC_KEYS = ("row", "pk", "commit", "xid", "end_pos", "types")


def _cdc(rec) -> tuple:
    """The CDC fields of a record or row in one form (types: parsed JSON text)."""
    get = rec.get if isinstance(rec, dict) else (lambda k: rec[k])
    values = [get(k) for k in CDC_KEYS]
    values[1] = None if values[1] is None else tuple(values[1])
    values[3] = None if values[3] is None else int(values[3])     # DECIMAL(20,0)
    values[5] = _image(values[5])
    return tuple(values)


def as_change_row(rec: dict) -> dict:
    """A statement or DDL record as its row of changes/ carries it: the keys beyond the
    head in ``after`` (spark_ingest.records); row records as they are."""
    if rec["op"] not in ("statement", "ddl"):
        return rec
    out = {k: rec[k] for k in HEAD_KEYS}
    out["before"] = None
    out["after"] = {k: v for k, v in rec.items() if k not in HEAD_KEYS}
    return out


def _image(d) -> bytes | None:
    """A JSON image (a dict from dump, or the JSON text of a DataFrame row) in one form."""
    if d is None:
        return None
    return orjson.dumps(orjson.loads(d) if isinstance(d, (str, bytes)) else d)


def record_key(rec: dict) -> tuple:
    image = _image
    return (rec["file"], rec["pos"], rec["ts"], rec["server_id"], rec["gtid"], rec["db"],
            rec["table"], rec["op"], image(rec["before"]), image(rec["after"])) + _cdc(rec)


def row_key(row) -> tuple:
    image = _image
    return (row["file"], row["pos"], row["ts"].strftime("%Y-%m-%dT%H:%M:%SZ") if row["ts"] else None,
            row["server_id"], row["gtid"], row["db"], row["table"], row["op"],
            image(row["before"]), image(row["after"])) + _cdc(row)


def arrow_key(rec: dict) -> tuple:
    """A record of a pyarrow batch (``to_pylist``) in the same form."""
    image = _image
    ts = rec["ts"]
    return (rec["file"], rec["pos"], ts.strftime("%Y-%m-%dT%H:%M:%SZ") if ts else None,
            rec["server_id"], rec["gtid"], rec["db"], rec["table"], rec["op"],
            image(rec["before"]), image(rec["after"])) + _cdc(rec)
