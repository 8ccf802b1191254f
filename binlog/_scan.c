/*
 * Optional compiled walks that look at lengths only, never at values (the fast path of
 * filters and statistics: a skipped event is stepped over, never decoded):
 *
 * skip_run: steps over a run of rows events the reader does not want (filtered tables,
 *     events before --start-datetime, event groups outside --start-gtid/--stop-gtid) by
 *     their header's size, with the same framing and log_pos-chain checks as
 *     binlog/stream.py does for one such event.  It stops - and leaves the event to the
 *     Python path - at the first event it is not sure to skip.
 * count_rows: the number of row images of one rows event, walking each image's NULL
 *     bitmap and value lengths from the column metadata (binlog stats).
 * count_run: steps over a run of rows events whose counting walks the reader registered,
 *     counting each one's rows as count_rows does (binlog stats without Python per event).
 *
 * The pure-Python reference of both is binlog/scan.py; tests compare the two.  Input is
 * attacker-controlled: every read is bounds-checked against the buffer's end, and
 * anything unexpected makes the function give up (None / -1) so the Python path decides
 * (and raises the typed error).  Layouts: the event header (sql/log_event.h
 * LOG_EVENT_HEADER_LEN, 19 bytes), rows events (binlog/events/rows.py), value lengths
 * (binlog/_speedups_decode.c value(), docs/binlog-formats.md sections 6-8).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "_rows_frame.h"
#include "_column_kinds.h"

#define HEADER_LEN FRAME_HEADER_LEN
#define MAX_EVENT_SIZE FRAME_MAX_EVENT
#define le frame_le

/* skip_run(buf, pos, end, offset, widths, common_header_len, checksum_len, table_ids,
 *          all_rows, before_ts, stop_ts, stop_offset, last_log_pos, chain_run,
 *          strict_chain, verify_crc)
 *
 * buf[pos:end]: buffered bytes, buf[pos] at absolute ``offset``.  widths: 256 bytes,
 * the table_id width (4 or 6) of each rows type code, 0 for other codes.  An event is
 * skipped when it is a rows event wholly in the buffer, starting before stop_offset
 * (-1: none), its size possible (common_header_len + checksum_len .. MAX_EVENT_SIZE),
 * with its table_id bytes inside it, and: its table_id is in table_ids ("filtered"),
 * or all_rows is set, or its timestamp is below before_ts ("counted": the reader counts
 * them as events it read) - and its timestamp below stop_ts (-1: none) for the counted
 * kind.  strict_chain: the stream is in skip mode without a CRC to go by, so an event
 * that breaks the log_pos chain is left to the Python path (it checks the next header).
 * last_log_pos -1 means none yet.  verify_crc: the "counted" kind is CRC32-checked (as
 * when it was decoded); an event whose CRC fails ends the run, and the stream's
 * decoding of it raises the ChecksumMismatchError.  The filtered kind never was.
 *
 * Returns None when the first event is not skipped, else (pos, filtered_events,
 * filtered_bytes, counted {type_code: events}, counted_bytes, last_log_pos, chain_run,
 * last_event_pos). */
static PyObject *skip_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    long long offset, before_ts, stop_ts, stop_offset, last_log_pos;
    const char *widths;
    Py_ssize_t widths_len;
    int common_len, checksum_len, all_rows, strict_chain, verify_crc;
    long chain_run;
    PyObject *table_ids;
    if (!PyArg_ParseTuple(args, "y*nnLy#iiOpLLLLlpp", &view, &pos, &end, &offset, &widths,
                          &widths_len, &common_len, &checksum_len, &table_ids, &all_rows,
                          &before_ts, &stop_ts, &stop_offset, &last_log_pos, &chain_run,
                          &strict_chain, &verify_crc))
        return NULL;
    if (widths_len != 256 || pos < 0 || end > view.len || pos > end || common_len < HEADER_LEN
        || common_len > 255 || checksum_len < 0 || checksum_len > 4
        || (table_ids != Py_None && !PyAnySet_Check(table_ids))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "skip_run: bad arguments");
        return NULL;
    }
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t start = pos, last_event = -1;
    long long filtered_n = 0, filtered_bytes = 0, counted_bytes = 0;
    long long counted[256];
    memset(counted, 0, sizeof counted);
    int failed = 0;
    Frame f;
    while (frame_event(buf, pos, end, offset + (pos - start), widths, common_len, checksum_len,
                       MAX_EVENT_SIZE, stop_offset, last_log_pos, chain_run, strict_chain, &f)) {
        const unsigned char *h = buf + pos;
        int code = f.code;
        long long ts = f.ts, size = f.size;
        if (common_len + f.width > size) break;         /* too short: the decoder says so */
        int filtered = 0;
        if (table_ids != Py_None) {
            PyObject *id = PyLong_FromUnsignedLongLong(le(h + common_len, f.width));
            if (!id) { failed = 1; break; }
            int hit = PySet_Contains(table_ids, id);
            Py_DECREF(id);
            if (hit < 0) { failed = 1; break; }
            filtered = hit;
        }
        if (!filtered) {
            if (!(all_rows || (before_ts >= 0 && ts < before_ts))) break;
            if (stop_ts >= 0 && ts >= stop_ts) break;
            /* size >= common_len + 4 >= 23 (checked above) */
            if (verify_crc && checksum_len == 4 && !frame_crc_ok(h, size)) break;
        }
        if (filtered) {
            filtered_n++;
            filtered_bytes += size;
        } else {
            counted[code]++;
            counted_bytes += size;
        }
        frame_note_chain(&f, &chain_run, &last_log_pos);
        last_event = pos;
        pos += (Py_ssize_t)size;
    }
    PyBuffer_Release(&view);
    if (failed) return NULL;
    if (last_event < 0) Py_RETURN_NONE;
    PyObject *by_type = PyDict_New();
    if (!by_type) return NULL;
    for (int c = 0; c < 256; c++) {
        if (!counted[c]) continue;
        PyObject *k = PyLong_FromLong(c), *v = PyLong_FromLongLong(counted[c]);
        if (!k || !v || PyDict_SetItem(by_type, k, v) < 0) {
            Py_XDECREF(k); Py_XDECREF(v); Py_DECREF(by_type);
            return NULL;
        }
        Py_DECREF(k); Py_DECREF(v);
    }
    return Py_BuildValue("nLLNLLln", pos, filtered_n, filtered_bytes, by_type, counted_bytes,
                         last_log_pos, chain_run, last_event);
}

/* One present column: 7 little-endian int32 (binlog/scan.py SPEC), and what unpack
 * works out of them once per walk: ``size``, the bytes of a fixed-size value, SIZE_PREFIXED
 * for a length-prefixed one (``prefix`` its length's bytes, ``limit`` the most it may
 * say, 0: any) or SIZE_NONE when the walk cannot step over the column (K_PY, metadata no
 * server writes, a NULL bit outside the bitmap): an image that holds a value of it
 * ends the walk. */
typedef struct { int32_t null_byte, mask, kind, n, length, precision, scale; int size, prefix;
                 uint64_t limit; } Spec;
#define SPEC_SIZE 28
#define SIZE_NONE (-1)
#define SIZE_PREFIXED (-2)

/* Bytes of a value of a fixed-size kind (_column_kinds.h); SIZE_PREFIXED: a
 * length-prefixed kind; SIZE_NONE: unknown. */
static int fixed_size(const Spec *s) {
    if (s->kind <= K_PY || s->kind >= K_COUNT) return SIZE_NONE;
    if (KIND_FIXED_BYTES[s->kind]) return KIND_FIXED_BYTES[s->kind];
    if (s->kind >= K_TS_HIRES && s->kind <= K_TIME2) return kind_temporal_bytes(s->kind, s->n);
    if (s->kind == K_DECIMAL) return decimal_bin_size(s->precision, s->scale);
    if (s->kind == K_BIT) return s->length >= 0 && s->length <= 8 ? s->length : SIZE_NONE;
    if (s->kind == K_ENUM) return s->length == 1 || s->length == 2 ? s->length : SIZE_NONE;
    return SIZE_PREFIXED;
}

static void unpack(Spec *out, const unsigned char *p, Py_ssize_t count, Py_ssize_t nbytes) {
    for (Py_ssize_t i = 0; i < count; i++, p += SPEC_SIZE) {
        int32_t f[7];
        for (int k = 0; k < 7; k++) f[k] = (int32_t)(uint32_t)le(p + 4 * k, 4);
        Spec *s = &out[i];
        s->null_byte = f[0]; s->mask = f[1]; s->kind = f[2]; s->n = f[3];
        s->length = f[4]; s->precision = f[5]; s->scale = f[6];
        s->size = fixed_size(s);
        s->prefix = 0;
        s->limit = 0;
        if (s->size == SIZE_PREFIXED) {
            if (s->kind == K_VARCHAR || s->kind == K_STRING) {
                s->prefix = s->length <= 255 ? 1 : 2;
                s->limit = s->length > 0 ? (uint64_t)s->length : 0;
            } else if (s->kind == K_BLOB) {
                s->prefix = s->length;
            }
            if (s->prefix < 1 || s->prefix > 4) s->size = SIZE_NONE;
        }
        if (s->null_byte < 0 || s->null_byte >= nbytes) {
            /* its NULL bit is outside the bitmap: no image can be read past it */
            s->null_byte = 0;
            s->mask = 0;
            s->size = SIZE_NONE;
        }
    }
}

/* The end of one row image at pos, or -1. */
static Py_ssize_t image_end(const unsigned char *d, Py_ssize_t pos, Py_ssize_t end,
                            const Spec *specs, Py_ssize_t count, Py_ssize_t nbytes) {
    if (nbytes < 0 || end - pos < nbytes) return -1;
    const unsigned char *nulls = d + pos;
    pos += nbytes;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Spec *s = &specs[i];
        if (s->mask && nulls[s->null_byte] & s->mask) continue;    /* (mask 0: see unpack) */
        int size = s->size;
        if (size >= 0) {
            if (end - pos < size) return -1;
            pos += size;
            continue;
        }
        if (size == SIZE_NONE || end - pos < s->prefix) return -1;
        uint64_t len = le(d + pos, s->prefix);
        pos += s->prefix;
        if ((s->limit && len > s->limit) || (uint64_t)(end - pos) < len) return -1;
        pos += (Py_ssize_t)len;
    }
    return pos;
}

/* count_rows(data, kind, specs, nbytes, specs_after, nbytes_after) -> rows, or -1 when
 * the images do not fill the data exactly (the decoding path then says why).  kind: 0
 * insert, 1 update (a before and an after image per row), 2 delete. */
static PyObject *count_rows(PyObject *self, PyObject *args) {
    Py_buffer data, sb, sa;
    int kind;
    Py_ssize_t nb, na;
    if (!PyArg_ParseTuple(args, "y*iy*ny*n", &data, &kind, &sb, &nb, &sa, &na)) return NULL;
    long long rows = 0;
    if (sb.len % SPEC_SIZE || sa.len % SPEC_SIZE || kind < 0 || kind > 2) {
        rows = -1;
    } else {
        Py_ssize_t cb = sb.len / SPEC_SIZE, ca = sa.len / SPEC_SIZE;
        Spec *specs = PyMem_Malloc((size_t)(cb + ca + 1) * sizeof(Spec));
        if (!specs) {
            PyBuffer_Release(&data); PyBuffer_Release(&sb); PyBuffer_Release(&sa);
            return PyErr_NoMemory();
        }
        unpack(specs, (const unsigned char *)sb.buf, cb, nb);
        unpack(specs + cb, (const unsigned char *)sa.buf, ca, na);
        const unsigned char *d = (const unsigned char *)data.buf;
        Py_ssize_t pos = 0, end = data.len;
        while (pos < end) {
            Py_ssize_t next = image_end(d, pos, end, specs, cb, nb);
            if (next >= 0 && kind == 1) next = image_end(d, next, end, specs + cb, ca, na);
            if (next <= pos) { rows = -1; break; }  /* no progress: let the decoder say why */
            pos = next;
            rows++;
        }
        PyMem_Free(specs);
    }
    PyBuffer_Release(&data); PyBuffer_Release(&sb); PyBuffer_Release(&sa);
    return PyLong_FromLongLong(rows);
}

/* The specs of a registered walk, unpacked once: the walk (borrowed) they were made
 * from, and ``count`` (before) + ``count_after`` specs.  count_run keeps the last one: a
 * run's events are mostly of one table and layout. */
typedef struct {
    PyObject *walk;
    Py_ssize_t nbytes, nbytes_after, count, count_after;
    Spec *specs;
} Walked;

/* The walk (bytes specs, nbytes, bytes specs_after, nbytes_after) into *w, kept when it
 * is w's already; 0, or -1 (not such a walk, out of memory: the event is not counted). */
static int walked(PyObject *walk, Walked *w) {
    if (walk == w->walk) return 0;
    if (!PyTuple_Check(walk) || PyTuple_GET_SIZE(walk) != 4) return -1;
    PyObject *sb = PyTuple_GET_ITEM(walk, 0), *sa = PyTuple_GET_ITEM(walk, 2);
    Py_ssize_t nb = PyLong_AsSsize_t(PyTuple_GET_ITEM(walk, 1));
    Py_ssize_t na = PyLong_AsSsize_t(PyTuple_GET_ITEM(walk, 3));
    if ((nb == -1 || na == -1) && PyErr_Occurred()) { PyErr_Clear(); return -1; }
    if (!PyBytes_Check(sb) || !PyBytes_Check(sa) || PyBytes_GET_SIZE(sb) % SPEC_SIZE
        || PyBytes_GET_SIZE(sa) % SPEC_SIZE) return -1;
    Py_ssize_t cb = PyBytes_GET_SIZE(sb) / SPEC_SIZE, ca = PyBytes_GET_SIZE(sa) / SPEC_SIZE;
    Spec *specs = PyMem_Realloc(w->specs, (size_t)(cb + ca + 1) * sizeof(Spec));
    if (!specs) { PyErr_Clear(); return -1; }
    w->specs = specs;
    unpack(specs, (const unsigned char *)PyBytes_AS_STRING(sb), cb, nb);
    unpack(specs + cb, (const unsigned char *)PyBytes_AS_STRING(sa), ca, na);
    w->walk = walk;
    w->nbytes = nb;
    w->nbytes_after = na;
    w->count = cb;
    w->count_after = ca;
    return 0;
}

/* Rows of the image data d[0:n] along a registered walk (w); -1 when they do not fill
 * it exactly. */
static long long count_images(const unsigned char *d, Py_ssize_t n, int kind, const Walked *w) {
    long long rows = 0;
    Py_ssize_t pos = 0;
    while (pos < n) {
        Py_ssize_t next = image_end(d, pos, n, w->specs, w->count, w->nbytes);
        if (next >= 0 && kind == 1)
            next = image_end(d, next, n, w->specs + w->count, w->count_after, w->nbytes_after);
        if (next <= pos) { rows = -1; break; }
        pos = next;
        rows++;
    }
    return rows;
}

/* The rows of the rows event body b[0:n] of a plain type ``code`` along the walk
 * registered for it (frame_entry), or -1 (not framed as the decoder frames it, nothing
 * registered, images that do not fill it); -2: a Python error. */
static long long count_event(const unsigned char *b, Py_ssize_t n, int code, int width,
                             PyObject *walks, uint64_t *table_id, Walked *w) {
    Py_ssize_t data_at = 0;
    PyObject *walk = frame_entry(b, n, code, width, walks, table_id, &data_at);
    if (!walk) return PyErr_Occurred() ? -2 : -1;
    if (walked(walk, w) < 0) return -1;
    int kind = (code == 23 || code == 30) ? 0 : (code == 24 || code == 31) ? 1 : 2;
    return count_images(b + data_at, n - data_at, kind, w);
}

/* count_run(buf, pos, end, offset, widths, common_header_len, checksum_len, walks,
 *           stop_ts, stop_offset, last_log_pos, chain_run, strict_chain, verify_crc)
 *
 * As skip_run frames and checks events (sizes, the log_pos chain, CRC32 with
 * verify_crc), over consecutive plain rows events (binlog/scan.py COUNT_RUN_CODES)
 * starting before stop_offset with a timestamp below stop_ts (-1: none), each counted
 * along the walk ``walks[table_id][count_key]`` (registered by the reader from events it
 * counted itself).  Stops at the first event it cannot count; the stream reads that one.
 *
 * Returns None when the first event is not counted, else (pos, [(offset, code,
 * table_id, rows, size, ts, server_id), ...], last_log_pos, chain_run, last_event_pos). */
static PyObject *count_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    long long offset, stop_ts, stop_offset, last_log_pos;
    const char *widths;
    Py_ssize_t widths_len;
    int common_len, checksum_len, strict_chain, verify_crc;
    long chain_run;
    PyObject *walks;
    if (!PyArg_ParseTuple(args, "y*nnLy#iiO!LLLlpp", &view, &pos, &end, &offset, &widths,
                          &widths_len, &common_len, &checksum_len, &PyDict_Type, &walks,
                          &stop_ts, &stop_offset, &last_log_pos, &chain_run, &strict_chain,
                          &verify_crc))
        return NULL;
    if (widths_len != 256 || pos < 0 || end > view.len || pos > end || common_len < HEADER_LEN
        || common_len > 255 || checksum_len < 0 || checksum_len > 4) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "count_run: bad arguments");
        return NULL;
    }
    PyObject *counted = PyList_New(0);
    if (!counted) { PyBuffer_Release(&view); return NULL; }
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t start = pos, last_event = -1;
    int failed = 0;
    Frame f;
    Walked walk = {0};      /* (the walks are held by ``walks`` for the whole call) */
    while (frame_event(buf, pos, end, offset + (pos - start), widths, common_len, checksum_len,
                       MAX_EVENT_SIZE, stop_offset, last_log_pos, chain_run, strict_chain, &f)) {
        const unsigned char *h = buf + pos;
        if (!frame_plain_rows(f.code) || (stop_ts >= 0 && f.ts >= stop_ts)) break;
        uint64_t table_id = 0;
        long long rows = count_event(h + common_len, (Py_ssize_t)(f.size - common_len - checksum_len),
                                     f.code, f.width, walks, &table_id, &walk);
        if (rows == -2) { failed = 1; break; }
        if (rows < 0) break;
        if (verify_crc && checksum_len == 4 && !frame_crc_ok(h, f.size)) break;
        PyObject *item = Py_BuildValue("(LiKLLLK)", f.at, f.code, (unsigned long long)table_id, rows,
                                       f.size, f.ts, (unsigned long long)le(h + 5, 4));
        if (!item || PyList_Append(counted, item) < 0) { Py_XDECREF(item); failed = 1; break; }
        Py_DECREF(item);
        frame_note_chain(&f, &chain_run, &last_log_pos);
        last_event = pos;
        pos += (Py_ssize_t)f.size;
    }
    PyMem_Free(walk.specs);
    PyBuffer_Release(&view);
    if (failed) { Py_DECREF(counted); return NULL; }
    if (last_event < 0) { Py_DECREF(counted); Py_RETURN_NONE; }
    return Py_BuildValue("nNLln", pos, counted, last_log_pos, chain_run, last_event);
}

/* frame_packets(buf, pos, end, seq, passing, max_out)
 *
 * binlog serve's dump without per-event Python: the whole events of buf[pos:end] (a
 * served binlog's bytes from an event boundary) as the packets of the dump stream, each
 * a 3-byte little-endian length, the sequence number (from ``seq``, mod 256) and the
 * payload 0x00 + the event as it is (sql/sql_repl.cc send_event_to_slave; net_serv.cc
 * my_net_write).  It stops before an event whose type code ``passing`` (256 bytes) marks
 * 0 (the dump rewrites or leaves those out), one whose size is under a header's, one not
 * wholly in buf[pos:end], one whose payload is a multi-packet's (0xFFFFFF bytes or
 * more), and once max_out bytes are framed.  Returns None when it frames nothing, else
 * (packets, pos, seq, events).  binlog/scan.py frame_packets_py is its reference. */
static PyObject *frame_packets(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_out;
    int seq;
    const char *passing;
    Py_ssize_t passing_len;
    if (!PyArg_ParseTuple(args, "y*nniy#n", &view, &pos, &end, &seq, &passing, &passing_len, &max_out))
        return NULL;
    if (passing_len != 256 || pos < 0 || end > view.len || pos > end || seq < 0 || seq > 255) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "frame_packets: bad arguments");
        return NULL;
    }
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t total = 0, count = 0, at = pos;
    while (end - at >= HEADER_LEN && total < max_out) {     /* the room the packets take */
        const unsigned char *h = buf + at;
        long long size = (long long)le(h + 9, 4);
        if (size < HEADER_LEN || size > end - at || size + 1 >= 0xFFFFFF || !passing[h[4]]) break;
        total += 4 + 1 + (Py_ssize_t)size;
        at += (Py_ssize_t)size;
        count++;
    }
    if (!count) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) { PyBuffer_Release(&view); return NULL; }
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < count; i++) {
        const unsigned char *h = buf + pos;
        Py_ssize_t size = (Py_ssize_t)le(h + 9, 4), length = size + 1;
        o[0] = (unsigned char)length;
        o[1] = (unsigned char)(length >> 8);
        o[2] = (unsigned char)(length >> 16);
        o[3] = (unsigned char)seq;
        o[4] = 0x00;
        memcpy(o + 5, h, (size_t)size);
        o += 5 + size;
        pos += size;
        seq = (seq + 1) & 0xFF;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("Nnin", out, pos, seq, count);
}

/* crc32(data) -> int: the CRC32 every compiled run checks and writes (frame_crc32); the
 * tests hold it to zlib.crc32. */
static PyObject *crc32_of(PyObject *self, PyObject *args) {
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data)) return NULL;
    uint32_t crc = frame_crc32((const unsigned char *)data.buf, data.len);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLong(crc);
}

static PyMethodDef methods[] = {
    {"crc32", crc32_of, METH_VARARGS, "crc32(data) -> the CRC32 of the runs' footers (zlib's)."},
    {"frame_packets", frame_packets, METH_VARARGS,
     "frame_packets(buf, pos, end, seq, passing, max_out) -> None | (packets, pos, seq, events):\n"
     "whole events as the packets of a dump stream (binlog serve)."},
    {"skip_run", skip_run, METH_VARARGS, "Step over a run of unwanted rows events by length."},
    {"count_rows", count_rows, METH_VARARGS, "Count the row images of one rows event."},
    {"count_run", count_run, METH_VARARGS, "Count the rows of a run of rows events."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__scan(void) {
    return PyModule_Create(&module);
}
