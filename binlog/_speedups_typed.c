#include "_speedups.h"

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

static int abuf_grow(ABuf *b, Py_ssize_t n) {
    if (!b->ba && !(b->ba = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
    if (n > PY_SSIZE_T_MAX / 4 - b->len) { PyErr_NoMemory(); return -1; }
    Py_ssize_t want = b->cap ? b->cap : b->last > 4096 ? b->last : 4096;
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
PyObject *sp_typed_builder(PyObject *self, PyObject *args) {
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
int sp_acol_room(ACol *c, Py_ssize_t n) {
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

/* n NULLs (the image an insert or a delete does not have), their room included. */
int sp_acol_nulls(ACol *c, Py_ssize_t n) {
    if (sp_acol_room(c, n) < 0) return -1;
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

int sp_acol_bytes(ACol *c, const unsigned char *p, Py_ssize_t n) {
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
        return sp_acol_bytes(c, (const unsigned char *)text, len);
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
        return sp_acol_bytes(c, (const unsigned char *)buf, temporal_fmt(buf, t));
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
    if (sp_decimal_unsigned(p, precision, scale, raw, &negative) < 0) return -1;
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
        int size, len = sp_decimal_fmt(text, p, s->precision, s->scale, &size);
        return len < 0 ? -1 : sp_acol_bytes(c, (const unsigned char *)text, len);
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
        if (!s->utf8 || !sp_utf8_valid(p, len)) return -1;
        return sp_acol_bytes(c, p, len);
    }
    if (c->type != A_BINARY || s->encoding) return -1;
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &len, &owned);
    if (!v) return -1;
    int rc = sp_acol_bytes(c, v, len);
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
    if (idx == 0) return sp_acol_bytes(c, (const unsigned char *)"", 0);
    Py_ssize_t n;
    const char *label = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(s->labels, idx - 1), &n);
    return label ? sp_acol_bytes(c, (const unsigned char *)label, n) : -1;
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
        if (avail - s->width < len || !sp_utf8_valid(p + s->width, len)) return -1;
        return sp_acol_bytes(c, p + s->width, len) < 0 ? -1 : s->width + len;
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
        if (sp_acol_room(&cols[k], A_CHUNK) < 0) return -1;
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
            if (sp_acol_nulls(&before[k], *count) < 0) return -1;
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
PyObject *sp_typed_append(PyObject *self, PyObject *args) {
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
    if (rc < 0) return sp_fall_back();
    return PyLong_FromSsize_t(count);
}

static Py_ssize_t builder_size(const Builder *b);

/* A typed part of an ingest run's entry (arrow_columns.ArrowRows.run_part): (builder,
 * map, map_after, day_start, day_end, alive, max_rows, max_bytes).  1 when it takes an
 * event of timestamp ts now: its table is still the one being filled (alive[0], cleared
 * when its rows are handed over), ts falls on its UTC day, and it holds fewer rows and
 * bytes than a row group (the caller writes the group, then the next event starts a new
 * table); 0 when not (the run ends before the event). */
int sp_typed_part_open(PyObject *part, long long ts) {
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
int sp_typed_part_add(PyObject *part, int kind, const Walk *w, const Walk *wa,
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

PyObject *sp_abuf_take(ABuf *b) {
    if (!b->ba && !(b->ba = PyByteArray_FromStringAndSize(NULL, 0))) return NULL;
    if (PyByteArray_Resize(b->ba, b->len) < 0) return NULL;
    PyObject *out = b->ba;
    b->ba = NULL;
    b->p = NULL;
    b->last = b->len;
    b->len = b->cap = 0;
    return out;
}

/* typed_finish(builder) -> [(rows, nulls, validity, values, data), ...] per column, the
 * buffers as bytearrays (values: the offsets of a STRING/BINARY column; data: its bytes,
 * else empty); the builder starts over. */
PyObject *sp_typed_finish(PyObject *self, PyObject *cap) {
    Builder *b = PyCapsule_GetPointer(cap, "binlog.arrow_builder");
    if (!b) return NULL;
    PyObject *out = PyList_New(b->count);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < b->count; k++) {
        ACol *c = &b->cols[k];
        if (c->var && c->values.len == 0 && sp_acol_room(c, 0) < 0) {     /* no row: the one offset 0 */
            Py_DECREF(out);
            return NULL;
        }
        c->validity.len = (c->rows + 7) >> 3;         /* the bytes cleared ahead dropped */
        PyObject *item = Py_BuildValue("nnNNN", c->rows, c->nulls, sp_abuf_take(&c->validity),
                                       sp_abuf_take(&c->values), sp_abuf_take(&c->data));
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

PyObject *sp_typed_size(PyObject *self, PyObject *cap) {
    Builder *b = PyCapsule_GetPointer(cap, "binlog.arrow_builder");
    if (!b) return NULL;
    return PyLong_FromSsize_t(builder_size(b));
}
