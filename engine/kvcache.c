/* engine/kvcache.c: the page pool and radix tree of the prefix cache (see
 * kvcache.h). One mutex guards everything; the work under it is pointer
 * chasing and small copies, never model computation. Disk reads happen under
 * the lock too (a miss in memory is about to cost a prefill anyway). Pages
 * live in backend memory (host or GPU): this file never dereferences them;
 * the disk tier goes through a host staging page. A model with sliding
 * layers has two page kinds (two pools under one byte budget); the sliding
 * one is kept in the tree only where a hit can use it (marks, below). */
#include "kvcache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvdisk.h"

struct eng_kv_node {
    eng_kv_node *parent, *child, *next; /* first child, next sibling */
    eng_kv_node *all_prev, *all_next;   /* list of every node (eviction scan) */
    int32_t tokens[ENG_KV_PAGE_TOKENS];
    int ntok;
    int depth; /* page index: positions depth*P .. */
    int pins;
    uint64_t last_use;
    uint64_t hash; /* disk chain hash */
    void *page;
    void *spage; /* the sliding layers' page, or NULL (dropped, or no sliding layers) */
    int spins;   /* sequences mapping spage (each also pins the node) */
    int keep;    /* marked ends whose window covers this node */
    int mark;    /* 1: a commit ended here (see eng_kvcache_mark_end) */
};

/* One page kind: its free stack (room for every page of the kind, so
 * freeing never fails) and counts. */
typedef struct kv_pool {
    void **free;
    uint64_t n_free, cap;
    uint64_t total;  /* allocated from the system (in use + free + cached) */
    uint64_t cached; /* held by tree nodes */
    size_t bytes;    /* of one page */
} kv_pool;

struct eng_kvcache {
    eng_kvcache_params p;
    pthread_mutex_t mu;
    eng_kv_node root; /* sentinel: no page, depth -1 */
    eng_kv_node *all; /* every real node */
    kv_pool pool[2];  /* [0]: pages (every layer, or the global ones), [1]: sliding pages */
    int swa;          /* 1: pool[1] is used */
    void *staging;    /* one host page for the disk tier (the larger kind) */
    uint64_t budget;  /* bytes, at least two pages of each kind */
    uint64_t clock;
    eng_cache_stats st;
    eng_kvdisk *disk;
    eng_kvdisk *swa_disk; /* sliding pages: files of their own (<dir>/swa) */
};

enum { P = ENG_KV_PAGE_TOKENS };

/* Sliding page files: version 1 of their layout, under the model's fingerprint. */
static uint64_t swa_fingerprint(const eng_kvcache *c) {
    return (c->p.fingerprint ^ 0x5357413176310000ull) * 0x100000001B3ull; /* "SWA1v1" */
}

static size_t page_bytes(const eng_kvcache *c) { return c->pool[0].bytes; }
size_t eng_kvcache_page_bytes(const eng_kvcache *c) { return page_bytes(c); }
size_t eng_kvcache_swa_page_bytes(const eng_kvcache *c) { return c->pool[1].bytes; }
int eng_kvcache_reuse(const eng_kvcache *c) { return c->p.reuse; }
int eng_kvcache_has_swa(const eng_kvcache *c) { return c->swa; }

int eng_kvcache_swa_first(const eng_kvcache *c, int pos) {
    int lo = pos - c->p.window + 1;
    return lo > 0 ? lo / P : 0;
}

/* Page memory: the backend's, or the host's when the cache has no backend. */
static void *mem_alloc(eng_kvcache *c, size_t bytes) {
    if (c->p.be) return c->p.be->ops->alloc(c->p.be, bytes);
    void *p = NULL;
    return posix_memalign(&p, 64, bytes) ? NULL : p;
}

static void mem_release(eng_kvcache *c, void *page) {
    if (c->p.be)
        c->p.be->ops->release(c->p.be, page);
    else
        free(page);
}

static int mem_to_host(eng_kvcache *c, void *dst, const void *page, size_t bytes) {
    if (!c->p.be) {
        memcpy(dst, page, bytes);
        return 0;
    }
    return c->p.be->ops->to_host(c->p.be, dst, page, bytes, NULL);
}

static int mem_to_dev(eng_kvcache *c, void *page, const void *src, size_t bytes) {
    if (!c->p.be) {
        memcpy(page, src, bytes);
        return 0;
    }
    return c->p.be->ops->to_dev(c->p.be, page, src, bytes, NULL);
}

/* The sliding pages' disk tier: <dir>/swa, files named by a chain of their
 * own (fingerprint salted, parent = the node's chain hash), a quarter of the
 * disk budget. Its failure only turns it off. */
static int swa_disk_open(eng_kvcache *c, const eng_kvdisk_params *dp, util_err *err) {
    const char *dir = eng_kvdisk_dir(c->disk);
    size_t n = strlen(dir) + 5;
    char *sub = malloc(n);
    if (!sub) return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
    snprintf(sub, n, "%s/swa", dir);
    eng_kvdisk_params sp = *dp;
    sp.dir = sub;
    sp.fingerprint = swa_fingerprint(c);
    sp.budget_bytes = (dp->budget_bytes ? dp->budget_bytes : (2ull << 30)) / 4;
    sp.page_bytes = c->pool[1].bytes;
    int rc = eng_kvdisk_open(&c->swa_disk, &sp, err);
    free(sub);
    return rc;
}

int eng_kvcache_new(eng_kvcache **out, const eng_kvcache_params *p, util_err *err) {
    *out = NULL;
    eng_kvcache *c = calloc(1, sizeof *c);
    if (!c) return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
    c->p = *p;
    c->p.disk_dir = NULL; /* not kept: kvdisk copies what it needs */
    pthread_mutex_init(&c->mu, NULL);
    c->root.depth = -1;
    c->pool[0].bytes = p->page_bytes;
    c->pool[1].bytes = p->swa_page_bytes;
    c->swa = p->swa_page_bytes > 0 && p->window > 0;
    c->budget = p->budget_bytes;
    if (c->budget < 2 * (c->pool[0].bytes + c->pool[1].bytes))
        c->budget = 2 * (c->pool[0].bytes + c->pool[1].bytes);
    if (p->reuse && p->disk) {
        size_t stage = c->pool[0].bytes > c->pool[1].bytes ? c->pool[0].bytes : c->pool[1].bytes;
        if (!(c->staging = malloc(stage))) {
            eng_kvcache_free(c);
            return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
        }
        eng_kvdisk_params dp = {.dir = p->disk_dir,
                                .fingerprint = p->fingerprint,
                                .budget_bytes = p->disk_budget,
                                .page_bytes = page_bytes(c),
                                .debug = p->debug};
        int rc = eng_kvdisk_open(&c->disk, &dp, err);
        if (rc == UTIL_OK && c->swa && eng_kvdisk_enabled(c->disk)) rc = swa_disk_open(c, &dp, err);
        if (rc) {
            eng_kvcache_free(c);
            return rc;
        }
    }
    *out = c;
    return UTIL_OK;
}

static void node_unlink_all(eng_kvcache *c, eng_kv_node *n) {
    if (n->all_prev)
        n->all_prev->all_next = n->all_next;
    else
        c->all = n->all_next;
    if (n->all_next) n->all_next->all_prev = n->all_prev;
}

void eng_kvcache_free(eng_kvcache *c) {
    if (!c) return;
    eng_kvdisk_close(c->disk);
    eng_kvdisk_close(c->swa_disk);
    for (eng_kv_node *n = c->all, *next; n; n = next) {
        next = n->all_next;
        mem_release(c, n->page);
        if (n->spage) mem_release(c, n->spage);
        free(n);
    }
    for (int k = 0; k < 2; k++) {
        for (uint64_t i = 0; i < c->pool[k].n_free; i++) mem_release(c, c->pool[k].free[i]);
        free(c->pool[k].free);
    }
    free(c->staging);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* --- pages and eviction ------------------------------------------------- */

static void page_free_locked(eng_kvcache *c, int kind, void *page) {
    kv_pool *k = &c->pool[kind];
    k->free[k->n_free++] = page; /* cap >= total > n_free */
}

/* The position after a node's last token. */
static int node_end(const eng_kv_node *n) { return n->depth * P + n->ntok; }

/* Drops a node's sliding page when nothing needs it any more. */
static void swa_maybe_drop(eng_kvcache *c, eng_kv_node *n) {
    if (!n->spage || n->spins > 0 || n->keep > 0) return;
    page_free_locked(c, 1, n->spage);
    n->spage = NULL;
    c->pool[1].cached--;
}

/* Adds delta to keep on the nodes holding the window of an end at position
 * `end` (positions end - window .. end - 1: a hit at end or at end - 1 can
 * resume there), from n (the node holding end - 1, or an ancestor) upward. */
static void keep_add(eng_kvcache *c, eng_kv_node *n, int end, int delta) {
    int lo = end - c->p.window > 0 ? (end - c->p.window) / P : 0;
    for (; n && n != &c->root && n->depth >= lo; n = n->parent) {
        n->keep += delta;
        if (delta < 0) swa_maybe_drop(c, n);
    }
}

/* Removes a leaf node with no pins from the tree; its pages go to the pools. */
static void node_remove(eng_kvcache *c, eng_kv_node *n) {
    eng_kv_node **pp = &n->parent->child;
    while (*pp != n) pp = &(*pp)->next;
    *pp = n->next;
    node_unlink_all(c, n);
    if (n->mark) keep_add(c, n->parent, node_end(n), -1);
    page_free_locked(c, 0, n->page);
    c->pool[0].cached--;
    if (n->spage) {
        page_free_locked(c, 1, n->spage);
        c->pool[1].cached--;
    }
    free(n);
}

/* The least recently used unpinned leaf (ties: deepest first), or NULL. */
static eng_kv_node *evict_candidate(eng_kvcache *c) {
    eng_kv_node *best = NULL;
    for (eng_kv_node *n = c->all; n; n = n->all_next) {
        if (n->pins || n->child) continue;
        if (!best || n->last_use < best->last_use ||
            (n->last_use == best->last_use && n->depth > best->depth))
            best = n;
    }
    return best;
}

static uint64_t bytes_total(const eng_kvcache *c) {
    return c->pool[0].total * c->pool[0].bytes + c->pool[1].total * c->pool[1].bytes;
}

static int page_alloc_locked(eng_kvcache *c, int kind, void **out, util_err *err) {
    kv_pool *k = &c->pool[kind], *other = &c->pool[!kind];
    while (!k->n_free && bytes_total(c) + k->bytes > c->budget) {
        if (c->swa && other->n_free) { /* pooled pages of the other kind make room */
            mem_release(c, other->free[--other->n_free]);
            other->total--;
            continue;
        }
        eng_kv_node *victim = evict_candidate(c);
        if (!victim)
            return util_err_set(
                err, UTIL_ENOMEM,
                "kv cache budget of %llu bytes is in use by live sequences; raise --kv-budget",
                (unsigned long long)c->p.budget_bytes);
        node_remove(c, victim);
        c->st.evictions++;
    }
    if (k->n_free) {
        *out = k->free[--k->n_free];
        return UTIL_OK;
    }
    /* room to pool every page of the kind, so freeing never fails */
    if (k->cap < k->total + 1) {
        uint64_t cap = k->cap ? k->cap * 2 : 64;
        void **fp = realloc(k->free, (size_t)cap * sizeof *fp);
        if (!fp) return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
        k->free = fp;
        k->cap = cap;
    }
    void *p = mem_alloc(c, k->bytes);
    if (!p)
        return util_err_set(err, UTIL_ENOMEM, "kv cache: out of %s memory for a page of %zu bytes",
                            c->p.be ? c->p.be->ops->name : "host", k->bytes);
    k->total++;
    *out = p;
    return UTIL_OK;
}

int eng_kvcache_page_alloc(eng_kvcache *c, void **out, util_err *err) {
    pthread_mutex_lock(&c->mu);
    int rc = page_alloc_locked(c, 0, out, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void eng_kvcache_page_free(eng_kvcache *c, void *page) {
    if (!page) return;
    pthread_mutex_lock(&c->mu);
    page_free_locked(c, 0, page);
    pthread_mutex_unlock(&c->mu);
}

int eng_kvcache_swa_alloc(eng_kvcache *c, void **out, util_err *err) {
    pthread_mutex_lock(&c->mu);
    int rc = page_alloc_locked(c, 1, out, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void eng_kvcache_swa_free(eng_kvcache *c, void *page) {
    if (!page) return;
    pthread_mutex_lock(&c->mu);
    page_free_locked(c, 1, page);
    pthread_mutex_unlock(&c->mu);
}

/* --- matching ----------------------------------------------------------- */

static int common_prefix(const int32_t *a, int na, const int32_t *b, int nb) {
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

static eng_kv_node *node_new(eng_kvcache *c, eng_kv_node *parent, const int32_t *toks, int ntok, void *page) {
    eng_kv_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->parent = parent;
    n->next = parent->child;
    parent->child = n;
    n->all_next = c->all;
    if (c->all) c->all->all_prev = n;
    c->all = n;
    memcpy(n->tokens, toks, (size_t)ntok * sizeof *toks);
    n->ntok = ntok;
    n->depth = parent->depth + 1;
    n->page = page;
    n->last_use = ++c->clock;
    n->hash = eng_kvdisk_hash(c->p.fingerprint, parent == &c->root ? 0 : parent->hash, toks, ntok);
    c->pool[0].cached++;
    return n;
}

/* On a memory miss below `at`, tries the disk tier for the next page of
 * toks (longest span first). Returns a new pinned-able node or NULL. */
static eng_kv_node *disk_lookup(eng_kvcache *c, eng_kv_node *at, const int32_t *toks, int avail) {
    if (!c->disk || !eng_kvdisk_enabled(c->disk) || avail <= 0) return NULL;
    uint64_t parent_hash = at == &c->root ? 0 : at->hash;
    void *page = NULL;
    for (int k = avail < P ? avail : P; k >= 1; k--) {
        uint64_t h = eng_kvdisk_hash(c->p.fingerprint, parent_hash, toks, k);
        if (!page && page_alloc_locked(c, 0, &page, NULL)) return NULL;
        if (eng_kvdisk_get(c->disk, h, parent_hash, toks, k, c->staging) &&
            mem_to_dev(c, page, c->staging, page_bytes(c)) == 0) {
            eng_kv_node *n = node_new(c, at, toks, k, page);
            if (!n) page_free_locked(c, 0, page);
            return n;
        }
    }
    if (page) page_free_locked(c, 0, page);
    return NULL;
}

/* The chain hash of a node's sliding page file. */
static uint64_t swa_hash(const eng_kvcache *c, const eng_kv_node *n) {
    return eng_kvdisk_hash(swa_fingerprint(c), n->hash, n->tokens, n->ntok);
}

/* Makes n's sliding page present: held, or read from its disk tier. */
static int swa_present(eng_kvcache *c, eng_kv_node *n) {
    if (n->spage) return 1;
    if (!c->swa_disk || !eng_kvdisk_enabled(c->swa_disk)) return 0;
    void *page;
    if (page_alloc_locked(c, 1, &page, NULL)) return 0;
    if (eng_kvdisk_get(c->swa_disk, swa_hash(c, n), n->hash, n->tokens, n->ntok, c->staging) &&
        mem_to_dev(c, page, c->staging, c->pool[1].bytes) == 0) {
        n->spage = page;
        c->pool[1].cached++;
        return 1;
    }
    page_free_locked(c, 1, page);
    return 0;
}

/* Caps a match of `tokens` over nodes at the longest point whose window's
 * sliding pages are present, and maps those (spins). Returns the new length:
 * a point before the last missing page, page-aligned; 0 in the worst case. */
static int swa_cap(eng_kvcache *c, eng_kv_node **nodes, int tokens) {
    while (tokens > 0) {
        int lo = eng_kvcache_swa_first(c, tokens), hi = (tokens - 1) / P, missing = -1;
        for (int i = hi; i >= lo; i--) {
            if (!swa_present(c, nodes[i])) {
                missing = i;
                break;
            }
            nodes[i]->spins++; /* held while the rest loads (a load may evict) */
        }
        if (missing < 0) return tokens;
        for (int i = hi; i > missing; i--) {
            nodes[i]->spins--;
            swa_maybe_drop(c, nodes[i]);
        }
        tokens = missing * P;
    }
    return 0;
}

void eng_kvcache_match(eng_kvcache *c, const int32_t *toks, int n, int max_tokens, eng_kv_node **nodes,
                       eng_kv_match *m) {
    memset(m, 0, sizeof *m);
    m->nodes = nodes;
    if (!c->p.reuse) return;
    if (max_tokens > n) max_tokens = n;
    pthread_mutex_lock(&c->mu);
    eng_kv_node *at = &c->root;
    int pos = 0, first_disk = -1;
    while (pos < max_tokens) {
        /* Compare against the whole request (a cached page may hold more of
         * it than we may use), then cap what is used at max_tokens. */
        const int32_t *rest = toks + pos;
        int avail = n - pos, cap = max_tokens - pos;
        eng_kv_node *best = NULL;
        int best_len = 0;
        for (eng_kv_node *ch = at->child; ch; ch = ch->next) {
            int l = common_prefix(ch->tokens, ch->ntok, rest, avail);
            if (l > best_len) {
                best = ch;
                best_len = l;
            }
        }
        int from_disk = 0;
        if (best_len < P && best_len < avail) {
            /* Memory gave less than a full page here: the disk may have more. */
            eng_kv_node *d = disk_lookup(c, at, rest, avail);
            if (d && d->ntok > best_len) {
                best = d;
                best_len = d->ntok;
                from_disk = 1;
            }
        }
        if (!best) break;
        int used = best_len < cap ? best_len : cap;
        best->pins++;
        best->last_use = ++c->clock;
        /* a node read from disk is new: every node after it is too */
        if (from_disk && first_disk < 0) first_disk = m->n_nodes;
        nodes[m->n_nodes++] = best;
        pos += used;
        if (used < P || best->ntok < P) break; /* ends inside this page */
        at = best;
    }
    if (c->swa && pos > 0) {
        pos = swa_cap(c, nodes, pos);
        int keep = (pos + P - 1) / P;
        while (m->n_nodes > keep) nodes[--m->n_nodes]->pins--;
    }
    m->tokens = pos;
    m->swa_first = c->swa && pos > 0 ? eng_kvcache_swa_first(c, pos) : m->n_nodes;
    if (first_disk >= 0 && pos > first_disk * P) m->from_disk = pos - first_disk * P;
    pthread_mutex_unlock(&c->mu);
}

void eng_kvcache_unpin(eng_kvcache *c, eng_kv_node *node) {
    if (!node) return;
    pthread_mutex_lock(&c->mu);
    if (node->pins > 0) node->pins--;
    pthread_mutex_unlock(&c->mu);
}

void *eng_kvcache_node_page(const eng_kv_node *node) { return node->page; }
void *eng_kvcache_node_swa_page(const eng_kv_node *node) { return node->spage; }
int eng_kvcache_node_ntok(const eng_kv_node *node) { return node->ntok; }

/* --- insertion ---------------------------------------------------------- */

eng_kv_node *eng_kvcache_insert(eng_kvcache *c, eng_kv_node *parent, const int32_t *toks, int ntok,
                                void *page) {
    if (!c->p.reuse || ntok < 1 || ntok > P) return NULL;
    pthread_mutex_lock(&c->mu);
    eng_kv_node *at = parent ? parent : &c->root;
    eng_kv_node *n = NULL;
    for (eng_kv_node *ch = at->child; ch; ch = ch->next)
        if (ch->ntok == ntok && memcmp(ch->tokens, toks, (size_t)ntok * sizeof *toks) == 0) {
            n = ch;
            break;
        }
    if (n) {
        page_free_locked(c, 0, page);
    } else {
        n = node_new(c, at, toks, ntok, page);
        if (!n) {
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        if (c->disk && mem_to_host(c, c->staging, page, page_bytes(c)) == 0)
            eng_kvdisk_put(c->disk, n->hash, at == &c->root ? 0 : at->hash, toks, ntok, c->staging);
    }
    n->pins++;
    n->last_use = ++c->clock;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* --- sliding pages -------------------------------------------------------- */

void *eng_kvcache_give_swa(eng_kvcache *c, eng_kv_node *node, void *page) {
    pthread_mutex_lock(&c->mu);
    if (node->spage) {
        page_free_locked(c, 1, page);
    } else {
        node->spage = page;
        c->pool[1].cached++;
        if (c->swa_disk && mem_to_host(c, c->staging, page, c->pool[1].bytes) == 0)
            eng_kvdisk_put(c->swa_disk, swa_hash(c, node), node->hash, node->tokens, node->ntok, c->staging);
    }
    node->spins++;
    void *sp = node->spage;
    pthread_mutex_unlock(&c->mu);
    return sp;
}

void eng_kvcache_swa_unpin(eng_kvcache *c, eng_kv_node *node) {
    if (!node) return;
    pthread_mutex_lock(&c->mu);
    if (node->spins > 0) node->spins--;
    swa_maybe_drop(c, node);
    pthread_mutex_unlock(&c->mu);
}

/* Whether a (a leaf, or a node on the path) ends a prefix of the path
 * through child c of a's parent: same parent, a's tokens a prefix of c's. */
static int on_path(const eng_kv_node *a, const eng_kv_node *c) {
    return a->ntok <= c->ntok && memcmp(a->tokens, c->tokens, (size_t)a->ntok * sizeof *a->tokens) == 0;
}

/* The marked ends before x on its path (ancestors, and siblings of a node on
 * the path whose tokens are a prefix of it: a prompt that ended inside a
 * page) are visited deepest first; the first is kept, the others unmarked. */
static void unmark_older(eng_kvcache *c, eng_kv_node *x) {
    int seen = 0;
    for (eng_kv_node *on = x; on != &c->root; on = on->parent) {
        if (on != x && on->mark && seen++) {
            on->mark = 0;
            keep_add(c, on, node_end(on), -1);
        }
        for (int below = on->ntok;;) { /* ends inside on's page, longest first */
            eng_kv_node *best = NULL;
            for (eng_kv_node *y = on->parent->child; y; y = y->next)
                if (y != on && y->mark && y->ntok < below && on_path(y, on) &&
                    (!best || y->ntok > best->ntok))
                    best = y;
            if (!best) break;
            below = best->ntok;
            if (seen++) {
                best->mark = 0;
                keep_add(c, best, node_end(best), -1);
            }
        }
    }
}

void eng_kvcache_mark_end(eng_kvcache *c, eng_kv_node *node) {
    if (!c->swa || !node) return;
    pthread_mutex_lock(&c->mu);
    if (!node->mark) {
        node->mark = 1;
        keep_add(c, node, node_end(node), 1);
        unmark_older(c, node);
    }
    pthread_mutex_unlock(&c->mu);
}

/* --- stats -------------------------------------------------------------- */

void eng_kvcache_count_query(eng_kvcache *c, int queried, int hit, int hit_disk) {
    pthread_mutex_lock(&c->mu);
    c->st.queries += (uint64_t)queried;
    c->st.hits += (uint64_t)hit;
    c->st.hits_disk += (uint64_t)hit_disk;
    pthread_mutex_unlock(&c->mu);
}

eng_cache_stats eng_kvcache_get_stats(eng_kvcache *c) {
    pthread_mutex_lock(&c->mu);
    eng_cache_stats s = c->st;
    s.pages_cached = c->pool[0].cached;
    s.pages_in_use = c->pool[0].total - c->pool[0].n_free;
    s.swa_pages_cached = c->pool[1].cached;
    s.swa_pages_in_use = c->pool[1].total - c->pool[1].n_free;
    s.swa_page_bytes = c->pool[1].bytes;
    s.bytes_in_use = s.pages_in_use * page_bytes(c) + s.swa_pages_in_use * c->pool[1].bytes;
    s.budget_bytes = c->p.budget_bytes;
    if (c->disk) {
        eng_kvdisk_stats d = eng_kvdisk_get_stats(c->disk);
        s.disk_reads = d.reads;
        s.disk_writes = d.writes;
        s.disk_corrupt = d.corrupt;
    }
    if (c->swa_disk) {
        eng_kvdisk_stats d = eng_kvdisk_get_stats(c->swa_disk);
        s.disk_reads += d.reads;
        s.disk_writes += d.writes;
        s.disk_corrupt += d.corrupt;
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

void eng_kvcache_flush(eng_kvcache *c) {
    if (c && c->disk) eng_kvdisk_flush(c->disk);
    if (c && c->swa_disk) eng_kvdisk_flush(c->swa_disk);
}
