/* engine/kvcache.h: the prefix cache's memory tier: a budgeted pool of KV
 * pages and a radix tree over token ids whose nodes each hold one page
 * (ENG_KV_PAGE_TOKENS tokens; a partial page is always a leaf). A request
 * reuses the longest cached prefix at token granularity; nodes in use are
 * pinned; unpinned leaves are evicted LRU (ties: deepest first). Behind it the
 * disk tier (kvdisk.h) is consulted on a memory miss and fed on insert.
 * Models with sliding-window layers have a second page kind (the sliding
 * layers' KV, swa pages): a node may hold one beside its page, kept only
 * where a hit can use it (see "sliding pages" below and docs/prefix-cache.md).
 * Private to engine/: sequences (seq.c) use it; the public API is engine.h.
 * All functions lock the cache: several sequences may share one. */
#ifndef ENG_KVCACHE_H
#define ENG_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "backend.h"
#include "engine.h"

/* Tokens per KV page: the unit of the pool, the tree and the disk tier. */
enum { ENG_KV_PAGE_TOKENS = 16 };

typedef struct eng_kvcache eng_kvcache;
typedef struct eng_kv_node eng_kv_node;

typedef struct eng_kvcache_params {
    size_t page_bytes;     /* bytes per page (eng_kv_page_bytes; the global layers' when the model slides) */
    size_t swa_page_bytes; /* bytes per sliding page; 0: one page kind */
    int window;            /* sliding layers see positions p - window < j <= p (swa_page_bytes > 0) */
    uint64_t fingerprint;  /* model + KV-affecting settings */
    uint64_t budget_bytes; /* memory budget for all pages (tree + private) */
    int reuse;             /* 0: --no-cache (pool only, no tree) */
    int disk;              /* 1: use the disk tier */
    const char *disk_dir;  /* NULL: default */
    uint64_t disk_budget;  /* 0: default */
    int debug;
    eng_backend *be; /* pages in this backend's memory; NULL: host memory */
} eng_kvcache_params;

int eng_kvcache_new(eng_kvcache **out, const eng_kvcache_params *p, util_err *err);
/* Flushes pending disk writes, frees every page. Sequences must be gone. */
void eng_kvcache_free(eng_kvcache *c);

/* Pages: allocation evicts unpinned leaves when over budget; fails with
 * UTIL_ENOMEM (message names --kv-budget) when everything left is in use. */
int eng_kvcache_page_alloc(eng_kvcache *c, void **out, util_err *err);
void eng_kvcache_page_free(eng_kvcache *c, void *page);
size_t eng_kvcache_page_bytes(const eng_kvcache *c);
/* 0 when prefix reuse is off (--no-cache): nothing is matched or kept. */
int eng_kvcache_reuse(const eng_kvcache *c);

/* A matched path: nodes[i] holds positions i*P .. i*P + used[i] - 1.
 * Every node on the path is pinned; release with eng_kvcache_unpin. With
 * sliding pages, nodes swa_first .. n_nodes-1 (the window of the next
 * position, eng_kvcache_swa_first) also have their sliding page mapped for
 * the caller: release each with eng_kvcache_swa_unpin. */
typedef struct eng_kv_match {
    eng_kv_node **nodes;
    int n_nodes;
    int tokens;    /* total matched tokens */
    int from_disk; /* of which loaded from the disk tier */
    int swa_first; /* first node whose sliding page is mapped (n_nodes: none) */
} eng_kv_match;

/* Finds the longest cached prefix of toks[0..n) (at most max_tokens tokens).
 * With sliding pages the match is capped at the longest point whose window
 * (the sliding pages of positions tokens - window + 1 .. tokens - 1) is held
 * in memory or on disk: a page-aligned point before the last missing one.
 * nodes must have room for max_tokens / P + 1 entries. */
void eng_kvcache_match(eng_kvcache *c, const int32_t *toks, int n, int max_tokens, eng_kv_node **nodes,
                       eng_kv_match *m);
void eng_kvcache_unpin(eng_kvcache *c, eng_kv_node *node);
/* Page data of a node (read-only; never written after insertion). */
void *eng_kvcache_node_page(const eng_kv_node *node);
int eng_kvcache_node_ntok(const eng_kv_node *node);

/* Inserts page `page_index` (tokens toks[0..ntok), 1 <= ntok <= P) under
 * parent (NULL for the first page); the cache takes ownership of page. If an
 * equal node exists (same tokens, computed by another sequence: its values
 * are bit-identical), page is freed and that node is returned. The returned
 * node is pinned for the caller. NULL when reuse is off (page untouched). */
eng_kv_node *eng_kvcache_insert(eng_kvcache *c, eng_kv_node *parent, const int32_t *toks, int ntok,
                                void *page);

/* --- sliding pages (swa_page_bytes > 0) -------------------------------------
 * A sequence holds the sliding pages of its window only. In the tree a node's
 * sliding page is kept while a sequence maps it (swa pins) or while it lies
 * in the window of a marked end (a commit's last node: the end of a prompt or
 * of a reply), so a request extending that end hits there exactly; marks are
 * kept for the two deepest ends of a path (older marks on the same path are
 * dropped) and go with their node when it is evicted. */
int eng_kvcache_has_swa(const eng_kvcache *c);
/* The first page index a query at position pos can see in sliding layers. */
int eng_kvcache_swa_first(const eng_kvcache *c, int pos);
int eng_kvcache_swa_alloc(eng_kvcache *c, void **out, util_err *err);
void eng_kvcache_swa_free(eng_kvcache *c, void *page);
size_t eng_kvcache_swa_page_bytes(const eng_kvcache *c);
/* The node's sliding page (read-only), or NULL when it was dropped. */
void *eng_kvcache_node_swa_page(const eng_kv_node *node);
/* Gives a freshly inserted (pinned) node the caller's private sliding page:
 * the node takes it, or keeps its own and frees page. Either way the node's
 * page is returned, mapped for the caller (release with swa_unpin). */
void *eng_kvcache_give_swa(eng_kvcache *c, eng_kv_node *node, void *page);
/* The caller no longer reads node's sliding page (its window passed, or it
 * copied the page); it is dropped when no mark needs it. */
void eng_kvcache_swa_unpin(eng_kvcache *c, eng_kv_node *node);
/* Marks node (pinned by the caller) as the end of a commit: see above. */
void eng_kvcache_mark_end(eng_kvcache *c, eng_kv_node *node);

eng_cache_stats eng_kvcache_get_stats(eng_kvcache *c);
void eng_kvcache_count_query(eng_kvcache *c, int queried, int hit, int hit_disk);
/* Waits for queued disk writes. */
void eng_kvcache_flush(eng_kvcache *c);

#endif
