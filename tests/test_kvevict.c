/* tests/test_kvevict.c: KV eviction (engine/kvstream.c): StreamingLLM's
 * sinks + window. The cache positions RoPE sees after evictions (layer 0's
 * rows equal a fresh sequence's of the kept tokens, bit for bit), the logits
 * of a stream equal a plain sequence over the same KV rows, the kept tokens,
 * the private-sequence property (no prefix-cache pages, no disk files), the
 * option errors of the CLI (CUDA's refusal before the device starts) and
 * make bench-kv's table at a small size. Real models; nothing timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/model_impl.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"

static const char *k_text =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife. However little known the feelings or views of such a man may be on "
    "his first entering a neighbourhood, this truth is so well fixed in the minds of the surrounding "
    "families, that he is considered the rightful property of some one or other of their daughters.";

static eng_model *open_stream(const char *path, int sinks, int window, int no_cache, const char *dir) {
    eng_model_params mp = {.n_threads = 2, .exact = 0, .kv_sinks = sinks, .kv_window = window};
    mp.no_cache = no_cache;
    mp.no_disk_cache = dir == NULL;
    mp.kv_dir = dir;
    return th_open_model_with(path, &mp);
}

/* Layer l's K and V rows at position p of two sequences are the same bytes. */
static int same_rows(const eng_seq *a, const eng_seq *b, const eng_layer *L, int p) {
    const eng_kv_view *ka = eng_seq_layer_kv(a, L), *kb = eng_seq_layer_kv(b, L);
    return memcmp(eng_kv_k(ka, L->kv_slot, p), eng_kv_k(kb, L->kv_slot, p), ka->k_row) == 0 &&
           memcmp(eng_kv_v(ka, L->kv_slot, p), eng_kv_v(kb, L->kv_slot, p), ka->v_row) == 0;
}

/* An H2O model (budget 32) against a plain one on the same file (NULL: the
 * default model): 30 tokens of k_text give the same logits bit for bit; `more`
 * tokens past them keep the cache at 32 positions, shifted by `shift`, with
 * finite logits. */
static void h2o_against_plain(const char *file, const eng_model_params *hp, const eng_model_params *pp,
                              int more, int shift) {
    eng_model *mh = th_open_model_with(file, hp), *mp = th_open_model_with(file, pp);
    size_t n = 0;
    int32_t *toks = mh ? th_tokenize(eng_model_tokenizer(mh), k_text, 1, 0, &n) : NULL;
    eng_seq *h = NULL, *p = NULL;
    util_err err;
    int nv = mh ? eng_model_n_vocab(mh) : 0;
    float *lh = malloc((size_t)(nv ? nv : 1) * sizeof *lh), *lp = malloc((size_t)(nv ? nv : 1) * sizeof *lp);
    if (!mh || !mp || !toks || n < (size_t)(30 + more) || !lh || !lp || eng_seq_new(&h, mh, 0, &err) ||
        eng_seq_new(&p, mp, 0, &err)) {
        CHECK_MSG(0, "h2o against plain (%s): setup", file ? file : "default model");
    } else {
        CHECK_EQ_INT(eng_seq_eval(h, toks, 30, lh, &err), UTIL_OK);
        CHECK_EQ_INT(eng_seq_eval(p, toks, 30, lp, &err), UTIL_OK);
        CHECK(memcmp(lh, lp, (size_t)nv * sizeof *lh) == 0);
        CHECK_EQ_INT(eng_seq_eval(h, toks + 30, more, lh, &err), UTIL_OK);
        CHECK_EQ_INT(eng_seq_len(h), 32);
        CHECK_EQ_INT(eng_kvstream_shift(h->stream), shift);
        int finite = 1;
        for (int i = 0; i < nv; i++) finite &= isfinite(lh[i]);
        CHECK(finite);
    }
    free(lh);
    free(lp);
    free(toks);
    eng_seq_free(h);
    eng_seq_free(p);
    eng_model_free(mh);
    eng_model_free(mp);
}

/* A stream of n tokens through sinks + window; then, against plain
 * sequences of the same model file:
 * - the kept tokens are the first `sinks` and the last `window`;
 * - layer 0's K and V rows (which depend on their token alone) equal a fresh
 *   sequence's of the kept tokens at every cache position: keys rotated at
 *   the re-assigned positions 0 .. sinks + window - 1, values moved; the
 *   sinks' rows equal in every layer (they never saw an evicted token);
 * - the stream's last logits equal a plain sequence's that holds the
 *   stream's KV rows (copied) and evaluates the same last token at the same
 *   cache position: the query is rotated at the cache position too. */
static void check_positions(const char *path, int sinks, int window) {
    eng_model *ms = open_stream(path, sinks, window, 1, NULL);
    eng_model_params plain = {.n_threads = 2, .exact = 0, .no_cache = 1, .no_disk_cache = 1};
    eng_model *mp = th_open_model_with(path, &plain);
    if (!ms || !mp) {
        eng_model_free(ms);
        eng_model_free(mp);
        return;
    }
    size_t n = 0;
    int32_t *toks = th_tokenize(eng_model_tokenizer(ms), k_text, 1, 0, &n);
    int cap = sinks + window, nv = eng_model_n_vocab(ms);
    CHECK_MSG((int)n > 2 * cap, "the text has %zu tokens; the test needs more than %d", n, 2 * cap);
    eng_seq *s = NULL, *f = NULL, *c = NULL;
    util_err err;
    float *ls = malloc((size_t)nv * sizeof *ls), *lc = malloc((size_t)nv * sizeof *lc);
    if (!toks || (int)n <= 2 * cap || !ls || !lc || eng_seq_new(&s, ms, 4 * cap, &err) ||
        eng_seq_new(&f, mp, cap, &err) || eng_seq_new(&c, mp, cap, &err)) {
        CHECK_MSG(0, "setup: %s", err.msg);
        goto done;
    }
    /* a prompt that overflows (chunks, then token by token), then decode steps */
    CHECK_EQ_INT(eng_seq_eval(s, toks, cap + 5, NULL, &err), UTIL_OK);
    for (int i = cap + 5; i < (int)n; i++) CHECK_EQ_INT(eng_seq_eval(s, toks + i, 1, ls, &err), UTIL_OK);
    CHECK_EQ_INT(eng_seq_len(s), cap);
    CHECK_EQ_INT((int)eng_kvstream_evicted(s->stream), (int)n - cap);
    const int32_t *kept = eng_seq_tokens(s);
    CHECK(memcmp(kept, toks, (size_t)sinks * sizeof *toks) == 0);
    CHECK(memcmp(kept + sinks, toks + n - (size_t)window, (size_t)window * sizeof *toks) == 0);
    CHECK_EQ_INT(eng_seq_eval(f, kept, cap, NULL, &err), UTIL_OK);
    const eng_layer *L0 = &ms->layers[0];
    int rows0 = 0, sink_rows = 0;
    for (int p = 0; p < cap; p++) rows0 += same_rows(s, f, L0, p);
    for (int l = 0; l < ms->hp.n_layer; l++)
        for (int p = 0; p < sinks; p++) sink_rows += same_rows(s, f, &ms->layers[l], p);
    CHECK_EQ_INT(rows0, cap);
    CHECK_EQ_INT(sink_rows, sinks * ms->hp.n_layer);
    /* a window row of a deeper layer saw evicted tokens in the stream: it differs */
    CHECK(!same_rows(s, f, &ms->layers[ms->hp.n_layer - 1], cap - 1));
    /* the stream's rows 0 .. cap-2 copied into a plain sequence, then its last token at cap - 1 */
    CHECK_EQ_INT(eng_seq_eval(c, kept, cap, NULL, &err), UTIL_OK);
    for (int i = 0; i < c->n_pages; i++) {
        memcpy(c->pages[i], s->pages[i], eng_kv_page_bytes(&c->kv));
        if (c->spages[i] && s->spages[i]) memcpy(c->spages[i], s->spages[i], eng_kv_page_bytes(&c->kv_swa));
    }
    eng_seq_truncate(c, cap - 1);
    CHECK_EQ_INT(eng_seq_eval(c, kept + cap - 1, 1, lc, &err), UTIL_OK);
    CHECK_MSG(memcmp(ls, lc, (size_t)nv * sizeof *ls) == 0, "stream logits differ from the plain sequence's");
done:
    free(ls);
    free(lc);
    free(toks);
    eng_seq_free(s);
    eng_seq_free(f);
    eng_seq_free(c);
    eng_model_free(ms);
    eng_model_free(mp);
}

static void test_positions(void) { check_positions(NULL, 4, 28); }

static void test_gemma3(void) {
    const char *g = th_gemma3_path();
    if (!g) {
        CHECK_SKIP("gemma 3 is absent (make model-gemma3)");
        return;
    }
    check_positions(g, 2, 30);
    /* sinks + window beyond its sliding window (512) is refused */
    util_err err;
    eng_model *m = NULL;
    eng_model_params mp = {
        .n_threads = 2, .no_cache = 1, .no_disk_cache = 1, .kv_sinks = 4, .kv_window = 512};
    CHECK_EQ_INT(eng_model_open(&m, g, &mp, &err), UTIL_EINVAL);
    CHECK_MSG(strstr(err.msg, "sliding window of 512") != NULL, "%s", err.msg);
    eng_model_free(m);
    /* so is an H2O budget beyond it; within it H2O runs: the plain sequence's
     * logits below the budget, bit for bit; finite ones past it */
    mp = (eng_model_params){.n_threads = 2,
                            .no_cache = 1,
                            .no_disk_cache = 1,
                            .kv_evict = ENG_KV_EVICT_H2O,
                            .kv_budget_tokens = 513};
    m = NULL;
    CHECK_EQ_INT(eng_model_open(&m, g, &mp, &err), UTIL_EINVAL);
    CHECK_MSG(strstr(err.msg, "--kv-budget-tokens 513 exceeds the model's sliding window of 512") != NULL,
              "%s", err.msg);
    eng_model_free(m);
    mp.kv_budget_tokens = 32;
    eng_model_params pp = {.n_threads = 2, .no_cache = 1, .no_disk_cache = 1};
    h2o_against_plain(g, &mp, &pp, 18, 16);
}

/* A stream's pages never reach the prefix cache nor the disk tier, and a
 * second sequence of the same tokens finds nothing. */
static void test_private(void) {
    char dir[] = "/tmp/cachet-kvevict-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp");
        return;
    }
    eng_model *m = open_stream(NULL, 4, 28, 0, dir);
    if (!m) return;
    size_t n = 0;
    int32_t *toks = th_tokenize(eng_model_tokenizer(m), k_text, 1, 0, &n);
    eng_seq *a = NULL, *b = NULL;
    util_err err;
    int mem = -1, disk = -1;
    CHECK_EQ_INT(eng_seq_new(&a, m, 0, &err), UTIL_OK);
    CHECK_EQ_INT(eng_seq_new(&b, m, 0, &err), UTIL_OK);
    if (a && b && toks) {
        CHECK_EQ_INT(eng_seq_set_tokens(a, toks, 20, NULL, &mem, &disk, &err), UTIL_OK); /* no eviction yet */
        CHECK_EQ_INT(eng_seq_set_tokens(a, toks, (int)n, NULL, &mem, &disk, &err), UTIL_OK);
        CHECK_EQ_INT(mem, 20); /* its own prefix: nothing was evicted then */
        eng_model_flush_cache(m);
        eng_cache_stats st = eng_model_cache_stats(m);
        CHECK_EQ_INT((int)st.pages_cached, 0);
        CHECK_EQ_INT((int)st.disk_writes, 0);
        CHECK_EQ_INT(eng_seq_set_tokens(b, toks, (int)n, NULL, &mem, &disk, &err), UTIL_OK);
        CHECK_EQ_INT(mem + disk, 0);
        /* a is past its window: its cache positions are no longer the tokens' */
        CHECK_EQ_INT(eng_seq_set_tokens(a, toks, (int)n, NULL, &mem, &disk, &err), UTIL_OK);
        CHECK_EQ_INT(mem, 0);
    }
    eng_seq_free(a);
    eng_seq_free(b);
    free(toks);
    eng_model_free(m);
    proc_result r = proc_runf("find %s -type f | wc -l; rm -rf %s", dir, dir);
    CHECK_MSG(strtol(r.out, NULL, 10) == 0, "files on disk: %s", r.out);
    proc_result_free(&r);
}

/* --- H2O ---------------------------------------------------------------------- */

/* H2O's order on scores worked out by hand. One layer, one KV head shared by
 * two query heads (head_dim 2), budget 4, recent 1, scale 1; keys (exact in
 * f16) k0 = (2,0), k1 = (0,0), k2 = (0,2), k3 = (1,1) for tokens 10..13.
 * A query at slot 3 with head 0 q = (1,0), head 1 q = (0,1):
 *   head 0 scores 2,0,0,1 -> e^2, 1, 1, e over e^2 + e + 2 = 12.107:
 *          p = .6103 .0826 .0826 .2245
 *   head 1 scores 0,0,2,1 -> p = .0826 .0826 .6103 .2245
 *   mass  = .6929 .1652 .6929 .4490
 * Full: the victim is the least mass outside the last slot: slot 1 (k1,
 * token 11). Slots become k0 k2 k3 with masses .6929 .6929 .4490.
 * Then k4 = (0,0) at slot 3 and a query of zeros in both heads: uniform,
 * .25 per slot per head, +.5 each: 1.1929 1.1929 .9490 .5; the victim is
 * slot 2 (k3, token 13). With recent 2 instead it would be a tie between
 * slots 0 and 1 (1.1929 each): the oldest, slot 0. */
static void test_h2o_order(void) {
    enum { B = 4, KVD = 2 };
    uint16_t page[B * KVD * 2] = {0}; /* one page of 4 tokens: K rows then V rows */
    void *pages[1] = {page};
    eng_kv_view kv;
    eng_kv_view_init(&kv, B, 1, KVD, ENG_TYPE_F16, ENG_TYPE_F16);
    kv.pages = pages;
    const uint16_t one = 0x3C00, two = 0x4000;
    const uint16_t keys[B][KVD] = {{two, 0}, {0, 0}, {0, two}, {one, one}};
    for (int j = 0; j < B; j++) {
        memcpy(eng_kv_k(&kv, 0, j), keys[j], sizeof keys[j]);
        uint16_t v[KVD] = {(uint16_t)(one + j), 0}; /* tags to follow the moves */
        memcpy(eng_kv_v(&kv, 0, j), v, sizeof v);
    }
    const eng_kv_view *const views[1] = {&kv};
    eng_kvstream *st = NULL;
    util_err err;
    if (eng_kvstream_new_h2o(&st, B, 1, 1, 1, KVD, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    float q1[4] = {1, 0, 0, 1}, out[4];
    eng_attn_args a = {.out = out,
                       .q = q1,
                       .kv = &kv,
                       .layer = 0,
                       .n_tok = 1,
                       .pos0 = 3,
                       .n_head = 2,
                       .n_kv_head = 1,
                       .head_dim = KVD,
                       .scale = 1.0f};
    eng_kvstream_observe(st, &a, 0);
    int32_t toks[B] = {10, 11, 12, 13};
    CHECK_EQ_INT(eng_kvstream_evict_h2o(st, views, toks, B), 3);
    CHECK(toks[0] == 10 && toks[1] == 12 && toks[2] == 13);
    CHECK(memcmp(eng_kv_k(&kv, 0, 1), keys[2], sizeof keys[2]) == 0); /* k2 moved down */
    CHECK(memcmp(eng_kv_k(&kv, 0, 2), keys[3], sizeof keys[3]) == 0);
    CHECK_EQ_INT(*(uint16_t *)eng_kv_v(&kv, 0, 1), one + 2); /* and its value */
    CHECK_EQ_INT(eng_kvstream_shift(st), 1);                 /* new keys: original position = slot + 1 */
    memset(eng_kv_k(&kv, 0, 3), 0, KVD * sizeof(uint16_t));  /* k4, token 14 */
    toks[3] = 14;
    float q0[4] = {0, 0, 0, 0};
    a.q = q0;
    eng_kvstream_observe(st, &a, 0);
    CHECK_EQ_INT(eng_kvstream_evict_h2o(st, views, toks, B), 3);
    CHECK(toks[0] == 10 && toks[1] == 12 && toks[2] == 14); /* 13 gone */
    CHECK(memcmp(eng_kv_k(&kv, 0, 1), keys[2], sizeof keys[2]) == 0);
    /* the masses as worked out (recent 2: the tie goes to the oldest) */
    const float m[4] = {1.1929f, 1.1929f, 0.9490f, 0.5f};
    CHECK_EQ_INT(eng_kvstream_h2o_victim(m, 4, 1), 2);
    CHECK_EQ_INT(eng_kvstream_h2o_victim(m, 4, 2), 0);
    /* cut back to empty (a new prompt): the positions and masses start over */
    eng_kvstream_truncate(st, 0);
    CHECK_EQ_INT(eng_kvstream_shift(st), 0);
    CHECK_EQ_INT((int)eng_kvstream_evicted(st), 0);
    eng_kvstream_free(st);
}

/* H2O with a sliding layer (window 6) beside a global one, budget 4, recent
 * 1, one KV head; key 0 is the heavy hitter (mass 0.71 against 0.097 of keys
 * 1-3 after one query; later keys get no mass). Evictions 1 and 2 (next
 * positions 4, 5) drop positions 1 and 2 in both layers; eviction 3 (next
 * position 6): the global layer keeps position 0 and drops 4 (least mass,
 * 0 < 0.097), the sliding one drops position 0, which position 6 would not
 * see (6 - 0 >= 6), whatever its mass. Each layer's rows move in its own
 * view (the sliding one in views[1]). */
static void test_h2o_swa(void) {
    enum { B = 4, KVD = 2 };
    uint16_t pg[2][B * KVD * 2] = {{0}};
    void *pages[2][1] = {{pg[0]}, {pg[1]}};
    eng_kv_view kv[2];
    for (int v = 0; v < 2; v++) {
        eng_kv_view_init(&kv[v], B, 1, KVD, ENG_TYPE_F16, ENG_TYPE_F16);
        kv[v].pages = pages[v];
    }
    const eng_kv_view *const views[2] = {&kv[0], &kv[1]};
    const uint16_t two = 0x4000;
    for (int v = 0; v < 2; v++)
        for (int j = 0; j < B; j++) {
            uint16_t k[KVD] = {j == 0 ? two : 0, 0}, val[KVD] = {(uint16_t)(100 + j), 0}; /* tag: position */
            memcpy(eng_kv_k(&kv[v], 0, j), k, sizeof k);
            memcpy(eng_kv_v(&kv[v], 0, j), val, sizeof val);
        }
    eng_kvstream *st = NULL;
    util_err err;
    if (eng_kvstream_new_h2o(&st, B, 1, 2, 1, KVD, &err) || eng_kvstream_h2o_layers(st, 6, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        eng_kvstream_free(st);
        return;
    }
    eng_kvstream_h2o_layer(st, 1, 1, 1, 0); /* layer 1 slides, in views[1] as its layer 0 */
    float q[2] = {1, 0}, out[2];
    for (int l = 0; l < 2; l++) {
        eng_attn_args a = {.out = out,
                           .q = q,
                           .kv = &kv[l],
                           .layer = 0,
                           .n_tok = 1,
                           .pos0 = 3,
                           .n_head = 1,
                           .n_kv_head = 1,
                           .head_dim = KVD,
                           .scale = 1.0f};
        eng_kvstream_observe(st, &a, l);
    }
    int32_t toks[B] = {0, 1, 2, 3};
    for (int e = 0; e < 3; e++) {
        CHECK_EQ_INT(eng_kvstream_evict_h2o(st, views, toks, B), B - 1);
        toks[B - 1] = 4 + e;
        for (int v = 0; v < 2; v++) { /* the next key, at position 4 + e, in slot 3 */
            uint16_t k[KVD] = {0, 0}, val[KVD] = {(uint16_t)(104 + e), 0};
            memcpy(eng_kv_k(&kv[v], 0, B - 1), k, sizeof k);
            memcpy(eng_kv_v(&kv[v], 0, B - 1), val, sizeof val);
        }
    }
    static const int want[2][B] = {{0, 3, 5, 6}, {3, 4, 5, 6}};
    for (int l = 0; l < 2; l++)
        for (int j = 0; j < B; j++) {
            CHECK_MSG(eng_kvstream_h2o_pos(st, l, 0, j) == want[l][j],
                      "layer %d slot %d: position %d, want %d", l, j, eng_kvstream_h2o_pos(st, l, 0, j),
                      want[l][j]);
            if (j < B - 1)
                CHECK_MSG(*(uint16_t *)eng_kv_v(&kv[l], 0, j) == 100 + want[l][j],
                          "layer %d slot %d: row of %d", l, j, *(uint16_t *)eng_kv_v(&kv[l], 0, j) - 100);
        }
    CHECK(toks[0] == 0 && toks[1] == 3 && toks[2] == 5); /* layer 0's */
    eng_kvstream_free(st);
    /* a budget past the window is refused */
    CHECK_EQ_INT(eng_kvstream_new_h2o(&st, 8, 4, 2, 1, KVD, &err), UTIL_OK);
    CHECK_EQ_INT(eng_kvstream_h2o_layers(st, 6, &err), UTIL_EINVAL);
    CHECK_MSG(strstr(err.msg, "exceeds the sliding window of 6") != NULL, "%s", err.msg);
    eng_kvstream_free(st);
}

/* H2O on the model: below its budget it is the plain sequence (same logits,
 * bit for bit); past it, the cache stays at the budget, new keys are rotated
 * at their original positions (slot + evictions), and the logits stay finite. */
static void test_h2o_model(void) {
    eng_model_params hp = {.n_threads = 2,
                           .no_cache = 1,
                           .no_disk_cache = 1,
                           .kv_evict = ENG_KV_EVICT_H2O,
                           .kv_budget_tokens = 32};
    eng_model_params pp = {.n_threads = 2, .no_cache = 1, .no_disk_cache = 1};
    h2o_against_plain(NULL, &hp, &pp, 34, 32);
}

/* Option errors: exit status 2 (usage) or 1 (the engine refuses), each
 * message naming the option. */
static void test_cli(void) {
    static const struct {
        const char *args;
        int status;
        const char *says;
    } k_cases[] = {
        {"generate --kv-sinks 4 --prompt hello", 2, "'--kv-sinks' needs '--kv-window'"},
        {"generate --kv-window 0 --prompt hello", 2, "--kv-window"},
        {"generate --kv-window x --prompt hello", 2, "--kv-window"},
        {"generate --kv-sinks -1 --kv-window 8 --prompt hello", 2, "--kv-sinks"},
        {"generate --kv-window 64 --spec ngram --prompt hello", 2, "'--spec' does not combine"},
        {"generate --kv-sinks 4 --kv-window 100 --ctx-size 64 --threads 2 --prompt hello", 1,
         "--kv-sinks 4 + --kv-window 100 = 104 exceeds the context of 64"},
        {"perplexity -f x --kv-window 64", 2, "need --stream T"},
        {"perplexity -f x --stream 100", 2, "--stream needs --kv-window"},
        {"perplexity -f x --recompute 64", 2, "need --stream"},
        {"perplexity -f x --stream 100 --recompute 64 --kv-window 60", 2, "without --kv-window"},
        {"perplexity -f x --stream 100 --recompute 64 --stride 64", 2, "--stride 64 must be below"},
        {"perplexity -f x --stream 100 --kv-window 60 --ctx 64", 2, "--ctx is for chunks"},
        {"perplexity -f x --recall f --stream 100 --kv-window 60", 2, "--recall goes without --stream"},
        {"perplexity -f x --trials 3", 2, "--trials goes with --recall"},
        {"generate --kv-evict lru --prompt hello", 2, "'lru' is not a policy"},
        {"generate --kv-evict h2o --prompt hello", 2, "needs '--kv-budget-tokens B'"},
        {"generate --kv-budget-tokens 64 --prompt hello", 2, "need '--kv-evict h2o'"},
        {"generate --kv-evict h2o --kv-budget-tokens 64 --kv-window 32 --prompt hello", 2,
         "two eviction policies"},
        {"generate --kv-evict h2o --kv-budget-tokens 64 --kv-recent 64 --threads 2 --prompt hello", 1,
         "need 1 <= recent < budget"},
        {"generate --kv-evict h2o --kv-budget-tokens 64 --spec ngram --prompt hello", 2,
         "'--spec' does not combine"},
        /* refused before the device starts: the same message with or without a GPU or CUDA */
        {"generate --device cuda --kv-sinks 4 --kv-window 60 --prompt hello", 1,
         "--kv-window: StreamingLLM moves KV rows in host memory; the cuda backend cannot (use --device cpu)"},
        {"generate --device cuda:1 --kv-evict h2o --kv-budget-tokens 64 --prompt hello", 1,
         "--kv-evict h2o moves KV rows in host memory; the cuda backend cannot (use --device cpu)"},
    };
    proc_result e = proc_runf("CACHET_DEVICE=cuda %s/cachet generate --kv-window 60 --prompt hello",
                              proc_bin_dir());
    CHECK_MSG(e.status == 1 && strstr(e.err, "the cuda backend cannot"), "CACHET_DEVICE=cuda: %d %s",
              e.status, e.err);
    proc_result_free(&e);
    e = proc_runf("%s/cachet perplexity -f %s/README.md --device cuda --stream 100 --kv-window 60",
                  proc_bin_dir(), check_root());
    CHECK_MSG(e.status == 1 && strstr(e.err, "the cuda backend cannot"), "perplexity --device cuda: %d %s",
              e.status, e.err);
    proc_result_free(&e);
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
        proc_result r = proc_runf("%s/cachet %s", proc_bin_dir(), k_cases[i].args);
        CHECK_MSG(r.status == k_cases[i].status && strstr(r.err, k_cases[i].says),
                  "'%s': status %d (want %d), stderr: %s", k_cases[i].args, r.status, k_cases[i].status,
                  r.err);
        proc_result_free(&r);
    }
}

/* The CUDA refusal as the engine makes it, before any backend opens: by
 * device name (cuda, cuda:N) and policy; cpu and no policy pass. */
static void test_cuda_refused(void) {
    util_err err;
    eng_model_params p = {.device = "cuda", .kv_sinks = 4, .kv_window = 60};
    CHECK_EQ_INT(eng_model_stream_device_check(&p, &err), UTIL_EUNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "--kv-window") && strstr(err.msg, "cuda backend cannot"), "%s", err.msg);
    p = (eng_model_params){.device = "cuda:2", .kv_evict = ENG_KV_EVICT_H2O, .kv_budget_tokens = 64};
    CHECK_EQ_INT(eng_model_stream_device_check(&p, &err), UTIL_EUNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "--kv-evict h2o") && strstr(err.msg, "cuda backend cannot"), "%s", err.msg);
    p.device = "cpu";
    CHECK_EQ_INT(eng_model_stream_device_check(&p, &err), UTIL_OK);
    p = (eng_model_params){.device = "cuda"};
    CHECK_EQ_INT(eng_model_stream_device_check(&p, &err), UTIL_OK);
    CHECK_EQ_INT(eng_model_stream_device_check(NULL, &err), UTIL_OK);
}

/* Cell `col` (0: the first after the leading '|') of the markdown row at
 * `line`, into buf; "" when the row has fewer cells. */
static const char *md_cell(const char *line, int col, char *buf, size_t size) {
    const char *c = line;
    for (int i = 0; i <= col && c; i++) c = strchr(c + 1, '|');
    const char *end = c ? strchr(c + 1, '|') : NULL;
    const char *nl = c ? strchr(c + 1, '\n') : NULL;
    buf[0] = '\0';
    if (!c || !end || (nl && nl < end)) return buf;
    c++;
    while (*c == ' ') c++;
    size_t n = (size_t)(end - c);
    while (n > 0 && c[n - 1] == ' ') n--;
    if (n >= size) n = size - 1;
    memcpy(buf, c, n);
    buf[n] = '\0';
    return buf;
}

/* make bench-kv's one table at a small size (QUICK=1, SmolLM2 only): every
 * technique's row; the KV-type and eviction rows carry a PPL, a recall
 * count and (but the plain window, which is StreamingLLM's work) a decode
 * speed; MLA's rows say why they have no PPL. The ceiling scores the same
 * targets as a stream (ctx .. T-1), and the recall probe answers. */
static void test_bench(void) {
    char text[4096];
    snprintf(text, sizeof text, "%s/models/pride-and-prejudice.txt", check_root());
    FILE *f = fopen(text, "rb");
    if (!f) {
        CHECK_SKIP("models/pride-and-prejudice.txt is absent (make ppl-text)");
        return;
    }
    fclose(f);
    proc_result r = proc_runf("cd %s && QUICK=1 GEMMA= BIN=%s SMOL=%s sh scripts/bench-kv.sh", check_root(),
                              proc_bin_dir(), check_model_path());
    CHECK_EQ_INT(r.status, 0);
    static const char *const k_rows[] = {"KV type f16",          "KV type q8_0", "plain window",
                                         "StreamingLLM",         "H2O",          "recompute ceiling",
                                         "MLA (absorbed latent)"};
    int found[7] = {0};
    for (const char *p = r.out; (p = strchr(p, '\n')) != NULL; p++) {
        char tech[64], ppl[256], rec[256], tps[256];
        if (p[1] != '|' || p[2] == '-') continue;
        md_cell(p + 1, -1, tech, sizeof tech);
        md_cell(p + 1, 4, ppl, sizeof ppl);
        md_cell(p + 1, 6, rec, sizeof rec);
        md_cell(p + 1, 8, tps, sizeof tps);
        for (int i = 0; i < 7; i++) {
            if (strcmp(tech, k_rows[i]) != 0) continue;
            found[i]++;
            if (i == 6) {
                CHECK_MSG(strstr(ppl, "no PPL") != NULL, "%s: PPL cell '%s'", tech, ppl);
                continue;
            }
            CHECK_MSG(ppl[0] >= '1' && ppl[0] <= '9' && strchr(ppl, '('), "%s: PPL cell '%s'", tech, ppl);
            if (i != 5)
                CHECK_MSG(strcmp(rec, "2/2") == 0 || strcmp(rec, "1/2") == 0 || strcmp(rec, "0/2") == 0,
                          "%s: recall cell '%s'", tech, rec);
            if (i != 2 && i != 5) CHECK_MSG(tps[0] >= '0' && tps[0] <= '9', "%s: speed cell '%s'", tech, tps);
        }
    }
    for (int i = 0; i < 7; i++)
        CHECK_MSG(found[i] == (i == 6 ? 2 : 1), "row '%s' %d times:\n%s%s", k_rows[i], found[i], r.out,
                  r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet perplexity -f %s --stream 96 --recompute 32 --stride 10 --threads 2 --json",
                  proc_bin_dir(), text);
    CHECK_MSG(r.status == 0 && strstr(r.out, "\"scored\":64,"), "the ceiling scores targets 32..95: %s%s",
              r.out, r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet perplexity -f %s --recall %s/scripts/recall-facts.tsv --ctx 128 --trials 2 "
                  "--kv-evict h2o --kv-budget-tokens 64 --threads 2 --json",
                  proc_bin_dir(), text, check_root());
    CHECK_MSG(r.status == 0 && strstr(r.out, "\"trials\":2") && strstr(r.out, "\"accuracy\":"), "%s%s", r.out,
              r.err);
    proc_result_free(&r);
}

void test_kvevict(void) {
    CHECK_CASE(positions) test_positions();
    CHECK_CASE(gemma3) test_gemma3();
    CHECK_CASE(private) test_private();
    CHECK_CASE(h2o_order) test_h2o_order();
    CHECK_CASE(h2o_model) test_h2o_model();
    CHECK_CASE(h2o_swa) test_h2o_swa();
    CHECK_CASE(cli) test_cli();
    CHECK_CASE(cuda_refused) test_cuda_refused();
    CHECK_CASE(bench) test_bench();
}
