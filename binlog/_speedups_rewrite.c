#include "_speedups.h"
#include "_rows_frame.h"

/* ---- pack: legacy temporal values in the MySQL 5.6 layouts (binlog rewrite) -------------
 *
 * The mirror of unpack's *2 readers (unpack_ts2, unpack_dt2, unpack_time2): a legacy
 * kind's reader above gives the value's parts (a Temporal), and these write the parts in
 * the layout of TIMESTAMP2/DATETIME2/TIME2 of the same precision, as binlog/types/temporal.py
 * transcode_* do (MySQL/MariaDB sql/compat56.cc my_timestamp_to_binary,
 * my_datetime_packed_to_binary, my_time_packed_to_binary).  Each gives the bytes written
 * (at most 8), or -1 for a value the pure transcoder rejects. */

static inline void put_be(unsigned char *out, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (unsigned char)v;
        v >>= 8;
    }
}

/* The fraction: usec in FSP_BYTES[n] big-endian bytes of the precision's unit, a
 * negative one (a TIME's) as C's two's complement of those bytes.  usec is a multiple
 * of 10^(6-N) here, so the division is exact (Python's floor division gives the same). */
LAYOUT int pack_fraction(unsigned char *out, int64_t usec, int n) {
    if (!n) return 0;
    put_be(out, (uint64_t)(usec / FSP_MULT[n]), FSP_BYTES[n]);
    return FSP_BYTES[n];
}

/* TIMESTAMP2: the seconds big-endian, then the fraction. */
LAYOUT int pack_ts2(const Temporal *t, int n, unsigned char *out) {
    put_be(out, t->epoch, 4);
    return 4 + pack_fraction(out + 4, t->usec, n);
}

/* DATETIME2: 40 bits of (Y*13+M)<<22 | D<<17 | h<<12 | m<<6 | s plus 0x8000000000, then
 * the fraction; parts a DATETIME(0)'s digits can hold that these bits cannot are
 * refused (transcode_datetime's check). */
LAYOUT int pack_dt2(const Temporal *t, int n, unsigned char *out) {
    if (t->month > 12 || t->day > 31 || t->hour > 23 || t->minute > 59 || t->second > 59)
        return -1;
    uint64_t ym = (uint64_t)t->year * 13 + t->month;
    uint64_t intpart = ym << 22 | t->day << 17 | t->hour << 12 | t->minute << 6 | t->second;
    put_be(out, intpart + 0x8000000000ULL, 5);
    return 5 + pack_fraction(out + 5, t->usec, n);
}

/* TIME2: packed = +-((h<<12 | m<<6 | s) << 24 | usec); N 5 and 6: 48 bits of packed plus
 * 0x800000000000; else 24 bits of packed >> 24 (an arithmetic shift: the floor) plus
 * 0x800000, then the fraction packed % 2^24 with packed's sign (C's %). */
LAYOUT int pack_time2(const Temporal *t, int n, unsigned char *out) {
    if (t->hour > 1023 || t->minute > 59 || t->second > 59) return -1;
    int64_t hms = (int64_t)(t->hour << 12 | t->minute << 6 | t->second);
    int64_t packed = hms * ((int64_t)1 << 24) + t->usec;
    if (t->neg) packed = -packed;
    if (n >= 5) {
        put_be(out, (uint64_t)(packed + 0x800000000000LL), 6);
        return 6;
    }
    int64_t mag = packed < 0 ? -packed : packed;
    int64_t high = packed < 0 ? -((mag + 0xFFFFFF) >> 24) : mag >> 24;
    int64_t frac = packed < 0 ? -(mag & 0xFFFFFF) : mag & 0xFFFFFF;
    put_be(out, (uint64_t)(high + 0x800000), 3);
    return 3 + pack_fraction(out + 3, frac, n);
}

/* A legacy temporal value of a step (K_TS0..K_TIME0, K_TS_HIRES..K_TIME_HIRES; its width
 * at p, checked by the caller) in the *2 layout of its precision into out[8]: read by the
 * decoder's own reader, written by the packer of its form; the bytes written, or -1. */
LAYOUT int transcode_legacy(const Step *s, const unsigned char *p, unsigned char *out) {
    Unpacked u;
    int shape;
    switch (s->kind) {
    case K_TS0: shape = unpack_ts0(s, p, s->width, &u); break;
    case K_DT0: shape = unpack_dt0(s, p, s->width, &u); break;
    case K_TIME0: shape = unpack_time0(s, p, s->width, &u); break;
    case K_TS_HIRES: shape = unpack_ts_hires(s, p, s->width, &u); break;
    case K_DT_HIRES: shape = unpack_dt_hires(s, p, s->width, &u); break;
    case K_TIME_HIRES: shape = unpack_time_hires(s, p, s->width, &u); break;
    default: return -1;
    }
    if (shape != U_TEMPORAL) return -1;
    switch (u.t.form) {
    case 'S': return pack_ts2(&u.t, s->n, out);
    case 'C': return pack_dt2(&u.t, s->n, out);
    default: return pack_time2(&u.t, s->n, out);
    }
}

/* ---- rewrite: row images with legacy temporal values re-encoded (binlog rewrite) --------
 *
 * The compiled form of binlog/rewrite/images.py rewrite_image, the pure reference the
 * differential tests hold it to byte for byte: a walk over the present columns' steps -
 * a fixed width, a length prefix, or a legacy temporal kind transcoded to its *2 layout
 * (transcode_legacy) - compiled once per TABLE_MAP and column bitmap (compile_rewrite),
 * applied to one event's rows data (rewrite_rows) or to a run of rows events, framed as
 * count_run frames them, straight into the output binlog's bytes (rewrite_run).  Like
 * every compiled path it never reports an error itself: on anything the pure walk would
 * raise for (or anything unexpected), the event is left to the Python path. */

enum { RW_FIXED = 0, RW_PREFIX = 1, RW_LEGACY = 3 };    /* images.py FIXED, PREFIX, LEGACY */

/* One present column: s holds the null byte and mask, and for a legacy step its kind, N
 * and width (_column_kinds.h); width: a fixed step's bytes, a prefix step's length bytes. */
typedef struct {
    Step s;
    int op;
} RStep;

typedef struct {
    Py_ssize_t nbytes, count;
    RStep *steps;
} RWalk;

static void rewrite_walk_free(PyObject *capsule) {
    RWalk *w = (RWalk *)PyCapsule_GetPointer(capsule, "binlog.rewrite_walk");
    if (!w) return;
    PyMem_Free(w->steps);
    PyMem_Free(w);
}

/* A legacy step's width from its kind and N; -1 for a kind or N rewrite has no layout for. */
static Py_ssize_t legacy_width(int kind, int n) {
    switch (kind) {
    case K_TS0: case K_DT0: case K_TIME0: return n == 0 ? KIND_FIXED_BYTES[kind] : -1;
    case K_TS_HIRES: case K_DT_HIRES: case K_TIME_HIRES:
        return n >= 1 ? kind_temporal_bytes(kind, n) : -1;
    default: return -1;
    }
}

/* compile_rewrite(nbytes, steps) with each step (null_byte, mask, op, a, kind, n):
 * op RW_FIXED a the width, RW_PREFIX a the length's bytes (1..4), RW_LEGACY kind and N
 * (a unused). */
PyObject *sp_compile_rewrite(PyObject *self, PyObject *args) {
    Py_ssize_t nbytes;
    PyObject *steps;
    if (!PyArg_ParseTuple(args, "nO!", &nbytes, &PyTuple_Type, &steps)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(steps);
    if (nbytes < 0 || nbytes > (count + 7) / 8 + 1) {
        PyErr_SetString(PyExc_ValueError, "compile_rewrite: bad NULL bitmap size");
        return NULL;
    }
    RWalk *w = PyMem_Calloc(1, sizeof(RWalk));
    RStep *rs = PyMem_Calloc(count ? count : 1, sizeof(RStep));
    if (!w || !rs) {
        PyMem_Free(w); PyMem_Free(rs);
        return PyErr_NoMemory();
    }
    w->nbytes = nbytes;
    w->count = count;
    w->steps = rs;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t byte, a;
        int mask, op, kind, n;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, i), "niinii", &byte, &mask, &op, &a, &kind, &n))
            goto fail;
        RStep *r = &rs[i];
        r->op = op;
        r->s.null_byte = byte;
        r->s.null_mask = (unsigned char)mask;
        r->s.kind = kind;
        r->s.n = n;
        r->s.width = op == RW_LEGACY ? legacy_width(kind, n) : a;
        int ok = byte >= 0 && byte < nbytes && mask > 0 && mask < 256 && r->s.width >= 0
                 && (op == RW_FIXED || op == RW_LEGACY || (op == RW_PREFIX && a >= 1 && a <= 4));
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "compile_rewrite: bad step %zd", i);
            goto fail;
        }
    }
    PyObject *cap = PyCapsule_New(w, "binlog.rewrite_walk", rewrite_walk_free);
    if (cap) return cap;
fail:
    PyMem_Free(rs);
    PyMem_Free(w);
    return NULL;
}

/* One row image at d[pos:end] into b: its bytes, each legacy value in the *2 layout;
 * the position after it, or -1 where rewrite_image raises (a value or length past the
 * end, a value no transcoder takes) or out of memory (with the exception set).
 * *values counts the legacy values re-encoded. */
static Py_ssize_t rewrite_image(Buf *b, const RWalk *w, const unsigned char *d, Py_ssize_t pos,
                                Py_ssize_t end, long long *values) {
    if (end - pos < w->nbytes) return -1;
    const unsigned char *nulls = d + pos;
    Py_ssize_t copied = pos;           /* d[copied:pos] is still to be copied as it is */
    pos += w->nbytes;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const RStep *r = &w->steps[i];
        if (nulls[r->s.null_byte] & r->s.null_mask) continue;
        Py_ssize_t width = r->s.width;
        if (end - pos < width) return -1;
        if (r->op == RW_FIXED) {
            pos += width;
        } else if (r->op == RW_PREFIX) {
            uint64_t len = le(d + pos, (int)width);
            pos += width;
            if ((uint64_t)(end - pos) < len) return -1;
            pos += (Py_ssize_t)len;
        } else {
            if (put(b, (const char *)d + copied, pos - copied) < 0) return -1;
            RESERVE(b, 8);
            int n = transcode_legacy(&r->s, d + pos, (unsigned char *)b->p + b->len);
            if (n < 0) return -1;
            b->len += n;
            pos += width;
            copied = pos;
            (*values)++;
        }
    }
    if (put(b, (const char *)d + copied, pos - copied) < 0) return -1;
    return pos;
}

/* The rows data d[0:n] of an event of kind (0 insert, 1 update, 2 delete) along its walks
 * into b: 0, or -1 as rewrite_image (an update's pairs of images, the before image's walk
 * w, the after image's wa; a pair that takes no byte cannot end: -1 as well). */
static int rewrite_images(Buf *b, int kind, const RWalk *w, const RWalk *wa, const unsigned char *d,
                          Py_ssize_t n, long long *values) {
    Py_ssize_t pos = 0;
    while (pos < n) {
        Py_ssize_t next = rewrite_image(b, w, d, pos, n, values);
        if (next >= 0 && kind == 1) next = rewrite_image(b, wa, d, next, n, values);
        if (next <= pos) return -1;
        pos = next;
    }
    return 0;
}

/* The walks of an entry (walk, walk_after) or of rewrite_rows' arguments; -1 when they
 * are not rewrite walks (an exception set). */
static int rewrite_walks(int kind, PyObject *cap, PyObject *cap_after, RWalk **w, RWalk **wa) {
    *w = PyCapsule_GetPointer(cap, "binlog.rewrite_walk");
    *wa = kind == 1 ? PyCapsule_GetPointer(cap_after, "binlog.rewrite_walk") : *w;
    return *w && *wa ? 0 : -1;
}

/* rewrite_rows(data, kind, walk, walk_after) -> (bytes, values) */
PyObject *sp_rewrite_rows(PyObject *self, PyObject *args) {
    Py_buffer data;
    int kind;
    PyObject *cap, *cap_after;
    if (!PyArg_ParseTuple(args, "y*iOO", &data, &kind, &cap, &cap_after)) return NULL;
    RWalk *w, *wa;
    if (kind < 0 || kind > 2 || rewrite_walks(kind, cap, cap_after, &w, &wa) < 0) {
        PyBuffer_Release(&data);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "kind is 0, 1 or 2");
        return NULL;
    }
    Buf b = {0};
    long long values = 0;
    int rc = data.len > MAX_OUTPUT / 2 ? -1
             : rewrite_images(&b, kind, w, wa, (const unsigned char *)data.buf, data.len, &values);
    PyBuffer_Release(&data);
    PyObject *out = rc == 0 ? Py_BuildValue("y#L", b.len ? b.p : "", b.len, values) : NULL;
    PyMem_Free(b.p);
    return out ? out : sp_fall_back();
}

/* The map line of an event (binlog/rewrite/position_map.py MapEntry.line): in_start in_end out_start
 * out_end, in decimal, one space between, a newline. */
static int map_line(Buf *m, long long in_start, long long in_size, long long out_start,
                    long long out_size) {
    char tmp[96];
    int n = udigits(tmp, (uint64_t)in_start, 1);
    tmp[n++] = ' ';
    n += udigits(tmp + n, (uint64_t)(in_start + in_size), 1);
    tmp[n++] = ' ';
    n += udigits(tmp + n, (uint64_t)out_start, 1);
    tmp[n++] = ' ';
    n += udigits(tmp + n, (uint64_t)(out_start + out_size), 1);
    tmp[n++] = '\n';
    return put(m, tmp, n);
}

/* The event at h (size bytes, read at ``at``) as written at out_pos into b (rewrite/converter.py
 * Rewriter._frame): its own bytes when entry is None (a table with no legacy column)
 * and nothing before it moved; else the header with the new size and log_pos (moved by
 * the bytes gained or lost so far; 0 stays 0), the post-header as it is, the rows data
 * through the entry's walks, and a fresh CRC32.  The bytes written, or -1 (b as it was;
 * an exception set only when out of memory). */
static Py_ssize_t rewrite_event(Buf *b, const unsigned char *h, long long size, long long at,
                                long long out_pos, int code, int common_len, int checksum_len,
                                PyObject *entry, Py_ssize_t data_at, long long *values) {
    Py_ssize_t mark = b->len, body_end = (Py_ssize_t)size - checksum_len;
    Py_ssize_t data_start = common_len + data_at;
    if (entry == Py_None && out_pos == at) {
        if (put(b, (const char *)h, (Py_ssize_t)size) < 0) return -1;
        return (Py_ssize_t)size;
    }
    if (put(b, (const char *)h, entry == Py_None ? body_end : data_start) < 0) return -1;
    long long count = 0;              /* (added to *values once the event is written) */
    if (entry != Py_None) {
        RWalk *w, *wa;
        int kind = (code == 23 || code == 30) ? 0 : (code == 24 || code == 31) ? 1 : 2;
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2
            || rewrite_walks(kind, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1), &w, &wa) < 0
            || rewrite_images(b, kind, w, wa, h + data_start, body_end - data_start, &count) < 0) {
            b->len = mark;
            if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_MemoryError)) PyErr_Clear();
            return -1;
        }
    }
    Py_ssize_t out_size = b->len - mark + checksum_len;
    if (out_size > FRAME_U32) {
        b->len = mark;
        return -1;
    }
    unsigned char *o = (unsigned char *)b->p + mark;
    long long log_pos = (long long)frame_le(h + 13, 4);
    if (log_pos) log_pos = (log_pos + out_pos + out_size - at - size) & FRAME_U32;
    for (int i = 0; i < 4; i++) {
        o[9 + i] = (unsigned char)((uint64_t)out_size >> (8 * i));
        o[13 + i] = (unsigned char)((uint64_t)log_pos >> (8 * i));
    }
    if (checksum_len) {
        uint32_t crc = frame_crc32(o, b->len - mark);
        char footer[4] = {(char)crc, (char)(crc >> 8), (char)(crc >> 16), (char)(crc >> 24)};
        if (put(b, footer, 4) < 0) return -1;
    }
    *values += count;
    return out_size;
}

/* rewrite_run(buf, pos, end, offset, widths, common_header_len, checksum_len, entries,
 *             out_pos, stop_offset, last_log_pos, chain_run, strict_chain, verify_crc,
 *             max_event, max_out) */
PyObject *sp_rewrite_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_event, max_out;
    long long offset, out_pos, stop_offset, last_log_pos;
    const char *widths;
    Py_ssize_t widths_len;
    int common_len, checksum_len, strict_chain, verify_crc;
    long chain_run;
    PyObject *entries;
    if (!PyArg_ParseTuple(args, "y*nnLy#iiO!LLLlppnn", &view, &pos, &end, &offset, &widths,
                          &widths_len, &common_len, &checksum_len, &PyDict_Type, &entries,
                          &out_pos, &stop_offset, &last_log_pos, &chain_run, &strict_chain,
                          &verify_crc, &max_event, &max_out))
        return NULL;
    if (widths_len != 256 || pos < 0 || end > view.len || pos > end || common_len < FRAME_HEADER_LEN
        || common_len > 255 || (checksum_len != 0 && checksum_len != 4) || out_pos < 4) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "rewrite_run: bad arguments");
        return NULL;
    }
    const unsigned char *buf = (const unsigned char *)view.buf;
    Buf b = {0}, m = {0};
    Py_ssize_t start = pos, last_event = -1, events = 0, changed = 0, rows_events = 0;
    long long values = 0;
    int failed = 0;
    Frame f;
    while (b.len < max_out
           && frame_event(buf, pos, end, offset + (pos - start), widths, common_len, checksum_len,
                          max_event, stop_offset, last_log_pos, chain_run, strict_chain, &f)) {
        const unsigned char *h = buf + pos;
        if (!frame_plain_rows(f.code)) break;
        uint64_t table_id = 0;
        Py_ssize_t data_at = 0;
        PyObject *entry = frame_entry(h + common_len, (Py_ssize_t)(f.size - common_len - checksum_len),
                                      f.code, f.width, entries, &table_id, &data_at);
        if (!entry) {
            if (PyErr_Occurred()) failed = 1;
            break;
        }
        if (verify_crc && checksum_len == 4 && !frame_crc_ok(h, f.size)) break;
        Py_ssize_t written = rewrite_event(&b, h, f.size, f.at, out_pos, f.code, common_len,
                                           checksum_len, entry, data_at, &values);
        if (written < 0) {
            if (PyErr_Occurred()) failed = 1;
            break;
        }
        if (map_line(&m, f.at, f.size, out_pos, written) < 0) { failed = 1; break; }
        events++;
        changed += entry != Py_None || out_pos != f.at;
        rows_events += entry != Py_None;
        out_pos += written;
        frame_note_chain(&f, &chain_run, &last_log_pos);
        last_event = pos;
        pos += (Py_ssize_t)f.size;
    }
    PyBuffer_Release(&view);
    PyObject *out = NULL;
    if (!failed && last_event >= 0)
        out = Py_BuildValue("ny#y#nnnLLlnL", pos, b.len ? b.p : "", b.len, m.len ? m.p : "", m.len,
                            events, changed, rows_events, values, last_log_pos, chain_run,
                            last_event, out_pos);
    PyMem_Free(b.p);
    PyMem_Free(m.p);
    if (failed) return NULL;
    if (last_event < 0) Py_RETURN_NONE;
    return out;
}

/* kind_widths() -> (kinds, fixed, temporal, decimal): _column_kinds.h as the extension
 * was built with it, for tests/binlog/test_column_kinds.py (the Python side must agree):
 * K_COUNT; KIND_FIXED_BYTES per kind; kind_temporal_bytes per kind and N (-1..7);
 * decimal_bin_size per precision 0..66 and scale 0..31. */
PyObject *sp_kind_widths(PyObject *self, PyObject *noargs) {
    PyObject *fixed = PyList_New(K_COUNT), *temporal = PyList_New(K_COUNT), *decimal = PyList_New(67);
    if (!fixed || !temporal || !decimal) goto fail;
    for (int k = 0; k < K_COUNT; k++) {
        PyObject *sizes = PyList_New(9);
        if (!sizes) goto fail;
        PyList_SET_ITEM(temporal, k, sizes);
        for (int n = -1; n <= 7; n++) PyList_SET_ITEM(sizes, n + 1, PyLong_FromLong(kind_temporal_bytes(k, n)));
        PyList_SET_ITEM(fixed, k, PyLong_FromLong(KIND_FIXED_BYTES[k]));
    }
    for (int p = 0; p <= 66; p++) {
        PyObject *sizes = PyList_New(32);
        if (!sizes) goto fail;
        PyList_SET_ITEM(decimal, p, sizes);
        for (int sc = 0; sc <= 31; sc++) PyList_SET_ITEM(sizes, sc, PyLong_FromLong(decimal_bin_size(p, sc)));
    }
    if (PyErr_Occurred()) goto fail;
    return Py_BuildValue("iNNN", K_COUNT, fixed, temporal, decimal);
fail:
    Py_XDECREF(fixed); Py_XDECREF(temporal); Py_XDECREF(decimal);
    return NULL;
}
