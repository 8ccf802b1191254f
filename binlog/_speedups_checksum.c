#include "_speedups.h"

/* ---- TiCDC row checksums (binlog/checksum.py: its module docstring gives the encoding) */

/* Text in the column's charset: utf8 as it is (when valid: the pure decoder rejects
 * the rest), binary bytes as they are, another charset decoded and encoded again as
 * encode_value does. */
static int crc_text(uint32_t *crc, const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding || s->utf8) {
        if (s->utf8 && !sp_utf8_valid(p, n)) return -1;
        crc_add(crc, p, n);
        return 0;
    }
    PyObject *u = sp_text_value(s, p, n);
    if (!u) return -1;
    PyObject *b = PyUnicode_AsEncodedString(u, PyUnicode_AsUTF8(s->encoding), "strict");
    Py_DECREF(u);
    if (!b) return -1;
    crc_add(crc, (const unsigned char *)PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return 0;
}

/* _enum_number of the value decode_enum gives: the index, but the first index of a
 * label given twice (labels.index); -1 (the Python path: no checksum) for the value ''
 * of a column with a member '', which the error value 0 also decodes to. */
static int enum_number(const Step *s, long idx, uint64_t *number) {
    *number = (uint64_t)idx;
    if (!s->labels) return 0;
    if (idx == 0) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(s->labels); j++) {
            PyObject *other = PyTuple_GET_ITEM(s->labels, j);
            if (!PyUnicode_Check(other) || PyUnicode_GET_LENGTH(other) == 0) return -1;
        }
        return 0;
    }
    PyObject *label = PyTuple_GET_ITEM(s->labels, idx - 1);
    if (!PyUnicode_Check(label) || PyUnicode_GET_LENGTH(label) == 0) return -1;
    for (long j = 0; j < idx - 1; j++) {
        PyObject *other = PyTuple_GET_ITEM(s->labels, j);
        if (!PyUnicode_Check(other)) return -1;
        int cmp = PyUnicode_Compare(other, label);
        if (cmp == -1 && PyErr_Occurred()) return -1;
        if (cmp == 0) { *number = (uint64_t)j + 1; return 0; }
    }
    return 0;
}

/* A value of a Python decoder: decoded by it, added by crc_update (checksum.value_pieces). */
static int crc_python(Enc *e, PyObject *pystep, PyObject *data_obj, Py_ssize_t *ppos,
                      Py_ssize_t end, uint32_t *crc) {
    if (!e->crc_update) return -1;
    PyObject *col;
    Py_ssize_t np;
    PyObject *r = sp_python_value(pystep, data_obj, *ppos, end, &col, &np);
    if (!r) return -1;
    PyObject *out = PyObject_CallFunction(e->crc_update, "kOO", (unsigned long)*crc,
                                          PyTuple_GET_ITEM(r, 0), col);
    Py_DECREF(r);
    if (!out) return -1;
    unsigned long v = PyLong_Check(out) ? PyLong_AsUnsignedLong(out) : (unsigned long)-1;
    Py_DECREF(out);
    if (PyErr_Occurred() || v > 0xFFFFFFFFUL) return -1;
    *crc = (uint32_t)v;
    *ppos = np;
    return 0;
}

/* A string value added as crc_text adds it (a BINARY(N) padded back: string_bytes);
 * GEOMETRY: nothing. */
static int crc_string(uint32_t *crc, const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (s->nocrc) return 0;
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &n, &owned);
    if (!v) return -1;
    int rc = crc_text(crc, s, v, n);
    PyMem_Free(owned);
    return rc;
}

/* A double's bits; NaN and the infinities: -1 (the pure path refuses them). */
static int crc_double(uint32_t *crc, double d) {
    uint64_t bits;
    if (!isfinite(d)) return -1;
    memcpy(&bits, &d, 8);
    crc_u64(crc, bits);
    return 0;
}

/* One non-NULL value added to a row checksum as encode_value encodes the value value()
 * decodes; -1: fall back (the pure path raises what it raises). */
static int crc_value(Enc *e, const Step *s, PyObject *pystep, PyObject *data_obj,
                     const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end, uint32_t *crc) {
    Unpacked u;
    char tmp[96];
    uint64_t number;
    int rc = 0;
    switch (unpack(s, data + *ppos, end - *ppos, &u)) {
    case U_INT: case U_YEAR: case U_BIT: crc_u64(crc, u.x.is_u ? u.x.u : (uint64_t)u.x.i); break;
    case U_REAL: rc = crc_double(crc, u.d); break;
    case U_TEMPORAL: crc_add(crc, (const unsigned char *)tmp, temporal_fmt(tmp, &u.t)); break;
    /* no "-0": as _decimal_text */
    case U_DECIMAL: crc_add(crc, (const unsigned char *)u.dec.text, u.dec.len); break;
    case U_STRING: rc = crc_string(crc, s, u.span.p, u.span.len); break;
    case U_ENUM:
        if ((rc = enum_number(s, u.idx, &number)) == 0) crc_u64(crc, number);
        break;
    case U_PY: return crc_python(e, pystep, data_obj, ppos, end, crc);
    default: return -1;
    }
    if (rc == 0) *ppos += u.size;
    return rc;
}

/* The checksum of one row image from *ppos (checksum.row_checksum); -1: fall back. */
int sp_crc_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
                 const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end, uint32_t *crc) {
    Py_ssize_t pos = *ppos;
    if (end - pos < w->nbytes) return -1;
    const unsigned char *nulls = data + pos;
    pos += w->nbytes;
    *crc = 0;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const Step *s = &w->steps[i];
        if (nulls[s->null_byte] & s->null_mask) continue;
        if (crc_value(e, s, PyTuple_GET_ITEM(pysteps, i), data_obj, data, &pos, end, crc) < 0)
            return -1;
    }
    *ppos = pos;
    return 0;
}

/* ,"checksum":{"current":N|null,"previous":N|null} of one row from `start` (the record
 * of ChecksumJsonWriter); *ppos: where the row ends. */
static int put_checksums(Enc *e, int kind, const Walk *w, const Walk *wa, PyObject *steps,
                         PyObject *steps_after, PyObject *data_obj, const unsigned char *data,
                         Py_ssize_t start, Py_ssize_t end, Py_ssize_t *ppos) {
    uint32_t before = 0, after = 0;
    Py_ssize_t pos = start;
    if (kind != 0 && sp_crc_image(e, w, steps, data_obj, data, &pos, end, &before) < 0) return -1;
    if (kind != 2 && sp_crc_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
                                  data, &pos, end, &after) < 0)
        return -1;
    char tmp[80];
    int n = LIT(tmp, ",\"checksum\":{\"current\":");
    if (kind != 2 && (kind == 1 ? wa : w)->complete) n += udigits(tmp + n, after, 1);
    else n += LIT(tmp + n, "null");
    n += LIT(tmp + n, ",\"previous\":");
    if (kind != 0 && w->complete) n += udigits(tmp + n, before, 1);
    else n += LIT(tmp + n, "null");
    tmp[n++] = '}';
    PUT(tmp, n);
    *ppos = pos;
    return 0;
}

/* The rows of one event, line by line (see the docstring in `methods`). */
int sp_put_rows(Enc *e, int kind, const Walk *w, const Walk *wa, PyObject *steps,
                PyObject *steps_after, PyObject *data_obj, PyObject *head, PyObject *mid,
                PyObject *tail, Py_ssize_t *last_start, Py_ssize_t *count) {
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    while (pos < end) {
        Py_ssize_t start = pos;
        *last_start = e->b.len;
        if (put_bytes(&e->b, head) < 0) return -1;
        if (e->text) {
            if (kind != 0) {
                PUTS("### WHERE\n");
                if (sp_put_image(e, w, steps, data_obj, data, &pos, end) < 0) return -1;
            }
            if (kind != 2) {
                PUTS("### SET\n");
                if (sp_put_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
                                 data, &pos, end) < 0)
                    return -1;
            }
        } else {
            if (kind == 0) PUTS("null");
            else if (sp_put_image(e, w, steps, data_obj, data, &pos, end) < 0) return -1;
            PUTS(",\"after\":");
            if (kind == 2) PUTS("null");
            else if (sp_put_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
                                  data, &pos, end) < 0)
                return -1;
            char tmp[32];
            PUTS(",\"row\":");
            PUT(tmp, udigits(tmp, (uint64_t)*count, 1));
            if (put_bytes(&e->b, mid) < 0) return -1;
            Py_ssize_t crc_end;
            if (e->crc && (put_checksums(e, kind, w, wa, steps, steps_after, data_obj, data,
                                         start, end, &crc_end) < 0 || crc_end != pos))
                return -1;
            if (pos < end && put_bytes(&e->b, tail) < 0) return -1;
        }
        if (pos == start || e->b.len > MAX_OUTPUT) return -1;
        (*count)++;
    }
    return 0;
}

/* encode_rows(data, kind, walk, walk_after, steps, steps_after, text, flags, head, mid,
 *             tail, render) -> (bytes, last_start, count) */
PyObject *sp_encode_rows(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after, *head, *mid, *tail, *render;
    PyObject *crc_update = NULL;
    int kind, text, flags;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!iiO!O!O!O|O", &PyBytes_Type, &data_obj, &kind, &cap,
                          &cap_after, &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &text,
                          &flags, &PyBytes_Type, &head, &PyBytes_Type, &mid, &PyBytes_Type,
                          &tail, &render, &crc_update))
        return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (sp_event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    /* One buffer kept between calls (up to KEEP bytes): no growing per event.  A call
     * made from inside another (through render) takes a buffer of its own. */
    static Buf kept;
    static int kept_busy;
    int own = !kept_busy;
    Enc e = {{0}, text != 0, flags & 1, (flags & 2) != 0, render,
             !text && (flags & 8) && crc_update, crc_update};
    if (own) {
        e.b = kept;
        e.b.len = 0;
        kept_busy = 1;
    }
    Py_ssize_t last_start = -1, count = 0;
    int rc = sp_put_rows(&e, kind, w, wa, steps, psa, data_obj, head, mid, tail, &last_start, &count);
    PyObject *out = rc < 0 ? NULL : PyBytes_FromStringAndSize(e.b.p, e.b.len);
    if (own && e.b.cap <= KEEP) {
        kept = e.b;
    } else {
        PyMem_Free(e.b.p);
        if (own) memset(&kept, 0, sizeof kept);
    }
    if (own) kept_busy = 0;
    if (rc < 0) return sp_fall_back();
    if (!out) return NULL;
    return Py_BuildValue("(Nnn)", out, last_start, count);
}
