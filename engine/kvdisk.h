/* engine/kvdisk.h: the disk tier of the prefix cache. KV pages are stored
 * content-addressed under a directory (default $XDG_CACHE_HOME/cachet/kv/):
 * one file per page, named by the page's chain hash (model fingerprint,
 * parent page hash, the page's token ids). Each file carries a header (magic,
 * version, fingerprint, parent hash, token span, payload size) and a checksum;
 * a corrupt, truncated or foreign file is detected, reported once at debug
 * level, deleted and never used. Writes go to a temporary name and are renamed
 * into place, so several processes can share the directory and readers never
 * see partial files. Directories are created 0700 and files 0600 (pages hold
 * the prompt's token ids); an existing directory open to others gets one
 * warning. Writes happen on a background thread (off the critical
 * path); kvdisk_flush/kvdisk_close wait for them. A disk budget is enforced by
 * evicting least recently accessed files. An unwritable directory or a full
 * disk turns the tier off with one warning; it never fails a generation.
 * Does not know about the radix tree or the backend: pages are opaque bytes. */
#ifndef ENG_KVDISK_H
#define ENG_KVDISK_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* Most token ids one page file can carry. */
#define ENG_KVDISK_MAX_TOKENS 64

typedef struct eng_kvdisk eng_kvdisk;

typedef struct eng_kvdisk_params {
    const char *dir;       /* NULL: $XDG_CACHE_HOME/cachet/kv, else ~/.cache/cachet/kv */
    uint64_t fingerprint;  /* model identity + settings that change KV values */
    uint64_t budget_bytes; /* 0: default 2 GiB */
    size_t page_bytes;     /* payload size of every page of this model */
    int debug;             /* 1: report detected corrupt files on stderr */
} eng_kvdisk_params;

/* reads: verified hits; read_misses: every get that returned 0 (absent or
 * corrupt); writes: files renamed into place (refreshing an existing entry is
 * not a write); corrupt: files found bad and deleted; evictions: files deleted
 * for the budget; dropped: puts not written because the queue was full or
 * writes were off after a full disk. */
typedef struct eng_kvdisk_stats {
    uint64_t reads, read_bytes, read_misses, writes, write_bytes, write_errors, corrupt, evictions;
    uint64_t dropped;
} eng_kvdisk_stats;

/* Chain hash of a page: fingerprint for the first page's parent (parent = 0
 * means "root"). Stable across processes and machines (explicit little-endian
 * bytes, no pointer values). Never 0, so 0 can stay "no parent". */
uint64_t eng_kvdisk_hash(uint64_t fingerprint, uint64_t parent, const int32_t *tokens, int ntok);

/* Opens (creating the directory if needed). Never fails because of the disk:
 * on an unusable directory it returns a tier that is off (kvdisk_enabled == 0)
 * and prints one warning to stderr. Fails only on bad arguments / no memory. */
int eng_kvdisk_open(eng_kvdisk **out, const eng_kvdisk_params *p, util_err *err);
/* Waits for pending writes, then frees. NULL is a no-op. */
void eng_kvdisk_close(eng_kvdisk *d);
int eng_kvdisk_enabled(const eng_kvdisk *d);

/* Queues a page for writing (copies payload; returns at once). The file's
 * name is `hash`; parent and tokens go into the header and are verified on
 * read. Writing an existing valid entry only refreshes its access time; a bad
 * file (or a FIFO, a link) under the name is replaced. Never
 * blocks: when the queue is full (256 pages or 128 MiB) the page is dropped
 * and counted in stats.dropped. ntok must be 0..ENG_KVDISK_MAX_TOKENS. */
void eng_kvdisk_put(eng_kvdisk *d, uint64_t hash, uint64_t parent, const int32_t *tokens, int ntok,
                    const void *payload);
/* Reads a page into payload (page_bytes). Returns 1 on a verified hit, 0 on a
 * miss (absent, or corrupt/foreign, not a regular file: then deleted; never
 * blocks on a FIFO). tokens/ntok/parent must
 * match the header exactly. Refreshes the access time on a hit. On a miss the
 * contents of payload are unspecified (it is read in place). Thread-safe. */
int eng_kvdisk_get(eng_kvdisk *d, uint64_t hash, uint64_t parent, const int32_t *tokens, int ntok,
                   void *payload);
/* Waits until every queued write has reached its final name (or failed). */
void eng_kvdisk_flush(eng_kvdisk *d);
eng_kvdisk_stats eng_kvdisk_get_stats(const eng_kvdisk *d);
const char *eng_kvdisk_dir(const eng_kvdisk *d);
/* Writes the file path of entry `hash` (<dir>/<2 hex>/<16 hex>.kvp) into buf;
 * returns UTIL_OK, UTIL_ERANGE if it does not fit, UTIL_ENOTFOUND if the tier
 * is off. */
int eng_kvdisk_path(const eng_kvdisk *d, uint64_t hash, char *buf, size_t n);
/* Test only: the next file write fails as if write(2) had set errno to
 * `errnum` (e.g. ENOSPC to exercise the full-disk path). 0 cancels. */
void eng_kvdisk_test_fail_write(eng_kvdisk *d, int errnum);

#endif
