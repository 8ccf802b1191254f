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
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    K_PY = 0, K_TINY, K_SHORT, K_INT24, K_LONG, K_LONGLONG, K_FLOAT, K_DOUBLE, K_YEAR,
    K_DATE, K_TS0, K_DT0, K_TIME0, K_TS_HIRES, K_DT_HIRES, K_TIME_HIRES, K_TS2, K_DT2,
    K_TIME2, K_VARCHAR, K_STRING, K_BLOB, K_DECIMAL, K_BIT, K_ENUM
};

typedef struct {
    Py_ssize_t null_byte;
    unsigned char null_mask;
    int kind, n, length, is_unsigned, precision, scale, pad_binary, utf8;
    /* Owned references (or NULL) to immutable objects only (str, tuple of str): the
     * capsule is invisible to the cycle collector, so it must not hold anything that
     * can be part of a reference cycle.  Python decoders and columns are passed with
     * each call instead (the `steps` tuple of DecodePlan.walk). */
    PyObject *key, *encoding, *labels;
} Step;

typedef struct {
    Py_ssize_t nbytes, count;
    Step *steps;
} Walk;

static PyObject *Fallback;          /* _speedups.Fallback */
static PyObject *DecimalType;       /* decimal.Decimal */

static const int64_t DIV[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
static const int64_t POW[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
static const int SEC_PART_BYTES[7] = {0, 1, 1, 2, 2, 3, 3};
static const int DATETIME_HIRES_BYTES[7] = {5, 6, 6, 7, 7, 7, 8};
static const int TIME_HIRES_BYTES[7] = {3, 4, 4, 5, 5, 5, 6};
static const int FSP_BYTES[7] = {0, 1, 1, 2, 2, 3, 3};
static const int FSP_MULT[7] = {0, 10000, 10000, 100, 100, 1, 1};
static const int DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000};
#define TIME_MAX_VALUE_SECONDS (838 * 3600 + 59 * 60 + 59)

static void walk_free(PyObject *capsule) {
    Walk *w = (Walk *)PyCapsule_GetPointer(capsule, "binlog.walk");
    if (!w) return;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        Step *s = &w->steps[i];
        Py_XDECREF(s->key); Py_XDECREF(s->encoding); Py_XDECREF(s->labels);
    }
    PyMem_Free(w->steps);
    PyMem_Free(w);
}

static PyObject *opt(PyObject *o) {
    if (o == Py_None) return NULL;
    Py_INCREF(o);
    return o;
}

/* compile_walk(nbytes, steps) with each step a tuple
 * (null_byte, mask, key, kind, n, length, unsigned, precision, scale, pad_binary,
 *  encoding|None, labels|None, decoder, col) */
static PyObject *compile_walk(PyObject *self, PyObject *args) {
    Py_ssize_t nbytes;
    PyObject *steps;
    if (!PyArg_ParseTuple(args, "nO!", &nbytes, &PyTuple_Type, &steps)) return NULL;
    Walk *w = PyMem_Calloc(1, sizeof(Walk));
    if (!w) return PyErr_NoMemory();
    w->nbytes = nbytes;
    w->count = PyTuple_GET_SIZE(steps);
    w->steps = PyMem_Calloc(w->count ? w->count : 1, sizeof(Step));
    if (!w->steps) { PyMem_Free(w); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < w->count; i++) {
        Step *s = &w->steps[i];
        PyObject *key, *enc, *labels, *decoder, *col;
        int mask;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, i), "niOiiiiiiiOOOO", &s->null_byte, &mask,
                              &key, &s->kind, &s->n, &s->length, &s->is_unsigned, &s->precision,
                              &s->scale, &s->pad_binary, &enc, &labels, &decoder, &col)) {
            w->count = i;
            walk_free(PyCapsule_New(w, "binlog.walk", NULL));
            return NULL;
        }
        s->null_mask = (unsigned char)mask;
        s->key = opt(key); s->encoding = opt(enc);
        /* value() indexes the labels as a tuple; a schema may give any sequence */
        s->labels = labels == Py_None ? NULL : PySequence_Tuple(labels);
        if (labels != Py_None && !s->labels) {
            w->count = i + 1;
            PyObject *cap = PyCapsule_New(w, "binlog.walk", walk_free);
            Py_XDECREF(cap);
            return NULL;
        }
        (void)decoder; (void)col;     /* taken per call from the steps tuple */
        s->utf8 = enc != Py_None && PyUnicode_Check(enc) &&
                  PyUnicode_CompareWithASCIIString(enc, "utf-8") == 0;
    }
    return PyCapsule_New(w, "binlog.walk", walk_free);
}

static inline uint64_t be(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

static inline uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int frac_text(char *out, int64_t usec, int n) {
    if (n == 0) return 0;
    return sprintf(out, ".%0*lld", n, (long long)(usec / DIV[n]));
}

static PyObject *datetime_text(long long year, long long month, long long day, long long hour,
                               long long minute, long long second, int64_t usec, int n) {
    char buf[96];
    int len = snprintf(buf, 64, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", year, month, day,
                       hour, minute, second);
    len += frac_text(buf + len, usec, n);
    return PyUnicode_FromStringAndSize(buf, len);
}

static PyObject *time_text(int negative, long long hours, long long minutes, long long seconds,
                           int64_t usec, int n) {
    char buf[96];
    int len = snprintf(buf, 64, "%s%02lld:%02lld:%02lld", negative ? "-" : "", hours, minutes,
                       seconds);
    len += frac_text(buf + len, usec, n);
    return PyUnicode_FromStringAndSize(buf, len);
}

/* Days since 1970-01-01 -> civil date (H. Hinnant's civil_from_days). */
static void civil(int64_t z, long long *y, long long *m, long long *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static PyObject *timestamp_text(uint64_t seconds, int64_t usec, int n) {
    if (seconds == 0 && usec == 0) {
        char buf[48];
        int len = sprintf(buf, "0000-00-00 00:00:00");
        len += frac_text(buf + len, 0, n);
        return PyUnicode_FromStringAndSize(buf, len);
    }
    long long y, m, d;
    civil((int64_t)(seconds / 86400), &y, &m, &d);
    uint64_t rem = seconds % 86400;
    return datetime_text(y, m, d, rem / 3600, rem / 60 % 60, rem % 60, usec, n);
}

static PyObject *decimal_value(const unsigned char *p, int precision, int scale, int *size_out) {
    if (!(precision > 0 && precision <= 65 && scale >= 0 && scale <= 30 && scale <= precision))
        return NULL;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    int size = DIG2BYTES[intg0x] + intg0 * 4 + frac0 * 4 + DIG2BYTES[frac0x];
    *size_out = size;
    unsigned char raw[40];
    memcpy(raw, p, size);
    int negative = !(raw[0] & 0x80);
    raw[0] ^= 0x80;
    if (negative)
        for (int i = 0; i < size; i++) raw[i] = ~raw[i];
    char ints[80], fracs[40];
    int ilen = 0, flen = 0, off = 0;
    int nonzero = 0;
    if (intg0x) {
        uint32_t g = (uint32_t)be(raw, DIG2BYTES[intg0x]);
        off += DIG2BYTES[intg0x];
        if (g >= POW10[intg0x]) return NULL;
        ilen += sprintf(ints + ilen, "%u", g);
    }
    for (int i = 0; i < intg0; i++) {
        uint32_t g = (uint32_t)be(raw + off, 4);
        off += 4;
        if (g >= POW10[9]) return NULL;
        ilen += sprintf(ints + ilen, "%09u", g);
    }
    for (int i = 0; i < frac0; i++) {
        uint32_t g = (uint32_t)be(raw + off, 4);
        off += 4;
        if (g >= POW10[9]) return NULL;
        flen += sprintf(fracs + flen, "%09u", g);
    }
    if (frac0x) {
        uint32_t g = (uint32_t)be(raw + off, DIG2BYTES[frac0x]);
        if (g >= POW10[frac0x]) return NULL;
        flen += sprintf(fracs + flen, "%0*u", frac0x, g);
    }
    /* integer digits without leading zeros, at least one digit */
    int start = 0;
    while (start < ilen - 1 && ints[start] == '0') start++;
    if (ilen == 0) { ints[0] = '0'; ilen = 1; }
    for (int i = start; i < ilen; i++) if (ints[i] != '0') nonzero = 1;
    for (int i = 0; i < flen; i++) if (fracs[i] != '0') nonzero = 1;
    char text[128];
    int len = sprintf(text, "%s%.*s", negative && nonzero ? "-" : "", ilen - start, ints + start);
    if (scale) len += sprintf(text + len, ".%.*s", flen, fracs);
    return PyObject_CallFunction(DecimalType, "s#", text, (Py_ssize_t)len);
}

static PyObject *text_value(const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding) return PyBytes_FromStringAndSize((const char *)p, n);
    if (s->utf8) return PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    const char *encoding = PyUnicode_Check(s->encoding) ? PyUnicode_AsUTF8(s->encoding) : NULL;
    if (!encoding) return NULL;    /* not a codec name: the pure path says what it is */
    return PyUnicode_Decode((const char *)p, n, encoding, "strict");
}

#define NEED(k) do { if (end - pos < (Py_ssize_t)(k)) return NULL; } while (0)

/* Decode one value; NULL (with or without an exception set) means: fall back. */
static PyObject *value(const Step *s, PyObject *pystep, PyObject *data_obj,
                       const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Py_ssize_t pos = *ppos;
    const unsigned char *p = data + pos;
    PyObject *v = NULL;
    int n = s->n;
    switch (s->kind) {
    case K_TINY:
        NEED(1);
        v = s->is_unsigned ? PyLong_FromLong(p[0]) : PyLong_FromLong((signed char)p[0]);
        pos += 1; break;
    case K_SHORT:
        NEED(2);
        v = s->is_unsigned ? PyLong_FromLong((uint16_t)le(p, 2)) : PyLong_FromLong((int16_t)le(p, 2));
        pos += 2; break;
    case K_INT24: {
        NEED(3);
        uint32_t u = (uint32_t)le(p, 3);
        v = s->is_unsigned ? PyLong_FromLong(u) : PyLong_FromLong(u & 0x800000 ? (long)u - 0x1000000 : (long)u);
        pos += 3; break;
    }
    case K_LONG:
        NEED(4);
        v = s->is_unsigned ? PyLong_FromUnsignedLong((uint32_t)le(p, 4)) : PyLong_FromLong((int32_t)le(p, 4));
        pos += 4; break;
    case K_LONGLONG:
        NEED(8);
        v = s->is_unsigned ? PyLong_FromUnsignedLongLong(le(p, 8)) : PyLong_FromLongLong((int64_t)le(p, 8));
        pos += 8; break;
    case K_FLOAT: {
        NEED(4);
        uint32_t u = (uint32_t)le(p, 4);
        float f;
        memcpy(&f, &u, 4);
        v = PyFloat_FromDouble((double)f);
        pos += 4; break;
    }
    case K_DOUBLE: {
        NEED(8);
        uint64_t u = le(p, 8);
        double d;
        memcpy(&d, &u, 8);
        v = PyFloat_FromDouble(d);
        pos += 8; break;
    }
    case K_YEAR:
        NEED(1);
        v = PyLong_FromLong(p[0] ? 1900 + p[0] : 0);
        pos += 1; break;
    case K_DATE: {
        NEED(3);
        uint32_t d = (uint32_t)le(p, 3);
        char buf[32];
        int len = sprintf(buf, "%04u-%02u-%02u", d >> 9, (d >> 5) & 15, d & 31);
        v = PyUnicode_FromStringAndSize(buf, len);
        pos += 3; break;
    }
    case K_TS0:
        NEED(4);
        v = timestamp_text(le(p, 4), 0, 0);
        pos += 4; break;
    case K_DT0: {
        NEED(8);
        uint64_t x = le(p, 8);
        uint64_t d = x / 1000000, t = x % 1000000;
        if (d / 10000 > 9999) return NULL;
        v = datetime_text(d / 10000, d / 100 % 100, d % 100, t / 10000, t / 100 % 100, t % 100, 0, 0);
        pos += 8; break;
    }
    case K_TIME0: {
        NEED(3);
        int32_t x = (int32_t)le(p, 3);
        if (x & 0x800000) x -= 0x1000000;
        int neg = x < 0;
        int32_t a = neg ? -x : x;
        v = time_text(neg, a / 10000, a / 100 % 100, a % 100, 0, 0);
        pos += 3; break;
    }
    case K_TS_HIRES: {
        int size = 4 + SEC_PART_BYTES[n];
        NEED(size);
        uint64_t part = be(p + 4, SEC_PART_BYTES[n]);
        if ((int64_t)part >= POW[n]) return NULL;
        v = timestamp_text(be(p, 4), (int64_t)part * DIV[n], n);
        pos += size; break;
    }
    case K_DT_HIRES: {
        int size = DATETIME_HIRES_BYTES[n];
        NEED(size);
        unsigned __int128 x = (unsigned __int128)be(p, size) * (uint64_t)DIV[n];
        uint64_t usec = (uint64_t)(x % 1000000); x /= 1000000;
        uint64_t second = (uint64_t)(x % 60); x /= 60;
        uint64_t minute = (uint64_t)(x % 60); x /= 60;
        uint64_t hour = (uint64_t)(x % 24); x /= 24;
        uint64_t day = (uint64_t)(x % 32); x /= 32;
        uint64_t month = (uint64_t)(x % 13); x /= 13;
        if (x > 9999) return NULL;
        v = datetime_text((long long)x, month, day, hour, minute, second, (int64_t)usec, n);
        pos += size; break;
    }
    case K_TIME_HIRES: {
        static const int64_t ZERO[7] = {3020400LL, 30204000LL, 302040000LL, 3020400000LL,
                                        30204000000LL, 302040000000LL, 3020400000000LL};
        int size = TIME_HIRES_BYTES[n];
        NEED(size);
        int64_t x = ((int64_t)be(p, size) - ZERO[n]) * DIV[n];
        int neg = x < 0;
        int64_t a = neg ? -x : x;
        int64_t secs = a / 1000000, usec = a % 1000000;
        if (secs > TIME_MAX_VALUE_SECONDS) return NULL;
        v = time_text(neg, secs / 3600, secs / 60 % 60, secs % 60, usec, n);
        pos += size; break;
    }
    case K_TS2: {
        int size = 4 + FSP_BYTES[n];
        NEED(size);
        int64_t usec = n ? (int64_t)be(p + 4, FSP_BYTES[n]) * FSP_MULT[n] : 0;
        if (usec >= 1000000) return NULL;
        v = timestamp_text(be(p, 4), usec, n);
        pos += size; break;
    }
    case K_DT2: {
        int size = 5 + FSP_BYTES[n];
        NEED(size);
        int64_t intpart = (int64_t)be(p, 5) - 0x8000000000LL;
        int64_t usec = 0;
        if (n) {
            int fb = FSP_BYTES[n];
            int64_t f = (int64_t)be(p + 5, fb);
            if (f & ((int64_t)1 << (8 * fb - 1))) f -= (int64_t)1 << (8 * fb);
            usec = f * FSP_MULT[n];
        }
        if (intpart < 0 || usec < 0 || usec >= 1000000) return NULL;
        int64_t ymd = intpart >> 17, ym = ymd >> 5, hms = intpart & 0x1FFFF;
        v = datetime_text(ym / 13, ym % 13, ymd & 31, hms >> 12, (hms >> 6) & 63, hms & 63, usec, n);
        pos += size; break;
    }
    case K_TIME2: {
        int size = 3 + FSP_BYTES[n];
        NEED(size);
        int64_t packed;
        if (n >= 5) {
            packed = (int64_t)be(p, 6) - 0x800000000000LL;
        } else {
            int64_t intpart = (int64_t)be(p, 3) - 0x800000;
            int64_t frac = 0;
            if (n) {
                frac = (int64_t)be(p + 3, FSP_BYTES[n]);
                if (intpart < 0 && frac) {
                    intpart += 1;
                    frac -= n <= 2 ? 0x100 : 0x10000;
                }
            }
            packed = intpart * ((int64_t)1 << 24) + frac * FSP_MULT[n];
        }
        int neg = packed < 0;
        if (neg) packed = -packed;
        int64_t hms = packed >> 24, usec = packed & 0xFFFFFF;
        if (usec >= 1000000) return NULL;
        v = time_text(neg, (hms >> 12) & 0x3FF, (hms >> 6) & 63, hms & 63, usec, n);
        pos += size; break;
    }
    case K_VARCHAR:
    case K_STRING: {
        int prefix = s->length <= 255 ? 1 : 2;
        NEED(prefix);
        Py_ssize_t len = (Py_ssize_t)le(p, prefix);
        pos += prefix;
        NEED(len);
        if (s->length && len > s->length) return NULL;
        if (s->kind == K_STRING && s->pad_binary && len < s->length) {
            /* padded like decode_string, then decoded like it when an encoding is set */
            PyObject *padded = PyBytes_FromStringAndSize(NULL, s->length);
            if (!padded) return NULL;
            memcpy(PyBytes_AS_STRING(padded), data + pos, len);
            memset(PyBytes_AS_STRING(padded) + len, 0, s->length - len);
            if (s->encoding) {
                v = text_value(s, (const unsigned char *)PyBytes_AS_STRING(padded), s->length);
                Py_DECREF(padded);
            } else {
                v = padded;
            }
        } else {
            v = text_value(s, data + pos, len);
        }
        pos += len; break;
    }
    case K_BLOB: {
        int prefix = s->length;
        if (prefix < 1 || prefix > 4) return NULL;
        NEED(prefix);
        Py_ssize_t len = (Py_ssize_t)le(p, prefix);
        pos += prefix;
        NEED(len);
        v = text_value(s, data + pos, len);
        pos += len; break;
    }
    case K_DECIMAL: {
        int size = 0;
        if (!(s->precision > 0 && s->precision <= 65 && s->scale >= 0 && s->scale <= 30 &&
              s->scale <= s->precision))
            return NULL;     /* before DIG2BYTES[intg % 9]: intg < 0 would index below it */
        int intg = s->precision - s->scale, frac = s->scale;
        size = DIG2BYTES[intg % 9] + intg / 9 * 4 + frac / 9 * 4 + DIG2BYTES[frac % 9];
        NEED(size);
        if (size == 0) return NULL;
        v = decimal_value(p, s->precision, s->scale, &size);
        pos += size; break;
    }
    case K_BIT: {
        int len = s->length;
        if (len < 0 || len > 8) return NULL;
        NEED(len);
        v = PyLong_FromUnsignedLongLong(be(p, len));
        pos += len; break;
    }
    case K_ENUM: {
        int len = s->length;
        if (len != 1 && len != 2) return NULL;
        NEED(len);
        long idx = (long)le(p, len);
        pos += len;
        if (!s->labels) {
            v = PyLong_FromLong(idx);
        } else if (idx == 0) {
            v = PyUnicode_FromStringAndSize("", 0);
        } else {
            if (idx > PyTuple_GET_SIZE(s->labels)) return NULL;
            v = PyTuple_GET_ITEM(s->labels, idx - 1);
            Py_INCREF(v);
        }
        break;
    }
    default: {   /* K_PY: the Python decoder */
        /* pystep = (null byte, mask, key, decoder, column) */
        if (!PyTuple_Check(pystep) || PyTuple_GET_SIZE(pystep) != 5) return NULL;
        PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(pystep, 3), "OnnO", data_obj, pos,
                                            end, PyTuple_GET_ITEM(pystep, 4));
        if (!r) return NULL;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) { Py_DECREF(r); return NULL; }
        v = PyTuple_GET_ITEM(r, 0);
        Py_INCREF(v);
        Py_ssize_t np = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if (np < pos || np > end) { Py_DECREF(v); return NULL; }
        pos = np;
    }
    }
    if (v) *ppos = pos;
    return v;
}

static PyObject *image(const Walk *w, PyObject *pysteps, PyObject *data_obj,
                       const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Py_ssize_t pos = *ppos;
    if (end - pos < w->nbytes) return NULL;
    const unsigned char *nulls = data + pos;
    pos += w->nbytes;
    PyObject *row = PyDict_New();
    if (!row) return NULL;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const Step *s = &w->steps[i];
        PyObject *v;
        if (nulls[s->null_byte] & s->null_mask) {
            v = Py_None;
            Py_INCREF(v);
        } else {
            v = value(s, PyTuple_GET_ITEM(pysteps, i), data_obj, data, &pos, end);
            if (!v) { Py_DECREF(row); return NULL; }
        }
        int rc = PyDict_SetItem(row, s->key, v);
        Py_DECREF(v);
        if (rc < 0) { Py_DECREF(row); return NULL; }
    }
    *ppos = pos;
    return row;
}

/* decode_event(data, kind, walk, walk_after, steps, steps_after) -> [(before, after), ...]
 * kind: 0 insert, 1 update, 2 delete; steps: the Python steps the walks were compiled from. */
static PyObject *decode_event(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!", &PyBytes_Type, &data_obj, &kind, &cap, &cap_after,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after))
        return NULL;
    Walk *w = PyCapsule_GetPointer(cap, "binlog.walk");
    if (!w) return NULL;
    Walk *wa = NULL;
    if (PyTuple_GET_SIZE(steps) != w->count) {
        PyErr_SetString(PyExc_ValueError, "steps do not match the walk");
        return NULL;
    }
    if (kind == 1) {
        wa = PyCapsule_GetPointer(cap_after, "binlog.walk");
        if (!wa) return NULL;
        if (PyTuple_GET_SIZE(steps_after) != wa->count) {
            PyErr_SetString(PyExc_ValueError, "steps do not match the walk");
            return NULL;
        }
    }
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < end) {
        PyObject *first = image(w, steps, data_obj, data, &pos, end), *pair;
        if (!first) goto fallback;
        if (kind == 1) {
            PyObject *second = image(wa, steps_after, data_obj, data, &pos, end);
            if (!second) { Py_DECREF(first); goto fallback; }
            pair = PyTuple_Pack(2, first, second);
            Py_DECREF(second);
        } else if (kind == 0) {
            pair = PyTuple_Pack(2, Py_None, first);
        } else {
            pair = PyTuple_Pack(2, first, Py_None);
        }
        Py_DECREF(first);
        if (!pair || PyList_Append(out, pair) < 0) { Py_XDECREF(pair); Py_DECREF(out); return NULL; }
        Py_DECREF(pair);
    }
    return out;
fallback:
    Py_DECREF(out);
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return NULL;  /* e.g. KeyboardInterrupt */
    PyErr_Clear();
    PyErr_SetNone(Fallback);
    return NULL;
}

static PyMethodDef methods[] = {
    {"compile_walk", compile_walk, METH_VARARGS, "Compile a row-image walk for decode_event."},
    {"decode_event", decode_event, METH_VARARGS, "Decode all row images of one rows event."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *decimal = PyImport_ImportModule("decimal");
    if (!decimal) return NULL;
    DecimalType = PyObject_GetAttrString(decimal, "Decimal");
    Py_DECREF(decimal);
    if (!DecimalType) return NULL;
    Fallback = PyErr_NewException("binlog._speedups.Fallback", NULL, NULL);
    if (!Fallback || PyModule_AddObject(m, "Fallback", Fallback) < 0) return NULL;
    Py_INCREF(Fallback);
    return m;
}
