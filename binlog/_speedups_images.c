#include "_speedups.h"

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
PyObject *sp_images_builder(PyObject *self, PyObject *noargs) {
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

void sp_images_cut(Images *im, Py_ssize_t rows) {
    for (int c = 0; c < 2; c++) icol_cut(&im->col[c], rows);
    im->rows = rows;
}

/* The images of one rows event's rows, each row's before (kind 1, 2) and after (kind 0,
 * 1) into their columns, a null where the row has none. */
int sp_image_rows(Images *im, Enc *e, int kind, const Walk *w, const Walk *wa,
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
                int rc = sp_put_image(e, c == 1 && kind == 1 ? wa : w, c == 1 && kind == 1 ? steps_after : steps,
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
PyObject *sp_images_encode(PyObject *self, PyObject *args) {
    PyObject *cap, *data_obj, *cw, *cwa, *steps, *steps_after, *render;
    int kind, flags;
    if (!PyArg_ParseTuple(args, "OO!iOOO!O!iO", &cap, &PyBytes_Type, &data_obj, &kind, &cw, &cwa,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after, &flags, &render))
        return NULL;
    Images *im = PyCapsule_GetPointer(cap, "binlog.images");
    if (!im) return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (sp_event_walks(kind, cw, cwa, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
    Enc e = {{0}, 0, flags & 1, (flags & 2) != 0, render, 0, NULL};
    Py_ssize_t first = im->rows;
    if (sp_image_rows(im, &e, kind, w, wa, steps, psa, data_obj) < 0) {
        sp_images_cut(im, first);          /* all of the event's rows or none */
        return sp_fall_back();
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
    if (!sp_utf8_valid(p, n)) {
        PyErr_SetString(PyExc_ValueError, "an image is not UTF-8");
        return -1;
    }
    if (put(&c->data, (const char *)p, n) < 0) return -1;
    return icol_end(c, row, 1);
}

/* images_put(builder, befores, afters) -> first */
PyObject *sp_images_put(PyObject *self, PyObject *args) {
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
                sp_images_cut(im, first);
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
PyObject *sp_images_rows(PyObject *self, PyObject *cap) {
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

PyObject *sp_images_truncate(PyObject *self, PyObject *args) {
    Py_ssize_t held;
    Images *im = images_args(args, 1, &held);
    if (!im) return NULL;
    sp_images_cut(im, held);
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
PyObject *sp_images_finish(PyObject *self, PyObject *args) {
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
            if (sp_buf_grow(&col->offsets, 4) < 0) goto fail;
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
