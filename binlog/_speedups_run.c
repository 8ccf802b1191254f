#include "_speedups.h"
#include "_rows_frame.h"

/* ---- encode_run: a run of rows events straight into JSON lines ---------------------- */

/* json_lines._prefix of one event: PREFIX (the file part, up to "pos":), the offset,
 * ,"ts":"<ISO 8601 UTC>","server_id":N, then the entry's rest (gtid, db, table, op,
 * "before":) - what orjson writes for that dict. */
static PyObject *event_head(PyObject *prefix, long long at, uint64_t ts, uint64_t server_id,
                            PyObject *rest) {
    char tmp[160];
    int n = udigits(tmp, (uint64_t)at, 1);
    n += LIT(tmp + n, ",\"ts\":\"");
    long long y, m, d;
    sp_civil((int64_t)(ts / 86400), &y, &m, &d);
    uint64_t rem = ts % 86400;
    int len = sp_datetime_fmt(tmp + n, y, m, d, rem / 3600, rem / 60 % 60, rem % 60, 0, 0);
    tmp[n + 10] = 'T';                 /* iso_ts: %Y-%m-%dT%H:%M:%SZ */
    n += len;
    n += LIT(tmp + n, "Z\",\"server_id\":");
    n += udigits(tmp + n, server_id, 1);
    Py_ssize_t a = PyBytes_GET_SIZE(prefix), c = PyBytes_GET_SIZE(rest);
    PyObject *out = PyBytes_FromStringAndSize(NULL, a + n + c);
    if (!out) return NULL;
    char *o = PyBytes_AS_STRING(out);
    memcpy(o, PyBytes_AS_STRING(prefix), a);
    memcpy(o + a, tmp, n);
    memcpy(o + a + n, PyBytes_AS_STRING(rest), c);
    return out;
}

/* One event's rows along its entry (kind, walk, walk_after, steps, steps_after, rest,
 * mid, render): put_rows with the event's head; 0, or -1 to end the run before it. */
static int encode_entry(Enc *e, PyObject *entry, PyObject *data_obj, PyObject *head,
                        PyObject *tail, Py_ssize_t *last_start, Py_ssize_t *count) {
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 8) return -1;
    int kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (kind < 0 || kind > 2) { PyErr_Clear(); return -1; }
    Walk *w = PyCapsule_GetPointer(PyTuple_GET_ITEM(entry, 1), "binlog.walk");
    Walk *wa = kind == 1 ? PyCapsule_GetPointer(PyTuple_GET_ITEM(entry, 2), "binlog.walk") : w;
    PyObject *steps = PyTuple_GET_ITEM(entry, 3);
    PyObject *psa = kind == 1 ? PyTuple_GET_ITEM(entry, 4) : steps;
    PyObject *mid = PyTuple_GET_ITEM(entry, 6);
    if (!w || !wa) { PyErr_Clear(); return -1; }
    if (!PyTuple_Check(steps) || !PyTuple_Check(psa) || !PyBytes_Check(mid)
        || PyTuple_GET_SIZE(steps) != w->count || PyTuple_GET_SIZE(psa) != wa->count)
        return -1;
    e->render = PyTuple_GET_ITEM(entry, 7);
    if (e->crc) e->crc_update = PyTuple_GET_ITEM(entry, 8);
    return sp_put_rows(e, kind, w, wa, steps, psa, data_obj, head, mid, tail, last_start, count);
}

/* The text format's lines of one rows event before its rows (output/text.py
 * TextWriter.event): "# at N", then "#yymmdd hh:mm:ss server id S  end_log_pos P \t"
 * and the event's name (the entry's) ": table id T" [" flags: STMT_END_F"]. */
static int put_text_event(Enc *e, const Frame *f, const unsigned char *h, uint64_t table_id,
                          int stmt_end, PyObject *name) {
    char tmp[160];
    int n = LIT(tmp, "# at ");
    n += udigits(tmp + n, (uint64_t)f->at, 1);
    tmp[n++] = '\n';
    tmp[n++] = '#';
    uint64_t ts = (uint64_t)f->ts, rem = ts % 86400;
    long long y, m, d;
    sp_civil((int64_t)(ts / 86400), &y, &m, &d);
    n += udigits(tmp + n, (uint64_t)(y % 100), 2);
    n += udigits(tmp + n, (uint64_t)m, 2);
    n += udigits(tmp + n, (uint64_t)d, 2);
    tmp[n++] = ' ';
    n += hms(tmp + n, rem / 3600, rem / 60 % 60, rem % 60);
    n += LIT(tmp + n, " server id ");
    n += udigits(tmp + n, frame_le(h + 5, 4), 1);
    n += LIT(tmp + n, "  end_log_pos ");
    n += udigits(tmp + n, (uint64_t)f->log_pos, 1);
    n += LIT(tmp + n, " \t");
    PUT(tmp, n);
    if (put_bytes(&e->b, name) < 0) return -1;
    n = LIT(tmp, ": table id ");
    n += udigits(tmp + n, table_id, 1);
    if (stmt_end) n += LIT(tmp + n, " flags: STMT_END_F");
    tmp[n++] = '\n';
    PUT(tmp, n);
    return 0;
}

/* One event of binlog ingest's run along its entry (kind, walk, walk_after, steps,
 * steps_after, rest, mid, render, typed part or None, images builder): its images into
 * the batch's columns (image_rows, as images_encode writes them) and its rows into the
 * typed part's builder, all of it or nothing (-1: both cut back); *first: its first
 * row's number in the columns, *written: the bytes of its images. */
static int ingest_event(PyObject *entry, PyObject *data_obj, Enc *e, Py_ssize_t *first,
                        Py_ssize_t *count, Py_ssize_t *written) {
    Images *im = PyCapsule_GetPointer(PyTuple_GET_ITEM(entry, 9), "binlog.images");
    int kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (!im || kind < 0 || kind > 2) return -1;
    Walk *w, *wa;
    PyObject *psa, *steps = PyTuple_GET_ITEM(entry, 3), *typed = PyTuple_GET_ITEM(entry, 8);
    if (sp_event_walks(kind, PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2), steps,
                       PyTuple_GET_ITEM(entry, 4), &w, &wa, &psa) < 0)
        return -1;
    Py_ssize_t held = im->rows, bytes = im->col[0].data.len + im->col[1].data.len;
    Buf own = e->b;                 /* (image_rows points e->b at the columns' buffers) */
    e->render = PyTuple_GET_ITEM(entry, 7);
    int rc = sp_image_rows(im, e, kind, w, wa, steps, psa, data_obj);
    e->b = own;
    *count = im->rows - held;
    if (rc == 0 && typed != Py_None)
        rc = sp_typed_part_add(typed, kind, w, wa, (const unsigned char *)PyBytes_AS_STRING(data_obj),
                               PyBytes_GET_SIZE(data_obj), *count);
    if (rc < 0) {
        sp_images_cut(im, held);
        return -1;
    }
    *first = im->handed + held;
    *written = im->col[0].data.len + im->col[1].data.len - bytes;
    return 0;
}

/* encode_run(buf, pos, end, offset, widths, common_header_len, checksum_len, entries,
 *            prefix, tail, flags, stop_ts, stop_offset, last_log_pos, chain_run,
 *            strict_chain, verify_crc, max_event, max_out) */
PyObject *sp_encode_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_event, max_out;
    long long offset, stop_ts, stop_offset, last_log_pos;
    const char *widths;
    Py_ssize_t widths_len;
    int common_len, checksum_len, flags, strict_chain, verify_crc;
    long chain_run;
    PyObject *entries, *prefix, *tail;
    if (!PyArg_ParseTuple(args, "y*nnLy#iiO!O!O!iLLLlppnn", &view, &pos, &end, &offset,
                          &widths, &widths_len, &common_len, &checksum_len, &PyDict_Type,
                          &entries, &PyBytes_Type, &prefix, &PyBytes_Type, &tail, &flags,
                          &stop_ts, &stop_offset, &last_log_pos, &chain_run, &strict_chain,
                          &verify_crc, &max_event, &max_out))
        return NULL;
    if (widths_len != 256 || pos < 0 || end > view.len || pos > end || common_len < FRAME_HEADER_LEN
        || common_len > 255 || checksum_len < 0 || checksum_len > 4) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "encode_run: bad arguments");
        return NULL;
    }
    PyObject *events = PyList_New(0);
    if (!events) { PyBuffer_Release(&view); return NULL; }
    /* flags 32 (binlog ingest, spark_ingest/records.py): no lines; each event's images
     * go into the batch's columns and its rows into the typed part's builder
     * (ingest_event), max_out counts the images' bytes, and each event's item ends with
     * its timestamp, server id and first row */
    int ingest = !(flags & 4) && (flags & 32);
    Enc e = {{0}, (flags & 4) != 0, flags & 1, (flags & 2) != 0, NULL,
             !(flags & 4) && !ingest && (flags & 8), NULL, 0};
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t start = pos, last_event = -1, last_start = -1, total = 0, images = 0;
    int failed = 0;
    Frame f;
    while ((ingest ? images : e.b.len) < max_out
           && frame_event(buf, pos, end, offset + (pos - start), widths, common_len, checksum_len,
                          max_event, stop_offset, last_log_pos, chain_run, strict_chain, &f)) {
        const unsigned char *h = buf + pos;
        long long at = f.at, size = f.size;
        int code = f.code;
        uint64_t ts = (uint64_t)f.ts;
        if (!frame_plain_rows(code) || (stop_ts >= 0 && f.ts >= stop_ts)) break;
        uint64_t table_id = 0;
        Py_ssize_t data_at = 0, body = (Py_ssize_t)(size - common_len - checksum_len);
        PyObject *entry = frame_entry(h + common_len, body, code, f.width, entries, &table_id,
                                      &data_at);
        if (!entry) {
            if (PyErr_Occurred()) failed = 1;
            break;
        }
        if (verify_crc && checksum_len == 4 && !frame_crc_ok(h, size)) break;
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != (ingest ? 10 : e.text || e.crc ? 9 : 8))
            break;
        if (ingest && PyTuple_GET_ITEM(entry, 8) != Py_None
                && !sp_typed_part_open(PyTuple_GET_ITEM(entry, 8), f.ts))
            break;
        PyObject *data_obj = PyBytes_FromStringAndSize((const char *)h + common_len + data_at,
                                                       body - data_at);
        if (ingest) {
            if (!data_obj) { failed = 1; break; }           /* (out of memory, as below) */
            Py_ssize_t first = 0, count = 0, written = 0;
            int rc = PyBytes_GET_SIZE(data_obj) ? ingest_event(entry, data_obj, &e, &first, &count, &written)
                                                : -1;       /* (an event without rows: the Python path) */
            Py_XDECREF(data_obj);
            PyObject *item = NULL;
            if (rc == 0)
                item = Py_BuildValue("(LiKnLKKn)", at, code, (unsigned long long)table_id, count, size,
                                     (unsigned long long)ts, (unsigned long long)frame_le(h + 5, 4), first);
            if (!item || PyList_Append(events, item) < 0) {
                Py_XDECREF(item);
                /* the event is left to the per-event path, as below; only an interrupt
                 * (or a failure to list it) ends the call */
                if (rc < 0 && (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_Exception)))
                    PyErr_Clear();
                else
                    failed = 1;
                break;
            }
            Py_DECREF(item);
            total += count;
            images += written;
            frame_note_chain(&f, &chain_run, &last_log_pos);
            last_event = pos;
            pos += (Py_ssize_t)size;
            continue;
        }
        PyObject *head = NULL;
        if (data_obj && e.text) {      /* the text format's head is the entry's */
            head = PyTuple_GET_ITEM(entry, 5);
            Py_INCREF(head);
        } else if (data_obj) {
            head = event_head(prefix, at, ts, frame_le(h + 5, 4), PyTuple_GET_ITEM(entry, 5));
        }
        if (!head || PyBytes_GET_SIZE(data_obj) == 0) {
            Py_XDECREF(data_obj); Py_XDECREF(head);
            if (PyErr_Occurred()) failed = 1;
            break;                      /* (an event without rows: the Python path) */
        }
        /* JSON: the previous event's last row is not the last of the transaction; text:
         * the event's own lines come first */
        Py_ssize_t mark = e.b.len, kept_start = last_start, count = 0;
        int rc = 0;
        if (e.text) {
            PyObject *name = PyTuple_GET_ITEM(entry, 8);
            rc = PyBytes_Check(name) && PyBytes_Check(head)
                 ? put_text_event(&e, &f, h, table_id, (int)(frame_le(h + common_len + f.width, 2) & 1),
                                  name)
                 : -1;
        } else if (last_event >= 0) {
            rc = put(&e.b, PyBytes_AS_STRING(tail), PyBytes_GET_SIZE(tail));
        }
        if (rc == 0) rc = encode_entry(&e, entry, data_obj, head, tail, &last_start, &count);
        Py_DECREF(data_obj);
        Py_DECREF(head);
        if (rc < 0) {
            /* this event is left to the Python path, which decodes it again (and raises
             * the typed error, if any); only an interrupt ends the call */
            e.b.len = mark;
            last_start = kept_start;
            if (PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_Exception)) failed = 1;
                else PyErr_Clear();
            }
            break;
        }
        PyObject *item = Py_BuildValue("(LiKnL)", at, code, (unsigned long long)table_id, count, size);
        if (!item || PyList_Append(events, item) < 0) { Py_XDECREF(item); failed = 1; break; }
        Py_DECREF(item);
        total += count;
        frame_note_chain(&f, &chain_run, &last_log_pos);
        last_event = pos;
        pos += (Py_ssize_t)size;
    }
    PyBuffer_Release(&view);
    PyObject *out = NULL;
    if (!failed && last_event >= 0) out = PyBytes_FromStringAndSize(e.b.p, e.b.len);
    PyMem_Free(e.b.p);
    if (failed || (last_event >= 0 && !out)) { Py_DECREF(events); Py_XDECREF(out); return NULL; }
    if (last_event < 0) { Py_DECREF(events); Py_RETURN_NONE; }
    return Py_BuildValue("nNnnNLln", pos, out, last_start, total, events, last_log_pos, chain_run,
                         last_event);
}

/* checksum_rows(data, kind, walk, walk_after, steps, steps_after, crc_update)
 *   -> [after image's checksum | None per row]: verify-rows' expected checksums. */
PyObject *sp_checksum_rows(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after, *crc_update;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!O", &PyBytes_Type, &data_obj, &kind, &cap, &cap_after,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &crc_update))
        return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (sp_event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    Enc e = {{0}, 0, 0, 0, NULL, 1, crc_update};
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < end) {
        Py_ssize_t start = pos;
        uint32_t before, after;
        PyObject *item;
        if ((kind != 0 && sp_crc_image(&e, w, steps, data_obj, data, &pos, end, &before) < 0)
            || (kind != 2 && sp_crc_image(&e, wa, psa, data_obj, data, &pos, end, &after) < 0)
            || pos == start)
            goto fallback;
        if (kind == 2 || !wa->complete) {
            item = Py_None;
            Py_INCREF(item);
        } else {
            item = PyLong_FromUnsignedLong(after);
        }
        if (!item || PyList_Append(out, item) < 0) { Py_XDECREF(item); Py_DECREF(out); return NULL; }
        Py_DECREF(item);
    }
    return out;
fallback:
    Py_DECREF(out);
    return sp_fall_back();
}
