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
#include <zlib.h>
#include "_rows_frame.h"
#include "_column_kinds.h"
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef struct {
    Py_ssize_t null_byte;
    unsigned char null_mask;
    int kind, n, length, is_unsigned, precision, scale, pad_binary, utf8;
    /* The bytes unpack() checks are there before it reads a value: the value's size for
     * a fixed-size kind, a string's length prefix, 0 for K_PY; NO_VALUE for metadata no
     * server writes (no read passes the check). */
    Py_ssize_t width;
    /* Owned references (or NULL) to immutable objects only (str, tuple of str): the
     * capsule is invisible to the cycle collector, so it must not hold anything that
     * can be part of a reference cycle.  Python decoders and columns are passed with
     * each call instead (the `steps` tuple of DecodePlan.walk). */
    PyObject *key, *encoding, *labels;
    /* encode_rows: the key as a JSON member prefix (b'"key":', NULL when orjson could not
     * write the key) and as a text assignment prefix (b'###   @`key`='); raw: a character
     * column of unknown charset, whose bytes are written as {"bytes_hex": ...}. */
    PyObject *jkey, *tkey;
    int raw;
    int nocrc;          /* GEOMETRY: no part of a row checksum (binlog/checksum.py) */
} Step;

typedef struct {
    Py_ssize_t nbytes, count;
    Step *steps;
    int complete;       /* every column of the table is in the image (checksums need it) */
} Walk;

static PyObject *Fallback;          /* _speedups.Fallback */
static PyObject *DecimalType;       /* decimal.Decimal */

static const int64_t DIV[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
static const int64_t POW[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000};
#define TIME_MAX_VALUE_SECONDS (838 * 3600 + 59 * 60 + 59)

static void walk_free(PyObject *capsule) {
    Walk *w = (Walk *)PyCapsule_GetPointer(capsule, "binlog.walk");
    if (!w) return;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        Step *s = &w->steps[i];
        Py_XDECREF(s->key); Py_XDECREF(s->encoding); Py_XDECREF(s->labels);
        Py_XDECREF(s->jkey); Py_XDECREF(s->tkey);
    }
    PyMem_Free(w->steps);
    PyMem_Free(w);
}

/* ---- output buffers and escaping (encode_rows) ---------------------------------------- */

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Buf;

/* An event whose output would pass this is left to the per-row path (which streams rows
 * out one by one): a hostile event of tiny rows must not make one huge buffer. */
#define MAX_OUTPUT ((Py_ssize_t)256 << 20)
/* types/strings.py LARGE_VALUE: a binary value this large is written in pieces by Python. */
#define LARGE_VALUE ((Py_ssize_t)1 << 20)
#define SAFE_INTEGER 9007199254740991LL     /* routing.SAFE_INTEGER, 2^53 - 1 */
#define KEEP ((Py_ssize_t)4 << 20)       /* encode_rows keeps its buffer up to this size */

static int buf_grow(Buf *b, Py_ssize_t n) {
    Py_ssize_t cap = b->cap ? b->cap : 8192;
    if (n > PY_SSIZE_T_MAX / 4 - b->len) { PyErr_NoMemory(); return -1; }
    while (cap - b->len < n) cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

#define RESERVE(b, n) do { \
    if ((b)->cap - (b)->len < (Py_ssize_t)(n) && buf_grow((b), (Py_ssize_t)(n)) < 0) return -1; \
} while (0)

static inline int put(Buf *b, const char *s, Py_ssize_t n) {
    RESERVE(b, n);
    char *o = b->p + b->len;
    if (n <= 16) {
        for (Py_ssize_t i = 0; i < n; i++) o[i] = s[i];     /* keys, numbers: no call */
    } else {
        memcpy(o, s, n);
    }
    b->len += n;
    return 0;
}

static int put_bytes(Buf *b, PyObject *bytes) {
    return put(b, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
}

static const char HEXDIGITS[] = "0123456789abcdef";

/* A JSON string of valid UTF-8, escaped as orjson escapes it: ", \ and the control
 * characters (\b \t \n \f \r by name, the others as \u00XX); everything else raw. */
static int json_str(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (n > PY_SSIZE_T_MAX / 8) { PyErr_NoMemory(); return -1; }
    RESERVE(b, n * 6 + 2);
    char *o = b->p + b->len;
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        /* eight bytes at a time while none is a control character, '"' or '\\' (SWAR
         * tests: a byte below 0x20, a byte equal to 0x22 or 0x5C; high bytes pass) */
        while (n - i >= 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
            uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
            uint64_t special = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs);
            if (special & highs) break;
            memcpy(o, s + i, 8);
            o += 8;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') { *o++ = (char)c; continue; }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\t': *o++ = 't'; break;
        case '\n': *o++ = 'n'; break;
        case '\f': *o++ = 'f'; break;
        case '\r': *o++ = 'r'; break;
        default:
            *o++ = 'u'; *o++ = '0'; *o++ = '0';
            *o++ = HEXDIGITS[c >> 4]; *o++ = HEXDIGITS[c & 15];
        }
    }
    *o++ = '"';
    b->len = o - b->p;
    return 0;
}

/* 'text' with each byte c for which escapes[c] is set written as \ and escapes[c]. */
static int quoted_escaped(Buf *b, const unsigned char *s, Py_ssize_t n, const char *escapes) {
    if (n > PY_SSIZE_T_MAX / 4) { PyErr_NoMemory(); return -1; }
    RESERVE(b, n * 2 + 2);
    char *o = b->p + b->len;
    *o++ = '\'';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (escapes[c]) {
            *o++ = '\\';
            *o++ = escapes[c];
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '\'';
    b->len = o - b->p;
    return 0;
}

/* output/text.py _literal of a str: \ and ' escaped. */
static const char TEXT_ESCAPES[256] = {['\\'] = '\\', ['\''] = '\''};

/* A quoted text literal as output/text.py _literal writes a str. */
static int text_str(Buf *b, const unsigned char *s, Py_ssize_t n) {
    return quoted_escaped(b, s, n, TEXT_ESCAPES);
}

/* Strict UTF-8 as CPython's decoder takes it: no overlong forms, no surrogates, nothing
 * past U+10FFFF (Unicode 15 table 3-7). */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (n - i >= 8) {       /* ASCII, eight bytes at a time */
            uint64_t chunk;
            memcpy(&chunk, s + i, 8);
            if (!(chunk & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        unsigned c = s[i];
        if (c < 0x80) { i++; continue; }
        if (c < 0xC2) return 0;
        if (c < 0xE0) {
            if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
            continue;
        }
        if (c < 0xF0) {
            if (n - i < 3) return 0;
            unsigned c1 = s[i + 1];
            if (c == 0xE0 ? (c1 < 0xA0 || c1 > 0xBF) : c == 0xED ? (c1 < 0x80 || c1 > 0x9F)
                                                               : (c1 & 0xC0) != 0x80)
                return 0;
            if ((s[i + 2] & 0xC0) != 0x80) return 0;
            i += 3;
            continue;
        }
        if (c < 0xF5) {
            if (n - i < 4) return 0;
            unsigned c1 = s[i + 1];
            if (c == 0xF0 ? (c1 < 0x90 || c1 > 0xBF) : c == 0xF4 ? (c1 < 0x80 || c1 > 0x8F)
                                                               : (c1 & 0xC0) != 0x80)
                return 0;
            if ((s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
            i += 4;
            continue;
        }
        return 0;
    }
    return 1;
}

/* The member prefixes of a step's key (see Step): b'"key":' as orjson writes a str key
 * (none for a key orjson refuses: surrogates), and the text format's assignment
 * b'###   @`key`=' (b'###   @3=' for a key that is a column number) in UTF-8 with
 * surrogateescape, as TextWriter._emit encodes.  raw: Column.charset_unknown. */
static int step_keys(Step *s, PyObject *col) {
    PyObject *key = s->key;
    if (!key || !PyUnicode_Check(key)) return 0;
    Py_ssize_t n;
    const char *utf = PyUnicode_AsUTF8AndSize(key, &n);
    if (utf) {
        Buf b = {0};
        if (json_str(&b, (const unsigned char *)utf, n) < 0 || put(&b, ":", 1) < 0) {
            PyMem_Free(b.p);
            return -1;
        }
        s->jkey = PyBytes_FromStringAndSize(b.p, b.len);
        PyMem_Free(b.p);
        if (!s->jkey) return -1;
    } else {
        PyErr_Clear();
    }
    PyObject *enc = PyUnicode_AsEncodedString(key, "utf-8", "surrogateescape");
    if (!enc) return -1;
    int number = PyBytes_GET_SIZE(enc) > 0 && PyBytes_AS_STRING(enc)[0] == '@';
    s->tkey = PyBytes_FromFormat(number ? "###   %s=" : "###   @`%s`=", PyBytes_AS_STRING(enc));
    if (s->tkey && (Py_ssize_t)strlen(PyBytes_AS_STRING(enc)) != PyBytes_GET_SIZE(enc)) {
        Py_CLEAR(s->tkey);          /* a NUL in the name: left to Python */
    }
    Py_DECREF(enc);
    if (PyErr_Occurred()) return -1;
    PyObject *raw = PyObject_GetAttrString(col, "charset_unknown");
    if (!raw) return -1;
    s->raw = PyObject_IsTrue(raw);
    Py_DECREF(raw);
    return s->raw < 0 ? -1 : 0;
}

static PyObject *opt(PyObject *o) {
    if (o == Py_None) return NULL;
    Py_INCREF(o);
    return o;
}

/* The real type code of a GEOMETRY column (binlog/constants.py ColumnType.GEOMETRY). */
#define TYPE_GEOMETRY 255

#define NO_VALUE PY_SSIZE_T_MAX

/* Step.width from the kind and its metadata (_column_kinds.h's widths). */
static Py_ssize_t step_width(const Step *s) {
    int w;
    switch (s->kind) {
    case K_TS_HIRES: case K_DT_HIRES: case K_TIME_HIRES: case K_TS2: case K_DT2: case K_TIME2:
        w = kind_temporal_bytes(s->kind, s->n);
        break;
    case K_DECIMAL: w = decimal_bin_size(s->precision, s->scale); break;
    case K_BIT: w = s->length >= 0 && s->length <= 8 ? s->length : -1; break;
    case K_ENUM: w = s->length == 1 || s->length == 2 ? s->length : -1; break;
    case K_VARCHAR: case K_STRING: w = s->length <= 255 ? 1 : 2; break;
    case K_BLOB: w = s->length >= 1 && s->length <= 4 ? s->length : -1; break;
    default: w = s->kind > K_PY && s->kind < K_COUNT ? KIND_FIXED_BYTES[s->kind] : 0;
    }
    return w < 0 ? NO_VALUE : w;
}

/* compile_walk(nbytes, steps, complete=0) with each step a tuple
 * (null_byte, mask, key, kind, n, length, unsigned, precision, scale, pad_binary,
 *  encoding|None, labels|None, decoder, col) */
static PyObject *compile_walk(PyObject *self, PyObject *args) {
    Py_ssize_t nbytes;
    PyObject *steps;
    int complete = 0;
    if (!PyArg_ParseTuple(args, "nO!|p", &nbytes, &PyTuple_Type, &steps, &complete)) return NULL;
    Walk *w = PyMem_Calloc(1, sizeof(Walk));
    if (!w) return PyErr_NoMemory();
    w->nbytes = nbytes;
    w->complete = complete;
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
        s->width = step_width(s);
        s->key = opt(key); s->encoding = opt(enc);
        /* value() indexes the labels as a tuple; a schema may give any sequence */
        s->labels = labels == Py_None ? NULL : PySequence_Tuple(labels);
        if (labels != Py_None && !s->labels) {
            w->count = i + 1;
            PyObject *cap = PyCapsule_New(w, "binlog.walk", walk_free);
            Py_XDECREF(cap);
            return NULL;
        }
        (void)decoder;                /* taken per call from the steps tuple */
        if (s->kind == K_BLOB) {
            PyObject *type = PyObject_GetAttrString(col, "type");
            long code = type ? PyLong_AsLong(type) : -1;
            Py_XDECREF(type);
            if (PyErr_Occurred()) {
                w->count = i + 1;
                walk_free(PyCapsule_New(w, "binlog.walk", NULL));
                return NULL;
            }
            s->nocrc = code == TYPE_GEOMETRY;
        }
        s->utf8 = enc != Py_None && PyUnicode_Check(enc) &&
                  PyUnicode_CompareWithASCIIString(enc, "utf-8") == 0;
        if (step_keys(s, col) < 0) {
            w->count = i + 1;
            walk_free(PyCapsule_New(w, "binlog.walk", NULL));
            return NULL;
        }
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

/* Decimal digits without printf (the batch path formats tens of millions of values):
 * v with at least `width` digits, zero-padded; returns the length written. */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* v < 100 as two digits */
static inline int d2(char *out, unsigned v) {
    out[0] = DIGIT_PAIRS[2 * v];
    out[1] = DIGIT_PAIRS[2 * v + 1];
    return 2;
}

static const uint64_t P10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL};

static int udigits_any(char *out, uint64_t v, int width);

/* A date or time part (width 2: month, day, hours...; 4: a year): pairs from the table,
 * no digit count - these are most of the numbers a temporal column writes. */
static inline int udigits(char *out, uint64_t v, int width) {
    if (width == 2 && v < 100) {
        out[0] = DIGIT_PAIRS[2 * v];
        out[1] = DIGIT_PAIRS[2 * v + 1];
        return 2;
    }
    if (width == 4 && v < 10000) {
        unsigned hi = (unsigned)(v / 100), lo = (unsigned)(v % 100);
        out[0] = DIGIT_PAIRS[2 * hi];
        out[1] = DIGIT_PAIRS[2 * hi + 1];
        out[2] = DIGIT_PAIRS[2 * lo];
        out[3] = DIGIT_PAIRS[2 * lo + 1];
        return 4;
    }
    return udigits_any(out, v, width);
}

static int udigits_any(char *out, uint64_t v, int width) {
    /* digits: floor(log10(2^bits)) by 1233/4096 ~ log10(2), then one comparison */
    int t = v ? (64 - __builtin_clzll(v)) * 1233 >> 12 : 0;
    int digits = t + (v >= P10[t]);
    int len = 0;
    while (len < width - digits) out[len++] = '0';
    char *o = out + len + digits;        /* written from the end, two digits at a time */
    while (v > UINT32_MAX) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        o -= 2;
        o[0] = DIGIT_PAIRS[2 * r];
        o[1] = DIGIT_PAIRS[2 * r + 1];
    }
    uint32_t w = (uint32_t)v;           /* the rest in 32-bit arithmetic: cheaper division */
    while (w >= 100) {
        uint32_t r = w % 100;
        w /= 100;
        o -= 2;
        o[0] = DIGIT_PAIRS[2 * r];
        o[1] = DIGIT_PAIRS[2 * r + 1];
    }
    if (w >= 10) {
        o -= 2;
        o[0] = DIGIT_PAIRS[2 * w];
        o[1] = DIGIT_PAIRS[2 * w + 1];
    } else {
        *--o = (char)('0' + w);
    }
    return len + digits;
}

static int frac_text(char *out, int64_t usec, int n) {
    if (n == 0) return 0;
    out[0] = '.';
    return 1 + udigits(out + 1, (uint64_t)(usec / DIV[n]), n);
}

static int datetime_fmt(char *buf, long long year, long long month, long long day,
                        long long hour, long long minute, long long second, int64_t usec, int n) {
    if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) {
        int len = snprintf(buf, 64, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", year, month,
                           day, hour, minute, second);
        return len + frac_text(buf + len, usec, n);
    }
    int len;
    if (year < 10000 && month < 100 && day < 100 && hour < 100 && minute < 100 && second < 100) {
        d2(buf, (unsigned)(year / 100));
        d2(buf + 2, (unsigned)(year % 100));
        buf[4] = '-';
        d2(buf + 5, (unsigned)month);
        buf[7] = '-';
        d2(buf + 8, (unsigned)day);
        buf[10] = ' ';
        d2(buf + 11, (unsigned)hour);
        buf[13] = ':';
        d2(buf + 14, (unsigned)minute);
        buf[16] = ':';
        d2(buf + 17, (unsigned)second);
        len = 19;
    } else {
        len = udigits(buf, (uint64_t)year, 4);
        buf[len++] = '-';
        len += udigits(buf + len, (uint64_t)month, 2);
        buf[len++] = '-';
        len += udigits(buf + len, (uint64_t)day, 2);
        buf[len++] = ' ';
        len += udigits(buf + len, (uint64_t)hour, 2);
        buf[len++] = ':';
        len += udigits(buf + len, (uint64_t)minute, 2);
        buf[len++] = ':';
        len += udigits(buf + len, (uint64_t)second, 2);
    }
    return len + frac_text(buf + len, usec, n);
}

static int time_fmt(char *buf, int negative, long long hours, long long minutes,
                    long long seconds, int64_t usec, int n) {
    if (hours < 0 || minutes < 0 || seconds < 0) {
        int len = snprintf(buf, 64, "%s%02lld:%02lld:%02lld", negative ? "-" : "", hours,
                           minutes, seconds);
        return len + frac_text(buf + len, usec, n);
    }
    int len = 0;
    if (negative) buf[len++] = '-';
    len += udigits(buf + len, (uint64_t)hours, 2);
    buf[len++] = ':';
    len += udigits(buf + len, (uint64_t)minutes, 2);
    buf[len++] = ':';
    len += udigits(buf + len, (uint64_t)seconds, 2);
    return len + frac_text(buf + len, usec, n);
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

static int timestamp_fmt(char *buf, uint64_t seconds, int64_t usec, int n) {
    if (seconds == 0 && usec == 0) {
        memcpy(buf, "0000-00-00 00:00:00", 19);
        return 19 + frac_text(buf + 19, 0, n);
    }
    long long y, m, d;
    civil((int64_t)(seconds / 86400), &y, &m, &d);
    uint64_t rem = seconds % 86400;
    return datetime_fmt(buf, y, m, d, rem / 3600, rem / 60 % 60, rem % 60, usec, n);
}

/* A DECIMAL's bytes at p as MariaDB's bin2decimal (strings/decimal.c) first reads them:
 * the sign bit flipped and, for a negative value, every byte inverted, into raw[40]; its
 * size in bytes, or -1 past 40. */
static int decimal_unsigned(const unsigned char *p, int precision, int scale, unsigned char *raw,
                            int *negative) {
    int size = decimal_bin_size(precision, scale);
    if (size < 0 || size > 40) return -1;
    memcpy(raw, p, size);
    *negative = !(raw[0] & 0x80);
    raw[0] ^= 0x80;
    if (*negative)
        for (int i = 0; i < size; i++) raw[i] = ~raw[i];
    return size;
}

/* The digits of a DECIMAL as format(Decimal, "f") writes them, into text[128]; -1 when
 * invalid (the pure decoder raises). */
static int decimal_fmt(char *text, const unsigned char *p, int precision, int scale, int *size_out) {
    if (!(precision > 0 && precision <= 65 && scale >= 0 && scale <= 30 && scale <= precision))
        return -1;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    unsigned char raw[40];
    int negative;
    int size = decimal_unsigned(p, precision, scale, raw, &negative);
    if (size < 0) return -1;
    *size_out = size;
    char ints[80], fracs[40];
    int ilen = 0, flen = 0, off = 0;
    int nonzero = 0;
    if (intg0x) {
        uint32_t g = (uint32_t)be(raw, DIG2BYTES[intg0x]);
        off += DIG2BYTES[intg0x];
        if (g >= POW10[intg0x]) return -1;
        ilen += udigits(ints + ilen, g, 1);
    }
    for (int i = 0; i < intg0; i++) {
        uint32_t g = (uint32_t)be(raw + off, 4);
        off += 4;
        if (g >= POW10[9]) return -1;
        ilen += udigits(ints + ilen, g, 9);
    }
    for (int i = 0; i < frac0; i++) {
        uint32_t g = (uint32_t)be(raw + off, 4);
        off += 4;
        if (g >= POW10[9]) return -1;
        flen += udigits(fracs + flen, g, 9);
    }
    if (frac0x) {
        uint32_t g = (uint32_t)be(raw + off, DIG2BYTES[frac0x]);
        if (g >= POW10[frac0x]) return -1;
        flen += udigits(fracs + flen, g, frac0x);
    }
    /* integer digits without leading zeros, at least one digit */
    int start = 0;
    while (start < ilen - 1 && ints[start] == '0') start++;
    if (ilen == 0) { ints[0] = '0'; ilen = 1; }
    for (int i = start; i < ilen; i++) if (ints[i] != '0') nonzero = 1;
    for (int i = 0; i < flen; i++) if (fracs[i] != '0') nonzero = 1;
    int len = 0;
    if (negative && nonzero) text[len++] = '-';
    memcpy(text + len, ints + start, ilen - start);
    len += ilen - start;
    if (scale) {
        text[len++] = '.';
        memcpy(text + len, fracs, flen);
        len += flen;
    }
    return len;
}

static PyObject *text_value(const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding) return PyBytes_FromStringAndSize((const char *)p, n);
    if (s->utf8) return PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    const char *encoding = PyUnicode_Check(s->encoding) ? PyUnicode_AsUTF8(s->encoding) : NULL;
    if (!encoding) return NULL;    /* not a codec name: the pure path says what it is */
    return PyUnicode_Decode((const char *)p, n, encoding, "strict");
}

/* ---- unpack: one value's bytes, read once for every renderer ---------------------------
 *
 * The byte layouts of the column kinds live here and only here.  unpack() reads the value
 * of a step at p (``avail`` bytes left) into an Unpacked: a small tagged struct of a few
 * shapes (an integer, a double, temporal parts, a decimal's digits, a byte span...).  The
 * renderers - value() (a Python object), put_value() (JSON/text), sql_value() (an SQL
 * literal), crc_value() (a row checksum), typed_value() (Arrow) - switch over those shapes,
 * not over the kinds.  unpack gives the shape, or -1 when the bytes are short or not a
 * value the pure decoder would give (the caller falls back: the pure path raises the
 * typed error naming the column).  Layouts: MariaDB sql/field.cc, MySQL mysys/my_time.cc
 * (see docs/binlog-formats.md). */

/* Inlined where used: each renderer's copy of unpack() then holds every kind's reader, and
 * the compiler threads a kind's case straight to its shape's case (no call, no second
 * dispatch per value). */
#define LAYOUT static inline __attribute__((always_inline))

/* An integer (TINY..LONGLONG, YEAR, BIT): ``u`` when ``is_u``, else ``i``. */
typedef struct { int is_u; int64_t i; uint64_t u; } IntValue;

/* A temporal value's parts: a DATE, a TIMESTAMP (epoch seconds), a DATETIME or a TIME,
 * ``frac`` the fraction digits shown. */
typedef struct {
    char form;              /* 'D' date, 'S' timestamp, 'C' datetime, 'T' time */
    int neg, frac;
    long long year;
    uint64_t month, day, hour, minute, second, epoch;
    int64_t usec;
} Temporal;

/* The shapes of unpacked values. */
enum {
    U_PY,           /* K_PY (or a kind not known here): the column's Python decoder reads it */
    U_INT,          /* x: TINY, SHORT, INT24, LONG, LONGLONG (x.is_u: an unsigned BIGINT) */
    U_YEAR,         /* x.i: 0 or 1901..2155 */
    U_BIT,          /* x.u (x.is_u set) */
    U_REAL,         /* d: a FLOAT widened, a DOUBLE */
    U_TEMPORAL,     /* t */
    U_DECIMAL,      /* dec: the digits as format(Decimal, "f") writes them */
    U_STRING,       /* span: the bytes after the length prefix (charset: the step's) */
    U_ENUM,         /* idx: 0 the error value '', else a label's number (the step's labels) */
};

typedef struct {
    int shape;
    Py_ssize_t size;        /* the bytes the value takes in the row image */
    union {
        IntValue x;
        double d;
        Temporal t;
        /* a BINARY(N) value shorter than N is not padded here: string_bytes does that */
        struct { const unsigned char *p; Py_ssize_t len; } span;
        struct { int len; char text[128]; } dec;
        long idx;
    };
} Unpacked;

/* One reader per kind: the value at p, which holds the step's width (checked by unpack);
 * the shape, or -1. */
#define UNPACK LAYOUT int

LAYOUT int int_shape(Unpacked *u, int64_t i) {
    u->x.is_u = 0;
    u->x.i = i;
    return U_INT;
}

UNPACK unpack_tiny(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    return int_shape(u, s->is_unsigned ? (int64_t)p[0] : (int64_t)(signed char)p[0]);
}

UNPACK unpack_short(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    return int_shape(u, s->is_unsigned ? (int64_t)(uint16_t)le(p, 2) : (int64_t)(int16_t)le(p, 2));
}

UNPACK unpack_int24(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int64_t v = (int64_t)le(p, 3);
    return int_shape(u, s->is_unsigned || !(v & 0x800000) ? v : v - 0x1000000);
}

UNPACK unpack_long(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    return int_shape(u, s->is_unsigned ? (int64_t)(uint32_t)le(p, 4) : (int64_t)(int32_t)le(p, 4));
}

UNPACK unpack_longlong(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    u->x.is_u = s->is_unsigned;
    u->x.u = le(p, 8);
    u->x.i = (int64_t)u->x.u;
    return U_INT;
}

/* YEAR: 0, or 1900 + the byte (sql/field.cc Field_year) */
UNPACK unpack_year(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    u->x.is_u = 0;
    u->x.i = p[0] ? 1900 + p[0] : 0;
    return U_YEAR;
}

/* BIT(M): (M + 7) / 8 bytes big-endian (the width: s->length) */
UNPACK unpack_bit(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    u->x.is_u = 1;
    u->x.u = be(p, s->length);
    u->x.i = (int64_t)u->x.u;
    return U_BIT;
}

UNPACK unpack_float(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    uint32_t bits = (uint32_t)le(p, 4);
    float f;
    memcpy(&f, &bits, 4);
    u->d = (double)f;
    return U_REAL;
}

UNPACK unpack_double(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    uint64_t bits = le(p, 8);
    memcpy(&u->d, &bits, 8);
    return U_REAL;
}

LAYOUT int time_shape(Temporal *t, int neg, int64_t hours, int64_t minutes, int64_t seconds,
                      int64_t usec, int frac) {
    t->form = 'T';
    t->neg = neg;
    t->hour = (uint64_t)hours;
    t->minute = (uint64_t)minutes;
    t->second = (uint64_t)seconds;
    t->usec = usec;
    t->frac = frac;
    return U_TEMPORAL;
}

LAYOUT int datetime_shape(Temporal *t, long long year, uint64_t month, uint64_t day,
                          uint64_t hour, uint64_t minute, uint64_t second, int64_t usec, int frac) {
    t->form = 'C';
    t->year = year;
    t->month = month;
    t->day = day;
    t->hour = hour;
    t->minute = minute;
    t->second = second;
    t->usec = usec;
    t->frac = frac;
    return U_TEMPORAL;
}

LAYOUT int timestamp_shape(Temporal *t, uint64_t epoch, int64_t usec, int frac) {
    t->form = 'S';
    t->epoch = epoch;
    t->usec = usec;
    t->frac = frac;
    return U_TEMPORAL;
}

/* DATE: 3 bytes, day | month << 5 | year << 9 */
UNPACK unpack_date(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    uint32_t d = (uint32_t)le(p, 3);
    u->t.form = 'D';
    u->t.year = d >> 9;
    u->t.month = (d >> 5) & 15;
    u->t.day = d & 31;
    u->t.usec = 0;          /* read by typed_value for every form */
    u->t.frac = 0;
    return U_TEMPORAL;
}

/* TIMESTAMP of 5.5: 4 bytes of epoch seconds, little-endian */
UNPACK unpack_ts0(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    return timestamp_shape(&u->t, le(p, 4), 0, 0);
}

/* DATETIME of 5.5: 8 bytes, the decimal digits YYYYMMDDhhmmss as one integer */
UNPACK unpack_dt0(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    uint64_t x = le(p, 8);
    uint64_t d = x / 1000000, tm = x % 1000000;
    if (d / 10000 > 9999) return -1;
    return datetime_shape(&u->t, (long long)(d / 10000), d / 100 % 100, d % 100, tm / 10000,
                          tm / 100 % 100, tm % 100, 0, 0);
}

/* TIME of 5.5: 3 bytes signed, the decimal digits hhmmss */
UNPACK unpack_time0(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int32_t x = (int32_t)le(p, 3);
    if (x & 0x800000) x -= 0x1000000;
    int neg = x < 0;
    int32_t a = neg ? -x : x;
    return time_shape(&u->t, neg, a / 10000, a / 100 % 100, a % 100, 0, 0);
}

/* 5.3 TIMESTAMP(N): 4 bytes of seconds big-endian, then the fraction (N digits) */
UNPACK unpack_ts_hires(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int n = s->n;
    uint64_t part = be(p + 4, SEC_PART_BYTES[n]);
    if ((int64_t)part >= POW[n]) return -1;
    return timestamp_shape(&u->t, be(p, 4), (int64_t)part * DIV[n], n);
}

/* 5.3 DATETIME(N): one big-endian integer of microseconds / 10^(6-N) in a calendar of
 * 13 months of 32 days (sql/field.cc Field_datetime_hires) */
UNPACK unpack_dt_hires(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int n = s->n;
    unsigned __int128 x = (unsigned __int128)be(p, DATETIME_HIRES_BYTES[n]) * (uint64_t)DIV[n];
    uint64_t usec = (uint64_t)(x % 1000000); x /= 1000000;
    uint64_t second = (uint64_t)(x % 60); x /= 60;
    uint64_t minute = (uint64_t)(x % 60); x /= 60;
    uint64_t hour = (uint64_t)(x % 24); x /= 24;
    uint64_t day = (uint64_t)(x % 32); x /= 32;
    uint64_t month = (uint64_t)(x % 13); x /= 13;
    if (x > 9999) return -1;
    return datetime_shape(&u->t, (long long)x, month, day, hour, minute, second, (int64_t)usec, n);
}

/* 5.3 TIME(N): big-endian microseconds / 10^(6-N), offset by 838:59:59 (Field_time_hires) */
UNPACK unpack_time_hires(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    static const int64_t ZERO[7] = {3020400LL, 30204000LL, 302040000LL, 3020400000LL,
                                    30204000000LL, 302040000000LL, 3020400000000LL};
    int n = s->n;
    int64_t x = ((int64_t)be(p, TIME_HIRES_BYTES[n]) - ZERO[n]) * DIV[n];
    int neg = x < 0;
    int64_t a = neg ? -x : x;
    int64_t secs = a / 1000000, usec = a % 1000000;
    if (secs > TIME_MAX_VALUE_SECONDS) return -1;
    return time_shape(&u->t, neg, secs / 3600, secs / 60 % 60, secs % 60, usec, n);
}

/* MySQL 5.6 TIMESTAMP2: 4 bytes of seconds big-endian, then the fraction (FSP_BYTES) */
UNPACK unpack_ts2(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int n = s->n;
    int64_t usec = n ? (int64_t)be(p + 4, FSP_BYTES[n]) * FSP_MULT[n] : 0;
    if (usec >= 1000000) return -1;
    return timestamp_shape(&u->t, be(p, 4), usec, n);
}

/* MySQL 5.6 DATETIME2: 40 bits (sign, year * 13 + month, day, hour, minute, second) big-endian,
 * then the signed fraction (mysys/my_time.cc TIME_from_longlong_datetime_packed) */
UNPACK unpack_dt2(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int n = s->n;
    int64_t intpart = (int64_t)be(p, 5) - 0x8000000000LL;
    int64_t usec = 0;
    if (n) {
        int fb = FSP_BYTES[n];
        int64_t f = (int64_t)be(p + 5, fb);
        if (f & ((int64_t)1 << (8 * fb - 1))) f -= (int64_t)1 << (8 * fb);
        usec = f * FSP_MULT[n];
    }
    if (intpart < 0 || usec < 0 || usec >= 1000000) return -1;
    int64_t ymd = intpart >> 17, ym = ymd >> 5, hms = intpart & 0x1FFFF;
    return datetime_shape(&u->t, ym / 13, (uint64_t)(ym % 13), (uint64_t)(ymd & 31),
                          (uint64_t)(hms >> 12), (uint64_t)((hms >> 6) & 63), (uint64_t)(hms & 63),
                          usec, n);
}

/* MySQL 5.6 TIME2: 24 bits (sign, hour, minute, second) then the fraction, or for N 5 and 6
 * 48 bits at once (mysys/my_time.cc my_time_packed_from_binary) */
UNPACK unpack_time2(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int n = s->n;
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
    if (usec >= 1000000) return -1;
    return time_shape(&u->t, neg, (hms >> 12) & 0x3FF, (hms >> 6) & 63, hms & 63, usec, n);
}

/* A string's bytes after its length prefix (the step's width), within ``avail``. */
LAYOUT int string_shape(const Step *s, const unsigned char *p, Py_ssize_t avail, Py_ssize_t len,
                        Unpacked *u) {
    if (avail - s->width < len) return -1;
    u->span.p = p + s->width;
    u->span.len = len;
    u->size = s->width + len;
    return U_STRING;
}

/* CHAR/VARCHAR/BINARY/VARBINARY: a 1-byte length (2 past 255 bytes declared), at most the
 * declared length */
UNPACK unpack_varchar(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    Py_ssize_t len = (Py_ssize_t)le(p, (int)s->width);
    if (s->length && len > s->length) return -1;
    return string_shape(s, p, avail, len, u);
}

/* The BLOBs and TEXTs (and GEOMETRY, JSON of MariaDB): a 1- to 4-byte length (the
 * metadata's pack length) */
UNPACK unpack_blob(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    return string_shape(s, p, avail, (Py_ssize_t)le(p, (int)s->width), u);
}

/* DECIMAL: its digits (strings/decimal.c bin2decimal's layout, in decimal_fmt) */
UNPACK unpack_decimal(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int size;
    u->dec.len = decimal_fmt(u->dec.text, p, s->precision, s->scale, &size);
    return u->dec.len < 0 ? -1 : U_DECIMAL;
}

/* ENUM: a 1- or 2-byte index, within the labels when the step has them */
UNPACK unpack_enum(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    u->idx = (long)le(p, s->length);
    if (s->labels && u->idx > PyTuple_GET_SIZE(s->labels)) return -1;
    return U_ENUM;
}

/* The one bounds check of a value's fixed part (Step.width: its fixed size, or a string's
 * length prefix; NO_VALUE for metadata no server writes), then its kind's reader.  The
 * table of readers keyed by kind is a switch rather than an array of function pointers:
 * an indirect call could not be inlined into the renderers. */
LAYOUT int unpack(const Step *s, const unsigned char *p, Py_ssize_t avail, Unpacked *u) {
    int shape;
    if (avail < s->width) return u->shape = -1;
    u->size = s->width;
    switch (s->kind) {
    case K_TINY: shape = unpack_tiny(s, p, avail, u); break;
    case K_SHORT: shape = unpack_short(s, p, avail, u); break;
    case K_INT24: shape = unpack_int24(s, p, avail, u); break;
    case K_LONG: shape = unpack_long(s, p, avail, u); break;
    case K_LONGLONG: shape = unpack_longlong(s, p, avail, u); break;
    case K_YEAR: shape = unpack_year(s, p, avail, u); break;
    case K_BIT: shape = unpack_bit(s, p, avail, u); break;
    case K_FLOAT: shape = unpack_float(s, p, avail, u); break;
    case K_DOUBLE: shape = unpack_double(s, p, avail, u); break;
    case K_DATE: shape = unpack_date(s, p, avail, u); break;
    case K_TS0: shape = unpack_ts0(s, p, avail, u); break;
    case K_DT0: shape = unpack_dt0(s, p, avail, u); break;
    case K_TIME0: shape = unpack_time0(s, p, avail, u); break;
    case K_TS_HIRES: shape = unpack_ts_hires(s, p, avail, u); break;
    case K_DT_HIRES: shape = unpack_dt_hires(s, p, avail, u); break;
    case K_TIME_HIRES: shape = unpack_time_hires(s, p, avail, u); break;
    case K_TS2: shape = unpack_ts2(s, p, avail, u); break;
    case K_DT2: shape = unpack_dt2(s, p, avail, u); break;
    case K_TIME2: shape = unpack_time2(s, p, avail, u); break;
    case K_VARCHAR: case K_STRING: shape = unpack_varchar(s, p, avail, u); break;
    case K_BLOB: shape = unpack_blob(s, p, avail, u); break;
    case K_DECIMAL: shape = unpack_decimal(s, p, avail, u); break;
    case K_ENUM: shape = unpack_enum(s, p, avail, u); break;
    default: shape = U_PY;      /* K_PY: the renderer calls the Python decoder */
    }
    return u->shape = shape;
}

/* The text of a temporal value (into buf[96]), as the pure decoders give it. */
LAYOUT int temporal_fmt(char *buf, const Temporal *t) {
    int len;
    switch (t->form) {
    case 'D':
        len = udigits(buf, (uint64_t)t->year, 4);
        buf[len++] = '-';
        len += udigits(buf + len, t->month, 2);
        buf[len++] = '-';
        len += udigits(buf + len, t->day, 2);
        return len;
    case 'S':
        return timestamp_fmt(buf, t->epoch, t->usec, t->frac);
    case 'C':
        return datetime_fmt(buf, t->year, (long long)t->month, (long long)t->day, (long long)t->hour,
                            (long long)t->minute, (long long)t->second, t->usec, t->frac);
    default:
        return time_fmt(buf, t->neg, (long long)t->hour, (long long)t->minute, (long long)t->second,
                        t->usec, t->frac);
    }
}

/* A DECIMAL's bytes at p (typed_value hands them to decimal128 as they are, without the
 * text unpack formats); -1 when they are not all there. */
LAYOUT int decimal_size(const Step *s, Py_ssize_t avail) {
    return s->kind != K_DECIMAL || avail < s->width ? -1 : (int)s->width;
}

/* A string value's bytes as decode_string gives them: a BINARY(N) value shorter than N
 * padded back to N bytes with 0x00 into *owned (the caller PyMem_Frees it), else the
 * row's own bytes; *len is updated.  NULL: out of memory. */
static const unsigned char *string_bytes(const Step *s, const unsigned char *p,
                                         Py_ssize_t *len, unsigned char **owned) {
    *owned = NULL;
    if (!(s->kind == K_STRING && s->pad_binary && *len < s->length)) return p;
    *owned = PyMem_Malloc(s->length);
    if (!*owned) { PyErr_NoMemory(); return NULL; }
    memcpy(*owned, p, *len);
    memset(*owned + *len, 0, s->length - *len);
    *len = s->length;
    return *owned;
}

/* A string value as decode_string gives it: string_bytes, decoded when an encoding is set. */
static PyObject *string_value(const Step *s, const unsigned char *p, Py_ssize_t len) {
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &len, &owned);
    if (!v) return NULL;
    PyObject *out = text_value(s, v, len);
    PyMem_Free(owned);
    return out;
}

/* An ENUM value as decode_enum gives it: its label ('' for the error value 0), or its
 * number when the column's labels are not known. */
static PyObject *enum_value(const Step *s, long idx) {
    if (!s->labels) return PyLong_FromLong(idx);
    if (idx == 0) return PyUnicode_FromStringAndSize("", 0);
    PyObject *v = PyTuple_GET_ITEM(s->labels, idx - 1);
    Py_INCREF(v);
    return v;
}

/* The value a step's Python decoder reads at *ppos: the decoder's (value, end) result
 * (a new reference; value is item 0) and its column, *np the value's end; NULL when the
 * decoder fails or gives something else (fall back). */
static PyObject *python_value(PyObject *pystep, PyObject *data_obj, Py_ssize_t pos,
                              Py_ssize_t end, PyObject **col, Py_ssize_t *np) {
    /* pystep = (null byte, mask, key, decoder, column) */
    if (!PyTuple_Check(pystep) || PyTuple_GET_SIZE(pystep) != 5) return NULL;
    *col = PyTuple_GET_ITEM(pystep, 4);
    PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(pystep, 3), "OnnO", data_obj, pos,
                                        end, *col);
    if (!r) return NULL;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) { Py_DECREF(r); return NULL; }
    *np = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
    if (*np < pos || *np > end) { Py_DECREF(r); return NULL; }
    return r;
}

/* The value of a Python decoder at *ppos (moved past it); NULL: fall back. */
static PyObject *python_object(PyObject *pystep, PyObject *data_obj, Py_ssize_t *ppos,
                               Py_ssize_t end) {
    PyObject *col;
    Py_ssize_t np;
    PyObject *r = python_value(pystep, data_obj, *ppos, end, &col, &np);
    if (!r) return NULL;
    PyObject *v = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(v);
    Py_DECREF(r);
    *ppos = np;
    return v;
}

/* Decode one value; NULL (with or without an exception set) means: fall back. */
static PyObject *value(const Step *s, PyObject *pystep, PyObject *data_obj,
                       const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    Unpacked u;
    char buf[96];
    PyObject *v;
    switch (unpack(s, data + *ppos, end - *ppos, &u)) {
    case U_INT: case U_YEAR: case U_BIT:
        v = u.x.is_u ? PyLong_FromUnsignedLongLong(u.x.u) : PyLong_FromLongLong(u.x.i);
        break;
    case U_REAL: v = PyFloat_FromDouble(u.d); break;
    case U_TEMPORAL: v = PyUnicode_FromStringAndSize(buf, temporal_fmt(buf, &u.t)); break;
    case U_DECIMAL:
        v = PyObject_CallFunction(DecimalType, "s#", u.dec.text, (Py_ssize_t)u.dec.len);
        break;
    case U_STRING: v = string_value(s, u.span.p, u.span.len); break;
    case U_ENUM: v = enum_value(s, u.idx); break;
    case U_PY: return python_object(pystep, data_obj, ppos, end);
    default: return NULL;
    }
    if (v) *ppos += u.size;
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

/* What a compiled call that cannot finish returns: NULL with Fallback set (the caller
 * takes the Python path, which raises the typed error), unless an interrupt (an exception
 * not derived from Exception, e.g. KeyboardInterrupt) is pending: that one stays. */
static PyObject *fall_back(void) {
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return NULL;
    PyErr_Clear();
    PyErr_SetNone(Fallback);
    return NULL;
}

/* The walks and Python steps of one rows event's images (kind 0 insert, 1 update, 2
 * delete): *wa and *psa are the after image's (the before image's unless an update);
 * -1 with an exception when they do not fit together. */
static int event_walks(int kind, PyObject *cap, PyObject *cap_after, PyObject *steps,
                       PyObject *steps_after, Walk **w, Walk **wa, PyObject **psa) {
    if (kind < 0 || kind > 2) {
        PyErr_SetString(PyExc_ValueError, "kind is 0, 1 or 2");
        return -1;
    }
    *w = PyCapsule_GetPointer(cap, "binlog.walk");
    if (!*w) return -1;
    *wa = *w;
    *psa = steps;
    if (kind == 1) {
        *wa = PyCapsule_GetPointer(cap_after, "binlog.walk");
        if (!*wa) return -1;
        *psa = steps_after;
    }
    if (PyTuple_GET_SIZE(steps) != (*w)->count || PyTuple_GET_SIZE(*psa) != (*wa)->count) {
        PyErr_SetString(PyExc_ValueError, "steps do not match the walk");
        return -1;
    }
    return 0;
}

/* decode_event(data, kind, walk, walk_after, steps, steps_after) -> [(before, after), ...]
 * kind: 0 insert, 1 update, 2 delete; steps: the Python steps the walks were compiled from. */
static PyObject *decode_event(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!", &PyBytes_Type, &data_obj, &kind, &cap, &cap_after,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after))
        return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < end) {
        PyObject *first = image(w, steps, data_obj, data, &pos, end), *pair;
        if (!first) goto fallback;
        if (kind == 1) {
            PyObject *second = image(wa, psa, data_obj, data, &pos, end);
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
    return fall_back();
}

/* ---- encode_rows: a rows event straight into output lines ------------------------------ */

typedef struct {
    Buf b;
    int text;            /* 0: --format json, 1: --format text */
    int bigint;          /* --bigint-as-string */
    int base64;          /* --binary-encoding base64 */
    PyObject *render;    /* render(value, column) -> bytes, for values of Python decoders */
    int crc;             /* JSON: each record's TiCDC row checksums (dump --checksum) */
    PyObject *crc_update;   /* crc_update(crc, value, column) -> crc, for Python decoders' */
    Py_ssize_t base;     /* where the event's output starts in b (images_encode: a batch's
                          * column holds earlier events' images): MAX_OUTPUT counts from it */
} Enc;

#define PUT(s, n) do { if (put(&e->b, (s), (n)) < 0) return -1; } while (0)
#define PUTS(lit) PUT(lit, (Py_ssize_t)sizeof(lit) - 1)

static int put_quoted(Enc *e, const char *s, int n) {
    char q = e->text ? '\'' : '"';
    RESERVE(&e->b, n + 2);
    e->b.p[e->b.len++] = q;
    memcpy(e->b.p + e->b.len, s, n);
    e->b.len += n;
    e->b.p[e->b.len++] = q;
    return 0;
}

/* An integer; with --bigint-as-string one beyond +-(2^53 - 1) as the string of its
 * digits (routing.BigintsAsStrings), quoted as the format quotes strings. */
static int put_int(Enc *e, int64_t v) {
    char tmp[32];
    int n = 0;
    if (v < 0) tmp[n++] = '-';
    n += udigits(tmp + n, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 1);
    if (e->bigint && (v > SAFE_INTEGER || v < -SAFE_INTEGER)) return put_quoted(e, tmp, n);
    PUT(tmp, n);
    return 0;
}

static int put_uint(Enc *e, uint64_t v) {
    char tmp[32];
    int n = udigits(tmp, v, 1);
    if (e->bigint && v > (uint64_t)SAFE_INTEGER) return put_quoted(e, tmp, n);
    PUT(tmp, n);
    return 0;
}

static const double POW10D[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15};

/* The shortest digits of a double (repr's and orjson's: both write the shortest string
 * that reads back to it) without dtoa for the common case: |d| < 2^53 with at most 15
 * decimals.  r = d x 10^p rounded, for the smallest p whose r / 10^p reads back as d
 * (exact: r and 10^p are exact doubles, so the division is correctly rounded, as strtod
 * is: Clinger's fast path); r well away from a tie, so it is the nearest p-decimal.
 * Otherwise dtoa (PyOS_double_to_string 'r').  Out: digits D (no leading or trailing
 * zero) and k with |d| = 0.D x 10^k. */
static int shortest(double a, char *D, int *nd, int *k) {
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
static int put_double(Enc *e, double d) {
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
    if (shortest(fabs(d), D, &n, &k) < 0) return -1;
    int len = 0;
    if (signbit(d)) out[len++] = '-';
    if (k > (e->text ? -4 : -5) && k <= 0) {
        out[len++] = '0'; out[len++] = '.';
        for (int i = 0; i < -k; i++) out[len++] = '0';
        memcpy(out + len, D, n); len += n;
    } else if (k > 0 && k <= 16) {
        if (n <= k) {
            memcpy(out + len, D, n); len += n;
            for (int i = n; i < k; i++) out[len++] = '0';
            out[len++] = '.'; out[len++] = '0';
        } else {
            memcpy(out + len, D, k); len += k;
            out[len++] = '.';
            memcpy(out + len, D + k, n - k); len += n - k;
        }
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
        char *o = e->b.p + e->b.len;
        for (Py_ssize_t i = 0; i < n; i++) {
            *o++ = HEXDIGITS[p[i] >> 4];
            *o++ = HEXDIGITS[p[i] & 15];
        }
        e->b.len = o - e->b.p;
    }
    if (s->raw) PUTS("\"}"); else PUT(e->text ? "'" : "\"", 1);
    return 0;
}

static int put_utf8(Enc *e, const unsigned char *p, Py_ssize_t n) {
    return e->text ? text_str(&e->b, p, n) : json_str(&e->b, p, n);
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
        if (!utf8_valid(p, n)) return -1;   /* the pure decoder raises the typed error */
        return put_utf8(e, p, n);
    }
    PyObject *u = text_value(s, p, n);
    if (!u) return -1;
    int rc = put_unicode(e, u);
    Py_DECREF(u);
    return rc;
}

/* A value of a Python decoder: decoded by it, rendered by the writer's render(). */
static int put_python(Enc *e, PyObject *pystep, PyObject *data_obj, Py_ssize_t *ppos,
                      Py_ssize_t end) {
    PyObject *col;
    Py_ssize_t np;
    PyObject *r = python_value(pystep, data_obj, *ppos, end, &col, &np);
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
    case U_REAL: rc = put_double(e, u.d); break;
    case U_TEMPORAL: rc = put_quoted(e, tmp, temporal_fmt(tmp, &u.t)); break;
    case U_DECIMAL:
        rc = e->text ? put(&e->b, u.dec.text, u.dec.len) : put_quoted(e, u.dec.text, u.dec.len);
        break;
    case U_STRING: rc = put_string(e, s, u.span.p, u.span.len); break;
    case U_ENUM: rc = put_enum(e, s, u.idx); break;
    case U_PY: return put_python(e, pystep, data_obj, ppos, end);
    default: return -1;
    }
    if (rc == 0) *ppos += u.size;
    return rc;
}

/* One row image: {"key":value,...} (JSON) or its ###   @`key`=value lines (text). */
static int put_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
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
    for (Py_ssize_t i = 0; i < n; i++) {
        *o++ = HEXDIGITS[p[i] >> 4];
        *o++ = HEXDIGITS[p[i] & 15];
    }
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
    int rc = code == 'q' ? (utf8_valid(v, n) ? sql_quoted(&e->b, v, n) : -1)
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
    if (put_double(e, d) < 0) return -1;
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
    if (code == 'p' || s->kind == K_PY) return put_python(e, pystep, data_obj, ppos, end);
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
static PyObject *sql_values(PyObject *self, PyObject *args) {
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
    if (event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
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
    return fall_back();
fail:
    PyMem_Free(e.b.p);
    Py_DECREF(out);
    return NULL;
}

/* ---- TiCDC row checksums (binlog/checksum.py: its module docstring gives the encoding) */

static void crc_add(uint32_t *crc, const unsigned char *p, Py_ssize_t n) {
    while (n > 0) {             /* zlib takes uInt lengths */
        uInt chunk = n > (1 << 30) ? (uInt)1 << 30 : (uInt)n;
        *crc = (uint32_t)crc32(*crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
}

/* An integer, BIT, ENUM index or double's bits: the UINT64 little-endian. */
static void crc_u64(uint32_t *crc, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    crc_add(crc, b, 8);
}

/* Text in the column's charset: utf8 as it is (when valid: the pure decoder rejects
 * the rest), binary bytes as they are, another charset decoded and encoded again as
 * encode_value does. */
static int crc_text(uint32_t *crc, const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding || s->utf8) {
        if (s->utf8 && !utf8_valid(p, n)) return -1;
        crc_add(crc, p, n);
        return 0;
    }
    PyObject *u = text_value(s, p, n);
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
    PyObject *r = python_value(pystep, data_obj, *ppos, end, &col, &np);
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
static int crc_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
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
    if (kind != 0 && crc_image(e, w, steps, data_obj, data, &pos, end, &before) < 0) return -1;
    if (kind != 2 && crc_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
                               data, &pos, end, &after) < 0)
        return -1;
    char tmp[80];
    int n = 0;
    memcpy(tmp, ",\"checksum\":{\"current\":", 23);
    n = 23;
    if (kind != 2 && (kind == 1 ? wa : w)->complete) n += udigits(tmp + n, after, 1);
    else { memcpy(tmp + n, "null", 4); n += 4; }
    memcpy(tmp + n, ",\"previous\":", 12);
    n += 12;
    if (kind != 0 && w->complete) n += udigits(tmp + n, before, 1);
    else { memcpy(tmp + n, "null", 4); n += 4; }
    tmp[n++] = '}';
    PUT(tmp, n);
    *ppos = pos;
    return 0;
}

/* The rows of one event, line by line (see the docstring in `methods`). */
static int put_rows(Enc *e, int kind, const Walk *w, const Walk *wa, PyObject *steps,
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
                if (put_image(e, w, steps, data_obj, data, &pos, end) < 0) return -1;
            }
            if (kind != 2) {
                PUTS("### SET\n");
                if (put_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
                              data, &pos, end) < 0)
                    return -1;
            }
        } else {
            if (kind == 0) PUTS("null");
            else if (put_image(e, w, steps, data_obj, data, &pos, end) < 0) return -1;
            PUTS(",\"after\":");
            if (kind == 2) PUTS("null");
            else if (put_image(e, kind == 1 ? wa : w, kind == 1 ? steps_after : steps, data_obj,
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
static PyObject *encode_rows(PyObject *self, PyObject *args) {
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
    if (event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
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
    int rc = put_rows(&e, kind, w, wa, steps, psa, data_obj, head, mid, tail, &last_start, &count);
    PyObject *out = rc < 0 ? NULL : PyBytes_FromStringAndSize(e.b.p, e.b.len);
    if (own && e.b.cap <= KEEP) {
        kept = e.b;
    } else {
        PyMem_Free(e.b.p);
        if (own) memset(&kept, 0, sizeof kept);
    }
    if (own) kept_busy = 0;
    if (rc < 0) return fall_back();
    if (!out) return NULL;
    return Py_BuildValue("(Nnn)", out, last_start, count);
}

/* ---- the images of changes/ as two Arrow string columns -------------------------------
 *
 * spark_ingest/records.py ImageColumns: a batch's row images (the JSON text encode_rows
 * writes, byte for byte) as the before and after columns of changes/, each an Arrow
 * string column (validity bitmap, int32 offsets, UTF-8 bytes) filled in the batch's row
 * order: images_encode writes a rows event's images straight into them (put_image, as
 * encode_rows writes them), images_put adds images made in Python.  images_finish hands
 * the buffers over; pyarrow wraps them without a copy (pyarrow.foreign_buffer, the owner
 * capsule frees them when Arrow lets go).
 *
 * No UTF-8 check of what images_encode writes: every byte put_image writes is UTF-8 by
 * construction - JSON syntax, numbers, temporals and decimals are ASCII, binary values
 * hex or base64; keys and the values of Python decoders (render) are orjson's output,
 * which is always UTF-8; utf8 text is checked by utf8_valid before it is copied; text of
 * other charsets is decoded strictly (text_value) and written by PyUnicode_AsUTF8AndSize,
 * which refuses surrogates (a fallback). */

typedef struct {
    Buf data, offsets, validity;      /* offsets: int32, rows + 1 of them once a row is in */
    Py_ssize_t nulls;
} ICol;

typedef struct {
    ICol col[2];                      /* before, after */
    Py_ssize_t rows;                  /* rows held */
    Py_ssize_t handed;                /* rows handed over so far (images_encode's first) */
} Images;

static void images_free(PyObject *capsule) {
    Images *im = PyCapsule_GetPointer(capsule, "binlog.images");
    if (!im) return;
    for (int c = 0; c < 2; c++) {
        PyMem_Free(im->col[c].data.p); PyMem_Free(im->col[c].offsets.p);
        PyMem_Free(im->col[c].validity.p);
    }
    PyMem_Free(im);
}

/* images_builder() -> builder */
static PyObject *images_builder(PyObject *self, PyObject *noargs) {
    Images *im = PyMem_Calloc(1, sizeof(Images));
    if (!im) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(im, "binlog.images", images_free);
    if (!cap) PyMem_Free(im);
    return cap;
}

/* The end of a column's row `row` (its image, if valid, written to data before): its
 * offset and validity bit.  -1 without an exception: past int32 offsets. */
static int icol_end(ICol *c, Py_ssize_t row, int valid) {
    if (c->data.len > INT32_MAX) return -1;
    if (c->offsets.len == 0) {
        RESERVE(&c->offsets, 4);
        memset(c->offsets.p, 0, 4);
        c->offsets.len = 4;
    }
    RESERVE(&c->offsets, 4);
    int32_t off = (int32_t)c->data.len;
    memcpy(c->offsets.p + c->offsets.len, &off, 4);
    c->offsets.len += 4;
    if ((row & 7) == 0) {
        RESERVE(&c->validity, 1);
        c->validity.p[c->validity.len++] = 0;
    }
    if (valid) c->validity.p[row >> 3] |= (char)(1u << (row & 7));
    else c->nulls++;
    return 0;
}

static inline int icol_valid(const ICol *c, Py_ssize_t row) {
    return (c->validity.p[row >> 3] >> (row & 7)) & 1;
}

static inline int32_t icol_offset(const ICol *c, Py_ssize_t row) {
    int32_t off;
    memcpy(&off, c->offsets.p + 4 * row, 4);
    return off;
}

/* The column cut back to its first `rows` rows (the bits past them cleared: icol_end
 * only sets bits). */
static void icol_cut(ICol *c, Py_ssize_t rows) {
    if (c->offsets.len == 0) {        /* no row ended yet: only the bytes of an image begun */
        c->data.len = 0;
        return;
    }
    Py_ssize_t held = c->offsets.len / 4 - 1;
    for (Py_ssize_t r = rows; r < held; r++)
        if (!icol_valid(c, r)) c->nulls--;
    c->data.len = icol_offset(c, rows);
    c->offsets.len = 4 * (rows + 1);
    c->validity.len = (rows + 7) >> 3;
    if (rows & 7) c->validity.p[rows >> 3] &= (char)((1u << (rows & 7)) - 1);
}

static void images_cut(Images *im, Py_ssize_t rows) {
    for (int c = 0; c < 2; c++) icol_cut(&im->col[c], rows);
    im->rows = rows;
}

/* The images of one rows event's rows, each row's before (kind 1, 2) and after (kind 0,
 * 1) into their columns, a null where the row has none. */
static int image_rows(Images *im, Enc *e, int kind, const Walk *w, const Walk *wa,
                      PyObject *steps, PyObject *steps_after, PyObject *data_obj) {
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    Py_ssize_t base[2] = {im->col[0].data.len, im->col[1].data.len};
    while (pos < end) {
        Py_ssize_t start = pos;
        for (int c = 0; c < 2; c++) {
            ICol *col = &im->col[c];
            int has = c == 0 ? kind != 0 : kind != 2;
            if (has) {
                e->b = col->data;
                e->base = base[c];          /* (MAX_OUTPUT: per event and column) */
                int rc = put_image(e, c == 1 && kind == 1 ? wa : w, c == 1 && kind == 1 ? steps_after : steps,
                                   data_obj, data, &pos, end);
                col->data = e->b;
                if (rc < 0) return -1;
            }
            if (icol_end(col, im->rows, has) < 0) return -1;
        }
        im->rows++;
        if (pos == start) return -1;
    }
    return 0;
}

/* images_encode(builder, data, kind, walk, walk_after, steps, steps_after, flags, render)
 *     -> (first, count) */
static PyObject *images_encode(PyObject *self, PyObject *args) {
    PyObject *cap, *data_obj, *cw, *cwa, *steps, *steps_after, *render;
    int kind, flags;
    if (!PyArg_ParseTuple(args, "OO!iOOO!O!iO", &cap, &PyBytes_Type, &data_obj, &kind, &cw, &cwa,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &flags, &render))
        return NULL;
    Images *im = PyCapsule_GetPointer(cap, "binlog.images");
    if (!im) return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (event_walks(kind, cw, cwa, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    Enc e = {{0}, 0, flags & 1, (flags & 2) != 0, render, 0, NULL};
    Py_ssize_t first = im->rows;
    if (image_rows(im, &e, kind, w, wa, steps, psa, data_obj) < 0) {
        images_cut(im, first);          /* all of the event's rows or none */
        return fall_back();
    }
    return Py_BuildValue("nn", im->handed + first, im->rows - first);
}

static int image_put(ICol *c, Py_ssize_t row, PyObject *item) {
    if (item == Py_None) return icol_end(c, row, 0);
    if (!PyBytes_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "an image is bytes or None");
        return -1;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(item);
    Py_ssize_t n = PyBytes_GET_SIZE(item);
    /* The Python images are orjson's output (UTF-8 always); checked all the same, as
     * pyarrow.array checks the bytes of a string column, since this entry takes any
     * bytes: the slow path's only. */
    if (!utf8_valid(p, n)) {
        PyErr_SetString(PyExc_ValueError, "an image is not UTF-8");
        return -1;
    }
    if (put(&c->data, (const char *)p, n) < 0) return -1;
    return icol_end(c, row, 1);
}

/* images_put(builder, befores, afters) -> first */
static PyObject *images_put(PyObject *self, PyObject *args) {
    PyObject *cap, *befores, *afters;
    if (!PyArg_ParseTuple(args, "OOO", &cap, &befores, &afters)) return NULL;
    Images *im = PyCapsule_GetPointer(cap, "binlog.images");
    if (!im) return NULL;
    PyObject *seq[2] = {PySequence_Fast(befores, "befores is a sequence"),
                        PySequence_Fast(afters, "afters is a sequence")};
    Py_ssize_t first = im->rows;
    int rc = -1;
    if (!seq[0] || !seq[1]) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq[0]);
    if (PySequence_Fast_GET_SIZE(seq[1]) != n) {
        PyErr_SetString(PyExc_ValueError, "befores and afters differ in length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        for (int c = 0; c < 2; c++) {
            if (image_put(&im->col[c], im->rows, PySequence_Fast_GET_ITEM(seq[c], i)) < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_OverflowError, "the images of one batch pass 2 GiB "
                                    "(int32 offsets): give a smaller batch size");
                images_cut(im, first);
                goto done;
            }
        }
        im->rows++;
    }
    rc = 0;
done:
    Py_XDECREF(seq[0]);
    Py_XDECREF(seq[1]);
    return rc < 0 ? NULL : PyLong_FromSsize_t(im->handed + first);
}

/* images_rows(builder) -> rows handed over and held; images_truncate(builder, rows): the
 * rows from that number on taken out again. */
static PyObject *images_rows(PyObject *self, PyObject *cap) {
    Images *im = PyCapsule_GetPointer(cap, "binlog.images");
    return im ? PyLong_FromSsize_t(im->handed + im->rows) : NULL;
}

/* The (builder, rows) arguments of images_truncate and images_finish: the builder, and
 * in *held the rows counted from the first held (rows counts from the first ever made
 * when absolute), which must be rows it holds. */
static Images *images_args(PyObject *args, int absolute, Py_ssize_t *held) {
    PyObject *cap;
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "On", &cap, &rows)) return NULL;
    Images *im = PyCapsule_GetPointer(cap, "binlog.images");
    if (!im) return NULL;
    *held = absolute ? rows - im->handed : rows;
    if (*held < 0 || *held > im->rows) {
        PyErr_SetString(PyExc_ValueError, "rows outside the ones held");
        return NULL;
    }
    return im;
}

static PyObject *images_truncate(PyObject *self, PyObject *args) {
    Py_ssize_t held;
    Images *im = images_args(args, 1, &held);
    if (!im) return NULL;
    images_cut(im, held);
    Py_RETURN_NONE;
}

typedef struct { void *p[6]; } IMemory;    /* the buffers of one images_finish */

static void imemory_free(PyObject *capsule) {
    IMemory *m = PyCapsule_GetPointer(capsule, "binlog.images_memory");
    if (!m) return;
    for (int i = 0; i < 6; i++) PyMem_Free(m->p[i]);
    PyMem_Free(m);
}

/* The column's rows from `rows` on, copied into `to` (empty).  (Sizing its buffers like
 * the last batch's, to save the doublings from 8 KiB, measured no faster.) */
static int icol_carry(ICol *to, const ICol *from, Py_ssize_t rows) {
    Py_ssize_t held = from->offsets.len ? from->offsets.len / 4 - 1 : 0;
    for (Py_ssize_t r = rows; r < held; r++) {
        int valid = icol_valid(from, r);
        int32_t a = icol_offset(from, r), b = icol_offset(from, r + 1);
        if ((valid && put(&to->data, from->data.p + a, b - a) < 0) || icol_end(to, r - rows, valid) < 0)
            return -1;
    }
    return 0;
}

/* images_finish(builder, rows) -> (owner, before, after), each column (rows, nulls,
 * validity address, size, offsets address, size, data address, size) of the first
 * `rows` rows held, the memory owned by owner; the rows after them stay (the first of
 * the next batch's). */
static PyObject *images_finish(PyObject *self, PyObject *args) {
    Py_ssize_t rows;
    Images *im = images_args(args, 0, &rows);
    if (!im) return NULL;
    ICol next[2];
    memset(next, 0, sizeof next);
    IMemory *m = PyMem_Calloc(1, sizeof(IMemory));
    PyObject *owner = m ? PyCapsule_New(m, "binlog.images_memory", imemory_free) : NULL;
    if (!owner) {
        PyMem_Free(m);
        return PyErr_NoMemory();
    }
    for (int c = 0; c < 2; c++) {
        ICol *col = &im->col[c];
        if (icol_carry(&next[c], col, rows) < 0) goto fail;
        if (col->offsets.len == 0) {          /* no row yet: the one offset 0 */
            if (buf_grow(&col->offsets, 4) < 0) goto fail;
            memset(col->offsets.p, 0, 4);
            col->offsets.len = 4;
        }
        icol_cut(col, rows);
    }
    PyObject *out = Py_BuildValue(
        "N(nnnnnnnn)(nnnnnnnn)", owner,
        rows, im->col[0].nulls, (Py_ssize_t)im->col[0].validity.p, im->col[0].validity.len,
        (Py_ssize_t)im->col[0].offsets.p, im->col[0].offsets.len, (Py_ssize_t)im->col[0].data.p,
        im->col[0].data.len,
        rows, im->col[1].nulls, (Py_ssize_t)im->col[1].validity.p, im->col[1].validity.len,
        (Py_ssize_t)im->col[1].offsets.p, im->col[1].offsets.len, (Py_ssize_t)im->col[1].data.p,
        im->col[1].data.len);
    if (!out) {
        for (int c = 0; c < 2; c++) {
            PyMem_Free(next[c].data.p); PyMem_Free(next[c].offsets.p); PyMem_Free(next[c].validity.p);
        }
        return NULL;                          /* (owner released by N) */
    }
    for (int c = 0; c < 2; c++) {
        ICol *col = &im->col[c];
        m->p[3 * c] = col->data.p; m->p[3 * c + 1] = col->offsets.p; m->p[3 * c + 2] = col->validity.p;
        *col = next[c];
    }
    im->handed += rows;
    im->rows -= rows;
    return out;
fail:
    for (int c = 0; c < 2; c++) {
        PyMem_Free(next[c].data.p); PyMem_Free(next[c].offsets.p); PyMem_Free(next[c].validity.p);
    }
    Py_DECREF(owner);
    return NULL;
}

/* ---- encode_run: a run of rows events straight into JSON lines ---------------------- */


/* json_lines._prefix of one event: PREFIX (the file part, up to "pos":), the offset,
 * ,"ts":"<ISO 8601 UTC>","server_id":N, then the entry's rest (gtid, db, table, op,
 * "before":) - what orjson writes for that dict. */
static PyObject *event_head(PyObject *prefix, long long at, uint64_t ts, uint64_t server_id,
                            PyObject *rest) {
    char tmp[160];
    int n = udigits(tmp, (uint64_t)at, 1);
    memcpy(tmp + n, ",\"ts\":\"", 7);
    n += 7;
    long long y, m, d;
    civil((int64_t)(ts / 86400), &y, &m, &d);
    uint64_t rem = ts % 86400;
    int len = datetime_fmt(tmp + n, y, m, d, rem / 3600, rem / 60 % 60, rem % 60, 0, 0);
    tmp[n + 10] = 'T';                 /* iso_ts: %Y-%m-%dT%H:%M:%SZ */
    n += len;
    memcpy(tmp + n, "Z\",\"server_id\":", 15);
    n += 15;
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
    return put_rows(e, kind, w, wa, steps, psa, data_obj, head, mid, tail, last_start, count);
}

/* The text format's lines of one rows event before its rows (output/text.py
 * TextWriter.event): "# at N", then "#yymmdd hh:mm:ss server id S  end_log_pos P \t"
 * and the event's name (the entry's) ": table id T" [" flags: STMT_END_F"]. */
static int put_text_event(Enc *e, const Frame *f, const unsigned char *h, uint64_t table_id,
                          int stmt_end, PyObject *name) {
    char tmp[160];
    int n = 0;
    memcpy(tmp, "# at ", 5);
    n = 5 + udigits(tmp + 5, (uint64_t)f->at, 1);
    tmp[n++] = '\n';
    tmp[n++] = '#';
    uint64_t ts = (uint64_t)f->ts, rem = ts % 86400;
    long long y, m, d;
    civil((int64_t)(ts / 86400), &y, &m, &d);
    n += udigits(tmp + n, (uint64_t)(y % 100), 2);
    n += udigits(tmp + n, (uint64_t)m, 2);
    n += udigits(tmp + n, (uint64_t)d, 2);
    tmp[n++] = ' ';
    n += udigits(tmp + n, rem / 3600, 2);
    tmp[n++] = ':';
    n += udigits(tmp + n, rem / 60 % 60, 2);
    tmp[n++] = ':';
    n += udigits(tmp + n, rem % 60, 2);
    memcpy(tmp + n, " server id ", 11);
    n += 11;
    n += udigits(tmp + n, frame_le(h + 5, 4), 1);
    memcpy(tmp + n, "  end_log_pos ", 14);
    n += 14;
    n += udigits(tmp + n, (uint64_t)f->log_pos, 1);
    memcpy(tmp + n, " \t", 2);
    n += 2;
    PUT(tmp, n);
    if (put_bytes(&e->b, name) < 0) return -1;
    n = 0;
    memcpy(tmp, ": table id ", 11);
    n = 11 + udigits(tmp + 11, table_id, 1);
    if (stmt_end) {
        memcpy(tmp + n, " flags: STMT_END_F", 18);
        n += 18;
    }
    tmp[n++] = '\n';
    PUT(tmp, n);
    return 0;
}

/* binlog ingest's typed tables (typed_append, below) in a run: its entry's typed part */
static int typed_part_open(PyObject *part, long long ts);
static int typed_part_add(PyObject *part, int kind, const Walk *w, const Walk *wa,
                          const unsigned char *data, Py_ssize_t end, Py_ssize_t rows);

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
    if (event_walks(kind, PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2), steps,
                    PyTuple_GET_ITEM(entry, 4), &w, &wa, &psa) < 0)
        return -1;
    Py_ssize_t held = im->rows, bytes = im->col[0].data.len + im->col[1].data.len;
    Buf own = e->b;                 /* (image_rows points e->b at the columns' buffers) */
    e->render = PyTuple_GET_ITEM(entry, 7);
    int rc = image_rows(im, e, kind, w, wa, steps, psa, data_obj);
    e->b = own;
    *count = im->rows - held;
    if (rc == 0 && typed != Py_None)
        rc = typed_part_add(typed, kind, w, wa, (const unsigned char *)PyBytes_AS_STRING(data_obj),
                            PyBytes_GET_SIZE(data_obj), *count);
    if (rc < 0) {
        images_cut(im, held);
        return -1;
    }
    *first = im->handed + held;
    *written = im->col[0].data.len + im->col[1].data.len - bytes;
    return 0;
}

/* encode_run(buf, pos, end, offset, widths, common_header_len, checksum_len, entries,
 *            prefix, tail, flags, stop_ts, stop_offset, last_log_pos, chain_run,
 *            strict_chain, verify_crc, max_event, max_out) */
static PyObject *encode_run(PyObject *self, PyObject *args) {
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
        if (ingest && PyTuple_GET_ITEM(entry, 8) != Py_None && !typed_part_open(PyTuple_GET_ITEM(entry, 8), f.ts))
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
static PyObject *checksum_rows(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after, *crc_update;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!O", &PyBytes_Type, &data_obj, &kind, &cap, &cap_after,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &crc_update))
        return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    Enc e = {{0}, 0, 0, 0, NULL, 1, crc_update};
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < end) {
        Py_ssize_t start = pos;
        uint32_t before, after;
        PyObject *item;
        if ((kind != 0 && crc_image(&e, w, steps, data_obj, data, &pos, end, &before) < 0)
            || (kind != 2 && crc_image(&e, wa, psa, data_obj, data, &pos, end, &after) < 0)
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
    return fall_back();
}

/* ---- verify-rows: checksums of a target's rows, from the text protocol's values ------ */

/* [-]digits as checksum._u64(int(text)) gives it (two's complement); -1: not that. */
static int text_u64(const char *p, Py_ssize_t n, uint64_t *out) {
    int neg = n > 0 && p[0] == '-';
    Py_ssize_t i = neg;
    uint64_t v = 0;
    if (i == n) return -1;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (uint64_t)0 - v : v;       /* int(text) & (2**64 - 1), as _u64 */
    return 0;
}

/* A double's text (float(text)'s value: strtod rounds correctly as CPython does); -1 for
 * anything but plain digits, sign, point and exponent, or a non-finite value. */
static int text_double(const char *p, Py_ssize_t n, uint64_t *bits) {
    char tmp[64];
    if (n == 0 || n >= (Py_ssize_t)sizeof tmp) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
            return -1;
    }
    memcpy(tmp, p, n);
    tmp[n] = 0;
    char *end;
    double d = strtod(tmp, &end);
    if (end != tmp + n || !isfinite(d)) return -1;
    memcpy(bits, &d, 8);
    return 0;
}

/* A DECIMAL's text as checksum._decimal_text(Decimal(text)) writes it: the server's
 * [-]digits[.digits] as it is, a negative zero without its sign; -1: another form. */
static int crc_decimal_text(uint32_t *crc, const char *p, Py_ssize_t n) {
    Py_ssize_t i = p[0] == '-', digits = 0, point = -1;
    int nonzero = 0;
    if (n == 0 || i == n) return -1;
    for (Py_ssize_t k = i; k < n; k++) {
        if (p[k] == '.' && point < 0 && digits > 0) { point = k; continue; }
        if (p[k] < '0' || p[k] > '9') return -1;
        nonzero |= p[k] != '0';
        digits++;
    }
    Py_ssize_t int_digits = (point < 0 ? n : point) - i;
    if (point == n - 1 || (int_digits > 1 && p[i] == '0')) return -1;   /* Decimal would differ */
    if (i && !nonzero) { p++; n--; }
    crc_add(crc, (const unsigned char *)p, n);
    return 0;
}

/* checksum_text(row, codes) -> the TiCDC checksum of a row read by the text protocol
 * (verify-rows' SELECT: a tuple of bytes or None), each column by its code:
 *   i integer/YEAR/ENUM+0/SET+0 text, f DOUBLE text, d DECIMAL text, B BIT bytes (big
 *   endian), a ASCII text (temporals), u UTF-8 text (JSON), b bytes as they are, s none;
 * Fallback for any value of another form (commands/verify.py's Python path decides). */
static PyObject *checksum_text(PyObject *self, PyObject *args) {
    PyObject *row;
    const char *codes;
    Py_ssize_t ncodes;
    if (!PyArg_ParseTuple(args, "O!y#", &PyTuple_Type, &row, &codes, &ncodes)) return NULL;
    if (PyTuple_GET_SIZE(row) != ncodes) {
        PyErr_SetString(PyExc_ValueError, "codes do not match the row");
        return NULL;
    }
    uint32_t crc = 0;
    for (Py_ssize_t i = 0; i < ncodes; i++) {
        PyObject *v = PyTuple_GET_ITEM(row, i);
        if (v == Py_None || codes[i] == 's') continue;
        if (!PyBytes_Check(v)) goto fallback;
        const char *p = PyBytes_AS_STRING(v);
        Py_ssize_t n = PyBytes_GET_SIZE(v);
        uint64_t u;
        switch (codes[i]) {
        case 'i':
            if (text_u64(p, n, &u) < 0) goto fallback;
            crc_u64(&crc, u);
            break;
        case 'f':
            if (text_double(p, n, &u) < 0) goto fallback;
            crc_u64(&crc, u);
            break;
        case 'd':
            if (crc_decimal_text(&crc, p, n) < 0) goto fallback;
            break;
        case 'B':
            if (n > 8) goto fallback;
            crc_u64(&crc, be((const unsigned char *)p, (int)n));
            break;
        case 'a':
            for (Py_ssize_t k = 0; k < n; k++) if ((unsigned char)p[k] >= 0x80) goto fallback;
            crc_add(&crc, (const unsigned char *)p, n);
            break;
        case 'u':
            if (!utf8_valid((const unsigned char *)p, n)) goto fallback;
            crc_add(&crc, (const unsigned char *)p, n);
            break;
        case 'b':
            crc_add(&crc, (const unsigned char *)p, n);
            break;
        default:
            goto fallback;
        }
    }
    return PyLong_FromUnsignedLong(crc);
fallback:
    return fall_back();
}

/* The command line's process only (never a library user's: Spark, an API caller): glibc
   hands each multi-megabyte output or chunk buffer back to the kernel when it is freed
   (mmap above M_MMAP_THRESHOLD, the heap's top trimmed above M_TRIM_THRESHOLD), so every
   run faults its pages in afresh, ~70,000 page faults (0.1-0.15 s of system time) for a
   200 MB JSON dump.  Kept in the heap, they are reused.  Fixed values also turn off
   glibc's own threshold tuning (mallopt(3)); allocations above 16 MiB still get their own
   mapping.  False where there is no glibc. */
static PyObject *
tune_allocator(PyObject *self, PyObject *noargs)
{
#ifdef __GLIBC__
    if (mallopt(M_MMAP_THRESHOLD, 16 << 20) && mallopt(M_TRIM_THRESHOLD, 32 << 20))
        Py_RETURN_TRUE;
#endif
    Py_RETURN_FALSE;
}

/* ---- typed_append: the typed tables' Arrow columns from the row images ------------------
 *
 * spark_ingest/arrow_columns.py: the typed per-table output (spark_ingest/arrow_typed.py)
 * without a Python object per value.  A builder holds the Arrow buffers of a table's
 * columns (validity bitmap, values or offsets + data), the after image's columns then
 * the before image's (the _before struct); typed_append adds the rows of one rows event,
 * typed_finish hands the buffers over as bytearrays (pyarrow wraps them without a copy).
 * Each value is what arrow_typed's steps give for it (rendered as binlog dump renders it,
 * read back as Spark's try_cast reads it): an integer out of its column's range, a zero
 * or impossible date, a zero TIMESTAMP are NULL.  Which column kinds go to which Arrow
 * types is decided in Python (arrow_columns.column_map); anything else here is Fallback,
 * and the event's rows are taken back out. */

enum { A_INT8 = 1, A_INT16, A_INT32, A_INT64, A_FLOAT32, A_FLOAT64, A_DATE32, A_TIMESTAMP,
       A_DECIMAL128, A_STRING, A_BINARY, A_COUNT };
static const int A_WIDTH[A_COUNT] = {[A_INT8] = 1, [A_INT16] = 2, [A_INT32] = 4, [A_INT64] = 8,
                                     [A_FLOAT32] = 4, [A_FLOAT64] = 8, [A_DATE32] = 4,
                                     [A_TIMESTAMP] = 8, [A_DECIMAL128] = 16};

/* Rows a column's buffers are reserved for at once: the stores of a row then check
 * nothing but a string's bytes. */
#define A_CHUNK 64

/* A bytearray filled up to len; p and cap: its bytes and size, kept with it. */
typedef struct { PyObject *ba; unsigned char *p; Py_ssize_t len, cap; } ABuf;

typedef struct {
    int type, precision, scale;
    int width;                  /* bytes per row in values: A_WIDTH, or 4 (an offset) */
    int var;                    /* STRING/BINARY: int32 offsets in values, bytes in data */
    __int128 hi;                /* an integer column's largest value (lowest: -hi - 1) */
    __int128 limit, scaler;     /* DECIMAL128: 10^(precision - scale), 10^scale */
    Py_ssize_t rows, nulls;
    /* validity.len: the bytes cleared so far, at least (rows + 7) / 8: a valid row sets
     * its bit, a NULL leaves it 0 */
    ABuf validity, values, data;
} ACol;

typedef struct {
    Py_ssize_t count;                 /* 2 * the table's columns: after image, then before */
    ACol *cols;
} Builder;

static int abuf_grow(ABuf *b, Py_ssize_t n) {
    if (!b->ba && !(b->ba = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
    if (n > PY_SSIZE_T_MAX / 4 - b->len) { PyErr_NoMemory(); return -1; }
    Py_ssize_t want = b->cap ? b->cap : 4096;
    while (want - b->len < n) want *= 2;
    if (PyByteArray_Resize(b->ba, want) < 0) return -1;
    b->p = (unsigned char *)PyByteArray_AS_STRING(b->ba);
    b->cap = want;
    return 0;
}

static inline int abuf_reserve(ABuf *b, Py_ssize_t n) {
    return b->cap - b->len >= n ? 0 : abuf_grow(b, n);
}

static void builder_free(PyObject *capsule) {
    Builder *b = PyCapsule_GetPointer(capsule, "binlog.arrow_builder");
    if (!b) return;
    for (Py_ssize_t i = 0; i < b->count; i++) {
        Py_XDECREF(b->cols[i].validity.ba); Py_XDECREF(b->cols[i].values.ba);
        Py_XDECREF(b->cols[i].data.ba);
    }
    PyMem_Free(b->cols);
    PyMem_Free(b);
}

static __int128 pow10_128(int n) {
    __int128 v = 1;
    while (n-- > 0) v *= 10;
    return v;
}

/* typed_builder(((type, precision, scale), ...)) -> builder: the column types of the
 * after image's columns, then of the before image's. */
static PyObject *typed_builder(PyObject *self, PyObject *args) {
    PyObject *types;
    if (!PyArg_ParseTuple(args, "O!", &PyTuple_Type, &types)) return NULL;
    Builder *b = PyMem_Calloc(1, sizeof(Builder));
    if (!b) return PyErr_NoMemory();
    b->count = PyTuple_GET_SIZE(types);
    b->cols = PyMem_Calloc(b->count ? b->count : 1, sizeof(ACol));
    PyObject *cap = b->cols ? PyCapsule_New(b, "binlog.arrow_builder", builder_free) : NULL;
    if (!cap) {
        PyMem_Free(b->cols);
        PyMem_Free(b);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < b->count; i++) {
        ACol *c = &b->cols[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(types, i), "iii", &c->type, &c->precision, &c->scale)) {
            Py_DECREF(cap);
            return NULL;
        }
        if (c->type < A_INT8 || c->type >= A_COUNT || (c->type == A_DECIMAL128 &&
                !(c->precision > 0 && c->precision <= 38 && c->scale >= 0 && c->scale <= c->precision))) {
            Py_DECREF(cap);
            PyErr_SetString(PyExc_ValueError, "unknown Arrow column type");
            return NULL;
        }
        c->var = c->type == A_STRING || c->type == A_BINARY;
        c->width = c->var ? 4 : A_WIDTH[c->type];
        if (c->type <= A_INT64) c->hi = ((__int128)1 << (8 * c->width - 1)) - 1;
        if (c->type == A_DECIMAL128) {
            c->limit = pow10_128(c->precision - c->scale);
            c->scaler = pow10_128(c->scale);
        }
    }
    return cap;
}

/* Room in c's validity and values for n more rows (the cleared validity bytes grow). */
static int acol_room(ACol *c, Py_ssize_t n) {
    Py_ssize_t bytes = (c->rows + n + 7) >> 3;
    if (bytes > c->validity.len) {
        if (abuf_reserve(&c->validity, bytes - c->validity.len) < 0) return -1;
        memset(c->validity.p + c->validity.len, 0, bytes - c->validity.len);
        c->validity.len = bytes;
    }
    int first = c->var && c->values.len == 0;      /* the first value's start, 0 */
    if (abuf_reserve(&c->values, n * c->width + 4 * first) < 0) return -1;
    if (first) {
        memset(c->values.p, 0, 4);
        c->values.len = 4;
    }
    return 0;
}

/* The stores of one row's value: within the room acol_room made. */
static inline void acol_valid(ACol *c) {
    c->validity.p[c->rows >> 3] |= (unsigned char)(1u << (c->rows & 7));
    c->rows++;
}

static inline void acol_offset(ACol *c) {
    int32_t off = (int32_t)c->data.len;
    memcpy(c->values.p + c->values.len, &off, 4);
    c->values.len += 4;
}

/* A NULL: its bit left 0, a zeroed value (or the offset repeated). */
static inline void acol_null(ACol *c) {
    if (c->var) acol_offset(c);
    else {
        memset(c->values.p + c->values.len, 0, c->width);
        c->values.len += c->width;
    }
    c->rows++;
    c->nulls++;
}

/* n NULLs (the image an insert or a delete does not have), their room included. */
static int acol_nulls(ACol *c, Py_ssize_t n) {
    if (acol_room(c, n) < 0) return -1;
    if (c->var)
        for (Py_ssize_t k = 0; k < n; k++) acol_offset(c);
    else {
        memset(c->values.p + c->values.len, 0, n * c->width);
        c->values.len += n * c->width;
    }
    c->rows += n;
    c->nulls += n;
    return 0;
}

#define ACOL_STORE(name, ctype)                                 \
    static inline void name(ACol *c, ctype v) {                \
        memcpy(c->values.p + c->values.len, &v, sizeof v);     \
        c->values.len += sizeof v;                             \
        acol_valid(c);                                         \
    }
ACOL_STORE(acol_i8, int8_t)
ACOL_STORE(acol_i16, int16_t)
ACOL_STORE(acol_i32, int32_t)
ACOL_STORE(acol_i64, int64_t)
ACOL_STORE(acol_f32, float)
ACOL_STORE(acol_f64, double)

/* A decimal128 (little-endian two's complement, as Arrow and the host hold it) stored as
 * its two 64-bit halves: a 16-byte copy of a value built in two registers would load it
 * back from the stack at once, a store-forwarding stall per value. */
static inline void acol_i128(ACol *c, __int128 v) {
    uint64_t lo = (uint64_t)v, hi = (uint64_t)((unsigned __int128)v >> 64);
    unsigned char *d = c->values.p + c->values.len;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy(d, &hi, 8);
    memcpy(d + 8, &lo, 8);
#else
    memcpy(d, &lo, 8);
    memcpy(d + 8, &hi, 8);
#endif
    c->values.len += 16;
    acol_valid(c);
}

static int acol_bytes(ACol *c, const unsigned char *p, Py_ssize_t n) {
    if (n > INT32_MAX - c->data.len) return -1;     /* the caller writes smaller row groups */
    if (abuf_reserve(&c->data, n) < 0) return -1;
    if (n) memcpy(c->data.p + c->data.len, p, n);
    c->data.len += n;
    acol_offset(c);
    acol_valid(c);
    return 0;
}

/* An integer into an integer column (NULL out of its range), a DECIMAL column (NULL past
 * its integer digits) or a STRING column (its digits). */
static int acol_int(ACol *c, const IntValue *x) {
    __int128 v = x->is_u ? (__int128)x->u : (__int128)x->i;
    switch (c->type) {
    case A_INT8: case A_INT16: case A_INT32: case A_INT64:
        if (v > c->hi || v < -c->hi - 1) acol_null(c);
        else if (c->width == 8) acol_i64(c, (int64_t)v);
        else if (c->width == 4) acol_i32(c, (int32_t)v);
        else if (c->width == 2) acol_i16(c, (int16_t)v);
        else acol_i8(c, (int8_t)v);
        return 0;
    case A_DECIMAL128:
        if (v >= c->limit || -v >= c->limit) acol_null(c);
        else acol_i128(c, v * c->scaler);
        return 0;
    case A_STRING: {
        char text[24];
        int len = x->is_u ? snprintf(text, sizeof text, "%llu", (unsigned long long)x->u)
                          : snprintf(text, sizeof text, "%lld", (long long)x->i);
        return acol_bytes(c, (const unsigned char *)text, len);
    }
    default: return -1;
    }
}

/* Days since 1970-01-01 of a proleptic Gregorian date (arrow_typed._days); 0: invalid. */
static int civil_days(long long y, long long m, long long d, int64_t *days) {
    static const int MDAYS[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > 31) return 0;
    int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (d > (m == 2 ? 28 + leap : MDAYS[m])) return 0;
    long long yy = y - (m <= 2);
    long long era = (yy >= 0 ? yy : yy - 399) / 400;
    long long yoe = yy - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *days = era * 146097 + doe - 719468;
    return 1;
}

/* A temporal value into a DATE32 / TIMESTAMP column, as its text read back (the shown
 * digits of the fraction), or into a STRING column as its text. */
static int acol_temporal(ACol *c, const Temporal *t) {
    if (c->type == A_STRING) {
        char buf[96];
        return acol_bytes(c, (const unsigned char *)buf, temporal_fmt(buf, t));
    }
    int64_t days, usec = t->frac ? t->usec / DIV[t->frac] * DIV[t->frac] : 0;
    if (c->type == A_DATE32 && t->form == 'D') {
        if (!civil_days(t->year, (long long)t->month, (long long)t->day, &days)) acol_null(c);
        else acol_i32(c, (int32_t)days);
        return 0;
    }
    if (c->type != A_TIMESTAMP) return -1;
    if (t->form == 'S') {
        if (t->epoch == 0 && t->usec == 0) acol_null(c);     /* 0000-00-00 00:00:00 */
        else acol_i64(c, (int64_t)t->epoch * 1000000 + usec);
        return 0;
    }
    if (t->form != 'C') return -1;
    if (!civil_days(t->year, (long long)t->month, (long long)t->day, &days) || t->hour > 23 ||
        t->minute > 59 || t->second > 59)
        acol_null(c);
    else
        acol_i64(c, (days * 86400 + (int64_t)(t->hour * 3600 + t->minute * 60 + t->second))
                    * 1000000 + usec);
    return 0;
}

/* A DECIMAL(precision <= 38, scale)'s unscaled value straight from its bytes: the digits
 * decimal_fmt writes, read as one integer (strings/decimal.c bin2decimal: the first
 * byte's top bit flipped, every byte inverted when negative, then big-endian groups of
 * up to 9 digits, DIG2BYTES of a partial group, the integer part's partial group first,
 * the fraction's last).  -1 where decimal_fmt gives -1 (a group past its digits); a
 * negative zero is 0, as its text "0.00" reads back. */
static int decimal_int128(const unsigned char *p, int precision, int scale, __int128 *out) {
    if (precision > 38) return -1;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    unsigned char raw[40];
    int negative;
    if (decimal_unsigned(p, precision, scale, raw, &negative) < 0) return -1;
    __int128 v = 0;
    int off = 0;
    if (intg0x) {
        uint32_t g = (uint32_t)be(raw, DIG2BYTES[intg0x]);
        off += DIG2BYTES[intg0x];
        if (g >= POW10[intg0x]) return -1;
        v = g;
    }
    for (int i = 0; i < intg0 + frac0; i++) {
        uint32_t g = (uint32_t)be(raw + off, 4);
        off += 4;
        if (g >= POW10[9]) return -1;
        v = v * POW10[9] + g;
    }
    if (frac0x) {
        uint32_t g = (uint32_t)be(raw + off, DIG2BYTES[frac0x]);
        if (g >= POW10[frac0x]) return -1;
        v = v * POW10[frac0x] + g;
    }
    *out = negative ? -v : v;
    return 0;
}

/* A DECIMAL value (``size`` bytes at p) into a DECIMAL column of the same precision and
 * scale (the unscaled digits) or into a STRING column (its text). */
static int acol_decimal(ACol *c, const Step *s, const unsigned char *p) {
    if (c->type == A_STRING) {
        char text[160];
        int size, len = decimal_fmt(text, p, s->precision, s->scale, &size);
        return len < 0 ? -1 : acol_bytes(c, (const unsigned char *)text, len);
    }
    if (c->type != A_DECIMAL128 || c->precision != s->precision || c->scale != s->scale) return -1;
    __int128 v;
    if (decimal_int128(p, s->precision, s->scale, &v) < 0) return -1;
    acol_i128(c, v);
    return 0;
}

/* A text or binary value: a STRING column takes valid UTF-8 of a utf-8 column, a BINARY
 * column the bytes of a binary one (a BINARY(N) padded back to N bytes). */
static int acol_string(ACol *c, const Step *s, const unsigned char *p, Py_ssize_t len) {
    if (s->raw) return -1;
    if (c->type == A_STRING) {
        if (!s->utf8 || !utf8_valid(p, len)) return -1;
        return acol_bytes(c, p, len);
    }
    if (c->type != A_BINARY || s->encoding) return -1;
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &len, &owned);
    if (!v) return -1;
    int rc = acol_bytes(c, v, len);
    PyMem_Free(owned);
    return rc;
}

/* An ENUM into a STRING column: its label ('' for 0), or its number without labels. */
static int acol_enum(ACol *c, const Step *s, long idx) {
    if (c->type != A_STRING) return -1;
    if (!s->labels) {
        IntValue x = {0, idx, 0};
        return acol_int(c, &x);
    }
    if (idx == 0) return acol_bytes(c, (const unsigned char *)"", 0);
    Py_ssize_t n;
    const char *label = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(s->labels, idx - 1), &n);
    return label ? acol_bytes(c, (const unsigned char *)label, n) : -1;
}

/* One value of step s at p into column c (NULL: only walked past); the bytes it took,
 * or -1.  Inlined into typed_image's loop: no call per value. */
LAYOUT Py_ssize_t typed_value(ACol *c, const Step *s, const unsigned char *p, Py_ssize_t avail) {
    int rc = 0;
    if (s->kind == K_DECIMAL) {
        int size = decimal_size(s, avail);
        if (size < 0) return -1;
        if (c) rc = acol_decimal(c, s, p);
        return rc < 0 ? -1 : size;
    }
    Unpacked u;
    switch (unpack(s, p, avail, &u)) {
    case U_INT: case U_YEAR: case U_BIT:
        if (c) rc = acol_int(c, &u.x);
        break;
    case U_REAL:
        if (!c) break;
        if (c->type == A_FLOAT64) acol_f64(c, u.d);
        else if (c->type == A_FLOAT32 && s->kind == K_FLOAT) acol_f32(c, (float)u.d);
        else rc = -1;
        break;
    case U_TEMPORAL:
        if (c) rc = acol_temporal(c, &u.t);
        break;
    case U_STRING:
        if (c) rc = acol_string(c, s, u.span.p, u.span.len);
        break;
    case U_ENUM:
        if (c) rc = acol_enum(c, s, u.idx);
        break;
    default:
        return -1;          /* U_PY (column_map leaves such walks to Python), or a bad value */
    }
    return rc < 0 ? -1 : u.size;
}

/* The pairs of a kind and a column type whose value is stored without unpack's shapes
 * (typed_fast), chosen once per event; T_GENERIC: typed_value. */
enum { T_GENERIC, T_INT8, T_INT32, T_INT64, T_FLOAT64, T_DECIMAL, T_UTF8 };

static unsigned char typed_op(const Step *s, const ACol *c) {
    if (!c) return T_GENERIC;
    switch (s->kind) {
    case K_TINY: return !s->is_unsigned && s->width == 1 && c->type == A_INT8 ? T_INT8 : T_GENERIC;
    case K_LONG: return !s->is_unsigned && s->width == 4 && c->type == A_INT32 ? T_INT32 : T_GENERIC;
    case K_LONGLONG:
        return !s->is_unsigned && s->width == 8 && c->type == A_INT64 ? T_INT64 : T_GENERIC;
    case K_DOUBLE: return s->width == 8 && c->type == A_FLOAT64 ? T_FLOAT64 : T_GENERIC;
    case K_DECIMAL:
        return c->type == A_DECIMAL128 && c->precision == s->precision && c->scale == s->scale &&
               s->width == decimal_bin_size(s->precision, s->scale) ? T_DECIMAL : T_GENERIC;
    case K_VARCHAR: case K_STRING: case K_BLOB:
        return c->type == A_STRING && s->utf8 && !s->raw && s->width >= 1 && s->width <= 4
               ? T_UTF8 : T_GENERIC;
    default: return T_GENERIC;
    }
}

/* n = 4 or 8 little-endian bytes: one load on a little-endian host (le() reads byte by
 * byte for any n). */
LAYOUT uint64_t le_word(const unsigned char *p, int n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 4) { uint32_t v; memcpy(&v, p, 4); return v; }
    if (n == 8) { uint64_t v; memcpy(&v, p, 8); return v; }
#endif
    return le(p, n);
}

/* typed_value for the pairs typed_op picked: the same value, without unpack's shape and
 * the column type's switch.  The bytes it took, or -1. */
LAYOUT Py_ssize_t typed_fast(int op, ACol *c, const Step *s, const unsigned char *p, Py_ssize_t avail) {
    if (op != T_GENERIC && avail < s->width) return -1;
    switch (op) {
    case T_INT8: acol_i8(c, (int8_t)p[0]); return 1;
    case T_INT32: acol_i32(c, (int32_t)le_word(p, 4)); return 4;
    case T_INT64: acol_i64(c, (int64_t)le_word(p, 8)); return 8;
    case T_FLOAT64: {
        uint64_t bits = le_word(p, 8);
        double d;
        memcpy(&d, &bits, 8);
        acol_f64(c, d);
        return 8;
    }
    case T_DECIMAL: {
        __int128 v;
        if (decimal_int128(p, s->precision, s->scale, &v) < 0) return -1;
        acol_i128(c, v);
        return s->width;
    }
    case T_UTF8: {      /* unpack_varchar / unpack_blob, then acol_string */
        Py_ssize_t len = s->width == 1 ? p[0] : s->width == 2 ? p[0] | p[1] << 8
                                                              : (Py_ssize_t)le(p, (int)s->width);
        if (s->kind != K_BLOB && s->length && len > s->length) return -1;
        if (avail - s->width < len || !utf8_valid(p + s->width, len)) return -1;
        return acol_bytes(c, p + s->width, len) < 0 ? -1 : s->width + len;
    }
    default: return typed_value(c, s, p, avail);
    }
}

/* A walk's steps with the column each fills (NULL: none) and how (typed_op), and the
 * columns no step fills (a NULL in every row): resolved once per event from the column
 * map. */
typedef struct {
    const Walk *w;
    ACol **cols;            /* per step */
    ACol **missing;
    Py_ssize_t nmissing;
    unsigned char *ops;     /* per step */
} TWalk;

/* -1 (Fallback) when map names a column twice or one past the table's. */
static int twalk_init(TWalk *t, const Walk *w, const int32_t *map, ACol *cols, Py_ssize_t ncols) {
    t->w = w;
    t->nmissing = 0;
    t->cols = PyMem_Malloc((w->count + ncols + 1) * sizeof(ACol *) + w->count);
    unsigned char *filled = PyMem_Calloc(ncols + 1, 1);
    if (!t->cols || !filled) {
        PyMem_Free(t->cols);
        PyMem_Free(filled);
        t->cols = NULL;
        PyErr_NoMemory();
        return -1;
    }
    t->missing = t->cols + w->count;
    t->ops = (unsigned char *)(t->missing + ncols + 1);
    int rc = 0;
    for (Py_ssize_t i = 0; i < w->count && rc == 0; i++) {
        int32_t target = map[i];
        t->cols[i] = NULL;
        if (target >= ncols || (target >= 0 && filled[target])) rc = -1;
        else if (target >= 0) {
            t->cols[i] = &cols[target];
            filled[target] = 1;
        }
        t->ops[i] = typed_op(&w->steps[i], t->cols[i]);
    }
    for (Py_ssize_t k = 0; k < ncols; k++)
        if (!filled[k]) t->missing[t->nmissing++] = &cols[k];
    PyMem_Free(filled);
    return rc;
}

/* One row image along t (each column's room reserved); -1: Fallback. */
static int typed_image(const TWalk *t, const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end) {
    const Walk *w = t->w;
    Py_ssize_t pos = *ppos;
    if (end - pos < w->nbytes) return -1;
    const unsigned char *nulls = data + pos;
    pos += w->nbytes;
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const Step *s = &w->steps[i];
        ACol *c = t->cols[i];
        if (nulls[s->null_byte] & s->null_mask) {
            if (c) acol_null(c);
        } else {
            Py_ssize_t took = typed_fast(t->ops[i], c, s, data + pos, end - pos);
            if (took < 0) return -1;
            pos += took;
        }
    }
    for (Py_ssize_t k = 0; k < t->nmissing; k++) acol_null(t->missing[k]);
    *ppos = pos;
    return 0;
}

/* Every column back to n rows (an event that fell back leaves no row behind). */
typedef struct { Py_ssize_t rows, nulls, values, data; } AMark;

static void acol_rewind(ACol *c, const AMark *m) {
    Py_ssize_t byte = m->rows >> 3;
    if (byte < c->validity.len) {     /* the bits past the mark cleared again */
        c->validity.p[byte] &= (unsigned char)((1u << (m->rows & 7)) - 1);
        memset(c->validity.p + byte + 1, 0, c->validity.len - byte - 1);
    }
    c->rows = m->rows;
    c->nulls = m->nulls;
    c->values.len = m->values;
    c->data.len = m->data;
}

static int map_of(PyObject *obj, const Walk *w, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) return -1;
    if (view->len != w->count * (Py_ssize_t)sizeof(int32_t)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "the column map does not fit the walk");
        return -1;
    }
    return 0;
}

static int cols_room(ACol *cols, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++)
        if (acol_room(&cols[k], A_CHUNK) < 0) return -1;
    return 0;
}

/* The rows: an update's before image into the before columns and its after image into
 * the after columns; an insert's after image (a delete's before image) into the after
 * columns, the before columns NULL. */
static int typed_rows(Builder *b, int kind, const TWalk *t, const TWalk *ta,
                      const unsigned char *data, Py_ssize_t end, Py_ssize_t *count) {
    Py_ssize_t ncols = b->count / 2, pos = 0, room = 0;
    ACol *before = b->cols + ncols;
    /* an update fills both halves row by row, the others the after half */
    Py_ssize_t walked = kind == 1 ? b->count : ncols;
    while (pos < end) {
        if (room == 0) {
            if (cols_room(b->cols, walked) < 0) return -1;
            room = A_CHUNK;
        }
        if (typed_image(t, data, &pos, end) < 0) return -1;
        if (kind == 1 && typed_image(ta, data, &pos, end) < 0) return -1;
        room--;
        (*count)++;
    }
    if (kind != 1)
        for (Py_ssize_t k = 0; k < ncols; k++)
            if (acol_nulls(&before[k], *count) < 0) return -1;
    return 0;
}

/* The rows of one event (data[0:end]) into the builder's columns, every column rewound
 * when any value is not taken or, with expect >= 0, when they are not that many rows
 * (-1, the error of Fallback's kind set or not). */
static int typed_event(Builder *b, int kind, const Walk *w, const Walk *wa, const int32_t *map,
                       const int32_t *map_after, const unsigned char *data, Py_ssize_t end,
                       Py_ssize_t expect, Py_ssize_t *count) {
    Py_ssize_t ncols = b->count / 2;
    if (end && !w->nbytes && (kind != 1 || !wa->nbytes)) return -1;   /* no column: no progress */
    if (!end) return expect > 0 ? -1 : 0;      /* no row */
    /* an update's before image goes to the before columns, any other image to the after ones */
    TWalk t = {0}, ta = {0};
    AMark *marks = PyMem_Malloc((b->count ? b->count : 1) * sizeof(AMark));
    int rc = marks ? 0 : -1;
    if (!marks) PyErr_NoMemory();
    if (rc == 0) rc = twalk_init(&t, w, map, kind == 1 ? b->cols + ncols : b->cols, ncols);
    if (rc == 0 && kind == 1) rc = twalk_init(&ta, wa, map_after, b->cols, ncols);
    if (rc == 0) {
        for (Py_ssize_t k = 0; k < b->count; k++) {
            ACol *c = &b->cols[k];
            marks[k] = (AMark){c->rows, c->nulls, c->values.len, c->data.len};
        }
        rc = typed_rows(b, kind, &t, &ta, data, end, count);
        if (rc == 0 && expect >= 0 && *count != expect) rc = -1;
        if (rc < 0)
            for (Py_ssize_t k = 0; k < b->count; k++) acol_rewind(&b->cols[k], &marks[k]);
    }
    PyMem_Free(t.cols);
    PyMem_Free(ta.cols);
    PyMem_Free(marks);
    return rc;
}

/* typed_append(builder, data, kind, walk, walk_after, map, map_after) -> rows
 * kind 0 insert, 1 update, 2 delete; map: int32 per step of walk, its column or -1. */
static PyObject *typed_append(PyObject *self, PyObject *args) {
    PyObject *cap, *data_obj, *wcap, *wacap, *map_obj, *map_after_obj;
    int kind;
    if (!PyArg_ParseTuple(args, "OO!iOOOO", &cap, &PyBytes_Type, &data_obj, &kind, &wcap, &wacap,
                          &map_obj, &map_after_obj))
        return NULL;
    Builder *b = PyCapsule_GetPointer(cap, "binlog.arrow_builder");
    const Walk *w = PyCapsule_GetPointer(wcap, "binlog.walk");
    const Walk *wa = PyCapsule_GetPointer(wacap, "binlog.walk");
    if (!b || !w || !wa) return NULL;
    if (kind < 0 || kind > 2) { PyErr_SetString(PyExc_ValueError, "kind is 0, 1 or 2"); return NULL; }
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t end = PyBytes_GET_SIZE(data_obj), count = 0;
    Py_buffer mv, mav;
    if (map_of(map_obj, w, &mv) < 0) return NULL;
    if (map_of(map_after_obj, wa, &mav) < 0) { PyBuffer_Release(&mv); return NULL; }
    int rc = typed_event(b, kind, w, wa, mv.buf, mav.buf, data, end, -1, &count);
    PyBuffer_Release(&mv);
    PyBuffer_Release(&mav);
    if (rc < 0) return fall_back();
    return PyLong_FromSsize_t(count);
}

static Py_ssize_t builder_size(const Builder *b);

/* A typed part of an ingest run's entry (arrow_columns.ArrowRows.run_part): (builder,
 * map, map_after, day_start, day_end, alive, max_rows, max_bytes).  1 when it takes an
 * event of timestamp ts now: its table is still the one being filled (alive[0], cleared
 * when its rows are handed over), ts falls on its UTC day, and it holds fewer rows and
 * bytes than a row group (the caller writes the group, then the next event starts a new
 * table); 0 when not (the run ends before the event). */
static int typed_part_open(PyObject *part, long long ts) {
    if (!PyTuple_Check(part) || PyTuple_GET_SIZE(part) != 8) return 0;
    Builder *b = PyCapsule_GetPointer(PyTuple_GET_ITEM(part, 0), "binlog.arrow_builder");
    PyObject *alive = PyTuple_GET_ITEM(part, 5);
    if (!b || !PyByteArray_Check(alive) || PyByteArray_GET_SIZE(alive) != 1
        || PyByteArray_AS_STRING(alive)[0] != 1) { PyErr_Clear(); return 0; }
    long long lo = PyLong_AsLongLong(PyTuple_GET_ITEM(part, 3));
    long long hi = PyLong_AsLongLong(PyTuple_GET_ITEM(part, 4));
    Py_ssize_t max_rows = PyLong_AsSsize_t(PyTuple_GET_ITEM(part, 6));
    Py_ssize_t max_bytes = PyLong_AsSsize_t(PyTuple_GET_ITEM(part, 7));
    if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
    Py_ssize_t rows = b->count ? b->cols[0].rows : 0;
    return ts >= lo && ts < hi && rows < max_rows && builder_size(b) < max_bytes;
}

/* The event's rows into the typed part's builder (typed_event): 0, or -1 (rewound) when
 * any value is not taken or they are not ``rows`` rows (the images' count). */
static int typed_part_add(PyObject *part, int kind, const Walk *w, const Walk *wa,
                          const unsigned char *data, Py_ssize_t end, Py_ssize_t rows) {
    Builder *b = PyCapsule_GetPointer(PyTuple_GET_ITEM(part, 0), "binlog.arrow_builder");
    if (!b) return -1;
    Py_buffer mv, mav;
    if (map_of(PyTuple_GET_ITEM(part, 1), w, &mv) < 0) return -1;
    if (map_of(PyTuple_GET_ITEM(part, 2), wa, &mav) < 0) { PyBuffer_Release(&mv); return -1; }
    Py_ssize_t count = 0;
    int rc = typed_event(b, kind, w, wa, mv.buf, mav.buf, data, end, rows, &count);
    PyBuffer_Release(&mv);
    PyBuffer_Release(&mav);
    return rc;
}

static PyObject *abuf_take(ABuf *b) {
    if (!b->ba && !(b->ba = PyByteArray_FromStringAndSize(NULL, 0))) return NULL;
    if (PyByteArray_Resize(b->ba, b->len) < 0) return NULL;
    PyObject *out = b->ba;
    b->ba = NULL;
    b->p = NULL;
    b->len = b->cap = 0;
    return out;
}

/* typed_finish(builder) -> [(rows, nulls, validity, values, data), ...] per column, the
 * buffers as bytearrays (values: the offsets of a STRING/BINARY column; data: its bytes,
 * else empty); the builder starts over. */
static PyObject *typed_finish(PyObject *self, PyObject *cap) {
    Builder *b = PyCapsule_GetPointer(cap, "binlog.arrow_builder");
    if (!b) return NULL;
    PyObject *out = PyList_New(b->count);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < b->count; k++) {
        ACol *c = &b->cols[k];
        if (c->var && c->values.len == 0 && acol_room(c, 0) < 0) {     /* no row: the one offset 0 */
            Py_DECREF(out);
            return NULL;
        }
        c->validity.len = (c->rows + 7) >> 3;         /* the bytes cleared ahead dropped */
        PyObject *item = Py_BuildValue("nnNNN", c->rows, c->nulls, abuf_take(&c->validity),
                                       abuf_take(&c->values), abuf_take(&c->data));
        if (!item) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, item);
        c->rows = c->nulls = 0;
    }
    return out;
}

/* typed_size(builder) -> bytes held, room to grow included (the caller writes a row
 * group past its limit). */
static Py_ssize_t builder_size(const Builder *b) {
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < b->count; k++)
        n += b->cols[k].validity.cap + b->cols[k].values.cap + b->cols[k].data.cap;
    return n;
}

static PyObject *typed_size(PyObject *self, PyObject *cap) {
    Builder *b = PyCapsule_GetPointer(cap, "binlog.arrow_builder");
    if (!b) return NULL;
    return PyLong_FromSsize_t(builder_size(b));
}

/* kind_widths() -> (kinds, fixed, temporal, decimal): _column_kinds.h as the extension
 * was built with it, for tests/binlog/test_column_kinds.py (the Python side must agree):
 * K_COUNT; KIND_FIXED_BYTES per kind; kind_temporal_bytes per kind and N (-1..7);
 * decimal_bin_size per precision 0..66 and scale 0..31. */
static PyObject *kind_widths(PyObject *self, PyObject *noargs) {
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

static PyMethodDef methods[] = {
    {"typed_builder", typed_builder, METH_VARARGS,
     "typed_builder(((type, precision, scale), ...)) -> builder\n\n"
     "Arrow column buffers of a typed table: its columns for the after image, then the same\n"
     "for the before image (spark_ingest/arrow_columns.py: the type codes)."},
    {"typed_append", typed_append, METH_VARARGS,
     "typed_append(builder, data, kind, walk, walk_after, map, map_after) -> rows\n\n"
     "The rows of one rows event into the builder's columns (map: int32 per step, its column\n"
     "or -1); Fallback (and no row added) on anything it does not type exactly as\n"
     "spark_ingest/arrow_typed.py does."},
    {"typed_finish", typed_finish, METH_O,
     "typed_finish(builder) -> [(rows, nulls, validity, values, data), ...]: the buffers,\n"
     "handed over; the builder starts again empty."},
    {"typed_size", typed_size, METH_O, "typed_size(builder) -> bytes held, room to grow included."},
    {"kind_widths", kind_widths, METH_NOARGS,
     "kind_widths() -> (K_COUNT, fixed, temporal, decimal)\n\n"
     "The column kinds' widths of binlog/_column_kinds.h as this module was built with them\n"
     "(tests compare them with binlog/column_kinds.py)."},
    {"tune_allocator", tune_allocator, METH_NOARGS,
     "tune_allocator() -> bool\n\n"
     "Keep freed buffers of up to 16 MiB in the C heap for reuse (glibc mallopt); for the\n"
     "command line's own process.  False without glibc (nothing changed)."},
    {"compile_walk", compile_walk, METH_VARARGS, "Compile a row-image walk for decode_event."},
    {"decode_event", decode_event, METH_VARARGS, "Decode all row images of one rows event."},
    {"sql_values", sql_values, METH_VARARGS,
     "sql_values(data, kind, walk, walk_after, steps, steps_after, spec, render[, before,\n"
     "           names]) -> [str]\n\n"
     "The '(v1, v2, ...)' of each row's after image (kind 0 insert or delete: the only\n"
     "image; 1 update: with before=1 its before image; with names, a tuple of bytes per\n"
     "column, 'n1 = v1, n2 = v2, ...') as\n"
     "output/sql/literals.py RowValues writes it, by spec (one code per column: q utf8 text quoted,\n"
     "x bytes as hex, p the Python decoder and render(value, column) -> bytes, v by kind,\n"
     "s not written); Fallback on anything else."},
    {"checksum_text", checksum_text, METH_VARARGS,
     "checksum_text(row, codes) -> int\n\n"
     "The TiCDC checksum of a row of text-protocol values (verify-rows' target side), each\n"
     "column read by its code (see binlog/_speedups.c); Fallback on any other form."},
    {"checksum_rows", checksum_rows, METH_VARARGS,
     "checksum_rows(data, kind, walk, walk_after, steps, steps_after, crc_update) -> list\n\n"
     "The TiCDC checksum of each row's after image (None: a delete, or a partial image),\n"
     "computed from the row bytes as encode_rows' flag 8 does; Fallback on anything else."},
    {"encode_run", encode_run, METH_VARARGS,
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
    {"encode_rows", encode_rows, METH_VARARGS,
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
    {"images_builder", images_builder, METH_NOARGS,
     "images_builder() -> builder\n\n"
     "The before and after columns of a batch of changes/ (Arrow strings: the JSON images,\n"
     "null where a row has none), filled in row order by images_encode and images_put."},
    {"images_encode", images_encode, METH_VARARGS,
     "images_encode(builder, data, kind, walk, walk_after, steps, steps_after, flags, render)\n"
     "    -> (first, count)\n\n"
     "The images of all rows of one rows event (arguments as for encode_rows; flags 1\n"
     "--bigint-as-string, 2 base64) into the builder's columns, the bytes encode_rows writes\n"
     "for them; first: the number of the event's first row (rows handed over and held\n"
     "before it).  Fallback (and no row added) where encode_rows falls back."},
    {"images_put", images_put, METH_VARARGS,
     "images_put(builder, befores, afters) -> first\n\n"
     "Rows of images made in Python (bytes of UTF-8 JSON text, or None) into the columns."},
    {"images_rows", images_rows, METH_O,
     "images_rows(builder) -> the rows added so far (handed over or held)."},
    {"images_truncate", images_truncate, METH_VARARGS,
     "images_truncate(builder, rows): the rows added after the first `rows` taken out."},
    {"images_finish", images_finish, METH_VARARGS,
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
    DecimalType = PyObject_GetAttrString(decimal, "Decimal");
    Py_DECREF(decimal);
    if (!DecimalType) return NULL;
    Fallback = PyErr_NewException("binlog._speedups.Fallback", NULL, NULL);
    if (!Fallback || PyModule_AddObject(m, "Fallback", Fallback) < 0) return NULL;
    Py_INCREF(Fallback);
    return m;
}
