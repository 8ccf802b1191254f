#include "_speedups.h"

/* ---- encode_rows: a rows event straight into output lines ------------------------------ */

static const double POW10D[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15};

/* The shortest digits of a double (repr's and orjson's: both write the shortest string
 * that reads back to it) without dtoa for the common case: |d| < 2^53 with at most 15
 * decimals.  r = d x 10^p rounded, for the smallest p whose r / 10^p reads back as d
 * (exact: r and 10^p are exact doubles, so the division is correctly rounded, as strtod
 * is: Clinger's fast path); r well away from a tie, so it is the nearest p-decimal.
 * Otherwise dtoa (PyOS_double_to_string 'r').  Out: digits D (no leading or trailing
 * zero) and k with |d| = 0.D x 10^k. */
int sp_shortest(double a, char *D, int *nd, int *k) {
    if (a < 9007199254740992.0) {
        for (int p = 0; p <= 15; p++) {
            double m = a * POW10D[p];
            if (m >= 9007199254740992.0) break;
            double r = nearbyint(m);
            if (fabs(m - r) > 0.25 || r == 0 || r / POW10D[p] != a) continue;
            char tmp[24];
            int n = udigits(tmp, (uint64_t)r, 1);
            int lead = 0;
            *k = n - p;
            while (n > 1 && tmp[n - 1] == '0') n--;
            memcpy(D, tmp + lead, n);
            *nd = n;
            return 0;
        }
    }
    char *r = PyOS_double_to_string(a, 'r', 0, 0, NULL);
    if (!r) return -1;
    /* r: digits[.digits][e[+-]digits] */
    char digits[40];
    int n = 0, point = -1, exp10 = 0;
    const char *c = r;
    for (; *c && *c != 'e'; c++) {
        if (*c == '.') { point = n; continue; }
        if (n < 38) digits[n++] = *c;
    }
    if (*c == 'e') exp10 = atoi(c + 1);
    PyMem_Free(r);
    if (point < 0) point = n;
    int lead = 0;
    while (lead < n - 1 && digits[lead] == '0') lead++;
    *k = point - lead + exp10;
    n -= lead;
    while (n > 1 && digits[lead + n - 1] == '0') n--;
    memcpy(D, digits + lead, n);
    *nd = n;
    return 0;
}

/* A double: text as Python's repr; JSON as orjson writes it (the same shortest digits,
 * 0.D x 10^k written plainly for -5 < k <= 16 (repr: -4 < k), else d.ddde[+-]x (repr:
 * e+XX / e-XX, two digits at least); NaN and infinities: null in JSON, repr's nan/inf). */
int sp_put_double(Enc *e, double d) {
    if (isnan(d) || isinf(d)) {
        if (!e->text) { PUTS("null"); return 0; }
        if (isnan(d)) PUTS("nan"); else if (d > 0) PUTS("inf"); else PUTS("-inf");
        return 0;
    }
    if (d == 0) {
        if (signbit(d)) PUTS("-0.0"); else PUTS("0.0");
        return 0;
    }
    char D[40], out[80];
    int n, k;
    if (sp_shortest(fabs(d), D, &n, &k) < 0) return -1;
    int len = 0;
    if (signbit(d)) out[len++] = '-';
    if (k > (e->text ? -4 : -5) && k <= 16) {
        len += plain_digits(out + len, D, n, k);
    } else {
        out[len++] = D[0];
        if (n > 1) { out[len++] = '.'; memcpy(out + len, D + 1, n - 1); len += n - 1; }
        int x = k - 1;
        out[len++] = 'e';
        if (x < 0) { out[len++] = '-'; x = -x; } else if (x > 0 || e->text) out[len++] = '+';
        len += udigits(out + len, (uint64_t)x, e->text ? 2 : 1);
    }
    PUT(out, len);
    return 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Binary bytes as values._render_bytes writes them: hex or base64, as a string, or for
 * text of unknown charset the raw-bytes object {"bytes_hex":"..."} (both formats). */
static int put_binary(Enc *e, const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (n > PY_SSIZE_T_MAX / 4) { PyErr_NoMemory(); return -1; }
    if (s->raw) {
        if (e->base64) PUTS("{\"bytes_base64\":\""); else PUTS("{\"bytes_hex\":\"");
    } else {
        PUT(e->text ? "'" : "\"", 1);
    }
    if (e->base64) {
        RESERVE(&e->b, (n + 2) / 3 * 4);
        char *o = e->b.p + e->b.len;
        Py_ssize_t i = 0;
        for (; i + 3 <= n; i += 3) {
            uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
            *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63];
            *o++ = B64[(v >> 6) & 63]; *o++ = B64[v & 63];
        }
        if (n - i == 1) {
            uint32_t v = (uint32_t)p[i] << 16;
            *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = '='; *o++ = '=';
        } else if (n - i == 2) {
            uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
            *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = B64[(v >> 6) & 63];
            *o++ = '=';
        }
        e->b.len = o - e->b.p;
    } else {
        RESERVE(&e->b, 2 * n);
        e->b.len = hex_pairs(e->b.p + e->b.len, p, n) - e->b.p;
    }
    if (s->raw) PUTS("\"}"); else PUT(e->text ? "'" : "\"", 1);
    return 0;
}

static int put_utf8(Enc *e, const unsigned char *p, Py_ssize_t n) {
    return e->text ? sp_text_str(&e->b, p, n) : sp_json_str(&e->b, p, n);
}

static int put_unicode(Enc *e, PyObject *u) {
    Py_ssize_t n;
    const char *utf = PyUnicode_AsUTF8AndSize(u, &n);
    if (!utf) return -1;           /* surrogates: Python says what happens */
    return put_utf8(e, (const unsigned char *)utf, n);
}

/* A character or binary string value (decode_varchar/decode_string/decode_blob's to_text). */
static int put_text(Enc *e, const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding) {
        if (!e->text && n >= LARGE_VALUE) return -1;   /* JsonLinesWriter writes it in pieces */
        return put_binary(e, s, p, n);
    }
    if (s->utf8) {
        if (!sp_utf8_valid(p, n)) return -1;   /* the pure decoder raises the typed error */
        return put_utf8(e, p, n);
    }
    PyObject *u = sp_text_value(s, p, n);
    if (!u) return -1;
    int rc = put_unicode(e, u);
    Py_DECREF(u);
    return rc;
}

/* A value of a Python decoder: decoded by it, rendered by the writer's render(). */
int sp_put_python(Enc *e, PyObject *pystep, PyObject *data_obj, Py_ssize_t *ppos,
                  Py_ssize_t end) {
    PyObject *col;
    Py_ssize_t np;
    PyObject *r = sp_python_value(pystep, data_obj, *ppos, end, &col, &np);
    if (!r) return -1;
    PyObject *out = PyObject_CallFunctionObjArgs(e->render, PyTuple_GET_ITEM(r, 0), col, NULL);
    Py_DECREF(r);
    if (!out) return -1;
    if (!PyBytes_Check(out)) { Py_DECREF(out); return -1; }
    int rc = put_bytes(&e->b, out);
    Py_DECREF(out);
    if (rc == 0) *ppos = np;
    return rc;
}

/* A string value (string_bytes: a BINARY(N) padded back) as put_text writes it. */
LAYOUT int put_string(Enc *e, const Step *s, const unsigned char *p, Py_ssize_t len) {
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &len, &owned);
    if (!v) return -1;
    int rc = put_text(e, s, v, len);
    PyMem_Free(owned);
    return rc;
}

/* An ENUM value (enum_value's) as the format writes it. */
LAYOUT int put_enum(Enc *e, const Step *s, long idx) {
    if (!s->labels) return put_int(e, idx);
    if (idx == 0) return put_utf8(e, (const unsigned char *)"", 0);
    PyObject *label = PyTuple_GET_ITEM(s->labels, idx - 1);
    return PyUnicode_Check(label) ? put_unicode(e, label) : -1;
}

/* One non-NULL value, decoded as value() decodes it, written as the format writes it;
 * -1 (with or without an exception) means: fall back. */
static int put_value(Enc *e, const Step *s, PyObject *pystep, PyObject *data_obj,
                     const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Unpacked u;
    char tmp[96];
    int rc;
    switch (unpack(s, data + *ppos, end - *ppos, &u)) {
    case U_INT: case U_YEAR: case U_BIT:
        rc = u.x.is_u ? put_uint(e, u.x.u) : put_int(e, u.x.i);
        break;
    case U_REAL: rc = sp_put_double(e, u.d); break;
    case U_TEMPORAL: rc = put_quoted(e, tmp, temporal_fmt(tmp, &u.t)); break;
    case U_DECIMAL:
        rc = e->text ? put(&e->b, u.dec.text, u.dec.len) : put_quoted(e, u.dec.text, u.dec.len);
        break;
    case U_STRING: rc = put_string(e, s, u.span.p, u.span.len); break;
    case U_ENUM: rc = put_enum(e, s, u.idx); break;
    case U_PY: return sp_put_python(e, pystep, data_obj, ppos, end);
    default: return -1;
    }
    if (rc == 0) *ppos += u.size;
    return rc;
}

/* One row image: {"key":value,...} (JSON) or its ###   @`key`=value lines (text). */
int sp_put_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
                 const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Py_ssize_t pos = *ppos;
    if (end - pos < w->nbytes) return -1;
    const unsigned char *nulls = data + pos;
    pos += w->nbytes;
    if (!e->text) PUTS("{");
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const Step *s = &w->steps[i];
        PyObject *k = e->text ? s->tkey : s->jkey;
        if (!k) return -1;
        if (!e->text && i) PUTS(",");
        if (put_bytes(&e->b, k) < 0) return -1;
        if (nulls[s->null_byte] & s->null_mask) {
            if (e->text) PUTS("NULL"); else PUTS("null");
        } else if (put_value(e, s, PyTuple_GET_ITEM(pysteps, i), data_obj, data, &pos, end) < 0) {
            return -1;
        }
        if (e->text) PUTS("\n");
        if (e->b.len - e->base > MAX_OUTPUT) return -1;
    }
    if (!e->text) PUTS("}");
    *ppos = pos;
    return 0;
}
