/* engine/kvstream.c: StreamingLLM's attention sinks and window for one
 * sequence (see kvstream.h): raw keys per layer, eviction by moving rows
 * down, keys rotated again at their new positions. A key is always stored
 * from its raw f32 value rotated once at its current position, as a fresh
 * store would: no rounding accumulates however often it moves. Does not
 * choose what to evict beyond "oldest after the sinks" (that is H2O's job). */
#include "kvstream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct eng_kvstream {
    int sinks, window, cap;
    int n_layer, kv_dim;
    long evicted;
    int h2o, recent, n_kv_head, head_dim;
    float *mass;          /* H2O: [n_layer][n_kv_head][cap] accumulated attention */
    float *keys;          /* H2O: [cap][kv_dim] one layer's keys as f32 */
    float *probs;         /* H2O: [cap] */
    float *rawk;          /* [n_layer][cap][kv_dim]: keys before RoPE */
    float *tmp;           /* [cap][kv_dim]: keys being rotated */
    unsigned char *moved; /* [n_layer]: 1 when the layer's stored keys sit at old positions */
    /* H2O on a model with sliding layers (eng_kvstream_h2o_layers): */
    int n_swa;            /* their window in positions */
    unsigned char *lswa;  /* [n_layer]: 1 for a sliding layer */
    unsigned char *lview; /* [n_layer]: 1 when its KV is in the second view */
    int *lslot;           /* [n_layer]: its layer index in that view */
    int32_t *hpos;        /* [n_layer][n_kv_head][cap]: each slot's original position */
    int tracked;          /* slots 0 .. tracked-1 have their hpos */
};

int eng_kvstream_new(eng_kvstream **out, int sinks, int window, int n_layer, int kv_dim, util_err *err) {
    *out = NULL;
    if (sinks < 0 || window < 1)
        return util_err_set(err, UTIL_EINVAL,
                            "streaming: sinks %d and window %d (need sinks >= 0, window >= 1)", sinks,
                            window);
    eng_kvstream *st = calloc(1, sizeof *st);
    if (!st) return util_err_set(err, UTIL_ENOMEM, "streaming: out of memory");
    st->sinks = sinks;
    st->window = window;
    st->cap = sinks + window;
    st->n_layer = n_layer;
    st->kv_dim = kv_dim;
    size_t row = (size_t)kv_dim, rows = (size_t)st->cap;
    st->rawk = malloc((size_t)n_layer * rows * row * sizeof *st->rawk);
    st->tmp = malloc(rows * row * sizeof *st->tmp);
    st->moved = calloc((size_t)n_layer, 1);
    if (!st->rawk || !st->tmp || !st->moved) {
        int cap = st->cap;
        eng_kvstream_free(st);
        return util_err_set(err, UTIL_ENOMEM, "streaming: out of memory for %d raw keys", cap);
    }
    *out = st;
    return UTIL_OK;
}

int eng_kvstream_new_h2o(eng_kvstream **out, int budget, int recent, int n_layer, int n_kv_head, int head_dim,
                         util_err *err) {
    *out = NULL;
    if (budget < 2 || recent < 1 || recent >= budget)
        return util_err_set(err, UTIL_EINVAL, "h2o: budget %d, recent %d (need 1 <= recent < budget)", budget,
                            recent);
    eng_kvstream *st = calloc(1, sizeof *st);
    if (!st) return util_err_set(err, UTIL_ENOMEM, "h2o: out of memory");
    st->h2o = 1;
    st->cap = budget;
    st->window = budget;
    st->recent = recent;
    st->n_layer = n_layer;
    st->n_kv_head = n_kv_head;
    st->head_dim = head_dim;
    st->kv_dim = n_kv_head * head_dim;
    st->mass = calloc((size_t)n_layer * (size_t)n_kv_head * (size_t)budget, sizeof *st->mass);
    st->keys = malloc((size_t)budget * (size_t)st->kv_dim * sizeof *st->keys);
    st->probs = malloc((size_t)budget * sizeof *st->probs);
    st->moved = calloc((size_t)n_layer, 1);
    if (!st->mass || !st->keys || !st->probs || !st->moved) {
        eng_kvstream_free(st);
        return util_err_set(err, UTIL_ENOMEM, "h2o: out of memory for %d slots", budget);
    }
    *out = st;
    return UTIL_OK;
}

void eng_kvstream_free(eng_kvstream *st) {
    if (!st) return;
    free(st->mass);
    free(st->keys);
    free(st->probs);
    free(st->rawk);
    free(st->tmp);
    free(st->moved);
    free(st->lswa);
    free(st->lview);
    free(st->lslot);
    free(st->hpos);
    free(st);
}

int eng_kvstream_cap(const eng_kvstream *st) { return st->cap; }
int eng_kvstream_sinks(const eng_kvstream *st) { return st->sinks; }
long eng_kvstream_evicted(const eng_kvstream *st) { return st->evicted; }
int eng_kvstream_shift(const eng_kvstream *st) { return st->h2o ? (int)st->evicted : 0; }
int eng_kvstream_is_h2o(const eng_kvstream *st) { return st->h2o; }

void eng_kvstream_truncate(eng_kvstream *st, int len) {
    if (len <= 0) {
        st->evicted = 0;
        memset(st->moved, 0, (size_t)st->n_layer);
    }
    if (st->tracked > len) st->tracked = len > 0 ? len : 0;
    if (!st->h2o || len >= st->cap) return;
    if (len < 0) len = 0;
    for (size_t lg = 0; lg < (size_t)st->n_layer * (size_t)st->n_kv_head; lg++)
        memset(st->mass + lg * (size_t)st->cap + (size_t)len, 0, (size_t)(st->cap - len) * sizeof *st->mass);
}

static float *raw_row(const eng_kvstream *st, int layer, int pos) {
    return st->rawk + ((size_t)layer * (size_t)st->cap + (size_t)pos) * (size_t)st->kv_dim;
}

int eng_kvstream_evict(eng_kvstream *st, const eng_kv_view *const *views, int n_views, int32_t *toks, int len,
                       int n) {
    int from = st->sinks + n, keep = len - from;
    if (n <= 0 || keep < 0) return len;
    for (int v = 0; v < n_views; v++) {
        const eng_kv_view *kv = views[v];
        for (int l = 0; l < kv->n_layer; l++)
            for (int i = 0; i < keep; i++) /* rows of different pages: one at a time, upwards */
                memmove(eng_kv_v(kv, l, st->sinks + i), eng_kv_v(kv, l, from + i), kv->v_row);
    }
    for (int l = 0; l < st->n_layer; l++) {
        memmove(raw_row(st, l, st->sinks), raw_row(st, l, from),
                (size_t)keep * (size_t)st->kv_dim * sizeof(float));
        st->moved[l] = 1;
    }
    memmove(toks + st->sinks, toks + from, (size_t)keep * sizeof *toks);
    st->evicted += n;
    return len - n;
}

void eng_kvstream_attend(eng_kvstream *st, eng_backend *be, const eng_kv_view *kv, int layer, int slot,
                         const eng_rope_args *rope, const float *k, int n, int pos0) {
    if (st->h2o) return; /* keys keep the rotation of their original position */
    memcpy(raw_row(st, layer, pos0), k, (size_t)n * (size_t)st->kv_dim * sizeof(float));
    if (!st->moved[layer]) return;
    st->moved[layer] = 0;
    int rows = pos0 - st->sinks;
    if (rows <= 0) return;
    memcpy(st->tmp, raw_row(st, layer, st->sinks), (size_t)rows * (size_t)st->kv_dim * sizeof(float));
    eng_rope_args r = *rope;
    r.x = st->tmp;
    r.n_tok = rows;
    r.pos0 = st->sinks;
    be->ops->rope(be, &r);
    be->ops->kv_store(be, kv, slot, st->tmp, NULL, rows, st->sinks);
}

/* --- H2O ------------------------------------------------------------------ */

int eng_kvstream_h2o_victim(const float *m, int len, int recent) {
    int end = len - recent, best = 0;
    for (int j = 1; j < end; j++)
        if (m[j] < m[best]) best = j; /* strict: the oldest of equal masses */
    return best;
}

/* Removes slot j of one head's byte slices (bytes each, at offset off in
 * rows of row_bytes) from slots 0 .. len-1 of a layer's K or V rows. */
static void drop_slice(const eng_kv_view *kv, int layer, int v, size_t off, size_t bytes, int j, int len) {
    for (int i = j; i + 1 < len; i++) {
        uint8_t *dst = v ? eng_kv_v(kv, layer, i) : eng_kv_k(kv, layer, i);
        const uint8_t *src = v ? eng_kv_v(kv, layer, i + 1) : eng_kv_k(kv, layer, i + 1);
        memcpy(dst + off, src + off, bytes);
    }
}

int eng_kvstream_h2o_layers(eng_kvstream *st, int n_swa, util_err *err) {
    size_t n = (size_t)st->n_layer;
    if (!st->h2o || n_swa < st->cap)
        return util_err_set(
            err, UTIL_EINVAL,
            "--kv-evict h2o: --kv-budget-tokens %d exceeds the sliding window of %d (a sliding "
            "layer's kept keys must all lie within its window)",
            st->cap, n_swa);
    st->lswa = calloc(n, 1);
    st->lview = calloc(n, 1);
    st->lslot = calloc(n, sizeof *st->lslot);
    st->hpos = malloc(n * (size_t)st->n_kv_head * (size_t)st->cap * sizeof *st->hpos);
    if (!st->lswa || !st->lview || !st->lslot || !st->hpos)
        return util_err_set(err, UTIL_ENOMEM, "h2o: out of memory");
    for (size_t l = 0; l < n; l++) st->lslot[l] = (int)l;
    st->n_swa = n_swa;
    return UTIL_OK;
}

void eng_kvstream_h2o_layer(eng_kvstream *st, int layer, int swa, int view, int slot) {
    st->lswa[layer] = (unsigned char)(swa != 0);
    st->lview[layer] = (unsigned char)(view != 0);
    st->lslot[layer] = slot;
}

int eng_kvstream_h2o_pos(const eng_kvstream *st, int layer, int head, int slot) {
    if (!st->hpos || slot >= st->tracked) return slot + (int)st->evicted;
    return st->hpos[((size_t)layer * (size_t)st->n_kv_head + (size_t)head) * (size_t)st->cap + (size_t)slot];
}

int eng_kvstream_evict_h2o(eng_kvstream *st, const eng_kv_view *const *views, int32_t *toks, int len) {
    size_t lgs = (size_t)st->n_layer * (size_t)st->n_kv_head;
    if (st->hpos) /* slots stored since the last eviction sit at slot + evictions */
        for (size_t lg = 0; lg < lgs; lg++)
            for (int j = st->tracked; j < len; j++)
                st->hpos[lg * (size_t)st->cap + (size_t)j] = j + (int)st->evicted;
    int next = len + (int)st->evicted; /* the position of the key stored after this eviction */
    for (int l = 0; l < st->n_layer; l++) {
        const eng_kv_view *kv = views[st->lview && st->lview[l] ? 1 : 0];
        int vl = st->lslot ? st->lslot[l] : l;
        size_t kb = eng_type_row_size(kv->type_k, st->head_dim),
               vb = eng_type_row_size(kv->type_v, st->head_dim);
        for (int g = 0; g < st->n_kv_head; g++) {
            size_t lg = (size_t)l * (size_t)st->n_kv_head + (size_t)g;
            float *m = st->mass + lg * (size_t)st->cap;
            int32_t *pos = st->hpos ? st->hpos + lg * (size_t)st->cap : NULL;
            /* a sliding layer drops the key that leaves its window (slot 0: the
             * oldest of this head's), else the least mass like the others */
            int j = pos && st->lswa[l] && next - pos[0] >= st->n_swa
                        ? 0
                        : eng_kvstream_h2o_victim(m, len, st->recent);
            drop_slice(kv, vl, 0, (size_t)g * kb, kb, j, len);
            drop_slice(kv, vl, 1, (size_t)g * vb, vb, j, len);
            memmove(m + j, m + j + 1, (size_t)(len - 1 - j) * sizeof *m);
            m[len - 1] = 0;
            if (pos) memmove(pos + j, pos + j + 1, (size_t)(len - 1 - j) * sizeof *pos);
            if (l == 0 && g == 0) memmove(toks + j, toks + j + 1, (size_t)(len - 1 - j) * sizeof *toks);
        }
    }
    st->evicted++;
    st->tracked = len - 1;
    return len - 1;
}

void eng_kvstream_observe(eng_kvstream *st, const eng_attn_args *a, int layer) {
    if (!st->h2o) return;
    const eng_kv_view *kv = a->kv;
    const eng_type_traits *tk = eng_type_get(kv->type_k);
    int n_slot = a->pos0 + a->n_tok, hd = a->head_dim, grp = a->n_head / a->n_kv_head;
    for (int j = 0; j < n_slot; j++)
        tk->to_float(eng_kv_k(kv, a->layer, j), st->keys + (size_t)j * (size_t)st->kv_dim, st->kv_dim);
    for (int t = 0; t < a->n_tok; t++)
        for (int h = 0; h < a->n_head; h++) {
            const float *q = a->q + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
            int g = h / grp, n = a->pos0 + t + 1;
            float max = -INFINITY;
            for (int j = 0; j < n; j++) {
                const float *k = st->keys + (size_t)j * (size_t)st->kv_dim + (size_t)g * (size_t)hd;
                float d = 0;
                for (int i = 0; i < hd; i++) d += q[i] * k[i];
                st->probs[j] = d * a->scale;
                if (st->probs[j] > max) max = st->probs[j];
            }
            double sum = 0;
            for (int j = 0; j < n; j++) sum += (st->probs[j] = expf(st->probs[j] - max));
            float *m = st->mass + ((size_t)layer * (size_t)st->n_kv_head + (size_t)g) * (size_t)st->cap;
            for (int j = 0; j < n; j++) m[j] += (float)(st->probs[j] / sum);
        }
}
