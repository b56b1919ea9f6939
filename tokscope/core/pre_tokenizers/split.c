/* The pre-tokenizer split of the tiktoken-family patterns, compiled: _tokscope_split.split.
 *
 * Optional: built at install when the machine has a C compiler. Without it (and for every other
 * pattern) tokscope.core.patterns.tiktoken_syntax.ChunkPattern matches with the ``regex`` module,
 * which stays the test oracle: the tests hold this scanner to it, chunk for chunk.
 *
 * Each known pattern is a hand-written state machine that follows the regex's leftmost-first
 * alternation (greedy and possessive quantifiers, back-off where the regex backs off) exactly;
 * the kinds are numbered here and in tokscope/core/patterns/scanner.py, which maps each pattern,
 * by its exact string, to one:
 *
 *   KIND_CL100K  cl100k_base's pattern
 *   KIND_O200K   o200k_base's pattern (o200k_harmony's too)
 *   KIND_GPT2    GPT-2's (r50k_base, p50k_base, p50k_edit)
 *   KIND_LLAMA3  Llama 3's (cl100k_base's alternatives, greedy, with o200k_base's whitespace ones)
 *   KIND_QWEN    Qwen's (Llama 3's with one digit a chunk: \p{N} for \p{N}{1,3})
 *   KIND_DS_DIGITS, KIND_DS_CJK, KIND_DS_MAIN
 *                the three Oniguruma patterns of DeepSeek V3's Splits (see match_ds_main), on a
 *                table of their own classes (DS_* bits); these kinds do not tile the text, and
 *                split() gives the text between matches as pieces too (HF's isolated behavior)
 *
 * The character classes come from Python: a table of one flags byte per code point, two-level
 * (4352 blocks of 256 code points), filled block by block from the ``regex`` module's own classes
 * when a text first holds a code point of the block (see scanner.py). A text with a code point of
 * a block not yet filled makes split() return None, and missing() names the blocks to fill.
 *
 *   new_table() -> table
 *   fill(table, block, flags: bytes of 256)
 *   missing(table, text) -> list of block numbers not yet filled (in order of first use)
 *   split(table, kind, text) -> list of str (the chunks, as findall gives them) or None
 *   segments(text) -> list of str: ChunkPattern.segments of the line-safe patterns
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SPLIT_ABI_VERSION 1
#define N_BLOCKS (0x110000 >> 8)
#define UNFILLED 0xFFFF

/* the flags byte: bits 0-4 classes, bits 5-7 what the character folds to under (?i) */
#define F_WS 0x01   /* \s */
#define F_L 0x02    /* \p{L} */
#define F_N 0x04    /* \p{N} */
#define F_UP 0x08   /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define F_LO 0x10   /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
#define FOLD(f) ((f) >> 5)
#define FOLD_SDMT 1 /* (?i:[sdmt]) */
#define FOLD_L 2    /* (?i:l) */
#define FOLD_VR 3   /* (?i:[vr]) */
#define FOLD_E 4    /* (?i:e) */

#define KIND_CL100K 1
#define KIND_O200K 2
#define KIND_GPT2 3
#define KIND_LLAMA3 4
#define KIND_QWEN 5
#define KIND_DS_DIGITS 6
#define KIND_DS_CJK 7
#define KIND_DS_MAIN 8
#define DS_ABI_VERSION 1

/* the flags byte of a DeepSeek table (KIND_DS_*): its own classes */
#define DS_WS 0x01  /* \s */
#define DS_L 0x02   /* \p{L} */
#define DS_N 0x04   /* \p{N} */
#define DS_M 0x08   /* \p{M} */
#define DS_PS 0x10  /* [\p{P}\p{S}] */

typedef struct {
    uint16_t index[N_BLOCKS];
    uint8_t *blocks;
    Py_ssize_t count, capacity;
} Table;

static const char *CAPSULE = "_tokscope_split.table";

/* 1 when text's characters can be read (a legacy str made by a deprecated API may need readying
 * before 3.12); 0 with an exception set */
static int
ready(PyObject *text)
{
#if PY_VERSION_HEX < 0x030C0000
    return PyUnicode_READY(text) == 0;
#else
    (void)text;
    return 1;
#endif
}

static void
table_free(PyObject *capsule)
{
    Table *t = (Table *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (t != NULL) {
        PyMem_Free(t->blocks);
        PyMem_Free(t);
    }
}

static PyObject *
new_table(PyObject *self, PyObject *unused)
{
    Table *t = PyMem_New(Table, 1);
    if (t == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < N_BLOCKS; i++)
        t->index[i] = UNFILLED;
    t->blocks = NULL;
    t->count = t->capacity = 0;
    PyObject *capsule = PyCapsule_New(t, CAPSULE, table_free);
    if (capsule == NULL) {
        PyMem_Free(t);
        return NULL;
    }
    return capsule;
}

static Table *
get_table(PyObject *obj)
{
    return (Table *)PyCapsule_GetPointer(obj, CAPSULE);
}

static PyObject *
fill(PyObject *self, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t block;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "Ony*", &obj, &block, &view))
        return NULL;
    Table *t = get_table(obj);
    if (t == NULL || block < 0 || block >= N_BLOCKS || view.len != 256) {
        PyBuffer_Release(&view);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "fill(table, block, flags): a block number below 4352 and 256 flags");
        return NULL;
    }
    if (t->index[block] == UNFILLED) {
        if (t->count == t->capacity) {
            Py_ssize_t capacity = t->capacity ? t->capacity * 2 : 16;
            uint8_t *grown = PyMem_Realloc(t->blocks, (size_t)capacity * 256);
            if (grown == NULL) {
                PyBuffer_Release(&view);
                return PyErr_NoMemory();
            }
            t->blocks = grown;
            t->capacity = capacity;
        }
        t->index[block] = (uint16_t)t->count++;
    }
    memcpy(t->blocks + (Py_ssize_t)t->index[block] * 256, view.buf, 256);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* The flags of each character of text into out (n bytes); -1 when a block is unfilled. */
static int
classify(const Table *t, PyObject *text, uint8_t *out)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const uint16_t *index = t->index;
    const uint8_t *blocks = t->blocks;
    if (n == 0)
        return 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = (const Py_UCS1 *)data;
        if (index[0] == UNFILLED)
            return -1;
        const uint8_t *b = blocks + (Py_ssize_t)index[0] * 256;
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = b[s[i]];
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        uint16_t block = index[c >> 8];
        if (block == UNFILLED)
            return -1;
        out[i] = blocks[(Py_ssize_t)block * 256 + (c & 255)];
    }
    return 0;
}

static PyObject *
missing(PyObject *self, PyObject *args)
{
    PyObject *obj, *text;
    if (!PyArg_ParseTuple(args, "OU", &obj, &text) || !ready(text))
        return NULL;
    Table *t = get_table(obj);
    if (t == NULL)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    uint8_t seen[N_BLOCKS];
    memset(seen, 0, sizeof seen);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 block = PyUnicode_READ(kind, data, i) >> 8;
        if (t->index[block] != UNFILLED || seen[block])
            continue;
        seen[block] = 1;
        PyObject *number = PyLong_FromLong((long)block);
        if (number == NULL || PyList_Append(out, number) < 0) {
            Py_XDECREF(number);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(number);
    }
    return out;
}

/* ----- the state machines: each returns the end of the match at i, or i when none ----------- */

typedef struct {
    const uint8_t *f; /* flags per character */
    int kind;         /* of the str */
    const void *data;
    Py_ssize_t n;
} Text;

#define CH(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))
#define IS_NL(c) ((c) == '\r' || (c) == '\n')
/* [^\r\n\p{L}\p{N}] */
#define IS_P(t, i) (!((t)->f[i] & (F_L | F_N)) && !IS_NL(CH(t, i)))
/* [^\s\p{L}\p{N}] */
#define IS_Q(t, i) (!((t)->f[i] & (F_WS | F_L | F_N)))

static inline Py_ssize_t
run(const Text *t, Py_ssize_t i, uint8_t flag)
{
    const uint8_t *f = t->f;
    Py_ssize_t n = t->n;
    while (i < n && (f[i] & flag))
        i++;
    return i;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at i (cl100k's '(?i:[sdmt]|ll|ve|re) is the same) */
static inline Py_ssize_t
contraction(const Text *t, Py_ssize_t i)
{
    if (i + 1 >= t->n || CH(t, i) != '\'')
        return i;
    int a = FOLD(t->f[i + 1]);
    if (a == FOLD_SDMT)
        return i + 2;
    if (i + 2 >= t->n)
        return i;
    int b = FOLD(t->f[i + 2]);
    if ((a == FOLD_L && b == FOLD_L) || (a == FOLD_VR && b == FOLD_E))
        return i + 3;
    return i;
}

/* GPT-2's '(?:[sdmt]|ll|ve|re), case-sensitive */
static inline Py_ssize_t
contraction_exact(const Text *t, Py_ssize_t i)
{
    if (i + 1 >= t->n || CH(t, i) != '\'')
        return i;
    Py_UCS4 a = CH(t, i + 1);
    if (a == 's' || a == 'd' || a == 'm' || a == 't')
        return i + 2;
    if (i + 2 >= t->n)
        return i;
    Py_UCS4 b = CH(t, i + 2);
    if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e'))
        return i + 3;
    return i;
}

/* The whitespace run from i (t->f[i] & F_WS): its end in *end, the last \r or \n in it in *nl
 * (-1 when none). */
static inline void
space_run(const Text *t, Py_ssize_t i, Py_ssize_t *end, Py_ssize_t *nl, uint8_t ws)
{
    Py_ssize_t last = -1, n = t->n;
    const uint8_t *f = t->f;
    while (i < n && (f[i] & ws)) {
        if (IS_NL(CH(t, i)))
            last = i;
        i++;
    }
    *end = i;
    *nl = last;
}

/* \s++$|\s*[\r\n]|\s+(?!\S)|\s at i (a whitespace character): cl100k_base's */
static Py_ssize_t
spaces_end_first(const Text *t, Py_ssize_t i)
{
    Py_ssize_t end, nl;
    space_run(t, i, &end, &nl, F_WS);
    if (end == t->n)
        return end; /* \s++$ */
    if (nl >= 0)
        return nl + 1; /* \s*[\r\n]: \s* backs off to the last line break */
    if (end - 1 > i)
        return end - 1; /* \s+(?!\S): backs off one before the non-space */
    return i + 1;       /* \s */
}

/* \s*[\r\n]+|\s+(?!\S)|\s+ at i (a whitespace character, bit ws of the flags): o200k_base's,
 * Llama 3's and DeepSeek's */
static Py_ssize_t
spaces_newline_first_with(const Text *t, Py_ssize_t i, uint8_t ws)
{
    Py_ssize_t end, nl;
    space_run(t, i, &end, &nl, ws);
    if (nl >= 0)
        return nl + 1; /* \s*[\r\n]+: \s* backs off to the last line break, [\r\n]+ takes it */
    if (end == t->n)
        return end; /* \s+(?!\S) at the end of the text */
    if (end - 1 > i)
        return end - 1; /* \s+(?!\S): backs off one before the non-space */
    return end;         /* \s+ (one character here) */
}

static Py_ssize_t
spaces_newline_first(const Text *t, Py_ssize_t i)
{
    return spaces_newline_first_with(t, i, F_WS);
}

/* '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
 * and Llama 3's (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (its greedy quantifiers never give back here: what follows each cannot match what it took; only
 * the whitespace alternatives differ) */
static inline Py_ssize_t
match_cl100k_like(const Text *t, Py_ssize_t i, int llama3, Py_ssize_t digits)
{
    Py_ssize_t n = t->n, j, e;
    const uint8_t *f = t->f;
    e = contraction(t, i);
    if (e > i)
        return e;
    j = IS_P(t, i) ? i + 1 : i;
    if (j < n && (f[j] & F_L))
        return run(t, j, F_L);
    if (f[i] & F_N) {
        for (j = i + 1; j < n && j < i + digits && (f[j] & F_N); j++)
            ;
        return j;
    }
    j = CH(t, i) == ' ' ? i + 1 : i;
    if (j < n && IS_Q(t, j)) {
        while (j < n && IS_Q(t, j))
            j++;
        while (j < n && IS_NL(CH(t, j)))
            j++;
        return j;
    }
    if (!(f[i] & F_WS))
        return i;
    return llama3 ? spaces_newline_first(t, i) : spaces_end_first(t, i);
}

static Py_ssize_t
match_cl100k(const Text *t, Py_ssize_t i)
{
    return match_cl100k_like(t, i, 0, 3);
}

static Py_ssize_t
match_llama3(const Text *t, Py_ssize_t i)
{
    return match_cl100k_like(t, i, 1, 3);
}

static Py_ssize_t
match_qwen(const Text *t, Py_ssize_t i)
{
    return match_cl100k_like(t, i, 1, 1);
}

/* o200k_base's pattern (see scanner.py for it written out) */
static Py_ssize_t
match_o200k(const Text *t, Py_ssize_t i)
{
    Py_ssize_t n = t->n, j, k, m, e, p;
    const uint8_t *f = t->f;
    int optional = IS_P(t, i);
    /* [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:...)? :
     * the optional first character taken, then not; the upper run greedy, giving back until a
     * lower-class character starts the lower run */
    for (p = optional; p >= 0; p--) {
        j = i + p;
        k = run(t, j, F_UP);
        if (k < n && (f[k] & F_LO))
            m = k;
        else
            for (m = k - 1; m >= j && !(f[m] & F_LO); m--)
                ;
        if (m >= j) {
            e = run(t, m, F_LO);
            Py_ssize_t c = contraction(t, e);
            return c > e ? c : e;
        }
    }
    /* [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:...)? */
    for (p = optional; p >= 0; p--) {
        j = i + p;
        if (j < n && (f[j] & F_UP)) {
            e = run(t, run(t, j, F_UP), F_LO);
            Py_ssize_t c = contraction(t, e);
            return c > e ? c : e;
        }
    }
    /* \p{N}{1,3} */
    if (f[i] & F_N) {
        for (j = i + 1; j < n && j < i + 3 && (f[j] & F_N); j++)
            ;
        return j;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n/]* */
    j = CH(t, i) == ' ' ? i + 1 : i;
    if (j < n && IS_Q(t, j)) {
        while (j < n && IS_Q(t, j))
            j++;
        while (j < n) {
            Py_UCS4 c = CH(t, j);
            if (!IS_NL(c) && c != '/')
                break;
            j++;
        }
        return j;
    }
    if (!(f[i] & F_WS))
        return i;
    return spaces_newline_first(t, i);
}

/* '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s */
static Py_ssize_t
match_gpt2(const Text *t, Py_ssize_t i)
{
    Py_ssize_t n = t->n, j;
    const uint8_t *f = t->f;
    j = contraction_exact(t, i);
    if (j > i)
        return j;
    j = CH(t, i) == ' ' ? i + 1 : i;
    if (j < n) {
        if (f[j] & F_L)
            return run(t, j, F_L);
        if (f[j] & F_N)
            return run(t, j, F_N);
        if (IS_Q(t, j)) {
            while (j < n && IS_Q(t, j))
                j++;
            return j;
        }
    }
    if (!(f[i] & F_WS))
        return i;
    Py_ssize_t end = run(t, i, F_WS);
    if (end == n)
        return n;
    if (end - 1 > i)
        return end - 1;
    return i + 1;
}

/* DeepSeek V3's first Split: \p{N}{1,3} */
static Py_ssize_t
match_ds_digits(const Text *t, Py_ssize_t i)
{
    Py_ssize_t j = i;
    while (j < t->n && j < i + 3 && (t->f[j] & DS_N))
        j++;
    return j;
}

static inline int
is_ds_cjk(Py_UCS4 c)
{
    return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x309F) || (c >= 0x30A0 && c <= 0x30FF);
}

/* its second: [一-龥぀-ゟ゠-ヿ]+ (U+4E00-U+9FA5, U+3040-U+309F, U+30A0-U+30FF) */
static Py_ssize_t
match_ds_cjk(const Text *t, Py_ssize_t i)
{
    Py_ssize_t j = i;
    while (j < t->n && is_ds_cjk(CH(t, j)))
        j++;
    return j;
}

static inline int
is_ascii_punct(Py_UCS4 c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static inline int
is_ascii_letter(Py_UCS4 c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* its third:
 *   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
 *   |[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
 *   | ?[\p{P}\p{S}]+[\r\n]*
 *   |\s*[\r\n]+|\s+(?!\S)|\s+
 * (the optional first characters back off when what follows fails; the runs never give back:
 * what follows each cannot match what it took) */
static Py_ssize_t
match_ds_main(const Text *t, Py_ssize_t i)
{
    Py_ssize_t n = t->n, j;
    const uint8_t *f = t->f;
    Py_UCS4 c = CH(t, i);
    if (is_ascii_punct(c) && i + 1 < n && is_ascii_letter(CH(t, i + 1))) {
        for (j = i + 2; j < n && is_ascii_letter(CH(t, j)); j++)
            ;
        return j;
    }
    if (!IS_NL(c) && !(f[i] & (DS_L | DS_PS)) && i + 1 < n && (f[i + 1] & (DS_L | DS_M)))
        return run(t, i + 1, DS_L | DS_M);
    if (f[i] & (DS_L | DS_M))
        return run(t, i, DS_L | DS_M);
    j = c == ' ' ? i + 1 : i;
    if (j < n && (f[j] & DS_PS)) {
        j = run(t, j, DS_PS);
        while (j < n && IS_NL(CH(t, j)))
            j++;
        return j;
    }
    if (!(f[i] & DS_WS))
        return i;
    return spaces_newline_first_with(t, i, DS_WS);
}

static PyObject *
split(PyObject *self, PyObject *args)
{
    PyObject *obj, *text;
    int kind;
    if (!PyArg_ParseTuple(args, "OiU", &obj, &kind, &text) || !ready(text))
        return NULL;
    Table *table = get_table(obj);
    if (table == NULL)
        return NULL;
    Py_ssize_t (*match)(const Text *, Py_ssize_t);
    switch (kind) {
    case KIND_CL100K: match = match_cl100k; break;
    case KIND_O200K: match = match_o200k; break;
    case KIND_GPT2: match = match_gpt2; break;
    case KIND_LLAMA3: match = match_llama3; break;
    case KIND_QWEN: match = match_qwen; break;
    case KIND_DS_DIGITS: match = match_ds_digits; break;
    case KIND_DS_CJK: match = match_ds_cjk; break;
    case KIND_DS_MAIN: match = match_ds_main; break;
    default:
        PyErr_Format(PyExc_ValueError, "split: unknown pattern kind %d", kind);
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    uint8_t stack[1024];
    uint8_t *flags = n <= (Py_ssize_t)sizeof stack ? stack : PyMem_Malloc((size_t)n);
    if (flags == NULL)
        return PyErr_NoMemory();
    if (classify(table, text, flags) < 0) {
        if (flags != stack)
            PyMem_Free(flags);
        Py_RETURN_NONE;
    }
    Text t = {flags, PyUnicode_KIND(text), PyUnicode_DATA(text), n};
    PyObject *out = PyList_New(0);
    /* the DeepSeek kinds keep the text between matches as pieces (start of the pending gap, -1:
     * none); the others' matches tile the text (findall would drop an unmatched character) */
    int gaps = kind >= KIND_DS_DIGITS;
    Py_ssize_t i = 0, gap = -1;
    while (out != NULL && i <= n) {
        Py_ssize_t e = i < n ? match(&t, i) : i;
        if (e == i && i < n) { /* no match here: findall looks on from the next character */
            if (gaps && gap < 0)
                gap = i;
            i++;
            continue;
        }
        if (gap >= 0) {
            PyObject *piece = PyUnicode_Substring(text, gap, i);
            if (piece == NULL || PyList_Append(out, piece) < 0)
                Py_CLEAR(out);
            Py_XDECREF(piece);
            gap = -1;
            if (out == NULL)
                break;
        }
        if (i == n)
            break;
        PyObject *chunk = PyUnicode_Substring(text, i, e);
        if (chunk == NULL || PyList_Append(out, chunk) < 0) {
            Py_XDECREF(chunk);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(chunk);
        i = e;
    }
    if (flags != stack)
        PyMem_Free(flags);
    return out;
}

/* text cut after each line break followed by a character that is neither whitespace (str.isspace,
 * as the stdlib re's \s) nor '/': ChunkPattern.segments of a line-safe pattern, whose regex is
 * \n(?=[^\s/]) */
static PyObject *
segments(PyObject *self, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text) || !ready(text))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0;
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i + 1 < n; i++) {
        if (PyUnicode_READ(kind, data, i) != '\n')
            continue;
        Py_UCS4 next = PyUnicode_READ(kind, data, i + 1);
        if (next == '/' || Py_UNICODE_ISSPACE(next))
            continue;
        PyObject *part = PyUnicode_Substring(text, start, i + 1);
        if (part == NULL || PyList_Append(out, part) < 0)
            Py_CLEAR(out);
        Py_XDECREF(part);
        start = i + 1;
    }
    if (out != NULL) {
        PyObject *part = start == 0 ? (Py_INCREF(text), text) : PyUnicode_Substring(text, start, n);
        if (part == NULL || PyList_Append(out, part) < 0)
            Py_CLEAR(out);
        Py_XDECREF(part);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"new_table", new_table, METH_NOARGS, "new_table() -> an empty table of character classes"},
    {"fill", fill, METH_VARARGS, "fill(table, block, flags): the 256 flags of code points block*256 .. block*256+255"},
    {"missing", missing, METH_VARARGS, "missing(table, text) -> the blocks of text's code points not filled yet"},
    {"split", split, METH_VARARGS, "split(table, kind, text) -> the chunks of text, or None when a block is not filled"},
    {"segments", segments, METH_VARARGS, "segments(text) -> text cut after each line break before a non-space other than '/'"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tokscope_split",
    "tokscope's compiled pre-tokenizer split of the tiktoken-family patterns (optional; the regex path is the fallback)",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__tokscope_split(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "SPLIT_ABI", SPLIT_ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "KIND_CL100K", KIND_CL100K) < 0
        || PyModule_AddIntConstant(m, "KIND_O200K", KIND_O200K) < 0
        || PyModule_AddIntConstant(m, "KIND_GPT2", KIND_GPT2) < 0
        || PyModule_AddIntConstant(m, "KIND_LLAMA3", KIND_LLAMA3) < 0
        || PyModule_AddIntConstant(m, "KIND_QWEN", KIND_QWEN) < 0
        || PyModule_AddIntConstant(m, "DS_ABI", DS_ABI_VERSION) < 0
        || PyModule_AddIntConstant(m, "KIND_DS_DIGITS", KIND_DS_DIGITS) < 0
        || PyModule_AddIntConstant(m, "KIND_DS_CJK", KIND_DS_CJK) < 0
        || PyModule_AddIntConstant(m, "KIND_DS_MAIN", KIND_DS_MAIN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
