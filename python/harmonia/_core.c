/* _core.c — the C extension harmonia._core: a thin binding of the public API (include/harmonia.h,
 * nothing else) for the Python layer (harmonia/_tree.py), which turns NumPy, Arrow and CUDA arrays
 * into the flat arrays taken here. Owns: the Tree handle and its lock, the query configuration
 * tuple, buffer checks, the exceptions per status, and the GIL released around every library call.
 * Does not own: dtype conversion, result allocation or array kinds (the Python layer does those).
 *
 * Arrays: a host array is any object exposing a C-contiguous buffer (NumPy arrays, memoryviews);
 * its itemsize and length are checked against what the call needs, so no call can read or write
 * past a buffer. A device array (query config memory = DEVICE) is an int, its address; the Python
 * layer has checked its dtype, length and device, and makes the call with the arrays' device
 * current. Device-array queries run on the stream of the query tuple: synchronously (the calls
 * without _async, config.stream) or queued (the harmonia_*_async calls, async in the tuple).
 *
 * Threads: the C contract lets several threads query one tree at once, CPU and GPU; calls that
 * change a tree (updates, settings, upload, release, close) must have it alone. Each Tree holds a
 * readers-writer lock: shared for queries and read-only calls, exclusive for the rest (saves and
 * checks too: they may mark an unverified tree verified). The lock is taken after the GIL is
 * released, never while holding it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harmonia.h"

#define ERROR_MESSAGE_BYTES 1024

/* --- exceptions ------------------------------------------------------------------------------ */

/* harmonia.Error and one subclass per status (index = status code); some also derive from the
 * built-in exception a Python user would catch (ValueError, MemoryError, OSError). */
#define STATUS_COUNT (HARMONIA_ERR_CONFLICT + 1)
static PyObject *error_base;
static PyObject *error_class[STATUS_COUNT];

static const struct {
    const char *name;      /* the class name in the harmonia module */
    const char *status;    /* the C name */
    PyObject **builtin;    /* a second base, or NULL */
    const char *doc;
} error_spec[STATUS_COUNT] = {
    [HARMONIA_ERR_INVALID] = {"InvalidArgumentError", "HARMONIA_ERR_INVALID", &PyExc_ValueError,
                              "A bad argument (also a ValueError)."},
    [HARMONIA_ERR_NO_MEMORY] = {"OutOfMemoryError", "HARMONIA_ERR_NO_MEMORY", &PyExc_MemoryError,
                                "A host allocation failed (also a MemoryError)."},
    [HARMONIA_ERR_IO] = {"FileError", "HARMONIA_ERR_IO", &PyExc_OSError,
                         "A file could not be opened, read, written or synced (also an OSError)."},
    [HARMONIA_ERR_CORRUPT] = {"CorruptError", "HARMONIA_ERR_CORRUPT", NULL,
                              "An index file or a tree failed a check."},
    [HARMONIA_ERR_UNSUPPORTED] = {"UnsupportedError", "HARMONIA_ERR_UNSUPPORTED", NULL,
                                  "An index file of another format version or key width."},
    [HARMONIA_ERR_DUPLICATE_KEY] = {"DuplicateKeyError", "HARMONIA_ERR_DUPLICATE_KEY", &PyExc_ValueError,
                                    "Build input holds a key twice under duplicates='reject'."},
    [HARMONIA_ERR_UNSORTED] = {"UnsortedError", "HARMONIA_ERR_UNSORTED", &PyExc_ValueError,
                               "Input promised sorted (sorted=True) is not."},
    [HARMONIA_ERR_CAPACITY] = {"CapacityError", "HARMONIA_ERR_CAPACITY", NULL,
                               "The tree would exceed a size limit of the layout."},
    [HARMONIA_ERR_NO_DEVICE] = {"NoDeviceError", "HARMONIA_ERR_NO_DEVICE", NULL,
                                "The GPU backend was asked for and no GPU is usable."},
    [HARMONIA_ERR_DEVICE] = {"DeviceError", "HARMONIA_ERR_DEVICE", NULL, "A CUDA call failed."},
    [HARMONIA_ERR_DEVICE_MEMORY] = {"DeviceMemoryError", "HARMONIA_ERR_DEVICE_MEMORY", NULL,
                                    "Not enough GPU memory."},
    [HARMONIA_ERR_KEY_EXISTS] = {"KeyExistsError", "HARMONIA_ERR_KEY_EXISTS", NULL,
                                 "Update batch: an insert of a present key under insert_existing='error'."},
    [HARMONIA_ERR_KEY_MISSING] = {"KeyMissingError", "HARMONIA_ERR_KEY_MISSING", NULL,
                                  "Update batch: an update of a missing key under update_missing='error'."},
    [HARMONIA_ERR_CONFLICT] = {"ConflictError", "HARMONIA_ERR_CONFLICT", NULL,
                               "An index file is locked by another process, or was changed or replaced since "
                               "it was loaded."},
};

/* Raises the exception of status with message; extra (a dict or NULL) becomes attributes. */
static PyObject *raise_status(harmonia_status status, const char *message, PyObject *extra)
{
    PyObject *cls = (status > 0 && status < STATUS_COUNT && error_class[status]) ? error_class[status] : error_base;
    PyObject *exc = PyObject_CallFunction(cls, "s", message && message[0] ? message : harmonia_strerror(status));
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong((long)status);
    int bad = !code || PyObject_SetAttrString(exc, "status", code) < 0;
    Py_XDECREF(code);
    if (!bad) {
        PyObject *name = PyUnicode_FromString(harmonia_strerror(status));
        bad = !name || PyObject_SetAttrString(exc, "reason", name) < 0;
        Py_XDECREF(name);
    }
    if (!bad && extra) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (!bad && PyDict_Next(extra, &pos, &key, &value))
            bad = PyObject_SetAttr(exc, key, value) < 0;
    }
    if (bad) {
        Py_DECREF(exc);
        return NULL;
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

static void copy_message(char *dst, const char *src)
{
    snprintf(dst, ERROR_MESSAGE_BYTES, "%s", src ? src : "");
}

/* --- progress callbacks (build, load): called from the calling thread, GIL released ------------ */

typedef struct {
    PyObject *callable;  /* borrowed */
    PyObject *error;     /* the first exception the callable raised (re-raised after the call) */
} progress_ctx;

static void progress_trampoline(void *arg, const char *phase, double fraction)
{
    progress_ctx *ctx = (progress_ctx *)arg;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (!ctx->error) {
        PyObject *r = PyObject_CallFunction(ctx->callable, "sd", phase, fraction);
        if (r) {
            Py_DECREF(r);
        } else {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb && value)
                PyException_SetTraceback(value, tb);
            ctx->error = value ? value : (Py_XINCREF(type), type);
            Py_XDECREF(type);
            Py_XDECREF(tb);
        }
    }
    PyGILState_Release(gil);
}

/* --- arrays ---------------------------------------------------------------------------------- */

typedef struct {
    Py_buffer view;
    int held;
    void *ptr;
} array_arg;

static void release_arrays(array_arg *arrays, int n)
{
    for (int i = 0; i < n; i++)
        if (arrays[i].held) {
            PyBuffer_Release(&arrays[i].view);
            arrays[i].held = 0;
        }
}

/* Takes one array argument: None (optional only: NULL), an int (device address, when device), or an
 * object exposing a C-contiguous buffer of count items of itemsize bytes (writable for results). */
static int get_array(PyObject *obj, const char *name, Py_ssize_t itemsize, uint64_t count, int writable,
                     int device, int optional, array_arg *a)
{
    memset(a, 0, sizeof *a);
    if (obj == Py_None) {
        if (optional)
            return 0;
        PyErr_Format(PyExc_TypeError, "%s: an array is required, not None", name);
        return -1;
    }
    if (device) {
        if (!PyLong_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "%s: a device address (int) is expected", name);
            return -1;
        }
        a->ptr = PyLong_AsVoidPtr(obj);
        if (!a->ptr && PyErr_Occurred())
            return -1;
        if (!a->ptr && count > 0) {
            PyErr_Format(PyExc_ValueError, "%s: a NULL device address", name);
            return -1;
        }
        return 0;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &a->view, flags) < 0) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(writable ? PyExc_ValueError : PyExc_TypeError,
                     "%s: a C-contiguous%s buffer is required (%S)", name, writable ? " writable" : "",
                     value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    a->held = 1;
    if (a->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes are required, the buffer's are %zd bytes (format '%s')",
                     name, itemsize, a->view.itemsize, a->view.format ? a->view.format : "B");
        release_arrays(a, 1);
        return -1;
    }
    if ((uint64_t)a->view.len != count * (uint64_t)itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %llu items are required, the buffer holds %lld", name,
                     (unsigned long long)count, (long long)(a->view.len / itemsize));
        release_arrays(a, 1);
        return -1;
    }
    a->ptr = a->view.buf;
    return 0;
}

/* --- the Tree type --------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    harmonia_tree *tree;
    pthread_rwlock_t lock;
    uint32_t key_bits;
    PyObject *weakrefs;
} TreeObject;

static PyObject *tree_type; /* the heap type harmonia._core.Tree */

enum { LOCK_SHARED = 0, LOCK_EXCLUSIVE = 1 };

static void lock_tree(TreeObject *self, int mode)
{
    if (mode == LOCK_EXCLUSIVE)
        pthread_rwlock_wrlock(&self->lock);
    else
        pthread_rwlock_rdlock(&self->lock);
}

static void unlock_tree(TreeObject *self) { pthread_rwlock_unlock(&self->lock); }

static PyObject *new_tree_object(PyTypeObject *type, harmonia_tree *tree)
{
    TreeObject *self = (TreeObject *)PyType_GenericAlloc(type, 0);
    if (!self) {
        harmonia_free(tree);
        return NULL;
    }
    pthread_rwlock_init(&self->lock, NULL);
    self->tree = tree;
    harmonia_tree_info info;
    self->key_bits = harmonia_info(tree, &info) == HARMONIA_OK ? info.key_bits : 64;
    return (PyObject *)self;
}

static void tree_dealloc(PyObject *obj)
{
    TreeObject *self = (TreeObject *)obj;
    PyTypeObject *type = Py_TYPE(obj);
    PyObject_GC_UnTrack(obj);
    if (self->weakrefs)
        PyObject_ClearWeakRefs(obj);
    if (self->tree) {
        harmonia_free(self->tree);
        self->tree = NULL;
    }
    pthread_rwlock_destroy(&self->lock);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(obj);
    Py_DECREF(type);
}

static int tree_traverse(PyObject *obj, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(obj));
    return 0;
}

static PyObject *tree_new_forbidden(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyErr_SetString(PyExc_TypeError, "harmonia trees come from harmonia.build() or harmonia.load()");
    return NULL;
}

#define CLOSED_MESSAGE "the tree is closed"

/* The key width's itemsize. */
static Py_ssize_t key_bytes(const TreeObject *self) { return (Py_ssize_t)(self->key_bits / 8); }

/* --- query configuration: (backend, threads, psa, psa_window, psa_bits, group_size, memory,
 *     pipeline_depth, stream, async) ------------------------------------------------------------
 * async is not a config field: it picks the harmonia_*_async call (device arrays, queued on stream)
 * instead of the synchronous one (which runs on config.stream and waits for it). *async_out may be
 * NULL where the call has no asynchronous form. */

static int parse_query_config(PyObject *tuple, harmonia_query_config *qc, int *async_out)
{
    harmonia_query_config_init(qc);
    int backend = 0, memory = 0, async = 0;
    unsigned long long window = 0, stream = 0;
    unsigned int psa_bits = 0, group_size = 0, depth = 0;
    if (!PyArg_ParseTuple(tuple, "iiiKIIiIKp;query config: (backend, threads, psa, psa_window, psa_bits, "
                                 "group_size, memory, pipeline_depth, stream, async)",
                          &backend, &qc->threads, &qc->psa, &window, &psa_bits, &group_size, &memory, &depth,
                          &stream, &async))
        return -1;
    qc->backend = (harmonia_backend)backend;
    qc->psa_window = window;
    qc->psa_bits = psa_bits;
    qc->group_size = group_size;
    qc->memory = (harmonia_memory)memory;
    qc->pipeline_depth = depth;
    qc->stream = (void *)(uintptr_t)stream;
    if (async && qc->memory != HARMONIA_MEMORY_DEVICE) {
        PyErr_SetString(PyExc_ValueError, "the asynchronous calls take device arrays");
        return -1;
    }
    if (async_out)
        *async_out = async != 0;
    else if (async) {
        PyErr_SetString(PyExc_ValueError, "this call has no asynchronous form");
        return -1;
    }
    return 0;
}

/* Runs `call` (a statement assigning `st`) on the open tree with the GIL released and the tree
 * locked in `mode`; on failure copies the tree's message into `message`. */
#define RUN_ON_TREE(self, mode, call)                                                             \
    do {                                                                                          \
        Py_BEGIN_ALLOW_THREADS                                                                    \
        lock_tree(self, mode);                                                                    \
        if (!(self)->tree) {                                                                      \
            closed = 1;                                                                           \
        } else {                                                                                  \
            call;                                                                                 \
            if (st != HARMONIA_OK)                                                                \
                copy_message(message, harmonia_last_error((self)->tree));                         \
        }                                                                                         \
        unlock_tree(self);                                                                        \
        Py_END_ALLOW_THREADS                                                                      \
    } while (0)

static PyObject *closed_error(void)
{
    PyErr_SetString(PyExc_ValueError, CLOSED_MESSAGE);
    return NULL;
}

/* _lookup(qc, count, queries, values_out, found_out) */
static PyObject *tree_lookup(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *q, *v, *f;
    unsigned long long count;
    if (!PyArg_ParseTuple(args, "OKOOO", &qct, &count, &q, &v, &f))
        return NULL;
    harmonia_query_config qc;
    int async = 0;
    if (parse_query_config(qct, &qc, &async) < 0)
        return NULL;
    const int dev = qc.memory == HARMONIA_MEMORY_DEVICE;
    array_arg a[3];
    int n = 0;
    if (get_array(q, "queries", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(v, "values_out", key_bytes(self), count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(f, "found_out", 1, count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED,
                st = async ? harmonia_lookup_async(self->tree, &qc, a[0].ptr, count, a[1].ptr, (uint8_t *)a[2].ptr,
                                                   qc.stream)
                           : harmonia_lookup(self->tree, &qc, a[0].ptr, count, a[1].ptr, (uint8_t *)a[2].ptr));
    release_arrays(a, n);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
fail:
    release_arrays(a, n);
    return NULL;
}

/* _lookup_unordered(qc, count, queries, values_out, found_out, positions_out, wide): positions_out of
 * 64-bit words when wide (harmonia_lookup_unordered), else of 32-bit ones (_unordered32) */
static PyObject *tree_lookup_unordered(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *q, *v, *f, *p;
    unsigned long long count;
    int wide;
    if (!PyArg_ParseTuple(args, "OKOOOOp", &qct, &count, &q, &v, &f, &p, &wide))
        return NULL;
    harmonia_query_config qc;
    int async = 0;
    if (parse_query_config(qct, &qc, &async) < 0)
        return NULL;
    const int dev = qc.memory == HARMONIA_MEMORY_DEVICE;
    array_arg a[4];
    int n = 0;
    if (get_array(q, "queries", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(v, "values_out", key_bytes(self), count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(f, "found_out", 1, count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(p, "positions_out", wide ? 8 : 4, count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED,
                st = wide ? (async ? harmonia_lookup_unordered_async(self->tree, &qc, a[0].ptr, count, a[1].ptr,
                                                                     (uint8_t *)a[2].ptr, (uint64_t *)a[3].ptr,
                                                                     qc.stream)
                                   : harmonia_lookup_unordered(self->tree, &qc, a[0].ptr, count, a[1].ptr,
                                                               (uint8_t *)a[2].ptr, (uint64_t *)a[3].ptr))
                          : (async ? harmonia_lookup_unordered32_async(self->tree, &qc, a[0].ptr, count, a[1].ptr,
                                                                       (uint8_t *)a[2].ptr, (uint32_t *)a[3].ptr,
                                                                       qc.stream)
                                   : harmonia_lookup_unordered32(self->tree, &qc, a[0].ptr, count, a[1].ptr,
                                                                 (uint8_t *)a[2].ptr, (uint32_t *)a[3].ptr)));
    release_arrays(a, n);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
fail:
    release_arrays(a, n);
    return NULL;
}

/* _lower_bound(qc, count, queries, keys_out|None, values_out|None, found_out) */
static PyObject *tree_lower_bound(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *q, *k, *v, *f;
    unsigned long long count;
    if (!PyArg_ParseTuple(args, "OKOOOO", &qct, &count, &q, &k, &v, &f))
        return NULL;
    harmonia_query_config qc;
    int async = 0;
    if (parse_query_config(qct, &qc, &async) < 0)
        return NULL;
    const int dev = qc.memory == HARMONIA_MEMORY_DEVICE;
    array_arg a[4];
    int n = 0;
    if (get_array(q, "queries", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(k, "keys_out", key_bytes(self), count, 1, dev, 1, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(v, "values_out", key_bytes(self), count, 1, dev, 1, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(f, "found_out", 1, count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED,
                st = async ? harmonia_lower_bound_async(self->tree, &qc, a[0].ptr, count, a[1].ptr, a[2].ptr,
                                                        (uint8_t *)a[3].ptr, qc.stream)
                           : harmonia_lower_bound(self->tree, &qc, a[0].ptr, count, a[1].ptr, a[2].ptr,
                                                  (uint8_t *)a[3].ptr));
    release_arrays(a, n);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
fail:
    release_arrays(a, n);
    return NULL;
}

/* _range_count(qc, count, lo, hi, counts_out) */
static PyObject *tree_range_count(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *lo, *hi, *c;
    unsigned long long count;
    if (!PyArg_ParseTuple(args, "OKOOO", &qct, &count, &lo, &hi, &c))
        return NULL;
    harmonia_query_config qc;
    int async = 0;
    if (parse_query_config(qct, &qc, &async) < 0)
        return NULL;
    const int dev = qc.memory == HARMONIA_MEMORY_DEVICE;
    array_arg a[3];
    int n = 0;
    if (get_array(lo, "lo", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(hi, "hi", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(c, "counts_out", 8, count, 1, dev, 0, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED,
                st = async ? harmonia_range_count_async(self->tree, &qc, a[0].ptr, a[1].ptr, count,
                                                        (uint64_t *)a[2].ptr, qc.stream)
                           : harmonia_range_count(self->tree, &qc, a[0].ptr, a[1].ptr, count, (uint64_t *)a[2].ptr));
    release_arrays(a, n);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
fail:
    release_arrays(a, n);
    return NULL;
}

/* _range_collect(qc, count, lo, hi, offsets, allocate): phase 1 writes offsets (count + 1); then,
 * with the GIL taken back but the tree still locked (no update can come between the phases),
 * allocate() returns (keys_out|None, values_out|None, pairs) with room for offsets[count] -
 * offsets[0] pairs each; phase 2 writes them (skipped when both are None or there are no pairs). */
static PyObject *tree_range_collect(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *lo, *hi, *off, *allocate;
    unsigned long long count;
    if (!PyArg_ParseTuple(args, "OKOOOO", &qct, &count, &lo, &hi, &off, &allocate))
        return NULL;
    harmonia_query_config qc;
    if (parse_query_config(qct, &qc, NULL) < 0) /* synchronous: phase 2 is sized by phase 1 */
        return NULL;
    const int dev = qc.memory == HARMONIA_MEMORY_DEVICE;
    array_arg a[5];
    int n = 0;
    PyObject *result = NULL;
    if (get_array(lo, "lo", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto done;
    n++;
    if (get_array(hi, "hi", key_bytes(self), count, 0, dev, 0, &a[n]) < 0)
        goto done;
    n++;
    if (get_array(off, "offsets", 8, count + 1, 1, dev, 0, &a[n]) < 0)
        goto done;
    n++;
    harmonia_status st = HARMONIA_OK;
    char message[ERROR_MESSAGE_BYTES];
    PyThreadState *save = PyEval_SaveThread();
    lock_tree(self, LOCK_SHARED); /* the C contract: any number of threads query one tree at once */
    if (!self->tree) {
        unlock_tree(self);
        PyEval_RestoreThread(save);
        closed_error();
        goto done;
    }
    st = harmonia_range_collect(self->tree, &qc, a[0].ptr, a[1].ptr, count, (uint64_t *)a[2].ptr, NULL, NULL);
    if (st != HARMONIA_OK)
        copy_message(message, harmonia_last_error(self->tree));
    PyEval_RestoreThread(save);
    if (st == HARMONIA_OK) {
        PyObject *r = PyObject_CallNoArgs(allocate);
        PyObject *k = NULL, *v = NULL;
        unsigned long long pairs = 0;
        int ok = r && PyArg_ParseTuple(r, "OOK;allocate() returns (keys_out, values_out, pairs)", &k, &v, &pairs);
        if (ok && get_array(k, "keys_out", key_bytes(self), pairs, 1, dev, 1, &a[n]) < 0)
            ok = 0;
        if (ok)
            n++;
        if (ok && get_array(v, "values_out", key_bytes(self), pairs, 1, dev, 1, &a[n]) < 0)
            ok = 0;
        if (ok)
            n++;
        if (ok && !dev) {
            /* the result arrays must hold what the offsets say */
            const uint64_t *offsets = (const uint64_t *)a[2].ptr;
            if (offsets[count] < offsets[0] || offsets[count] - offsets[0] != pairs) {
                PyErr_Format(PyExc_ValueError,
                             "range_collect: the offsets give %lld pairs, the result arrays hold %llu",
                             (long long)(offsets[count] - offsets[0]), (unsigned long long)pairs);
                ok = 0;
            }
        }
        Py_XDECREF(r);
        if (!ok) {
            unlock_tree(self); /* never blocks: the GIL may stay held */
            goto done;
        }
        save = PyEval_SaveThread();
        if (pairs > 0 && (a[3].ptr || a[4].ptr)) {
            st = harmonia_range_collect(self->tree, &qc, a[0].ptr, a[1].ptr, count, (uint64_t *)a[2].ptr, a[3].ptr,
                                        a[4].ptr);
            if (st != HARMONIA_OK)
                copy_message(message, harmonia_last_error(self->tree));
        }
        unlock_tree(self);
        PyEval_RestoreThread(save);
    } else {
        unlock_tree(self);
    }
    if (st != HARMONIA_OK) {
        raise_status(st, message, NULL);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_arrays(a, n);
    return result;
}

static PyObject *update_stats_dict(const harmonia_update_stats *s)
{
    PyObject *failed = s->failed_operation == UINT64_MAX ? (Py_INCREF(Py_None), Py_None)
                                                         : PyLong_FromUnsignedLongLong(s->failed_operation);
    if (!failed)
        return NULL;
    return Py_BuildValue(
        "{sKsKsKsKsKsKsKsKsKsKsKsOsOsKsdsdsdsdsN}", "operations", (unsigned long long)s->operations, "applied",
        (unsigned long long)s->applied, "inserted", (unsigned long long)s->inserted, "updated",
        (unsigned long long)s->updated, "deleted", (unsigned long long)s->deleted, "missing",
        (unsigned long long)s->missing, "duplicates", (unsigned long long)s->duplicates, "leaves_touched",
        (unsigned long long)s->leaves_touched, "leaves_split", (unsigned long long)s->leaves_split,
        "auxiliary_nodes", (unsigned long long)s->auxiliary_nodes, "leaves_removed",
        (unsigned long long)s->leaves_removed, "shape_changed", s->shape_changed ? Py_True : Py_False,
        "incremental_upload", s->incremental_upload ? Py_True : Py_False, "uploaded_bytes",
        (unsigned long long)s->uploaded_bytes, "sort_seconds", s->sort_seconds, "apply_seconds", s->apply_seconds,
        "relayout_seconds", s->relayout_seconds, "upload_seconds", s->upload_seconds, "failed_operation",
        failed);
}

/* _update(count, kinds, keys, values|None, insert_existing, update_missing, split_fill, threads,
 *         skip_upload) -> stats dict; a failed batch raises with .stats and .failed_operation */
static PyObject *tree_update(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *kinds, *keys, *values;
    unsigned long long count;
    int insert_existing, update_missing, threads, skip_upload;
    double split_fill;
    if (!PyArg_ParseTuple(args, "KOOOiidip", &count, &kinds, &keys, &values, &insert_existing, &update_missing,
                          &split_fill, &threads, &skip_upload))
        return NULL;
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.insert_existing = (harmonia_insert_policy)insert_existing;
    uc.update_missing = (harmonia_update_policy)update_missing;
    uc.split_fill = split_fill;
    uc.threads = threads;
    uc.skip_upload = skip_upload != 0;
    array_arg a[3];
    int n = 0;
    if (get_array(kinds, "kinds", 1, count, 0, 0, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(keys, "keys", key_bytes(self), count, 0, 0, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(values, "values", key_bytes(self), count, 0, 0, 1, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_update_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.failed_operation = UINT64_MAX;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE,
                st = harmonia_update(self->tree, &uc, (const uint8_t *)a[0].ptr, a[1].ptr, a[2].ptr, count, &stats));
    release_arrays(a, n);
    if (closed)
        return closed_error();
    PyObject *d = update_stats_dict(&stats);
    if (!d)
        return NULL;
    if (st != HARMONIA_OK) {
        PyObject *extra = Py_BuildValue("{sOsO}", "stats", d, "failed_operation",
                                        PyDict_GetItemString(d, "failed_operation"));
        Py_DECREF(d);
        if (!extra)
            return NULL;
        raise_status(st, message, extra);
        Py_DECREF(extra);
        return NULL;
    }
    return d;
fail:
    release_arrays(a, n);
    return NULL;
}

/* _save(path) */
static PyObject *tree_save(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *path_bytes = NULL;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_bytes))
        return NULL;
    const char *path = PyBytes_AsString(path_bytes);
    if (!path) {
        Py_DECREF(path_bytes);
        return NULL;
    }
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_save(self->tree, path));
    Py_DECREF(path_bytes);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

/* _check() */
static PyObject *tree_check(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_check(self->tree));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

/* _info() -> dict */
static PyObject *tree_info(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    harmonia_tree_info info;
    memset(&info, 0, sizeof info);
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED, st = harmonia_info(self->tree, &info));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    const uint32_t levels = info.height < HARMONIA_MAX_LEVELS ? info.height : HARMONIA_MAX_LEVELS;
    PyObject *level_nodes = PyTuple_New(levels);
    if (!level_nodes)
        return NULL;
    for (uint32_t i = 0; i < levels; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(info.level_nodes[i]);
        if (!x) {
            Py_DECREF(level_nodes);
            return NULL;
        }
        PyTuple_SetItem(level_nodes, i, x);
    }
    PyObject *min_key = info.key_count ? PyLong_FromUnsignedLongLong(info.min_key) : (Py_INCREF(Py_None), Py_None);
    PyObject *max_key = info.key_count ? PyLong_FromUnsignedLongLong(info.max_key) : (Py_INCREF(Py_None), Py_None);
    PyObject *d = Py_BuildValue(
        "{sIsIsIsIsKsKsKsOsKsKsKsKsKsdsOsOsKsIsOsKsIsOsKsKsi}", "key_bits", info.key_bits, "fanout", info.fanout,
        "leaf_size", info.leaf_size, "height", info.height, "key_count", (unsigned long long)info.key_count,
        "internal_nodes", (unsigned long long)info.internal_nodes, "leaf_count", (unsigned long long)info.leaf_count,
        "level_nodes", level_nodes, "key_region_bytes", (unsigned long long)info.key_region_bytes,
        "leaf_value_bytes", (unsigned long long)info.leaf_value_bytes, "prefix_sum_bytes",
        (unsigned long long)info.prefix_sum_bytes, "leaf_rank_bytes", (unsigned long long)info.leaf_rank_bytes,
        "total_bytes", (unsigned long long)info.total_bytes, "leaf_fill", info.leaf_fill, "min_key", min_key,
        "max_key", max_key, "version", (unsigned long long)info.version, "ntg_group_size", info.ntg_group_size,
        "mapped", info.mapped ? Py_True : Py_False, "constant_prefix_entries",
        (unsigned long long)info.constant_prefix_entries, "constant_prefix_levels", info.constant_prefix_levels,
        "device_resident", info.device_resident ? Py_True : Py_False, "device_version",
        (unsigned long long)info.device_version, "device_bytes", (unsigned long long)info.device_bytes, "device",
        info.device);
    Py_DECREF(level_nodes);
    Py_XDECREF(min_key);
    Py_XDECREF(max_key);
    return d;
}

/* _sample_keys(count, seed, out) */
static PyObject *tree_sample_keys(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    unsigned long long count, seed;
    PyObject *out;
    if (!PyArg_ParseTuple(args, "KKO", &count, &seed, &out))
        return NULL;
    array_arg a;
    if (get_array(out, "out", key_bytes(self), count, 1, 0, 0, &a) < 0)
        return NULL;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED, st = harmonia_sample_keys(self->tree, count, seed, a.ptr));
    release_arrays(&a, 1);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

static PyObject *double_list(const double *x, uint32_t n)
{
    PyObject *list = PyList_New(n);
    for (uint32_t i = 0; list && i < n; i++) {
        PyObject *v = PyFloat_FromDouble(x[i]);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SetItem(list, i, v);
    }
    return list;
}

static PyObject *uint_list(const uint32_t *x, uint32_t n)
{
    PyObject *list = PyList_New(n);
    for (uint32_t i = 0; list && i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLong(x[i]);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SetItem(list, i, v);
    }
    return list;
}

static PyObject *model_dict(const harmonia_ntg_model_result *m)
{
    const uint32_t sizes = m->size_count < HARMONIA_NTG_MAX_SIZES ? m->size_count : HARMONIA_NTG_MAX_SIZES;
    const uint32_t levels = m->levels < HARMONIA_MAX_LEVELS ? m->levels : HARMONIA_MAX_LEVELS;
    PyObject *level_steps = PyList_New(sizes);
    for (uint32_t i = 0; level_steps && i < sizes; i++) {
        PyObject *row = double_list(m->level_steps[i], levels);
        if (!row) {
            Py_DECREF(level_steps);
            return NULL;
        }
        PyList_SetItem(level_steps, i, row);
    }
    if (!level_steps)
        return NULL;
    PyObject *gs = uint_list(m->group_sizes, sizes), *steps = double_list(m->steps, sizes),
             *ratio = double_list(m->ratio, sizes);
    PyObject *d = NULL;
    if (gs && steps && ratio)
        d = Py_BuildValue("{sOsOsOsOsIsIsIsKsKsOsIsIsK}", "group_sizes", gs, "steps", steps, "ratio", ratio,
                          "level_steps", level_steps, "choice", m->choice, "first_level", m->first_level, "levels",
                          m->levels, "sample_queries", (unsigned long long)m->sample_queries, "runs",
                          (unsigned long long)m->runs, "psa", m->psa ? Py_True : Py_False, "psa_begin_bit",
                          m->psa_begin_bit, "psa_end_bit", m->psa_end_bit, "window", (unsigned long long)m->window);
    Py_XDECREF(gs);
    Py_XDECREF(steps);
    Py_XDECREF(ratio);
    Py_DECREF(level_steps);
    return d;
}

static PyObject *measurement_dict(const harmonia_ntg_measurement *m)
{
    const uint32_t sizes = m->size_count < HARMONIA_NTG_MAX_SIZES ? m->size_count : HARMONIA_NTG_MAX_SIZES;
    PyObject *gs = uint_list(m->group_sizes, sizes), *sec = double_list(m->seconds, sizes),
             *qps = double_list(m->queries_per_second, sizes);
    PyObject *d = NULL;
    if (gs && sec && qps)
        d = Py_BuildValue("{sOsOsOsIsKsKsOsIsIss}", "group_sizes", gs, "seconds", sec, "queries_per_second", qps,
                          "best", m->best, "queries", (unsigned long long)m->queries, "found",
                          (unsigned long long)m->found, "psa", m->psa ? Py_True : Py_False, "warmup", m->warmup, "runs",
                          m->runs, "device", m->device);
    Py_XDECREF(gs);
    Py_XDECREF(sec);
    Py_XDECREF(qps);
    return d;
}

/* _profile_ntg(qc, unordered, sample, levels, warmup, runs, count, queries, measure)
 *   -> (model dict, measurement dict or None, choice) */
static PyObject *tree_profile_ntg(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    PyObject *qct, *queries;
    int unordered, measure;
    unsigned long long sample, count;
    unsigned int levels, warmup, runs;
    if (!PyArg_ParseTuple(args, "OpKIIIKOp", &qct, &unordered, &sample, &levels, &warmup, &runs, &count, &queries,
                          &measure))
        return NULL;
    harmonia_ntg_config nc;
    harmonia_ntg_config_init(&nc);
    harmonia_query_config workload;
    if (parse_query_config(qct, &workload, NULL) < 0)
        return NULL;
    nc.query = &workload;
    nc.unordered = unordered != 0;
    nc.sample = sample;
    nc.levels = levels;
    nc.warmup = warmup;
    nc.runs = runs;
    array_arg a;
    if (get_array(queries, "queries", key_bytes(self), count, 0, 0, 0, &a) < 0)
        return NULL;
    harmonia_ntg_model_result model;
    harmonia_ntg_measurement measured;
    memset(&model, 0, sizeof model);
    memset(&measured, 0, sizeof measured);
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, measure ? LOCK_EXCLUSIVE : LOCK_SHARED, {
        st = harmonia_ntg_model(self->tree, &nc, a.ptr, count, &model);
        if (st == HARMONIA_OK && measure)
            st = harmonia_ntg_measure(self->tree, &nc, a.ptr, count, &measured);
    });
    release_arrays(&a, 1);
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    PyObject *md = model_dict(&model);
    if (!md)
        return NULL;
    PyObject *xd = Py_None;
    Py_INCREF(xd);
    if (measure) {
        Py_DECREF(xd);
        xd = measurement_dict(&measured);
        if (!xd) {
            Py_DECREF(md);
            return NULL;
        }
    }
    const uint32_t choice = harmonia_ntg_choice(&model, measure ? &measured : NULL);
    PyObject *r = Py_BuildValue("(OOI)", md, xd, choice);
    Py_DECREF(md);
    Py_DECREF(xd);
    return r;
}

/* _set_group_size(g), _set_constant_levels(levels) */
static PyObject *tree_set_group_size(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    unsigned int g;
    if (!PyArg_ParseTuple(args, "I", &g))
        return NULL;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_set_group_size(self->tree, g));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

static PyObject *tree_set_constant_levels(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    int levels;
    if (!PyArg_ParseTuple(args, "i", &levels))
        return NULL;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_set_constant_levels(self->tree, levels));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

static PyObject *tree_device_upload(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_device_upload(self->tree));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

static PyObject *tree_device_release(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, harmonia_device_release(self->tree));
    if (closed)
        return closed_error();
    Py_RETURN_NONE;
}

/* _set_device(device): the tree's device (a CUDA device id or -1, the current one when the copy is
 * made), the library's allocator; a device copy elsewhere is released */
static PyObject *tree_set_device(PyObject *obj, PyObject *args)
{
    TreeObject *self = (TreeObject *)obj;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device))
        return NULL;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_EXCLUSIVE, st = harmonia_set_device(self->tree, device, NULL));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    Py_RETURN_NONE;
}

/* _device_state() -> (device, resident): the device of the copy when it exists, else the tree's
 * setting (-1: the caller's current device when the copy is made); what the array layer checks
 * device arrays against, without building harmonia_info's whole dict */
static PyObject *tree_device_state(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    harmonia_tree_info info;
    memset(&info, 0, sizeof info);
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED, st = harmonia_info(self->tree, &info));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    return Py_BuildValue("(iO)", info.device, info.device_resident ? Py_True : Py_False);
}

/* _device_bytes() -> int: GPU memory of the device copy (harmonia_device_bytes; needs no GPU) */
static PyObject *tree_device_bytes(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    uint64_t bytes = 0;
    harmonia_status st = HARMONIA_OK;
    int closed = 0;
    char message[ERROR_MESSAGE_BYTES];
    RUN_ON_TREE(self, LOCK_SHARED, st = harmonia_device_bytes(self->tree, &bytes));
    if (closed)
        return closed_error();
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    return PyLong_FromUnsignedLongLong(bytes);
}

/* _close(): frees the tree now (idempotent); later calls raise ValueError */
static PyObject *tree_close(PyObject *obj, PyObject *unused)
{
    TreeObject *self = (TreeObject *)obj;
    Py_BEGIN_ALLOW_THREADS
    lock_tree(self, LOCK_EXCLUSIVE);
    harmonia_tree *tree = self->tree;
    self->tree = NULL;
    unlock_tree(self);
    harmonia_free(tree);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *tree_get_closed(PyObject *obj, void *unused)
{
    return PyBool_FromLong(((TreeObject *)obj)->tree == NULL);
}

static PyObject *tree_get_key_bits(PyObject *obj, void *unused)
{
    return PyLong_FromUnsignedLong(((TreeObject *)obj)->key_bits);
}

static PyMethodDef tree_methods[] = {
    {"_lookup", tree_lookup, METH_VARARGS, NULL},
    {"_lookup_unordered", tree_lookup_unordered, METH_VARARGS, NULL},
    {"_lower_bound", tree_lower_bound, METH_VARARGS, NULL},
    {"_range_count", tree_range_count, METH_VARARGS, NULL},
    {"_range_collect", tree_range_collect, METH_VARARGS, NULL},
    {"_update", tree_update, METH_VARARGS, NULL},
    {"_save", tree_save, METH_VARARGS, NULL},
    {"_check", tree_check, METH_NOARGS, NULL},
    {"_info", tree_info, METH_NOARGS, NULL},
    {"_sample_keys", tree_sample_keys, METH_VARARGS, NULL},
    {"_profile_ntg", tree_profile_ntg, METH_VARARGS, NULL},
    {"_set_group_size", tree_set_group_size, METH_VARARGS, NULL},
    {"_set_constant_levels", tree_set_constant_levels, METH_VARARGS, NULL},
    {"_device_upload", tree_device_upload, METH_NOARGS, NULL},
    {"_device_release", tree_device_release, METH_NOARGS, NULL},
    {"_set_device", tree_set_device, METH_VARARGS, NULL},
    {"_device_state", tree_device_state, METH_NOARGS, NULL},
    {"_device_bytes", tree_device_bytes, METH_NOARGS, NULL},
    {"_close", tree_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tree_getset[] = {
    {"closed", tree_get_closed, NULL, "True once close() has freed the tree.", NULL},
    {"key_bits", tree_get_key_bits, NULL, "The width of keys and values: 32 or 64.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef tree_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TreeObject, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot tree_slots[] = {
    {Py_tp_doc, "The handle of one tree (harmonia_tree); harmonia.Tree adds the array API."},
    {Py_tp_dealloc, tree_dealloc},
    {Py_tp_traverse, tree_traverse},
    {Py_tp_new, tree_new_forbidden},
    {Py_tp_methods, tree_methods},
    {Py_tp_getset, tree_getset},
    {Py_tp_members, tree_members},
    {0, NULL},
};

static PyType_Spec tree_spec = {
    .name = "harmonia._core.Tree",
    .basicsize = sizeof(TreeObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tree_slots,
};

/* --- module functions ------------------------------------------------------------------------ */

/* Resolves the class to instantiate: a subclass of _core.Tree (harmonia.Tree) or _core.Tree. */
static PyTypeObject *tree_class_arg(PyObject *cls)
{
    if (cls == Py_None)
        return (PyTypeObject *)tree_type;
    if (!PyType_Check(cls) || !PyObject_IsSubclass(cls, tree_type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a subclass of harmonia._core.Tree");
        return NULL;
    }
    return (PyTypeObject *)cls;
}

/* build(cls, key_bits, count, keys, values|None, fanout, leaf_size, fill, duplicates, sorted,
 *       threads, progress|None, device) -> Tree; device: a CUDA device id or -1
 *       (HARMONIA_DEVICE_CURRENT) */
static PyObject *core_build(PyObject *module, PyObject *args)
{
    PyObject *cls, *keys, *values, *progress;
    unsigned int key_bits, fanout, leaf_size;
    unsigned long long count;
    double fill;
    int duplicates, sorted, threads, device;
    if (!PyArg_ParseTuple(args, "OIKOOIIdipiOi", &cls, &key_bits, &count, &keys, &values, &fanout, &leaf_size, &fill,
                          &duplicates, &sorted, &threads, &progress, &device))
        return NULL;
    PyTypeObject *type = tree_class_arg(cls);
    if (!type)
        return NULL;
    if (key_bits != 32 && key_bits != 64) {
        PyErr_Format(PyExc_ValueError, "key_bits %u: 32 or 64", key_bits);
        return NULL;
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = key_bits;
    bc.fanout = fanout;
    bc.leaf_size = leaf_size;
    bc.leaf_fill = fill;
    bc.duplicates = (harmonia_duplicates)duplicates;
    bc.input_sorted = sorted != 0;
    bc.threads = threads;
    bc.device = device;
    progress_ctx ctx = {progress, NULL};
    if (progress != Py_None) {
        bc.progress = progress_trampoline;
        bc.progress_arg = &ctx;
    }
    array_arg a[2];
    int n = 0;
    if (get_array(keys, "keys", key_bits / 8, count, 0, 0, 0, &a[n]) < 0)
        goto fail;
    n++;
    if (get_array(values, "values", key_bits / 8, count, 0, 0, 1, &a[n]) < 0)
        goto fail;
    n++;
    harmonia_tree *tree = NULL;
    harmonia_status st;
    char message[ERROR_MESSAGE_BYTES];
    Py_BEGIN_ALLOW_THREADS
    st = harmonia_build(&bc, a[0].ptr, a[1].ptr, count, &tree);
    if (st != HARMONIA_OK)
        copy_message(message, harmonia_last_error(NULL));
    Py_END_ALLOW_THREADS
    release_arrays(a, n);
    if (ctx.error) {
        harmonia_free(tree);
        PyErr_SetObject((PyObject *)Py_TYPE(ctx.error), ctx.error);
        Py_DECREF(ctx.error);
        return NULL;
    }
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    return new_tree_object(type, tree);
fail:
    release_arrays(a, n);
    return NULL;
}

/* load(cls, path, verify, lock, progress|None, device) -> Tree */
static PyObject *core_load(PyObject *module, PyObject *args)
{
    PyObject *cls, *path_bytes = NULL, *progress;
    int verify, lock, device;
    if (!PyArg_ParseTuple(args, "OO&piOi", &cls, PyUnicode_FSConverter, &path_bytes, &verify, &lock, &progress,
                          &device))
        return NULL;
    PyTypeObject *type = tree_class_arg(cls);
    const char *path = type ? PyBytes_AsString(path_bytes) : NULL;
    if (!path) {
        Py_DECREF(path_bytes);
        return NULL;
    }
    harmonia_load_config lc;
    harmonia_load_config_init(&lc);
    lc.verify = verify != 0;
    lc.lock = (harmonia_lock_mode)lock;
    lc.device = device;
    progress_ctx ctx = {progress, NULL};
    if (progress != Py_None) {
        lc.progress = progress_trampoline;
        lc.progress_arg = &ctx;
    }
    harmonia_tree *tree = NULL;
    harmonia_status st;
    char message[ERROR_MESSAGE_BYTES];
    Py_BEGIN_ALLOW_THREADS
    st = harmonia_load(path, &lc, &tree);
    if (st != HARMONIA_OK)
        copy_message(message, harmonia_last_error(NULL));
    Py_END_ALLOW_THREADS
    Py_DECREF(path_bytes);
    if (ctx.error) {
        harmonia_free(tree);
        PyErr_SetObject((PyObject *)Py_TYPE(ctx.error), ctx.error);
        Py_DECREF(ctx.error);
        return NULL;
    }
    if (st != HARMONIA_OK)
        return raise_status(st, message, NULL);
    return new_tree_object(type, tree);
}

/* device_probe() -> (True, info dict) or (False, reason) */
static PyObject *core_device_probe(PyObject *module, PyObject *unused)
{
    harmonia_device_info info;
    memset(&info, 0, sizeof info);
    harmonia_status st;
    char message[ERROR_MESSAGE_BYTES];
    Py_BEGIN_ALLOW_THREADS
    st = harmonia_device_probe(&info);
    if (st != HARMONIA_OK)
        copy_message(message, harmonia_last_error(NULL));
    Py_END_ALLOW_THREADS
    if (st != HARMONIA_OK)
        return Py_BuildValue("(Os)", Py_False, message);
    return Py_BuildValue("(O{sssisisisKsKsKsKsi})", Py_True, "name", info.name, "sm_count", info.sm_count,
                         "compute_major", info.compute_major, "compute_minor", info.compute_minor, "l2_bytes",
                         (unsigned long long)info.l2_bytes, "global_memory_bytes",
                         (unsigned long long)info.global_memory_bytes, "free_memory_bytes",
                         (unsigned long long)info.free_memory_bytes, "constant_memory_bytes",
                         (unsigned long long)info.constant_memory_bytes, "device", info.device);
}

static PyObject *core_strerror(PyObject *module, PyObject *args)
{
    int status;
    if (!PyArg_ParseTuple(args, "i", &status))
        return NULL;
    return PyUnicode_FromString(harmonia_strerror((harmonia_status)status));
}

static PyMethodDef core_methods[] = {
    {"build", core_build, METH_VARARGS, "The binding of harmonia_build (use harmonia.build)."},
    {"load", core_load, METH_VARARGS, "The binding of harmonia_load (use harmonia.load)."},
    {"device_probe", core_device_probe, METH_NOARGS, "harmonia_device_probe: (True, info) or (False, reason)."},
    {"strerror", core_strerror, METH_VARARGS, "harmonia_strerror(status)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "harmonia._core",
    "The C binding of libharmonia's public API; the package harmonia is its Python face.", -1, core_methods,
    NULL, NULL, NULL, NULL,
};

static int add_errors(PyObject *m)
{
    error_base = PyErr_NewExceptionWithDoc(
        "harmonia.Error",
        "An error of libharmonia: .status is the harmonia_status code, .reason its description "
        "(harmonia_strerror), str() the library's message (harmonia_last_error).",
        NULL, NULL);
    if (!error_base || PyModule_AddObjectRef(m, "Error", error_base) < 0)
        return -1;
    for (int s = 1; s < STATUS_COUNT; s++) {
        char qualified[96];
        snprintf(qualified, sizeof qualified, "harmonia.%s", error_spec[s].name);
        PyObject *bases = error_spec[s].builtin ? PyTuple_Pack(2, error_base, *error_spec[s].builtin)
                                                : PyTuple_Pack(1, error_base);
        if (!bases)
            return -1;
        char doc[512];
        snprintf(doc, sizeof doc, "%s Status %s (%d).", error_spec[s].doc, error_spec[s].status, s);
        error_class[s] = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
        Py_DECREF(bases);
        if (!error_class[s] || PyModule_AddObjectRef(m, error_spec[s].name, error_class[s]) < 0)
            return -1;
    }
    PyObject *by_status = PyDict_New();
    if (!by_status)
        return -1;
    for (int s = 1; s < STATUS_COUNT; s++) {
        PyObject *k = PyLong_FromLong(s);
        int bad = !k || PyDict_SetItem(by_status, k, error_class[s]) < 0;
        Py_XDECREF(k);
        if (bad) {
            Py_DECREF(by_status);
            return -1;
        }
    }
    const int r = PyModule_AddObjectRef(m, "errors_by_status", by_status);
    Py_DECREF(by_status);
    return r;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&core_module);
    if (!m)
        return NULL;
    tree_type = PyType_FromSpec(&tree_spec);
    if (!tree_type || PyModule_AddObjectRef(m, "Tree", tree_type) < 0 || add_errors(m) < 0 ||
        PyModule_AddStringConstant(m, "library_version", HARMONIA_VERSION_STRING) < 0 ||
#ifdef HARMONIA_HAVE_CUDA
        PyModule_AddIntConstant(m, "built_with_cuda", 1) < 0 ||
#else
        PyModule_AddIntConstant(m, "built_with_cuda", 0) < 0 ||
#endif
        PyModule_AddIntConstant(m, "max_levels", HARMONIA_MAX_LEVELS) < 0 ||
        PyModule_AddIntConstant(m, "device_current", HARMONIA_DEVICE_CURRENT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
