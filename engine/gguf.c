/* engine/gguf.c: GGUF v2/v3 reader. Maps the file read-only (or wraps a
 * caller's buffer), validates every header field, key/value, string, array and
 * tensor info at open, and indexes keys and tensor names for lookups by name.
 * Does not read tensor data (beyond bounds), interpret keys, or write files. */
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "quant.h"

enum {
    GGUF_DEFAULT_ALIGNMENT = 32,
    GGUF_MAX_NAME = 64,         /* ggml's GGML_MAX_NAME, including the NUL */
    GGUF_MAX_KEY = 65535,       /* the spec's bound on key length */
    GGUF_HEADER_BYTES = 24,     /* magic, version, tensor_count, kv_count */
    GGUF_MIN_KV_BYTES = 14,     /* u64 len + 1-byte key + u32 type + 1-byte value */
    GGUF_MIN_TENSOR_BYTES = 33, /* u64 len + 1 byte + u32 n_dims + u64 ne + u32 type + u64 off */
};

typedef struct gguf_kv {
    const char *key; /* NUL-terminated, in g->names */
    size_t key_off;  /* offset into the names arena until it is final */
    uint32_t type;
    uint32_t elem_type; /* arrays */
    uint64_t count;     /* arrays: element count */
    size_t val;         /* file offset of the value (arrays: of the first element) */
} gguf_kv;

typedef struct gguf_name_ix {
    const char *name;
    int64_t i;
} gguf_name_ix;

struct eng_gguf {
    const uint8_t *base;
    size_t size;
    int mapped;
    char *path;
    uint32_t version;
    int64_t n_kv, n_tensors;
    gguf_kv *kv;
    eng_gguf_tensor *tensors;
    size_t *tensor_name_off;
    gguf_name_ix *kv_ix, *tensor_ix; /* sorted by name */
    char *names;                     /* arena of NUL-terminated keys and tensor names */
    size_t names_len, names_cap;
    size_t alignment;
    size_t data_start;
};

/* --- cursor over the buffer -------------------------------------------- */

typedef struct cursor {
    const uint8_t *p;
    size_t size, pos;
} cursor;

/* n (1..8) little-endian bytes at p. */
static uint64_t rd_le(const uint8_t *p, int n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    if (n == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
#endif
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int cur_u32(cursor *c, uint32_t *v) {
    if (c->size - c->pos < 4) return 0;
    *v = (uint32_t)rd_le(c->p + c->pos, 4);
    c->pos += 4;
    return 1;
}

static int cur_u64(cursor *c, uint64_t *v) {
    if (c->size - c->pos < 8) return 0;
    *v = rd_le(c->p + c->pos, 8);
    c->pos += 8;
    return 1;
}

/* A string: its bytes start at *off and are *len long; 0 if they run past the end. */
static int cur_str(cursor *c, size_t *off, uint64_t *len) {
    if (!cur_u64(c, len)) return 0;
    if (*len > c->size - c->pos) return 0;
    *off = c->pos;
    c->pos += (size_t)*len;
    return 1;
}

static size_t vtype_size(uint32_t t) {
    switch (t) {
    case ENG_GGUF_U8:
    case ENG_GGUF_I8:
    case ENG_GGUF_BOOL: return 1;
    case ENG_GGUF_U16:
    case ENG_GGUF_I16: return 2;
    case ENG_GGUF_U32:
    case ENG_GGUF_I32:
    case ENG_GGUF_F32: return 4;
    case ENG_GGUF_U64:
    case ENG_GGUF_I64:
    case ENG_GGUF_F64: return 8;
    default: return 0;
    }
}

static const char *vtype_name(uint32_t t) {
    static const char *const names[ENG_GGUF_VTYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
    };
    return t < ENG_GGUF_VTYPE_COUNT ? names[t] : "unknown";
}

/* --- names arena -------------------------------------------------------- */

static int names_add(eng_gguf *g, const uint8_t *s, size_t len, size_t *off) {
    if (g->names_cap - g->names_len < len + 1) {
        size_t cap = g->names_cap ? g->names_cap : 4096;
        while (cap - g->names_len < len + 1) cap *= 2;
        char *n = realloc(g->names, cap);
        if (!n) return 0;
        g->names = n;
        g->names_cap = cap;
    }
    memcpy(g->names + g->names_len, s, len);
    g->names[g->names_len + len] = '\0';
    *off = g->names_len;
    g->names_len += len + 1;
    return 1;
}

static int cmp_name_ix(const void *a, const void *b) {
    return strcmp(((const gguf_name_ix *)a)->name, ((const gguf_name_ix *)b)->name);
}

/* --- parsing -------------------------------------------------------------- */

/* Sets err to "model file 'PATH': MESSAGE" and returns code. */
__attribute__((format(printf, 4, 5))) static int gfail(const eng_gguf *g, util_err *err, int code,
                                                       const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return util_err_set(err, code, "model file '%s': %s", g->path, msg);
}

static int parse_header(eng_gguf *g, cursor *c, util_err *err) {
    if (c->size < 4)
        return gfail(g, err, UTIL_EFORMAT, "truncated: %zu bytes, a gguf file starts with 24", c->size);
    if (memcmp(c->p, "GGUF", 4) != 0) {
        char m[20];
        int printable = 1;
        for (int i = 0; i < 4; i++) printable &= c->p[i] >= 0x20 && c->p[i] < 0x7F;
        if (printable)
            snprintf(m, sizeof m, "'%c%c%c%c'", c->p[0], c->p[1], c->p[2], c->p[3]);
        else
            snprintf(m, sizeof m, "%02x %02x %02x %02x", c->p[0], c->p[1], c->p[2], c->p[3]);
        return gfail(g, err, UTIL_EFORMAT, "not a gguf file (magic %s, expected 'GGUF')", m);
    }
    if (c->size < GGUF_HEADER_BYTES)
        return gfail(g, err, UTIL_EFORMAT, "truncated header: %zu bytes, need %d", c->size,
                     GGUF_HEADER_BYTES);
    uint64_t nt, nkv;
    c->pos = 4;
    cur_u32(c, &g->version);
    cur_u64(c, &nt);
    cur_u64(c, &nkv);
    if (g->version != 2 && g->version != 3) {
        if (g->version == 1)
            return gfail(g, err, UTIL_EUNSUPPORTED, "gguf version 1 is not supported (only 2 and 3)");
        if ((g->version & 0xFFFF) == 0)
            return gfail(g, err, UTIL_EUNSUPPORTED,
                         "gguf version %" PRIu32 " looks byte-swapped (a big-endian file?)", g->version);
        return gfail(g, err, UTIL_EUNSUPPORTED, "gguf version %" PRIu32 " is not supported (only 2 and 3)",
                     g->version);
    }
    size_t rest = c->size - c->pos;
    if (nkv > rest / GGUF_MIN_KV_BYTES)
        return gfail(g, err, UTIL_EFORMAT, "kv count %" PRIu64 " cannot fit in the remaining %zu bytes", nkv,
                     rest);
    if (nt > rest / GGUF_MIN_TENSOR_BYTES)
        return gfail(g, err, UTIL_EFORMAT, "tensor count %" PRIu64 " cannot fit in the remaining %zu bytes",
                     nt, rest);
    g->n_kv = (int64_t)nkv;
    g->n_tensors = (int64_t)nt;
    return 0;
}

/* Skips over one value of type t (not an array), checking it lies in the file. */
static int skip_value(cursor *c, uint32_t t) {
    if (t == ENG_GGUF_STRING) {
        size_t off;
        uint64_t len;
        return cur_str(c, &off, &len);
    }
    size_t n = vtype_size(t);
    if (!n || c->size - c->pos < n) return 0;
    c->pos += n;
    return 1;
}

static int parse_kv(eng_gguf *g, cursor *c, int64_t i, util_err *err) {
    gguf_kv *kv = &g->kv[i];
    size_t koff, at = c->pos;
    uint64_t klen;
    if (!cur_str(c, &koff, &klen))
        return gfail(g, err, UTIL_EFORMAT, "key %" PRId64 " runs past end of file (at offset %zu)", i, at);
    if (klen == 0) return gfail(g, err, UTIL_EFORMAT, "key %" PRId64 " is empty", i);
    if (klen > GGUF_MAX_KEY)
        return gfail(g, err, UTIL_EFORMAT, "key %" PRId64 " is %" PRIu64 " bytes long (at most %d)", i, klen,
                     GGUF_MAX_KEY);
    if (memchr(c->p + koff, 0, (size_t)klen))
        return gfail(g, err, UTIL_EFORMAT, "key %" PRId64 " contains a NUL byte", i);
    if (!names_add(g, c->p + koff, (size_t)klen, &kv->key_off))
        return gfail(g, err, UTIL_ENOMEM, "out of memory reading key %" PRId64, i);
    const char *key = g->names + kv->key_off;
    if (!cur_u32(c, &kv->type))
        return gfail(g, err, UTIL_EFORMAT, "key '%s': type runs past end of file", key);
    if (kv->type >= ENG_GGUF_VTYPE_COUNT)
        return gfail(g, err, UTIL_EFORMAT, "key '%s' has unknown value type %" PRIu32, key, kv->type);
    if (kv->type != ENG_GGUF_ARRAY) {
        kv->val = c->pos;
        if (!skip_value(c, kv->type))
            return gfail(g, err, UTIL_EFORMAT, "key '%s': %s value runs past end of file", key,
                         vtype_name(kv->type));
        return 0;
    }
    if (!cur_u32(c, &kv->elem_type) || !cur_u64(c, &kv->count))
        return gfail(g, err, UTIL_EFORMAT, "key '%s': array header runs past end of file", key);
    if (kv->elem_type == ENG_GGUF_ARRAY)
        return gfail(g, err, UTIL_EUNSUPPORTED, "key '%s' is an array of arrays (not supported)", key);
    if (kv->elem_type >= ENG_GGUF_VTYPE_COUNT)
        return gfail(g, err, UTIL_EFORMAT, "key '%s' has unknown array element type %" PRIu32, key,
                     kv->elem_type);
    kv->val = c->pos;
    size_t rest = c->size - c->pos;
    size_t esz = kv->elem_type == ENG_GGUF_STRING ? 8 : vtype_size(kv->elem_type);
    if (kv->count > rest / esz)
        return gfail(g, err, UTIL_EFORMAT, "key '%s': array of %" PRIu64 " %s values runs past end of file",
                     key, kv->count, vtype_name(kv->elem_type));
    if (kv->elem_type != ENG_GGUF_STRING) {
        c->pos += (size_t)kv->count * esz;
        return 0;
    }
    for (uint64_t j = 0; j < kv->count; j++)
        if (!skip_value(c, ENG_GGUF_STRING))
            return gfail(g, err, UTIL_EFORMAT,
                         "key '%s': string %" PRIu64 " of %" PRIu64 " runs past end of file", key, j,
                         kv->count);
    return 0;
}

/* Checks n_dims, ne, type and size of tensor t (its name already read). */
static int check_tensor_shape(eng_gguf *g, eng_gguf_tensor *t, const char *name, uint32_t n_dims,
                              const uint64_t ne[4], util_err *err) {
    if (n_dims < 1 || n_dims > 4)
        return gfail(g, err, UTIL_EFORMAT, "tensor '%s' has %" PRIu32 " dimensions (1 to 4 allowed)", name,
                     n_dims);
    t->n_dims = (int)n_dims;
    uint64_t nel = 1;
    int zero = 0;
    for (int d = 0; d < 4; d++) {
        if (ne[d] > (uint64_t)INT64_MAX)
            return gfail(g, err, UTIL_EFORMAT, "tensor '%s' dimension %d is negative", name, d);
        t->ne[d] = (int64_t)ne[d];
        zero |= ne[d] == 0;
    }
    for (int d = 0; d < 4 && !zero; d++) {
        if (nel > (uint64_t)INT64_MAX / ne[d])
            return gfail(g, err, UTIL_EFORMAT,
                         "tensor '%s' has too many elements (%" PRIu64 " x %" PRIu64 " x %" PRIu64
                         " x %" PRIu64 ")",
                         name, ne[0], ne[1], ne[2], ne[3]);
        nel *= ne[d];
    }
    const eng_type_traits *tr = eng_type_get(t->type);
    if (!tr) return gfail(g, err, UTIL_EFORMAT, "tensor '%s' has unknown type %" PRIu32, name, t->type);
    if (ne[0] % (uint64_t)tr->blck)
        return gfail(g, err, UTIL_EFORMAT,
                     "tensor '%s' of type %s has rows of %" PRIu64
                     " values, not a multiple of its block size %d",
                     name, tr->name, ne[0], tr->blck);
    /* row bytes fit: ne0/blck * bytes <= nel * bytes is checked below */
    uint64_t blocks = nel / (uint64_t)tr->blck;
    if (blocks > SIZE_MAX / tr->bytes || blocks > UINT64_MAX / tr->bytes)
        return gfail(g, err, UTIL_EFORMAT, "tensor '%s' is too large", name);
    t->nbytes = (size_t)(blocks * tr->bytes);
    t->row_bytes = (size_t)(ne[0] / (uint64_t)tr->blck) * tr->bytes;
    return 0;
}

static int parse_tensor(eng_gguf *g, cursor *c, int64_t i, util_err *err) {
    eng_gguf_tensor *t = &g->tensors[i];
    size_t noff;
    uint64_t nlen;
    if (!cur_str(c, &noff, &nlen))
        return gfail(g, err, UTIL_EFORMAT, "tensor %" PRId64 ": name runs past end of file", i);
    if (nlen == 0) return gfail(g, err, UTIL_EFORMAT, "tensor %" PRId64 " has an empty name", i);
    if (nlen >= GGUF_MAX_NAME)
        return gfail(g, err, UTIL_EFORMAT, "tensor %" PRId64 " name is %" PRIu64 " bytes long (at most %d)",
                     i, nlen, GGUF_MAX_NAME - 1);
    if (memchr(c->p + noff, 0, (size_t)nlen))
        return gfail(g, err, UTIL_EFORMAT, "tensor %" PRId64 " name contains a NUL byte", i);
    char name[GGUF_MAX_NAME];
    memcpy(name, c->p + noff, (size_t)nlen);
    name[nlen] = '\0';
    if (!names_add(g, c->p + noff, (size_t)nlen, &g->tensor_name_off[i]))
        return gfail(g, err, UTIL_ENOMEM, "out of memory reading tensor '%s'", name);
    uint32_t n_dims;
    if (!cur_u32(c, &n_dims))
        return gfail(g, err, UTIL_EFORMAT, "tensor '%s': info runs past end of file", name);
    if (n_dims < 1 || n_dims > 4)
        return gfail(g, err, UTIL_EFORMAT, "tensor '%s' has %" PRIu32 " dimensions (1 to 4 allowed)", name,
                     n_dims);
    uint64_t ne[4] = {1, 1, 1, 1};
    for (uint32_t d = 0; d < n_dims; d++)
        if (!cur_u64(c, &ne[d]))
            return gfail(g, err, UTIL_EFORMAT, "tensor '%s': info runs past end of file", name);
    if (!cur_u32(c, &t->type) || !cur_u64(c, &t->offset))
        return gfail(g, err, UTIL_EFORMAT, "tensor '%s': info runs past end of file", name);
    return check_tensor_shape(g, t, name, n_dims, ne, err);
}

static int64_t find_ix(const gguf_name_ix *ix, int64_t n, const char *name) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ix[mid].name, name);
        if (c == 0) return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Builds a sorted index over n names; reports the first duplicate. */
static int build_index(gguf_name_ix **out, const char *const *names, int64_t n, const char **dup) {
    gguf_name_ix *ix = malloc((size_t)(n ? n : 1) * sizeof *ix);
    if (!ix) return UTIL_ENOMEM;
    for (int64_t i = 0; i < n; i++) ix[i] = (gguf_name_ix){names[i], i};
    qsort(ix, (size_t)n, sizeof *ix, cmp_name_ix);
    *out = ix;
    for (int64_t i = 1; i < n; i++)
        if (strcmp(ix[i - 1].name, ix[i].name) == 0) {
            *dup = ix[i].name;
            return UTIL_EFORMAT;
        }
    return 0;
}

static int index_names(eng_gguf *g, util_err *err) {
    int64_t n = g->n_kv > g->n_tensors ? g->n_kv : g->n_tensors;
    const char **tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) return gfail(g, err, UTIL_ENOMEM, "out of memory indexing names");
    const char *dup = NULL;
    for (int64_t i = 0; i < g->n_kv; i++) tmp[i] = g->kv[i].key = g->names + g->kv[i].key_off;
    int rc = build_index(&g->kv_ix, tmp, g->n_kv, &dup);
    if (rc == 0) {
        for (int64_t i = 0; i < g->n_tensors; i++)
            tmp[i] = g->tensors[i].name = g->names + g->tensor_name_off[i];
        rc = build_index(&g->tensor_ix, tmp, g->n_tensors, &dup);
        if (rc == UTIL_EFORMAT) rc = gfail(g, err, rc, "duplicate tensor '%s'", dup);
    } else if (rc == UTIL_EFORMAT) {
        rc = gfail(g, err, rc, "duplicate key '%s'", dup);
    }
    if (rc == UTIL_ENOMEM) rc = gfail(g, err, rc, "out of memory indexing names");
    free(tmp);
    return rc;
}

static int read_alignment(eng_gguf *g, util_err *err) {
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    int64_t ki = find_ix(g->kv_ix, g->n_kv, "general.alignment");
    if (ki < 0) return 0;
    const gguf_kv *kv = &g->kv[g->kv_ix[ki].i];
    if (kv->type != ENG_GGUF_U32)
        return gfail(g, err, UTIL_EFORMAT, "key 'general.alignment' must be u32, not %s",
                     vtype_name(kv->type));
    uint32_t a = (uint32_t)rd_le(g->base + kv->val, 4);
    if (a == 0 || (a & (a - 1)))
        return gfail(g, err, UTIL_EFORMAT, "key 'general.alignment' is %" PRIu32 ", not a power of 2", a);
    g->alignment = a;
    return 0;
}

static int place_tensors(eng_gguf *g, size_t end_of_infos, util_err *err) {
    size_t a = g->alignment;
    size_t pad = (a - end_of_infos % a) % a;
    if (pad > g->size - end_of_infos) {
        if (g->n_tensors) return gfail(g, err, UTIL_EFORMAT, "data section starts past end of file");
        g->data_start = g->size; /* a metadata-only file need not be padded */
        return 0;
    }
    g->data_start = end_of_infos + pad;
    size_t avail = g->size - g->data_start;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        eng_gguf_tensor *t = &g->tensors[i];
        if (t->offset % a)
            return gfail(g, err, UTIL_EFORMAT,
                         "tensor '%s' offset %" PRIu64 " is not a multiple of the alignment %zu", t->name,
                         t->offset, a);
        if (t->offset > avail || t->nbytes > avail - t->offset)
            return gfail(g, err, UTIL_EFORMAT,
                         "tensor '%s' ends past end of file (offset %" PRIu64 ", %zu bytes, "
                         "data section %zu bytes)",
                         t->name, t->offset, t->nbytes, avail);
        t->data = g->base + g->data_start + t->offset;
    }
    return 0;
}

static int parse(eng_gguf *g, util_err *err) {
    cursor c = {g->base, g->size, 0};
    int rc = parse_header(g, &c, err);
    if (rc) return rc;
    g->kv = calloc((size_t)(g->n_kv ? g->n_kv : 1), sizeof *g->kv);
    g->tensors = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *g->tensors);
    g->tensor_name_off = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(size_t));
    if (!g->kv || !g->tensors || !g->tensor_name_off)
        return gfail(g, err, UTIL_ENOMEM, "out of memory for %" PRId64 " keys and %" PRId64 " tensors",
                     g->n_kv, g->n_tensors);
    for (int64_t i = 0; i < g->n_kv; i++)
        if ((rc = parse_kv(g, &c, i, err))) return rc;
    if ((uint64_t)g->n_tensors > (c.size - c.pos) / GGUF_MIN_TENSOR_BYTES)
        return gfail(g, err, UTIL_EFORMAT, "tensor count %" PRId64 " cannot fit in the remaining %zu bytes",
                     g->n_tensors, c.size - c.pos);
    for (int64_t i = 0; i < g->n_tensors; i++)
        if ((rc = parse_tensor(g, &c, i, err))) return rc;
    if ((rc = index_names(g, err))) return rc;
    if ((rc = read_alignment(g, err))) return rc;
    return place_tensors(g, c.pos, err);
}

/* --- open / free ---------------------------------------------------------- */

static int open_common(eng_gguf **out, eng_gguf *g, util_err *err) {
    int rc = parse(g, err);
    if (rc) {
        eng_gguf_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

static eng_gguf *gguf_alloc(const char *label) {
    eng_gguf *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    size_t n = strlen(label);
    g->path = malloc(n + 1);
    if (!g->path) {
        free(g);
        return NULL;
    }
    memcpy(g->path, label, n + 1);
    return g;
}

int eng_gguf_open_mem(eng_gguf **out, const void *buf, size_t len, const char *label, util_err *err) {
    *out = NULL;
    if (!label) label = "<memory>";
    eng_gguf *g = gguf_alloc(label);
    if (!g) return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", label);
    static const uint8_t empty[1] = {0};
    g->base = buf ? buf : empty;
    g->size = buf ? len : 0;
    return open_common(out, g, err);
}

int eng_gguf_open(eng_gguf **out, const char *path, util_err *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return util_err_set(err, UTIL_EIO, "model file '%s': cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return util_err_set(err, UTIL_EIO, "model file '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': %s", path,
                            st.st_size == 0 ? "empty file" : "not a regular file");
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return util_err_set(err, UTIL_EIO, "model file '%s': too large to map", path);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return util_err_set(err, UTIL_EIO, "model file '%s': cannot map: %s", path, strerror(e));
    eng_gguf *g = gguf_alloc(path);
    if (!g) {
        munmap(m, (size_t)st.st_size);
        return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", path);
    }
    g->base = m;
    g->size = (size_t)st.st_size;
    g->mapped = 1;
    return open_common(out, g, err);
}

void eng_gguf_free(eng_gguf *g) {
    if (!g) return;
    if (g->mapped) munmap((void *)g->base, g->size);
    free(g->kv);
    free(g->tensors);
    free(g->tensor_name_off);
    free(g->kv_ix);
    free(g->tensor_ix);
    free(g->names);
    free(g->path);
    free(g);
}

uint32_t eng_gguf_version(const eng_gguf *g) { return g->version; }
const char *eng_gguf_path(const eng_gguf *g) { return g->path; }
size_t eng_gguf_size(const eng_gguf *g) { return g->size; }
size_t eng_gguf_alignment(const eng_gguf *g) { return g->alignment; }
size_t eng_gguf_data_offset(const eng_gguf *g) { return g->data_start; }

/* A 64-bit hash of the file size and every byte before the tensor data (header,
 * metadata, tensor table), 8 bytes per step; computed on each call (~0.2 ms per
 * MB of metadata). Not cryptographic: it tells files apart, it does not
 * authenticate them. */
uint64_t eng_gguf_identity(const eng_gguf *g) {
    const uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xBF58476D1CE4E5B9ull;
    uint64_t h = (uint64_t)g->size * k1 ^ 0x63616368657431ull; /* "cachet1" */
    size_t n = g->data_start, i = 0;
    for (; i + 8 <= n; i += 8) {
        h ^= rd_le(g->base + i, 8) * k2;
        h = (h << 31 | h >> 33) * k1;
    }
    if (i < n) {
        h ^= (rd_le(g->base + i, (int)(n - i)) | (uint64_t)(n - i) << 56) * k2;
        h = (h << 31 | h >> 33) * k1;
    }
    h ^= h >> 30;
    h *= k2;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    return h ^ h >> 31;
}

/* --- metadata ------------------------------------------------------------- */

int64_t eng_gguf_kv_count(const eng_gguf *g) { return g->n_kv; }

const char *eng_gguf_kv_key(const eng_gguf *g, int64_t i) {
    return i >= 0 && i < g->n_kv ? g->kv[i].key : NULL;
}

eng_gguf_vtype eng_gguf_kv_type(const eng_gguf *g, int64_t i) {
    return i >= 0 && i < g->n_kv ? (eng_gguf_vtype)g->kv[i].type : ENG_GGUF_VTYPE_COUNT;
}

int64_t eng_gguf_find_key(const eng_gguf *g, const char *key) {
    int64_t k = find_ix(g->kv_ix, g->n_kv, key);
    return k < 0 ? -1 : g->kv_ix[k].i;
}

static const gguf_kv *kv_get(const eng_gguf *g, const char *key) {
    int64_t i = eng_gguf_find_key(g, key);
    return i < 0 ? NULL : &g->kv[i];
}

/* A scalar of integer type t at p, as a signed value with *neg telling whether
 * it is negative, or 0 if t is not an integer type. */
static int read_int(const uint8_t *p, uint32_t t, uint64_t *mag, int *neg) {
    uint64_t u;
    int64_t s;
    *neg = 0;
    switch (t) {
    case ENG_GGUF_U8: *mag = p[0]; return 1;
    case ENG_GGUF_U16: *mag = rd_le(p, 2); return 1;
    case ENG_GGUF_U32: *mag = rd_le(p, 4); return 1;
    case ENG_GGUF_U64: *mag = rd_le(p, 8); return 1;
    case ENG_GGUF_I8: s = (int8_t)p[0]; break;
    case ENG_GGUF_I16: s = (int16_t)rd_le(p, 2); break;
    case ENG_GGUF_I32: s = (int32_t)rd_le(p, 4); break;
    case ENG_GGUF_I64:
        u = rd_le(p, 8);
        memcpy(&s, &u, 8);
        break;
    default: return 0;
    }
    *neg = s < 0;
    *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 1;
}

static int is_int_type(uint32_t t) { return t <= ENG_GGUF_I32 || t == ENG_GGUF_U64 || t == ENG_GGUF_I64; }

static int is_num_type(uint32_t t) { return is_int_type(t) || t == ENG_GGUF_F32 || t == ENG_GGUF_F64; }

static int read_float(const uint8_t *p, uint32_t t, double *out) {
    uint64_t mag;
    int neg;
    if (t == ENG_GGUF_F32) {
        uint32_t u = (uint32_t)rd_le(p, 4);
        float f;
        memcpy(&f, &u, 4);
        *out = f;
        return 1;
    }
    if (t == ENG_GGUF_F64) {
        uint64_t u = rd_le(p, 8);
        memcpy(out, &u, 8);
        return 1;
    }
    if (!read_int(p, t, &mag, &neg)) return 0;
    *out = neg ? -(double)mag : (double)mag;
    return 1;
}

static int wrong_type(const eng_gguf *g, const char *key, uint32_t t, const char *want, util_err *err) {
    return gfail(g, err, UTIL_EFORMAT, "key '%s' is %s, expected %s", key, vtype_name(t), want);
}

/* An integer-typed key whose value lies in [-max_neg, max_pos]; anything else
 * (another type, a value that does not fit) is UTIL_EFORMAT. */
static int get_int(const eng_gguf *g, const char *key, uint64_t max_neg, uint64_t max_pos, uint64_t *mag,
                   int *neg, util_err *err) {
    const gguf_kv *kv = kv_get(g, key);
    if (!kv) return UTIL_ENOTFOUND;
    if (!read_int(g->base + kv->val, kv->type, mag, neg))
        return wrong_type(g, key, kv->type, "an integer", err);
    if (*mag > (*neg ? max_neg : max_pos))
        return gfail(g, err, UTIL_EFORMAT, "key '%s' value %s%" PRIu64 " is out of range", key,
                     *neg ? "-" : "", *mag);
    return 0;
}

int eng_gguf_get_u32(const eng_gguf *g, const char *key, uint32_t *out, util_err *err) {
    uint64_t mag;
    int neg;
    int rc = get_int(g, key, 0, UINT32_MAX, &mag, &neg, err);
    if (rc == 0) *out = (uint32_t)mag;
    return rc;
}

int eng_gguf_get_i64(const eng_gguf *g, const char *key, int64_t *out, util_err *err) {
    uint64_t mag;
    int neg;
    int rc = get_int(g, key, (uint64_t)INT64_MAX + 1, INT64_MAX, &mag, &neg, err);
    if (rc == 0) *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return rc;
}

int eng_gguf_get_f32(const eng_gguf *g, const char *key, float *out, util_err *err) {
    const gguf_kv *kv = kv_get(g, key);
    double v;
    if (!kv) return UTIL_ENOTFOUND;
    if (!read_float(g->base + kv->val, kv->type, &v)) return wrong_type(g, key, kv->type, "a number", err);
    *out = (float)v;
    return 0;
}

int eng_gguf_get_bool(const eng_gguf *g, const char *key, int *out, util_err *err) {
    const gguf_kv *kv = kv_get(g, key);
    if (!kv) return UTIL_ENOTFOUND;
    if (kv->type != ENG_GGUF_BOOL) return wrong_type(g, key, kv->type, "bool", err);
    *out = g->base[kv->val] != 0;
    return 0;
}

int eng_gguf_get_str(const eng_gguf *g, const char *key, const char **out, size_t *len, util_err *err) {
    const gguf_kv *kv = kv_get(g, key);
    if (!kv) return UTIL_ENOTFOUND;
    if (kv->type != ENG_GGUF_STRING) return wrong_type(g, key, kv->type, "string", err);
    *len = (size_t)rd_le(g->base + kv->val, 8);
    *out = (const char *)g->base + kv->val + 8;
    return 0;
}

/* --- arrays ------------------------------------------------------------------ */

static const gguf_kv *arr_get(const eng_gguf *g, const char *key, int *rc, util_err *err) {
    const gguf_kv *kv = kv_get(g, key);
    *rc = 0;
    if (!kv)
        *rc = UTIL_ENOTFOUND;
    else if (kv->type != ENG_GGUF_ARRAY)
        *rc = wrong_type(g, key, kv->type, "array", err);
    return *rc ? NULL : kv;
}

int eng_gguf_get_arr(const eng_gguf *g, const char *key, eng_gguf_vtype *elem_type, uint64_t *count,
                     util_err *err) {
    int rc;
    const gguf_kv *kv = arr_get(g, key, &rc, err);
    if (!kv) return rc;
    *elem_type = (eng_gguf_vtype)kv->elem_type;
    *count = kv->count;
    return 0;
}

int eng_gguf_get_str_arr(const eng_gguf *g, const char *key, const char ***strs, uint32_t **lens,
                         uint64_t *count, util_err *err) {
    int rc;
    const gguf_kv *kv = arr_get(g, key, &rc, err);
    if (!kv) return rc;
    if (kv->elem_type != ENG_GGUF_STRING)
        return gfail(g, err, UTIL_EFORMAT, "key '%s' is an array of %s, expected strings", key,
                     vtype_name(kv->elem_type));
    size_t n = (size_t)kv->count;
    const char **s = malloc((n ? n : 1) * sizeof *s);
    uint32_t *l = malloc((n ? n : 1) * sizeof *l);
    if (!s || !l) {
        free(s);
        free(l);
        return gfail(g, err, UTIL_ENOMEM, "out of memory reading key '%s'", key);
    }
    size_t pos = kv->val;
    for (size_t i = 0; i < n; i++) {
        uint64_t len = rd_le(g->base + pos, 8); /* bounds checked at open */
        if (len > UINT32_MAX) {
            free(s);
            free(l);
            return gfail(g, err, UTIL_EFORMAT, "key '%s': string %zu is %" PRIu64 " bytes long", key, i, len);
        }
        s[i] = (const char *)g->base + pos + 8;
        l[i] = (uint32_t)len;
        pos += 8 + (size_t)len;
    }
    *strs = s;
    *lens = l;
    *count = n;
    return 0;
}

int eng_gguf_get_f32_arr(const eng_gguf *g, const char *key, float **out, uint64_t *count, util_err *err) {
    int rc;
    const gguf_kv *kv = arr_get(g, key, &rc, err);
    if (!kv) return rc;
    size_t esz = vtype_size(kv->elem_type), n = (size_t)kv->count;
    double v;
    if (!is_num_type(kv->elem_type))
        return gfail(g, err, UTIL_EFORMAT, "key '%s' is an array of %s, expected numbers", key,
                     vtype_name(kv->elem_type));
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return gfail(g, err, UTIL_ENOMEM, "out of memory reading key '%s'", key);
    for (size_t i = 0; i < n; i++) {
        read_float(g->base + kv->val + i * esz, kv->elem_type, &v);
        f[i] = (float)v;
    }
    *out = f;
    *count = n;
    return 0;
}

int eng_gguf_get_i32_arr(const eng_gguf *g, const char *key, int32_t **out, uint64_t *count, util_err *err) {
    int rc;
    const gguf_kv *kv = arr_get(g, key, &rc, err);
    if (!kv) return rc;
    size_t esz = vtype_size(kv->elem_type), n = (size_t)kv->count;
    uint64_t mag;
    int neg;
    if (!is_int_type(kv->elem_type) && kv->elem_type != ENG_GGUF_BOOL)
        return gfail(g, err, UTIL_EFORMAT, "key '%s' is an array of %s, expected integers", key,
                     vtype_name(kv->elem_type));
    int32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return gfail(g, err, UTIL_ENOMEM, "out of memory reading key '%s'", key);
    for (size_t i = 0; i < n; i++) {
        if (kv->elem_type == ENG_GGUF_BOOL) { /* flags (a sliding-window layer pattern): 0 or 1 */
            v[i] = g->base[kv->val + i] != 0;
            continue;
        }
        read_int(g->base + kv->val + i * esz, kv->elem_type, &mag, &neg);
        if (neg ? mag > (uint64_t)INT32_MAX + 1 : mag > INT32_MAX) {
            free(v);
            return gfail(g, err, UTIL_EFORMAT,
                         "key '%s': element %zu (%s%" PRIu64 ") does not fit in 32 bits", key, i,
                         neg ? "-" : "", mag);
        }
        v[i] = neg ? (int32_t)(0 - (int64_t)mag) : (int32_t)mag;
    }
    *out = v;
    *count = n;
    return 0;
}

/* --- tensors ----------------------------------------------------------------- */

int64_t eng_gguf_tensor_count(const eng_gguf *g) { return g->n_tensors; }

const eng_gguf_tensor *eng_gguf_tensor_at(const eng_gguf *g, int64_t i) {
    return i >= 0 && i < g->n_tensors ? &g->tensors[i] : NULL;
}

const eng_gguf_tensor *eng_gguf_find_tensor(const eng_gguf *g, const char *name) {
    int64_t k = find_ix(g->tensor_ix, g->n_tensors, name);
    return k < 0 ? NULL : &g->tensors[g->tensor_ix[k].i];
}
