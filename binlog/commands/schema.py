"""``binlog schema set|show|import``: inspect and maintain the schema store."""
from __future__ import annotations

from ..errors import UsageError
from ..options import build
from ..user_values import parse_position, parse_table_name
from ._common import EXIT_OK, open_schema


def add_parser(sub) -> None:
    schema = sub.add_parser("schema")
    ssub = schema.add_subparsers(dest="schema_command", required=True)
    for name, text in (("set", "set a column's type and precision (kept in the store)"),
                       ("show", "list tables, or one table's versions"),
                       ("import", "import DDL files or a live snapshot into the store")):
        build(ssub.add_parser(name, help=text), f"schema {name}")
    schema.set_defaults(run=run)


def run(args) -> int:
    from schema_store.store import SchemaStore

    if args.schema_command == "import":
        if not args.schema_store:
            raise UsageError("schema import needs --schema-store PATH")
        resolver = open_schema(args, required=True)
        tables = resolver.store.tables()
        print(f"{len(tables)} table(s) in {args.schema_store}")
        return EXIT_OK
    store = SchemaStore(args.schema_store)
    if args.schema_command == "set":
        db, table = parse_table_name(args.table)
        kind = args.type.upper()
        if kind not in ("TIMESTAMP", "DATETIME", "TIME"):
            raise UsageError(f"TYPE must be TIMESTAMP, DATETIME or TIME, not {args.type!r}")
        if not 0 <= args.precision <= 6:
            raise UsageError(f"PRECISION must be 0..6, not {args.precision}")
        column = args.column
        column = int(column[1:]) if column.startswith("@") and column[1:].isdigit() else column
        store.set_override(db, table, column, kind.lower(), args.precision,
                           position=parse_position(args.from_position))
        print(f"{db}.{table} {args.column}: {kind}({args.precision})")
        return EXIT_OK
    if args.table:
        db, table = parse_table_name(args.table)
        for position, source, schema in store.history(db, table):
            where = "baseline" if position is None else f"{position[0]}:{position[1]}"
            if schema is None:
                print(f"{where}\t{source}\tdropped")
                continue
            cols = ", ".join(_describe_column(c) for c in schema.columns)
            print(f"{where}\t{source}\t{cols}")
        for o in store.overrides(db, table):
            column = f"@{o['column']}" if isinstance(o["column"], int) else o["column"]
            since = "everywhere" if o["position"] is None else f"from {o['position'][0]}:{o['position'][1]}"
            print(f"{o['kind']}\t{column}\t{o['data_type']}({o['precision']})\t{since}\t{o['source']}")
        return EXIT_OK
    for db, table in store.tables():
        print(f"{db}.{table}")
    return EXIT_OK


def _describe_column(col) -> str:
    text = f"{col.name} {col.data_type}"
    if col.datetime_precision:
        text += f"({col.datetime_precision})"
    if col.legacy:
        text += " /* mariadb-5.3 */"
    return text
