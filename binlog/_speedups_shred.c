#include "_speedups.h"

/* ---- shred: the typed tables of tables no schema describes, from their JSON images ----
 *
 * A table no schema describes is typed from the keys of its images (spark_ingest/typed.py
 * image_keys): a STRING column per key, each value what Spark's from_json gives a STRING
 * field (spark_ingest/arrow_typed.py jackson_text): a JSON string as itself, an integer
 * as its digits, a double as Java's Double.toString writes it, true/false, an object or
 * array as its compact JSON text (strings escaped as orjson escapes them, doubles as
 * Java writes them), null as NULL.  The images are the before/after columns of a batch
 * of changes/: JSON our own writers made (put_image, orjson), so each double is written
 * in its shortest form and its digits are repr's (the ones arrow_typed.java_double
 * takes).  A builder holds, per key in the order first seen, the STRING column of the
 * typed image (the after image, a delete's before image) and of _before (an update's
 * before image); whether the key was seen in a row's typed image (the keys the table's
 * columns are made of: an update's before image alone adds none).  Keys are matched in
 * the order of the last image, so a table's images cost one comparison per key. */

typedef struct {
    unsigned char *key;             /* the key, unescaped (UTF-8) */
    Py_ssize_t klen;
    /* "key": as our writers write it, when the key needs no escape (else 0): an image
     * member matched by one comparison */
    unsigned char *member;
    Py_ssize_t mlen;
    int primary;                    /* seen as a key of a row's typed image */
    Py_ssize_t stamp[2];            /* the row (+ 1) whose image gave it a value, per side */
    ACol col[2];                    /* 0: the typed image, 1: _before */
} SCol;

typedef struct {
    Py_ssize_t count, cap, rows;
    SCol *cols;
    Py_ssize_t *order, norder;      /* column of the i-th key of the last image (cap) */
    Buf text, key;                  /* scratch: a value's text, an unescaped key */
} Shred;

#define SHRED_DEPTH 1024            /* orjson.loads' nesting limit */

static void shred_free(PyObject *capsule) {
    Shred *sh = PyCapsule_GetPointer(capsule, "binlog.shred");
    if (!sh) return;
    for (Py_ssize_t i = 0; i < sh->count; i++) {
        SCol *c = &sh->cols[i];
        PyMem_Free(c->key);
        PyMem_Free(c->member);
        for (int s = 0; s < 2; s++) {
            Py_XDECREF(c->col[s].validity.ba); Py_XDECREF(c->col[s].values.ba);
            Py_XDECREF(c->col[s].data.ba);
        }
    }
    PyMem_Free(sh->cols);
    PyMem_Free(sh->order);
    PyMem_Free(sh->text.p);
    PyMem_Free(sh->key.p);
    PyMem_Free(sh);
}

PyObject *sp_shred_builder(PyObject *self, PyObject *noargs) {
    Shred *sh = PyMem_Calloc(1, sizeof(Shred));
    if (!sh) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(sh, "binlog.shred", shred_free);
    if (!cap) PyMem_Free(sh);
    return cap;
}

/* A malformed image: ValueError(text, row) naming the row and the byte (our writers never
 * make one; the caller names the row's file and position). */
static int shred_bad(Py_ssize_t row, Py_ssize_t at, const char *what) {
    PyObject *args = Py_BuildValue("(Nn)", PyUnicode_FromFormat("%s at byte %zd of the image", what, at), row);
    if (args) {
        PyErr_SetObject(PyExc_ValueError, args);
        Py_DECREF(args);
    }
    return -1;
}

typedef struct {
    const unsigned char *p, *start, *end;
    Py_ssize_t row;
} JIn;

static inline void jws(JIn *in) {
    while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
        in->p++;
}

static int jbad(JIn *in, const char *what) {
    return shred_bad(in->row, in->p - in->start, what);
}

static int hex4(const unsigned char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static int put_utf8_cp(Buf *b, unsigned cp) {
    char t[4];
    int n;
    if (cp < 0x80) { t[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { t[0] = (char)(0xC0 | cp >> 6); t[1] = (char)(0x80 | (cp & 63)); n = 2; }
    else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | cp >> 12); t[1] = (char)(0x80 | (cp >> 6 & 63)); t[2] = (char)(0x80 | (cp & 63));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | cp >> 18); t[1] = (char)(0x80 | (cp >> 12 & 63));
        t[2] = (char)(0x80 | (cp >> 6 & 63)); t[3] = (char)(0x80 | (cp & 63));
        n = 4;
    }
    return put(b, t, n);
}

/* A JSON string at in->p (its opening quote): the span of its raw bytes, and whether it
 * holds escapes; in->p after the closing quote.  The bytes are UTF-8 (an Arrow string
 * column); a raw control character is not JSON. */
static int jstring_span(JIn *in, const unsigned char **s, Py_ssize_t *n, int *escaped) {
    const unsigned char *p = ++in->p;
    *escaped = 0;
    for (;;) {
#ifdef __SSE2__
        /* sixteen bytes at a time: to the first '"', '\\' or control character */
        while (in->end - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)p);
            __m128i low = _mm_set1_epi8(0x1F);
            __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                       _mm_cmpeq_epi8(_mm_max_epu8(x, low), low));
            int mask = _mm_movemask_epi8(hit);
            if (mask) { p += __builtin_ctz((unsigned)mask); break; }
            p += 16;
        }
#endif
        while (in->end - p >= 8) {      /* eight bytes at a time, as json_str */
            uint64_t x;
            memcpy(&x, p, 8);
            const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
            uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
            uint64_t special = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs);
            if (special & highs) break;
            p += 8;
        }
        if (p >= in->end) { in->p = p; return jbad(in, "unterminated string"); }
        unsigned char c = *p;
        if (c == '"') break;
        if (c < 0x20) { in->p = p; return jbad(in, "control character in a string"); }
        if (c == '\\') {
            *escaped = 1;
            if (in->end - p < 2) { in->p = p; return jbad(in, "unterminated escape"); }
            p += 2;
            continue;
        }
        p++;
    }
    *s = in->p;
    *n = p - in->p;
    in->p = p + 1;
    return 0;
}

/* The string of a span with escapes, unescaped into b (as orjson.loads reads it: a lone
 * surrogate is an error). */
static int junescape(JIn *in, Buf *b, const unsigned char *s, Py_ssize_t n) {
    const unsigned char *p = s, *end = s + n;
    while (p < end) {
        const unsigned char *q = p;
        while (q < end && *q != '\\') q++;
        if (q > p && put(b, (const char *)p, q - p) < 0) return -1;
        if (q >= end) break;
        unsigned char c = q[1];
        char one = 0;
        switch (c) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (end - q < 6 || hex4(q + 2, &cp) < 0) { in->p = q; return jbad(in, "bad \\u escape"); }
            p = q + 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF) { in->p = q; return jbad(in, "lone surrogate"); }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) < 0
                    || lo < 0xDC00 || lo > 0xDFFF) { in->p = q; return jbad(in, "lone surrogate"); }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            if (put_utf8_cp(b, cp) < 0) return -1;
            continue;
        }
        default: in->p = q; return jbad(in, "bad escape");
        }
        if (put(b, &one, 1) < 0) return -1;
        p = q + 2;
    }
    return 0;
}

/* A JSON number's parts: its sign, integer digits [ip, iend), fraction digits [fp, fend)
 * (empty: none), exponent, and whether it is an integer (no fraction, no exponent). */
typedef struct {
    const unsigned char *start, *ip, *iend, *fp, *fend;
    int neg, integral;
    long exp10;
} JNum;

/* The number at in->p (JSON's grammar), in->p after it. */
static int jnumber_scan(JIn *in, JNum *x) {
    const unsigned char *p = in->p, *end = in->end;
    memset(x, 0, sizeof *x);
    x->start = p;
    x->integral = 1;
    if (p < end && *p == '-') { x->neg = 1; p++; }
    x->ip = p;
    if (p < end && *p == '0') p++;
    else if (p < end && *p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
    else return jbad(in, "bad number");
    x->iend = x->fp = x->fend = p;
    if (p < end && *p == '.') {
        x->integral = 0;
        x->fp = ++p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        x->fend = p;
        if (x->fend == x->fp) { in->p = p; return jbad(in, "bad number"); }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        x->integral = 0;
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= end || *p < '0' || *p > '9') { in->p = p; return jbad(in, "bad number"); }
        while (p < end && *p >= '0' && *p <= '9') {
            if (x->exp10 < 100000) x->exp10 = x->exp10 * 10 + (*p - '0');
            p++;
        }
        if (eneg) x->exp10 = -x->exp10;
    }
    in->p = p;
    return 0;
}

/* An integer orjson.loads keeps as an int (within 64 bits: signed, or unsigned when
 * positive) as str() writes it ("-0": "0"): 1; 0 for one it reads as a double. */
static int jnumber_int(const JNum *x, char *out, int *outlen) {
    Py_ssize_t ilen = x->iend - x->ip;
    int fits = ilen < 19;
    if (!fits && ilen <= 20) {
        char digits[24];
        memcpy(digits, x->ip, ilen);
        digits[ilen] = 0;
        const char *limit = x->neg ? "9223372036854775808" : "18446744073709551615";
        Py_ssize_t llen = (Py_ssize_t)strlen(limit);
        fits = ilen < llen || (ilen == llen && strcmp(digits, limit) <= 0);
    }
    if (!fits) return 0;
    int n = 0;
    if (x->neg && !(ilen == 1 && *x->ip == '0')) out[n++] = '-';
    memcpy(out + n, x->ip, ilen);
    *outlen = n + (int)ilen;
    return 1;
}

/* The double's significant digits D (at most 17; none for zero) and k, |value| being
 * 0.D x 10^k: the number's own digits, our writers writing each double shortest (so they
 * are repr's); a longer or far-off form goes through the double (PyOS_string_to_double,
 * shortest: repr's digits). */
static int jnumber_digits(JIn *in, const JNum *x, char *D, int *nd_out, long *k_out) {
    int nd = 0, lead = 1, dropped = 0;
    long k = 0;
    for (const unsigned char *q = x->ip; q < x->fend; q++) {
        if (q == x->iend) { q = x->fp - 1; continue; }     /* the point */
        int digit = *q - '0', before_point = q < x->iend;
        if (lead && digit == 0) { if (!before_point) k--; continue; }
        lead = 0;
        if (before_point) k++;
        if (nd < 20) D[nd++] = (char)('0' + digit); else dropped = 1;
    }
    while (nd > 0 && D[nd - 1] == '0') nd--;
    k += x->exp10;
    if (dropped || nd > 17 || k > 300 || k < -300) {
        Py_ssize_t len = in->p - x->start;
        char *text = PyMem_Malloc(len + 1);
        if (!text) { PyErr_NoMemory(); return -1; }
        memcpy(text, x->start, len);
        text[len] = 0;
        double sp_value = PyOS_string_to_double(text, NULL, NULL);
        PyMem_Free(text);
        if (sp_value == -1.0 && PyErr_Occurred()) return -1;
        if (isinf(sp_value)) return jbad(in, "number is infinity as a double");    /* orjson: an error */
        nd = 0;
        if (sp_value != 0) {
            int kk;
            if (sp_shortest(fabs(sp_value), D, &nd, &kk) < 0) return -1;
            k = kk;
        }
    }
    *nd_out = nd;
    *k_out = k;
    return 0;
}

/* Java's Double.toString of -/+0.D x 10^k (arrow_typed.java_double): 0.0 for no digit;
 * plain for 1e-3 <= |v| < 1e7, else d.dddE[-]x.  Returns its length (out: 64 bytes). */
static int java_double_text(int neg, const char *D, int nd, long k, char *out) {
    int n = 0;
    if (neg) out[n++] = '-';
    if (nd == 0) return n + LIT(out + n, "0.0");
    long e = k - 1;                       /* the first digit's exponent */
    if (e >= -3 && e < 7) return n + plain_digits(out + n, D, nd, (int)k);
    out[n++] = D[0];
    out[n++] = '.';
    if (nd > 1) { memcpy(out + n, D + 1, nd - 1); n += nd - 1; } else out[n++] = '0';
    out[n++] = 'E';
    if (e < 0) { out[n++] = '-'; e = -e; }
    return n + udigits(out + n, (uint64_t)e, 1);
}

/* A JSON number at in->p as Jackson's text of what orjson.loads gives for it
 * (arrow_typed._jackson_scalar): an integer's digits, a double as java_double writes it.
 * out holds 64 bytes at least. */
static int jnumber(JIn *in, char *out, int *outlen) {
    JNum x;
    if (jnumber_scan(in, &x) < 0) return -1;
    if (x.integral && jnumber_int(&x, out, outlen)) return 0;
    char D[40];
    int nd = 0;
    long k = 0;
    if (jnumber_digits(in, &x, D, &nd, &k) < 0) return -1;
    *outlen = java_double_text(x.neg, D, nd, k, out);
    return 0;
}

/* A JSON value inside an object or array, written into b as arrow_typed._jackson_json
 * writes what orjson.loads gives: compact, strings as orjson.dumps writes them, numbers
 * as jnumber. */
static int jnested(JIn *in, Buf *b, int depth) {
    jws(in);
    if (in->p >= in->end) return jbad(in, "value expected");
    unsigned char c = *in->p;
    if (c == '"') {
        const unsigned char *s;
        Py_ssize_t n;
        int escaped;
        if (jstring_span(in, &s, &n, &escaped) < 0) return -1;
        if (!escaped) return sp_json_str(b, s, n);
        Buf tmp = {0};
        int rc = junescape(in, &tmp, s, n);
        if (rc == 0) rc = sp_json_str(b, (const unsigned char *)tmp.p, tmp.len);
        PyMem_Free(tmp.p);
        return rc;
    }
    if (c == '{' || c == '[') {
        if (depth >= SHRED_DEPTH) return jbad(in, "nested too deep");
        char close = c == '{' ? '}' : ']';
        if (put(b, (const char *)&c, 1) < 0) return -1;
        in->p++;
        jws(in);
        if (in->p < in->end && *in->p == close) { in->p++; return put(b, &close, 1); }
        for (int first = 1;; first = 0) {
            if (!first && put(b, ",", 1) < 0) return -1;
            if (c == '{') {
                jws(in);
                if (in->p >= in->end || *in->p != '"') return jbad(in, "key expected");
                if (jnested(in, b, depth + 1) < 0) return -1;       /* the key: a string */
                jws(in);
                if (in->p >= in->end || *in->p != ':') return jbad(in, "':' expected");
                in->p++;
                if (put(b, ":", 1) < 0) return -1;
            }
            if (jnested(in, b, depth + 1) < 0) return -1;
            jws(in);
            if (in->p < in->end && *in->p == ',') { in->p++; continue; }
            if (in->p < in->end && *in->p == close) { in->p++; return put(b, &close, 1); }
            return jbad(in, "',' or end expected");
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char num[64];
        int n;
        if (jnumber(in, num, &n) < 0) return -1;
        return put(b, num, n);
    }
    static const char *const WORDS[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(WORDS[i]);
        if ((size_t)(in->end - in->p) >= n && memcmp(in->p, WORDS[i], n) == 0) {
            in->p += n;
            return put(b, WORDS[i], (Py_ssize_t)n);
        }
    }
    return jbad(in, "value expected");
}

/* The column of a key (unescaped), made when first seen: NULLs for the rows before. */
static Py_ssize_t shred_column(Shred *sh, Py_ssize_t at, const unsigned char *k, Py_ssize_t n) {
    if (at < sh->norder) {
        SCol *c = &sh->cols[sh->order[at]];
        if (c->klen == n && memcmp(c->key, k, n) == 0) return sh->order[at];
    }
    Py_ssize_t found = -1;
    for (Py_ssize_t i = 0; i < sh->count; i++)
        if (sh->cols[i].klen == n && memcmp(sh->cols[i].key, k, n) == 0) { found = i; break; }
    if (found < 0) {
        if (sh->count == sh->cap) {
            Py_ssize_t cap = sh->cap ? sh->cap * 2 : 16;
            SCol *cols = PyMem_Realloc(sh->cols, cap * sizeof(SCol));
            Py_ssize_t *order = cols ? PyMem_Realloc(sh->order, cap * sizeof(Py_ssize_t)) : NULL;
            if (cols) sh->cols = cols;
            if (order) sh->order = order;
            if (!cols || !order) { PyErr_NoMemory(); return -1; }
            sh->cap = cap;
        }
        SCol *c = &sh->cols[sh->count];
        memset(c, 0, sizeof *c);
        int plain = 1;
        for (Py_ssize_t i = 0; i < n; i++) plain &= k[i] >= 0x20 && k[i] != '"' && k[i] != '\\';
        c->key = PyMem_Malloc(n ? n : 1);
        c->member = plain ? PyMem_Calloc(n + 3 > 8 ? n + 3 : 8, 1) : NULL;
        if (!c->key || (plain && !c->member)) {
            PyMem_Free(c->key);
            PyMem_Free(c->member);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(c->key, k, n);
        c->klen = n;
        if (plain) {
            c->member[0] = '"';
            memcpy(c->member + 1, k, n);
            c->member[n + 1] = '"';
            c->member[n + 2] = ':';
            c->mlen = n + 3;
        }
        for (int s = 0; s < 2; s++) {
            c->col[s].type = A_STRING;
            c->col[s].var = 1;
            c->col[s].width = 4;
            /* the rows so far NULL, and room up to the row after the next multiple of
             * A_CHUNK (shred_row reserves for all columns there) */
            if (sp_acol_nulls(&c->col[s], sh->rows) < 0 || sp_acol_room(&c->col[s], A_CHUNK) < 0) {
                PyMem_Free(c->key);
                PyMem_Free(c->member);
                return -1;
            }
        }
        found = sh->count++;
    }
    if (at < sh->cap) {
        sh->order[at] = found;
        if (at >= sh->norder) sh->norder = at + 1;
    }
    return found;
}

/* The last value of a string column taken back (a key given twice: the last one counts,
 * as in orjson.loads' dict). */
static void acol_unput(ACol *c) {
    c->rows--;
    unsigned char bit = (unsigned char)(1u << (c->rows & 7));
    if (c->validity.p[c->rows >> 3] & bit) c->validity.p[c->rows >> 3] &= (unsigned char)~bit;
    else c->nulls--;
    c->values.len -= 4;
    int32_t off;
    memcpy(&off, c->values.p + c->values.len - 4, 4);
    c->data.len = off;
}

/* A value (NULL: a NULL) within the room shred_row made. */
static int scol_put(ACol *c, const void *p, Py_ssize_t n, Py_ssize_t row) {
    if (!p) { acol_null(c); return 0; }
    if (sp_acol_bytes(c, p, n) < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_OverflowError, "image of row %zd: a column past 2 GiB", row);
        return -1;
    }
    return 0;
}

/* Whether in->p is at c's member prefix: a short one (8 bytes and less, zero-padded)
 * compared as one word. */
static inline int member_at(const JIn *in, const SCol *c) {
    Py_ssize_t left = in->end - in->p;
    if (c->mlen <= 8 && left >= 8) {
        uint64_t x, m;
        memcpy(&x, in->p, 8);
        memcpy(&m, c->member, 8);
        uint64_t keep = c->mlen == 8 ? ~0ULL : ((1ULL << (8 * c->mlen)) - 1);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        keep = c->mlen == 8 ? ~0ULL : ~(~0ULL >> (8 * c->mlen));
#endif
        return (x & keep) == m;
    }
    return left >= c->mlen && memcmp(in->p, c->member, c->mlen) == 0;
}

/* The column of the key at in->p, the at-th of its image; in->p after the ':'. */
static SCol *shred_key(Shred *sh, JIn *in, Py_ssize_t at) {
    SCol *c = at < sh->norder ? &sh->cols[sh->order[at]] : NULL;
    if (c && c->member && member_at(in, c)) {
        in->p += c->mlen;                   /* the key of the last image's same place */
        return c;
    }
    jws(in);
    if (in->p >= in->end || *in->p != '"') { jbad(in, "key expected"); return NULL; }
    const unsigned char *k;
    Py_ssize_t kn;
    int escaped;
    if (jstring_span(in, &k, &kn, &escaped) < 0) return NULL;
    if (escaped) {
        sh->key.len = 0;
        if (junescape(in, &sh->key, k, kn) < 0) return NULL;
        k = (const unsigned char *)sh->key.p;
        kn = sh->key.len;
    }
    Py_ssize_t ci = shred_column(sh, at, k, kn);
    if (ci < 0) return NULL;
    jws(in);
    if (in->p >= in->end || *in->p != ':') { jbad(in, "':' expected"); return NULL; }
    in->p++;
    return &sh->cols[ci];
}

/* The value at in->p into a (NULL: read over it), as Jackson's text of it. */
static int shred_value(Shred *sh, JIn *in, ACol *a) {
    jws(in);
    if (in->p >= in->end) return jbad(in, "value expected");
    unsigned char v = *in->p;
    if (v == '"') {
        const unsigned char *s;
        Py_ssize_t n;
        int escaped;
        if (jstring_span(in, &s, &n, &escaped) < 0) return -1;
        if (!a) return 0;
        if (!escaped) return scol_put(a, s, n, in->row);
        sh->text.len = 0;
        if (junescape(in, &sh->text, s, n) < 0) return -1;
        return scol_put(a, sh->text.p, sh->text.len, in->row);
    }
    if (v == '-' || (v >= '0' && v <= '9')) {
        char num[64];
        int n;
        if (jnumber(in, num, &n) < 0) return -1;
        return a ? scol_put(a, num, n, in->row) : 0;
    }
    if (v == '{' || v == '[') {
        sh->text.len = 0;
        if (jnested(in, &sh->text, 1) < 0) return -1;
        return a ? scol_put(a, sh->text.p, sh->text.len, in->row) : 0;
    }
    static const char *const WORDS[] = {"null", "true", "false"};
    for (int i = 0; i < 3; i++) {
        Py_ssize_t n = (Py_ssize_t)strlen(WORDS[i]);
        if (in->end - in->p >= n && memcmp(in->p, WORDS[i], n) == 0) {
            in->p += n;
            return a ? scol_put(a, i ? WORDS[i] : NULL, n, in->row) : 0;
        }
    }
    return jbad(in, "value expected");
}

/* One image object into side (0, 1; -1: its keys only), its keys marked primary. */
static int shred_image(Shred *sh, JIn *in, int side, int primary) {
    Py_ssize_t stamp = sh->rows + 1;
    jws(in);
    if (in->p >= in->end || *in->p != '{') return jbad(in, "object expected");
    in->p++;
    jws(in);
    if (in->p < in->end && *in->p == '}') in->p++;
    else {
        for (Py_ssize_t at = 0;; at++) {
            SCol *c = shred_key(sh, in, at);
            if (!c) return -1;
            if (primary) c->primary = 1;
            ACol *a = side >= 0 ? &c->col[side] : NULL;
            if (a && c->stamp[side] == stamp) acol_unput(a);
            if (shred_value(sh, in, a) < 0) return -1;
            if (a) c->stamp[side] = stamp;
            jws(in);
            if (in->p < in->end && *in->p == ',') { in->p++; continue; }
            if (in->p < in->end && *in->p == '}') { in->p++; break; }
            return jbad(in, "',' or '}' expected");
        }
    }
    jws(in);
    if (in->p != in->end) return jbad(in, "data after the image");
    return 0;
}

/* An Arrow string array's parts: (validity or None, offsets, data, offset, length). */
typedef struct {
    Py_buffer validity, offsets, data;
    int has_validity;
    Py_ssize_t offset, length;
} SArr;

static void sarr_release(SArr *a) {
    if (a->has_validity) PyBuffer_Release(&a->validity);
    if (a->offsets.obj) PyBuffer_Release(&a->offsets);
    if (a->data.obj) PyBuffer_Release(&a->data);
}

static int sarr_get(PyObject *obj, SArr *a) {
    PyObject *validity, *offsets, *data;
    memset(a, 0, sizeof *a);
    if (!PyArg_ParseTuple(obj, "OOOnn", &validity, &offsets, &data, &a->offset, &a->length)) return -1;
    if (validity != Py_None) {
        if (PyObject_GetBuffer(validity, &a->validity, PyBUF_SIMPLE) < 0) return -1;
        a->has_validity = 1;
    }
    if (PyObject_GetBuffer(offsets, &a->offsets, PyBUF_SIMPLE) < 0
        || PyObject_GetBuffer(data, &a->data, PyBUF_SIMPLE) < 0) { sarr_release(a); return -1; }
    /* every offset read is checked against the buffers: a short one is an error */
    if (a->offset < 0 || a->length < 0 || a->offset > PY_SSIZE_T_MAX / 4 - a->length - 1
        || a->offsets.len < (a->offset + a->length + 1) * 4
        || (a->has_validity && a->validity.len < (a->offset + a->length + 7) / 8)) {
        sarr_release(a);
        PyErr_SetString(PyExc_ValueError, "an Arrow string array's buffers are too short");
        return -1;
    }
    return 0;
}

/* Row i's string (NULL when null); -1 on offsets outside the data. */
static int sarr_value(const SArr *a, Py_ssize_t i, const unsigned char **p, Py_ssize_t *n) {
    Py_ssize_t at = a->offset + i;
    if (a->has_validity && !(((const unsigned char *)a->validity.buf)[at >> 3] & (1u << (at & 7)))) {
        *p = NULL;
        *n = 0;
        return 0;
    }
    int32_t lo, hi;
    memcpy(&lo, (const char *)a->offsets.buf + at * 4, 4);
    memcpy(&hi, (const char *)a->offsets.buf + at * 4 + 4, 4);
    if (lo < 0 || hi < lo || hi > a->data.len) {
        PyErr_SetString(PyExc_ValueError, "an Arrow string array's offsets are outside its data");
        return -1;
    }
    *p = (const unsigned char *)a->data.buf + lo;
    *n = hi - lo;
    return 0;
}

/* Row r of the batch: its op decides which image is typed (arrow_typed.TableRows.add). */
static int shred_row(Shred *sh, Py_ssize_t r, const SArr *ops, const SArr *befores, const SArr *afters) {
    const unsigned char *op, *before, *after;
    Py_ssize_t nop, nb, na;
    if (sarr_value(ops, r, &op, &nop) < 0 || sarr_value(befores, r, &before, &nb) < 0
        || sarr_value(afters, r, &after, &na) < 0)
        return -1;
    int kind = !op ? -1 : nop == 6 && memcmp(op, "insert", 6) == 0 ? 0
             : nop == 6 && memcmp(op, "update", 6) == 0 ? 1 : nop == 6 && memcmp(op, "delete", 6) == 0 ? 2 : -1;
    if (kind < 0) return shred_bad(r, 0, "not an insert, update or delete");
    /* the typed image; _before: an update's before image; the keys: those of the after
     * image, or of the before image when there is none (local.py's reading of changes/) */
    const unsigned char *typed = kind == 2 ? before : after;
    Py_ssize_t ntyped = kind == 2 ? nb : na;
    const unsigned char *keys = after ? after : before;
    const unsigned char *older = kind == 1 ? before : NULL;
    if (sh->rows % A_CHUNK == 0)            /* room for the next A_CHUNK rows of every column */
        for (Py_ssize_t i = 0; i < sh->count; i++)
            for (int s = 0; s < 2; s++)
                if (sp_acol_room(&sh->cols[i].col[s], A_CHUNK) < 0) return -1;
    JIn in = {0};
    in.row = r;
    if (typed) {
        in.p = in.start = typed;
        in.end = typed + ntyped;
        if (shred_image(sh, &in, 0, keys == typed) < 0) return -1;
    }
    if (older) {
        in.p = in.start = older;
        in.end = older + nb;
        if (shred_image(sh, &in, 1, keys == older && keys != typed) < 0) return -1;
    }
    if (keys && keys != typed && keys != older) {
        in.p = in.start = keys;
        in.end = keys + (keys == after ? na : nb);
        if (shred_image(sh, &in, -1, 1) < 0) return -1;
    }
    Py_ssize_t stamp = sh->rows + 1;
    for (Py_ssize_t i = 0; i < sh->count; i++)
        for (int s = 0; s < 2; s++)
            if (sh->cols[i].stamp[s] != stamp && scol_put(&sh->cols[i].col[s], NULL, 0, r) < 0) return -1;
    sh->rows++;
    return 0;
}

/* shred_add(builder, ops, befores, afters) -> rows: each a string array's parts. */
PyObject *sp_shred_add(PyObject *self, PyObject *args) {
    PyObject *cap, *ops_obj, *befores_obj, *afters_obj;
    if (!PyArg_ParseTuple(args, "OO!O!O!", &cap, &PyTuple_Type, &ops_obj, &PyTuple_Type, &befores_obj,
                          &PyTuple_Type, &afters_obj))
        return NULL;
    Shred *sh = PyCapsule_GetPointer(cap, "binlog.shred");
    if (!sh) return NULL;
    SArr ops, befores, afters;
    if (sarr_get(ops_obj, &ops) < 0) return NULL;
    if (sarr_get(befores_obj, &befores) < 0) { sarr_release(&ops); return NULL; }
    if (sarr_get(afters_obj, &afters) < 0) { sarr_release(&ops); sarr_release(&befores); return NULL; }
    Py_ssize_t n = ops.length, done = 0;
    int rc = 0;
    if (befores.length != n || afters.length != n) {
        PyErr_SetString(PyExc_ValueError, "the columns are not of one length");
        rc = -1;
    }
    for (; rc == 0 && done < n; done++) rc = shred_row(sh, done, &ops, &befores, &afters);
    sarr_release(&ops);
    sarr_release(&befores);
    sarr_release(&afters);
    if (rc < 0) {
        /* the row that failed half-written: the builder is not used again (the caller
         * raises) */
        return NULL;
    }
    return PyLong_FromSsize_t(n);
}

/* shred_finish(builder) -> (rows, [(key, primary, after, before), ...]): each column's
 * buffers as typed_finish hands them over; the builder keeps its keys, with no rows. */
PyObject *sp_shred_finish(PyObject *self, PyObject *cap) {
    Shred *sh = PyCapsule_GetPointer(cap, "binlog.shred");
    if (!sh) return NULL;
    PyObject *out = PyList_New(sh->count);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < sh->count; i++) {
        SCol *c = &sh->cols[i];
        PyObject *sides[2] = {NULL, NULL};
        for (int s = 0; s < 2; s++) {
            ACol *a = &c->col[s];
            if (a->values.len == 0 && sp_acol_room(a, 0) < 0) break;
            a->validity.len = (a->rows + 7) >> 3;
            sides[s] = Py_BuildValue("nnNNN", a->rows, a->nulls, sp_abuf_take(&a->validity),
                                     sp_abuf_take(&a->values), sp_abuf_take(&a->data));
            a->rows = a->nulls = 0;
            if (!sides[s]) break;
        }
        PyObject *item = sides[0] && sides[1]
            ? Py_BuildValue("y#ONN", (const char *)c->key, c->klen, c->primary ? Py_True : Py_False,
                            sides[0], sides[1]) : NULL;
        if (!item) {
            Py_XDECREF(sides[0]);
            Py_XDECREF(sides[1]);
            Py_DECREF(out);
            return NULL;
        }
        c->stamp[0] = c->stamp[1] = 0;
        PyList_SET_ITEM(out, i, item);
    }
    Py_ssize_t rows = sh->rows;
    sh->rows = 0;
    return Py_BuildValue("nN", rows, out);
}

PyObject *sp_shred_size(PyObject *self, PyObject *cap) {
    Shred *sh = PyCapsule_GetPointer(cap, "binlog.shred");
    if (!sh) return NULL;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < sh->count; i++)
        for (int s = 0; s < 2; s++)
            n += sh->cols[i].col[s].validity.cap + sh->cols[i].col[s].values.cap + sh->cols[i].col[s].data.cap;
    return PyLong_FromSsize_t(n);
}
