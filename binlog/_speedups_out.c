#include "_speedups.h"

/* ---- output buffers and escaping (encode_rows) ---------------------------------------- */

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

int sp_buf_grow(Buf *b, Py_ssize_t n) {
    Py_ssize_t cap = b->cap ? b->cap : 8192;
    if (n > PY_SSIZE_T_MAX / 4 - b->len) { PyErr_NoMemory(); return -1; }
    while (cap - b->len < n) cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* A JSON string of valid UTF-8, escaped as orjson escapes it: ", \ and the control
 * characters (\b \t \n \f \r by name, the others as \u00XX); everything else raw. */
int sp_json_str(Buf *b, const unsigned char *s, Py_ssize_t n) {
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

/* output/text.py _literal of a str: \ and ' escaped. */
static const char TEXT_ESCAPES[256] = {['\\'] = '\\', ['\''] = '\''};

/* A quoted text literal as output/text.py _literal writes a str. */
int sp_text_str(Buf *b, const unsigned char *s, Py_ssize_t n) {
    return quoted_escaped(b, s, n, TEXT_ESCAPES);
}

/* Strict UTF-8 as CPython's decoder takes it: no overlong forms, no surrogates, nothing
 * past U+10FFFF (Unicode 15 table 3-7). */
int sp_utf8_valid(const unsigned char *s, Py_ssize_t n) {
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
        if (sp_json_str(&b, (const unsigned char *)utf, n) < 0 || put(&b, ":", 1) < 0) {
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
PyObject *sp_compile_walk(PyObject *self, PyObject *args) {
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

int sp_udigits_any(char *out, uint64_t v, int width) {
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

int sp_datetime_fmt(char *buf, long long year, long long month, long long day,
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
        len += hms(buf + len, (uint64_t)hour, (uint64_t)minute, (uint64_t)second);
    }
    return len + frac_text(buf + len, usec, n);
}

int sp_time_fmt(char *buf, int negative, long long hours, long long minutes,
                long long seconds, int64_t usec, int n) {
    if (hours < 0 || minutes < 0 || seconds < 0) {
        int len = snprintf(buf, 64, "%s%02lld:%02lld:%02lld", negative ? "-" : "", hours,
                           minutes, seconds);
        return len + frac_text(buf + len, usec, n);
    }
    int len = 0;
    if (negative) buf[len++] = '-';
    len += hms(buf + len, (uint64_t)hours, (uint64_t)minutes, (uint64_t)seconds);
    return len + frac_text(buf + len, usec, n);
}

/* Days since 1970-01-01 -> civil date (H. Hinnant's civil_from_days). */
void sp_civil(int64_t z, long long *y, long long *m, long long *d) {
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

int sp_timestamp_fmt(char *buf, uint64_t seconds, int64_t usec, int n) {
    if (seconds == 0 && usec == 0) {
        int len = LIT(buf, "0000-00-00 00:00:00");
        return len + frac_text(buf + len, 0, n);
    }
    long long y, m, d;
    sp_civil((int64_t)(seconds / 86400), &y, &m, &d);
    uint64_t rem = seconds % 86400;
    return sp_datetime_fmt(buf, y, m, d, rem / 3600, rem / 60 % 60, rem % 60, usec, n);
}

/* A DECIMAL's bytes at p as MariaDB's bin2decimal (strings/decimal.c) first reads them:
 * the sign bit flipped and, for a negative value, every byte inverted, into raw[40]; its
 * size in bytes, or -1 past 40. */
int sp_decimal_unsigned(const unsigned char *p, int precision, int scale, unsigned char *raw,
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
int sp_decimal_fmt(char *text, const unsigned char *p, int precision, int scale, int *size_out) {
    if (!(precision > 0 && precision <= 65 && scale >= 0 && scale <= 30 && scale <= precision))
        return -1;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    unsigned char raw[40];
    int negative;
    int size = sp_decimal_unsigned(p, precision, scale, raw, &negative);
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

PyObject *sp_text_value(const Step *s, const unsigned char *p, Py_ssize_t n) {
    if (!s->encoding) return PyBytes_FromStringAndSize((const char *)p, n);
    if (s->utf8) return PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    const char *encoding = PyUnicode_Check(s->encoding) ? PyUnicode_AsUTF8(s->encoding) : NULL;
    if (!encoding) return NULL;    /* not a codec name: the pure path says what it is */
    return PyUnicode_Decode((const char *)p, n, encoding, "strict");
}
