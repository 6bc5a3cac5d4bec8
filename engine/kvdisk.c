/* engine/kvdisk.c: the disk tier of the prefix cache (see kvdisk.h): page
 * files with a checksummed little-endian header, a background writer thread
 * fed by a bounded queue, atomic tmp-then-rename writes, and an mtime-LRU
 * budget sweep. Does not fsync: a crash of the machine can leave a renamed
 * but empty or garbled file, which the size/header/checksum checks reject;
 * a killed process leaves at most a tmp file that readers never open. */
#include "kvdisk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../util/vec.h"

/* File layout, all integers little-endian:
 *   0  magic "CKVP"        4  version u32        8  fingerprint u64
 *   16 hash u64            24 parent u64         32 ntok u32
 *   36 tokens i32[ntok]    36+4n payload_bytes u64
 *   44+4n payload[page_bytes]   then checksum u64 over everything before it. */
enum {
    KV_VERSION = 1,
    KV_FIXED_HDR = 44,
    KV_SUM_BYTES = 8,
    KV_QUEUE_MAX = 256,         /* pages waiting for the writer */
    KV_RESCAN_EVERY = 256,      /* writes between rescans (other processes add files) */
    KV_TMP_STALE_SEC = 10 * 60, /* tmp files older than this are from dead writers */
};
#define KV_QUEUE_MAX_BYTES ((size_t)128 << 20)
#define KV_DEFAULT_BUDGET  ((uint64_t)2 << 30)

typedef struct kv_job {
    struct kv_job *next;
    uint64_t hash, parent;
    int ntok;
    int32_t tokens[ENG_KVDISK_MAX_TOKENS];
    unsigned char payload[]; /* page_bytes */
} kv_job;

struct eng_kvdisk {
    char *dir; /* malloc'd, no trailing slash */
    uint64_t fingerprint, budget;
    size_t page_bytes;
    int debug;
    int enabled; /* fixed at open */
    int have_thread;
    pthread_t thread;

    pthread_mutex_t mu;  /* guards everything below */
    pthread_cond_t work; /* queue non-empty or stop */
    pthread_cond_t idle; /* queue empty and writer not busy */
    kv_job *head, *tail;
    int queued;
    size_t queued_bytes;
    int busy, stop;
    int writes_off; /* set after a full disk */
    int fail_errno; /* test hook */
    unsigned tmp_counter;
    eng_kvdisk_stats st;

    /* writer-thread only */
    int scanned;
    uint64_t total_bytes; /* estimate of bytes under dir */
    unsigned since_scan;
    unsigned char subdir_ok[256];
};

/* ------------------------------------------------------------------------ */
/* hashing and little-endian encoding                                        */

static const uint64_t KV_P1 = 0x9E3779B185EBCA87ull, KV_P2 = 0xC2B2AE3D27D4EB4Full,
                      KV_P3 = 0x165667B19E3779F9ull, KV_P4 = 0x85EBCA77C2B2AE63ull,
                      KV_P5 = 0x27D4EB2F165667C5ull;

static uint64_t kv_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Written out so compilers fuse it into one load on little-endian machines. */
static uint64_t kv_rd64(const unsigned char *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static uint32_t kv_rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void kv_wr64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void kv_wr32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t kv_round(uint64_t acc, uint64_t v) {
    acc += v * KV_P2;
    return kv_rotl(acc, 31) * KV_P1;
}

static uint64_t kv_merge(uint64_t h, uint64_t v) {
    h ^= kv_round(0, v);
    return h * KV_P1 + KV_P4;
}

/* xxh64 (agrees with its reference vectors), written from its description:
 * four lanes of 8 bytes, a tail, an avalanche. Reads bytes explicitly
 * little-endian, so results agree across machines. */
static uint64_t kv_hash64(const void *data, size_t n, uint64_t seed) {
    const unsigned char *p = data, *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + KV_P1 + KV_P2, v2 = seed + KV_P2, v3 = seed, v4 = seed - KV_P1;
        do {
            v1 = kv_round(v1, kv_rd64(p));
            v2 = kv_round(v2, kv_rd64(p + 8));
            v3 = kv_round(v3, kv_rd64(p + 16));
            v4 = kv_round(v4, kv_rd64(p + 24));
            p += 32;
        } while (end - p >= 32);
        h = kv_rotl(v1, 1) + kv_rotl(v2, 7) + kv_rotl(v3, 12) + kv_rotl(v4, 18);
        h = kv_merge(kv_merge(kv_merge(kv_merge(h, v1), v2), v3), v4);
    } else {
        h = seed + KV_P5;
    }
    h += (uint64_t)n;
    for (; end - p >= 8; p += 8) h = kv_rotl(h ^ kv_round(0, kv_rd64(p)), 27) * KV_P1 + KV_P4;
    if (end - p >= 4) {
        h = kv_rotl(h ^ (uint64_t)kv_rd32(p) * KV_P1, 23) * KV_P2 + KV_P3;
        p += 4;
    }
    for (; p < end; p++) h = kv_rotl(h ^ *p * KV_P5, 11) * KV_P1;
    h ^= h >> 33;
    h *= KV_P2;
    h ^= h >> 29;
    h *= KV_P3;
    h ^= h >> 32;
    return h;
}

uint64_t eng_kvdisk_hash(uint64_t fingerprint, uint64_t parent, const int32_t *tokens, int ntok) {
    unsigned char buf[4 * ENG_KVDISK_MAX_TOKENS];
    kv_wr64(buf, fingerprint);
    kv_wr64(buf + 8, parent);
    kv_wr32(buf + 16, (uint32_t)(ntok < 0 ? 0 : ntok));
    uint64_t h = kv_hash64(buf, 20, 0);
    for (int i = 0; i < ntok;) {
        int k = 0;
        for (; k < ENG_KVDISK_MAX_TOKENS && i < ntok; k++, i++) kv_wr32(buf + 4 * k, (uint32_t)tokens[i]);
        h = kv_hash64(buf, 4 * (size_t)k, h);
    }
    return h ? h : 1; /* 0 stays free to mean "root" */
}

static size_t kv_hdr_bytes(int ntok) { return KV_FIXED_HDR + 4 * (size_t)ntok; }

/* Writes the header every valid file of this key must start with. */
static size_t kv_encode_header(unsigned char *out, const eng_kvdisk *d, uint64_t hash, uint64_t parent,
                               const int32_t *tokens, int ntok) {
    memcpy(out, "CKVP", 4);
    kv_wr32(out + 4, KV_VERSION);
    kv_wr64(out + 8, d->fingerprint);
    kv_wr64(out + 16, hash);
    kv_wr64(out + 24, parent);
    kv_wr32(out + 32, (uint32_t)ntok);
    for (int i = 0; i < ntok; i++) kv_wr32(out + 36 + 4 * i, (uint32_t)tokens[i]);
    kv_wr64(out + 36 + 4 * (size_t)ntok, (uint64_t)d->page_bytes);
    return kv_hdr_bytes(ntok);
}

/* Says which header field holds byte offset `off`, for debug reports. */
static const char *kv_field_at(size_t off, int ntok) {
    if (off < 4) return "bad magic";
    if (off < 8) return "unknown format version";
    if (off < 16) return "foreign model fingerprint";
    if (off < 24) return "hash differs";
    if (off < 32) return "parent hash differs";
    if (off < 36) return "token count differs";
    if (off < 36 + 4 * (size_t)ntok) return "token ids differ";
    return "payload size differs";
}

static uint64_t kv_checksum(const unsigned char *hdr, size_t hlen, const void *payload, size_t plen) {
    return kv_hash64(payload, plen, kv_hash64(hdr, hlen, 0));
}

/* ------------------------------------------------------------------------ */
/* paths, small file helpers                                                 */

int eng_kvdisk_path(const eng_kvdisk *d, uint64_t hash, char *buf, size_t n) {
    if (!d || !d->enabled) return UTIL_ENOTFOUND;
    int k = snprintf(buf, n, "%s/%02x/%016llx.kvp", d->dir, (unsigned)(hash >> 56), (unsigned long long)hash);
    return k < 0 || (size_t)k >= n ? UTIL_ERANGE : UTIL_OK;
}

static int kv_write_full(int fd, const void *buf, size_t n) {
    const unsigned char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? -1 : (errno = EIO, -1);
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int kv_pread_full(int fd, void *buf, size_t n, off_t off) {
    unsigned char *p = buf;
    while (n) {
        ssize_t k = pread(fd, p, n, off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

static struct timespec kv_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t;
}

/* Marks a file as just used. Explicit fine-grained times keep the LRU order
 * of files touched within one clock tick; they need ownership, so another
 * user's file falls back to "now" (needs write access), else stays as is.
 * mtime, not atime: atime is unreliable under noatime/relatime mounts. */
static void kv_touch(int fd, const char *path) {
    struct timespec t[2];
    t[0] = t[1] = kv_now();
    int rc = fd >= 0 ? futimens(fd, t) : utimensat(AT_FDCWD, path, t, 0);
    if (rc != 0 && (errno == EPERM || errno == EACCES)) {
        if (fd >= 0)
            (void)futimens(fd, NULL);
        else
            (void)utimensat(AT_FDCWD, path, NULL, 0);
    }
}

/* mkdir -p. Returns 0, or -1 with errno set. */
static int kv_mkdirs(const char *dir) {
    char p[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0) return errno = ENOENT, -1;
    if (n >= sizeof p) return errno = ENAMETOOLONG, -1;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) return -1; /* private from creation */
        p[i] = c;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) return errno = ENOTDIR, -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* budget: scan, stale tmp sweep, LRU eviction (writer thread only)          */

typedef struct kv_file {
    int64_t mtime_ns;
    uint64_t size, hash;
} kv_file;

typedef struct kv_scan {
    kv_file *v;
    size_t n, cap;
    uint64_t total;
} kv_scan;

static int kv_file_cmp(const void *a, const void *b) {
    const kv_file *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static int kv_hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Parses "<16 hex>.kvp"; returns 1 with *hash set, else 0. */
static int kv_parse_name(const char *name, uint64_t *hash) {
    if (strlen(name) != 20 || strcmp(name + 16, ".kvp") != 0) return 0;
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) {
        int v = kv_hexval(name[i]);
        if (v < 0) return 0;
        h = h << 4 | (uint64_t)v;
    }
    *hash = h;
    return 1;
}

/* Lists one fan-out subdirectory: page files into s, stale tmp files deleted. */
static void kv_scan_subdir(const char *sub, kv_scan *s, time_t now) {
    DIR *dp = opendir(sub);
    if (!dp) return;
    int dfd = dirfd(dp);
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        uint64_t h;
        int is_page = kv_parse_name(e->d_name, &h);
        int is_tmp = !is_page && strstr(e->d_name, ".kvp.tmp.") != NULL;
        if (!is_page && !is_tmp) continue;
        struct stat sb;
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (is_tmp) {
            if (now - sb.st_mtim.tv_sec > KV_TMP_STALE_SEC) (void)unlinkat(dfd, e->d_name, 0);
            continue;
        }
        if (util_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v))
            continue; /* no memory: this file is simply not evictable now */
        s->v[s->n++] = (kv_file){(int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec,
                                 (uint64_t)sb.st_size, h};
        s->total += (uint64_t)sb.st_size;
    }
    closedir(dp);
}

/* Rescans the whole directory (also what other processes wrote), removes
 * stale tmp files and, when over budget, the least recently used pages until
 * the total is under 90% of the budget. */
static void kv_sweep(eng_kvdisk *d) {
    kv_scan s = {0};
    char path[PATH_MAX];
    time_t now = time(NULL);
    for (int i = 0; i < 256; i++) {
        if (snprintf(path, sizeof path, "%s/%02x", d->dir, i) >= (int)sizeof path) continue;
        kv_scan_subdir(path, &s, now);
    }
    uint64_t evicted = 0;
    if (s.total > d->budget) {
        uint64_t target = d->budget / 10 * 9;
        qsort(s.v, s.n, sizeof *s.v, kv_file_cmp);
        for (size_t i = 0; i < s.n && s.total > target; i++) {
            if (eng_kvdisk_path(d, s.v[i].hash, path, sizeof path) != 0) continue;
            if (unlink(path) == 0)
                evicted++;
            else if (errno != ENOENT)
                continue; /* could not free it: try the next one */
            s.total -= s.v[i].size;
        }
    }
    free(s.v);
    d->total_bytes = s.total;
    d->since_scan = 0;
    d->scanned = 1;
    pthread_mutex_lock(&d->mu);
    d->st.evictions += evicted;
    pthread_mutex_unlock(&d->mu);
}

/* ------------------------------------------------------------------------ */
/* the writer                                                                */

static void kv_writes_off(eng_kvdisk *d, int errnum) {
    pthread_mutex_lock(&d->mu);
    int first = !d->writes_off;
    d->writes_off = 1;
    d->st.write_errors++;
    pthread_mutex_unlock(&d->mu);
    if (first)
        fprintf(stderr, "cachet: kv disk cache '%s' is full (%s); no more disk writes this run\n", d->dir,
                strerror(errnum));
}

/* Writes header, payload, checksum to fd. Returns 0 or an errno value. */
static int kv_write_file(eng_kvdisk *d, int fd, const kv_job *j) {
    unsigned char hdr[KV_FIXED_HDR + 4 * ENG_KVDISK_MAX_TOKENS], sum[KV_SUM_BYTES];
    size_t hlen = kv_encode_header(hdr, d, j->hash, j->parent, j->tokens, j->ntok);
    kv_wr64(sum, kv_checksum(hdr, hlen, j->payload, d->page_bytes));
    pthread_mutex_lock(&d->mu);
    int injected = d->fail_errno;
    d->fail_errno = 0;
    pthread_mutex_unlock(&d->mu);
    if (injected) return injected;
    if (kv_write_full(fd, hdr, hlen) || kv_write_full(fd, j->payload, d->page_bytes) ||
        kv_write_full(fd, sum, sizeof sum))
        return errno ? errno : EIO;
    return 0;
}

static const char *kv_verify(eng_kvdisk *d, int fd, uint64_t hash, uint64_t parent, const int32_t *tokens,
                             int ntok, void *payload);

/* Opens a page file for reading without following a link or blocking on a
 * FIFO (a FIFO named like a page hung its reader). -1 with errno set. */
static int kv_open_page(const char *path) {
    int fd;
    do fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* 1 when the file at path is a valid page of this job (then its time is
 * refreshed): only then is a write skipped. A bad file of the right size is
 * replaced, so a run that recomputes from the first bad page it met repairs
 * every bad page after it too. */
static int kv_have_page(eng_kvdisk *d, const kv_job *j, const char *path) {
    int fd = kv_open_page(path);
    if (fd < 0) return 0;
    void *scratch = malloc(d->page_bytes);
    int ok = scratch && !kv_verify(d, fd, j->hash, j->parent, j->tokens, j->ntok, scratch);
    if (ok) kv_touch(fd, path); /* already there (maybe from another process) */
    free(scratch);
    close(fd);
    return ok;
}

/* Writes one page to a tmp name beside its final name, then renames it into
 * place: a reader sees either no file or a complete one. Directories are made
 * 0700 and files 0600 at creation (pages hold the prompt's token ids). */
static void kv_write_job(eng_kvdisk *d, const kv_job *j) {
    char path[PATH_MAX], tmp[PATH_MAX + 64];
    if (eng_kvdisk_path(d, j->hash, path, sizeof path) != 0) return;
    uint64_t fsize = kv_hdr_bytes(j->ntok) + d->page_bytes + KV_SUM_BYTES;
    if (kv_have_page(d, j, path)) return;
    unsigned sub = (unsigned)(j->hash >> 56);
    char subdir[PATH_MAX];
    size_t dl = strlen(path) - 21; /* strip "/<16 hex>.kvp" */
    memcpy(subdir, path, dl);
    subdir[dl] = '\0';
    if (!d->subdir_ok[sub] && (mkdir(subdir, 0700) == 0 || errno == EEXIST)) d->subdir_ok[sub] = 1;
    pthread_mutex_lock(&d->mu);
    unsigned ctr = d->tmp_counter++;
    pthread_mutex_unlock(&d->mu);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), ctr);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && kv_mkdirs(subdir) == 0) /* someone removed the dir */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = fd < 0 ? errno : kv_write_file(d, fd, j);
    if (fd >= 0) {
        struct timespec t[2];
        t[0] = t[1] = kv_now();
        if (!rc) (void)futimens(fd, t);        /* rename keeps mtime: LRU age starts now */
        if (close(fd) != 0 && !rc) rc = errno; /* NFS may report ENOSPC only here */
        if (!rc && rename(tmp, path) != 0) rc = errno;
        if (rc) (void)unlink(tmp);
    }
    if (rc == ENOSPC || rc == EDQUOT) {
        kv_writes_off(d, rc);
        return;
    }
    pthread_mutex_lock(&d->mu);
    if (rc)
        d->st.write_errors++;
    else
        d->st.writes++, d->st.write_bytes += fsize;
    pthread_mutex_unlock(&d->mu);
    if (!rc) d->total_bytes += fsize, d->since_scan++;
}

static void *kv_writer_main(void *arg) {
    eng_kvdisk *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->head && !d->stop) pthread_cond_wait(&d->work, &d->mu);
        if (!d->head) break;
        kv_job *j = d->head;
        d->head = j->next;
        if (!d->head) d->tail = NULL;
        d->queued--;
        d->queued_bytes -= d->page_bytes;
        d->busy = 1;
        int off = d->writes_off;
        if (off) d->st.dropped++;
        pthread_mutex_unlock(&d->mu);

        if (!off) {
            if (!d->scanned) kv_sweep(d); /* lazily: open stays fast */
            kv_write_job(d, j);
            if (d->total_bytes > d->budget || d->since_scan >= KV_RESCAN_EVERY) kv_sweep(d);
        }
        free(j);

        pthread_mutex_lock(&d->mu);
        d->busy = 0;
        if (!d->head) pthread_cond_broadcast(&d->idle);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* open / close                                                              */

/* Resolves the default directory; returns a malloc'd path or NULL. */
static char *kv_default_dir(void) {
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char buf[PATH_MAX];
    int k;
    if (x && x[0] == '/')
        k = snprintf(buf, sizeof buf, "%s/cachet/kv", x);
    else if (home && *home)
        k = snprintf(buf, sizeof buf, "%s/.cache/cachet/kv", home);
    else
        return NULL;
    return k < 0 || (size_t)k >= sizeof buf ? NULL : strdup(buf);
}

/* Makes the directory and proves a file can be created in it. Returns 0, or
 * an errno value for the warning. */
static int kv_probe_dir(const char *dir) {
    char probe[PATH_MAX];
    if (strlen(dir) > PATH_MAX - 64) return ENAMETOOLONG;
    if (kv_mkdirs(dir) != 0) return errno;
    struct timespec t = kv_now();
    snprintf(probe, sizeof probe, "%s/.probe.%ld.%ld", dir, (long)getpid(), (long)t.tv_nsec);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    close(fd);
    unlink(probe);
    return 0;
}

/* One warning when the directory existed wider than 0700 (one this process
 * made is never: it is created 0700). Nothing is chmod'ed: it is the user's. */
static void kv_warn_wide(const char *dir) {
    struct stat sb;
    if (stat(dir, &sb) == 0 && (sb.st_mode & 077))
        fprintf(stderr,
                "cachet: kv disk cache '%s' is readable by other users (mode %04o) and its pages hold "
                "your prompts' token ids; chmod 700 it\n",
                dir, (unsigned)(sb.st_mode & 07777));
}

int eng_kvdisk_open(eng_kvdisk **out, const eng_kvdisk_params *p, util_err *err) {
    if (!out) return util_err_set(err, UTIL_EINVAL, "kv disk cache: no out pointer");
    *out = NULL;
    if (!p || p->page_bytes == 0)
        return util_err_set(err, UTIL_EINVAL, "kv disk cache: page size must be positive");
    eng_kvdisk *d = calloc(1, sizeof *d);
    if (!d) return util_err_set(err, UTIL_ENOMEM, "kv disk cache: out of memory");
    d->dir = p->dir ? strdup(p->dir) : kv_default_dir();
    if (p->dir && !d->dir) {
        free(d);
        return util_err_set(err, UTIL_ENOMEM, "kv disk cache: out of memory");
    }
    for (size_t n = d->dir ? strlen(d->dir) : 0; n > 1 && d->dir[n - 1] == '/'; n--) d->dir[n - 1] = '\0';
    d->fingerprint = p->fingerprint;
    d->budget = p->budget_bytes ? p->budget_bytes : KV_DEFAULT_BUDGET;
    d->page_bytes = p->page_bytes;
    d->debug = p->debug;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work, NULL);
    pthread_cond_init(&d->idle, NULL);

    int e = d->dir ? kv_probe_dir(d->dir) : ENOENT;
    const char *why = d->dir ? strerror(e) : "neither XDG_CACHE_HOME nor HOME is set";
    if (!e) {
        e = pthread_create(&d->thread, NULL, kv_writer_main, d);
        why = "cannot start the writer thread";
        d->have_thread = e == 0;
    }
    d->enabled = e == 0;
    if (d->enabled)
        kv_warn_wide(d->dir);
    else
        fprintf(stderr, "cachet: kv disk cache '%s' is not writable (%s); using memory only\n",
                d->dir ? d->dir : "", why);
    *out = d;
    return UTIL_OK;
}

void eng_kvdisk_close(eng_kvdisk *d) {
    if (!d) return;
    if (d->have_thread) {
        pthread_mutex_lock(&d->mu);
        d->stop = 1;
        pthread_cond_signal(&d->work);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL); /* drains the queue first */
    }
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->idle);
    pthread_mutex_destroy(&d->mu);
    free(d->dir);
    free(d);
}

int eng_kvdisk_enabled(const eng_kvdisk *d) { return d && d->enabled; }

const char *eng_kvdisk_dir(const eng_kvdisk *d) { return d && d->dir ? d->dir : ""; }

eng_kvdisk_stats eng_kvdisk_get_stats(const eng_kvdisk *d) {
    eng_kvdisk_stats s = {0};
    if (!d) return s;
    eng_kvdisk *m = (eng_kvdisk *)d; /* never defined const; locking is not a change */
    pthread_mutex_lock(&m->mu);
    s = m->st;
    pthread_mutex_unlock(&m->mu);
    return s;
}

void eng_kvdisk_test_fail_write(eng_kvdisk *d, int errnum) {
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->fail_errno = errnum;
    pthread_mutex_unlock(&d->mu);
}

/* ------------------------------------------------------------------------ */
/* put / flush / get                                                         */

void eng_kvdisk_put(eng_kvdisk *d, uint64_t hash, uint64_t parent, const int32_t *tokens, int ntok,
                    const void *payload) {
    if (!d || !d->enabled || ntok < 0 || ntok > ENG_KVDISK_MAX_TOKENS || (ntok && !tokens) || !payload)
        return;
    pthread_mutex_lock(&d->mu);
    int full = d->queued >= KV_QUEUE_MAX ||
               (d->queued > 0 && d->queued_bytes + d->page_bytes > KV_QUEUE_MAX_BYTES);
    if (full || d->writes_off) {
        d->st.dropped++;
        pthread_mutex_unlock(&d->mu);
        return;
    }
    d->queued++; /* reserve the slot, then copy outside the lock */
    d->queued_bytes += d->page_bytes;
    pthread_mutex_unlock(&d->mu);

    kv_job *j = malloc(sizeof *j + d->page_bytes);
    if (j) {
        j->next = NULL;
        j->hash = hash;
        j->parent = parent;
        j->ntok = ntok;
        if (ntok) memcpy(j->tokens, tokens, (size_t)ntok * sizeof *tokens);
        memcpy(j->payload, payload, d->page_bytes);
    }
    pthread_mutex_lock(&d->mu);
    if (!j) {
        d->queued--;
        d->queued_bytes -= d->page_bytes;
        d->st.dropped++;
    } else {
        if (d->tail)
            d->tail->next = j;
        else
            d->head = j;
        d->tail = j;
        pthread_cond_signal(&d->work);
    }
    pthread_mutex_unlock(&d->mu);
}

void eng_kvdisk_flush(eng_kvdisk *d) {
    if (!d || !d->have_thread) return;
    pthread_mutex_lock(&d->mu);
    while (d->head || d->busy) pthread_cond_wait(&d->idle, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

/* Deletes a bad file unless another process has already replaced it. */
static void kv_reject(eng_kvdisk *d, int fd, const char *path, const char *why) {
    struct stat a, b;
    if (fd < 0 ||
        (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
        (void)unlink(path);
    if (d->debug) fprintf(stderr, "cachet: kv disk cache file '%s': %s; deleted\n", path, why);
    pthread_mutex_lock(&d->mu);
    d->st.corrupt++;
    d->st.read_misses++;
    pthread_mutex_unlock(&d->mu);
}

/* Checks an open page file against the request; reads the payload in place.
 * Returns NULL when valid, else why not. */
static const char *kv_verify(eng_kvdisk *d, int fd, uint64_t hash, uint64_t parent, const int32_t *tokens,
                             int ntok, void *payload) {
    unsigned char want[KV_FIXED_HDR + 4 * ENG_KVDISK_MAX_TOKENS];
    unsigned char got[sizeof want], sum[KV_SUM_BYTES];
    size_t hlen = kv_encode_header(want, d, hash, parent, tokens, ntok);
    struct stat sb;
    if (fstat(fd, &sb) != 0) return "cannot stat";
    if (!S_ISREG(sb.st_mode)) return "not a regular file";
    if ((uint64_t)sb.st_size != hlen + d->page_bytes + KV_SUM_BYTES)
        return sb.st_size == 0 ? "empty file" : "wrong size (truncated or foreign)";
    if (kv_pread_full(fd, got, hlen, 0) != 0) return "short read";
    if (memcmp(got, want, hlen) != 0) {
        size_t off = 0;
        while (got[off] == want[off]) off++;
        return kv_field_at(off, ntok);
    }
    if (kv_pread_full(fd, payload, d->page_bytes, (off_t)hlen) != 0 ||
        kv_pread_full(fd, sum, sizeof sum, (off_t)(hlen + d->page_bytes)) != 0)
        return "short read";
    if (kv_rd64(sum) != kv_checksum(want, hlen, payload, d->page_bytes)) return "bad checksum";
    return NULL;
}

int eng_kvdisk_get(eng_kvdisk *d, uint64_t hash, uint64_t parent, const int32_t *tokens, int ntok,
                   void *payload) {
    if (!d || !d->enabled || ntok < 0 || ntok > ENG_KVDISK_MAX_TOKENS || (ntok && !tokens) || !payload)
        return 0;
    char path[PATH_MAX];
    int fd = -1;
    if (eng_kvdisk_path(d, hash, path, sizeof path) == 0 && (fd = kv_open_page(path)) < 0 && errno == ELOOP) {
        kv_reject(d, -1, path, "a symbolic link"); /* not ours: gone, so the page can be written */
        return 0;
    }
    if (fd < 0) {
        pthread_mutex_lock(&d->mu);
        d->st.read_misses++;
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    const char *why = kv_verify(d, fd, hash, parent, tokens, ntok, payload);
    if (why) {
        kv_reject(d, fd, path, why);
        close(fd);
        return 0;
    }
    kv_touch(fd, path);
    close(fd);
    pthread_mutex_lock(&d->mu);
    d->st.reads++;
    d->st.read_bytes += d->page_bytes;
    pthread_mutex_unlock(&d->mu);
    return 1;
}
