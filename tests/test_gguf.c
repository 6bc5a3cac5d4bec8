/* tests/test_gguf.c: the GGUF reader. On the real model: known metadata and
 * tensors, and every field of tests/golden/metadata_smollm2.txt (written by the
 * gguf Python package). Robustness: truncations and seeded byte/bit flips of
 * the real file, and hand-built hostile files, each with its specific error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "helpers.h"

/* Calls every getter on every key and tensor of g, checking what it can; a
 * reader that passed validation must survive all of it. */
static int walk(const eng_gguf *g, const void *buf, size_t len) {
    util_err e;
    int bad = 0;
    for (int64_t i = 0; i < eng_gguf_kv_count(g); i++) {
        const char *k = eng_gguf_kv_key(g, i);
        bad += eng_gguf_find_key(g, k) != i;
        eng_gguf_vtype t = eng_gguf_kv_type(g, i);
        uint32_t u;
        int64_t v;
        float f;
        int b;
        const char *s;
        size_t n;
        eng_gguf_get_u32(g, k, &u, &e);
        eng_gguf_get_i64(g, k, &v, &e);
        eng_gguf_get_f32(g, k, &f, &e);
        eng_gguf_get_bool(g, k, &b, &e);
        if (eng_gguf_get_str(g, k, &s, &n, &e) == 0)
            bad += (const char *)s < (const char *)buf || (size_t)(s - (const char *)buf) + n > len;
        if (t != ENG_GGUF_ARRAY) continue;
        eng_gguf_vtype et;
        uint64_t cnt, c2;
        bad += eng_gguf_get_arr(g, k, &et, &cnt, &e) != 0;
        const char **ss;
        uint32_t *ls;
        if (eng_gguf_get_str_arr(g, k, &ss, &ls, &c2, &e) == 0) {
            bad += c2 != cnt;
            for (uint64_t j = 0; j < c2; j++) bad += (size_t)(ss[j] - (const char *)buf) + ls[j] > len;
            free(ss);
            free(ls);
        }
        float *fa;
        int32_t *ia;
        if (eng_gguf_get_f32_arr(g, k, &fa, &c2, &e) == 0) free(fa);
        if (eng_gguf_get_i32_arr(g, k, &ia, &c2, &e) == 0) free(ia);
    }
    for (int64_t i = 0; i < eng_gguf_tensor_count(g); i++) {
        const eng_gguf_tensor *t = eng_gguf_tensor_at(g, i);
        bad += eng_gguf_find_tensor(g, t->name) != t;
        bad += (const char *)t->data < (const char *)buf ||
               (size_t)((const char *)t->data - (const char *)buf) + t->nbytes > len;
        bad += t->n_dims < 1 || t->n_dims > 4 || eng_type_get(t->type) == NULL;
    }
    eng_gguf_identity(g);
    return bad;
}

/* --- the real model ---------------------------------------------------------- */

static void test_model_basics(const eng_gguf *g) {
    util_err e;
    const char *s;
    size_t n;
    uint32_t u;
    CHECK_EQ_INT(eng_gguf_version(g), 3);
    CHECK(eng_gguf_get_str(g, "general.architecture", &s, &n, &e) == 0 && n == 5 &&
          memcmp(s, "llama", 5) == 0);
    CHECK(eng_gguf_get_u32(g, "llama.block_count", &u, &e) == 0 && u == 30);
    CHECK(eng_gguf_get_u32(g, "llama.embedding_length", &u, &e) == 0 && u == 576);
    CHECK(eng_gguf_get_u32(g, "llama.attention.head_count", &u, &e) == 0 && u == 9);
    CHECK(eng_gguf_get_u32(g, "llama.attention.head_count_kv", &u, &e) == 0 && u == 3);
    float f;
    CHECK(eng_gguf_get_f32(g, "llama.rope.freq_base", &f, &e) == 0 && f == 100000.0f);
    int64_t v;
    CHECK(eng_gguf_get_i64(g, "llama.context_length", &v, &e) == 0 && v == 8192);
    int b = -1;
    CHECK(eng_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b, &e) == 0 && b == 0);
    CHECK_EQ_INT(eng_gguf_tensor_count(g), 272);
    CHECK_EQ_INT(eng_gguf_alignment(g), 32);

    /* absent keys: ENOTFOUND, err untouched */
    util_err_set(&e, 123, "sentinel");
    CHECK_EQ_INT(eng_gguf_get_u32(g, "llama.no_such_key", &u, &e), UTIL_ENOTFOUND);
    CHECK_EQ_INT(eng_gguf_get_str(g, "nope", &s, &n, &e), UTIL_ENOTFOUND);
    CHECK(e.code == 123 && strcmp(e.msg, "sentinel") == 0);
    CHECK_EQ_INT(eng_gguf_find_key(g, "nope"), -1);
    CHECK(eng_gguf_find_tensor(g, "nope") == NULL && eng_gguf_tensor_at(g, 272) == NULL);
    /* wrong types: EFORMAT, message names file and key */
    CHECK_EQ_INT(eng_gguf_get_u32(g, "general.architecture", &u, &e), UTIL_EFORMAT);
    CHECK(strstr(e.msg, "model file '") == e.msg && strstr(e.msg, "'general.architecture'"));
    CHECK_EQ_INT(eng_gguf_get_str(g, "llama.block_count", &s, &n, &e), UTIL_EFORMAT);
    CHECK_EQ_INT(eng_gguf_get_bool(g, "llama.block_count", &b, &e), UTIL_EFORMAT);

    const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "token_embd.weight");
    CHECK(t && t->type == ENG_TYPE_Q8_0 && t->n_dims == 2 && t->ne[0] == 576 && t->ne[1] == 49152 &&
          t->ne[2] == 1 && t->ne[3] == 1);
    CHECK(t && t->row_bytes == 612 && t->nbytes == (size_t)612 * 49152);
    t = eng_gguf_find_tensor(g, "blk.0.attn_q.weight");
    CHECK(t && t->type == ENG_TYPE_Q4_1 && t->ne[0] == 576 && t->ne[1] == 576);
    t = eng_gguf_find_tensor(g, "blk.29.ffn_down.weight");
    CHECK(t && t->type == ENG_TYPE_Q4_1 && t->ne[0] == 1536 && t->ne[1] == 576);
    t = eng_gguf_find_tensor(g, "output_norm.weight");
    CHECK(t && t->type == ENG_TYPE_F32 && t->n_dims == 1 && t->ne[0] == 576);
    int aligned = 1;
    for (int64_t i = 0; i < eng_gguf_tensor_count(g); i++)
        aligned &= ((uintptr_t)eng_gguf_tensor_at(g, i)->data % 32) == 0;
    CHECK_MSG(aligned, "every tensor's data is 32-byte aligned in memory");

    const char **toks;
    uint32_t *lens;
    uint64_t cnt;
    CHECK(eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &toks, &lens, &cnt, &e) == 0);
    CHECK_EQ_INT(cnt, 49152);
    if (cnt == 49152) {
        CHECK(lens[0] == 13 && memcmp(toks[0], "<|endoftext|>", 13) == 0);
        CHECK(lens[2] == 10 && memcmp(toks[2], "<|im_end|>", 10) == 0);
        free(toks);
        free(lens);
    }
    eng_gguf_vtype et;
    CHECK(eng_gguf_get_arr(g, "tokenizer.ggml.merges", &et, &cnt, &e) == 0 && et == ENG_GGUF_STRING &&
          cnt == 48900);
    int32_t *tt;
    CHECK(eng_gguf_get_i32_arr(g, "tokenizer.ggml.token_type", &tt, &cnt, &e) == 0 && cnt == 49152);
    if (cnt == 49152) {
        CHECK(tt[0] == 3 && tt[49151] == 1);
        free(tt);
    }
    float *fa;
    CHECK_EQ_INT(eng_gguf_get_f32_arr(g, "tokenizer.ggml.tokens", &fa, &cnt, &e), UTIL_EFORMAT);
}

/* Undoes the golden file's escapes in place; returns the length. */
static size_t unescape(char *s) {
    size_t o = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '\\' || !s[i + 1]) {
            s[o++] = s[i];
            continue;
        }
        char c = s[++i];
        if (c == 'n')
            s[o++] = '\n';
        else if (c == 't')
            s[o++] = '\t';
        else if (c == 'r')
            s[o++] = '\r';
        else if (c == 'x' && s[i + 1] && s[i + 2]) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            s[o++] = (char)strtol(hex, NULL, 16);
            i += 2;
        } else
            s[o++] = c;
    }
    s[o] = '\0';
    return o;
}

static int vtype_of(const char *name) {
    static const char *const names[] = {"UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                        "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};
    for (int i = 0; i < 13; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

static int split_tabs(char *line, char **f, int max) {
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* One "kv" line: idx key TYPE value | idx key ARRAY ELEM count. */
static int golden_kv(const eng_gguf *g, char **f, int nf) {
    util_err e;
    int64_t idx = strtoll(f[1], NULL, 10);
    int t = vtype_of(f[3]);
    if (!eng_gguf_kv_key(g, idx) || strcmp(eng_gguf_kv_key(g, idx), f[2]) != 0 ||
        (int)eng_gguf_kv_type(g, idx) != t)
        return 0;
    if (t == ENG_GGUF_ARRAY) {
        eng_gguf_vtype et;
        uint64_t cnt;
        return nf >= 6 && eng_gguf_get_arr(g, f[2], &et, &cnt, &e) == 0 && (int)et == vtype_of(f[4]) &&
               cnt == strtoull(f[5], NULL, 10);
    }
    if (t == ENG_GGUF_STRING) {
        const char *s;
        size_t n, want = unescape(f[4]);
        return eng_gguf_get_str(g, f[2], &s, &n, &e) == 0 && n == want && !memcmp(s, f[4], n);
    }
    if (t == ENG_GGUF_BOOL) {
        int b;
        return eng_gguf_get_bool(g, f[2], &b, &e) == 0 && b == (strcmp(f[4], "true") == 0);
    }
    if (t == ENG_GGUF_F32 || t == ENG_GGUF_F64) {
        float x;
        return eng_gguf_get_f32(g, f[2], &x, &e) == 0 && x == strtof(f[4], NULL);
    }
    int64_t v;
    return eng_gguf_get_i64(g, f[2], &v, &e) == 0 && v == strtoll(f[4], NULL, 10);
}

/* An "arr" (element) or "arrsum" line. */
static int golden_arr(const eng_gguf *g, char **f, int is_sum) {
    util_err e;
    eng_gguf_vtype et;
    uint64_t cnt;
    if (eng_gguf_get_arr(g, f[1], &et, &cnt, &e) != 0) return 0;
    int ok = 0;
    if (et == ENG_GGUF_STRING) {
        const char **s;
        uint32_t *l;
        if (eng_gguf_get_str_arr(g, f[1], &s, &l, &cnt, &e) != 0) return 0;
        if (is_sum) {
            uint64_t sum = 0;
            for (uint64_t i = 0; i < cnt; i++) sum += l[i];
            ok = sum == strtoull(f[2], NULL, 10);
        } else {
            uint64_t i = strtoull(f[2], NULL, 10);
            size_t n = unescape(f[3]);
            ok = i < cnt && l[i] == n && memcmp(s[i], f[3], n) == 0;
        }
        free(s);
        free(l);
    } else if (et == ENG_GGUF_F32 || et == ENG_GGUF_F64) {
        float *v;
        if (is_sum || eng_gguf_get_f32_arr(g, f[1], &v, &cnt, &e) != 0) return is_sum;
        uint64_t i = strtoull(f[2], NULL, 10);
        ok = i < cnt && v[i] == strtof(f[3], NULL);
        free(v);
    } else {
        int32_t *v;
        if (eng_gguf_get_i32_arr(g, f[1], &v, &cnt, &e) != 0) return 0;
        if (is_sum) {
            int64_t sum = 0;
            for (uint64_t i = 0; i < cnt; i++) sum += v[i];
            ok = sum == strtoll(f[2], NULL, 10);
        } else {
            uint64_t i = strtoull(f[2], NULL, 10);
            ok = i < cnt && v[i] == strtol(f[3], NULL, 10);
        }
        free(v);
    }
    return ok;
}

/* "tensor idx name TYPE type_id n_dims ne0,ne1.. rel_offset abs_offset n_bytes" */
static int golden_tensor(const eng_gguf *g, char **f, const uint8_t *file) {
    const eng_gguf_tensor *t = eng_gguf_tensor_at(g, strtoll(f[1], NULL, 10));
    if (!t || strcmp(t->name, f[2]) != 0 || t->type != strtoul(f[4], NULL, 10) ||
        t->n_dims != strtol(f[5], NULL, 10))
        return 0;
    char *p = f[6];
    for (int d = 0; d < t->n_dims; d++) {
        if (t->ne[d] != strtoll(p, &p, 10)) return 0;
        if (*p == ',') p++;
    }
    uint64_t abs = strtoull(f[8], NULL, 10);
    return t->offset == strtoull(f[7], NULL, 10) && eng_gguf_data_offset(g) + t->offset == abs &&
           t->nbytes == strtoull(f[9], NULL, 10) && (!file || (const uint8_t *)t->data == file + abs);
}

static void test_golden_metadata(const eng_gguf *g) {
    char path[4096], *txt;
    size_t len;
    util_err e;
    snprintf(path, sizeof path, "%s/tests/golden/metadata_smollm2.txt", check_root());
    if (util_read_file(&txt, &len, path, &e) != 0) {
        CHECK_SKIP("%s missing: no golden metadata comparison (tests/golden/gen_metadata.py writes it)",
                   path);
        return;
    }
    int n_kv = 0, n_tensor = 0, n_arr = 0, n_special = 0, bad = 0;
    const char **toks = NULL;
    uint32_t *tlen = NULL;
    int32_t *ttype = NULL;
    uint64_t ntok = 0, ntt = 0;
    eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &toks, &tlen, &ntok, &e);
    eng_gguf_get_i32_arr(g, "tokenizer.ggml.token_type", &ttype, &ntt, &e);
    for (char *line = txt, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (line[0] == '#' || !line[0]) continue;
        char *f[12];
        int nf = split_tabs(line, f, 12), ok = 1;
        const char *what = f[0];
        if (nf == 2) {
            uint64_t v = strtoull(f[1], NULL, 10);
            if (!strcmp(f[0], "version"))
                ok = eng_gguf_version(g) == v;
            else if (!strcmp(f[0], "tensor_count"))
                ok = (uint64_t)eng_gguf_tensor_count(g) == v;
            else if (!strcmp(f[0], "kv_count"))
                ok = (uint64_t)eng_gguf_kv_count(g) == v;
            else if (!strcmp(f[0], "alignment"))
                ok = eng_gguf_alignment(g) == v;
            else if (!strcmp(f[0], "data_offset"))
                ok = eng_gguf_data_offset(g) == v;
            else
                ok = 0;
        } else if (!strcmp(f[0], "kv") && nf >= 5) {
            ok = golden_kv(g, f, nf);
            n_kv++;
        } else if (!strcmp(f[0], "arr") && nf >= 4) {
            ok = golden_arr(g, f, 0);
            n_arr++;
        } else if (!strcmp(f[0], "arrsum") && nf >= 3) {
            ok = golden_arr(g, f, 1);
        } else if (!strcmp(f[0], "special") && nf >= 4) {
            uint64_t id = strtoull(f[1], NULL, 10);
            size_t n = unescape(f[3]);
            ok = id < ntok && id < ntt && ttype[id] == strtol(f[2], NULL, 10) && tlen[id] == n &&
                 memcmp(toks[id], f[3], n) == 0;
            n_special++;
        } else if (!strcmp(f[0], "tensor") && nf >= 10) {
            ok = golden_tensor(g, f, NULL);
            n_tensor++;
        } else {
            ok = 0;
        }
        if (!ok && bad++ < 5)
            fprintf(stderr, "  golden metadata mismatch: %s line %s\n", what, nf > 2 ? f[2] : f[1]);
    }
    int64_t specials = 0;
    for (uint64_t i = 0; i < ntt; i++) specials += ttype[i] != 1;
    CHECK_MSG(bad == 0, "golden metadata: %d mismatched lines", bad);
    CHECK_EQ_INT(n_kv, eng_gguf_kv_count(g));
    CHECK_EQ_INT(n_tensor, eng_gguf_tensor_count(g));
    CHECK_EQ_INT(n_special, specials);
    CHECK(n_arr > 10);
    free(toks);
    free(tlen);
    free(ttype);
    free(txt);
}

/* --- robustness on the real file ---------------------------------------- */

static int check_fail(const uint8_t *buf, size_t len, const char *label, int *crashy) {
    eng_gguf *g = (eng_gguf *)1;
    util_err e;
    util_err_clear(&e);
    int rc = eng_gguf_open_mem(&g, buf, len, label, &e);
    if (rc == 0) {
        *crashy += walk(g, buf, len);
        eng_gguf_free(g);
        return 0;
    }
    *crashy += g != NULL || e.code != rc || strncmp(e.msg, "model file '", 12) != 0 || !strstr(e.msg, label);
    return 1;
}

/* Opens a copy of buf[0, len) in an exact-size allocation (so a sanitizer
 * catches any read past len); returns 1 if the open failed. */
static int open_exact(const uint8_t *buf, size_t len, int *crashy) {
    uint8_t *c = malloc(len ? len : 1);
    memcpy(c, buf, len);
    int r = check_fail(len ? c : NULL, len, "trunc.gguf", crashy);
    free(c);
    return r;
}

static void test_truncations(const uint8_t *file, size_t size, const eng_gguf *g) {
    size_t ds = eng_gguf_data_offset(g);
    size_t lens[8192];
    int n = 0;
    for (size_t l = 0; l <= 64; l++) lens[n++] = l;
    for (size_t l = 65; l < 4096; l += 13) lens[n++] = l;           /* small kvs */
    for (size_t l = 4096; l < ds - 20000; l += 4999) lens[n++] = l; /* vocabulary */
    for (size_t l = ds - 20000; l < ds; l += 23) lens[n++] = l;     /* tensor table */
    for (size_t l = ds; l < ds + 64; l++) lens[n++] = l;            /* data start */
    const eng_gguf_tensor *t0 = eng_gguf_tensor_at(g, 0);
    lens[n++] = ds + t0->offset + t0->nbytes - 1;
    lens[n++] = size / 2;
    lens[n++] = size - 33;
    lens[n++] = size - 1;
    int crashy = 0, failed = 0;
    for (int i = 0; i < n; i++)
        failed += lens[i] <= ds + 64 ? open_exact(file, lens[i], &crashy)
                                     : check_fail(file, lens[i], "trunc.gguf", &crashy);
    CHECK_MSG(failed == n, "truncated files rejected: %d of %d", failed, n);
    CHECK_MSG(crashy == 0, "truncation errors name the file: %d bad", crashy);
}

static void test_flips(uint8_t *file, size_t size, const eng_gguf *g) {
    size_t ds = eng_gguf_data_offset(g);
    size_t meta = ds < ((size_t)2 << 20) ? ds : (size_t)2 << 20;
    uint8_t *exact = malloc(ds);
    memcpy(exact, file, ds);
    uint64_t rs = 20240501;
    int crashy = 0, opened = 0, failed = 0;
    for (int i = 0; i < 2000; i++) {
        uint64_t r = th_rng_next(&rs);
        size_t pos;
        switch (i % 3) { /* the header and small keys; the tensor table; anywhere */
        case 0: pos = r % 4096; break;
        case 1: pos = ds - 1 - r % (ds < 20000 ? ds : 20000); break;
        default: pos = r % meta; break;
        }
        uint8_t old = file[pos];
        uint8_t nv = (r >> 32) & 1 ? (uint8_t)(old ^ (1u << ((r >> 40) & 7))) : (uint8_t)(r >> 48);
        file[pos] = nv;
        exact[pos] = nv;
        /* full file: a flip may leave it valid; then every getter must work */
        if (check_fail(file, size, "flip.gguf", &crashy))
            failed++;
        else
            opened++;
        /* metadata only, exactly sized: the tensors end past the end, but
         * everything before must be read within bounds */
        check_fail(exact, ds, "flip.gguf", &crashy);
        file[pos] = old;
        exact[pos] = old;
    }
    free(exact);
    CHECK_MSG(crashy == 0, "byte flips: %d bad outcomes (%d opened, %d rejected)", crashy, opened, failed);
    CHECK_MSG(opened > 0 && failed > 0, "byte flips: %d opened, %d rejected", opened, failed);
}

/* --- hand-built hostile files ---------------------------------------------- */

enum mut {
    M_NONE,
    M_MAGIC,
    M_VERSION1,
    M_VERSION4,
    M_BIGENDIAN,
    M_KV_COUNT,
    M_TENSOR_COUNT,
    M_HUGE_KEY,
    M_EMPTY_KEY,
    M_HUGE_STRING,
    M_HUGE_ARRAY,
    M_NESTED_ARRAY,
    M_BAD_VTYPE,
    M_BAD_ELEM_TYPE,
    M_DUP_KEY,
    M_ALIGN_3,
    M_ALIGN_0,
    M_ALIGN_TYPE,
    M_ALIGN_64,
    M_NDIMS_5,
    M_NDIMS_0,
    M_NE_OVERFLOW,
    M_NE_NEGATIVE,
    M_BAD_TYPE,
    M_BLOCK_MULT,
    M_OFFSET_PAST,
    M_MISALIGNED,
    M_DUP_TENSOR,
    M_LONG_NAME,
    M_NUL_NAME,
    M_TRUNC_PAD,
    M_COUNT
};

static void put(util_buf *b, uint64_t v, int n) {
    uint8_t x[8];
    for (int i = 0; i < n; i++) x[i] = (uint8_t)(v >> (8 * i));
    util_buf_append(b, x, (size_t)n);
}

static void put_str(util_buf *b, const char *s) {
    put(b, strlen(s), 8);
    util_buf_append(b, s, strlen(s));
}

static void put_key(util_buf *b, const char *k, uint32_t type) {
    put_str(b, k);
    put(b, type, 4);
}

static void put_tensor(util_buf *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                       uint64_t off) {
    put_str(b, name);
    put(b, n_dims, 4);
    for (uint32_t d = 0; d < n_dims; d++) put(b, ne[d], 8);
    put(b, type, 4);
    put(b, off, 8);
}

/* A small valid GGUF (9 keys, 2 tensors), or one with mutation m. */
static void build(util_buf *b, enum mut m) {
    util_buf_init(b);
    util_buf_append(b, m == M_MAGIC ? "GGML" : "GGUF", 4);
    put(b, m == M_VERSION1 ? 1 : m == M_VERSION4 ? 4 : m == M_BIGENDIAN ? 0x03000000 : 3, 4);
    put(b, m == M_TENSOR_COUNT ? (uint64_t)1 << 40 : 2, 8);
    put(b, m == M_KV_COUNT ? UINT64_MAX : 9, 8);
    if (m == M_HUGE_KEY)
        put(b, (uint64_t)1 << 62, 8);
    else
        put_str(b, m == M_EMPTY_KEY ? "" : "general.architecture");
    put(b, m == M_BAD_VTYPE ? 13 : 8, 4);
    put(b, m == M_HUGE_STRING ? UINT64_MAX - 4 : 5, 8);
    util_buf_append(b, "llama", 5);
    put_key(b, "general.alignment", m == M_ALIGN_TYPE ? 10 : 4);
    put(b, m == M_ALIGN_3 ? 3 : m == M_ALIGN_0 ? 0 : m == M_ALIGN_64 ? 64 : 32, m == M_ALIGN_TYPE ? 8 : 4);
    put_key(b, "test.i32s", 9);
    put(b, m == M_NESTED_ARRAY ? 9 : m == M_BAD_ELEM_TYPE ? 77 : 5, 4);
    put(b, m == M_HUGE_ARRAY ? (uint64_t)1 << 61 : 3, 8);
    put(b, 1, 4), put(b, (uint32_t)-2, 4), put(b, 300000, 4);
    put_key(b, "test.strs", 9);
    put(b, 8, 4), put(b, 2, 8), put_str(b, "a"), put_str(b, "bc");
    put_key(b, m == M_DUP_KEY ? "test.strs" : "test.neg", 1);
    put(b, (uint8_t)-5, 1);
    put_key(b, "test.f64", 12);
    put(b, 0x3FD0000000000000ull, 8); /* 0.25 */
    put_key(b, "test.bool", 7);
    put(b, 1, 1);
    put_key(b, "test.u64", 10);
    put(b, 5000000000ull, 8);
    put_key(b, "test.f32s", 9);
    put(b, 6, 4), put(b, 2, 8), put(b, 0x3F800000, 4), put(b, 0xC0000000, 4);
    uint64_t ne_a[5] = {8, 1, 1, 1, 1}, ne_b[2] = {32, 2};
    if (m == M_NE_OVERFLOW) ne_b[0] = (uint64_t)1 << 40, ne_b[1] = (uint64_t)1 << 40;
    if (m == M_NE_NEGATIVE) ne_b[1] = UINT64_MAX;
    if (m == M_BLOCK_MULT) ne_b[0] = 48;
    const char *name_a = m == M_LONG_NAME
                             ? "a_name_that_is_much_longer_than_the_sixty_three_bytes_ggml_allows"
                         : m == M_NUL_NAME ? "a\0"
                                           : "a";
    if (m == M_NUL_NAME) {
        put(b, 2, 8);
        util_buf_append(b, "a\0", 2);
    } else {
        put_str(b, name_a);
    }
    put(b, m == M_NDIMS_5 ? 5 : m == M_NDIMS_0 ? 0 : 1, 4);
    for (int d = 0; d < (m == M_NDIMS_5 ? 5 : m == M_NDIMS_0 ? 0 : 1); d++) put(b, ne_a[d], 8);
    put(b, ENG_TYPE_F32, 4);
    put(b, 0, 8);
    put_tensor(b, m == M_DUP_TENSOR ? "a" : "blk.0.b", 2, ne_b, m == M_BAD_TYPE ? 4 : ENG_TYPE_Q8_0,
               m == M_OFFSET_PAST  ? 4096
               : m == M_MISALIGNED ? 36
               : m == M_ALIGN_64   ? 64
                                   : 32);
    if (m == M_TRUNC_PAD) return; /* ends inside the padding before the data */
    size_t align = m == M_ALIGN_64 ? 64 : 32;
    while (b->len % align) put(b, 0, 1);
    size_t data = (m == M_ALIGN_64 ? 64 : 32) + 68;
    for (size_t i = 0; i < data; i++) put(b, (uint8_t)i, 1);
}

static void test_hostile(void) {
    static const struct {
        enum mut m;
        int code;
        const char *msg;
    } cases[] = {
        {M_MAGIC, UTIL_EFORMAT, "not a gguf file (magic 'GGML'"},
        {M_VERSION1, UTIL_EUNSUPPORTED, "gguf version 1 is not supported"},
        {M_VERSION4, UTIL_EUNSUPPORTED, "gguf version 4 is not supported"},
        {M_BIGENDIAN, UTIL_EUNSUPPORTED, "byte-swapped"},
        {M_KV_COUNT, UTIL_EFORMAT, "kv count 18446744073709551615 cannot fit"},
        {M_TENSOR_COUNT, UTIL_EFORMAT, "tensor count 1099511627776 cannot fit"},
        {M_HUGE_KEY, UTIL_EFORMAT, "key 0 runs past end of file"},
        {M_EMPTY_KEY, UTIL_EFORMAT, "key 0 is empty"},
        {M_HUGE_STRING, UTIL_EFORMAT, "key 'general.architecture': string value runs past end"},
        {M_HUGE_ARRAY, UTIL_EFORMAT, "key 'test.i32s': array of 2305843009213693952 i32 values"},
        {M_NESTED_ARRAY, UTIL_EUNSUPPORTED, "key 'test.i32s' is an array of arrays"},
        {M_BAD_VTYPE, UTIL_EFORMAT, "key 'general.architecture' has unknown value type 13"},
        {M_BAD_ELEM_TYPE, UTIL_EFORMAT, "key 'test.i32s' has unknown array element type 77"},
        {M_DUP_KEY, UTIL_EFORMAT, "duplicate key 'test.strs'"},
        {M_ALIGN_3, UTIL_EFORMAT, "'general.alignment' is 3, not a power of 2"},
        {M_ALIGN_0, UTIL_EFORMAT, "'general.alignment' is 0, not a power of 2"},
        {M_ALIGN_TYPE, UTIL_EFORMAT, "'general.alignment' must be u32, not u64"},
        {M_NDIMS_5, UTIL_EFORMAT, "tensor 'a' has 5 dimensions"},
        {M_NDIMS_0, UTIL_EFORMAT, "tensor 'a' has 0 dimensions"},
        {M_NE_OVERFLOW, UTIL_EFORMAT, "tensor 'blk.0.b' has too many elements"},
        {M_NE_NEGATIVE, UTIL_EFORMAT, "tensor 'blk.0.b' dimension 1 is negative"},
        {M_BAD_TYPE, UTIL_EFORMAT, "tensor 'blk.0.b' has unknown type 4"},
        {M_BLOCK_MULT, UTIL_EFORMAT, "rows of 48 values, not a multiple of its block size 32"},
        {M_OFFSET_PAST, UTIL_EFORMAT, "tensor 'blk.0.b' ends past end of file"},
        {M_MISALIGNED, UTIL_EFORMAT, "tensor 'blk.0.b' offset 36 is not a multiple of the alignment 32"},
        {M_DUP_TENSOR, UTIL_EFORMAT, "duplicate tensor 'a'"},
        {M_LONG_NAME, UTIL_EFORMAT, "tensor 0 name is 65 bytes long (at most 63)"},
        {M_NUL_NAME, UTIL_EFORMAT, "tensor 0 name contains a NUL byte"},
        {M_TRUNC_PAD, UTIL_EFORMAT, "data section starts past end of file"},
    };
    util_buf b;
    util_err e;
    eng_gguf *g;
    int crashy = 0;

    /* the unmutated file opens, and its getters convert as documented */
    build(&b, M_NONE);
    CHECK_MSG(eng_gguf_open_mem(&g, b.data, b.len, "tiny.gguf", &e) == 0, "tiny: %s", e.msg);
    if (g) {
        uint32_t u;
        int64_t v;
        float f;
        int bo;
        CHECK_EQ_INT(walk(g, b.data, b.len), 0);
        CHECK(eng_gguf_get_i64(g, "test.neg", &v, &e) == 0 && v == -5);
        CHECK_EQ_INT(eng_gguf_get_u32(g, "test.neg", &u, &e), UTIL_EFORMAT);
        CHECK(strstr(e.msg, "model file 'tiny.gguf': key 'test.neg' value -5 is out of range"));
        CHECK_EQ_INT(eng_gguf_get_u32(g, "test.u64", &u, &e), UTIL_EFORMAT);
        CHECK(eng_gguf_get_i64(g, "test.u64", &v, &e) == 0 && v == 5000000000ll);
        CHECK(eng_gguf_get_f32(g, "test.f64", &f, &e) == 0 && f == 0.25f);
        CHECK(eng_gguf_get_f32(g, "test.neg", &f, &e) == 0 && f == -5.0f);
        CHECK(eng_gguf_get_bool(g, "test.bool", &bo, &e) == 0 && bo == 1);
        CHECK(eng_gguf_get_u32(g, "general.alignment", &u, &e) == 0 && u == 32);
        int32_t *ia;
        float *fa;
        uint64_t n;
        CHECK(eng_gguf_get_i32_arr(g, "test.i32s", &ia, &n, &e) == 0 && n == 3 && ia[0] == 1 && ia[1] == -2 &&
              ia[2] == 300000);
        if (n == 3) free(ia);
        CHECK(eng_gguf_get_f32_arr(g, "test.i32s", &fa, &n, &e) == 0 && n == 3 && fa[1] == -2.0f);
        if (n == 3) free(fa);
        CHECK(eng_gguf_get_f32_arr(g, "test.f32s", &fa, &n, &e) == 0 && n == 2 && fa[0] == 1.0f &&
              fa[1] == -2.0f);
        if (n == 2) free(fa);
        CHECK_EQ_INT(eng_gguf_get_i32_arr(g, "test.f32s", &ia, &n, &e), UTIL_EFORMAT);
        CHECK_EQ_INT(eng_gguf_get_str_arr(g, "test.i32s", NULL, NULL, &n, &e), UTIL_EFORMAT);
        CHECK(strstr(e.msg, "key 'test.i32s' is an array of i32, expected strings"));
        const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "blk.0.b");
        CHECK(t && t->nbytes == 68 && t->row_bytes == 34 && t->ne[2] == 1 &&
              t->data == (const char *)b.data + eng_gguf_data_offset(g) + 32);
        CHECK(eng_gguf_find_tensor(g, "a") == eng_gguf_tensor_at(g, 0));
        CHECK_EQ_INT(eng_gguf_kv_type(g, 2), ENG_GGUF_ARRAY);
        CHECK(eng_gguf_kv_key(g, 9) == NULL && eng_gguf_kv_key(g, -1) == NULL);
        CHECK(strcmp(eng_gguf_path(g), "tiny.gguf") == 0 && eng_gguf_size(g) == b.len);
        uint64_t id = eng_gguf_identity(g);
        eng_gguf_free(g);
        /* identity: stable, and sensitive to metadata and size */
        CHECK(eng_gguf_open_mem(&g, b.data, b.len, "again", &e) == 0 && eng_gguf_identity(g) == id);
        eng_gguf_free(g);
        b.data[34] ^= 1; /* a byte of the first key */
        CHECK(eng_gguf_open_mem(&g, b.data, b.len, "x", &e) == 0 && eng_gguf_identity(g) != id);
        eng_gguf_free(g);
        b.data[34] ^= 1;
        util_buf_append(&b, "pad", 3);
        CHECK(eng_gguf_open_mem(&g, b.data, b.len, "x", &e) == 0 && eng_gguf_identity(g) != id);
        eng_gguf_free(g);
    }
    /* a file on disk, and the ways opening a path fails */
    char tmp[] = "/tmp/cachet-gguf-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len);
    if (fd >= 0) close(fd);
    CHECK_MSG(eng_gguf_open(&g, tmp, &e) == 0, "open %s: %s", tmp, e.msg);
    CHECK(g && eng_gguf_tensor_count(g) == 2);
    eng_gguf_free(g);
    CHECK_EQ_INT(truncate(tmp, 0), 0);
    CHECK_EQ_INT(eng_gguf_open(&g, tmp, &e), UTIL_EFORMAT);
    CHECK(g == NULL && strstr(e.msg, tmp) && strstr(e.msg, "empty file"));
    unlink(tmp);
    CHECK_EQ_INT(eng_gguf_open(&g, "/nonexistent/m.gguf", &e), UTIL_EIO);
    CHECK(strstr(e.msg, "model file '/nonexistent/m.gguf': cannot open") == e.msg);
    CHECK_EQ_INT(eng_gguf_open(&g, "/tmp", &e), UTIL_EFORMAT);
    util_buf_release(&b);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        build(&b, cases[i].m);
        /* exact-size copy so a sanitizer sees reads past the end */
        char *c = malloc(b.len);
        memcpy(c, b.data, b.len);
        g = (eng_gguf *)1;
        util_err_clear(&e);
        int rc = eng_gguf_open_mem(&g, c, b.len, "evil.gguf", &e);
        CHECK_MSG(rc == cases[i].code && g == NULL && strncmp(e.msg, "model file 'evil.gguf': ", 24) == 0 &&
                      strstr(e.msg, cases[i].msg) != NULL,
                  "hostile case %d: rc %d, '%s' (want '%s')", (int)cases[i].m, rc, e.msg, cases[i].msg);
        /* and every truncation of it fails cleanly too */
        for (size_t l = 0; l < b.len; l++) {
            char *t = malloc(l ? l : 1);
            memcpy(t, c, l);
            check_fail((const uint8_t *)t, l, "evil.gguf", &crashy);
            free(t);
        }
        free(c);
        util_buf_release(&b);
    }
    CHECK_MSG(crashy == 0, "truncated hostile files: %d bad outcomes", crashy);
    /* the alignment-64 variant is valid */
    build(&b, M_ALIGN_64);
    CHECK(eng_gguf_open_mem(&g, b.data, b.len, "a64", &e) == 0 && eng_gguf_alignment(g) == 64 &&
          eng_gguf_data_offset(g) % 64 == 0);
    eng_gguf_free(g);
    util_buf_release(&b);
    /* a buffer without tensors may end right after its keys (no padding) */
    util_buf_init(&b);
    util_buf_append(&b, "GGUF", 4);
    put(&b, 3, 4), put(&b, 0, 8), put(&b, 1, 8);
    put_key(&b, "k", 4), put(&b, 7, 4);
    CHECK(eng_gguf_open_mem(&g, b.data, b.len, "meta", &e) == 0 && eng_gguf_tensor_count(g) == 0);
    eng_gguf_free(g);
    util_buf_release(&b);
    CHECK_EQ_INT(eng_gguf_open_mem(&g, NULL, 0, NULL, &e), UTIL_EFORMAT);
    CHECK(strstr(e.msg, "model file '<memory>': truncated") == e.msg);
}

/* The reader over a buffer (the whole file read into memory) sees what the
 * mmap reader sees. */
static void test_buffer_reader(const eng_gguf *g, const char *file, size_t size) {
    util_err e;
    eng_gguf *m;
    CHECK(size == eng_gguf_size(g));
    CHECK(eng_gguf_open_mem(&m, file, size, "mem", &e) == 0 && eng_gguf_identity(m) == eng_gguf_identity(g));
    int golden_ok = 1;
    if (m) {
        CHECK_EQ_INT(walk(m, file, size), 0);
        for (int64_t i = 0; i < eng_gguf_tensor_count(m); i++) {
            const eng_gguf_tensor *a = eng_gguf_tensor_at(m, i), *b = eng_gguf_tensor_at(g, i);
            golden_ok &= strcmp(a->name, b->name) == 0 && a->nbytes == b->nbytes &&
                         memcmp(a->data, b->data, a->nbytes < 4096 ? a->nbytes : 4096) == 0;
        }
        eng_gguf_free(m);
    }
    CHECK_MSG(golden_ok, "mmap and buffer readers agree");
}

void test_gguf(void) {
    CHECK_CASE(hostile) test_hostile();
    const char *mp = check_model_path();
    CHECK_MSG(mp != NULL, "model missing: run `make model`");
    if (!mp) return;
    util_err e;
    eng_gguf *g = NULL;
    CHECK_MSG(eng_gguf_open(&g, mp, &e) == 0, "open %s: %s", mp, e.msg);
    if (!g) return;
    CHECK_CASE(model_basics) test_model_basics(g);
    CHECK_CASE(golden_metadata) test_golden_metadata(g);
    char *file;
    size_t size;
    CHECK_MSG(util_read_file(&file, &size, mp, &e) == 0, "read %s: %s", mp, e.msg);
    if (file) {
        CHECK_CASE(buffer_reader) test_buffer_reader(g, file, size);
        CHECK_CASE(truncations) test_truncations((const uint8_t *)file, size, g);
        CHECK_CASE(flips) test_flips((uint8_t *)file, size, g);
        free(file);
    }
    eng_gguf_free(g);
}
