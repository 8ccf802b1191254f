/*
 * The private header of the _speedups extension (setup.py builds binlog/_speedups.c and
 * binlog/_speedups_*.c, one translation unit per section, into the one module): the types,
 * constants and macros every section uses, the small helpers each hot loop must inline
 * (static inline: put, be/le, udigits and the other byte writers - LIT, hms, hex_pairs,
 * plain_digits -, the unpack readers, the Arrow column stores), and the prototypes of the
 * helpers one section defines for another (the sp_ prefix; nothing else leaves its file).
 * Nothing here is visible from Python: the module's methods are the table in
 * binlog/_speedups.c.
 */
#ifndef BINLOG_SPEEDUPS_H
#define BINLOG_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <zlib.h>
#include "_column_kinds.h"
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
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

static const int64_t DIV[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
static const int64_t POW[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000};
#define TIME_MAX_VALUE_SECONDS (838 * 3600 + 59 * 60 + 59)

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

#define RESERVE(b, n) do { \
    if ((b)->cap - (b)->len < (Py_ssize_t)(n) && sp_buf_grow((b), (Py_ssize_t)(n)) < 0) return -1; \
} while (0)

static const char HEXDIGITS[] = "0123456789abcdef";

/* The real type code of a GEOMETRY column (binlog/constants.py ColumnType.GEOMETRY). */
#define TYPE_GEOMETRY 255

#define NO_VALUE PY_SSIZE_T_MAX

/* Decimal digits without printf (the batch path formats tens of millions of values):
 * v with at least `width` digits, zero-padded; returns the length written. */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t P10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL};

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

typedef struct {
    Buf data, offsets, validity;      /* offsets: int32, rows + 1 of them once a row is in */
    Py_ssize_t nulls;
} ICol;

typedef struct {
    ICol col[2];                      /* before, after */
    Py_ssize_t rows;                  /* rows held */
    Py_ssize_t handed;                /* rows handed over so far (images_encode's first) */
} Images;

enum { A_INT8 = 1, A_INT16, A_INT32, A_INT64, A_FLOAT32, A_FLOAT64, A_DATE32, A_TIMESTAMP,
       A_DECIMAL128, A_STRING, A_BINARY, A_COUNT };
static const int A_WIDTH[A_COUNT] = {[A_INT8] = 1, [A_INT16] = 2, [A_INT32] = 4, [A_INT64] = 8,
                                     [A_FLOAT32] = 4, [A_FLOAT64] = 8, [A_DATE32] = 4,
                                     [A_TIMESTAMP] = 8, [A_DECIMAL128] = 16};

/* Rows a column's buffers are reserved for at once: the stores of a row then check
 * nothing but a string's bytes. */
#define A_CHUNK 64

/* A bytearray filled up to len; p and cap: its bytes and size, kept with it; last: the
 * size of the last one handed over (abuf_take), where the next one starts: a row group's
 * buffers are then one allocation, not a doubling and copy per size. */
typedef struct { PyObject *ba; unsigned char *p; Py_ssize_t len, cap, last; } ABuf;

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

/* ---- defined in one section, used by another ------------------------------------------ */

extern PyObject *sp_Fallback;
extern PyObject *sp_DecimalType;
int sp_buf_grow(Buf *b, Py_ssize_t n);
int sp_json_str(Buf *b, const unsigned char *s, Py_ssize_t n);
int sp_text_str(Buf *b, const unsigned char *s, Py_ssize_t n);
int sp_utf8_valid(const unsigned char *s, Py_ssize_t n);
PyObject *sp_compile_walk(PyObject *self, PyObject *args);
int sp_udigits_any(char *out, uint64_t v, int width);
int sp_datetime_fmt(char *buf, long long year, long long month, long long day,
                    long long hour, long long minute, long long second, int64_t usec, int n);
int sp_time_fmt(char *buf, int negative, long long hours, long long minutes,
                long long seconds, int64_t usec, int n);
void sp_civil(int64_t z, long long *y, long long *m, long long *d);
int sp_timestamp_fmt(char *buf, uint64_t seconds, int64_t usec, int n);
int sp_decimal_unsigned(const unsigned char *p, int precision, int scale, unsigned char *raw,
                        int *negative);
int sp_decimal_fmt(char *text, const unsigned char *p, int precision, int scale, int *size_out);
PyObject *sp_text_value(const Step *s, const unsigned char *p, Py_ssize_t n);
PyObject *sp_python_value(PyObject *pystep, PyObject *data_obj, Py_ssize_t pos,
                          Py_ssize_t end, PyObject **col, Py_ssize_t *np);
PyObject *sp_value(const Step *s, PyObject *pystep, PyObject *data_obj,
                   const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end);
PyObject *sp_fall_back(void);
int sp_event_walks(int kind, PyObject *cap, PyObject *cap_after, PyObject *steps,
                   PyObject *steps_after, Walk **w, Walk **wa, PyObject **psa);
PyObject *sp_decode_event(PyObject *self, PyObject *args);
int sp_shortest(double a, char *D, int *nd, int *k);
int sp_put_double(Enc *e, double d);
int sp_put_python(Enc *e, PyObject *pystep, PyObject *data_obj, Py_ssize_t *ppos,
                  Py_ssize_t end);
int sp_put_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
                 const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end);
PyObject *sp_sql_values(PyObject *self, PyObject *args);
int sp_crc_image(Enc *e, const Walk *w, PyObject *pysteps, PyObject *data_obj,
                 const unsigned char *data, Py_ssize_t *ppos, Py_ssize_t end, uint32_t *crc);
int sp_put_rows(Enc *e, int kind, const Walk *w, const Walk *wa, PyObject *steps,
                PyObject *steps_after, PyObject *data_obj, PyObject *head, PyObject *mid,
                PyObject *tail, Py_ssize_t *last_start, Py_ssize_t *count);
PyObject *sp_encode_rows(PyObject *self, PyObject *args);
PyObject *sp_images_builder(PyObject *self, PyObject *noargs);
void sp_images_cut(Images *im, Py_ssize_t rows);
int sp_image_rows(Images *im, Enc *e, int kind, const Walk *w, const Walk *wa,
                  PyObject *steps, PyObject *steps_after, PyObject *data_obj);
PyObject *sp_images_encode(PyObject *self, PyObject *args);
PyObject *sp_images_put(PyObject *self, PyObject *args);
PyObject *sp_images_rows(PyObject *self, PyObject *cap);
PyObject *sp_images_truncate(PyObject *self, PyObject *args);
PyObject *sp_images_finish(PyObject *self, PyObject *args);
PyObject *sp_encode_run(PyObject *self, PyObject *args);
PyObject *sp_checksum_rows(PyObject *self, PyObject *args);
PyObject *sp_checksum_text(PyObject *self, PyObject *args);
PyObject *
sp_tune_allocator(PyObject *self, PyObject *noargs);
PyObject *sp_typed_builder(PyObject *self, PyObject *args);
int sp_acol_room(ACol *c, Py_ssize_t n);
int sp_acol_nulls(ACol *c, Py_ssize_t n);
int sp_acol_bytes(ACol *c, const unsigned char *p, Py_ssize_t n);
PyObject *sp_typed_append(PyObject *self, PyObject *args);
int sp_typed_part_open(PyObject *part, long long ts);
int sp_typed_part_add(PyObject *part, int kind, const Walk *w, const Walk *wa,
                      const unsigned char *data, Py_ssize_t end, Py_ssize_t rows);
PyObject *sp_abuf_take(ABuf *b);
PyObject *sp_typed_finish(PyObject *self, PyObject *cap);
PyObject *sp_typed_size(PyObject *self, PyObject *cap);
PyObject *sp_shred_builder(PyObject *self, PyObject *noargs);
PyObject *sp_shred_add(PyObject *self, PyObject *args);
PyObject *sp_shred_finish(PyObject *self, PyObject *cap);
PyObject *sp_shred_size(PyObject *self, PyObject *cap);
PyObject *sp_compile_rewrite(PyObject *self, PyObject *args);
PyObject *sp_rewrite_rows(PyObject *self, PyObject *args);
PyObject *sp_rewrite_run(PyObject *self, PyObject *args);
PyObject *sp_kind_widths(PyObject *self, PyObject *noargs);

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

static inline int put_bytes(Buf *b, PyObject *bytes) {
    return put(b, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
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

/* v < 100 as two digits */
static inline int d2(char *out, unsigned v) {
    out[0] = DIGIT_PAIRS[2 * v];
    out[1] = DIGIT_PAIRS[2 * v + 1];
    return 2;
}

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
    return sp_udigits_any(out, v, width);
}

/* A string literal copied to out; its length (sizeof - 1, not counted by hand). */
#define LIT(out, lit) (memcpy((out), (lit), sizeof(lit) - 1), (int)(sizeof(lit) - 1))

/* hh:mm:ss, each part two digits at least (a TIME's hours may take three). */
static inline int hms(char *out, uint64_t hours, uint64_t minutes, uint64_t seconds) {
    int n = udigits(out, hours, 2);
    out[n++] = ':';
    n += udigits(out + n, minutes, 2);
    out[n++] = ':';
    return n + udigits(out + n, seconds, 2);
}

/* Bytes as lowercase hex pairs from o; where the writing ended (room for 2 n made). */
static inline char *hex_pairs(char *o, const unsigned char *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        *o++ = HEXDIGITS[p[i] >> 4];
        *o++ = HEXDIGITS[p[i] & 15];
    }
    return o;
}

/* 0.D x 10^k (nd digits D, no leading or trailing zero) written plainly: 0.00DD, DD00.0 or
 * D.DD - what repr and Java's Double.toString both write within their plain ranges (the
 * callers choose the range and the exponent form).  Returns its length. */
static inline int plain_digits(char *out, const char *D, int nd, int k) {
    int n = 0;
    if (k <= 0) {
        out[n++] = '0'; out[n++] = '.';
        for (int i = 0; i < -k; i++) out[n++] = '0';
        memcpy(out + n, D, nd);
        return n + nd;
    }
    if (nd <= k) {
        memcpy(out, D, nd); n = nd;
        for (int i = nd; i < k; i++) out[n++] = '0';
        out[n++] = '.'; out[n++] = '0';
        return n;
    }
    memcpy(out, D, k);
    out[k] = '.';
    memcpy(out + k + 1, D + k, nd - k);
    return nd + 1;
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
    u->dec.len = sp_decimal_fmt(u->dec.text, p, s->precision, s->scale, &size);
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
        return sp_timestamp_fmt(buf, t->epoch, t->usec, t->frac);
    case 'C':
        return sp_datetime_fmt(buf, t->year, (long long)t->month, (long long)t->day, (long long)t->hour,
                               (long long)t->minute, (long long)t->second, t->usec, t->frac);
    default:
        return sp_time_fmt(buf, t->neg, (long long)t->hour, (long long)t->minute, (long long)t->second,
                           t->usec, t->frac);
    }
}

/* A DECIMAL's bytes at p (typed_value hands them to decimal128 as they are, without the
 * text unpack formats); -1 when they are not all there. */
LAYOUT int decimal_size(const Step *s, Py_ssize_t avail) {
    return s->kind != K_DECIMAL || avail < s->width ? -1 : (int)s->width;
}

static inline int put_quoted(Enc *e, const char *s, int n) {
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
static inline int put_int(Enc *e, int64_t v) {
    char tmp[32];
    int n = 0;
    if (v < 0) tmp[n++] = '-';
    n += udigits(tmp + n, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 1);
    if (e->bigint && (v > SAFE_INTEGER || v < -SAFE_INTEGER)) return put_quoted(e, tmp, n);
    PUT(tmp, n);
    return 0;
}

static inline int put_uint(Enc *e, uint64_t v) {
    char tmp[32];
    int n = udigits(tmp, v, 1);
    if (e->bigint && v > (uint64_t)SAFE_INTEGER) return put_quoted(e, tmp, n);
    PUT(tmp, n);
    return 0;
}

static inline void crc_add(uint32_t *crc, const unsigned char *p, Py_ssize_t n) {
    while (n > 0) {             /* zlib takes uInt lengths */
        uInt chunk = n > (1 << 30) ? (uInt)1 << 30 : (uInt)n;
        *crc = (uint32_t)crc32(*crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
}

/* An integer, BIT, ENUM index or double's bits: the UINT64 little-endian. */
static inline void crc_u64(uint32_t *crc, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    crc_add(crc, b, 8);
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

/* 'text' with each byte c for which escapes[c] is set written as \ and escapes[c]. */
static inline int quoted_escaped(Buf *b, const unsigned char *s, Py_ssize_t n, const char *escapes) {
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

/* A string value's bytes as decode_string gives them: a BINARY(N) value shorter than N
 * padded back to N bytes with 0x00 into *owned (the caller PyMem_Frees it), else the
 * row's own bytes; *len is updated.  NULL: out of memory. */
static inline const unsigned char *string_bytes(const Step *s, const unsigned char *p,
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

#endif
