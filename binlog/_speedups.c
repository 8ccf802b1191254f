/*
 * Optional compiled hot path: walks the row images of one rows event along a
 * precompiled plan (binlog/rows.py DecodePlan.walk) and builds the row dicts.
 *
 * It decodes the common column types exactly like the pure-Python decoders in
 * binlog/types/ (same values, same validity checks) and calls the Python decoder for
 * every other column.  It never reports errors itself: on anything unexpected - a read
 * past the end, a value the Python decoder would reject, an exception from a Python
 * decoder - it raises _speedups.Fallback and the caller decodes the event again in pure
 * Python, which raises the typed error with its context.  Byte layouts: see
 * docs/binlog-formats.md sections 6-8 and binlog/types/temporal.py.
 */
#include "_speedups.h"

/* The module: its exceptions and state, then the table of methods (each defined in the
 * binlog/_speedups_*.c file of its section, declared in _speedups.h). */

PyObject *sp_Fallback;          /* _speedups.Fallback */
PyObject *sp_DecimalType;       /* decimal.Decimal */

static PyMethodDef methods[] = {
    {"typed_builder", sp_typed_builder, METH_VARARGS,
     "typed_builder(((type, precision, scale), ...)) -> builder\n\n"
     "Arrow column buffers of a typed table: its columns for the after image, then the same\n"
     "for the before image (spark_ingest/arrow_columns.py: the type codes)."},
    {"typed_append", sp_typed_append, METH_VARARGS,
     "typed_append(builder, data, kind, walk, walk_after, map, map_after) -> rows\n\n"
     "The rows of one rows event into the builder's columns (map: int32 per step, its column\n"
     "or -1); Fallback (and no row added) on anything it does not type exactly as\n"
     "spark_ingest/arrow_typed.py does."},
    {"typed_finish", sp_typed_finish, METH_O,
     "typed_finish(builder) -> [(rows, nulls, validity, values, data), ...]: the buffers,\n"
     "handed over; the builder starts again empty."},
    {"typed_size", sp_typed_size, METH_O, "typed_size(builder) -> bytes held, room to grow included."},
    {"shred_builder", sp_shred_builder, METH_NOARGS,
     "shred_builder() -> builder\n\n"
     "The STRING columns of a table no schema describes, one per key of its JSON images, for\n"
     "its typed image and _before (spark_ingest/arrow_typed.py ShreddedRows)."},
    {"shred_add", sp_shred_add, METH_VARARGS,
     "shred_add(builder, ops, befores, afters) -> rows\n\n"
     "Rows of a batch of changes/ (each column an Arrow string array's (validity or None,\n"
     "offsets, data, offset, length); ops insert, update or delete) into the columns: each\n"
     "value the text Spark's from_json gives a STRING field (arrow_typed.jackson_text);\n"
     "ValueError(text, row) on an image that is not a JSON object (the builder is then not\n"
     "used again)."},
    {"shred_finish", sp_shred_finish, METH_O,
     "shred_finish(builder) -> (rows, [(key, primary, after, before), ...])\n\n"
     "Per key (bytes, the order first seen; primary: seen in a row's typed image) the\n"
     "buffers of its two columns as typed_finish hands them over; the keys stay, the rows go."},
    {"shred_size", sp_shred_size, METH_O, "shred_size(builder) -> bytes held, room to grow included."},
    {"kind_widths", sp_kind_widths, METH_NOARGS,
     "kind_widths() -> (K_COUNT, fixed, temporal, decimal)\n\n"
     "The column kinds' widths of binlog/_column_kinds.h as this module was built with them\n"
     "(tests compare them with binlog/column_kinds.py)."},
    {"tune_allocator", sp_tune_allocator, METH_NOARGS,
     "tune_allocator() -> bool\n\n"
     "Keep freed buffers of up to 16 MiB in the C heap for reuse (glibc mallopt); for the\n"
     "command line's own process.  False without glibc (nothing changed)."},
    {"compile_rewrite", sp_compile_rewrite, METH_VARARGS,
     "compile_rewrite(nbytes, ((null_byte, mask, op, a, kind, n), ...)) -> walk\n\n"
     "A row-image walk for binlog rewrite (binlog/rewrite/images.py: its steps, in order): op 0 a\n"
     "value of a bytes, 1 a value after an a-byte length, 3 a legacy temporal value of\n"
     "kind (K_TS0..K_TIME0, K_TS_HIRES..K_TIME_HIRES) and N, re-encoded in the *2 layout."},
    {"rewrite_rows", sp_rewrite_rows, METH_VARARGS,
     "rewrite_rows(data, kind, walk, walk_after) -> (bytes, values)\n\n"
     "The rows data of one rows event (kind 0 insert, 1 update, 2 delete) with every\n"
     "legacy temporal value in the *2 layout, as binlog/rewrite/images.py rewrite_image writes\n"
     "each image; values: how many were re-encoded.  Fallback where the pure walk raises."},
    {"rewrite_run", sp_rewrite_run, METH_VARARGS,
     "rewrite_run(buf, pos, end, offset, widths, common_header_len, checksum_len, entries,\n"
     "            out_pos, stop_offset, last_log_pos, chain_run, strict_chain, verify_crc,\n"
     "            max_event, max_out)\n"
     "    -> None | (pos, bytes, map_lines, events, changed, rows_events, values,\n"
     "               last_log_pos, chain_run, last_event_pos, out_pos)\n\n"
     "A run of plain rows events (23-25, 30-32), framed and checked as count_run does, each\n"
     "written as binlog rewrite writes it at out_pos of the output (Rewriter._frame): along\n"
     "entries[table_id][scan.count_key] = None (no legacy column: the bytes as they are,\n"
     "the header's log_pos and the CRC32 redone once anything before moved) or (walk,\n"
     "walk_after) of compile_rewrite (the images re-encoded); map_lines: one position-map\n"
     "line per event (MapEntry.line).  Stops before the first event it cannot write, or\n"
     "once max_out bytes are written; None when that is the first."},
    {"compile_walk", sp_compile_walk, METH_VARARGS, "Compile a row-image walk for decode_event."},
    {"decode_event", sp_decode_event, METH_VARARGS, "Decode all row images of one rows event."},
    {"sql_values", sp_sql_values, METH_VARARGS,
     "sql_values(data, kind, walk, walk_after, steps, steps_after, spec, render[, before,\n"
     "           names]) -> [str]\n\n"
     "The '(v1, v2, ...)' of each row's after image (kind 0 insert or delete: the only\n"
     "image; 1 update: with before=1 its before image; with names, a tuple of bytes per\n"
     "column, 'n1 = v1, n2 = v2, ...') as\n"
     "output/sql/literals.py RowValues writes it, by spec (one code per column: q utf8 text quoted,\n"
     "x bytes as hex, p the Python decoder and render(value, column) -> bytes, v by kind,\n"
     "s not written); Fallback on anything else."},
    {"checksum_text", sp_checksum_text, METH_VARARGS,
     "checksum_text(row, codes) -> int\n\n"
     "The TiCDC checksum of a row of text-protocol values (verify-rows' target side), each\n"
     "column read by its code (see binlog/_speedups.c); Fallback on any other form."},
    {"checksum_rows", sp_checksum_rows, METH_VARARGS,
     "checksum_rows(data, kind, walk, walk_after, steps, steps_after, crc_update) -> list\n\n"
     "The TiCDC checksum of each row's after image (None: a delete, or a partial image),\n"
     "computed from the row bytes as encode_rows' flag 8 does; Fallback on anything else."},
    {"encode_run", sp_encode_run, METH_VARARGS,
     "encode_run(buf, pos, end, offset, widths, common_header_len, checksum_len, entries,\n"
     "           prefix, tail, flags, stop_ts, stop_offset, last_log_pos, chain_run,\n"
     "           strict_chain, verify_crc, max_event, max_out)\n"
     "    -> None | (pos, bytes, last_start, rows, [(offset, code, table_id, rows, size)],\n"
     "               last_log_pos, chain_run, last_event_pos)\n\n"
     "A run of plain rows events (23-25, 30-32) straight into JSON lines (flags 4: the text\n"
     "format, each event's '# at' lines first; entries then have the event's name last), as\n"
     "encode_rows writes one event's: framed and checked as count_run does (sizes up to\n"
     "max_event, the log_pos chain, CRC32), each along entries[table_id][scan.count_key]\n"
     "= (kind, walk, walk_after, steps, steps_after, rest, mid, render) registered by the\n"
     "reader; a row's head is prefix + offset + ts + server_id + rest (json_lines._prefix);\n"
     "tail after every row but the run's last.  Stops before the first event it cannot\n"
     "write, or once max_out bytes are written; None when that is the first.  flags 8:\n"
     "checksums as encode_rows writes them; entries then have crc_update last.  flags 48\n"
     "(binlog ingest): no lines (bytes empty); entries end with the typed tables' part\n"
     "(ArrowRows.run_part, or None) and the images builder: each event's images go into\n"
     "the builder as images_encode writes them and its rows into the part's builder as\n"
     "typed_append does, all or none; max_out counts the images' bytes; items end with\n"
     "the event's timestamp, server id and first row in the builder."},
    {"encode_rows", sp_encode_rows, METH_VARARGS,
     "encode_rows(data, kind, walk, walk_after, steps, steps_after, text, flags, head, mid, tail,\n"
     "            render, crc_update=None) -> (bytes, last_start, count)\n\n"
     "All rows of one rows event (kind 0 insert, 1 update, 2 delete; walks and steps as for\n"
     "decode_event) straight into output bytes, no Python object per row or value.\n"
     "text=0: JSON lines, each  head + before + ',\"after\":' + after + ',\"row\":' + N + mid,\n"
     "then tail on every row but the last (the caller holds the last line open: its commit\n"
     "fields are not known yet); an image is null or {\"key\":value,...} as\n"
     "json_lines.image_json writes it.  text=1: per row head, then '### WHERE\\n' and/or\n"
     "'### SET\\n' and one '###   @`key`=literal\\n' per column (output/text.py).\n"
     "flags: 1 --bigint-as-string, 2 --binary-encoding base64, 8 (JSON) each row's TiCDC\n"
     "checksums after mid: ',\"checksum\":{\"current\":N|null,\"previous\":N|null}' (dump\n"
     "--checksum; crc_update(crc, value, column) -> crc adds a Python decoder's value;\n"
     "null for no image or a partial one).  render(value, column) ->\n"
     "bytes writes a value of a column the C walk does not decode (its Python decoder\n"
     "does).  last_start: offset of the last row's output (-1: no row); count: rows.\n"
     "Raises Fallback on anything it does not write exactly as the Python writers do\n"
     "(invalid text, a binary value of 1 MiB or more in JSON, over 256 MiB of output,\n"
     "a damaged image): the caller decodes the event in Python, which raises the typed\n"
     "error."},
    {"images_builder", sp_images_builder, METH_NOARGS,
     "images_builder() -> builder\n\n"
     "The before and after columns of a batch of changes/ (Arrow strings: the JSON images,\n"
     "null where a row has none), filled in row order by images_encode and images_put."},
    {"images_encode", sp_images_encode, METH_VARARGS,
     "images_encode(builder, data, kind, walk, walk_after, steps, steps_after, flags, render)\n"
     "    -> (first, count)\n\n"
     "The images of all rows of one rows event (arguments as for encode_rows; flags 1\n"
     "--bigint-as-string, 2 base64) into the builder's columns, the bytes encode_rows writes\n"
     "for them; first: the number of the event's first row (rows handed over and held\n"
     "before it).  Fallback (and no row added) where encode_rows falls back."},
    {"images_put", sp_images_put, METH_VARARGS,
     "images_put(builder, befores, afters) -> first\n\n"
     "Rows of images made in Python (bytes of UTF-8 JSON text, or None) into the columns."},
    {"images_rows", sp_images_rows, METH_O,
     "images_rows(builder) -> the rows added so far (handed over or held)."},
    {"images_truncate", sp_images_truncate, METH_VARARGS,
     "images_truncate(builder, rows): the rows added after the first `rows` taken out."},
    {"images_finish", sp_images_finish, METH_VARARGS,
     "images_finish(builder, rows) -> (owner, before, after)\n\n"
     "The first `rows` rows held handed over: per column (rows, nulls, validity address,\n"
     "size, offsets address, size, data address, size), the memory freed with owner\n"
     "(pyarrow.foreign_buffer's base); the rows after them stay in the builder."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *decimal = PyImport_ImportModule("decimal");
    if (!decimal) return NULL;
    sp_DecimalType = PyObject_GetAttrString(decimal, "Decimal");
    Py_DECREF(decimal);
    if (!sp_DecimalType) return NULL;
    sp_Fallback = PyErr_NewException("binlog._speedups.Fallback", NULL, NULL);
    if (!sp_Fallback || PyModule_AddObject(m, "Fallback", sp_Fallback) < 0) return NULL;
    Py_INCREF(sp_Fallback);
    return m;
}
