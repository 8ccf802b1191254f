"""What one task runs, in either engine of ``binlog ingest``: a split decoded once into
changes/ (``writer``) and, from the same rows, the typed tables/ (``arrow_typed``: the
compiled walk's Arrow columns, ``arrow_columns``); the Parquet writes in a thread of
their own (``background``).  The local engine runs it in its worker processes, the
Spark engine in its tasks.
"""
from __future__ import annotations

import gc

# Rows per Arrow batch of changes/ in the local engine (the Spark data source's
# batch-size option, 4096 by default, sizes what goes to the JVM): partitioning a batch
# by (db, table, date) costs ~3 ms whatever its size
LOCAL_BATCH_ROWS = 8_192


def table_columns_of(plan) -> dict:
    """{(db, table): [(column, Spark type)]} of every table the plan's stores know
    (``typed.table_columns(plan.stores, ...)``)."""
    from .typed import table_columns

    keys = {tuple(k) for store in plan.stores.values() for k in store.keys()}
    return {key: table_columns(plan.stores, *key) for key in keys}


def use_returning_pool() -> None:
    """pyarrow's own allocations from jemalloc (the local engine sets the default of
    Arrow's C++ code too: spark_ingest.command), which hands freed row groups back to the
    system; pyarrow's default, mimalloc, keeps them.  A build without jemalloc keeps its
    default."""
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:
        pass


def write_split_local(split, opts, snapshot, run_dir: str, tables_dir: str, run: int, columns,
                      keys=None) -> dict:
    """One split decoded once: changes/ (``writer``) and, when ``columns`` is given, its
    typed tables (``arrow_typed``); ``keys``: the plan's key ring as a dict (encrypted
    binlogs).  The result of ``writer.write_records`` plus ``schemaless``: the tables no
    schema describes, typed from their images, with the keys and files the driver
    conforms at the end (``shredded.conform_files``).  A decoding error with on-error=fail
    is a RuntimeError with ``SplitFailed``'s text (it crosses process pools and Spark)."""
    from binlog.crypt import KeyRing

    from .arrow_typed import TypedWriter
    from .background import Background
    from .records import SplitFailed, read_split
    from .shredded import ShreddedTables
    from .writer import SplitWriter

    use_returning_pool()
    # the objects made so far (modules, the plan) are never garbage: out of the cyclic
    # collector's way, which otherwise walks them again and again (5% of the CPU time)
    gc.freeze()
    # the Parquet writes run in a thread while the next rows decode (background.py)
    background = Background()
    try:
        typed = shredded = None
        if columns is not None:
            typed = TypedWriter(tables_dir, run, split.index, lambda db, table: columns.get((db, table)),
                                zone=opts.zone, binary_encoding=opts.binary_encoding, background=background,
                                codec=opts.compression)
            # the tables no schema describes: typed from their images as changes/ is written
            shredded = ShreddedTables(typed)
        writer = SplitWriter(run_dir, split.index, background, None if shredded is None else shredded.add_part,
                             codec=opts.compression)
        ring = KeyRing.from_dict(keys) if keys is not None else None
        try:
            for batch in read_split(split, opts, snapshot, keys=ring, batch_size=LOCAL_BATCH_ROWS,
                                    typed=typed):
                writer.add(batch)
        except SplitFailed as exc:
            # its text, in an exception that crosses the process pool (SplitFailed's own
            # constructor takes other arguments than pickling gives back)
            raise RuntimeError(str(exc)) from None
        writer.files.close()
        if typed is not None:
            typed.close()
    finally:
        background.close()
    result = writer.result()
    if shredded is not None:
        result["schemaless"] = shredded.result()
    return result
