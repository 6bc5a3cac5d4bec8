/* engine/kvcache.c: the page pool and radix tree of the prefix cache (see
 * kvcache.h). One mutex guards everything; the work under it is pointer
 * chasing and small copies, never model computation. Disk reads happen under
 * the lock too (a miss in memory is about to cost a prefill anyway). Pages
 * live in backend memory (host or GPU): this file never dereferences them;
 * the disk tier goes through a host staging page. */
#include "kvcache.h"

#include <pthread.h>
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
};

struct eng_kvcache {
    eng_kvcache_params p;
    pthread_mutex_t mu;
    eng_kv_node root;  /* sentinel: no page, depth -1 */
    eng_kv_node *all;  /* every real node */
    void **free_pages; /* stack of pooled pages (pages are never written here) */
    uint64_t n_free, free_cap;
    void *staging;         /* one host page for the disk tier */
    uint64_t pages_total;  /* allocated from the system (in use + free + cached) */
    uint64_t pages_cached; /* held by tree nodes */
    uint64_t max_pages;
    uint64_t clock;
    eng_cache_stats st;
    eng_kvdisk *disk;
};

enum { P = ENG_KV_PAGE_TOKENS };

static size_t page_bytes(const eng_kvcache *c) { return c->p.page_bytes; }
size_t eng_kvcache_page_bytes(const eng_kvcache *c) { return page_bytes(c); }
int eng_kvcache_reuse(const eng_kvcache *c) { return c->p.reuse; }

/* Page memory: the backend's, or the host's when the cache has no backend. */
static void *mem_alloc(eng_kvcache *c) {
    if (c->p.be) return c->p.be->ops->alloc(c->p.be, page_bytes(c));
    void *p = NULL;
    return posix_memalign(&p, 64, page_bytes(c)) ? NULL : p;
}

static void mem_release(eng_kvcache *c, void *page) {
    if (c->p.be)
        c->p.be->ops->release(c->p.be, page);
    else
        free(page);
}

static int mem_to_host(eng_kvcache *c, void *dst, const void *page) {
    if (!c->p.be) {
        memcpy(dst, page, page_bytes(c));
        return 0;
    }
    return c->p.be->ops->to_host(c->p.be, dst, page, page_bytes(c), NULL);
}

static int mem_to_dev(eng_kvcache *c, void *page, const void *src) {
    if (!c->p.be) {
        memcpy(page, src, page_bytes(c));
        return 0;
    }
    return c->p.be->ops->to_dev(c->p.be, page, src, page_bytes(c), NULL);
}

int eng_kvcache_new(eng_kvcache **out, const eng_kvcache_params *p, util_err *err) {
    *out = NULL;
    eng_kvcache *c = calloc(1, sizeof *c);
    if (!c) return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
    c->p = *p;
    c->p.disk_dir = NULL; /* not kept: kvdisk copies what it needs */
    pthread_mutex_init(&c->mu, NULL);
    c->root.depth = -1;
    c->max_pages = p->budget_bytes / page_bytes(c);
    if (c->max_pages < 2) c->max_pages = 2;
    if (p->reuse && p->disk) {
        if (!(c->staging = malloc(page_bytes(c)))) {
            eng_kvcache_free(c);
            return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
        }
        eng_kvdisk_params dp = {.dir = p->disk_dir,
                                .fingerprint = p->fingerprint,
                                .budget_bytes = p->disk_budget,
                                .page_bytes = page_bytes(c),
                                .debug = p->debug};
        int rc = eng_kvdisk_open(&c->disk, &dp, err);
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
    for (eng_kv_node *n = c->all, *next; n; n = next) {
        next = n->all_next;
        mem_release(c, n->page);
        free(n);
    }
    for (uint64_t i = 0; i < c->n_free; i++) mem_release(c, c->free_pages[i]);
    free(c->free_pages);
    free(c->staging);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* --- pages and eviction ------------------------------------------------- */

/* Removes a leaf node with no pins from the tree; returns its page. */
static void *node_remove(eng_kvcache *c, eng_kv_node *n) {
    eng_kv_node **pp = &n->parent->child;
    while (*pp != n) pp = &(*pp)->next;
    *pp = n->next;
    node_unlink_all(c, n);
    void *page = n->page;
    free(n);
    c->pages_cached--;
    return page;
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

static int page_alloc_locked(eng_kvcache *c, void **out, util_err *err) {
    if (c->n_free) {
        *out = c->free_pages[--c->n_free];
        return UTIL_OK;
    }
    if (c->pages_total >= c->max_pages) {
        eng_kv_node *victim = evict_candidate(c);
        if (victim) {
            *out = node_remove(c, victim);
            c->st.evictions++;
            return UTIL_OK;
        }
        return util_err_set(err, UTIL_ENOMEM,
                            "kv cache budget of %llu bytes (%llu pages) is in use by live sequences; "
                            "raise --kv-budget",
                            (unsigned long long)c->p.budget_bytes, (unsigned long long)c->max_pages);
    }
    /* room to pool every page this cache can ever own, so freeing never fails */
    if (c->free_cap < c->pages_total + 1) {
        uint64_t cap = c->free_cap ? c->free_cap * 2 : 64;
        if (cap > c->max_pages) cap = c->max_pages;
        void **fp = realloc(c->free_pages, (size_t)cap * sizeof *fp);
        if (!fp) return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory");
        c->free_pages = fp;
        c->free_cap = cap;
    }
    void *p = mem_alloc(c);
    if (!p)
        return util_err_set(err, UTIL_ENOMEM, "kv cache: out of %s memory for a page of %zu bytes",
                            c->p.be ? c->p.be->ops->name : "host", page_bytes(c));
    c->pages_total++;
    *out = p;
    return UTIL_OK;
}

int eng_kvcache_page_alloc(eng_kvcache *c, void **out, util_err *err) {
    pthread_mutex_lock(&c->mu);
    int rc = page_alloc_locked(c, out, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void page_free_locked(eng_kvcache *c, void *page) {
    c->free_pages[c->n_free++] = page; /* free_cap >= pages_total > n_free */
}

void eng_kvcache_page_free(eng_kvcache *c, void *page) {
    if (!page) return;
    pthread_mutex_lock(&c->mu);
    page_free_locked(c, page);
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
    c->pages_cached++;
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
        if (!page && page_alloc_locked(c, &page, NULL)) return NULL;
        if (eng_kvdisk_get(c->disk, h, parent_hash, toks, k, c->staging) &&
            mem_to_dev(c, page, c->staging) == 0) {
            eng_kv_node *n = node_new(c, at, toks, k, page);
            if (!n) page_free_locked(c, page);
            return n;
        }
    }
    if (page) page_free_locked(c, page);
    return NULL;
}

void eng_kvcache_match(eng_kvcache *c, const int32_t *toks, int n, int max_tokens, eng_kv_node **nodes,
                       eng_kv_match *m) {
    memset(m, 0, sizeof *m);
    m->nodes = nodes;
    if (!c->p.reuse) return;
    if (max_tokens > n) max_tokens = n;
    pthread_mutex_lock(&c->mu);
    eng_kv_node *at = &c->root;
    int pos = 0;
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
        nodes[m->n_nodes++] = best;
        pos += used;
        if (from_disk) m->from_disk += used;
        if (used < P || best->ntok < P) break; /* ends inside this page */
        at = best;
    }
    m->tokens = pos;
    pthread_mutex_unlock(&c->mu);
}

void eng_kvcache_unpin(eng_kvcache *c, eng_kv_node *node) {
    if (!node) return;
    pthread_mutex_lock(&c->mu);
    if (node->pins > 0) node->pins--;
    pthread_mutex_unlock(&c->mu);
}

void *eng_kvcache_node_page(const eng_kv_node *node) { return node->page; }
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
        page_free_locked(c, page);
    } else {
        n = node_new(c, at, toks, ntok, page);
        if (!n) {
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        if (c->disk && mem_to_host(c, c->staging, page) == 0)
            eng_kvdisk_put(c->disk, n->hash, at == &c->root ? 0 : at->hash, toks, ntok, c->staging);
    }
    n->pins++;
    n->last_use = ++c->clock;
    pthread_mutex_unlock(&c->mu);
    return n;
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
    s.pages_cached = c->pages_cached;
    s.pages_in_use = c->pages_total - c->n_free;
    s.bytes_in_use = s.pages_in_use * page_bytes(c);
    s.budget_bytes = c->p.budget_bytes;
    if (c->disk) {
        eng_kvdisk_stats d = eng_kvdisk_get_stats(c->disk);
        s.disk_reads = d.reads;
        s.disk_writes = d.writes;
        s.disk_corrupt = d.corrupt;
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

void eng_kvcache_flush(eng_kvcache *c) {
    if (c && c->disk) eng_kvdisk_flush(c->disk);
}
