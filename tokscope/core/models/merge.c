/* The byte-pair merge loop of tokscope.core.models.ranks, compiled: _tokscope_merge.merge_ids (and,
 * at the end of this file, the Unigram lattice of tokscope.core.models.unigram: lattice_*).
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

/* ----- the Unigram lattice ----------------------------------------------------------------------
 *
 * The best path of tokscope.core.models.unigram and .sentencepiece_unigram, compiled (their
 * pure-Python Viterbi loops stay the test oracle). LATTICE_ABI names this part's version.
 *
 * lattice_build(pieces: dict[str, int], scores: list[float]) -> table
 *     a trie of the pieces found in a text (code point by code point), each with its id and its
 *     lattice score scores[id]; a snapshot: the model never changes its pieces.
 * lattice_viterbi(table, text, mode, unk_id, unk_score) -> (path, score) or None
 *     the best path over ``text`` as a list of (id, start, end) (an unknown node has unk_id, -1
 *     when unk_id < 0), and the path's score. ``mode`` says whose Viterbi:
 *       0  SentencePiece's (unigram_model.cc): single-precision sums (the scores and unk_score
 *          are floats already), a later candidate replaces only a strictly better one, path
 *          scores rebased once they pass 100000 in size, a position's first candidate always
 *          taken;
 *       1  llama.cpp's UGM: double sums, every position starts at -DBL_MAX and a candidate must
 *          score strictly higher;
 *       2  Hugging Face's encode_optimized: double sums as mode 0 compares them; None when an
 *          unknown node is taken and unk_id < 0 (the caller raises, as Hugging Face fails).
 *     At each position the walk along the trie stops where no piece goes on; a character that
 *     starts no one-character piece is an unknown node scored unk_score.
 * lattice_encode(table, text, mode, unk_id, unk_score, byte_ids, ids_only=False) -> list or None
 *     SentencePiece's Encode after its model (Pieces.finish), as (id, start, end) tokens or, with
 *     ids_only, their ids alone: the best path (mode 0 or 1) with
 *     each run of unknown nodes fused into one unk_id token, or with byte_ids (256 ids) each
 *     unknown node spelled as the byte pieces of its UTF-8 (a surrogate as its three bytes), each
 *     spanning the node. None when an unknown token is needed but unk_id < 0 (the caller
 *     raises). A piece whose id is unk_id counts as unknown, as in Pieces.finish.
 *
 * The walk reads the str's code points and never runs Python code, so it runs without the GIL.
 */

#define LATTICE_ABI_VERSION 1
#define LATTICE_RESET 100000.0

/* One edge of the trie: its key, the node it leads to and the piece that ends there (a probe
 * reads one 16-byte slot). */
typedef struct {
    uint64_t key;  /* (parent node << 21 | code point) + 1; 0 marks an empty slot */
    int32_t child; /* the node the edge leads to */
    int32_t piece; /* the id of the piece ending at that node, -1 when none does */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    int shift;        /* 64 - log2 of the table's size */
    double *score;    /* per node: the piece's lattice score */
    Py_ssize_t nodes;
    Py_ssize_t longest; /* code points of the longest piece */
    PyObject **id_objects; /* the int object of each id up to max_id, made on first use */
    Py_ssize_t max_id;
} Lattice;

static const char *LATTICE_CAPSULE = "_tokscope_merge.Lattice";

/* Fibonacci hashing: the high bits of the key times 2**64 / phi (every key bit reaches them) */
static inline size_t
lattice_slot(uint64_t key, int shift)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> shift);
}

static inline const Slot *
lattice_edge(const Lattice *t, int32_t node, Py_UCS4 c)
{
    uint64_t key = (((uint64_t)node << 21) | (uint64_t)c) + 1;
    size_t i = lattice_slot(key, t->shift);
    for (;;) {
        const Slot *slot = &t->slots[i];
        if (slot->key == key)
            return slot;
        if (slot->key == 0)
            return NULL;
        i = (i + 1) & t->mask;
    }
}

static void
lattice_clear(Lattice *t)
{
    if (t->id_objects != NULL) {
        for (Py_ssize_t i = 0; i <= t->max_id; i++)
            Py_XDECREF(t->id_objects[i]);
        PyMem_Free(t->id_objects);
    }
    PyMem_Free(t->slots);
    PyMem_Free(t->score);
    PyMem_Free(t);
}

static void
lattice_free(PyObject *capsule)
{
    Lattice *t = (Lattice *)PyCapsule_GetPointer(capsule, LATTICE_CAPSULE);
    if (t != NULL)
        lattice_clear(t);
}

/* The table doubled, every slot put where its key now goes. */
static int
lattice_grow(Lattice *t)
{
    size_t old_size = t->mask + 1, size = old_size * 2;
    Slot *slots = PyMem_New(Slot, size);
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0, size * sizeof(Slot));
    int shift = t->shift - 1;
    for (size_t j = 0; j < old_size; j++) {
        const Slot *slot = &t->slots[j];
        if (slot->key == 0)
            continue;
        size_t i = lattice_slot(slot->key, shift);
        while (slots[i].key != 0)
            i = (i + 1) & (size - 1);
        slots[i] = *slot;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    t->shift = shift;
    return 0;
}

static PyObject *
lattice_build(PyObject *self, PyObject *args)
{
    PyObject *pieces, *scores;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &pieces, &PyList_Type, &scores))
        return NULL;
    Py_ssize_t n_scores = PyList_GET_SIZE(scores);
    Py_ssize_t total = 1, pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(pieces, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return NULL;
        }
        total += PyUnicode_GET_LENGTH(key);
    }
    if (total >= INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "pieces too long for the lattice");
        return NULL;
    }
    /* nodes are at most the pieces' characters, but shared prefixes make them far fewer (XLM-R's
     * 250k pieces: 1.39M characters, 505k nodes): the table starts sized for a third of the
     * characters and doubles when it is two thirds full (a quarter of the memory, fewer misses) */
    size_t size = 16;
    int bits = 4;
    while (size < (size_t)total / 2) {
        size <<= 1;
        bits++;
    }
    Lattice *t = PyMem_Malloc(sizeof(Lattice));
    if (t == NULL)
        return PyErr_NoMemory();
    t->slots = PyMem_New(Slot, size);
    t->score = PyMem_New(double, total);
    t->mask = size - 1;
    t->shift = 64 - bits;
    t->nodes = 1;
    t->longest = 0;
    t->id_objects = NULL;
    t->max_id = -1;
    if (t->slots == NULL || t->score == NULL) {
        lattice_clear(t);
        return PyErr_NoMemory();
    }
    memset(t->slots, 0, size * sizeof(Slot));
    t->score[0] = 0.0;
    pos = 0;
    while (PyDict_Next(pieces, &pos, &key, &value)) {
        Py_ssize_t id = PyLong_AsSsize_t(value);
        if (id == -1 && PyErr_Occurred())
            goto fail;
        if (id < 0 || id > INT32_MAX || id >= n_scores) {
            PyErr_SetString(PyExc_ValueError, "ids must be from 0 to 2**31 - 1, each with a score");
            goto fail;
        }
        double score = PyFloat_AsDouble(PyList_GET_ITEM(scores, id));
        if (score == -1.0 && PyErr_Occurred())
            goto fail;
        Py_ssize_t len = PyUnicode_GET_LENGTH(key);
        if (len == 0)
            continue; /* the empty piece is never found in a text */
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        int32_t node = 0;
        Slot *slot = NULL;
        for (Py_ssize_t j = 0; j < len; j++) {
            if ((size_t)t->nodes * 3 >= (t->mask + 1) * 2 && lattice_grow(t) < 0)
                goto fail;
            uint64_t k = (((uint64_t)node << 21) | (uint64_t)PyUnicode_READ(kind, data, j)) + 1;
            size_t i = lattice_slot(k, t->shift);
            while (t->slots[i].key != 0 && t->slots[i].key != k)
                i = (i + 1) & t->mask;
            slot = &t->slots[i];
            if (slot->key == 0) {
                slot->key = k;
                slot->child = (int32_t)t->nodes;
                slot->piece = -1;
                t->score[t->nodes] = 0.0;
                t->nodes++;
            }
            node = slot->child;
        }
        slot->piece = (int32_t)id;
        t->score[node] = score;
        if (id > t->max_id)
            t->max_id = id;
        if (len > t->longest)
            t->longest = len;
    }
    t->id_objects = PyMem_New(PyObject *, t->max_id + 1);
    if (t->id_objects == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i <= t->max_id; i++)
        t->id_objects[i] = NULL;
    PyObject *capsule = PyCapsule_New(t, LATTICE_CAPSULE, lattice_free);
    if (capsule != NULL)
        return capsule;
fail:
    lattice_clear(t);
    return NULL;
}

/* The best path's last piece at each position: start[j] (-1 when unreached) and id[j]. Returns
 * the score at the end, in *missing_unk 1 when mode 2 took an unknown node and unk_id < 0. */
static double
lattice_run(const Lattice *t, int kind, const void *data, Py_ssize_t n, int mode, int32_t unk_id,
            double unk_score, int32_t *start, int32_t *id, void *best_buf, int *missing_unk)
{
    const double lowest = -1.7976931348623157e308;
    int32_t unk = unk_id < 0 ? -1 : unk_id;
    Py_ssize_t longest = t->longest;
    *missing_unk = 0;
    for (Py_ssize_t j = 0; j <= n; j++)
        start[j] = -1;
    if (mode == 0) {
        float *best = (float *)best_buf;
        float unk_f = (float)unk_score;
        Py_ssize_t frontier = 0;
        for (Py_ssize_t j = 0; j <= n; j++)
            best[j] = 0.0f;
        for (Py_ssize_t i = 0; i < n; i++) {
            float base = best[i];
            if (base < -LATTICE_RESET || base > LATTICE_RESET) {
                for (Py_ssize_t j = i; j <= frontier; j++) {
                    if (j == i || start[j] != -1)
                        best[j] = (float)((double)best[j] - (double)base);
                }
                base = 0.0f;
            }
            int single = 0;
            Py_ssize_t stop = n < i + longest ? n : i + longest;
            int32_t node = 0;
            for (Py_ssize_t j = i; j < stop;) {
                const Slot *edge = lattice_edge(t, node, PyUnicode_READ(kind, data, j));
                j++;
                if (edge == NULL)
                    break;
                node = edge->child;
                int32_t found = edge->piece;
                if (found >= 0) {
                    if (j > frontier)
                        frontier = j;
                    float candidate = (float)((double)(float)t->score[node] + (double)base);
                    if (start[j] == -1 || candidate > best[j]) {
                        best[j] = candidate;
                        start[j] = (int32_t)i;
                        id[j] = found;
                    }
                    if (j == i + 1)
                        single = 1;
                }
            }
            if (!single) {
                Py_ssize_t j = i + 1;
                if (j > frontier)
                    frontier = j;
                float candidate = (float)((double)unk_f + (double)base);
                if (start[j] == -1 || candidate > best[j]) {
                    best[j] = candidate;
                    start[j] = (int32_t)i;
                    id[j] = unk;
                }
            }
        }
        return (double)best[n];
    }
    double *best = (double *)best_buf;
    for (Py_ssize_t j = 0; j <= n; j++)
        best[j] = mode == 1 ? lowest : 0.0;
    best[0] = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double base = best[i];
        int single = 0;
        Py_ssize_t stop = n < i + longest ? n : i + longest;
        int32_t node = 0;
        for (Py_ssize_t j = i; j < stop;) {
            const Slot *edge = lattice_edge(t, node, PyUnicode_READ(kind, data, j));
            j++;
            if (edge == NULL)
                break;
            node = edge->child;
            int32_t found = edge->piece;
            if (found >= 0) {
                if (j == i + 1)
                    single = 1;
                double candidate = base + t->score[node];
                if (mode == 1 ? candidate > best[j] : (start[j] < 0 || candidate > best[j])) {
                    best[j] = candidate;
                    start[j] = (int32_t)i;
                    id[j] = found;
                }
            }
        }
        if (!single) {
            Py_ssize_t j = i + 1;
            double candidate = base + unk_score;
            if (mode == 1 ? candidate > best[j] : (start[j] < 0 || candidate > best[j])) {
                if (mode == 2 && unk < 0) {
                    *missing_unk = 1;
                    return 0.0;
                }
                best[j] = candidate;
                start[j] = (int32_t)i;
                id[j] = unk;
            }
        }
    }
    return best[n];
}

/* Runs the lattice over text; on success *count pieces (start, id) from the text's start are in
 * the front of start/id (the path, in order). Returns 0, -1 with an exception set, or 1 when mode
 * 2 needs the unknown id it lacks. */
static int
lattice_path(PyObject *capsule, PyObject *text, int mode, Py_ssize_t unk_id, double unk_score,
             int32_t **start_out, int32_t **id_out, Py_ssize_t *count, double *score)
{
    Lattice *t = (Lattice *)PyCapsule_GetPointer(capsule, LATTICE_CAPSULE);
    if (t == NULL)
        return -1;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "text must be str");
        return -1;
    }
    if (mode < 0 || mode > 2) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0, 1 or 2");
        return -1;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "text too long for the lattice");
        return -1;
    }
    int32_t *start = PyMem_New(int32_t, n + 1);
    int32_t *id = PyMem_New(int32_t, n + 1);
    void *best = PyMem_Malloc((n + 1) * (mode == 0 ? sizeof(float) : sizeof(double)));
    if (start == NULL || id == NULL || best == NULL) {
        PyMem_Free(start);
        PyMem_Free(id);
        PyMem_Free(best);
        PyErr_NoMemory();
        return -1;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int32_t unk = unk_id < 0 || unk_id > INT32_MAX ? -1 : (int32_t)unk_id;
    int missing = 0;
    double end_score;
    Py_BEGIN_ALLOW_THREADS
    end_score = lattice_run(t, kind, data, n, mode, unk, unk_score, start, id, best, &missing);
    Py_END_ALLOW_THREADS
    PyMem_Free(best);
    if (missing) {
        PyMem_Free(start);
        PyMem_Free(id);
        return 1;
    }
    /* backtrack: count the path's pieces, then write them front to back into arrays of their own */
    Py_ssize_t m = 0;
    for (Py_ssize_t end = n; end > 0; end = start[end]) {
        if (start[end] < 0) { /* unreachable: every position is reached */
            PyMem_Free(start);
            PyMem_Free(id);
            PyErr_SetString(PyExc_RuntimeError, "the lattice left a position unreached");
            return -1;
        }
        m++;
    }
    int32_t *path_start = PyMem_New(int32_t, m + 1);
    int32_t *path_id = PyMem_New(int32_t, m + 1);
    if (path_start == NULL || path_id == NULL) {
        PyMem_Free(path_start);
        PyMem_Free(path_id);
        PyMem_Free(start);
        PyMem_Free(id);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t k = m;
    for (Py_ssize_t end = n; end > 0; end = start[end]) {
        k--;
        path_start[k] = start[end];
        path_id[k] = id[end];
    }
    PyMem_Free(start);
    PyMem_Free(id);
    start = path_start;
    id = path_id;
    *start_out = start;
    *id_out = id;
    *count = m;
    *score = end_score;
    return 0;
}

/* A new reference to the int object of id (kept in the table for the ids of its pieces). */
static PyObject *
id_object(Lattice *t, Py_ssize_t id)
{
    if (id < 0 || id > t->max_id)
        return PyLong_FromSsize_t(id);
    PyObject *o = t->id_objects[id];
    if (o == NULL) {
        o = PyLong_FromSsize_t(id);
        if (o == NULL)
            return NULL;
        t->id_objects[id] = o;
    }
    Py_INCREF(o);
    return o;
}

/* The tuple (id, start, end), taking the three references; NULL (all released) on failure. The
 * tuple holds ints only, so the garbage collector need not track it (as CPython untracks such
 * tuples itself at its first collection). */
static PyObject *
triple(PyObject *id, PyObject *start, PyObject *end)
{
    if (id == NULL || start == NULL || end == NULL) {
        Py_XDECREF(id);
        Py_XDECREF(start);
        Py_XDECREF(end);
        return NULL;
    }
    PyObject *item = PyTuple_New(3);
    if (item == NULL) {
        Py_DECREF(id);
        Py_DECREF(start);
        Py_DECREF(end);
        return NULL;
    }
    PyTuple_SET_ITEM(item, 0, id);
    PyTuple_SET_ITEM(item, 1, start);
    PyTuple_SET_ITEM(item, 2, end);
    PyObject_GC_UnTrack(item);
    return item;
}

/* The offsets of the last tuple made and their int objects (borrowed from it; NULL before the
 * first): the next tuple shares them when its offsets are equal (a token starts where the last
 * one ended; byte tokens of one piece repeat its offsets). */
typedef struct {
    Py_ssize_t start, end;
    PyObject *start_obj, *end_obj;
} Offsets;

static PyObject *
offset_object(const Offsets *o, Py_ssize_t value)
{
    PyObject *same = o->end_obj != NULL && o->end == value ? o->end_obj
                     : o->start_obj != NULL && o->start == value ? o->start_obj : NULL;
    if (same != NULL) {
        Py_INCREF(same);
        return same;
    }
    return PyLong_FromSsize_t(value);
}

/* Puts (id, start, end) in the list out (made with its final size) at *filled, then counts it;
 * only the id when last is NULL. Returns -1 on failure. */
static int
put_triple(PyObject *out, Py_ssize_t *filled, Lattice *t, Py_ssize_t id, Py_ssize_t start, Py_ssize_t end,
           Offsets *last)
{
    if (last == NULL) {
        PyObject *id_obj = id_object(t, id);
        if (id_obj == NULL)
            return -1;
        PyList_SET_ITEM(out, *filled, id_obj);
        (*filled)++;
        return 0;
    }
    PyObject *start_obj = offset_object(last, start);
    PyObject *end_obj = offset_object(last, end);
    PyObject *item = triple(id_object(t, id), start_obj, end_obj);
    if (item == NULL)
        return -1;
    last->start = start;
    last->end = end;
    last->start_obj = PyTuple_GET_ITEM(item, 1);
    last->end_obj = PyTuple_GET_ITEM(item, 2);
    PyList_SET_ITEM(out, *filled, item);
    (*filled)++;
    return 0;
}

static PyObject *
lattice_viterbi(PyObject *self, PyObject *args)
{
    PyObject *capsule, *text;
    int mode;
    Py_ssize_t unk_id;
    double unk_score;
    if (!PyArg_ParseTuple(args, "OUind", &capsule, &text, &mode, &unk_id, &unk_score))
        return NULL;
    int32_t *start, *id;
    Py_ssize_t m;
    double score;
    int status = lattice_path(capsule, text, mode, unk_id, unk_score, &start, &id, &m, &score);
    if (status < 0)
        return NULL;
    if (status > 0)
        Py_RETURN_NONE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Lattice *t = (Lattice *)PyCapsule_GetPointer(capsule, LATTICE_CAPSULE);
    PyObject *path = PyList_New(m);
    Offsets last = {0, 0, NULL, NULL};
    Py_ssize_t filled = 0;
    for (Py_ssize_t k = 0; path != NULL && k < m; k++) {
        if (put_triple(path, &filled, t, id[k], start[k], k + 1 < m ? start[k + 1] : n, &last) < 0)
            Py_CLEAR(path);
    }
    PyMem_Free(start);
    PyMem_Free(id);
    if (path == NULL)
        return NULL;
    PyObject *out = Py_BuildValue("(Nd)", path, score);
    return out;
}

/* Appends the UTF-8 bytes of code point c to buf (a surrogate as its three bytes); their number. */
static int
utf8_of(Py_UCS4 c, unsigned char *buf)
{
    if (c < 0x80) {
        buf[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        buf[0] = (unsigned char)(0xC0 | (c >> 6));
        buf[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        buf[0] = (unsigned char)(0xE0 | (c >> 12));
        buf[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        buf[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    buf[0] = (unsigned char)(0xF0 | (c >> 18));
    buf[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    buf[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    buf[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

static PyObject *
lattice_encode(PyObject *self, PyObject *args)
{
    PyObject *capsule, *text, *byte_ids;
    int mode, ids_only = 0;
    Py_ssize_t unk_id;
    double unk_score;
    if (!PyArg_ParseTuple(args, "OUindO|p", &capsule, &text, &mode, &unk_id, &unk_score, &byte_ids, &ids_only))
        return NULL;
    Py_ssize_t bytes[256];
    int fallback = byte_ids != Py_None;
    if (fallback) {
        PyObject *seq = PySequence_Fast(byte_ids, "byte_ids must be a sequence");
        if (seq == NULL)
            return NULL;
        if (PySequence_Fast_GET_SIZE(seq) != 256) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "byte_ids must hold 256 ids");
            return NULL;
        }
        for (int b = 0; b < 256; b++) {
            bytes[b] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(seq, b));
            if (bytes[b] == -1 && PyErr_Occurred()) {
                Py_DECREF(seq);
                return NULL;
            }
        }
        Py_DECREF(seq);
    }
    int32_t *start, *id;
    Py_ssize_t m;
    double score;
    if (mode == 2) {
        PyErr_SetString(PyExc_ValueError, "lattice_encode is SentencePiece's: mode 0 or 1");
        return NULL;
    }
    int status = lattice_path(capsule, text, mode, unk_id, unk_score, &start, &id, &m, &score);
    if (status < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = NULL;
    /* the tokens are counted first, so the list is made with its size */
    Py_ssize_t count = 0;
    for (Py_ssize_t k = 0; k < m; k++) {
        int32_t piece = id[k];
        if (!(piece < 0 || (unk_id >= 0 && piece == unk_id)))
            count++;
        else if (fallback) {
            unsigned char buf[4];
            Py_ssize_t e = k + 1 < m ? start[k + 1] : n;
            for (Py_ssize_t j = start[k]; j < e; j++)
                count += utf8_of(PyUnicode_READ(kind, data, j), buf);
        }
        else if (unk_id < 0) { /* the caller raises: the model has no unknown piece */
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        else if (k == 0 || !(id[k - 1] < 0 || id[k - 1] == unk_id))
            count++; /* a run of unknown pieces is one unknown token */
    }
    out = PyList_New(count);
    if (out == NULL)
        goto done;
    Lattice *t = (Lattice *)PyCapsule_GetPointer(capsule, LATTICE_CAPSULE);
    Offsets offsets = {0, 0, NULL, NULL};
    Offsets *last = ids_only ? NULL : &offsets;
    Py_ssize_t filled = 0;
    Py_ssize_t k = 0;
    while (k < m) {
        Py_ssize_t s = start[k], e = k + 1 < m ? start[k + 1] : n;
        int32_t piece = id[k];
        int is_unk = piece < 0 || (unk_id >= 0 && piece == unk_id);
        if (!is_unk) {
            if (put_triple(out, &filled, t, piece, s, e, last) < 0) {
                Py_CLEAR(out);
                goto done;
            }
            k++;
            continue;
        }
        if (fallback) {
            unsigned char buf[4];
            for (Py_ssize_t j = s; j < e; j++) {
                int len = utf8_of(PyUnicode_READ(kind, data, j), buf);
                for (int b = 0; b < len; b++) {
                    if (put_triple(out, &filled, t, bytes[buf[b]], s, e, last) < 0) {
                        Py_CLEAR(out);
                        goto done;
                    }
                }
            }
            k++;
            continue;
        }
        /* a run of unknown pieces is one unknown token */
        Py_ssize_t run = k;
        while (run + 1 < m && (id[run + 1] < 0 || id[run + 1] == unk_id))
            run++;
        e = run + 1 < m ? start[run + 1] : n;
        if (put_triple(out, &filled, t, unk_id, s, e, last) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        k = run + 1;
    }
done:
    PyMem_Free(start);
    PyMem_Free(id);
    return out;
}

/* ----- SentencePiece .model files: the pieces of a ModelProto (tokscope.core.formats.sentencepiece_model)
 *
 * spm_model_pieces(data: bytes) -> (pieces: list[str], scores: bytes, types: list[int],
 *                                   trainer: list[tuple[int, int]], normalizer: list[tuple[int, int]])
 *
 * The top-level fields of a serialized ModelProto read as the Python reader (_top, _fields,
 * _piece_fields) reads them, check for check and in the same order: the pieces' texts (strict
 * UTF-8), their scores as the file's 4 little-endian bytes each (0 when absent), their types
 * (the field's varint as a signed 64-bit int, NORMAL when absent), and the spans of the trainer
 * and normalizer messages (read in Python). A file that is not one raises ValueError(kind,
 * detail): kind "truncated", "utf8" (a piece's text) or "file" (detail: the Python reader's
 * message). The Python reader stays the oracle; the tests hold the two to the same answers on
 * generated, truncated and corrupt files. */

#define SPM_ABI_VERSION 1
#define SPM_NORMAL 1

typedef struct {
    const unsigned char *data;
    Py_ssize_t n;        /* the whole file: a varint may be read past its message, as in Python */
} SpmReader;

/* A varint at *pos, read within the whole file. Returns 0, -1 when the file ends first
 * (truncated), -2 when it is longer than 10 bytes. *big is set when the value needs more than
 * 64 bits (its low 64 bits are kept, as Python's mask keeps them). */
static int
spm_varint(const SpmReader *r, Py_ssize_t *pos, uint64_t *value, int *big)
{
    uint64_t result = 0;
    int shift = 0;
    Py_ssize_t p = *pos;
    *big = 0;
    for (;;) {
        if (p >= r->n)
            return -1;
        unsigned char b = r->data[p++];
        uint64_t bits = (uint64_t)(b & 0x7F);
        if (shift < 64) {
            result |= bits << shift;
            if (shift > 57 && (bits >> (64 - shift)) != 0)
                *big = 1;
        }
        else if (bits != 0) {
            *big = 1;
        }
        if (b < 0x80) {
            *pos = p;
            *value = result;
            return 0;
        }
        shift += 7;
        if (shift > 63)
            return -2;
    }
}

/* data[0:size] as a str when it is strict UTF-8 (what bytes.decode("utf-8") accepts: no overlong
 * forms, no surrogates, nothing past U+10FFFF), made in one pass to learn its length and widest
 * character and one to write it: a piece is a few characters, where the general decoder's set-up
 * costs more than the work. Anything else goes to the general decoder, which raises. */
static PyObject *
spm_text(const unsigned char *s, Py_ssize_t size)
{
    Py_ssize_t length = 0, i = 0;
    Py_UCS4 widest = 0;
    while (i < size) {
        unsigned char c = s[i];
        Py_UCS4 ch;
        if (c < 0x80) {
            ch = c;
            i += 1;
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= size || (s[i + 1] & 0xC0) != 0x80)
                goto general;
            ch = ((Py_UCS4)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            i += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= size || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                goto general;
            ch = ((Py_UCS4)(c & 0x0F) << 12) | ((Py_UCS4)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            if (ch < 0x800 || (ch >= 0xD800 && ch <= 0xDFFF))
                goto general;
            i += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= size || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80
                || (s[i + 3] & 0xC0) != 0x80)
                goto general;
            ch = ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(s[i + 1] & 0x3F) << 12)
                 | ((Py_UCS4)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            if (ch < 0x10000 || ch > 0x10FFFF)
                goto general;
            i += 4;
        }
        else
            goto general;
        if (ch > widest)
            widest = ch;
        length++;
    }
    PyObject *text = PyUnicode_New(length, widest);
    if (text == NULL)
        return NULL;
    if (widest < 0x80) {
        memcpy(PyUnicode_DATA(text), s, size);
        return text;
    }
    int kind = PyUnicode_KIND(text);
    void *out = PyUnicode_DATA(text);
    Py_ssize_t j = 0;
    for (i = 0; i < size; j++) {
        unsigned char c = s[i];
        Py_UCS4 ch;
        if (c < 0x80) {
            ch = c;
            i += 1;
        }
        else if (c < 0xE0) {
            ch = ((Py_UCS4)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            i += 2;
        }
        else if (c < 0xF0) {
            ch = ((Py_UCS4)(c & 0x0F) << 12) | ((Py_UCS4)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            i += 3;
        }
        else {
            ch = ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(s[i + 1] & 0x3F) << 12)
                 | ((Py_UCS4)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            i += 4;
        }
        PyUnicode_WRITE(kind, out, j, ch);
    }
    return text;
general:
    return PyUnicode_DecodeUTF8((const char *)s, size, NULL);
}

static PyObject *
spm_fail(const char *kind, const char *detail)
{
    PyObject *exc = Py_BuildValue("(ss)", kind, detail);
    if (exc != NULL) {
        PyErr_SetObject(PyExc_ValueError, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static int
spm_varint_error(int rc)
{
    if (rc == -1)
        spm_fail("truncated", "");
    else
        spm_fail("file", "a varint of the SentencePiece model is longer than 10 bytes");
    return -1;
}

static int
spm_wire_error(uint64_t wire, const char *where)
{
    char message[120];
    PyOS_snprintf(message, sizeof(message), "the SentencePiece model has a field of wire type %d%s",
                  (int)wire, where);
    spm_fail("file", message);
    return -1;
}

/* One SentencePiece message in data[start:end], field by field (Python's _piece_fields over
 * _fields): *piece (a new reference, or NULL for none), the score's 4 bytes, the type. */
static int
spm_piece_fields(const SpmReader *r, Py_ssize_t start, Py_ssize_t end, PyObject **piece,
                 unsigned char score[4], PyObject **kind)
{
    Py_ssize_t pos = start;
    while (pos < end) {
        uint64_t key, value = 0;
        int big, rc;
        if (r->data[pos] < 0x80) {
            key = r->data[pos++];
            big = 0;
        }
        else if ((rc = spm_varint(r, &pos, &key, &big)) < 0)
            return spm_varint_error(rc);
        int key_big = big;
        uint64_t wire = key & 7, number = key >> 3;
        Py_ssize_t vstart = 0, vend = 0;
        if (wire == 0) {
            if ((rc = spm_varint(r, &pos, &value, &big)) < 0)
                return spm_varint_error(rc);
        }
        else if (wire == 2) {
            uint64_t length;
            if (pos < end && r->data[pos] < 0x80) {
                length = r->data[pos++];
                big = 0;
            }
            else if ((rc = spm_varint(r, &pos, &length, &big)) < 0)
                return spm_varint_error(rc);
            if (big || length > (uint64_t)(end - (pos < end ? pos : end)) || pos > end) {
                spm_fail("truncated", "");
                return -1;
            }
            vstart = pos;
            vend = pos + (Py_ssize_t)length;
            pos = vend;
        }
        else if (wire == 5 || wire == 1) {
            Py_ssize_t size = wire == 5 ? 4 : 8;
            if (pos + size > end) {
                spm_fail("truncated", "");
                return -1;
            }
            vstart = pos;
            pos += size;
        }
        else
            return spm_wire_error(wire, ", which protobuf does not use");
        if (number == 0 && !key_big) {
            spm_fail("file", "the SentencePiece model has a field numbered 0");
            return -1;
        }
        if (key_big)
            continue; /* a field number past 2**61: skipped, as any unknown field */
        if (number == 1 && wire == 2) {
            PyObject *text = spm_text(r->data + vstart, vend - vstart);
            if (text == NULL) {
                if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                    PyErr_Clear();
                    spm_fail("utf8", "");
                }
                return -1;
            }
            Py_XSETREF(*piece, text);
        }
        else if (number == 2 && wire == 5) {
            memcpy(score, r->data + vstart, 4);
        }
        else if (number == 3 && wire == 0) {
            PyObject *k = PyLong_FromLongLong((long long)value);
            if (k == NULL)
                return -1;
            Py_XSETREF(*kind, k);
        }
    }
    if (pos != end) {
        spm_fail("truncated", "");
        return -1;
    }
    return 0;
}

static int
spm_span(PyObject *list, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *span = Py_BuildValue("(nn)", start, end);
    if (span == NULL)
        return -1;
    int rc = PyList_Append(list, span);
    Py_DECREF(span);
    return rc;
}

static PyObject *
spm_model_pieces(PyObject *self, PyObject *args)
{
    Py_buffer buffer;
    if (!PyArg_ParseTuple(args, "y*", &buffer))
        return NULL;
    SpmReader r = {(const unsigned char *)buffer.buf, buffer.len};
    const unsigned char *data = r.data;
    Py_ssize_t n = r.n, pos = 0;
    PyObject *pieces = PyList_New(0), *types = PyList_New(0);
    PyObject *trainer = PyList_New(0), *normalizer = PyList_New(0);
    PyObject *scores = NULL, *normal = PyLong_FromLong(SPM_NORMAL), *out = NULL;
    Py_ssize_t capacity = 1024, count = 0;
    unsigned char *score_bytes = PyMem_Malloc(4 * capacity);
    if (pieces == NULL || types == NULL || trainer == NULL || normalizer == NULL || normal == NULL
        || score_bytes == NULL) {
        if (score_bytes == NULL)
            PyErr_NoMemory();
        goto done;
    }
    while (pos < n) {
        uint64_t key, length;
        int big, key_big, rc;
        Py_ssize_t start, end;
        if ((rc = spm_varint(&r, &pos, &key, &key_big)) < 0) {
            spm_varint_error(rc);
            goto done;
        }
        uint64_t wire = key & 7, number = key >> 3;
        if (wire == 2) {
            if ((rc = spm_varint(&r, &pos, &length, &big)) < 0) {
                spm_varint_error(rc);
                goto done;
            }
            if (big || length > (uint64_t)(n - pos)) {
                spm_fail("truncated", "");
                goto done;
            }
            start = pos;
            end = pos + (Py_ssize_t)length;
        }
        else if (wire == 0) {
            uint64_t value;
            if ((rc = spm_varint(&r, &pos, &value, &big)) < 0) {
                spm_varint_error(rc);
                goto done;
            }
            start = end = pos;
        }
        else if (wire == 5 || wire == 1) {
            Py_ssize_t size = wire == 5 ? 4 : 8;
            if (pos + size > n) {
                spm_fail("truncated", "");
                goto done;
            }
            start = end = pos + size;
        }
        else {
            spm_wire_error(wire, " at its top level");
            goto done;
        }
        if (number == 0 && !key_big) {
            spm_fail("file", "the SentencePiece model has a field numbered 0");
            goto done;
        }
        pos = end;
        if (wire != 2 || key_big)
            continue;
        if (number == 1) {
            PyObject *piece = NULL, *kind = NULL;
            unsigned char score[4] = {0, 0, 0, 0};
            /* the usual layout: 0a <len> <text> 15 <float> [18 <type>], one-byte lengths */
            Py_ssize_t k = end - start;
            if (k >= 7 && data[start] == 0x0A && data[start + 1] < 0x80 && start + 2 + data[start + 1] + 5 <= end
                && data[start + 2 + data[start + 1]] == 0x15) {
                Py_ssize_t text = start + 2, p = text + data[start + 1], rest = end - p - 5;
                if (rest == 0 || (rest == 2 && data[p + 5] == 0x18 && data[p + 6] < 0x80)) {
                    piece = spm_text(data + text, p - text);
                    if (piece == NULL) {
                        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                            PyErr_Clear();
                            spm_fail("utf8", "");
                        }
                        goto done;
                    }
                    memcpy(score, data + p + 1, 4);
                    if (rest == 2) {
                        kind = PyLong_FromLong(data[p + 6]);
                        if (kind == NULL) {
                            Py_DECREF(piece);
                            goto done;
                        }
                    }
                }
            }
            if (piece == NULL && spm_piece_fields(&r, start, end, &piece, score, &kind) < 0) {
                Py_XDECREF(piece);
                Py_XDECREF(kind);
                goto done;
            }
            if (piece == NULL) {
                piece = PyUnicode_FromStringAndSize("", 0);
                if (piece == NULL) {
                    Py_XDECREF(kind);
                    goto done;
                }
            }
            /* its hash now, while its characters are in the cache: the piece table's dict
             * reads it back from the object (32k pieces hashed later cost ~2 ms of misses) */
            if (PyObject_Hash(piece) == -1) {
                Py_DECREF(piece);
                Py_XDECREF(kind);
                goto done;
            }
            rc = PyList_Append(pieces, piece);
            Py_DECREF(piece);
            rc |= PyList_Append(types, kind != NULL ? kind : normal);
            Py_XDECREF(kind);
            if (rc < 0)
                goto done;
            if (count == capacity) {
                capacity *= 2;
                unsigned char *grown = PyMem_Realloc(score_bytes, 4 * capacity);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                score_bytes = grown;
            }
            memcpy(score_bytes + 4 * count, score, 4);
            count++;
        }
        else if (number == 2) {
            if (spm_span(trainer, start, end) < 0)
                goto done;
        }
        else if (number == 3) {
            if (spm_span(normalizer, start, end) < 0)
                goto done;
        }
    }
    scores = PyBytes_FromStringAndSize((const char *)score_bytes, 4 * count);
    if (scores != NULL)
        out = PyTuple_Pack(5, pieces, scores, types, trainer, normalizer);
done:
    PyBuffer_Release(&buffer);
    PyMem_Free(score_bytes);
    Py_XDECREF(pieces);
    Py_XDECREF(types);
    Py_XDECREF(trainer);
    Py_XDECREF(normalizer);
    Py_XDECREF(scores);
    Py_XDECREF(normal);
    return out;
}

/* ----- GGUF string arrays (tokscope.core.formats.gguf) ------------------------------------------
 *
 * gguf_strings(buf, pos, count) -> (joined: bytes, lengths: bytes, new_pos: int, read: int)
 *
 * Reads up to ``count`` GGUF strings (a little-endian u64 byte length, then the bytes) from
 * ``buf`` at ``pos``, and stops before the first one whose length or bytes are not wholly in
 * ``buf`` (the caller reads more of the file, or names the truncation, and calls again). Each
 * string's bytes are copied into ``joined`` followed by a NUL; ``lengths`` holds their byte
 * lengths as native u64s (``array('Q').frombytes``). The Python loop of ``_Source.strings`` does
 * the same and stays the fallback and the tests' oracle.
 */
#define GGUF_ABI_VERSION 1

static uint64_t
read_u64_le(const unsigned char *p)
{
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | p[i];
    return n;
}

static PyObject *
gguf_strings(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, count;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &pos, &count))
        return NULL;
    const unsigned char *b = view.buf;
    Py_ssize_t end = view.len;
    if (pos < 0 || pos > end || count < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "gguf_strings: a position outside the buffer or a negative count");
        return NULL;
    }
    Py_ssize_t p = pos, read = 0, total = 0;
    while (read < count && end - p >= 8) {
        uint64_t n = read_u64_le(b + p);
        if (n > (uint64_t)(end - p - 8))
            break;
        p += 8 + (Py_ssize_t)n;
        total += (Py_ssize_t)n + 1;
        read++;
    }
    PyObject *joined = PyBytes_FromStringAndSize(NULL, total);
    PyObject *lengths = PyBytes_FromStringAndSize(NULL, read * (Py_ssize_t)sizeof(uint64_t));
    if (joined == NULL || lengths == NULL) {
        Py_XDECREF(joined);
        Py_XDECREF(lengths);
        PyBuffer_Release(&view);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(joined);
    char *lens = PyBytes_AS_STRING(lengths);
    p = pos;
    for (Py_ssize_t k = 0; k < read; k++) {
        uint64_t n = read_u64_le(b + p);
        memcpy(lens + k * sizeof(uint64_t), &n, sizeof(uint64_t));
        memcpy(out, b + p + 8, (size_t)n);
        out += n;
        *out++ = '\0';
        p += 8 + (Py_ssize_t)n;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("NNnn", joined, lengths, p, read);
}

static PyMethodDef methods[] = {
    {"merge_ids", merge_ids, METH_VARARGS,
     "merge_ids(data, ranks, max_rank) -> tuple of ids: byte-pair merge of one chunk (max_rank < 0: no cut-off)"},
    {"build", build, METH_VARARGS, "build(ranks) -> table: the ranks copied for the loops below"},
    {"merge_table", merge_table, METH_VARARGS, "merge_table(table, data, max_rank) -> tuple of ids"},
    {"encode_chunks", encode_chunks, METH_VARARGS,
     "encode_chunks(table, chunks, cache, limit, out, max_bytes, long_chunk) -> None: each chunk's ids appended to out"},
    {"lattice_build", lattice_build, METH_VARARGS,
     "lattice_build(pieces, scores) -> table: the Unigram pieces found in a text, for the calls below"},
    {"lattice_viterbi", lattice_viterbi, METH_VARARGS,
     "lattice_viterbi(table, text, mode, unk_id, unk_score) -> (path, score) or None: the best Unigram path"},
    {"lattice_encode", lattice_encode, METH_VARARGS,
     "lattice_encode(table, text, mode, unk_id, unk_score, byte_ids, ids_only=False) -> list or None: SentencePiece's tokens"},
    {"spm_model_pieces", spm_model_pieces, METH_VARARGS,
     "spm_model_pieces(data) -> (pieces, scores, types, trainer, normalizer): a SentencePiece ModelProto's top level"},
    {"gguf_strings", gguf_strings, METH_VARARGS,
     "gguf_strings(buf, pos, count) -> (joined, lengths, new_pos, read): GGUF strings that lie wholly in buf"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tokscope_merge",
    "tokscope's compiled byte-pair merge loop (optional; tokscope.core.models.ranks falls back to Python)",
    -1, methods, NULL, NULL, NULL, NULL,
};

/* Each later part of the module (appended below, one section each) registers its functions and
 * its version constant with part_add. */
static int mlist_add(PyObject *m);  /* merge-list BPE */
static int cls_add(PyObject *m);    /* character-class runs */
static int tile_add(PyObject *m);   /* compare's bitmaps */
static int wpiece_add(PyObject *m); /* WordPiece and BERT's split */
static int pcm_add(PyObject *m);    /* the charsmap normalizer, float scores and Unigram ids */
static int vocab_add(PyObject *m);  /* the vocabulary checks and merge lists */
static int jload_add(PyObject *m);  /* a tokenizer.json's load: vocabularies, Unigram columns */

static int (*const PART_ADDS[])(PyObject *) = {mlist_add, cls_add, tile_add, wpiece_add, pcm_add, vocab_add,
                                                 jload_add};

/* A part's functions and its version constant added to m; -1 with an error set. */
static int
part_add(PyObject *m, PyMethodDef *methods, const char *abi, int version)
{
    if (PyModule_AddFunctions(m, methods) < 0)
        return -1;
    return PyModule_AddIntConstant(m, abi, version);
}

PyMODINIT_FUNC
PyInit__tokscope_merge(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "LATTICE_ABI", LATTICE_ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "SPM_ABI", SPM_ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "GGUF_ABI", GGUF_ABI_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    for (size_t i = 0; i < sizeof PART_ADDS / sizeof PART_ADDS[0]; i++) {
        if (PART_ADDS[i](m) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}


/* ----- merge-list BPE: Hugging Face's Word::merge_all, compiled ---------------------------------
 *
 * (batch7's block: tokscope.core.models.bpe.) The BPE of a tokenizer.json merges only the pairs
 * its merge list names, lowest merge rank first, leftmost first on equal ranks. BPE._merge_heap is
 * the pure-Python loop (and the tests' oracle); these are the same loop over a table of its own:
 *
 * mlist_build(keys, results) -> table: keys[rank] = left << 32 | right (an array('Q')'s buffer),
 *     results[rank] = the merged id (an array('I')'s buffer); a pair listed twice keeps its last
 *     rank, as the model's dict (and Hugging Face's map) does.
 * mlist_merge(table, ids, want_ends) -> list of ids, or (ids, ends) with want_ends: ids (the
 *     initial symbols, a list of ints) merged as one word; ends[k] is the number of initial
 *     symbols up to the end of final symbol k.
 *
 * A heap of rank << 32 | position over a linked list of symbols; an entry is skipped when its left
 * symbol is gone or is last, or when the pair there no longer makes the entry's token (Hugging
 * Face's stale-entry check, which compares the made ids, not the ranks).
 */

#define MLIST_ABI_VERSION 1
#define MLIST_EMPTY UINT32_MAX

typedef struct {
    uint64_t *keys;    /* left << 32 | right per slot */
    uint32_t *ranks;   /* the pair's rank per slot, MLIST_EMPTY for an empty slot */
    uint32_t *results; /* the made id per rank */
    Py_ssize_t n_merges;
    size_t mask;
    int shift;
} MList;

static const char *MLIST_CAPSULE = "_tokscope_merge.MergeList";

static inline size_t
mlist_slot(uint64_t key, int shift)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> shift);
}

/* the rank of the pair, or -1 when the merge list does not name it */
static inline int64_t
mlist_rank(const MList *t, uint64_t key)
{
    size_t i = mlist_slot(key, t->shift);
    for (;;) {
        uint32_t r = t->ranks[i];
        if (r == MLIST_EMPTY)
            return -1;
        if (t->keys[i] == key)
            return r;
        i = (i + 1) & t->mask;
    }
}

static void
mlist_clear(MList *t)
{
    PyMem_Free(t->keys);
    PyMem_Free(t->ranks);
    PyMem_Free(t->results);
    PyMem_Free(t);
}

static void
mlist_free(PyObject *capsule)
{
    MList *t = (MList *)PyCapsule_GetPointer(capsule, MLIST_CAPSULE);
    if (t != NULL)
        mlist_clear(t);
}

static PyObject *
mlist_build(PyObject *self, PyObject *args)
{
    Py_buffer kv, rv;
    if (!PyArg_ParseTuple(args, "y*y*", &kv, &rv))
        return NULL;
    PyObject *capsule = NULL;
    Py_ssize_t n = kv.len / 8;
    if (kv.len % 8 || rv.len % 4 || rv.len / 4 != n) {
        PyErr_SetString(PyExc_ValueError, "mlist_build: keys are 8-byte and results 4-byte items, as many of each");
        goto done;
    }
    if ((uint64_t)n >= MLIST_EMPTY) {
        PyErr_SetString(PyExc_ValueError, "mlist_build: the merge list is too long");
        goto done;
    }
    size_t size = 16;
    int bits = 4;
    while (size < (size_t)n * 2 + 16) {
        size <<= 1;
        bits++;
    }
    MList *t = PyMem_Malloc(sizeof(MList));
    if (t == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    t->keys = PyMem_New(uint64_t, size);
    t->ranks = PyMem_New(uint32_t, size);
    t->results = PyMem_New(uint32_t, n ? n : 1);
    if (t->keys == NULL || t->ranks == NULL || t->results == NULL) {
        mlist_clear(t);
        PyErr_NoMemory();
        goto done;
    }
    t->n_merges = n;
    t->mask = size - 1;
    t->shift = 64 - bits;
    for (size_t i = 0; i < size; i++)
        t->ranks[i] = MLIST_EMPTY;
    if (n)
        memcpy(t->results, rv.buf, (size_t)n * 4);
    const char *kp = (const char *)kv.buf;
    for (Py_ssize_t r = 0; r < n; r++) {
        uint64_t key;
        memcpy(&key, kp + 8 * r, 8);
        size_t i = mlist_slot(key, t->shift);
        while (t->ranks[i] != MLIST_EMPTY && t->keys[i] != key)
            i = (i + 1) & t->mask;
        t->keys[i] = key;
        t->ranks[i] = (uint32_t)r; /* a pair listed again: its later rank */
    }
    capsule = PyCapsule_New(t, MLIST_CAPSULE, mlist_free);
    if (capsule == NULL)
        mlist_clear(t);
done:
    PyBuffer_Release(&kv);
    PyBuffer_Release(&rv);
    return capsule;
}

static inline void
mlist_push(uint64_t *heap, Py_ssize_t *size, uint64_t v)
{
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) >> 1;
        if (heap[parent] <= v)
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = v;
}

static inline uint64_t
mlist_pop(uint64_t *heap, Py_ssize_t *size)
{
    uint64_t top = heap[0];
    uint64_t last = heap[--(*size)];
    Py_ssize_t n = *size, i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && heap[child + 1] < heap[child])
            child++;
        if (heap[child] >= last)
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n)
        heap[i] = last;
    return top;
}

/* one word's symbols sym[0..n) (changed in place) merged: the list of ids, or (ids, ends) */
static PyObject *
mlist_run(const MList *t, uint32_t *sym, Py_ssize_t n, int want_ends)
{
    /* one block: nxt[n] and prv[n] (Py_ssize_t), heap (uint64, at most n - 1 entries at first
     * and two pushes per merge) */
    size_t cap = n > 1 ? 3 * (size_t)n : 1;
    char *block = PyMem_Malloc((size_t)n * 2 * sizeof(Py_ssize_t) + cap * 8 + 8);
    if (block == NULL)
        return PyErr_NoMemory();
    uint64_t *heap = (uint64_t *)block;
    Py_ssize_t *nxt = (Py_ssize_t *)(heap + cap);
    Py_ssize_t *prv = nxt + n;
    PyObject *out = NULL, *ends = NULL, *result = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        nxt[k] = k + 1; /* n: the last symbol; n + 1: merged into its left */
        prv[k] = k - 1;
    }
    Py_ssize_t size = 0;
    for (Py_ssize_t k = 0; k + 1 < n; k++) {
        int64_t r = mlist_rank(t, (uint64_t)sym[k] << 32 | sym[k + 1]);
        if (r >= 0)
            heap[size++] = (uint64_t)r << 32 | (uint64_t)k;
    }
    /* heapify */
    for (Py_ssize_t i = size / 2 - 1; i >= 0; i--) {
        uint64_t v = heap[i];
        Py_ssize_t j = i;
        for (;;) {
            Py_ssize_t child = 2 * j + 1;
            if (child >= size)
                break;
            if (child + 1 < size && heap[child + 1] < heap[child])
                child++;
            if (heap[child] >= v)
                break;
            heap[j] = heap[child];
            j = child;
        }
        heap[j] = v;
    }
    const Py_ssize_t gone = n + 1;
    while (size > 0) {
        uint64_t top = mlist_pop(heap, &size);
        Py_ssize_t pos = (Py_ssize_t)(top & 0xFFFFFFFFu);
        Py_ssize_t right = nxt[pos];
        if (right >= n) /* gone, or the last symbol */
            continue;
        uint32_t made = t->results[top >> 32];
        int64_t v = mlist_rank(t, (uint64_t)sym[pos] << 32 | sym[right]);
        if (v < 0 || t->results[v] != made)
            continue;
        sym[pos] = made;
        Py_ssize_t after = nxt[right];
        nxt[right] = gone;
        nxt[pos] = after;
        if (after < n)
            prv[after] = pos;
        Py_ssize_t before = prv[pos];
        if (before >= 0) {
            v = mlist_rank(t, (uint64_t)sym[before] << 32 | made);
            if (v >= 0)
                mlist_push(heap, &size, (uint64_t)v << 32 | (uint64_t)before);
        }
        if (after < n) {
            v = mlist_rank(t, (uint64_t)made << 32 | sym[after]);
            if (v >= 0)
                mlist_push(heap, &size, (uint64_t)v << 32 | (uint64_t)pos);
        }
    }
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < n; k = nxt[k])
        m++;
    out = PyList_New(m);
    if (out == NULL)
        goto done;
    if (want_ends && (ends = PyList_New(m)) == NULL)
        goto done;
    Py_ssize_t j = 0;
    for (Py_ssize_t k = 0; k < n; k = nxt[k], j++) {
        PyObject *id = PyLong_FromUnsignedLong(sym[k]);
        if (id == NULL)
            goto done;
        PyList_SET_ITEM(out, j, id);
        if (want_ends) {
            PyObject *end = PyLong_FromSsize_t(nxt[k]);
            if (end == NULL)
                goto done;
            PyList_SET_ITEM(ends, j, end);
        }
    }
    if (want_ends) {
        result = PyTuple_Pack(2, out, ends);
    } else {
        result = out;
        out = NULL;
    }
done:
    Py_XDECREF(out);
    Py_XDECREF(ends);
    PyMem_Free(block);
    return result;
}


static PyObject *
mlist_merge(PyObject *self, PyObject *args)
{
    PyObject *capsule, *ids;
    int want_ends = 0;
    if (!PyArg_ParseTuple(args, "OO!|p", &capsule, &PyList_Type, &ids, &want_ends))
        return NULL;
    MList *t = (MList *)PyCapsule_GetPointer(capsule, MLIST_CAPSULE);
    if (t == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (n > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "mlist_merge: a word of more than 2**32 symbols");
        return NULL;
    }
    uint32_t *sym = PyMem_Malloc((size_t)n * 4 + 4);
    if (sym == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(ids, k));
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyMem_Free(sym);
            return NULL;
        }
        if (v > UINT32_MAX) {
            PyMem_Free(sym);
            PyErr_SetString(PyExc_OverflowError, "mlist_merge: an id above 2**32 - 1");
            return NULL;
        }
        sym[k] = (uint32_t)v;
    }
    PyObject *result = mlist_run(t, sym, n, want_ends);
    PyMem_Free(sym);
    return result;
}

/* mlist_word(table, word, vocab, byte_ids) -> list of ids, or None: one word of a merge-list BPE
 * with no prefix or suffix, its symbols made and merged in one call. Each character's symbol is its
 * id in vocab (a dict, str -> id); a character missing from it falls back to the ids of its UTF-8
 * bytes (a lone surrogate as its three WTF-8 bytes, as the encoder's "surrogatepass" gives them)
 * from byte_ids, a tuple of the 256 byte tokens' ids; with byte_ids None the answer is None (the
 * caller's pure path makes the unknown token). BPE._symbol_ids_plain and BPE._merge_heap are the
 * pure path and the tests' oracle. MWORD_ABI names this function's version. */
#define MWORD_ABI_VERSION 1

static PyObject *
mlist_word(PyObject *self, PyObject *args)
{
    PyObject *capsule, *word, *vocab, *byte_ids;
    if (!PyArg_ParseTuple(args, "OUO!O", &capsule, &word, &PyDict_Type, &vocab, &byte_ids))
        return NULL;
    MList *t = (MList *)PyCapsule_GetPointer(capsule, MLIST_CAPSULE);
    if (t == NULL)
        return NULL;
    if (byte_ids != Py_None && (!PyTuple_Check(byte_ids) || PyTuple_GET_SIZE(byte_ids) != 256)) {
        PyErr_SetString(PyExc_ValueError, "mlist_word: byte_ids must be None or the 256 byte tokens' ids");
        return NULL;
    }
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n > (Py_ssize_t)(UINT32_MAX / 4)) {
        PyErr_SetString(PyExc_ValueError, "mlist_word: a word of more than 2**30 characters");
        return NULL;
    }
    /* one symbol a character, more as byte fallbacks need them (at most four a character) */
    size_t cap = (size_t)n + (size_t)n / 4 + 16;
    uint32_t *sym = PyMem_Malloc(cap * 4);
    if (sym == NULL)
        return PyErr_NoMemory();
    Py_ssize_t m = 0;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((size_t)m + 4 > cap) {
            uint32_t *grown = PyMem_Realloc(sym, cap * 2 * 4);
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            sym = grown;
            cap *= 2;
        }
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        PyObject *ch = PyUnicode_FromOrdinal((int)c);
        if (ch == NULL)
            goto done;
        PyObject *found = PyDict_GetItemWithError(vocab, ch); /* borrowed */
        Py_DECREF(ch);
        if (found != NULL) {
            unsigned long long v = PyLong_AsUnsignedLongLong(found);
            if (v == (unsigned long long)-1 && PyErr_Occurred())
                goto done;
            if (v > UINT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "mlist_word: an id above 2**32 - 1");
                goto done;
            }
            sym[m++] = (uint32_t)v;
            continue;
        }
        if (PyErr_Occurred())
            goto done;
        if (byte_ids == Py_None) { /* no byte fallback: the pure path makes the unknown token */
            result = Py_NewRef(Py_None);
            goto done;
        }
        unsigned char b[4];
        int len;
        if (c < 0x80) {
            b[0] = (unsigned char)c;
            len = 1;
        } else if (c < 0x800) {
            b[0] = (unsigned char)(0xC0 | (c >> 6));
            b[1] = (unsigned char)(0x80 | (c & 0x3F));
            len = 2;
        } else if (c < 0x10000) { /* lone surrogates too: their WTF-8 bytes */
            b[0] = (unsigned char)(0xE0 | (c >> 12));
            b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[2] = (unsigned char)(0x80 | (c & 0x3F));
            len = 3;
        } else {
            b[0] = (unsigned char)(0xF0 | (c >> 18));
            b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[3] = (unsigned char)(0x80 | (c & 0x3F));
            len = 4;
        }
        for (int k = 0; k < len; k++) {
            PyObject *byte_id = PyTuple_GET_ITEM(byte_ids, b[k]);
            if (!PyLong_Check(byte_id)) {
                PyErr_SetString(PyExc_TypeError, "mlist_word: a byte token's id is not an int");
                goto done;
            }
            unsigned long long v = PyLong_AsUnsignedLongLong(byte_id);
            if (v == (unsigned long long)-1 && PyErr_Occurred())
                goto done;
            if (v > UINT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "mlist_word: an id above 2**32 - 1");
                goto done;
            }
            sym[m++] = (uint32_t)v;
        }
    }
    result = mlist_run(t, sym, m, 0);
done:
    PyMem_Free(sym);
    return result;
}

static PyMethodDef mlist_methods[] = {
    {"mlist_word", mlist_word, METH_VARARGS,
     "mlist_word(table, word, vocab, byte_ids) -> ids or None: one word's symbols (missing characters as their bytes) merged"},
    {"mlist_build", mlist_build, METH_VARARGS,
     "mlist_build(keys, results) -> table: a merge list (left << 32 | right and the made id, by rank)"},
    {"mlist_merge", mlist_merge, METH_VARARGS,
     "mlist_merge(table, ids, want_ends=False) -> ids, or (ids, ends): one word merged as Hugging Face's BPE"},
    {NULL, NULL, 0, NULL},
};

static int
mlist_add(PyObject *m)
{
    if (PyModule_AddIntConstant(m, "MWORD_ABI", MWORD_ABI_VERSION) < 0)
        return -1;
    return part_add(m, mlist_methods, "MLIST_ABI", MLIST_ABI_VERSION);
}


/* ----- character classes: the runs of a code point table, compiled ------------------------------
 *
 * (wl8's block: tokscope.core.text.class_table.) A table gives each code point a class 0..255 in
 * two stages: stage1 (bytes: 0x1100 native uint16, the block of each 256 code points) and stage2
 * (bytes: 256 classes per block). A block whose classes would lie past stage2's end reads as class
 * 0: a malformed table gives wrong classes, never a read out of bounds. Any str is valid text (lone
 * surrogates and non-BMP characters are code points like the others).
 *
 * cls_split(text, stage1, stage2) -> list[str]: the maximal runs of characters of one same
 *     non-zero class (class 0 characters separate runs and are dropped).
 * cls_spans(text, stage1, stage2) -> list[tuple[int, int]]: the (start, end) of those runs.
 * cls_runs(text, stage1, stage2) -> list[tuple[int, int]]: the (start, end) of the maximal runs
 *     of characters of any non-zero class.
 * cls_find(text, stage1, stage2) -> int: the index of the first character of non-zero class, -1
 *     when there is none.
 *
 * The pure-Python classes of tokscope.core.text.unicode (RangeSet) stay the tests' oracle.
 */

#define CLS_ABI_VERSION 1
#define CLS_STAGE1_BLOCKS 0x1100

typedef struct {
    const unsigned char *s1; /* CLS_STAGE1_BLOCKS native uint16 */
    const unsigned char *s2;
    size_t n2;
    const void *data;       /* the text */
    int kind;
    Py_ssize_t n;
} ClsText;

static inline unsigned
cls_at(const ClsText *t, Py_ssize_t i)
{
    Py_UCS4 cp = PyUnicode_READ(t->kind, t->data, i);
    if (cp >= (Py_UCS4)CLS_STAGE1_BLOCKS * 256)
        return 0;
    uint16_t block;
    memcpy(&block, t->s1 + 2 * (size_t)(cp >> 8), sizeof block);
    size_t off = (size_t)block * 256 + (cp & 255);
    return off < t->n2 ? t->s2[off] : 0;
}

static int
cls_args(PyObject *const *args, Py_ssize_t nargs, const char *name, ClsText *t)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "%s() takes 3 arguments (text, stage1, stage2)", name);
        return -1;
    }
    if (!PyUnicode_Check(args[0]) || !PyBytes_Check(args[1]) || !PyBytes_Check(args[2])) {
        PyErr_Format(PyExc_TypeError, "%s(text: str, stage1: bytes, stage2: bytes)", name);
        return -1;
    }
    if (PyBytes_GET_SIZE(args[1]) != 2 * CLS_STAGE1_BLOCKS) {
        PyErr_Format(PyExc_ValueError, "%s(): stage1 is not %d bytes", name, 2 * CLS_STAGE1_BLOCKS);
        return -1;
    }
    if (PyUnicode_READY(args[0]) < 0)
        return -1;
    t->s1 = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    t->s2 = (const unsigned char *)PyBytes_AS_STRING(args[2]);
    t->n2 = (size_t)PyBytes_GET_SIZE(args[2]);
    t->data = PyUnicode_DATA(args[0]);
    t->kind = PyUnicode_KIND(args[0]);
    t->n = PyUnicode_GET_LENGTH(args[0]);
    return 0;
}

/* the maximal runs of one same non-zero class: as strings (spans 0) or as (start, end) (spans 1) */
static PyObject *
cls_same_runs(PyObject *const *args, Py_ssize_t nargs, const char *name, int spans)
{
    ClsText t;
    if (cls_args(args, nargs, name, &t) < 0)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t i = 0;
    while (i < t.n) {
        unsigned c = cls_at(&t, i);
        if (c == 0) {
            i++;
            continue;
        }
        Py_ssize_t j = i + 1;
        while (j < t.n && cls_at(&t, j) == c)
            j++;
        PyObject *piece = spans ? Py_BuildValue("(nn)", i, j) : PyUnicode_Substring(args[0], i, j);
        if (piece == NULL || PyList_Append(out, piece) < 0) {
            Py_XDECREF(piece);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(piece);
        i = j;
    }
    return out;
}

static PyObject *
cls_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return cls_same_runs(args, nargs, "cls_split", 0);
}

static PyObject *
cls_spans(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return cls_same_runs(args, nargs, "cls_spans", 1);
}

static PyObject *
cls_runs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    ClsText t;
    if (cls_args(args, nargs, "cls_runs", &t) < 0)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t i = 0;
    while (i < t.n) {
        if (cls_at(&t, i) == 0) {
            i++;
            continue;
        }
        Py_ssize_t j = i + 1;
        while (j < t.n && cls_at(&t, j) != 0)
            j++;
        PyObject *span = Py_BuildValue("(nn)", i, j);
        if (span == NULL || PyList_Append(out, span) < 0) {
            Py_XDECREF(span);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(span);
        i = j;
    }
    return out;
}

static PyObject *
cls_find(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    ClsText t;
    if (cls_args(args, nargs, "cls_find", &t) < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < t.n; i++)
        if (cls_at(&t, i) != 0)
            return PyLong_FromSsize_t(i);
    return PyLong_FromLong(-1);
}

static PyMethodDef cls_methods[] = {
    {"cls_split", (PyCFunction)(void (*)(void))cls_split, METH_FASTCALL,
     "cls_split(text, stage1, stage2) -> list[str]: the maximal runs of one same non-zero class"},
    {"cls_spans", (PyCFunction)(void (*)(void))cls_spans, METH_FASTCALL,
     "cls_spans(text, stage1, stage2) -> list[(start, end)]: the spans of cls_split's runs"},
    {"cls_runs", (PyCFunction)(void (*)(void))cls_runs, METH_FASTCALL,
     "cls_runs(text, stage1, stage2) -> list[(start, end)]: the maximal runs of non-zero classes"},
    {"cls_find", (PyCFunction)(void (*)(void))cls_find, METH_FASTCALL,
     "cls_find(text, stage1, stage2) -> int: the first character of non-zero class, -1 for none"},
    {NULL, NULL, 0, NULL},
};

static int
cls_add(PyObject *m)
{
    return part_add(m, cls_methods, "CLS_ABI", CLS_ABI_VERSION);
}


/* ----- compare's start maps and boundary bitmaps (tokscope.core.insights.compare) ---------------
 *
 * (cmp8's block.) ``tokscope compare`` summarises each encoding of a text as a bitmap of one byte
 * per byte of the text, 1 where a token (other than the first) starts, and counts its tokens by
 * kind. compare.start_map and the int operations of compare.Boundaries are the pure-Python paths
 * (and the tests' oracle); these are the same, compiled:
 *
 * tile_starts(ids, table, n_bytes) -> (bits, counts), None, or a list: ``table`` (a writable buffer
 *     of uint32, an array('I')) has an entry per token id, length << 4 | (1 + kind) (kind < 8; 0:
 *     none yet). bits (n_bytes + 1 bytes) is 1 where a token other than the first starts, else 0;
 *     counts[kind] is how many tokens have that kind. None when the tokens do not tile n_bytes bytes
 *     (a token of no bytes, or lengths that do not add up to n_bytes; the bitmap is allocated first,
 *     unless n_bytes is more than the ids' tokens could hold). When some of the ids (a list
 *     or tuple of ints) have no entry, those ids instead: each in-range one once, in first-seen
 *     order, and those that are negative or past the table's end at every occurrence.
 * tile_fill_ranks(table, ranks) -> int: every entry of a byte-level BPE's ranks (a dict, bytes ->
 *     rank: its tokens are not special) from the bytes; how many ranks are past the table's end.
 * tile_fill(table, ids, token_bytes, is_special) -> bool: the entries of ``ids`` (a list) from the
 *     tokens' bytes and specialness (kind: 1 a single byte | 2 not whole UTF-8 | 4 special); False
 *     when a token is too long for an entry (its entry stays 0).
 * bits_op(a, b, op) -> bytes: a & b (op 0), a & ~b (1) or a | b (2), byte by byte, of two buffers
 *     of the same length (the int operations of Boundaries on equal lengths).
 * bits_count(a) -> int: how many bytes of a are 1 (bytes.count(1)).
 * bits_common(a, b) -> int: the set bits of a & b (int.bit_count of their int &).
 * text_words(text) -> int: len(text.split()) without making the words (measure.count_words).
 *
 * Python code never runs inside the loops: the ids must be ints (int subclasses are read as ints,
 * never through __index__), so the list cannot change under them.
 */

#define TILE_ABI_VERSION 1
#define TILE_LISTED UINT32_MAX  /* an entry being listed by tile_unknown (never a real entry) */
#define TILE_MAX_LENGTH (((uint32_t)1 << 27) - 1)

/* The uint32 entries of an array('I') (writable when asked); -1 with an error set otherwise. */
static int
tile_table(PyObject *obj, Py_buffer *view, int writable)
{
    if (PyObject_GetBuffer(obj, view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->itemsize != 4 || view->len % 4 != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "the table must hold 4-byte entries (an array('I'))");
        return -1;
    }
    return 0;
}

/* ids[i] as a 64-bit number: 0 with *v set, 1 when it is out of every table (negative or too big),
 * -1 with TypeError for an item that is not an int. */
static int
tile_id(PyObject *item, long long *v)
{
    if (!PyLong_Check(item)) {
        PyErr_Format(PyExc_TypeError, "token ids must be ints, not %.100s", Py_TYPE(item)->tp_name);
        return -1;
    }
    int overflow = 0;
    *v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (*v == -1 && PyErr_Occurred())
        return -1;
    return (overflow || *v < 0) ? 1 : 0;
}

/* Whether data[0:n] is whole UTF-8 as Python's strict decoder takes it (no surrogates, nothing
 * above U+10FFFF, no overlong form). */
static int
tile_whole_utf8(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t need;
        unsigned char lo = 0x80, hi = 0xBF;  /* the allowed range of the second byte */
        if (c >= 0xC2 && c <= 0xDF)
            need = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else
            return 0;
        if (n - i - 1 < need || p[i + 1] < lo || p[i + 1] > hi)
            return 0;
        for (Py_ssize_t k = 2; k <= need; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
        i += need + 1;
    }
    return 1;
}

/* The ids that table has no entry for (see tile_starts), each in-range one once, in first-seen
 * order; the table is as it was afterwards (entries are marked TILE_LISTED while listed). */
static PyObject *
tile_unknown(PyObject *seq, uint32_t *table, long long size)
{
    PyObject *out = PyList_New(0);
    int failed = out == NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        long long v;
        int outside = tile_id(items[i], &v);
        if (outside < 0) {
            failed = 1;
        } else if (outside || v >= size) {
            failed = PyList_Append(out, items[i]) < 0;
        } else if (table[v] == 0) {
            table[v] = TILE_LISTED;
            failed = PyList_Append(out, items[i]) < 0;
        }
    }
    if (out != NULL) {  /* the listed entries back to 0, on success and on failure */
        Py_ssize_t m = PyList_GET_SIZE(out);
        for (Py_ssize_t j = 0; j < m; j++) {
            long long v;
            if (tile_id(PyList_GET_ITEM(out, j), &v) == 0 && v < size && table[v] == TILE_LISTED)
                table[v] = 0;
        }
    }
    if (failed) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *
tile_starts(PyObject *self, PyObject *args)
{
    PyObject *ids, *table_obj;
    Py_ssize_t n_bytes;
    if (!PyArg_ParseTuple(args, "OOn:tile_starts", &ids, &table_obj, &n_bytes))
        return NULL;
    if (n_bytes < 0 || n_bytes == PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError, "n_bytes out of range");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(ids, "ids must be a list or tuple of ints");
    if (seq == NULL)
        return NULL;
    Py_buffer view;
    if (tile_table(table_obj, &view, 1) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    uint32_t *table = (uint32_t *)view.buf;
    long long size = (long long)(view.len / 4);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *result = NULL;
    size_t counts[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if ((size_t)n_bytes / TILE_MAX_LENGTH > (size_t)n) {  /* more bytes than the tokens can hold */
        PyBuffer_Release(&view);
        Py_DECREF(seq);
        Py_RETURN_NONE;
    }
    PyObject *bits = PyBytes_FromStringAndSize(NULL, n_bytes + 1);
    if (bits == NULL)
        goto done;
    char *out = PyBytes_AS_STRING(bits);
    memset(out, 0, (size_t)n_bytes + 1);
    Py_ssize_t pos = 0;
    int tiles = 1, unknown = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v;
        int outside = tile_id(items[i], &v);
        if (outside < 0)
            goto done;
        uint32_t entry = (outside || v >= size) ? 0 : table[v];
        uint32_t mark = entry & 0xF, length = entry >> 4;
        if (entry == 0) {
            unknown = 1;
            break;
        }
        if (entry == TILE_LISTED || mark == 0 || mark > 8 || length > TILE_MAX_LENGTH) {
            PyErr_Format(PyExc_ValueError, "a start-map table entry that is none: %R", items[i]);
            goto done;
        }
        if (!tiles)
            continue;  /* only looking for ids without an entry now */
        if (length == 0 || (Py_ssize_t)length > n_bytes - pos) {
            tiles = 0;
            continue;
        }
        out[pos] = 1;  /* pos < n_bytes here: length >= 1 fitted */
        pos += (Py_ssize_t)length;
        counts[mark - 1]++;
    }
    if (unknown) {
        result = tile_unknown(seq, table, size);
    } else if (!tiles || pos != n_bytes) {
        result = Py_NewRef(Py_None);
    } else {
        out[0] = 0;  /* where the first token starts is no boundary (the end of the text is not either) */
        result = Py_BuildValue("O(nnnnnnnn)", bits, (Py_ssize_t)counts[0], (Py_ssize_t)counts[1],
                               (Py_ssize_t)counts[2], (Py_ssize_t)counts[3], (Py_ssize_t)counts[4],
                               (Py_ssize_t)counts[5], (Py_ssize_t)counts[6], (Py_ssize_t)counts[7]);
    }
done:
    Py_XDECREF(bits);
    PyBuffer_Release(&view);
    Py_DECREF(seq);
    return result;
}

/* tile_fill_ranks(table, ranks) -> int: the entry of every rank (``bytes -> rank``, a dict: a
 * byte-level BPE's whole vocabulary, no special tokens) from its bytes; how many ranks fell
 * outside the table (left for tile_fill). A dict without bytes keys and int values is a TypeError. */
static PyObject *
tile_fill_ranks(PyObject *self, PyObject *args)
{
    PyObject *table_obj, *ranks;
    if (!PyArg_ParseTuple(args, "OO!:tile_fill_ranks", &table_obj, &PyDict_Type, &ranks))
        return NULL;
    Py_buffer view;
    if (tile_table(table_obj, &view, 1) < 0)
        return NULL;
    uint32_t *table = (uint32_t *)view.buf;
    long long size = (long long)(view.len / 4);
    Py_ssize_t at = 0, outside = 0;
    PyObject *key, *value;
    PyObject *result = NULL;
    while (PyDict_Next(ranks, &at, &key, &value)) {  /* no Python code runs: the dict cannot change */
        long long v;
        int out = PyBytes_Check(key) ? tile_id(value, &v) : -1;
        if (out < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "ranks must map bytes to ints");
            goto done;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(key);
        if (out || v >= size || (size_t)length > TILE_MAX_LENGTH) {
            outside++;
            continue;
        }
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(key);
        uint32_t kind = (length == 1 ? 1u : 0u) | (tile_whole_utf8(p, length) ? 0u : 2u);
        table[v] = (uint32_t)length << 4 | (1u + kind);
    }
    result = PyLong_FromSsize_t(outside);
done:
    PyBuffer_Release(&view);
    return result;
}

/* tile_fill(table, ids, token_bytes, is_special) -> bool: each id's entry worked out from
 * token_bytes(id) (bytes) and is_special(id): length << 4 | (1 + kind), kind = 1 for a single
 * byte | 2 for bytes that are not whole UTF-8 | 4 for a special token. False (that id's entry
 * left 0) when a token is longer than an entry holds; an id outside the table is a ValueError. */
static PyObject *
tile_fill(PyObject *self, PyObject *args)
{
    PyObject *table_obj, *ids, *token_bytes, *is_special;
    if (!PyArg_ParseTuple(args, "OO!OO:tile_fill", &table_obj, &PyList_Type, &ids, &token_bytes, &is_special))
        return NULL;
    Py_buffer view;
    if (tile_table(table_obj, &view, 1) < 0)
        return NULL;
    uint32_t *table = (uint32_t *)view.buf;
    long long size = (long long)(view.len / 4);
    int fits = 1;
    PyObject *result = NULL;
    /* Python code runs in the calls: the list is read by index each time, its length too */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids); i++) {
        PyObject *item = PyList_GET_ITEM(ids, i);
        Py_INCREF(item);
        PyObject *data = PyObject_CallOneArg(token_bytes, item);
        PyObject *flag = data == NULL ? NULL : PyObject_CallOneArg(is_special, item);
        int special = flag == NULL ? -1 : PyObject_IsTrue(flag);
        long long v = 0;
        int outside = special < 0 ? -1 : tile_id(item, &v);
        Py_XDECREF(flag);
        Py_DECREF(item);
        if (outside == 0 && v >= size)
            outside = 1;
        if (outside == 0 && !PyBytes_Check(data)) {
            PyErr_Format(PyExc_TypeError, "token_bytes gave %.100s, not bytes", Py_TYPE(data)->tp_name);
            outside = -1;
        }
        if (outside != 0) {
            if (outside > 0)
                PyErr_SetString(PyExc_ValueError, "a token id outside the table");
            Py_XDECREF(data);
            goto done;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(data);
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
        if ((size_t)length > TILE_MAX_LENGTH) {
            fits = 0;
        } else {
            uint32_t kind = (length == 1 ? 1u : 0u) | (tile_whole_utf8(p, length) ? 0u : 2u) | (special ? 4u : 0u);
            table[v] = (uint32_t)length << 4 | (1u + kind);
        }
        Py_DECREF(data);
    }
    result = PyBool_FromLong(fits);
done:
    PyBuffer_Release(&view);
    return result;
}

/* Two read-only buffers of the same length; -1 with an error set otherwise. */
static int
bits_pair(PyObject *a, PyObject *b, Py_buffer *va, Py_buffer *vb)
{
    if (PyObject_GetBuffer(a, va, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(b, vb, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(va);
        return -1;
    }
    if (va->len != vb->len) {
        PyBuffer_Release(va);
        PyBuffer_Release(vb);
        PyErr_SetString(PyExc_ValueError, "bitmaps of different lengths");
        return -1;
    }
    return 0;
}

static PyObject *
bits_op(PyObject *self, PyObject *args)
{
    PyObject *a, *b;
    int op;
    if (!PyArg_ParseTuple(args, "OOi:bits_op", &a, &b, &op))
        return NULL;
    if (op < 0 || op > 2) {
        PyErr_SetString(PyExc_ValueError, "op must be 0 (and), 1 (and not) or 2 (or)");
        return NULL;
    }
    Py_buffer va, vb;
    if (bits_pair(a, b, &va, &vb) < 0)
        return NULL;
    PyObject *result = PyBytes_FromStringAndSize(NULL, va.len);
    if (result != NULL) {
        const unsigned char *x = (const unsigned char *)va.buf, *y = (const unsigned char *)vb.buf;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
        Py_ssize_t n = va.len;
        if (op == 0)
            for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] & y[i];
        else if (op == 1)
            for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] & (unsigned char)~y[i];
        else
            for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] | y[i];
    }
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

static PyObject *
bits_count(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *x = (const unsigned char *)view.buf;
    size_t count = 0;
    for (Py_ssize_t i = 0; i < view.len; i++)
        count += x[i] == 1;
    PyBuffer_Release(&view);
    return PyLong_FromSize_t(count);
}

/* Set bits of one byte (a table: portable, and the loop stays simple). */
static const unsigned char bits_in_byte[256] = {
#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
    B6(0), B6(1), B6(1), B6(2)
#undef B6
#undef B4
#undef B2
};

static PyObject *
bits_common(PyObject *self, PyObject *args)
{
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:bits_common", &a, &b))
        return NULL;
    Py_buffer va, vb;
    if (bits_pair(a, b, &va, &vb) < 0)
        return NULL;
    const unsigned char *x = (const unsigned char *)va.buf, *y = (const unsigned char *)vb.buf;
    size_t count = 0;
    Py_ssize_t i = 0;
#if defined(__GNUC__) || defined(__clang__)
    for (; i + 8 <= va.len; i += 8) {  /* a word at a time */
        uint64_t a8, b8;
        memcpy(&a8, x + i, 8);
        memcpy(&b8, y + i, 8);
        count += (size_t)__builtin_popcountll(a8 & b8);
    }
#endif
    for (; i < va.len; i++)
        count += bits_in_byte[x[i] & y[i]];
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return PyLong_FromSize_t(count);
}

/* text_words(text) -> int: how many words ``len(text.split())`` finds (runs of characters that are
 * not Py_UNICODE_ISSPACE, the test str.split uses), without making them. */
#define TILE_WORDS(type)                                                          \
    do {                                                                          \
        const type *p = (const type *)data;                                       \
        for (Py_ssize_t i = 0; i < n; i++) {                                      \
            Py_UCS4 c = p[i];                                                     \
            int space = Py_UNICODE_ISSPACE(c);                                    \
            count += after_space & !space; /* a word starts: no branch to miss */ \
            after_space = space != 0;                                             \
        }                                                                         \
    } while (0)

static PyObject *
text_words(PyObject *self, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "text_words takes a str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), count = 0;
    int after_space = 1;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        TILE_WORDS(Py_UCS1);
        break;
    case PyUnicode_2BYTE_KIND:
        TILE_WORDS(Py_UCS2);
        break;
    default:
        TILE_WORDS(Py_UCS4);
        break;
    }
    return PyLong_FromSsize_t(count);
}
#undef TILE_WORDS

static PyMethodDef tile_methods[] = {
    {"tile_starts", tile_starts, METH_VARARGS,
     "tile_starts(ids, table, n_bytes) -> (bits, counts by kind), None, or the ids without an entry"},
    {"tile_fill_ranks", tile_fill_ranks, METH_VARARGS,
     "tile_fill_ranks(table, ranks) -> int: every rank's entry (how many fell outside the table)"},
    {"tile_fill", tile_fill, METH_VARARGS,
     "tile_fill(table, ids, token_bytes, is_special) -> bool: the ids' entries (False: a token too long for one)"},
    {"bits_op", bits_op, METH_VARARGS, "bits_op(a, b, op) -> bytes: a & b (0), a & ~b (1), a | b (2)"},
    {"text_words", text_words, METH_O, "text_words(text) -> int: len(text.split()), without the words"},
    {"bits_count", bits_count, METH_O, "bits_count(a) -> int: the bytes of a that are 1"},
    {"bits_common", bits_common, METH_VARARGS, "bits_common(a, b) -> int: the set bits of a & b"},
    {NULL, NULL, 0, NULL},
};

static int
tile_add(PyObject *m)
{
    return part_add(m, tile_methods, "TILE_ABI", TILE_ABI_VERSION);
}


/* ----- WordPiece: Hugging Face's greedy longest match, ids only, compiled --------------------------
 *
 * (bert8's block: tokscope.core.models.wordpiece.) WordPiece._tokenize_ids_python is the
 * pure-Python loop (and, with WordPiece._tokenize, the tests' oracle); this is the same loop:
 *
 * wpiece_ids(word, vocab, cont, heads, cont_heads, max_chars, filter) -> list of ids, or None when the
 *     whole word is the unknown token: at each position the longest entry the rest of the word
 *     starts with, looked up in vocab (a str -> int dict) at the start of the word and in cont (the
 *     entries written with the continuing prefix, the prefix taken off) elsewhere. heads
 *     (cont_heads) maps each first character of an entry of vocab (cont) to the length of the
 *     longest entry starting with it: no longer candidate is tried, and at a character no entry
 *     starts with the word is unknown at once. A word of more than max_chars code points is unknown.
 *     filter is wpiece_filter(vocab, cont, size): a candidate it rules out is not looked up (most
 *     are, with no string made for them).
 *
 * Every candidate is a substring of word (any str: lone surrogates and non-BMP characters are code
 * points like the others), so no index leaves [0, len(word)]; a bound that is not an int is an error.
 *
 * bert_split (tokscope.core.pre_tokenizers.bert) is the pre-tokenizer of the same family: its
 * oracles are BertPreTokenizer.split_str_python and the regex of the aligned path.
 */

#define WPIECE_ABI_VERSION 1

/* The longest entry of `heads` starting with word[start] (0: none), or -1 with an error set. */
static Py_ssize_t
wpiece_reach(PyObject *word, Py_ssize_t start, PyObject *heads)
{
    PyObject *first = PyUnicode_Substring(word, start, start + 1);
    if (first == NULL)
        return -1;
    PyObject *bound = PyDict_GetItemWithError(heads, first); /* borrowed */
    Py_DECREF(first);
    if (bound == NULL)
        return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t reach = PyLong_AsSsize_t(bound);
    if (reach == -1 && PyErr_Occurred())
        return -1;
    return reach < 0 ? 0 : reach;
}

/* The filter: a bitmap (a power of two bytes) with two bits set per entry, from a hash of the
 * entry's code points (FNV-1a over 64 bits, one seed for vocab, another for cont, then a 64-bit
 * mix); a candidate whose two bits are not both set is no entry, and is not looked up. */
#define WPIECE_FNV_PRIME 0x100000001b3ULL
#define WPIECE_SEED_VOCAB 0xcbf29ce484222325ULL
#define WPIECE_SEED_CONT 0x84222325cbf29ce4ULL
#define WPIECE_HASHED 128 /* candidates up to this long are filtered; longer ones looked up */

static uint64_t
wpiece_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static int
wpiece_maybe(const unsigned char *bits, uint64_t mask, uint64_t h)
{
    uint64_t a = h & mask, b = (h >> 32) & mask;
    return (bits[a >> 3] >> (a & 7)) & (bits[b >> 3] >> (b & 7)) & 1;
}

static int
wpiece_fill(unsigned char *bits, uint64_t mask, PyObject *table, uint64_t seed)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(table, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "a WordPiece entry that is not a string");
            return -1;
        }
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        Py_ssize_t n = PyUnicode_GET_LENGTH(key);
        uint64_t h = seed;
        for (Py_ssize_t i = 0; i < n; i++)
            h = (h ^ PyUnicode_READ(kind, data, i)) * WPIECE_FNV_PRIME;
        h = wpiece_mix(h);
        uint64_t x = h & mask, y = (h >> 32) & mask;
        bits[x >> 3] |= (unsigned char)(1u << (x & 7));
        bits[y >> 3] |= (unsigned char)(1u << (y & 7));
    }
    return 0;
}

/* wpiece_filter(vocab, cont, size) -> bytes: the filter of wpiece_ids, size bytes (a power of two,
 * at least 8). */
static PyObject *
wpiece_filter(PyObject *self, PyObject *args)
{
    PyObject *vocab, *cont;
    Py_ssize_t size;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!n", &PyDict_Type, &vocab, &PyDict_Type, &cont, &size))
        return NULL;
    if (size < 8 || (size & (size - 1)) != 0 || size > ((Py_ssize_t)1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "the filter size is not a power of two from 8 bytes to 1 GiB");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL)
        return NULL;
    unsigned char *bits = (unsigned char *)PyBytes_AS_STRING(out);
    memset(bits, 0, (size_t)size);
    uint64_t mask = (uint64_t)size * 8 - 1;
    if (wpiece_fill(bits, mask, vocab, WPIECE_SEED_VOCAB) < 0 || wpiece_fill(bits, mask, cont, WPIECE_SEED_CONT) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *
wpiece_ids(PyObject *self, PyObject *args)
{
    PyObject *word, *vocab, *cont, *heads, *cont_heads;
    Py_ssize_t max_chars;
    Py_buffer filter;
    (void)self;
    if (!PyArg_ParseTuple(args, "UO!O!O!O!ny*", &word, &PyDict_Type, &vocab, &PyDict_Type, &cont,
                          &PyDict_Type, &heads, &PyDict_Type, &cont_heads, &max_chars, &filter))
        return NULL;
    const unsigned char *bits = (const unsigned char *)filter.buf;
    if (filter.len < 8 || (filter.len & (filter.len - 1)) != 0) {
        PyBuffer_Release(&filter);
        PyErr_SetString(PyExc_ValueError, "the filter size is not a power of two of at least 8 bytes");
        return NULL;
    }
    uint64_t mask = (uint64_t)filter.len * 8 - 1;
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    uint64_t hashes[WPIECE_HASHED];
    PyObject *out = NULL;
    if (n > max_chars) {
        PyBuffer_Release(&filter);
        Py_RETURN_NONE;
    }
    out = PyList_New(0);
    if (out == NULL)
        goto fail;
    Py_ssize_t start = 0;
    while (start < n) {
        PyObject *table = start ? cont : vocab;
        Py_ssize_t reach = wpiece_reach(word, start, start ? cont_heads : heads);
        if (reach < 0)
            goto fail;
        Py_ssize_t end = reach < n - start ? start + reach : n;
        /* hashes[k]: the mixed hash of word[start:start + k + 1] */
        Py_ssize_t hashed = end - start < WPIECE_HASHED ? end - start : WPIECE_HASHED;
        uint64_t h = start ? WPIECE_SEED_CONT : WPIECE_SEED_VOCAB;
        for (Py_ssize_t k = 0; k < hashed; k++) {
            h = (h ^ PyUnicode_READ(kind, data, start + k)) * WPIECE_FNV_PRIME;
            hashes[k] = wpiece_mix(h);
        }
        PyObject *found = NULL;
        for (; end > start; end--) {
            if (end - start <= hashed && !wpiece_maybe(bits, mask, hashes[end - start - 1]))
                continue;
            PyObject *piece = (start == 0 && end == n) ? (Py_INCREF(word), word)
                                                       : PyUnicode_Substring(word, start, end);
            if (piece == NULL)
                goto fail;
            found = PyDict_GetItemWithError(table, piece); /* borrowed */
            Py_DECREF(piece);
            if (found != NULL)
                break;
            if (PyErr_Occurred())
                goto fail;
        }
        if (found == NULL) {
            Py_DECREF(out);
            PyBuffer_Release(&filter);
            Py_RETURN_NONE;
        }
        if (PyList_Append(out, found) < 0)
            goto fail;
        start = end;
    }
    PyBuffer_Release(&filter);
    return out;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&filter);
    return NULL;
}

/* bert_split(text, classes) -> list of str: BertPreTokenizer's split of text: runs of characters of
 * class 0, and each character of class 2 alone; characters of class 1 (white space) cut and are
 * dropped. classes (a bytes-like object) holds each code point's class, code points past its end
 * being class 0. */
static PyObject *
bert_split(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_buffer classes;
    (void)self;
    if (!PyArg_ParseTuple(args, "Uy*", &text, &classes))
        return NULL;
    const unsigned char *cls = (const unsigned char *)classes.buf;
    Py_ssize_t n_cls = classes.len;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        goto fail;
    Py_ssize_t word = -1; /* start of the run being read, -1 for none */
    for (Py_ssize_t i = 0; i <= n; i++) {
        int k = 1; /* the end of the text ends the run */
        if (i < n) {
            Py_UCS4 cp = PyUnicode_READ(kind, data, i);
            k = (Py_ssize_t)cp < n_cls ? cls[cp] : 0;
        }
        if (k == 0) {
            if (word < 0)
                word = i;
            continue;
        }
        if (word >= 0) {
            PyObject *piece = PyUnicode_Substring(text, word, i);
            if (piece == NULL || PyList_Append(out, piece) < 0) {
                Py_XDECREF(piece);
                goto fail;
            }
            Py_DECREF(piece);
            word = -1;
        }
        if (k == 2) {
            PyObject *piece = PyUnicode_Substring(text, i, i + 1);
            if (piece == NULL || PyList_Append(out, piece) < 0) {
                Py_XDECREF(piece);
                goto fail;
            }
            Py_DECREF(piece);
        }
    }
    PyBuffer_Release(&classes);
    return out;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&classes);
    return NULL;
}

static PyMethodDef wpiece_methods[] = {
    {"wpiece_ids", wpiece_ids, METH_VARARGS,
     "wpiece_ids(word, vocab, cont, heads, cont_heads, max_chars, filter) -> ids, or None for the unknown "
     "token: one word as Hugging Face's WordPiece"},
    {"wpiece_filter", wpiece_filter, METH_VARARGS,
     "wpiece_filter(vocab, cont, size) -> bytes: the filter of wpiece_ids for these entries"},
    {"bert_split", bert_split, METH_VARARGS,
     "bert_split(text, classes) -> list of str: BertPreTokenizer's split (classes: 0 kept, 1 white space, 2 punctuation)"},
    {NULL, NULL, 0, NULL},
};

static int
wpiece_add(PyObject *m)
{
    return part_add(m, wpiece_methods, "WPIECE_ABI", WPIECE_ABI_VERSION);
}


/* ----- SentencePiece's precompiled charsmap (t5u8's block: tokscope.core.normalizers.precompiled) --
 *
 * pcm_build(blob, joiners) -> table: ``blob`` a precompiled_charsmap (a little-endian u32 byte size
 *     of a double-array trie, its u32 units, then NUL-ended UTF-8 replacements); ``joiners`` the
 *     buffer of an array('I') of inclusive code point ranges [lo0, hi0, lo1, hi1, ...], sorted:
 *     every character that may share a grapheme cluster with a neighbour (the "joiners").
 * pcm_normalize(table, text, cache, region) -> str: the text CharsMap.normalize_str makes.
 *
 * Between two characters neither of which is a joiner there is always a grapheme boundary, so
 * such a character is a grapheme of its own and is replaced by the value of the first (shortest)
 * key that is a prefix of its UTF-8 (Hugging Face's Precompiled::transform), or kept. Every
 * maximal stretch of characters each adjacent pair of which holds a joiner is whole graphemes: it
 * is looked up in ``cache`` (a dict) and, when absent, ``region(stretch)`` (the pure-Python path,
 * which also fills the cache) gives its normalized text. A replacement that is not whole UTF-8 is
 * a ValueError (the Python side then names it). PCM_ABI names this block's version.
 */
#define PCM_ABI_VERSION 1
#define PCM_CAPSULE "tokscope.pcm"

typedef struct {
    uint32_t *units;
    Py_ssize_t n_units;
    unsigned char *normalized;
    Py_ssize_t n_normalized;
    uint32_t *ranges; /* lo, hi pairs above the BMP (inclusive) */
    Py_ssize_t n_ranges;
    unsigned char bmp[8192]; /* the joiners of the BMP, one bit each */
} pcm_table;

static void
pcm_free(PyObject *capsule)
{
    pcm_table *t = PyCapsule_GetPointer(capsule, PCM_CAPSULE);
    if (t != NULL) {
        PyMem_Free(t->units);
        PyMem_Free(t->normalized);
        PyMem_Free(t->ranges);
        PyMem_Free(t);
    }
}

static PyObject *
pcm_build(PyObject *self, PyObject *args)
{
    Py_buffer blob, joiners;
    if (!PyArg_ParseTuple(args, "y*y*", &blob, &joiners))
        return NULL;
    pcm_table *t = NULL;
    PyObject *out = NULL;
    const unsigned char *b = blob.buf;
    const uint32_t *j = joiners.buf;
    Py_ssize_t n_j = joiners.len / (Py_ssize_t)sizeof(uint32_t);
    if (blob.len < 4 || joiners.len % (2 * (Py_ssize_t)sizeof(uint32_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "pcm_build: a charsmap shorter than 4 bytes or odd joiner ranges");
        goto done;
    }
    uint32_t size = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    Py_ssize_t n_units = (Py_ssize_t)(size / 4);
    if (n_units > (blob.len - 4) / 4) {
        PyErr_SetString(PyExc_ValueError, "pcm_build: the trie runs past the end of the charsmap");
        goto done;
    }
    t = PyMem_Calloc(1, sizeof(pcm_table));
    if (t == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    t->n_units = n_units;
    t->units = PyMem_Malloc((size_t)(n_units ? n_units : 1) * sizeof(uint32_t));
    t->n_normalized = blob.len - 4 - 4 * n_units;
    t->normalized = PyMem_Malloc((size_t)(t->n_normalized ? t->n_normalized : 1));
    t->ranges = PyMem_Malloc((size_t)(n_j ? n_j : 1) * sizeof(uint32_t));
    if (t->units == NULL || t->normalized == NULL || t->ranges == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_units; k++) {
        const unsigned char *p = b + 4 + 4 * k;
        t->units[k] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    memcpy(t->normalized, b + 4 + 4 * n_units, (size_t)t->n_normalized);
    for (Py_ssize_t k = 0; k < n_j; k += 2) {
        uint32_t lo = j[k], hi = j[k + 1];
        if (lo > hi || hi > 0x10FFFF || (k && lo <= j[k - 1])) {
            PyErr_SetString(PyExc_ValueError, "pcm_build: joiner ranges not sorted, or past U+10FFFF");
            goto done;
        }
        for (uint32_t c = lo; c <= hi && c < 0x10000; c++)
            t->bmp[c >> 3] |= (unsigned char)(1u << (c & 7));
        if (hi >= 0x10000) {
            t->ranges[t->n_ranges++] = lo < 0x10000 ? 0x10000 : lo;
            t->ranges[t->n_ranges++] = hi;
        }
    }
    out = PyCapsule_New(t, PCM_CAPSULE, pcm_free);
    if (out != NULL)
        t = NULL;
done:
    if (t != NULL) {
        PyMem_Free(t->units);
        PyMem_Free(t->normalized);
        PyMem_Free(t->ranges);
        PyMem_Free(t);
    }
    PyBuffer_Release(&blob);
    PyBuffer_Release(&joiners);
    return out;
}

static int
pcm_joiner(const pcm_table *t, Py_UCS4 c)
{
    if (c < 0x10000)
        return (t->bmp[c >> 3] >> (c & 7)) & 1;
    Py_ssize_t lo = 0, hi = t->n_ranges / 2; /* ranges[2k..2k+1] */
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c < t->ranges[2 * mid])
            hi = mid;
        else if (c > t->ranges[2 * mid + 1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static inline uint64_t
pcm_offset(uint32_t unit)
{
    return (uint64_t)(unit >> 10) << ((unit & (1u << 9)) >> 6);
}

/* The value of the first key that is a prefix of c's UTF-8 (a surrogate as its three bytes), or -1. */
static int64_t
pcm_lookup(const pcm_table *t, Py_UCS4 c)
{
    unsigned char key[4];
    int len;
    if (c < 0x80) {
        key[0] = (unsigned char)c;
        len = 1;
    } else if (c < 0x800) {
        key[0] = (unsigned char)(0xC0 | (c >> 6));
        key[1] = (unsigned char)(0x80 | (c & 0x3F));
        len = 2;
    } else if (c < 0x10000) {
        key[0] = (unsigned char)(0xE0 | (c >> 12));
        key[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        key[2] = (unsigned char)(0x80 | (c & 0x3F));
        len = 3;
    } else {
        key[0] = (unsigned char)(0xF0 | (c >> 18));
        key[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        key[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        key[3] = (unsigned char)(0x80 | (c & 0x3F));
        len = 4;
    }
    const uint32_t *a = t->units;
    uint64_t n = (uint64_t)t->n_units;
    if (n == 0)
        return -1;
    uint64_t pos = pcm_offset(a[0]);
    for (int k = 0; k < len; k++) {
        uint32_t b = key[k];
        if (b == 0)
            return -1;
        pos ^= b;
        if (pos >= n)
            return -1;
        uint32_t unit = a[pos];
        if ((unit & 0x800000FFu) != b)
            return -1;
        pos ^= pcm_offset(unit);
        if ((unit >> 8) & 1) {
            if (pos >= n)
                return -1;
            return (int64_t)(a[pos] & 0x7FFFFFFFu);
        }
    }
    return -1;
}

/* 1 when some key is a prefix of the UTF-8 of text[p:end] (what the walk of _prefix_values finds
 * on it), else 0: a stretch where no position starts a key is left as it is. */
static int
pcm_key_at(const pcm_table *t, int kind, const void *data, Py_ssize_t p, Py_ssize_t end)
{
    const uint32_t *a = t->units;
    uint64_t n = (uint64_t)t->n_units;
    if (n == 0)
        return 0;
    uint64_t pos = pcm_offset(a[0]);
    for (; p < end; p++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, p);
        unsigned char key[4];
        int len;
        if (c < 0x80) {
            key[0] = (unsigned char)c;
            len = 1;
        } else if (c < 0x800) {
            key[0] = (unsigned char)(0xC0 | (c >> 6));
            key[1] = (unsigned char)(0x80 | (c & 0x3F));
            len = 2;
        } else if (c < 0x10000) {
            key[0] = (unsigned char)(0xE0 | (c >> 12));
            key[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            key[2] = (unsigned char)(0x80 | (c & 0x3F));
            len = 3;
        } else {
            key[0] = (unsigned char)(0xF0 | (c >> 18));
            key[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            key[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            key[3] = (unsigned char)(0x80 | (c & 0x3F));
            len = 4;
        }
        for (int k = 0; k < len; k++) {
            uint32_t b = key[k];
            if (b == 0)
                return 0;
            pos ^= b;
            if (pos >= n)
                return 0;
            uint32_t unit = a[pos];
            if ((unit & 0x800000FFu) != b)
                return 0;
            pos ^= pcm_offset(unit);
            if ((unit >> 8) & 1)
                return pos < n;
        }
    }
    return 0;
}

typedef struct {
    Py_UCS4 *buf;
    Py_ssize_t len, cap;
} pcm_out;

static int
pcm_reserve(pcm_out *o, Py_ssize_t more)
{
    if (more > PY_SSIZE_T_MAX / 8 - o->len) {
        PyErr_NoMemory();
        return -1;
    }
    if (o->len + more <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap * 2 > o->len + more ? o->cap * 2 : o->len + more + 16;
    Py_UCS4 *buf = PyMem_Realloc(o->buf, (size_t)cap * sizeof(Py_UCS4));
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = buf;
    o->cap = cap;
    return 0;
}

/* Appends the replacement at byte offset ``start`` (up to its NUL), strictly decoded. */
static int
pcm_append_replacement(const pcm_table *t, int64_t start, pcm_out *o)
{
    if (start >= t->n_normalized)
        return 0; /* past the strings: an empty replacement, as the Python slice gives */
    const unsigned char *p = t->normalized + start;
    const unsigned char *end = memchr(p, 0, (size_t)(t->n_normalized - start));
    if (end == NULL)
        end = t->normalized + t->n_normalized;
    if (pcm_reserve(o, end - p) < 0)
        return -1;
    while (p < end) {
        unsigned char b0 = *p;
        Py_UCS4 c;
        int need;
        if (b0 < 0x80) {
            c = b0;
            need = 0;
        } else if (b0 >= 0xC2 && b0 <= 0xDF) {
            c = b0 & 0x1F;
            need = 1;
        } else if (b0 >= 0xE0 && b0 <= 0xEF) {
            c = b0 & 0x0F;
            need = 2;
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
            c = b0 & 0x07;
            need = 3;
        } else
            goto bad;
        if (end - p <= need)
            goto bad;
        for (int k = 1; k <= need; k++) {
            if ((p[k] & 0xC0) != 0x80)
                goto bad;
            c = (c << 6) | (p[k] & 0x3F);
        }
        if ((need == 2 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (need == 3 && (c < 0x10000 || c > 0x10FFFF)))
            goto bad;
        o->buf[o->len++] = c;
        p += need + 1;
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "precompiled_charsmap: a replacement is not whole UTF-8");
    return -1;
}

static PyObject *
pcm_normalize(PyObject *self, PyObject *args)
{
    PyObject *capsule, *text, *cache, *region;
    if (!PyArg_ParseTuple(args, "OUO!O", &capsule, &text, &PyDict_Type, &cache, &region))
        return NULL;
    const pcm_table *t = PyCapsule_GetPointer(capsule, PCM_CAPSULE);
    if (t == NULL)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    pcm_out o = {NULL, 0, 0};
    int changed = 0;
    if (pcm_reserve(&o, n) < 0)
        return NULL;
    Py_ssize_t i = 0;
    int next_joins = n > 0 && pcm_joiner(t, PyUnicode_READ(kind, data, 0));
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int here = next_joins;
        next_joins = i + 1 < n && pcm_joiner(t, PyUnicode_READ(kind, data, i + 1));
        if (!here && !next_joins) {
            int64_t v = pcm_lookup(t, c);
            if (v < 0) {
                if (pcm_reserve(&o, 1) < 0)
                    goto fail;
                o.buf[o.len++] = c;
            } else {
                changed = 1;
                if (pcm_append_replacement(t, v, &o) < 0)
                    goto fail;
            }
            i++;
            continue;
        }
        /* a stretch: extend while the pair (j - 1, j) holds a joiner */
        Py_ssize_t j = i + 1;
        int prev_joins = here;
        while (j < n) {
            int cur = pcm_joiner(t, PyUnicode_READ(kind, data, j));
            if (!cur && !prev_joins)
                break;
            prev_joins = cur;
            j++;
        }
        int keyed = 0;
        for (Py_ssize_t p = i; p < j && !keyed; p++)
            keyed = pcm_key_at(t, kind, data, p, j);
        if (!keyed) { /* no key starts in the stretch: nothing in it changes */
            if (pcm_reserve(&o, j - i) < 0)
                goto fail;
            for (Py_ssize_t p = i; p < j; p++)
                o.buf[o.len++] = PyUnicode_READ(kind, data, p);
            i = j;
            next_joins = i < n && pcm_joiner(t, PyUnicode_READ(kind, data, i));
            continue;
        }
        PyObject *sub = PyUnicode_Substring(text, i, j);
        if (sub == NULL)
            goto fail;
        PyObject *got = PyDict_GetItemWithError(cache, sub);
        if (got != NULL)
            Py_INCREF(got);
        else if (PyErr_Occurred()) {
            Py_DECREF(sub);
            goto fail;
        } else
            got = PyObject_CallOneArg(region, sub);
        Py_DECREF(sub);
        if (got == NULL)
            goto fail;
        if (!PyUnicode_Check(got)) {
            Py_DECREF(got);
            PyErr_SetString(PyExc_TypeError, "pcm_normalize: region() must give a str");
            goto fail;
        }
        Py_ssize_t m = PyUnicode_GET_LENGTH(got);
        if (pcm_reserve(&o, m) < 0) {
            Py_DECREF(got);
            goto fail;
        }
        int gkind = PyUnicode_KIND(got);
        const void *gdata = PyUnicode_DATA(got);
        if (m != j - i)
            changed = 1;
        for (Py_ssize_t k = 0; k < m; k++) {
            Py_UCS4 g = PyUnicode_READ(gkind, gdata, k);
            if (!changed && g != PyUnicode_READ(kind, data, i + k))
                changed = 1;
            o.buf[o.len++] = g;
        }
        Py_DECREF(got);
        i = j;
        next_joins = i < n && pcm_joiner(t, PyUnicode_READ(kind, data, i));
    }
    PyObject *result;
    if (!changed) {
        Py_INCREF(text);
        result = text;
    } else
        result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, o.buf, o.len);
    PyMem_Free(o.buf);
    return result;
fail:
    PyMem_Free(o.buf);
    return NULL;
}

/* pcm_b64decode(text) -> bytes, or None: ``text`` decoded when it is canonical base64 (only the
 * standard alphabet, a length that is a multiple of 4, at most two '=' and only at the end), which
 * is what base64.b64decode(text, validate=True) gives it; None for anything else (the caller's
 * base64.b64decode then decides, and names any error). */
static PyObject *
pcm_b64decode(PyObject *self, PyObject *arg)
{
    static signed char table[256];
    static int ready = 0;
    if (!ready) {
        memset(table, -1, sizeof(table));
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int k = 0; k < 64; k++)
            table[(unsigned char)alphabet[k]] = (signed char)k;
        ready = 1;
    }
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "pcm_b64decode: a str is needed");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(arg))
        Py_RETURN_NONE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    const unsigned char *s = PyUnicode_1BYTE_DATA(arg);
    if (n % 4 != 0)
        Py_RETURN_NONE;
    Py_ssize_t pad = 0;
    if (n >= 4 && s[n - 1] == '=')
        pad = s[n - 2] == '=' ? 2 : 1;
    Py_ssize_t body = n - pad; /* data characters */
    PyObject *out = PyBytes_FromStringAndSize(NULL, n / 4 * 3 - pad);
    if (out == NULL)
        return NULL;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t i = 0;
    for (; i + 4 <= body; i += 4) {
        int a = table[s[i]], b = table[s[i + 1]], c = table[s[i + 2]], d = table[s[i + 3]];
        if ((a | b | c | d) < 0)
            goto not_canonical;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        *o++ = (unsigned char)(v >> 16);
        *o++ = (unsigned char)(v >> 8);
        *o++ = (unsigned char)v;
    }
    if (pad) { /* the last quad: 4 - pad data characters */
        int a = table[s[i]], b = table[s[i + 1]], c = pad == 1 ? table[s[i + 2]] : 0;
        if ((a | b | c) < 0)
            goto not_canonical;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6;
        *o++ = (unsigned char)(v >> 16);
        if (pad == 1)
            *o++ = (unsigned char)(v >> 8);
    }
    return out;
not_canonical:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* hf_json_float(fallback, text) -> float: the float Hugging Face's JSON reader makes of the JSON
 * number ``text`` (tokscope.core.formats.tokenizer_json_models.hf_json_float, the oracle), for
 * the usual Unigram score: an optional '-', digits, a '.' and at most 30 digits, no exponent,
 * all the digits together an integer below 2**63 (so none is dropped and the conversion is
 * exact): that integer as a double divided once by the power of ten (serde_json's reading).
 * Anything else is ``fallback(text)``. */
#define HFFLOAT_ABI_VERSION 1

static PyObject *
hf_json_float(PyObject *self, PyObject *args)
{
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
                                   1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30};
    const uint64_t top = ((uint64_t)1 << 63) - 1;
    PyObject *fallback, *text;
    if (!PyArg_UnpackTuple(args, "hf_json_float", 2, 2, &fallback, &text))
        return NULL;
    if (PyUnicode_Check(text) && PyUnicode_IS_ASCII(text)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        const unsigned char *s = PyUnicode_1BYTE_DATA(text);
        Py_ssize_t i = 0, whole = 0, frac = 0;
        int negative = 0, dot = 0, fits = 1;
        uint64_t v = 0;
        if (i < n && s[i] == '-') {
            negative = 1;
            i++;
        }
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, whole++) {
            uint64_t d = (uint64_t)(s[i] - '0');
            if (v > (top - d) / 10)
                fits = 0;
            else
                v = v * 10 + d;
        }
        if (whole > 0 && i < n && s[i] == '.') {
            dot = 1;
            for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, frac++) {
                uint64_t d = (uint64_t)(s[i] - '0');
                if (v > (top - d) / 10)
                    fits = 0;
                else
                    v = v * 10 + d;
            }
        }
        if (fits && i == n && whole > 0 && (!dot || frac > 0) && frac <= 30) {
            double value = (double)(int64_t)v / pow10[frac];
            return PyFloat_FromDouble(negative ? -value : value);
        }
    }
    return PyObject_CallOneArg(fallback, text);
}

/* lattice_ids(table, text, unk_id, unk_score) -> list of ids | (path, score) | None: Hugging
 * Face's Unigram path (mode 2 of lattice_path) over text; its ids when no node has the unknown
 * id (each node is then one token), else what lattice_viterbi gives (the caller fuses the unknown
 * nodes), None when the path needs the unknown id the model lacks (unk_id < 0). The ids-only path
 * of tokscope.core.models.unigram (UIDS_ABI). */
#define UIDS_ABI_VERSION 1

static PyObject *
lattice_ids(PyObject *self, PyObject *args)
{
    PyObject *capsule, *text;
    Py_ssize_t unk_id;
    double unk_score;
    if (!PyArg_ParseTuple(args, "OUnd", &capsule, &text, &unk_id, &unk_score))
        return NULL;
    int32_t *start, *id;
    Py_ssize_t m;
    double score;
    int status = lattice_path(capsule, text, 2, unk_id, unk_score, &start, &id, &m, &score);
    if (status < 0)
        return NULL;
    if (status > 0)
        Py_RETURN_NONE;
    Lattice *t = (Lattice *)PyCapsule_GetPointer(capsule, LATTICE_CAPSULE);
    int unknown = 0;
    for (Py_ssize_t k = 0; k < m && !unknown; k++)
        unknown = unk_id >= 0 && id[k] == unk_id;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(m);
    Offsets last = {0, 0, NULL, NULL};
    Py_ssize_t filled = 0;
    for (Py_ssize_t k = 0; out != NULL && k < m; k++) {
        if (put_triple(out, &filled, t, id[k], start[k], k + 1 < m ? start[k + 1] : n, unknown ? &last : NULL) < 0)
            Py_CLEAR(out);
    }
    PyMem_Free(start);
    PyMem_Free(id);
    if (out == NULL || !unknown)
        return out;
    return Py_BuildValue("(Nd)", out, score);
}

static PyMethodDef pcm_methods[] = {
    {"lattice_ids", lattice_ids, METH_VARARGS,
     "lattice_ids(table, text, unk_id, unk_score) -> ids, or (path, score) when a node is unknown, or None"},
    {"hf_json_float", hf_json_float, METH_VARARGS,
     "hf_json_float(fallback, text) -> float: a JSON number as Hugging Face's reader makes it"},
    {"pcm_b64decode", pcm_b64decode, METH_O,
     "pcm_b64decode(text) -> bytes, or None when text is not canonical base64"},
    {"pcm_build", pcm_build, METH_VARARGS,
     "pcm_build(blob, joiners) -> table: a precompiled_charsmap and the grapheme joiners' ranges"},
    {"pcm_normalize", pcm_normalize, METH_VARARGS,
     "pcm_normalize(table, text, cache, region) -> str: Hugging Face's Precompiled normalization"},
    {NULL, NULL, 0, NULL},
};

static int
pcm_add(PyObject *m)
{
    if (PyModule_AddIntConstant(m, "HFFLOAT_ABI", HFFLOAT_ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "UIDS_ABI", UIDS_ABI_VERSION) < 0)
        return -1;
    return part_add(m, pcm_methods, "PCM_ABI", PCM_ABI_VERSION);
}


/* ----- vocabulary checks: check_vocab and reverse_vocab, compiled --------------------------------
 *
 * (load8's block: tokscope.core.models.base.) Every model with a token -> id vocabulary (BPE from a
 * merge list, WordPiece, WordLevel) checks it and builds its id -> token map when it is made, from
 * a file or from tokscope's cache; in Python that is five passes and a zip. These are one pass each
 * over a plain dict; anything else is None and the Python functions (the tests' oracle) do it.
 *
 * vocab_check(vocab) -> a copy of vocab, or None unless vocab is a non-empty dict whose keys are
 *     all str and whose values are all int (not bool, not a subclass) from 0 to 2**32 - 1.
 * vocab_reverse(vocab) -> {id: token}, the first token of an id kept (a malformed file's ids can
 *     repeat), or None unless vocab is a dict of str keys and int values (exact types).
 *
 * Only exact str and int objects are touched (their hashes and comparisons run no Python code), so
 * nothing can change the dict while it is walked.
 */

#define VOCAB_ABI_VERSION 1
#define VOCAB_MAX_ID 0xFFFFFFFFLL

static PyObject *
vocab_check(PyObject *self, PyObject *vocab)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    if (!PyDict_CheckExact(vocab) || PyDict_GET_SIZE(vocab) == 0)
        Py_RETURN_NONE;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        int overflow = 0;
        long long id;
        if (!PyUnicode_CheckExact(key) || !PyLong_CheckExact(value))
            Py_RETURN_NONE;
        id = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (id == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        if (overflow || id < 0 || id > VOCAB_MAX_ID)
            Py_RETURN_NONE;
    }
    return PyDict_Copy(vocab);
}

static PyObject *
vocab_reverse(PyObject *self, PyObject *vocab)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value, *reverse;
    if (!PyDict_CheckExact(vocab))
        Py_RETURN_NONE;
    reverse = PyDict_New();
    if (reverse == NULL)
        return NULL;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || !PyLong_CheckExact(value)) {
            Py_DECREF(reverse);
            Py_RETURN_NONE;
        }
        if (PyDict_SetDefault(reverse, value, key) == NULL) {
            Py_DECREF(reverse);
            return NULL;
        }
    }
    return reverse;
}

/* vocab_longest(vocab, prefix) -> (longest, longest_prefixed): the most characters of a token, and
 * of a token that starts with prefix (-1 when none does), or None unless vocab is a dict of str
 * keys and prefix a str (exact types). WordPiece bounds its longest-match search by them. */
static PyObject *
vocab_longest(PyObject *self, PyObject *args)
{
    PyObject *vocab, *prefix, *key, *value;
    Py_ssize_t pos = 0, longest = 0, prefixed = -1, n_prefix;
    if (!PyArg_ParseTuple(args, "OO:vocab_longest", &vocab, &prefix))
        return NULL;
    if (!PyDict_CheckExact(vocab) || !PyUnicode_CheckExact(prefix) || PyUnicode_READY(prefix) < 0)
        Py_RETURN_NONE;
    n_prefix = PyUnicode_GET_LENGTH(prefix);
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        Py_ssize_t n;
        if (!PyUnicode_CheckExact(key) || PyUnicode_READY(key) < 0)
            Py_RETURN_NONE;
        n = PyUnicode_GET_LENGTH(key);
        if (n > longest)
            longest = n;
        if (n >= n_prefix && n > prefixed) {
            Py_ssize_t match = PyUnicode_Tailmatch(key, prefix, 0, n_prefix, -1);
            if (match < 0)
                return NULL;
            if (match)
                prefixed = n;
        }
    }
    return Py_BuildValue("(nn)", longest, prefixed);
}

/* vocab_table(text, sep, ids) -> {token: id}: text cut at every sep (one character) into tokens,
 * the k-th token given ids[k] (ids: a buffer of int64, an array('q')), a token listed twice keeping
 * its last id, as dict(zip(text.split(sep), ids)) does; a ValueError when the counts differ, None
 * unless text and sep are str (exact) and sep is one character. tokscope's cache keeps a
 * vocabulary so. */
static PyObject *
vocab_table(PyObject *self, PyObject *args)
{
    PyObject *text, *sep, *ids_obj, *vocab = NULL;
    Py_buffer ids;
    Py_ssize_t n, start = 0, k = 0, count;
    Py_UCS4 cut;
    const long long *values;
    if (!PyArg_ParseTuple(args, "OOO:vocab_table", &text, &sep, &ids_obj))
        return NULL;
    if (!PyUnicode_CheckExact(text) || !PyUnicode_CheckExact(sep) || PyUnicode_READY(text) < 0
        || PyUnicode_READY(sep) < 0 || PyUnicode_GET_LENGTH(sep) != 1)
        Py_RETURN_NONE;
    if (PyObject_GetBuffer(ids_obj, &ids, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (ids.itemsize != 8 || ids.format == NULL || strcmp(ids.format, "q") != 0) {
        PyBuffer_Release(&ids);
        PyErr_SetString(PyExc_ValueError, "vocab_table: the ids are not 64-bit integers");
        return NULL;
    }
    count = ids.len / 8;
    values = (const long long *)ids.buf;
    n = PyUnicode_GET_LENGTH(text);
    cut = PyUnicode_READ_CHAR(sep, 0);
    vocab = PyDict_New();
    if (vocab == NULL)
        goto fail;
    for (;;) {
        Py_ssize_t at = PyUnicode_FindChar(text, cut, start, n, 1);
        PyObject *token, *id;
        if (at == -2)
            goto fail;
        if (at == -1)
            at = n;
        if (k >= count) {
            PyErr_SetString(PyExc_ValueError, "vocab_table: more tokens than ids");
            goto fail;
        }
        token = PyUnicode_Substring(text, start, at);
        if (token == NULL)
            goto fail;
        id = PyLong_FromLongLong(values[k]);
        if (id == NULL || PyDict_SetItem(vocab, token, id) < 0) {
            Py_DECREF(token);
            Py_XDECREF(id);
            goto fail;
        }
        Py_DECREF(token);
        Py_DECREF(id);
        k++;
        if (at == n)
            break;
        start = at + 1;
    }
    if (k != count) {
        PyErr_SetString(PyExc_ValueError, "vocab_table: fewer tokens than ids");
        goto fail;
    }
    PyBuffer_Release(&ids);
    return vocab;
fail:
    Py_XDECREF(vocab);
    PyBuffer_Release(&ids);
    return NULL;
}

/* The id of token in vocab: 0 and *id set, 1 when it is missing or not a plain id, -1 on error. */
static int
vocab_id(PyObject *vocab, PyObject *token, uint32_t *id)
{
    PyObject *value = PyDict_GetItemWithError(vocab, token);
    unsigned long long v;
    if (value == NULL)
        return PyErr_Occurred() ? -1 : 1;
    if (!PyLong_CheckExact(value))
        return 1;
    v = PyLong_AsUnsignedLongLong(value);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    if (v > 0xFFFFFFFFULL)
        return 1;
    *id = (uint32_t)v;
    return 0;
}

/* vocab_merges(vocab, merges) -> (keys, results) as bytes: a BPE merge list (no subword prefix)
 * read straight from the file's list, either "a b" strings (exactly one space each) or [a, b]
 * pairs, into left << 32 | right (uint64) and the merged token's id (uint32) by rank, in this
 * machine's byte order; None for anything else (a first item starting with "#", a pair that is
 * not a list of two str, a token missing from the vocabulary, an empty list): the Python columns
 * and the merge-by-merge loop then read it and name what is wrong. vocab: a dict of str -> int. */
static PyObject *
vocab_merges(PyObject *self, PyObject *args)
{
    PyObject *vocab, *merges, *keys = NULL, *results = NULL, *first;
    Py_ssize_t n, i;
    int lines;
    uint64_t *key_out;
    uint32_t *result_out;
    if (!PyArg_ParseTuple(args, "OO:vocab_merges", &vocab, &merges))
        return NULL;
    if (!PyDict_CheckExact(vocab) || !PyList_CheckExact(merges) || PyList_GET_SIZE(merges) == 0
        || PyList_GET_SIZE(merges) > (Py_ssize_t)0xFFFFFFFF)
        Py_RETURN_NONE;
    n = PyList_GET_SIZE(merges);
    first = PyList_GET_ITEM(merges, 0);
    lines = PyUnicode_CheckExact(first);
    if (lines && (PyUnicode_READY(first) < 0 || (PyUnicode_GET_LENGTH(first) > 0 && PyUnicode_READ_CHAR(first, 0) == '#')))
        Py_RETURN_NONE;
    keys = PyBytes_FromStringAndSize(NULL, n * 8);
    results = PyBytes_FromStringAndSize(NULL, n * 4);
    if (keys == NULL || results == NULL)
        goto fail;
    key_out = (uint64_t *)PyBytes_AS_STRING(keys);
    result_out = (uint32_t *)PyBytes_AS_STRING(results);
    for (i = 0; i < n; i++) {
        /* a vocabulary key of a str subclass could run Python code in a comparison and shorten
         * the list: its length is read again before each item */
        PyObject *item, *left, *right, *merged;
        uint32_t a = 0, b = 0, made = 0;
        int missing;
        if (i >= PyList_GET_SIZE(merges))
            goto unfit;
        item = PyList_GET_ITEM(merges, i);
        if (lines) {
            Py_ssize_t len, space;
            if (!PyUnicode_CheckExact(item) || PyUnicode_READY(item) < 0)
                goto unfit;
            len = PyUnicode_GET_LENGTH(item);
            space = PyUnicode_FindChar(item, ' ', 0, len, 1);
            if (space == -2)
                goto fail;
            if (space < 0 || PyUnicode_FindChar(item, ' ', space + 1, len, 1) != -1)
                goto unfit; /* no space, or two (FindChar's error, -2, is rechecked by Python) */
            left = PyUnicode_Substring(item, 0, space);
            right = PyUnicode_Substring(item, space + 1, len);
        } else {
            PyObject *l, *r;
            if (!PyList_CheckExact(item) || PyList_GET_SIZE(item) != 2)
                goto unfit;
            l = PyList_GET_ITEM(item, 0);
            r = PyList_GET_ITEM(item, 1);
            if (!PyUnicode_CheckExact(l) || !PyUnicode_CheckExact(r))
                goto unfit;
            left = l;
            right = r;
            Py_INCREF(left);
            Py_INCREF(right);
        }
        if (left == NULL || right == NULL) {
            Py_XDECREF(left);
            Py_XDECREF(right);
            goto fail;
        }
        merged = PyUnicode_Concat(left, right);
        missing = merged == NULL ? -1 : vocab_id(vocab, left, &a);
        if (missing == 0)
            missing = vocab_id(vocab, right, &b);
        if (missing == 0)
            missing = vocab_id(vocab, merged, &made);
        Py_DECREF(left);
        Py_DECREF(right);
        Py_XDECREF(merged);
        if (missing < 0)
            goto fail;
        if (missing)
            goto unfit;
        key_out[i] = (uint64_t)a << 32 | b;
        result_out[i] = made;
    }
    return Py_BuildValue("(NN)", keys, results);
unfit:
    Py_DECREF(keys);
    Py_DECREF(results);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(keys);
    Py_XDECREF(results);
    return NULL;
}

static PyMethodDef vocab_methods[] = {
    {"vocab_check", vocab_check, METH_O,
     "vocab_check(vocab) -> a copy of a plain str -> id dict (ids 0 to 2**32 - 1), or None"},
    {"vocab_reverse", vocab_reverse, METH_O,
     "vocab_reverse(vocab) -> {id: token}, the first token of an id kept, or None for another shape"},
    {"vocab_longest", vocab_longest, METH_VARARGS,
     "vocab_longest(vocab, prefix) -> (longest, longest_prefixed): token lengths in characters (-1: none prefixed)"},
    {"vocab_table", vocab_table, METH_VARARGS,
     "vocab_table(text, sep, ids) -> dict(zip(text.split(sep), ids)) for an array('q') of ids (None for other types)"},
    {"vocab_merges", vocab_merges, METH_VARARGS,
     "vocab_merges(vocab, merges) -> (keys, results) as bytes of uint64 and uint32 by rank, or None for the Python path"},
    {NULL, NULL, 0, NULL},
};

static int
vocab_add(PyObject *m)
{
    return part_add(m, vocab_methods, "VOCAB_ABI", VOCAB_ABI_VERSION);
}


/* ----- a tokenizer.json's load: its vocabulary read from the bytes, Unigram columns, base64 -----
 *
 * (load9's block.) What a small tokenizer.json's load spends its time on, in one pass each; the
 * Python functions they stand for (and json.loads) stay the tests' oracle. JLOAD_ABI names this
 * block's version.
 *
 * unigram_columns(vocab) -> (pieces, scores), or None: tokscope.core.models.unigram._vocab_columns
 *     in one pass: vocab a non-empty list (exactly) of lists or tuples (exactly) of two items, a
 *     str (exactly) and an int or a float (exactly: no bool); the pieces as they are, the scores
 *     as floats (an int converted as float() does, OverflowError and all). Anything else is None.
 * base64_end(data, start) -> the index of the first byte of data (bytes) at or after start that is
 *     not in base64's alphabet (A-Z a-z 0-9 + / =), or len(data).
 * json_vocab(data, start) -> (vocab, end), or None: a {token: id} object read from the file's bytes
 *     (below).
 * json_scores(data, start) -> (vocab, end), or None: a Unigram's [[piece, score], ...] array read
 *     from the file's bytes, its scores as json.loads reads them with tokscope's parse_float.
 *
 * Only exact list, tuple, str, int and float objects are read (no Python code runs while the list
 * is walked, so nothing can change it), and every index is checked against the sizes.
 */

#define JLOAD_ABI_VERSION 1
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static PyObject *
unigram_columns(PyObject *self, PyObject *vocab)
{
    if (!PyList_CheckExact(vocab) || PyList_GET_SIZE(vocab) == 0)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(vocab);
    int all_float = 1;
    for (Py_ssize_t i = 0; i < n; i++) { /* the checks first, as the Python function makes them */
        PyObject *entry = PyList_GET_ITEM(vocab, i), *piece, *score;
        if (PyList_CheckExact(entry) && PyList_GET_SIZE(entry) == 2) {
            piece = PyList_GET_ITEM(entry, 0);
            score = PyList_GET_ITEM(entry, 1);
        } else if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2) {
            piece = PyTuple_GET_ITEM(entry, 0);
            score = PyTuple_GET_ITEM(entry, 1);
        } else {
            Py_RETURN_NONE;
        }
        if (!PyUnicode_CheckExact(piece))
            Py_RETURN_NONE;
        if (!PyFloat_CheckExact(score)) {
            if (!PyLong_CheckExact(score))
                Py_RETURN_NONE;
            all_float = 0;
        }
    }
    PyObject *pieces = PyList_New(n), *scores = PyList_New(n);
    if (pieces == NULL || scores == NULL)
        goto fail;
    /* Making the two lists may have run a collection, and so a finalizer that changed vocab:
     * each entry is checked again as it is read, and a changed list is None. */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry, *piece, *score;
        if (PyList_GET_SIZE(vocab) != n)
            goto changed;
        entry = PyList_GET_ITEM(vocab, i);
        if (PyList_CheckExact(entry) && PyList_GET_SIZE(entry) == 2) {
            piece = PyList_GET_ITEM(entry, 0);
            score = PyList_GET_ITEM(entry, 1);
        } else if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2) {
            piece = PyTuple_GET_ITEM(entry, 0);
            score = PyTuple_GET_ITEM(entry, 1);
        } else {
            goto changed;
        }
        if (!PyUnicode_CheckExact(piece))
            goto changed;
        if (PyFloat_CheckExact(score)) {
            Py_INCREF(score);
        } else if (PyLong_CheckExact(score) && !all_float) {
            double value = PyLong_AsDouble(score); /* float(int): OverflowError when it is too large */
            if (value == -1.0 && PyErr_Occurred())
                goto fail;
            score = PyFloat_FromDouble(value); /* a float is not tracked: no collection here */
            if (score == NULL)
                goto fail;
        } else {
            goto changed;
        }
        Py_INCREF(piece);
        PyList_SET_ITEM(pieces, i, piece);
        PyList_SET_ITEM(scores, i, score);
    }
    PyObject *out = PyTuple_Pack(2, pieces, scores);
    Py_DECREF(pieces);
    Py_DECREF(scores);
    return out;
changed:
    Py_DECREF(pieces);
    Py_DECREF(scores);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(pieces);
    Py_XDECREF(scores);
    return NULL;
}

static PyObject *
base64_end(PyObject *self, PyObject *args)
{
    static unsigned char alphabet[256];
    static int ready = 0;
    PyObject *data;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "On:base64_end", &data, &start))
        return NULL;
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "base64_end: bytes are needed");
        return NULL;
    }
    if (!ready) {
        const char *chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
        for (const char *c = chars; *c; c++)
            alphabet[(unsigned char)*c] = 1;
        ready = 1;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t i = start < 0 ? 0 : start;
    if (i > n)
        i = n;
#if defined(__SSE2__)
    /* sixteen bytes at a time while all are in the alphabet (signed compares: a byte from 0x80
     * up is negative, in no range) */
    const __m128i plus = _mm_set1_epi8('+'), slash = _mm_set1_epi8('/'), equal = _mm_set1_epi8('=');
    const __m128i before_0 = _mm_set1_epi8('0' - 1), after_9 = _mm_set1_epi8('9' + 1);
    const __m128i before_a = _mm_set1_epi8('a' - 1), after_z = _mm_set1_epi8('z' + 1);
    const __m128i before_A = _mm_set1_epi8('A' - 1), after_Z = _mm_set1_epi8('Z' + 1);
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i ok = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, plus), _mm_cmpeq_epi8(v, slash)),
                                  _mm_cmpeq_epi8(v, equal));
        ok = _mm_or_si128(ok, _mm_and_si128(_mm_cmpgt_epi8(v, before_0), _mm_cmplt_epi8(v, after_9)));
        ok = _mm_or_si128(ok, _mm_and_si128(_mm_cmpgt_epi8(v, before_a), _mm_cmplt_epi8(v, after_z)));
        ok = _mm_or_si128(ok, _mm_and_si128(_mm_cmpgt_epi8(v, before_A), _mm_cmplt_epi8(v, after_Z)));
        if (_mm_movemask_epi8(ok) != 0xFFFF)
            break; /* the byte-wise loop finds which */
        i += 16;
    }
#endif
    while (i < n && alphabet[s[i]])
        i++;
    return PyLong_FromSsize_t(i);
}

/* The escape at s[0] ('\\'; n bytes from there): its character, or -1 for one json_vocab leaves to
 * json.loads (a surrogate's \\u escape: json pairs them) or that is not JSON. Its length is 6 for
 * \\u, else 2. */
static long
jv_escape(const unsigned char *s, Py_ssize_t n, void *unused)
{
    if (n < 2)
        return -1;
    switch (s[1]) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': break;
    default: return -1;
    }
    if (n < 6)
        return -1;
    long c = 0;
    for (int k = 2; k < 6; k++) {
        int d = s[k];
        if (d >= '0' && d <= '9')
            d -= '0';
        else if (d >= 'a' && d <= 'f')
            d -= 'a' - 10;
        else if (d >= 'A' && d <= 'F')
            d -= 'A' - 10;
        else
            return -1;
        c = c << 4 | d;
    }
    return (c >= 0xD800 && c <= 0xDFFF) ? -1 : c;
}

/* A key of n bytes at s with escapes (each checked by jv_escape): its raw stretches and its
 * escaped characters as UTF-8, decoded strictly (a raw stretch that is not UTF-8 is still not,
 * next to an escape's bytes: they start with no continuation byte). NULL with an error set. */
static PyObject *
jv_unescaped(const unsigned char *s, Py_ssize_t n)
{
    unsigned char small[256] = {0};
    unsigned char *out = n <= (Py_ssize_t)sizeof small ? small : PyMem_Malloc(n);
    if (out == NULL)
        return PyErr_NoMemory();
    Py_ssize_t o = 0;
    for (Py_ssize_t i = 0; i < n;) {
        if (s[i] != '\\') {
            out[o++] = s[i++];
            continue;
        }
        long c = jv_escape(s + i, n - i, NULL); /* checked by the caller: 0 to 0xFFFF, no surrogate */
        i += s[i + 1] == 'u' ? 6 : 2;
        if (c < 0x80) {
            out[o++] = (unsigned char)c;
        } else if (c < 0x800) {
            out[o++] = (unsigned char)(0xC0 | c >> 6);
            out[o++] = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            out[o++] = (unsigned char)(0xE0 | c >> 12);
            out[o++] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            out[o++] = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    PyObject *key = PyUnicode_DecodeUTF8((const char *)out, o, "strict");
    if (out != small)
        PyMem_Free(out);
    return key;
}

#define JV_SPACE() while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++

/* The string whose opening '"' is s[i]: the index after its closing '"', or -1 when it holds a
 * control character or an escape jv_escape refuses (or does not end); *escaped and *high say
 * whether it holds an escape and a byte from 0x80 up. */
static Py_ssize_t
jv_scan_string(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, int *escaped, int *high)
{
    *escaped = *high = 0;
    if (i >= n || s[i] != '"')
        return -1;
    for (i++; i < n && s[i] != '"';) {
        if (s[i] < 0x20)
            return -1;
        if (s[i] == '\\') {
            if (i + 1 >= n || jv_escape(s + i, n - i, NULL) < 0)
                return -1;
            *escaped = 1;
            i += s[i + 1] == 'u' ? 6 : 2;
        } else {
            *high |= s[i] & 0x80;
            i++;
        }
    }
    return i < n ? i + 1 : -1;
}

/* The str of the string scanned from s[start] to s[end] (its quotes included); NULL with an error
 * set (a UnicodeDecodeError when it is not UTF-8). */
static PyObject *
jv_make_string(const unsigned char *s, Py_ssize_t start, Py_ssize_t end, int escaped, int high)
{
    Py_ssize_t size = end - start - 2;
    if (escaped)
        return jv_unescaped(s + start + 1, size);
    if (high)
        return PyUnicode_DecodeUTF8((const char *)s + start + 1, size, "strict");
    PyObject *text = PyUnicode_New(size, 127); /* ASCII: the bytes are the characters */
    if (text != NULL)
        memcpy(PyUnicode_1BYTE_DATA(text), s + start + 1, size);
    return text;
}

/* The number at s[i]: the index after it, or -1 unless it is -?(0|[1-9][0-9]*), with a fraction
 * .[0-9]+ when fraction is allowed, of at most 18 digits in all, not followed by a '.', an
 * exponent or a digit. *digits gets its digits as an integer, *places the fraction's length (-1:
 * none), *negative its sign. */
static Py_ssize_t
jv_scan_number(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, int fraction, long long *digits, int *places,
               int *negative)
{
    long long v = 0;
    int count = 0;
    *negative = 0;
    *places = -1;
    if (i < n && s[i] == '-') {
        *negative = 1;
        i++;
    }
    if (i >= n || s[i] < '0' || s[i] > '9')
        return -1;
    if (s[i] == '0') {
        i++;
        count = 1;
    } else {
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (++count > 18)
                return -1;
            v = v * 10 + (s[i] - '0');
        }
    }
    if (fraction && i + 1 < n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
        *places = 0;
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (++count > 18)
                return -1;
            v = v * 10 + (s[i] - '0');
            ++*places;
        }
    }
    if (i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E' || (s[i] >= '0' && s[i] <= '9')))
        return -1;
    *digits = v;
    return i;
}

/* The number jv_scan_number read, as json.loads makes it with tokscope's parse_float: an int, or
 * for a fraction the digits as a double divided once by the power of ten (what hf_json_float
 * gives: the digits fit in 63 bits). */
static PyObject *
jv_make_number(long long digits, int places, int negative)
{
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
    if (places < 0)
        return PyLong_FromLongLong(negative ? -digits : digits);
    double value = (double)digits / pow10[places];
    return PyFloat_FromDouble(negative ? -value : value);
}

/* A string, JV_SPACE, sep, JV_SPACE and a number (a fraction allowed when fraction) from s[i]:
 * the index after the number, with *text and *number made (new references); -1 when they are not
 * there or the string is not UTF-8, -2 with an error set. */
static Py_ssize_t
jv_pair(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, unsigned char sep, int fraction, PyObject **text,
        PyObject **number)
{
    int escaped, high, places, negative;
    long long digits;
    Py_ssize_t start = i;
    i = jv_scan_string(s, n, i, &escaped, &high);
    if (i < 0)
        return -1;
    Py_ssize_t end = i;
    JV_SPACE();
    if (i >= n || s[i] != sep)
        return -1;
    i++;
    JV_SPACE();
    i = jv_scan_number(s, n, i, fraction, &digits, &places, &negative);
    if (i < 0)
        return -1;
    *text = jv_make_string(s, start, end, escaped, high);
    if (*text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            return -2;
        PyErr_Clear();
        return -1;
    }
    *number = jv_make_number(digits, places, negative);
    if (*number == NULL) {
        Py_CLEAR(*text);
        return -2;
    }
    return i;
}

/* json_vocab's reading of the object at s[start] ('{'; n bytes in all): the index after its '}',
 * -1 when it is not a plain vocabulary, -2 with an error set; the members are set in vocab as they
 * are read (the caller drops it on -1). */
static Py_ssize_t
jv_read(const unsigned char *s, Py_ssize_t n, Py_ssize_t start, PyObject *vocab)
{
    Py_ssize_t i = start + 1;
    JV_SPACE();
    if (i < n && s[i] == '}')
        return i + 1;
    for (;;) {
        PyObject *key, *value;
        i = jv_pair(s, n, i, ':', 0, &key, &value);
        if (i < 0)
            return i;
        int failed = PyDict_SetItem(vocab, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (failed < 0)
            return -2;
        JV_SPACE();
        if (i < n && s[i] == ',') {
            i++;
            JV_SPACE();
            continue;
        }
        return i < n && s[i] == '}' ? i + 1 : -1;
    }
}

/* json_scores' reading of the array at s[start] ('['): as jv_read, for [[piece, score], ...]
 * (a score an int, or a float with a fraction), appended to pieces (a list) as they are read. */
static Py_ssize_t
js_read(const unsigned char *s, Py_ssize_t n, Py_ssize_t start, PyObject *pieces)
{
    Py_ssize_t i = start + 1;
    JV_SPACE();
    if (i < n && s[i] == ']')
        return i + 1;
    for (;;) {
        PyObject *piece, *score;
        if (i >= n || s[i] != '[')
            return -1;
        i++;
        JV_SPACE();
        i = jv_pair(s, n, i, ',', 1, &piece, &score);
        if (i < 0)
            return i;
        JV_SPACE();
        PyObject *entry = i < n && s[i] == ']' ? PyList_New(2) : NULL;
        if (entry == NULL) {
            Py_DECREF(piece);
            Py_DECREF(score);
            return PyErr_Occurred() ? -2 : -1;
        }
        i++;
        PyList_SET_ITEM(entry, 0, piece);
        PyList_SET_ITEM(entry, 1, score);
        int failed = PyList_Append(pieces, entry);
        Py_DECREF(entry);
        if (failed < 0)
            return -2;
        JV_SPACE();
        if (i < n && s[i] == ',') {
            i++;
            JV_SPACE();
            continue;
        }
        return i < n && s[i] == ']' ? i + 1 : -1;
    }
}

#undef JV_SPACE

/* json_vocab and json_scores: the value at data[start], made as it is read in one pass (and
 * dropped when it is not one they read: json.loads then reads the file). */
static PyObject *
jv_value(PyObject *args, const char *format, unsigned char opening,
         Py_ssize_t (*read)(const unsigned char *, Py_ssize_t, Py_ssize_t, PyObject *), PyObject *(*make)(Py_ssize_t))
{
    PyObject *data;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, format, &data, &start))
        return NULL;
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "bytes are needed");
        return NULL;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data);
    if (start < 0 || start >= n || s[start] != opening)
        Py_RETURN_NONE;
    PyObject *value = make(0);
    if (value == NULL)
        return NULL;
    Py_ssize_t end = read(s, n, start, value);
    if (end < 0) {
        Py_DECREF(value);
        if (end == -2)
            return NULL;
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nn)", value, end);
}

static PyObject *
jv_new_dict(Py_ssize_t unused)
{
    return PyDict_New();
}

/* json_vocab(data, start) -> (vocab, end), or None: the JSON object that starts at data[start]
 * (bytes; a '{'), when it is a plain vocabulary: members of a string key and a whole number,
 * nothing else. A key holds no control character and no escape but JSON's short ones and \\u
 * escapes of characters that are not surrogates; its value is its bytes decoded as strict UTF-8
 * (as the whole file's decode gives them) with the escapes' characters; a number is
 * -?(0|[1-9][0-9]*) of at most 18 digits, not followed by a fraction, an exponent or a digit;
 * whitespace is JSON's four. vocab is the dict json.loads makes of those bytes (members set in
 * order: a repeated key keeps its first place and its last value); end is the index after the
 * closing '}'. Anything else, invalid UTF-8 included, is None (json.loads then reads the file). */
static PyObject *
json_vocab(PyObject *self, PyObject *args)
{
    return jv_value(args, "On:json_vocab", '{', jv_read, jv_new_dict);
}

/* json_scores(data, start) -> (vocab, end), or None: the same for a Unigram's array at data[start]
 * ('['), [[piece, score], ...]: each entry an array of a string as above and a number, an int as
 * above or one with a fraction (at most 18 digits in all), which is the float hf_json_float makes
 * (the file's parse_float); each entry a new list, as json.loads makes them. */
static PyObject *
json_scores(PyObject *self, PyObject *args)
{
    return jv_value(args, "On:json_scores", '[', js_read, PyList_New);
}

static PyMethodDef jload_methods[] = {
    {"json_vocab", json_vocab, METH_VARARGS,
     "json_vocab(data, start) -> (the {str: int} object at data[start], the index after it), or None"},
    {"json_scores", json_scores, METH_VARARGS,
     "json_scores(data, start) -> (the [[str, number], ...] array at data[start], the index after it), or None"},
    {"unigram_columns", unigram_columns, METH_O,
     "unigram_columns(vocab) -> (pieces, float scores) of a list of [str, int|float] pairs, or None"},
    {"base64_end", base64_end, METH_VARARGS,
     "base64_end(data, start) -> the index of the first byte at or after start not in base64's alphabet"},
    {NULL, NULL, 0, NULL},
};

static int
jload_add(PyObject *m)
{
    return part_add(m, jload_methods, "JLOAD_ABI", JLOAD_ABI_VERSION);
}
