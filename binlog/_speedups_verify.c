#include "_speedups.h"

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
PyObject *sp_checksum_text(PyObject *self, PyObject *args) {
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
            if (!sp_utf8_valid((const unsigned char *)p, n)) goto fallback;
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
    return sp_fall_back();
}

/* The command line's process only (never a library user's: Spark, an API caller): glibc
   hands each multi-megabyte output or chunk buffer back to the kernel when it is freed
   (mmap above M_MMAP_THRESHOLD, the heap's top trimmed above M_TRIM_THRESHOLD), so every
   run faults its pages in afresh, ~70,000 page faults (0.1-0.15 s of system time) for a
   200 MB JSON dump.  Kept in the heap, they are reused.  Fixed values also turn off
   glibc's own threshold tuning (mallopt(3)); allocations above 16 MiB still get their own
   mapping.  False where there is no glibc. */
PyObject *
sp_tune_allocator(PyObject *self, PyObject *noargs)
{
#ifdef __GLIBC__
    if (mallopt(M_MMAP_THRESHOLD, 16 << 20) && mallopt(M_TRIM_THRESHOLD, 32 << 20))
        Py_RETURN_TRUE;
#endif
    Py_RETURN_FALSE;
}
