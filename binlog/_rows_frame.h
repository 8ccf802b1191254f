/*
 * Framing of runs of rows events, shared by binlog/_scan.c (skip_run, count_run) and
 * binlog/_speedups_run.c (encode_run): the 19-byte event header (sql/log_event.h
 * LOG_EVENT_HEADER_LEN: timestamp, type code, server_id, event size, log_pos, flags),
 * the log_pos chain binlog/stream.py follows, CRC32 footers, and the rows post-header
 * (binlog/events/rows.py: table_id, flags, the v2 var-header, the packed column count,
 * the bitmaps).  Every read is bounded by the caller's end; anything unexpected makes the
 * run stop, and the Python path reads that event (and raises the typed error).
 */
#ifndef BINLOG_ROWS_FRAME_H
#define BINLOG_ROWS_FRAME_H

#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#define FRAME_HEADER_LEN 19
#define FRAME_MAX_EVENT ((1LL << 30) + 4096)
#define FRAME_U32 0xFFFFFFFFLL

static inline uint64_t frame_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FRAME_CLMUL 1

/* The CRC32 (zlib's: the reflected polynomial 0xEDB88320) of buf[0:len], len a multiple
 * of 16 and at least 64, from the inverted running value ``crc`` (returned inverted), by
 * carry-less multiplication: four 128-bit lanes folded forward 512 bits at a time, then
 * into one lane, to 64 bits, and Barrett-reduced to 32 ("Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction", Intel, 2009; the constants are x^k mod P(x)
 * for the fold distances, P(x)' and floor(x^64 / P(x))', bit-reflected).  zlib 1.2's
 * table walk does about 4 GB/s here, this about four times that; every binlog event's
 * footer is one (binlog/_scan.c, _speedups_run.c and _speedups_rewrite.c check and write
 * them). */
__attribute__((target("pclmul,sse4.1")))
static uint32_t frame_crc32_clmul(uint32_t crc, const unsigned char *buf, Py_ssize_t len) {
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
    __m128i x1 = _mm_loadu_si128((const __m128i *)buf), x2 = _mm_loadu_si128((const __m128i *)(buf + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(buf + 32)), x4 = _mm_loadu_si128((const __m128i *)(buf + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    buf += 64;
    len -= 64;
    for (; len >= 64; buf += 64, len -= 64) {         /* four lanes, 512 bits a step */
        __m128i a1 = _mm_clmulepi64_si128(x1, k1k2, 0x00), a2 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        __m128i a3 = _mm_clmulepi64_si128(x3, k1k2, 0x00), a4 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, a1), _mm_loadu_si128((const __m128i *)buf));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, a2), _mm_loadu_si128((const __m128i *)(buf + 16)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, a3), _mm_loadu_si128((const __m128i *)(buf + 32)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, a4), _mm_loadu_si128((const __m128i *)(buf + 48)));
    }
    __m128i lanes[3] = {x2, x3, x4};
    for (int i = 0; i < 3; i++) {                      /* the four lanes into one */
        __m128i a = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), a), lanes[i]);
    }
    for (; len >= 16; buf += 16, len -= 16) {          /* then 128 bits a step */
        __m128i a = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), a),
                           _mm_loadu_si128((const __m128i *)buf));
    }
    /* 128 bits to 64, then Barrett's reduction to 32 */
    x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5, 0x00), x2);
    x2 = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly, 0x10), low32);
    x1 = _mm_xor_si128(x1, _mm_clmulepi64_si128(x2, poly, 0x00));
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

/* zlib's crc32 of p[0:n]: the carry-less kernel above for the 16-byte blocks where the
 * CPU has PCLMULQDQ (and n is at least 64), zlib for the rest. */
static uint32_t frame_crc32(const unsigned char *p, Py_ssize_t n) {
    uLong crc = crc32(0L, Z_NULL, 0);
#ifdef FRAME_CLMUL
    if (n >= 64 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
        Py_ssize_t blocks = n & ~(Py_ssize_t)15;
        crc = ~frame_crc32_clmul(~(uint32_t)crc, p, blocks) & 0xFFFFFFFFu;
        p += blocks;
        n -= blocks;
    }
#endif
    Py_ssize_t done = 0;
    while (done < n) {                 /* crc32 takes a uInt length */
        uInt step = n - done > (1 << 30) ? (1u << 30) : (uInt)(n - done);
        crc = crc32(crc, p + done, step);
        done += step;
    }
    return (uint32_t)crc;
}

/* One event of a run: where it is and what its header says. */
typedef struct {
    long long at, ts, size, log_pos;
    int code, width, chained;
} Frame;

/* The header at buf[pos] (absolute offset ``at``) as the next event of a run: 1 when it
 * is a rows event (widths[code] 4 or 6) wholly in buf[pos:end], starting before
 * stop_offset (-1: none), of a size from common_len + checksum_len to max_size, that
 * keeps the log_pos chain where strict_chain asks for it (stream.py, skip mode without
 * CRCs); else 0. */
static int frame_event(const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end, long long at,
                       const char *widths, int common_len, int checksum_len, long long max_size,
                       long long stop_offset, long long last_log_pos, long chain_run,
                       int strict_chain, Frame *f) {
    if (end - pos < FRAME_HEADER_LEN) return 0;
    const unsigned char *h = buf + pos;
    f->at = at;
    f->code = h[4];
    f->width = (unsigned char)widths[f->code];
    if (f->width != 4 && f->width != 6) return 0;
    if (stop_offset >= 0 && at >= stop_offset) return 0;
    f->ts = (long long)frame_le(h, 4);
    f->size = (long long)frame_le(h + 9, 4);
    f->log_pos = (long long)frame_le(h + 13, 4);
    if (f->size < common_len + checksum_len || f->size > max_size) return 0;
    if (f->size > end - pos) return 0;                  /* not all buffered */
    f->chained = f->log_pos == 0 || f->log_pos == ((at + f->size) & FRAME_U32)
                 || (last_log_pos >= 0 && f->log_pos == ((last_log_pos + f->size) & FRAME_U32));
    if (strict_chain && chain_run >= 2 && !f->chained) return 0;
    return 1;
}

/* After an event is taken: the log_pos chain as stream.py _note_chain follows it. */
static void frame_note_chain(const Frame *f, long *chain_run, long long *last_log_pos) {
    if (f->log_pos) {
        *chain_run = f->chained ? *chain_run + 1 : 0;
        *last_log_pos = f->log_pos;
    }
}

/* Whether the event's CRC32 footer holds (stream.py verify_crc). */
static int frame_crc_ok(const unsigned char *h, long long size) {
    return frame_crc32(h, (Py_ssize_t)size - 4) == (uint32_t)frame_le(h + size - 4, 4);
}

/* Plain rows events (binlog/scan.py COUNT_RUN_CODES): v1 and v2 WRITE/UPDATE/DELETE. */
static int frame_plain_rows(int code) {
    return (code >= 23 && code <= 25) || (code >= 30 && code <= 32);
}

/* The rows event body b[0:n] of a plain type ``code``: the entry registered for it in
 * entries[table_id][scan.count_key(code, columns, bitmaps)] (borrowed), with its
 * table_id and where its rows data starts; NULL when it is not framed as the decoder
 * frames it or nothing is registered (or, with an exception set, on a Python error). */
static PyObject *frame_entry(const unsigned char *b, Py_ssize_t n, int code, int width,
                             PyObject *entries, uint64_t *table_id, Py_ssize_t *data_at) {
    int update = code == 24 || code == 31;
    if (n < width + 2) return NULL;
    *table_id = frame_le(b, width);
    Py_ssize_t pos = width + 2;                         /* table_id, flags */
    if (code >= 30) {
        if (n - pos < 2) return NULL;
        Py_ssize_t var_len = (Py_ssize_t)frame_le(b + pos, 2);
        if (var_len < 2 || n - pos < var_len) return NULL;
        pos += var_len;
    }
    if (n - pos < 1) return NULL;
    uint32_t ncols = b[pos++];
    if (ncols == 0xFC) {
        if (n - pos < 2) return NULL;
        ncols = (uint32_t)frame_le(b + pos, 2);
        pos += 2;
    } else if (ncols >= 0xFB) {
        return NULL;
    }
    Py_ssize_t nbits = (Py_ssize_t)((ncols + 7) / 8) * (update ? 2 : 1);
    if (n - pos < nbits) return NULL;
    PyObject *id = PyLong_FromUnsignedLongLong(*table_id);
    if (!id) return NULL;
    PyObject *table = PyDict_GetItemWithError(entries, id);      /* borrowed */
    Py_DECREF(id);
    if (!table || !PyDict_Check(table)) return NULL;
    PyObject *key = PyBytes_FromStringAndSize(NULL, 5 + nbits);
    if (!key) return NULL;
    unsigned char *k = (unsigned char *)PyBytes_AS_STRING(key);
    k[0] = (unsigned char)code;
    for (int i = 0; i < 4; i++) k[1 + i] = (unsigned char)(ncols >> (8 * i));
    memcpy(k + 5, b + pos, (size_t)nbits);
    PyObject *entry = PyDict_GetItemWithError(table, key);      /* borrowed */
    Py_DECREF(key);
    *data_at = pos + nbits;
    return entry;
}

#endif
