/* tests/test_kvdisk.c: the disk tier of the prefix cache (engine/kvdisk.c):
 * round trips, every kind of damaged file, LRU budget, stale tmp sweep,
 * unwritable directory, full disk, kill -9 of a writer, and several processes
 * sharing one directory. Works in a mkdtemp directory under /tmp that it
 * removes; needs no model. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../engine/kvdisk.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "helpers.h"

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */

enum { KT_MAXTOK = 16 };

typedef struct kt_key {
    uint64_t hash, parent;
    int ntok;
    int32_t tok[KT_MAXTOK];
} kt_key;

/* Key i: a token span of 1..16 ids, a parent made up from i. */
static kt_key kt_key_make(uint64_t fp, int i) {
    kt_key k;
    k.parent = i % 3 == 0 ? 0 : 0x1234567890ull * (uint64_t)i;
    k.ntok = 1 + i % KT_MAXTOK;
    for (int t = 0; t < k.ntok; t++) k.tok[t] = i * 1000 + t * 7 - 3;
    k.hash = eng_kvdisk_hash(fp, k.parent, k.tok, k.ntok);
    return k;
}

static void kt_fill(unsigned char *p, size_t n, int i) { /* page i's payload */
    uint64_t x = (uint64_t)i;
    for (size_t j = 0; j < n; j++) p[j] = (unsigned char)th_rng_next(&x);
}

static eng_kvdisk *kt_open(const char *dir, uint64_t fp, size_t page, uint64_t budget, int debug) {
    eng_kvdisk_params p = {dir, fp, budget, page, debug};
    eng_kvdisk *d = NULL;
    util_err e;
    util_err_clear(&e);
    int rc = eng_kvdisk_open(&d, &p, &e);
    CHECK_MSG(rc == 0 && d, "eng_kvdisk_open('%s'): %s", dir, e.msg);
    return d;
}

static void kt_put(eng_kvdisk *d, const kt_key *k, const void *payload) {
    eng_kvdisk_put(d, k->hash, k->parent, k->tok, k->ntok, payload);
}

static int kt_get(eng_kvdisk *d, const kt_key *k, void *payload) {
    return eng_kvdisk_get(d, k->hash, k->parent, k->tok, k->ntok, payload);
}

static int kt_exists(const char *path) { return access(path, F_OK) == 0; }

static int64_t kt_mtime_ns(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    return (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
}

static void kt_set_age(const char *path, int seconds) {
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    utimensat(AT_FDCWD, path, t, 0);
}

static int kt_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

static void kt_rm_rf(const char *path) { nftw(path, kt_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* Redirects stderr into a temporary file until kt_capture_end. */
typedef struct kt_capture {
    int saved;
    char path[64];
} kt_capture;

static void kt_capture_begin(kt_capture *c) {
    snprintf(c->path, sizeof c->path, "/tmp/cachet-kvdisk-errXXXXXX");
    int fd = mkstemp(c->path);
    fflush(stderr);
    c->saved = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Returns what was written to stderr (malloc'd; the caller frees). */
static char *kt_capture_end(kt_capture *c) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *s = NULL;
    size_t n;
    util_err e;
    if (util_read_file(&s, &n, c->path, &e) != 0) s = calloc(1, 1);
    unlink(c->path);
    return s;
}

static int kt_count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ------------------------------------------------------------------------ */
/* hash, round trip, misses                                                  */

static void kt_hash(void) {
    int32_t t[3] = {1, 2, 3}, u[3] = {1, 2, 4};
    uint64_t h = eng_kvdisk_hash(7, 0, t, 3);
    /* Pinned: a change here orphans every cache on disk (bump the version). */
    CHECK_MSG(h == 0x5f5a51b8a874a166ull, "hash drifted: %016llx", (unsigned long long)h);
    CHECK(h == eng_kvdisk_hash(7, 0, t, 3));
    CHECK(h != eng_kvdisk_hash(8, 0, t, 3));
    CHECK(h != eng_kvdisk_hash(7, 1, t, 3));
    CHECK(h != eng_kvdisk_hash(7, 0, u, 3));
    CHECK(h != eng_kvdisk_hash(7, 0, t, 2));
    CHECK(eng_kvdisk_hash(7, 0, NULL, 0) != 0);
    int32_t big[200];
    for (int i = 0; i < 200; i++) big[i] = i;
    uint64_t hb = eng_kvdisk_hash(7, 0, big, 200);
    big[199] = -1;
    CHECK(hb != eng_kvdisk_hash(7, 0, big, 200));
}

static void kt_roundtrip(const char *root) {
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rt/", root);
    const uint64_t fp = 0xABCDEF;
    const size_t page = 4096 + 3;
    unsigned char *in = malloc(page), *out = malloc(page);
    eng_kvdisk *d = kt_open(dir, fp, page, 0, 0);
    CHECK(eng_kvdisk_enabled(d));
    snprintf(path, sizeof path, "%s/rt", root);
    CHECK_EQ_STR(eng_kvdisk_dir(d), path); /* trailing slash dropped */

    kt_key k[4];
    for (int i = 0; i < 4; i++) {
        k[i] = kt_key_make(fp, i);
        kt_fill(in, page, i);
        kt_put(d, &k[i], in);
    }
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).writes, 4);
    for (int i = 0; i < 4; i++) {
        kt_fill(in, page, i);
        memset(out, 0, page);
        CHECK(kt_get(d, &k[i], out) == 1 && memcmp(in, out, page) == 0);
        CHECK(eng_kvdisk_path(d, k[i].hash, path, sizeof path) == 0);
        struct stat sb;
        CHECK(stat(path, &sb) == 0 && (size_t)sb.st_size == 44 + 4 * (size_t)k[i].ntok + page + 8);
    }
    eng_kvdisk_stats s = eng_kvdisk_get_stats(d);
    CHECK_EQ_INT(s.reads, 4);
    CHECK_EQ_INT(s.read_bytes, 4 * page);
    CHECK_EQ_INT(s.write_bytes, 4 * (44 + 8 + page) + 4 * (k[0].ntok + k[1].ntok + k[2].ntok + k[3].ntok));

    kt_key miss = kt_key_make(fp, 99);
    CHECK_EQ_INT(kt_get(d, &miss, out), 0);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).read_misses, 1);

    /* Writing an existing entry refreshes its time instead of rewriting it. */
    char shortbuf[8];
    CHECK_EQ_INT(eng_kvdisk_path(d, k[0].hash, shortbuf, sizeof shortbuf), UTIL_ERANGE);
    CHECK(eng_kvdisk_path(d, k[0].hash, path, sizeof path) == 0);
    kt_set_age(path, 3600);
    int64_t old = kt_mtime_ns(path);
    kt_fill(in, page, 0);
    kt_put(d, &k[0], in);
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).writes, 4);
    CHECK(kt_mtime_ns(path) > old + 3000000000ll);
    /* A hit refreshes it too. */
    kt_set_age(path, 3600);
    CHECK(kt_get(d, &k[0], out) == 1);
    CHECK(kt_mtime_ns(path) > old + 3000000000ll);

    /* Same name, different parent or tokens: never used, and removed. */
    kt_key bad = k[1];
    bad.parent ^= 1;
    CHECK_EQ_INT(kt_get(d, &bad, out), 0);
    CHECK(eng_kvdisk_path(d, k[1].hash, path, sizeof path) == 0 && !kt_exists(path));
    bad = k[2];
    bad.tok[bad.ntok - 1]++;
    CHECK_EQ_INT(kt_get(d, &bad, out), 0);
    bad = k[3];
    bad.ntok--;
    CHECK_EQ_INT(kt_get(d, &bad, out), 0);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).corrupt, 3);
    CHECK_EQ_INT(kt_get(d, &k[2], out), 0); /* gone */
    eng_kvdisk_close(d);

    /* Another instance (a later process) sees what this one wrote. */
    d = kt_open(dir, fp, page, 0, 0);
    kt_fill(in, page, 0);
    CHECK(kt_get(d, &k[0], out) == 1 && memcmp(in, out, page) == 0);
    /* Bad arguments are ignored, not crashes. */
    int32_t many[ENG_KVDISK_MAX_TOKENS + 1] = {0};
    eng_kvdisk_put(d, 5, 0, many, ENG_KVDISK_MAX_TOKENS + 1, in);
    CHECK_EQ_INT(eng_kvdisk_get(d, 5, 0, many, ENG_KVDISK_MAX_TOKENS + 1, out), 0);
    eng_kvdisk_put(d, 5, 0, NULL, 3, in);
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).writes, 0);
    eng_kvdisk_close(d);
    eng_kvdisk_close(NULL);

    eng_kvdisk_params p = {dir, fp, 0, 0, 0}; /* page_bytes 0 */
    util_err e;
    CHECK_EQ_INT(eng_kvdisk_open(&d, &p, &e), UTIL_EINVAL);
    CHECK(d == NULL && strstr(e.msg, "page size"));
    free(in);
    free(out);
}

/* ------------------------------------------------------------------------ */
/* damaged files                                                             */

typedef enum {
    KT_TRUNC1,
    KT_TRUNC_HALF,
    KT_ZERO,
    KT_APPEND,
    KT_FLIP_PAYLOAD,
    KT_FLIP_VERSION,
    KT_FLIP_TOKEN,
    KT_FLIP_HASH,
    KT_FLIP_SUM,
    KT_MAGIC,
    KT_NDAMAGE
} kt_damage;

static const char *const kt_damage_names[KT_NDAMAGE] = {
    "truncated by 1", "truncated to half", "zero length", "one byte appended", "payload byte",
    "version byte",   "token byte",        "hash byte",   "checksum byte",     "magic",
};

static void kt_flip(const char *path, off_t off) {
    int fd = open(path, O_RDWR);
    unsigned char c = 0;
    if (off < 0) off += lseek(fd, 0, SEEK_END);
    if (pread(fd, &c, 1, off) == 1) {
        c ^= 0x10;
        if (pwrite(fd, &c, 1, off) != 1) c = 0;
    }
    close(fd);
}

static void kt_damage_file(const char *path, kt_damage k, size_t page) {
    struct stat sb;
    stat(path, &sb);
    switch (k) {
    case KT_TRUNC1: CHECK(truncate(path, sb.st_size - 1) == 0); break;
    case KT_TRUNC_HALF: CHECK(truncate(path, sb.st_size / 2) == 0); break;
    case KT_ZERO: CHECK(truncate(path, 0) == 0); break;
    case KT_APPEND: CHECK(truncate(path, sb.st_size + 1) == 0); break;
    case KT_FLIP_PAYLOAD: kt_flip(path, (off_t)(sb.st_size - 8 - (off_t)page / 2)); break;
    case KT_FLIP_VERSION: kt_flip(path, 4); break;
    case KT_FLIP_TOKEN: kt_flip(path, 37); break;
    case KT_FLIP_HASH: kt_flip(path, 17); break;
    case KT_FLIP_SUM: kt_flip(path, -1); break;
    case KT_MAGIC: {
        int fd = open(path, O_WRONLY);
        CHECK(pwrite(fd, "GGUF", 4, 0) == 4);
        close(fd);
        break;
    }
    default: break;
    }
}

static void kt_corrupt(const char *root) {
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/corrupt", root);
    const uint64_t fp = 42;
    const size_t page = 1000;
    unsigned char in[1000], out[1000];
    eng_kvdisk *d = kt_open(dir, fp, page, 0, 0);
    kt_capture cap;
    kt_capture_begin(&cap);
    for (int k = 0; k < KT_NDAMAGE; k++) {
        kt_key key = kt_key_make(fp, k);
        kt_fill(in, page, k);
        kt_put(d, &key, in);
        eng_kvdisk_flush(d);
        eng_kvdisk_path(d, key.hash, path, sizeof path);
        uint64_t c0 = eng_kvdisk_get_stats(d).corrupt;
        kt_damage_file(path, (kt_damage)k, page);
        CHECK_MSG(kt_get(d, &key, out) == 0, "%s: not a miss", kt_damage_names[k]);
        CHECK_MSG(!kt_exists(path), "%s: file not deleted", kt_damage_names[k]);
        CHECK_MSG(eng_kvdisk_get_stats(d).corrupt == c0 + 1, "%s: not counted", kt_damage_names[k]);
        /* Once deleted it is simply absent; a new put heals it. */
        CHECK(kt_get(d, &key, out) == 0 && eng_kvdisk_get_stats(d).corrupt == c0 + 1);
        kt_put(d, &key, in);
        eng_kvdisk_flush(d);
        CHECK_MSG(kt_get(d, &key, out) == 1 && memcmp(in, out, page) == 0, "%s: not healed",
                  kt_damage_names[k]);
    }
    char *err = kt_capture_end(&cap);
    CHECK_MSG(err[0] == '\0', "debug off but stderr got: %s", err);
    free(err);
    eng_kvdisk_close(d);

    /* A file written under another model fingerprint with the same name. */
    kt_key key = kt_key_make(fp, 77);
    eng_kvdisk *other = kt_open(dir, fp + 1, page, 0, 0);
    kt_fill(in, page, 77);
    kt_put(other, &key, in);
    eng_kvdisk_close(other);
    d = kt_open(dir, fp, page, 0, 1);
    eng_kvdisk_path(d, key.hash, path, sizeof path);
    CHECK(kt_exists(path));
    kt_capture_begin(&cap);
    CHECK_EQ_INT(kt_get(d, &key, out), 0);
    err = kt_capture_end(&cap);
    CHECK(!kt_exists(path));
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).corrupt, 1);
    /* debug on: one report naming the file and the reason */
    CHECK_MSG(strstr(err, path) && strstr(err, "foreign") && strstr(err, "deleted") &&
                  kt_count_lines(err) == 1,
              "debug report: '%s'", err);
    free(err);
    eng_kvdisk_close(d);
}

/* ------------------------------------------------------------------------ */
/* budget, stale tmp files                                                   */

static void kt_budget(const char *root) {
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/budget", root);
    const uint64_t fp = 9;
    const size_t page = 1000;
    unsigned char in[1000], out[1000];
    /* every key below has 4 tokens: files of 44 + 16 + 1000 + 8 bytes */
    const uint64_t fsize = 1068;
    eng_kvdisk *d = kt_open(dir, fp, page, 10 * fsize, 0);
    kt_key k[12];
    for (int i = 0; i < 12; i++) k[i] = kt_key_make(fp, 3 + 16 * i);
    for (int i = 0; i < 8; i++) {
        kt_fill(in, page, i);
        kt_put(d, &k[i], in);
    }
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).writes, 8);
    CHECK(kt_get(d, &k[0], out) == 1); /* oldest written, now most recently used */
    for (int i = 8; i < 12; i++) {
        kt_fill(in, page, i);
        kt_put(d, &k[i], in);
    }
    eng_kvdisk_flush(d);
    /* the 11th file passes the budget: the two least recently used go (down to 90%) */
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).evictions, 2);
    for (int i = 0; i < 12; i++) {
        eng_kvdisk_path(d, k[i].hash, path, sizeof path);
        int want = !(i == 1 || i == 2);
        CHECK_MSG(kt_exists(path) == want, "key %d: exists %d, want %d", i, kt_exists(path), want);
    }
    eng_kvdisk_close(d);

    /* A new instance finds the files already there and keeps the budget. */
    d = kt_open(dir, fp, page, 5 * fsize, 0);
    kt_key extra = kt_key_make(fp, 3 + 16 * 20);
    kt_put(d, &extra, in);
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).evictions, 6); /* 10 files down to 4: 90% of 5 */
    eng_kvdisk_path(d, k[0].hash, path, sizeof path);
    CHECK(!kt_exists(path));
    eng_kvdisk_path(d, extra.hash, path, sizeof path);
    CHECK(kt_exists(path));
    eng_kvdisk_close(d);
}

static void kt_stale_tmp(const char *root) {
    char dir[PATH_MAX], sub[PATH_MAX], old[PATH_MAX], young[PATH_MAX], other[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/stale", root);
    snprintf(sub, sizeof sub, "%s/ab", dir);
    snprintf(old, sizeof old, "%s/ab00000000000001.kvp.tmp.1.1", sub);
    snprintf(young, sizeof young, "%s/ab00000000000002.kvp.tmp.1.2", sub);
    snprintf(other, sizeof other, "%s/notes.txt", sub);
    CHECK(mkdir(dir, 0700) == 0 && mkdir(sub, 0700) == 0);
    const char *files[3] = {old, young, other};
    for (int i = 0; i < 3; i++) close(open(files[i], O_WRONLY | O_CREAT, 0644));
    kt_set_age(old, 11 * 60);
    kt_set_age(other, 3600);
    unsigned char in[64] = {1};
    eng_kvdisk *d = kt_open(dir, 1, sizeof in, 0, 0);
    kt_key k = kt_key_make(1, 5);
    kt_put(d, &k, in);
    eng_kvdisk_flush(d);
    CHECK(!kt_exists(old));  /* a writer killed 11 minutes ago */
    CHECK(kt_exists(young)); /* maybe a live writer in another process */
    CHECK(kt_exists(other)); /* not ours */
    eng_kvdisk_close(d);
}

/* ------------------------------------------------------------------------ */
/* unusable directory, full disk, queue, default directory                   */

static void kt_unwritable(const char *root) {
    char file[PATH_MAX], dir[PATH_MAX];
    snprintf(file, sizeof file, "%s/plainfile", root);
    close(open(file, O_WRONLY | O_CREAT, 0644));
    /* root ignores permission bits, so make mkdir fail with ENOTDIR instead */
    snprintf(dir, sizeof dir, "%s/kv", file);
    unsigned char in[128] = {0}, out[128];
    kt_capture cap;
    kt_capture_begin(&cap);
    eng_kvdisk *d = kt_open(dir, 1, sizeof in, 0, 0);
    char *err = kt_capture_end(&cap);
    CHECK(d && !eng_kvdisk_enabled(d));
    CHECK_MSG(strstr(err, "cachet: kv disk cache '") && strstr(err, dir) &&
                  strstr(err, "is not writable (") && strstr(err, "); using memory only") &&
                  kt_count_lines(err) == 1,
              "warning: '%s'", err);
    free(err);
    kt_key k = kt_key_make(1, 1);
    kt_capture_begin(&cap);
    kt_put(d, &k, in);
    eng_kvdisk_flush(d);
    CHECK_EQ_INT(kt_get(d, &k, out), 0);
    char path[PATH_MAX];
    CHECK_EQ_INT(eng_kvdisk_path(d, k.hash, path, sizeof path), UTIL_ENOTFOUND);
    err = kt_capture_end(&cap);
    CHECK_MSG(err[0] == '\0', "more output: '%s'", err); /* one warning only */
    free(err);
    eng_kvdisk_stats s = eng_kvdisk_get_stats(d);
    CHECK(s.writes == 0 && s.reads == 0 && s.read_misses == 0 && s.dropped == 0);
    eng_kvdisk_close(d);
}

static void kt_full_disk(const char *root) {
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/full", root);
    unsigned char in[512], out[512];
    eng_kvdisk *d = kt_open(dir, 3, sizeof in, 0, 0);
    kt_key k[5];
    for (int i = 0; i < 5; i++) k[i] = kt_key_make(3, i);
    kt_fill(in, sizeof in, 0);
    kt_put(d, &k[0], in);
    eng_kvdisk_flush(d);

    /* an ordinary i/o error loses one page, quietly */
    kt_capture cap;
    kt_capture_begin(&cap);
    eng_kvdisk_test_fail_write(d, EIO);
    kt_put(d, &k[1], in);
    eng_kvdisk_flush(d);
    kt_put(d, &k[2], in);
    eng_kvdisk_flush(d);
    char *err = kt_capture_end(&cap);
    CHECK_MSG(err[0] == '\0', "eio output: '%s'", err);
    free(err);
    eng_kvdisk_path(d, k[1].hash, path, sizeof path);
    CHECK(!kt_exists(path));
    eng_kvdisk_path(d, k[2].hash, path, sizeof path);
    CHECK(kt_exists(path));

    /* a full disk turns writes off with one warning; reads go on */
    kt_capture_begin(&cap);
    eng_kvdisk_test_fail_write(d, ENOSPC);
    kt_put(d, &k[3], in);
    eng_kvdisk_flush(d);
    kt_put(d, &k[4], in);
    eng_kvdisk_flush(d);
    err = kt_capture_end(&cap);
    CHECK_MSG(strstr(err, "is full") && kt_count_lines(err) == 1, "enospc output: '%s'", err);
    free(err);
    for (int i = 3; i < 5; i++) {
        eng_kvdisk_path(d, k[i].hash, path, sizeof path);
        CHECK(!kt_exists(path));
    }
    CHECK(eng_kvdisk_enabled(d));
    CHECK(kt_get(d, &k[0], out) == 1 && memcmp(in, out, sizeof in) == 0);
    eng_kvdisk_stats s = eng_kvdisk_get_stats(d);
    CHECK_EQ_INT(s.writes, 2);
    CHECK_EQ_INT(s.write_errors, 2);
    CHECK_EQ_INT(s.dropped, 1);
    /* no tmp file is left behind */
    int tmps = 0;
    for (int i = 0; i < 5; i++) {
        eng_kvdisk_path(d, k[i].hash, path, sizeof path);
        path[strlen(path) - 21] = '\0';
        DIR *dp = opendir(path);
        for (struct dirent *e; dp && (e = readdir(dp));) tmps += strstr(e->d_name, ".tmp.") != NULL;
        if (dp) closedir(dp);
    }
    CHECK_EQ_INT(tmps, 0);
    eng_kvdisk_close(d);
}

/* put never blocks: past 256 queued pages (or 128 MiB) it drops. Whether any
 * drop happens depends on timing, so only the accounting is checked. */
static void kt_queue(const char *root) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/queue", root);
    enum { N = 2000, PAGE = 2048 };
    unsigned char in[PAGE] = {0}, out[PAGE];
    eng_kvdisk *d = kt_open(dir, 4, PAGE, 0, 0);
    for (int i = 0; i < N; i++) {
        kt_key k = kt_key_make(4, i);
        kt_fill(in, PAGE, i);
        kt_put(d, &k, in);
    }
    eng_kvdisk_close(d); /* waits for what was queued */
    d = kt_open(dir, 4, PAGE, 0, 0);
    int hits = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        kt_key k = kt_key_make(4, i);
        kt_fill(in, PAGE, i);
        if (kt_get(d, &k, out)) hits++, bad += memcmp(in, out, PAGE) != 0;
    }
    CHECK(hits > 0 && bad == 0);
    for (int i = 0; i < N; i++) {
        kt_key k = kt_key_make(4, N + i);
        kt_put(d, &k, in);
    }
    eng_kvdisk_flush(d);
    eng_kvdisk_stats s = eng_kvdisk_get_stats(d);
    CHECK_MSG(s.writes + s.dropped == N && s.writes > 0, "writes %llu + dropped %llu != %d",
              (unsigned long long)s.writes, (unsigned long long)s.dropped, N);
    eng_kvdisk_close(d);
}

/* The directory removed under a running writer (a user clearing the cache). */
static void kt_dir_removed(const char *root) {
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/removed", root);
    unsigned char in[256] = {7}, out[256];
    eng_kvdisk *d = kt_open(dir, 6, sizeof in, 0, 0);
    kt_key a = kt_key_make(6, 1), b = kt_key_make(6, 2);
    kt_put(d, &a, in);
    eng_kvdisk_flush(d);
    kt_rm_rf(dir);
    CHECK_EQ_INT(kt_get(d, &a, out), 0);
    kt_put(d, &b, in);
    eng_kvdisk_flush(d);
    eng_kvdisk_path(d, b.hash, path, sizeof path);
    CHECK(kt_exists(path));
    CHECK(kt_get(d, &b, out) == 1 && memcmp(in, out, sizeof in) == 0);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).write_errors, 0);
    eng_kvdisk_close(d);
}

static void kt_default_dir(const char *root) {
    char xdg[PATH_MAX], want[PATH_MAX];
    snprintf(xdg, sizeof xdg, "%s/xdg", root);
    snprintf(want, sizeof want, "%s/cachet/kv", xdg);
    const char *prev = getenv("XDG_CACHE_HOME");
    char *saved = prev ? strdup(prev) : NULL;
    setenv("XDG_CACHE_HOME", xdg, 1);
    eng_kvdisk *d = kt_open(NULL, 1, 16, 0, 0);
    CHECK(eng_kvdisk_enabled(d));
    CHECK_EQ_STR(eng_kvdisk_dir(d), want);
    struct stat sb;
    CHECK(stat(want, &sb) == 0 && S_ISDIR(sb.st_mode));
    eng_kvdisk_close(d);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
}

/* ------------------------------------------------------------------------ */
/* processes: kill -9 during writes, concurrent writers and a reader         */

static void kt_sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

enum { KT_CRASH_KEYS = 400, KT_CRASH_PAGE = 96 * 1024 + 12 };

/* Child: writes pages of the key space in a loop until killed. */
static void kt_crash_child(const char *dir, uint64_t fp, int start, int ready_fd) {
    eng_kvdisk_params p = {dir, fp, 0, KT_CRASH_PAGE, 0};
    eng_kvdisk *d = NULL;
    if (eng_kvdisk_open(&d, &p, NULL) != 0 || !eng_kvdisk_enabled(d)) _exit(3);
    unsigned char *in = malloc(KT_CRASH_PAGE);
    if (write(ready_fd, "r", 1) != 1) _exit(4);
    for (int n = 0;; n++) {
        int i = (start + n) % KT_CRASH_KEYS;
        kt_key k = kt_key_make(fp, i);
        kt_fill(in, KT_CRASH_PAGE, i);
        kt_put(d, &k, in);
        if (n % 4 == 3) eng_kvdisk_flush(d);
    }
}

/* Checks every file under dir: a page file must be one of keys 0..nkeys-1
 * and read back exactly; anything else must be a tmp file. Returns the number
 * of good page files. */
static int kt_audit(eng_kvdisk *d, uint64_t fp, int nkeys, size_t page, int *tmps, int *wrong) {
    unsigned char *want = malloc(page), *got = malloc(page);
    uint64_t *hashes = malloc((size_t)nkeys * sizeof *hashes);
    for (int i = 0; i < nkeys; i++) hashes[i] = kt_key_make(fp, i).hash;
    int pages = 0;
    char sub[PATH_MAX];
    for (int s = 0; s < 256; s++) {
        snprintf(sub, sizeof sub, "%s/%02x", eng_kvdisk_dir(d), s);
        DIR *dp = opendir(sub);
        for (struct dirent *e; dp && (e = readdir(dp));) {
            if (e->d_name[0] == '.') continue;
            if (strstr(e->d_name, ".kvp.tmp.")) {
                (*tmps)++;
                continue;
            }
            int found = -1;
            for (int i = 0; i < nkeys && found < 0; i++) {
                char name[32];
                snprintf(name, sizeof name, "%016llx.kvp", (unsigned long long)hashes[i]);
                if (strcmp(name, e->d_name) == 0) found = i;
            }
            if (found < 0) {
                (*wrong)++;
                continue;
            }
            kt_key k = kt_key_make(fp, found);
            kt_fill(want, page, found);
            if (kt_get(d, &k, got) == 1 && memcmp(want, got, page) == 0)
                pages++;
            else
                (*wrong)++;
        }
        if (dp) closedir(dp);
    }
    free(hashes);
    free(want);
    free(got);
    return pages;
}

static void kt_kill9(const char *root) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/kill9", root);
    const uint64_t fp = 0x5EED;
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
    const uint64_t seed0 = seed;
    int rounds = 12, killed = 0;
    for (int r = 0; r < rounds; r++) {
        int pfd[2];
        if (pipe(pfd) != 0) break;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            kt_crash_child(dir, fp, (int)(th_rng_next(&seed) % KT_CRASH_KEYS), pfd[1]);
            _exit(0);
        }
        close(pfd[1]);
        char c;
        int ready = read(pfd[0], &c, 1) == 1;
        close(pfd[0]);
        kt_sleep_us((long)(th_rng_next(&seed) % 20000));
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        killed += ready && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    }
    CHECK_MSG(killed == rounds, "only %d of %d writers were killed while running (seed %llx)", killed, rounds,
              (unsigned long long)seed0);

    eng_kvdisk *d = kt_open(dir, fp, KT_CRASH_PAGE, 0, 0);
    int tmps = 0, wrong = 0;
    int pages = kt_audit(d, fp, KT_CRASH_KEYS, KT_CRASH_PAGE, &tmps, &wrong);
    CHECK_MSG(wrong == 0, "%d bad files after kill -9 (seed %llx)", wrong, (unsigned long long)seed0);
    CHECK_MSG(pages > 0, "no page survived %d rounds (seed %llx)", rounds, (unsigned long long)seed0);
    /* every key: a correct page or a miss, never other data */
    unsigned char *want = malloc(KT_CRASH_PAGE), *got = malloc(KT_CRASH_PAGE);
    int hits = 0, bad = 0;
    for (int i = 0; i < KT_CRASH_KEYS; i++) {
        kt_key k = kt_key_make(fp, i);
        kt_fill(want, KT_CRASH_PAGE, i);
        if (kt_get(d, &k, got)) {
            hits++;
            bad += memcmp(want, got, KT_CRASH_PAGE) != 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(hits, pages);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).corrupt, 0);
    if (check_get()->verbose)
        fprintf(stderr, "kill9: %d rounds, %d pages, %d tmp files left by killed writers\n", rounds, pages,
                tmps);
    eng_kvdisk_close(d);
    free(want);
    free(got);
}

enum { KT_SHARED_KEYS = 48, KT_OWN_BASE = 1000, KT_CONC_PAGE = 64 * 1024 + 4 };

/* Child c: writes the shared keys and its own, three passes; between passes it
 * deletes some shared files, as another process's eviction would. */
static void kt_conc_child(const char *dir, uint64_t fp, int c) {
    eng_kvdisk_params p = {dir, fp, 0, KT_CONC_PAGE, 0};
    eng_kvdisk *d = NULL;
    if (eng_kvdisk_open(&d, &p, NULL) != 0 || !eng_kvdisk_enabled(d)) _exit(3);
    unsigned char *in = malloc(KT_CONC_PAGE);
    uint64_t seed = 0x1234567ull + (uint64_t)c;
    char path[PATH_MAX];
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < KT_SHARED_KEYS; i++) {
            int ki = (i + c * 17) % KT_SHARED_KEYS; /* different orders collide more */
            kt_key k = kt_key_make(fp, ki);
            kt_fill(in, KT_CONC_PAGE, ki);
            kt_put(d, &k, in);
            int own = KT_OWN_BASE * (c + 1) + i;
            k = kt_key_make(fp, own);
            kt_fill(in, KT_CONC_PAGE, own);
            kt_put(d, &k, in);
            if (i % 8 == 7) eng_kvdisk_flush(d);
        }
        eng_kvdisk_flush(d);
        for (int i = 0; pass < 2 && i < KT_SHARED_KEYS; i++) {
            if (th_rng_next(&seed) % 2) continue;
            eng_kvdisk_path(d, kt_key_make(fp, i).hash, path, sizeof path);
            unlink(path);
        }
    }
    eng_kvdisk_close(d);
    free(in);
    _exit(0);
}

static int kt_check_key(eng_kvdisk *d, uint64_t fp, int i, unsigned char *want, unsigned char *got,
                        int *bad) {
    kt_key k = kt_key_make(fp, i);
    if (!kt_get(d, &k, got)) return 0;
    kt_fill(want, KT_CONC_PAGE, i);
    *bad += memcmp(want, got, KT_CONC_PAGE) != 0;
    return 1;
}

static void kt_concurrent(const char *root) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/shared", root);
    const uint64_t fp = 0xC0C0;
    pid_t pid[2];
    fflush(NULL);
    for (int c = 0; c < 2; c++)
        if ((pid[c] = fork()) == 0) kt_conc_child(dir, fp, c);
    eng_kvdisk *d = kt_open(dir, fp, KT_CONC_PAGE, 0, 0);
    unsigned char *want = malloc(KT_CONC_PAGE), *got = malloc(KT_CONC_PAGE);
    int bad = 0, hits = 0, live = 2, st[2] = {-1, -1};
    while (live) {
        for (int i = 0; i < KT_SHARED_KEYS; i++) {
            hits += kt_check_key(d, fp, i, want, got, &bad);
            hits += kt_check_key(d, fp, KT_OWN_BASE + i, want, got, &bad);
            hits += kt_check_key(d, fp, 2 * KT_OWN_BASE + i, want, got, &bad);
        }
        for (int c = 0; c < 2; c++)
            if (st[c] == -1 && waitpid(pid[c], &st[c], WNOHANG) == pid[c]) live--;
    }
    for (int c = 0; c < 2; c++)
        CHECK_MSG(WIFEXITED(st[c]) && WEXITSTATUS(st[c]) == 0, "writer %d status %d", c, st[c]);
    CHECK_EQ_INT(bad, 0);
    /* after both: own keys all there and right; shared ones right or absent */
    int own = 0;
    for (int i = 0; i < KT_SHARED_KEYS; i++) {
        kt_check_key(d, fp, i, want, got, &bad);
        own += kt_check_key(d, fp, KT_OWN_BASE + i, want, got, &bad);
        own += kt_check_key(d, fp, 2 * KT_OWN_BASE + i, want, got, &bad);
    }
    CHECK_EQ_INT(own, 2 * KT_SHARED_KEYS);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).corrupt, 0);
    int tmps = 0, wrong = 0;
    (void)kt_audit(d, fp, 3 * KT_OWN_BASE, KT_CONC_PAGE, &tmps, &wrong);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(tmps, 0); /* writers that exit cleanly leave none */
    if (check_get()->verbose) fprintf(stderr, "concurrent: %d hits while writing\n", hits);
    eng_kvdisk_close(d);
    free(want);
    free(got);
}

void test_kvdisk(void) {
    char root[] = "/tmp/cachet-kvdisk-XXXXXX";
    if (!mkdtemp(root)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    CHECK_CASE(hash) kt_hash();
    CHECK_CASE(roundtrip) kt_roundtrip(root);
    CHECK_CASE(corrupt) kt_corrupt(root);
    CHECK_CASE(budget) kt_budget(root);
    CHECK_CASE(stale_tmp) kt_stale_tmp(root);
    CHECK_CASE(unwritable) kt_unwritable(root);
    CHECK_CASE(full_disk) kt_full_disk(root);
    CHECK_CASE(queue) kt_queue(root);
    CHECK_CASE(dir_removed) kt_dir_removed(root);
    CHECK_CASE(default_dir) kt_default_dir(root);
    CHECK_CASE(kill9) kt_kill9(root);
    CHECK_CASE(concurrent) kt_concurrent(root);
    kt_rm_rf(root);
}
