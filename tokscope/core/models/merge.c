/* The byte-pair merge loop of tokscope.core.models.ranks, compiled: _tokscope_merge.merge_ids.
 *
 * Optional: built at install when the machine has a C compiler; without it the pure-Python loop
 * (ranks.merge) runs, and it stays the test oracle (the tests hold this loop to it, id for id).
 *
 * merge_ids(data: bytes, ranks: dict[bytes, int], max_rank: int) -> tuple[int, ...]
 *
 * Start from single bytes; repeatedly join the adjacent pair whose concatenation has the lowest
 * rank (the leftmost on ties), until no adjacent pair is in ``ranks`` (or, with max_rank >= 0,
 * none below max_rank). The result is the rank of each part. A part that is not in ``ranks``
 * raises KeyError, as ``ranks[part]`` does in Python. The ids returned are the dict's own int
 * objects. Python code never runs inside (bytes hash and compare are C), so the dict cannot
 * change under the loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ABI_VERSION 1
#define NONE PY_SSIZE_T_MAX
#define STACK_PARTS 256

/* The rank of data[start:end] (NONE when absent or not below max_rank); its int object in *obj. */
static int
rank_of(const char *data, Py_ssize_t start, Py_ssize_t end, PyObject *ranks, Py_ssize_t max_rank,
        Py_ssize_t *rank, PyObject **obj)
{
    PyObject *key = PyBytes_FromStringAndSize(data + start, end - start);
    if (key == NULL)
        return -1;
    PyObject *value = PyDict_GetItemWithError(ranks, key);
    if (value == NULL) {
        Py_DECREF(key);
        if (PyErr_Occurred())
            return -1;
        *rank = NONE;
        *obj = NULL;
        return 0;
    }
    Py_DECREF(key);
    Py_ssize_t r = PyLong_AsSsize_t(value);
    if (r == -1 && PyErr_Occurred())
        return -1;
    if (r < 0 || (max_rank >= 0 && r >= max_rank)) {
        *rank = NONE;
        *obj = NULL;
        return 0;
    }
    *rank = r;
    *obj = value;
    return 0;
}

static PyObject *
merge_ids(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *ranks;
    Py_ssize_t max_rank;
    if (!PyArg_ParseTuple(args, "y*O!n", &view, &PyDict_Type, &ranks, &max_rank))
        return NULL;
    const char *data = (const char *)view.buf;
    Py_ssize_t n = view.len;
    PyObject *result = NULL;

    /* part k covers data[start[k]:start[k+1]]; start[m] == n. pair[k] is the rank of parts k and
     * k+1 joined; id[k] the int object of part k's rank once known (NULL for a single byte not
     * yet looked up). */
    Py_ssize_t stack_start[STACK_PARTS + 1], stack_pair[STACK_PARTS];
    PyObject *stack_id[STACK_PARTS];
    Py_ssize_t *start = stack_start, *pair = stack_pair;
    PyObject **id = stack_id;
    if (n > STACK_PARTS) {
        start = PyMem_New(Py_ssize_t, n + 1);
        pair = PyMem_New(Py_ssize_t, n);
        id = PyMem_New(PyObject *, n);
        if (start == NULL || pair == NULL || id == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t m = n;
    for (Py_ssize_t k = 0; k <= n; k++)
        start[k] = k;
    for (Py_ssize_t k = 0; k < n; k++)
        id[k] = NULL;
    PyObject *unused;
    for (Py_ssize_t k = 0; k + 1 < m; k++) {
        if (rank_of(data, start[k], start[k + 2], ranks, max_rank, &pair[k], &unused) < 0)
            goto done;
    }
    while (m > 1) {
        Py_ssize_t best = NONE, at = -1;
        for (Py_ssize_t k = 0; k + 1 < m; k++) {
            if (pair[k] < best) {
                best = pair[k];
                at = k;
            }
        }
        if (at < 0)
            break;
        /* join parts at and at+1: the joined part's rank is the pair's */
        PyObject *joined;
        Py_ssize_t again;
        if (rank_of(data, start[at], start[at + 2], ranks, -1, &again, &joined) < 0)
            goto done;
        id[at] = joined;
        memmove(&start[at + 1], &start[at + 2], (m - at - 1) * sizeof(Py_ssize_t));
        memmove(&id[at + 1], &id[at + 2], (m - at - 2) * sizeof(PyObject *));
        memmove(&pair[at + 1], &pair[at + 2], (m - at - 3 > 0 ? m - at - 3 : 0) * sizeof(Py_ssize_t));
        m--;
        if (at + 1 < m) {
            if (rank_of(data, start[at], start[at + 2], ranks, max_rank, &pair[at], &unused) < 0)
                goto done;
        }
        if (at > 0) {
            if (rank_of(data, start[at - 1], start[at + 1], ranks, max_rank, &pair[at - 1], &unused) < 0)
                goto done;
        }
    }
    result = PyTuple_New(m);
    if (result == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *value = id[k];
        if (value == NULL) {
            PyObject *key = PyBytes_FromStringAndSize(data + start[k], start[k + 1] - start[k]);
            if (key == NULL) {
                Py_CLEAR(result);
                goto done;
            }
            value = PyDict_GetItemWithError(ranks, key);
            if (value == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, key);
                Py_DECREF(key);
                Py_CLEAR(result);
                goto done;
            }
            Py_DECREF(key);
        }
        Py_INCREF(value);
        PyTuple_SET_ITEM(result, k, value);
    }
done:
    if (start != stack_start)
        PyMem_Free(start);
    if (pair != stack_pair)
        PyMem_Free(pair);
    if (id != stack_id)
        PyMem_Free(id);
    PyBuffer_Release(&view);
    return result;
}


/* ----- a rank table of its own -------------------------------------------------------------------
 *
 * table = build(ranks) copies the ranks into an open-addressing hash table (FNV-1a over the bytes,
 * linear probing) and a direct table of every two-byte pair, so the loop looks pairs up without
 * making a bytes object each time. The table is a snapshot: the model that builds it never
 * changes its ranks.
 */

typedef struct {
    uint32_t hash;   /* the high half of the key's hash */
    uint32_t len;
    uint32_t offset; /* into the arena */
    int32_t rank;
} Entry;

typedef struct {
    uint32_t *index; /* 1 + the entry's number; 0 marks an empty slot */
    Entry *entries;
    size_t mask;
    char *arena;
    int32_t pair2[65536]; /* rank of each two-byte token, -1 when absent */
    int32_t byte1[256];   /* rank of each single byte, -1 when absent */
} Table;

static const char *CAPSULE = "_tokscope_merge.Table";

static inline uint64_t
fnv1a(const char *p, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    /* murmur3's finalizer: FNV's low bits alone cluster in a power-of-two table */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static void
table_free(PyObject *capsule)
{
    Table *t = (Table *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (t == NULL)
        return;
    PyMem_Free(t->index);
    PyMem_Free(t->entries);
    PyMem_Free(t->arena);
    PyMem_Free(t);
}

static PyObject *
build(PyObject *self, PyObject *args)
{
    PyObject *ranks;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &ranks))
        return NULL;
    Py_ssize_t n = PyDict_GET_SIZE(ranks), pos = 0;
    PyObject *key, *value;
    Py_ssize_t capacity = n * 8 + 64; /* grown below when the tokens are longer on average */
    size_t size = 16;
    while (size < (size_t)n * 2 + 16)
        size <<= 1;
    Table *t = PyMem_Malloc(sizeof(Table));
    if (t == NULL)
        return PyErr_NoMemory();
    t->index = PyMem_New(uint32_t, size);
    t->entries = PyMem_New(Entry, n ? n : 1);
    t->arena = PyMem_Malloc(capacity);
    t->mask = size - 1;
    if (t->index == NULL || t->entries == NULL || t->arena == NULL || n >= (Py_ssize_t)UINT32_MAX) {
        PyMem_Free(t->index);
        PyMem_Free(t->entries);
        PyMem_Free(t->arena);
        PyMem_Free(t);
        return PyErr_NoMemory();
    }
    memset(t->index, 0, size * sizeof(uint32_t));
    for (int i = 0; i < 65536; i++)
        t->pair2[i] = -1;
    for (int i = 0; i < 256; i++)
        t->byte1[i] = -1;
    uint32_t count = 0;
    Py_ssize_t at = 0;
    pos = 0;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
        Py_ssize_t rank = PyLong_Check(value) ? PyLong_AsSsize_t(value) : -1;
        if (rank < 0 || rank > INT32_MAX) {
            /* the caller keeps the pure loop for such a table */
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "ranks must be ints from 0 to 2**31 - 1");
            goto fail;
        }
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "ranks must map bytes to int");
            goto fail;
        }
        const char *p = PyBytes_AS_STRING(key);
        Py_ssize_t len = PyBytes_GET_SIZE(key);
        if (len > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "a token too long for the table");
            goto fail;
        }
        if (at + len > capacity) {
            Py_ssize_t bigger = capacity * 2 + len;
            char *grown = PyMem_Realloc(t->arena, bigger);
            if (grown == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            t->arena = grown;
            capacity = bigger;
        }
        if (len == 1)
            t->byte1[(unsigned char)p[0]] = (int32_t)rank;
        if (len == 2)
            t->pair2[((unsigned char)p[0] << 8) | (unsigned char)p[1]] = (int32_t)rank;
        memcpy(t->arena + at, p, len);
        uint64_t h = fnv1a(p, len);
        size_t i = h & t->mask;
        while (t->index[i])
            i = (i + 1) & t->mask;
        Entry *e = &t->entries[count];
        e->hash = (uint32_t)(h >> 32);
        e->offset = (uint32_t)at;
        e->len = (uint32_t)len;
        e->rank = (int32_t)rank;
        t->index[i] = ++count;
        at += len;
        if (at > (Py_ssize_t)UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "ranks too large for the table");
            goto fail;
        }
    }
    PyObject *capsule = PyCapsule_New(t, CAPSULE, table_free);
    if (capsule != NULL)
        return capsule;
fail:
    PyMem_Free(t->index);
    PyMem_Free(t->entries);
    PyMem_Free(t->arena);
    PyMem_Free(t);
    return NULL;
}

static inline Py_ssize_t
lookup(const Table *t, const char *p, Py_ssize_t len)
{
    if (len == 2) {
        int32_t r = t->pair2[((unsigned char)p[0] << 8) | (unsigned char)p[1]];
        return r < 0 ? NONE : r;
    }
    if (len == 1) {
        int32_t r = t->byte1[(unsigned char)p[0]];
        return r < 0 ? NONE : r;
    }
    uint64_t h = fnv1a(p, len);
    size_t i = h & t->mask;
    uint32_t high = (uint32_t)(h >> 32);
    for (;;) {
        uint32_t at = t->index[i];
        if (at == 0)
            return NONE;
        const Entry *e = &t->entries[at - 1];
        if (e->hash == high && e->len == (uint64_t)len && memcmp(t->arena + e->offset, p, len) == 0)
            return e->rank;
        i = (i + 1) & t->mask;
    }
}

/* The ranks of the parts of data[0:n] after merging (appended to out as ints); max_rank < 0: none.
 * Returns the number of parts, or -1 with an exception set. */
static Py_ssize_t
table_merge(const Table *t, const char *data, Py_ssize_t n, Py_ssize_t max_rank, Py_ssize_t **ranks_out,
            Py_ssize_t *stack_buf)
{
    /* start[0..m], pair[0..m-2] and the part ranks share one buffer of 3n+1 */
    Py_ssize_t *buf = stack_buf;
    if (3 * n + 1 > 3 * STACK_PARTS + 1) {
        buf = PyMem_New(Py_ssize_t, 3 * n + 1);
        if (buf == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_ssize_t *start = buf, *pair = buf + n + 1, *part = buf + 2 * n + 1;
    Py_ssize_t m = n;
    for (Py_ssize_t k = 0; k <= n; k++)
        start[k] = k;
    for (Py_ssize_t k = 0; k + 1 < n; k++) {
        Py_ssize_t r = lookup(t, data + k, 2);
        pair[k] = (max_rank >= 0 && r >= max_rank) ? NONE : r;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        part[k] = -1; /* a single byte: looked up at the end */
    while (m > 1) {
        Py_ssize_t best = NONE, at = -1;
        for (Py_ssize_t k = 0; k + 1 < m; k++) {
            if (pair[k] < best) {
                best = pair[k];
                at = k;
            }
        }
        if (at < 0)
            break;
        part[at] = best;
        memmove(&start[at + 1], &start[at + 2], (m - at - 1) * sizeof(Py_ssize_t));
        memmove(&part[at + 1], &part[at + 2], (m - at - 2) * sizeof(Py_ssize_t));
        if (m - at - 3 > 0)
            memmove(&pair[at + 1], &pair[at + 2], (m - at - 3) * sizeof(Py_ssize_t));
        m--;
        if (at + 1 < m) {
            Py_ssize_t r = lookup(t, data + start[at], start[at + 2] - start[at]);
            pair[at] = (max_rank >= 0 && r >= max_rank) ? NONE : r;
        }
        if (at > 0) {
            Py_ssize_t r = lookup(t, data + start[at - 1], start[at + 1] - start[at - 1]);
            pair[at - 1] = (max_rank >= 0 && r >= max_rank) ? NONE : r;
        }
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        if (part[k] < 0) {
            Py_ssize_t r = lookup(t, data + start[k], start[k + 1] - start[k]);
            if (r == NONE) {
                PyObject *key = PyBytes_FromStringAndSize(data + start[k], start[k + 1] - start[k]);
                if (key != NULL) {
                    PyErr_SetObject(PyExc_KeyError, key);
                    Py_DECREF(key);
                }
                if (buf != stack_buf)
                    PyMem_Free(buf);
                return -1;
            }
            part[k] = r;
        }
    }
    /* the ranks move to the front of the buffer for the caller */
    memmove(buf, part, m * sizeof(Py_ssize_t));
    *ranks_out = buf;
    return m;
}

static PyObject *
merge_table(PyObject *self, PyObject *args)
{
    PyObject *capsule;
    Py_buffer view;
    Py_ssize_t max_rank;
    if (!PyArg_ParseTuple(args, "Oy*n", &capsule, &view, &max_rank))
        return NULL;
    Table *t = (Table *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (t == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t stack_buf[3 * STACK_PARTS + 1];
    Py_ssize_t *ranks;
    Py_ssize_t m = view.len == 0 ? 0 : table_merge(t, view.buf, view.len, max_rank, &ranks, stack_buf);
    PyObject *result = NULL;
    if (m >= 0) {
        result = PyTuple_New(m);
        for (Py_ssize_t k = 0; result != NULL && k < m; k++) {
            PyObject *id = PyLong_FromSsize_t(ranks[k]);
            if (id == NULL)
                Py_CLEAR(result);
            else
                PyTuple_SET_ITEM(result, k, id);
        }
        if (view.len && ranks != stack_buf)
            PyMem_Free(ranks);
    }
    PyBuffer_Release(&view);
    return result;
}

/* encode_chunks(table, chunks, cache, limit, out, max_bytes, long_chunk): for each chunk (a str),
 * its ids from ``cache`` or made here (the whole chunk as one token, else the merge loop; a chunk
 * of more than max_bytes bytes by ``long_chunk(bytes) -> tuple``, and not cached) and kept in
 * ``cache`` (emptied when it holds ``limit`` entries); all appended to the list ``out``. */
static PyObject *
encode_chunks(PyObject *self, PyObject *args)
{
    PyObject *capsule, *chunks, *cache, *out, *long_chunk;
    Py_ssize_t limit, max_bytes;
    if (!PyArg_ParseTuple(args, "OOO!nO!nO", &capsule, &chunks, &PyDict_Type, &cache, &limit, &PyList_Type, &out,
                          &max_bytes, &long_chunk))
        return NULL;
    Table *t = (Table *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (t == NULL)
        return NULL;
    PyObject *iter = PyObject_GetIter(chunks);
    if (iter == NULL)
        return NULL;
    Py_ssize_t stack_buf[3 * STACK_PARTS + 1];
    PyObject *chunk;
    while ((chunk = PyIter_Next(iter)) != NULL) {
        PyObject *ids = PyDict_GetItemWithError(cache, chunk);
        if (ids != NULL) {
            Py_ssize_t k, len = PyTuple_GET_SIZE(ids);
            for (k = 0; k < len; k++) {
                if (PyList_Append(out, PyTuple_GET_ITEM(ids, k)) < 0)
                    goto fail;
            }
            Py_DECREF(chunk);
            continue;
        }
        if (PyErr_Occurred())
            goto fail;
        if (!PyUnicode_Check(chunk)) {
            PyErr_SetString(PyExc_TypeError, "chunks must be str");
            goto fail;
        }
        PyObject *utf8 = PyUnicode_AsUTF8String(chunk); /* surrogates were fixed before: strict */
        if (utf8 == NULL)
            goto fail;
        const char *data = PyBytes_AS_STRING(utf8);
        Py_ssize_t n = PyBytes_GET_SIZE(utf8);
        Py_ssize_t whole = n ? lookup(t, data, n) : NONE;
        if (whole != NONE) {
            ids = PyTuple_New(1);
            PyObject *id = ids ? PyLong_FromSsize_t(whole) : NULL;
            if (id == NULL) {
                Py_XDECREF(ids);
                Py_DECREF(utf8);
                goto fail;
            }
            PyTuple_SET_ITEM(ids, 0, id);
        }
        else if (n > max_bytes) {
            /* a long chunk: the scan here is quadratic, the caller's heap loop is not */
            ids = PyObject_CallOneArg(long_chunk, utf8);
            if (ids != NULL && !PyTuple_Check(ids)) {
                Py_DECREF(ids);
                PyErr_SetString(PyExc_TypeError, "long_chunk must return a tuple");
                ids = NULL;
            }
            if (ids == NULL) {
                Py_DECREF(utf8);
                goto fail;
            }
        }
        else {
            Py_ssize_t *ranks;
            Py_ssize_t m = n == 0 ? 0 : table_merge(t, data, n, -1, &ranks, stack_buf);
            if (m < 0) {
                Py_DECREF(utf8);
                goto fail;
            }
            ids = PyTuple_New(m);
            for (Py_ssize_t k = 0; ids != NULL && k < m; k++) {
                PyObject *id = PyLong_FromSsize_t(ranks[k]);
                if (id == NULL)
                    Py_CLEAR(ids);
                else
                    PyTuple_SET_ITEM(ids, k, id);
            }
            if (n && ranks != stack_buf)
                PyMem_Free(ranks);
            if (ids == NULL) {
                Py_DECREF(utf8);
                goto fail;
            }
        }
        int bad = 0;
        if (n <= max_bytes) { /* a long chunk is not kept: the cache's memory stays bounded */
            if (PyDict_GET_SIZE(cache) >= limit)
                PyDict_Clear(cache);
            bad = PyDict_SetItem(cache, chunk, ids) < 0;
        }
        Py_DECREF(utf8);
        for (Py_ssize_t k = 0; !bad && k < PyTuple_GET_SIZE(ids); k++)
            bad = PyList_Append(out, PyTuple_GET_ITEM(ids, k)) < 0;
        Py_DECREF(ids);
        if (bad)
            goto fail;
        Py_DECREF(chunk);
    }
    Py_DECREF(iter);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
fail:
    Py_DECREF(chunk);
    Py_DECREF(iter);
    return NULL;
}

static PyMethodDef methods[] = {
    {"merge_ids", merge_ids, METH_VARARGS,
     "merge_ids(data, ranks, max_rank) -> tuple of ids: byte-pair merge of one chunk (max_rank < 0: no cut-off)"},
    {"build", build, METH_VARARGS, "build(ranks) -> table: the ranks copied for the loops below"},
    {"merge_table", merge_table, METH_VARARGS, "merge_table(table, data, max_rank) -> tuple of ids"},
    {"encode_chunks", encode_chunks, METH_VARARGS,
     "encode_chunks(table, chunks, cache, limit, out, max_bytes, long_chunk) -> None: each chunk's ids appended to out"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tokscope_merge",
    "tokscope's compiled byte-pair merge loop (optional; tokscope.core.models.ranks falls back to Python)",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__tokscope_merge(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", ABI_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
