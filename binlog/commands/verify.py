"""``binlog verify-rows --against DSN SRC...``: are the rows the binlog changed as it says?

For every row the input changed (by the target's primary key, or NOT NULL unique key),
the last image the input gives is the expected state: its TiCDC CRC32 checksum
(``binlog.checksum``), or absence after a DELETE.  The target's current row is read by
that key and its checksum recomputed from the target's own values and column types; rows
whose checksums differ, that are missing, or that should have been deleted are reported.

Input: binlog files (decoded here, as ``binlog dump`` would), or ``--records FILE`` -
JSON Lines written by ``binlog dump --checksum`` (``-`` for stdin), whose ``checksum``
fields are then the expected values.  Exit codes: 0 every row matches, 6 some differ,
1 a decoding error, 2 bad usage, 5 the target failed.
"""
from __future__ import annotations

import sys
from decimal import Decimal

from ..charsets import CHARSET_CODECS
from ..checksum import (
    ChecksumError,
    PlanChecksums,
    RowChecksum,
    at_change,
    crc_update,
    encode_value,
    fast_encoder,
)
from ..column import Column
from ..constants import BINARY_COLLATION, ColumnType as T
from ..errors import UsageError
from ..options import build
from ..output.sql.literals import keys_condition, literal, literal_function, quote_ident
from ..output.sql.session import SESSION_SETUP
from ..reader import RowChange
from ..rows import after_checksums, compiled_module
from ._common import (
    EXIT_DIFFERENT,
    EXIT_TARGET,
    TargetError,
    connect,
    make_reader,
    warn,
    warn_unmatched,
)
from ._expected import Expected, ExpectedRows
from ._progress import with_progress

CHUNK = 500

_TYPE_CODES = None


def _type_codes():
    global _TYPE_CODES
    if _TYPE_CODES is None:
        _TYPE_CODES = {
            "tinyint": T.TINY, "smallint": T.SHORT, "mediumint": T.INT24, "int": T.LONG,
            "integer": T.LONG, "bigint": T.LONGLONG, "year": T.YEAR, "float": T.FLOAT,
            "double": T.DOUBLE, "real": T.DOUBLE, "decimal": T.NEWDECIMAL, "numeric": T.NEWDECIMAL,
            "bit": T.BIT, "enum": T.ENUM, "set": T.SET, "date": T.DATE, "datetime": T.DATETIME2,
            "timestamp": T.TIMESTAMP2, "time": T.TIME2, "json": T.JSON,
            "char": T.STRING, "varchar": T.VARCHAR, "binary": T.STRING, "varbinary": T.VARCHAR,
            "geometry": T.GEOMETRY, "point": T.GEOMETRY, "linestring": T.GEOMETRY,
            "polygon": T.GEOMETRY, "multipoint": T.GEOMETRY, "multilinestring": T.GEOMETRY,
            "multipolygon": T.GEOMETRY, "geometrycollection": T.GEOMETRY,
        }
    return _TYPE_CODES


def add_parser(sub) -> None:
    p = sub.add_parser("verify-rows")
    build(p, "verify-rows")
    p.set_defaults(run=run)


def pseudo_columns(live):
    """binlog.column.Column objects for a target table's columns (information_schema)."""
    codes = _type_codes()
    cols = []
    for i, name in enumerate(live.columns):
        dtype = live.data_types[i]
        code = codes.get(dtype, T.BLOB)
        charset = live.charsets[i] if live.charsets else None
        col = Column(index=i, binlog_type=code, type=code, name=name,
                     unsigned="unsigned" in live.column_types[i].lower(),
                     precision=live.datetime_precision[i] if live.datetime_precision else None)
        if charset and charset != "binary":
            col.encoding = CHARSET_CODECS.get("utf8mb4" if charset.startswith("utf8") else charset)
        elif code not in (T.ENUM, T.SET):
            col.collation = BINARY_COLLATION
        cols.append(col)
    return cols


def select_expr(col, name_sql: str) -> str:
    t = col.type
    if t == T.FLOAT:
        return f"CAST({name_sql} AS DOUBLE)"      # the text form of a FLOAT has 6 digits only
    if t in (T.ENUM, T.SET):
        return f"({name_sql} + 0)"
    if t == T.GEOMETRY:
        return "NULL"                             # not part of the checksum
    return name_sql


def from_target(raw, col):
    """A raw text-protocol value (bytes, column charset) -> the decoder's canonical value."""
    if raw is None:
        return None
    t = col.type
    if t in (T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR, T.ENUM, T.SET):
        return int(raw)
    if t in (T.FLOAT, T.DOUBLE):
        return float(raw)
    if t == T.NEWDECIMAL:
        return Decimal(raw.decode("ascii"))
    if t == T.BIT:
        return int.from_bytes(raw, "big")
    if t in (T.DATE, T.DATETIME2, T.TIMESTAMP2, T.TIME2, T.JSON):
        return raw.decode("utf-8")
    return bytes(raw)


def target_converter(col):
    """``from_target(raw, col)`` for a non-NULL raw value, chosen once per column."""
    t = col.type
    if t in (T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR, T.ENUM, T.SET):
        return int
    if t in (T.FLOAT, T.DOUBLE):
        return float
    if t in (T.DATE, T.DATETIME2, T.TIMESTAMP2, T.TIME2, T.JSON):
        return lambda raw: raw.decode("utf-8")
    if t == T.NEWDECIMAL:
        return lambda raw: Decimal(raw.decode("ascii"))
    if t == T.BIT:
        return lambda raw: int.from_bytes(raw, "big")
    return bytes


_TEXT_CODES = {T.TINY: "i", T.SHORT: "i", T.INT24: "i", T.LONG: "i", T.LONGLONG: "i", T.YEAR: "i",
               T.ENUM: "i", T.SET: "i", T.FLOAT: "f", T.DOUBLE: "f", T.NEWDECIMAL: "d", T.BIT: "B",
               T.DATE: "a", T.DATETIME2: "a", T.TIMESTAMP2: "a", T.TIME2: "a", T.JSON: "u",
               T.GEOMETRY: "s"}


def text_checksum(pcols):
    """``checksum(row)`` of a target row as ``_query`` reads it (the values ``select_expr``
    selects, as bytes), compiled (``_speedups.checksum_text``: the values' text parsed as
    ``target_converter`` and ``encode_value`` read it), or None without the compiled
    module; the function gives None for a value of another form (the Python path decides)."""
    speedups = compiled_module()
    if speedups is None:
        return None
    codes = "".join(_TEXT_CODES.get(c.type, "b") for c in pcols).encode("ascii")
    compiled, fallback = speedups.checksum_text, speedups.Fallback

    def checksum(raw):
        try:
            return compiled(raw, codes)
        except fallback:
            return None
    return checksum


def from_record(value, col):
    """A value of a JSON record (dump's rendering) -> a canonical value for ``col``."""
    if value is None:
        return None
    t = col.type
    if t == T.NEWDECIMAL:
        return Decimal(str(value))
    if t in (T.ENUM, T.SET, T.JSON, T.GEOMETRY):
        return value
    if col.collation == BINARY_COLLATION and isinstance(value, str) and t not in (
            T.DATE, T.DATETIME2, T.TIMESTAMP2, T.TIME2):
        try:
            return bytes.fromhex(value)
        except ValueError:
            return value.encode("utf-8")
    return value


class _Pending:
    """What a transaction not committed yet leaves (its rows' expected state, spilled
    like the totals' past the limit), and what of it cannot be checked; taken into the
    totals at its COMMIT only."""
    __slots__ = ("tx", "rows", "unknown_tables", "unverifiable")

    def __init__(self, tx, limit: int):
        self.tx = tx
        self.rows = ExpectedRows(limit)
        self.unknown_tables: set = set()
        self.unverifiable = 0


def run(args) -> int:
    import pymysql.converters

    if args.memory_rows < 1000:
        raise UsageError("--memory-rows must be at least 1000")

    # Raw values: no decoders (bytes in each column's own charset, text forms as the server
    # prints them); the encoders stay for query parameters.
    encoders = {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}
    conn = connect(args.against, what="the server to verify", conv=encoders, use_unicode=False)
    try:
        with conn.cursor() as cur:
            for stmt in SESSION_SETUP:
                cur.execute(stmt)
        verifier = Verifier(args, conn)
        expected = ExpectedRows(args.memory_rows)
        try:
            verifier.collect(expected)
            return verifier.compare(expected)
        except TargetError as exc:
            sys.stderr.write(f"binlog: error: {exc}\n")
            return EXIT_TARGET
        finally:
            expected.close()
    finally:
        conn.close()


class Verifier:
    def __init__(self, args, conn):
        self.args = args
        self.conn = conn
        self.logged_statements = 0      # statement-logged changes: rows unknown
        self._live = {}
        self.unknown_tables = set()
        self.unverifiable = 0
        self._row_checksum = PlanChecksums()    # a table version's RowChecksum
        self._after_crcs: dict = {}     # (file, offset) -> (plan, [checksum per row])
        self._key_parts: dict = {}      # id(columns) -> (columns, identity, [per key column])

    def live(self, db, table):
        key = (db, table)
        if key not in self._live:      # (called for every row change: the import only here)
            from ..replay.keys import load_live_tables

            try:
                self._live[key] = load_live_tables(self.conn, db, table).get(key)
            except Exception as exc:
                raise TargetError(f"cannot read information_schema for {db}.{table}: {exc}") from exc
        return self._live[key]

    # -- expected state ------------------------------------------------------------------
    def collect(self, out: ExpectedRows) -> None:
        """Into ``out``: the last state of every row the input changed."""
        if self.args.records:
            self._collect_records(out)
            return
        from ..assembly.transactions import Transaction, TxAssembler
        from ..replay.keys import KeyCatalog

        self.keys = KeyCatalog(live=self.live)
        reader = make_reader(self.args)
        reader.set_output_paths(rows_hook=self._event_checksums)
        # Whole transactions only: a --stop-position (or an input) ending inside one
        # leaves it out, as dump --format sql and apply do.  What a transaction's rows
        # leave is worked out as they come (its rows are not kept), and taken at its COMMIT.
        assembler = TxAssembler(on_warning=warn)
        pending: dict = {}      # id(Transaction) -> _Pending
        for item in with_progress(reader, reader.items(), self.args):
            if isinstance(item, RowChange):
                tx = assembler.feed_row(item)
                entry = pending.get(id(tx))
                if entry is None or entry.tx is not tx:
                    for key in [k for k, e in pending.items() if not assembler.holds(e.tx)]:
                        pending.pop(key).rows.close()       # dropped without COMMIT (warned)
                    entry = pending[id(tx)] = _Pending(tx, out.limit)
                self._expect(item, entry)
                continue
            for unit in assembler.feed(item):
                if isinstance(unit, Transaction):
                    self.logged_statements += len(unit.statements)
                    entry = pending.pop(id(unit), None)
                    if entry is not None and entry.tx is unit:
                        self._take(entry, out)
                    self._after_crcs.clear()
                elif unit.kind == "dml":         # a statement-logged change on its own
                    self.logged_statements += 1
        for entry in pending.values():
            entry.rows.close()
        for unit in assembler.finish():
            warn(f"{unit.label}: the input ends before its COMMIT; its {unit.rows} "
                 f"row change(s) are not verified")
        warn_unmatched(reader)
        self._warn_logged()

    def _warn_logged(self) -> None:
        logged = self.logged_statements
        if logged:
            warn(f"{logged} statement-logged change(s) (binlog_format STATEMENT/MIXED): the "
                 f"binlog does not say which rows they changed, so those rows are not verified")

    def _event_checksums(self, name, event, plan) -> None:
        """The after images' checksums of a rows event, computed from its bytes by the
        compiled walk (rows.after_checksums), kept until its transaction is checked."""
        crcs = after_checksums(event, plan, crc_update)
        if crcs is not None:
            self._after_crcs[(name, event.header.offset)] = (plan, crcs)

    def _take(self, entry: _Pending, out: ExpectedRows) -> None:
        """A committed transaction's rows (and what of it could not be checked)."""
        entry.rows.move_to(out)
        self.unknown_tables |= entry.unknown_tables
        self.unverifiable += entry.unverifiable

    def _expect(self, change, entry: _Pending) -> None:
        """Record what ``change`` leaves in the target (the last change of a row wins)."""
        keys = self.keys
        live = self.live(change.db, change.table)
        if live is None:
            entry.unknown_tables.add((change.db, change.table))
            return
        tk = keys.keys(change)
        identity = tk.identity
        if identity is None:
            entry.unknown_tables.add((change.db, change.table))
            return
        cols = change.plan.columns
        table = (change.db, change.table)
        put = entry.rows.put
        origin = f"{change.file} @ {change.pos} {change.op}"
        if change.op == "update":
            old = self._key(change.before, cols, identity)
            new = self._key(change.after, cols, identity)
            if old is not None and new is not None and old[0] != new[0]:
                put(table, Expected(old[0], old[1], None, origin + " (moved away)"))
        image = change.after if change.op != "delete" else change.before
        k = self._key(image, cols, identity)
        if k is None and change.op == "update" and old is not None and change.after is not None \
                and not any(cols[i].key in change.after for i in identity):
            k = old     # a partial (MINIMAL) after image without the key: the key did not change
        if k is None:
            entry.unverifiable += 1
            return
        if change.op == "delete":
            put(table, Expected(k[0], k[1], None, origin))
        else:
            known = self._after_crcs.get((change.file, change.pos))
            try:
                if known is not None and known[0] is change.plan and change.row < len(known[1]):
                    crc = known[1][change.row]
                else:
                    crc = self._row_checksum(change.plan)(change.after)
            except ChecksumError as exc:
                at_change(exc, change)
                raise
            put(table, Expected(k[0], k[1], crc, origin, known=crc is not None))

    def _key(self, image, cols, identity):
        """(encoded key values, their SQL literals) of an image, None without them all."""
        if image is None:
            return None
        parts = self._key_parts.get(id(cols))
        if parts is None or parts[0] is not cols or parts[1] != identity:
            if len(self._key_parts) > 4096:
                self._key_parts.clear()
            # the columns list is held: its id is not taken by another while cached
            parts = self._key_parts[id(cols)] = (cols, identity, [
                (cols[i].key, cols[i], fast_encoder(cols[i]), literal_function(cols[i]))
                for i in identity])
        encoded, literals = [], []
        for key, col, encode, lit in parts[2]:
            value = image.get(key)
            if value is None:
                return None
            data = encode(value)
            encoded.append(encode_value(value, col) if data is None else data)
            literals.append(lit(value))
        return tuple(encoded), tuple(literals)

    def _collect_records(self, out: ExpectedRows) -> None:
        import orjson

        for path in self.args.paths:
            stream = sys.stdin.buffer if path == "-" else open(path, "rb")
            try:
                for n, line in enumerate(stream, 1):
                    if not line.strip():
                        continue
                    rec = orjson.loads(line)
                    db, table, op = rec["db"], rec["table"], rec["op"]
                    if op in ("statement", "ddl"):
                        # no row images: a statement's rows are not known (warned below)
                        self.logged_statements += op == "statement"
                        continue
                    live = self.live(db, table)
                    if live is None:
                        self.unknown_tables.add((db, table))
                        continue
                    pcols = pseudo_columns(live)
                    key_names = live.not_null_uniques()
                    if not key_names:
                        self.unknown_tables.add((db, table))
                        continue
                    ident = [live.index(n_) for n_ in key_names[0]]
                    checksum = (rec.get("checksum") or {})
                    image = rec["after"] if op != "delete" else rec["before"]
                    origin = f"{path}:{n} {rec.get('file')} @ {rec.get('pos')} {op}"
                    k = self._record_key(image, pcols, ident, live)
                    old = self._record_key(rec["before"], pcols, ident, live) if op == "update" else None
                    if k is None and old is not None and image is not None \
                            and not any(live.columns[i] in image for i in ident):
                        k = old     # a partial (MINIMAL) after image without the key: unchanged
                    if k is None:
                        self.unverifiable += 1
                        continue
                    if old is not None and old[0] != k[0]:
                        out.put((db, table), Expected(old[0], old[1], None, origin + " (moved away)"))
                    if op == "delete":
                        out.put((db, table), Expected(k[0], k[1], None, origin))
                    else:
                        crc = checksum.get("current")
                        out.put((db, table), Expected(k[0], k[1], crc, origin, known=crc is not None))
            finally:
                if stream is not sys.stdin.buffer:
                    stream.close()
        self._warn_logged()

    @staticmethod
    def _record_key(image, pcols, ident, live):
        if image is None:
            return None
        values = []
        for i in ident:
            name = live.columns[i]
            if name not in image or image[name] is None:
                return None
            col = pcols[i]
            values.append((from_record(image[name], col), col))
        return (tuple(encode_value(v, c) for v, c in values),
                tuple(literal(v, c) for v, c in values))

    # -- comparison ----------------------------------------------------------------------
    def compare(self, expected: ExpectedRows) -> int:
        tally = _Tally(self.args.max_report)
        for group in expected.groups():
            for db, table in sorted(group):
                self._compare_table(db, table, group[db, table], tally)
        out = sys.stdout
        for line in tally.shown:
            out.write(f"DIFF {line}\n")
        if tally.different > len(tally.shown):
            out.write(f"... and {tally.different - len(tally.shown)} more\n")
        summary = (f"verify-rows: {tally.checked} row(s) checked, {tally.equal} equal, "
                   f"{tally.different} different")
        if self.unverifiable:
            summary += (f", {self.unverifiable} not checked (the binlog does not give their "
                        f"checksum: a partial image, or an ENUM '' that may be the error value)")
        if self.unknown_tables:
            names = ", ".join(f"{d}.{t}" for d, t in sorted(self.unknown_tables))
            summary += f"; tables without a key or missing on the target, not checked: {names}"
        out.write(summary + "\n")
        out.flush()
        return EXIT_DIFFERENT if tally.different else 0

    def _compare_table(self, db, table, rows, tally: "_Tally") -> None:
        """The target's rows by key, CHUNK expected rows at a time (only a chunk's
        target checksums are held)."""
        live = self.live(db, table)
        key_names = live.not_null_uniques()[0]
        read = _TargetReader(live, key_names, f"{quote_ident(db)}.{quote_ident(table)}", self._query)
        chunk: list = []
        for e in rows:
            chunk.append(e)
            if len(chunk) == CHUNK:
                self._compare_chunk(f"{db}.{table}", key_names, chunk, read(chunk), tally)
                chunk = []
        if chunk:
            self._compare_chunk(f"{db}.{table}", key_names, chunk, read(chunk), tally)

    def _compare_chunk(self, label, key_names, chunk, found: dict, tally: "_Tally") -> None:
        for e in chunk:
            tally.checked += 1
            actual = found.get(e.key, "missing")
            name = f"{label} ({', '.join(f'{n}={lit}' for n, lit in zip(key_names, e.key_lits, strict=True))})"
            # (a row whose checksum the binlog does not give - known False - must exist:
            # it is not one the input deleted)
            if e.known and e.checksum is None and actual == "missing":
                tally.equal += 1
            elif e.known and e.checksum is None:
                tally.differs(f"{name}: deleted by the input ({e.origin}) but present on the target")
            elif actual == "missing":
                tally.differs(f"{name}: missing on the target (last change: {e.origin})")
            elif not e.known:
                self.unverifiable += 1
                tally.checked -= 1
            elif actual != e.checksum:
                tally.differs(f"{name}: checksum {e.checksum} expected (last change: "
                              f"{e.origin}), target has {actual}")
            else:
                tally.equal += 1

    def _query(self, sql):
        import pymysql

        try:
            with self.conn.cursor() as cur:
                cur.execute("SET character_set_results = NULL")
                cur.execute(sql)
                rows = cur.fetchall()
                cur.execute("SET character_set_results = utf8mb4")
            return rows
        except pymysql.err.MySQLError as exc:
            raise TargetError(f"query on the target failed: {exc}\n  statement: {sql[:300]}") from exc


class _Tally:
    """Rows checked, equal and different; the first ``shown`` differences' lines."""

    def __init__(self, max_report: int):
        self.max_report = max_report
        self.checked = self.equal = self.different = 0
        self.shown: list[str] = []

    def differs(self, line: str) -> None:
        self.different += 1
        if len(self.shown) < self.max_report:
            self.shown.append(line)


class _TargetReader:
    """``read(chunk)``: {encoded key: checksum} of the target's rows with the keys of
    ``chunk`` (Expected rows), one SELECT by key."""

    def __init__(self, live, key_names, table_sql: str, query):
        pcols = pseudo_columns(live)
        self.key_cols = [quote_ident(n) for n in key_names]
        self.query = query
        self.select = (f"SELECT {', '.join(select_expr(c, quote_ident(c.name)) for c in pcols)} "
                       f"FROM {table_sql} WHERE ")
        self.converters = [(c.key, target_converter(c)) for c in pcols]
        self.checksum = RowChecksum(pcols)
        self.fast = text_checksum(pcols)
        self.key_parts = [(i, self.converters[i][1], pcols[i]) for i in (live.index(n) for n in key_names)]

    def __call__(self, chunk) -> dict:
        found = {}
        for raw in self.query(self.select + keys_condition(self.key_cols, [e.key_lits for e in chunk])):
            key = tuple(encode_value(None if raw[i] is None else f(raw[i]), c) for i, f, c in self.key_parts)
            crc = self.fast(raw) if self.fast is not None else None
            if crc is None:             # no compiled module, or a value of another form
                crc = self.checksum({k: None if v is None else f(v)
                                     for (k, f), v in zip(self.converters, raw, strict=True)})
            found[key] = crc
        return found
