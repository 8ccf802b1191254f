#include "_speedups.h"

/* ---- SQL VALUES of row images (output/sql/literals.py literal, RowValues) ------------- */

/* output/sql/literals.py quote_text: \0 \n \r \Z ' " \ escaped (every escaped character is
 * ASCII, so escaping the UTF-8 bytes escapes the characters). */
static const char SQL_ESCAPES[256] = {[0] = '0', ['\n'] = 'n', ['\r'] = 'r', [0x1a] = 'Z',
                                      ['\''] = '\'', ['"'] = '"', ['\\'] = '\\'};

/* Text as output/sql/literals.py quote_text writes it. */
static int sql_quoted(Buf *b, const unsigned char *s, Py_ssize_t n) {
    return quoted_escaped(b, s, n, SQL_ESCAPES);
}

/* X'..' of bytes under LARGE_VALUE (a larger one is a token of the Python writer). */
static int sql_hex(Buf *b, const unsigned char *p, Py_ssize_t n) {
    if (n >= LARGE_VALUE) return -1;
    RESERVE(b, 2 * n + 3);
    char *o = b->p + b->len;
    *o++ = 'X'; *o++ = '\'';
    o = hex_pairs(o, p, n);
    *o++ = '\'';
    b->len = o - b->p;
    return 0;
}

/* A string value by its spec code: q utf8 text quoted, x bytes as hex (a BINARY(N)
 * padded back: string_bytes), s walked, not written (sql_image). */
static int sql_string(Enc *e, const Step *s, char code, const unsigned char *p, Py_ssize_t n) {
    if (code == 's') return 0;
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &n, &owned);
    if (!v) return -1;
    int rc = code == 'q' ? (sp_utf8_valid(v, n) ? sql_quoted(&e->b, v, n) : -1)
           : code == 'x' ? sql_hex(&e->b, v, n) : -1;
    PyMem_Free(owned);
    return rc;
}

/* An ENUM value by its spec code: its number without labels, else q its label quoted
 * ('' for the error value 0); s walked, not written. */
static int sql_enum(Enc *e, const Step *s, char code, long idx) {
    if (code == 's') return 0;
    if (!s->labels) return put_int(e, idx);
    if (code != 'q') return -1;
    if (idx == 0) return put(&e->b, "''", 2);
    PyObject *label = PyTuple_GET_ITEM(s->labels, idx - 1);
    Py_ssize_t n;
    const char *utf = PyUnicode_Check(label) ? PyUnicode_AsUTF8AndSize(label, &n) : NULL;
    return utf ? sql_quoted(&e->b, (const unsigned char *)utf, n) : -1;
}

/* BIT as b'...': its binary digits without leading zeros (b'0' for 0). */
static int sql_bits(Enc *e, uint64_t v) {
    char tmp[72];
    int n = 0, top = 63;
    while (top > 0 && !(v >> top & 1)) top--;
    tmp[n++] = 'b'; tmp[n++] = '\'';
    for (int i = top; i >= 0; i--) tmp[n++] = (char)('0' + (v >> i & 1));
    tmp[n++] = '\'';
    return put(&e->b, tmp, n);
}

/* A double as repr writes it (e->text), with e0 when that has no exponent (an SQL float
 * literal); NaN and the infinities have no literal: -1. */
static int sql_double(Enc *e, double d) {
    if (!isfinite(d)) return -1;
    Py_ssize_t mark = e->b.len;
    if (sp_put_double(e, d) < 0) return -1;
    if (!memchr(e->b.p + mark, 'e', e->b.len - mark)) PUTS("e0");
    return 0;
}

/* One non-NULL value as output/sql/literals.py literal() writes the value value() decodes, by the
 * step's spec code (q: quoted utf8 text, x: hex bytes, p: its Python decoder and
 * render(value, column) -> bytes, v: by its kind); -1: fall back.  Inlined into sql_image:
 * a call per value costs sql_values about a tenth of its time. */
LAYOUT int sql_value(Enc *e, const Step *s, char code, PyObject *pystep, PyObject *data_obj,
                     const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Unpacked u;
    char tmp[96];
    int rc;
    if (code == 'p' || s->kind == K_PY) return sp_put_python(e, pystep, data_obj, ppos, end);
    switch (unpack(s, data + *ppos, end - *ppos, &u)) {
    case U_INT: rc = u.x.is_u ? put_uint(e, u.x.u) : put_int(e, u.x.i); break;
    case U_YEAR: rc = u.x.i ? put_int(e, u.x.i) : put(&e->b, "'0000'", 6); break;
    case U_BIT: rc = sql_bits(e, u.x.u); break;
    case U_REAL: rc = sql_double(e, u.d); break;
    case U_TEMPORAL: rc = put_quoted(e, tmp, temporal_fmt(tmp, &u.t)); break;
    case U_DECIMAL: rc = put(&e->b, u.dec.text, u.dec.len); break;
    case U_STRING: rc = sql_string(e, s, code, u.span.p, u.span.len); break;
    case U_ENUM: rc = sql_enum(e, s, code, u.idx); break;
    default: return -1;     /* short or invalid, or a kind not known here */
    }
    if (rc == 0) *ppos += u.size;
    return rc;
}

/* (v1, v2, ...) of one image along spec (one code per step; s: a column not written);
 * with names (a tuple of bytes, one per step): n1 = v1, n2 = v2, ... (an UPDATE's SET). */
static int sql_image(Enc *e, const Walk *w, const char *spec, PyObject *pysteps,
                     PyObject *names, PyObject *data_obj, const unsigned char *data,
                     Py_ssize_t *ppos, Py_ssize_t end) {
    Py_ssize_t pos = *ppos;
    if (end - pos < w->nbytes) return -1;
    const unsigned char *nulls = data + pos;
    pos += w->nbytes;
    int first = 1;
    if (!names) PUTS("(");
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const Step *s = &w->steps[i];
        Py_ssize_t mark = e->b.len;
        if (!first && spec[i] != 's') PUTS(", ");
        if (names && spec[i] != 's') {
            PyObject *name = PyTuple_GET_ITEM(names, i);
            if (put(&e->b, PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name)) < 0) return -1;
            PUTS(" = ");
        }
        if (nulls[s->null_byte] & s->null_mask) {
            if (spec[i] != 's') PUTS("NULL");
        } else if (sql_value(e, s, spec[i], PyTuple_GET_ITEM(pysteps, i), data_obj, data, &pos,
                             end) < 0) {
            return -1;
        }
        if (spec[i] == 's') e->b.len = mark;     /* walked, not written */
        else first = 0;
        if (e->b.len > MAX_OUTPUT) return -1;
    }
    if (!names) PUTS(")");
    *ppos = pos;
    return 0;
}

/* sql_values(data, kind, walk, walk_after, steps, steps_after, spec, render[, before,
 * names]) -> [str]; before 1 (kind 1 only): each row's before image instead of its after
 * image; names (None or a tuple of bytes per column): written as sql_image says. */
PyObject *sp_sql_values(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after, *render, *names = Py_None;
    const char *spec;
    Py_ssize_t nspec;
    int kind, before = 0;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!y#O|iO", &PyBytes_Type, &data_obj, &kind, &cap,
                          &cap_after, &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &spec,
                          &nspec, &render, &before, &names))
        return NULL;
    if (names == Py_None) {
        names = NULL;
    } else if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != nspec) {
        PyErr_SetString(PyExc_ValueError, "names is None or a tuple as long as spec");
        return NULL;
    } else {
        for (Py_ssize_t i = 0; i < nspec; i++) {
            if (!PyBytes_Check(PyTuple_GET_ITEM(names, i))) {
                PyErr_SetString(PyExc_ValueError, "names holds bytes");
                return NULL;
            }
        }
    }
    if ((kind != 0 && kind != 1) || (before && kind != 1)) {
        PyErr_SetString(PyExc_ValueError, "kind is 0 or 1 (images after); before needs kind 1");
        return NULL;
    }
    Walk *w, *wa;
    PyObject *psa;
    if (sp_event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    if (nspec != wa->count || nspec != w->count) {
        PyErr_SetString(PyExc_ValueError, "spec does not match the walk");
        return NULL;
    }
    Enc e = {{0}, 1, 0, 0, render, 0, NULL};
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < end) {
        Py_ssize_t start = pos, kept = 0;
        e.b.len = 0;
        if (kind == 1) {        /* the before image: kept only when asked for */
            if (sql_image(&e, w, spec, steps, before ? names : NULL, data_obj, data, &pos,
                          end) < 0)
                goto fallback;
            kept = e.b.len;
            if (!before) e.b.len = 0;
        }
        if (sql_image(&e, wa, spec, psa, before ? NULL : names, data_obj, data, &pos, end) < 0
                || pos == start)
            goto fallback;
        if (before) e.b.len = kept;     /* the after image: walked, not written */
        PyObject *text = PyUnicode_DecodeUTF8(e.b.p, e.b.len, "surrogateescape");
        if (!text || PyList_Append(out, text) < 0) { Py_XDECREF(text); goto fail; }
        Py_DECREF(text);
    }
    PyMem_Free(e.b.p);
    return out;
fallback:
    PyMem_Free(e.b.p);
    Py_DECREF(out);
    return sp_fall_back();
fail:
    PyMem_Free(e.b.p);
    Py_DECREF(out);
    return NULL;
}
