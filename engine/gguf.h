/* engine/gguf.h: read-only GGUF v2/v3 reader over an mmap'd file (or a caller's
 * buffer). Every offset, size, count and string length is bounds-checked when
 * the file is opened; lookups afterwards cannot read out of bounds. Does not
 * interpret tensors (see quant.h) or model hyperparameters (see model.c). */
#ifndef ENG_GGUF_H
#define ENG_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

typedef struct eng_gguf eng_gguf;

/* GGUF metadata value types, as stored in the file. */
typedef enum eng_gguf_vtype {
    ENG_GGUF_U8 = 0,
    ENG_GGUF_I8 = 1,
    ENG_GGUF_U16 = 2,
    ENG_GGUF_I16 = 3,
    ENG_GGUF_U32 = 4,
    ENG_GGUF_I32 = 5,
    ENG_GGUF_F32 = 6,
    ENG_GGUF_BOOL = 7,
    ENG_GGUF_STRING = 8,
    ENG_GGUF_ARRAY = 9,
    ENG_GGUF_U64 = 10,
    ENG_GGUF_I64 = 11,
    ENG_GGUF_F64 = 12,
    ENG_GGUF_VTYPE_COUNT
} eng_gguf_vtype;

typedef struct eng_gguf_tensor {
    const char *name; /* NUL-terminated copy owned by the eng_gguf */
    uint32_t type;    /* ggml type id (see quant.h); validated as supported-or-known */
    int n_dims;       /* 1..4 */
    int64_t ne[4];    /* ne[0] is the contiguous axis; missing dims are 1 */
    uint64_t offset;  /* relative to the data section */
    size_t nbytes;    /* total bytes, checked to lie inside the file */
    size_t row_bytes; /* bytes of one ne[0] row */
    const void *data; /* points into the mapping */
} eng_gguf_tensor;

/* Opens and validates path. On failure *out is NULL and err names the file and
 * what is wrong (e.g. "model file 'x.gguf': tensor 'blk.3.attn_q.weight' ends
 * past end of file"). The caller frees with eng_gguf_free. */
int eng_gguf_open(eng_gguf **out, const char *path, util_err *err);
/* Same over a caller-owned buffer that must outlive the reader (tests, fuzzing).
 * label names the buffer in messages. */
int eng_gguf_open_mem(eng_gguf **out, const void *buf, size_t len, const char *label, util_err *err);
void eng_gguf_free(eng_gguf *g);

uint32_t eng_gguf_version(const eng_gguf *g);
const char *eng_gguf_path(const eng_gguf *g);
/* Size of the mapping and a stable identity (file size + hash of the header and
 * tensor table) used as part of the model fingerprint. */
size_t eng_gguf_size(const eng_gguf *g);
uint64_t eng_gguf_identity(const eng_gguf *g);
/* The tensor alignment (general.alignment or 32) and the file offset of the
 * data section; every tensor's data is base + data_offset + offset. */
size_t eng_gguf_alignment(const eng_gguf *g);
size_t eng_gguf_data_offset(const eng_gguf *g);

/* --- metadata ---------------------------------------------------------- */
int64_t eng_gguf_kv_count(const eng_gguf *g);
const char *eng_gguf_kv_key(const eng_gguf *g, int64_t i); /* NUL-terminated */
eng_gguf_vtype eng_gguf_kv_type(const eng_gguf *g, int64_t i);
int64_t eng_gguf_find_key(const eng_gguf *g, const char *key); /* -1 if absent */

/* Typed getters. Return UTIL_ENOTFOUND if the key is absent (err untouched, so
 * callers can apply defaults) and UTIL_EFORMAT if it has an incompatible type.
 * Integer getters accept any integer type whose value fits; float getters accept
 * f32/f64 and integers. */
int eng_gguf_get_u32(const eng_gguf *g, const char *key, uint32_t *out, util_err *err);
int eng_gguf_get_i64(const eng_gguf *g, const char *key, int64_t *out, util_err *err);
int eng_gguf_get_f32(const eng_gguf *g, const char *key, float *out, util_err *err);
int eng_gguf_get_bool(const eng_gguf *g, const char *key, int *out, util_err *err);
/* *out points into the mapping, NOT NUL-terminated; *len is its length. */
int eng_gguf_get_str(const eng_gguf *g, const char *key, const char **out, size_t *len, util_err *err);

/* Arrays. eng_gguf_get_arr reports element type and count. */
int eng_gguf_get_arr(const eng_gguf *g, const char *key, eng_gguf_vtype *elem_type, uint64_t *count,
                     util_err *err);
/* String array: fills malloc'd arrays of pointers (into the mapping) and
 * lengths; the caller frees *strs and *lens with free(). */
int eng_gguf_get_str_arr(const eng_gguf *g, const char *key, const char ***strs, uint32_t **lens,
                         uint64_t *count, util_err *err);
/* Numeric array converted to float / int32 into a malloc'd copy (caller frees);
 * the int32 one also takes a bool array (0 or 1). */
int eng_gguf_get_f32_arr(const eng_gguf *g, const char *key, float **out, uint64_t *count, util_err *err);
int eng_gguf_get_i32_arr(const eng_gguf *g, const char *key, int32_t **out, uint64_t *count, util_err *err);

/* --- tensors ----------------------------------------------------------- */
int64_t eng_gguf_tensor_count(const eng_gguf *g);
const eng_gguf_tensor *eng_gguf_tensor_at(const eng_gguf *g, int64_t i);
const eng_gguf_tensor *eng_gguf_find_tensor(const eng_gguf *g, const char *name);

#endif
