#include "_speedups.h"

/* ---- decode_event: a rows event's row dicts, each value as the pure decoders give it -----
 *
 * The compiled walk's first use (binlog/rows.py): the values unpack() reads, made the
 * Python objects binlog/types/ makes, and a Python decoder called for every other column;
 * fall_back() and event_walks() are shared by every walk over an event's images. */

/* A string value as decode_string gives it: string_bytes, decoded when an encoding is set. */
static PyObject *string_value(const Step *s, const unsigned char *p, Py_ssize_t len) {
    unsigned char *owned;
    const unsigned char *v = string_bytes(s, p, &len, &owned);
    if (!v) return NULL;
    PyObject *out = sp_text_value(s, v, len);
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
PyObject *sp_python_value(PyObject *pystep, PyObject *data_obj, Py_ssize_t pos,
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
    PyObject *r = sp_python_value(pystep, data_obj, *ppos, end, &col, &np);
    if (!r) return NULL;
    PyObject *v = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(v);
    Py_DECREF(r);
    *ppos = np;
    return v;
}

/* Decode one value; NULL (with or without an exception set) means: fall back. */
PyObject *sp_value(const Step *s, PyObject *pystep, PyObject *data_obj,
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
        v = PyObject_CallFunction(sp_DecimalType, "s#", u.dec.text, (Py_ssize_t)u.dec.len);
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
            v = sp_value(s, PyTuple_GET_ITEM(pysteps, i), data_obj, data, &pos, end);
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
PyObject *sp_fall_back(void) {
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return NULL;
    PyErr_Clear();
    PyErr_SetNone(sp_Fallback);
    return NULL;
}

/* The walks and Python steps of one rows event's images (kind 0 insert, 1 update, 2
 * delete): *wa and *psa are the after image's (the before image's unless an update);
 * -1 with an exception when they do not fit together. */
int sp_event_walks(int kind, PyObject *cap, PyObject *cap_after, PyObject *steps,
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
PyObject *sp_decode_event(PyObject *self, PyObject *args) {
    PyObject *data_obj, *cap, *cap_after, *steps, *steps_after;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!", &PyBytes_Type, &data_obj, &kind, &cap, &cap_after,
                          &PyTuple_Type, &steps, &PyTuple_Type, &steps_after))
        return NULL;
    Walk *w, *wa;
    PyObject *psa;
    if (sp_event_walks(kind, cap, cap_after, steps, steps_after, &w, &wa, &psa) < 0) return NULL;
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
    return sp_fall_back();
}
