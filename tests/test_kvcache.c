/* tests/test_kvcache.c: the prefix tree and page pool on their own (no
 * model): longest match at token granularity, partial pages, pins, LRU
 * eviction with deepest-first ties, budget exhaustion, duplicate inserts. */
#include <stdlib.h>
#include <string.h>

#include "../engine/kvcache.h"
#include "../engine/model_impl.h"
#include "check.h"

enum { P = ENG_KV_PAGE_TOKENS, ELEMS = 64 };

static eng_kvcache *new_cache(int pages) {
    eng_kvcache_params p = {.page_bytes = ELEMS * 2,
                            .fingerprint = 42,
                            .budget_bytes = (uint64_t)pages * ELEMS * 2,
                            .reuse = 1,
                            .disk = 0};
    eng_kvcache *c = NULL;
    util_err err;
    CHECK(eng_kvcache_new(&c, &p, &err) == 0);
    return c;
}

/* Inserts toks as a chain of pages (each filled with its page index + tag)
 * and unpins them; returns the number of pages. */
static int insert_chain(eng_kvcache *c, const int32_t *toks, int n, uint16_t tag) {
    eng_kv_node *parent = NULL;
    int pages = 0;
    for (int i = 0; i < n; i += P, pages++) {
        void *page;
        util_err err;
        if (eng_kvcache_page_alloc(c, &page, &err)) return -1;
        uint16_t *pg = page;
        for (int k = 0; k < ELEMS; k++) pg[k] = (uint16_t)(tag + pages);
        int ntok = n - i < P ? n - i : P;
        eng_kv_node *node = eng_kvcache_insert(c, parent, toks + i, ntok, pg);
        if (parent) eng_kvcache_unpin(c, parent);
        parent = node;
    }
    eng_kvcache_unpin(c, parent);
    return pages;
}

static int match(eng_kvcache *c, const int32_t *toks, int n, int max, eng_kv_node **path, int *nodes) {
    eng_kv_match m;
    eng_kvcache_match(c, toks, n, max, path, &m);
    *nodes = m.n_nodes;
    return m.tokens;
}

static void unpin_all(eng_kvcache *c, eng_kv_node **path, int n) {
    for (int i = 0; i < n; i++) eng_kvcache_unpin(c, path[i]);
}

static void test_basics(void) {
    eng_kvcache *c = new_cache(64);
    if (!c) return;
    int32_t a[100], b[100];
    for (int i = 0; i < 100; i++) a[i] = b[i] = 1000 + i;
    b[40] = 7; /* b diverges from a inside page 2 */
    eng_kv_node *path[16];
    int nn;

    CHECK_EQ_INT(match(c, a, 100, 99, path, &nn), 0);
    CHECK_EQ_INT(insert_chain(c, a, 50, 100), 4); /* 3 full pages + a 2-token page */

    /* Exact prefix, token granular, and capped by max_tokens. */
    CHECK_EQ_INT(match(c, a, 100, 99, path, &nn), 50);
    CHECK_EQ_INT(nn, 4);
    CHECK_EQ_INT(eng_kvcache_node_ntok(path[3]), 2);
    CHECK_EQ_INT(((const uint16_t *)eng_kvcache_node_page(path[1]))[0], 101);
    unpin_all(c, path, nn);
    CHECK_EQ_INT(match(c, a, 100, 37, path, &nn), 37);
    CHECK_EQ_INT(nn, 3);
    unpin_all(c, path, nn);
    CHECK_EQ_INT(match(c, b, 100, 99, path, &nn), 40); /* ends inside page 2 */
    CHECK_EQ_INT(nn, 3);
    unpin_all(c, path, nn);
    CHECK_EQ_INT(match(c, a, 20, 19, path, &nn), 19);
    unpin_all(c, path, nn);

    /* A longer chain sharing the first 3 pages: the longest child wins. */
    CHECK_EQ_INT(insert_chain(c, a, 100, 200), 7);
    CHECK_EQ_INT(match(c, a, 100, 99, path, &nn), 99);
    unpin_all(c, path, nn);

    /* Duplicate insert of an equal page returns the existing node. */
    void *pg;
    util_err err;
    CHECK(eng_kvcache_page_alloc(c, &pg, &err) == 0);
    eng_kv_node *dup = eng_kvcache_insert(c, NULL, a, P, pg);
    CHECK(((const uint16_t *)eng_kvcache_node_page(dup))[0] == 100); /* the first chain's page */
    eng_kvcache_unpin(c, dup);

    eng_cache_stats st = eng_kvcache_get_stats(c);
    CHECK_EQ_INT(st.pages_cached, 8); /* 4 + 4 new (pages 3..6 of chain 2 + ... ) */
    eng_kvcache_free(c);

    /* Eviction: budget of 6 pages. */
    c = new_cache(6);
    int32_t x[32], y[32], z[48];
    for (int i = 0; i < 32; i++) x[i] = i, y[i] = 500 + i;
    for (int i = 0; i < 48; i++) z[i] = 900 + i;
    insert_chain(c, x, 32, 0);                        /* 2 pages, oldest */
    insert_chain(c, y, 32, 10);                       /* 2 pages */
    CHECK_EQ_INT(match(c, x, 32, 31, path, &nn), 31); /* touch x: y is now least recent */
    unpin_all(c, path, nn);
    insert_chain(c, z, 48, 20); /* needs 3 pages: 2 free, then evicts y's leaf */
    st = eng_kvcache_get_stats(c);
    CHECK_EQ_INT(st.evictions, 1);
    CHECK_EQ_INT(match(c, x, 32, 31, path, &nn), 31);
    unpin_all(c, path, nn);
    CHECK_EQ_INT(match(c, y, 32, 31, path, &nn), 16); /* its deeper page went first */
    unpin_all(c, path, nn);

    /* Pinned pages are never evicted; when all are pinned, allocation fails. */
    eng_kv_node *pins[3][4];
    int pn[3];
    match(c, x, 32, 31, pins[0], &pn[0]);
    match(c, y, 32, 31, pins[1], &pn[1]);
    match(c, z, 48, 47, pins[2], &pn[2]);
    void *extra;
    int rc = eng_kvcache_page_alloc(c, &extra, &err);
    CHECK_EQ_INT(rc, UTIL_ENOMEM);
    CHECK(strstr(err.msg, "--kv-budget") != NULL);
    for (int i = 0; i < 3; i++) unpin_all(c, pins[i], pn[i]);
    CHECK_EQ_INT(eng_kvcache_page_alloc(c, &extra, &err), 0);
    eng_kvcache_page_free(c, extra);
    eng_kvcache_free(c);

    /* reuse off: nothing is matched or inserted. */
    eng_kvcache_params p = {.page_bytes = ELEMS * 2, .budget_bytes = 1 << 20, .reuse = 0};
    CHECK(eng_kvcache_new(&c, &p, &err) == 0);
    CHECK(eng_kvcache_page_alloc(c, &pg, &err) == 0);
    CHECK(eng_kvcache_insert(c, NULL, x, P, pg) == NULL);
    eng_kvcache_page_free(c, pg);
    CHECK_EQ_INT(match(c, x, 32, 31, path, &nn), 0);
    eng_kvcache_free(c);
}

void test_kvcache(void) { CHECK_CASE(basics) test_basics(); }
