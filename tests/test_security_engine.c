/* tests/test_security_engine.c: issue 13's disk tier: its files are private
 * from creation (directory 0700, pages 0600, under umask 0), a wider existing
 * directory is warned about once, one run repairs every bad page it meets
 * (tokens identical to --no-cache, every page read back from disk by the
 * next run), a FIFO or a link named like a page never hangs a lookup. Files
 * under a mkdtemp directory it removes; the end-to-end cases run bin/cachet
 * on the real model. Model files the fuzzers found are refused with a
 * message. Special tokens are in test_security_tokens.c. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../engine/kvdisk.h"
#include "../util/buf.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"

/* --- helpers ------------------------------------------------------------------- */

static int se_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

static void se_rm_rf(const char *path) { nftw(path, se_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static int se_mode(const char *path) {
    struct stat sb;
    return lstat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

typedef struct se_key {
    uint64_t hash, parent;
    int32_t tok[16];
} se_key;

enum { SE_PAGE = 4096, SE_CHAIN = 8 };

/* A chain of SE_CHAIN pages of 16 tokens each, as the cache writes a prompt. */
static void se_chain(se_key *k, uint64_t fp) {
    uint64_t parent = 0;
    for (int i = 0; i < SE_CHAIN; i++) {
        for (int t = 0; t < 16; t++) k[i].tok[t] = 100 * i + t;
        k[i].parent = parent;
        k[i].hash = parent = eng_kvdisk_hash(fp, parent, k[i].tok, 16);
    }
}

static void se_fill(unsigned char *p, int i) {
    uint64_t x = (uint64_t)i + 77;
    for (size_t j = 0; j < SE_PAGE; j++) p[j] = (unsigned char)th_rng_next(&x);
}

static eng_kvdisk *se_open(const char *dir, uint64_t fp) {
    eng_kvdisk_params p = {dir, fp, 0, SE_PAGE, 0};
    eng_kvdisk *d = NULL;
    util_err e;
    util_err_clear(&e);
    CHECK_MSG(eng_kvdisk_open(&d, &p, &e) == 0 && d && eng_kvdisk_enabled(d), "kvdisk open '%s': %s", dir,
              e.msg);
    return d;
}

/* Flips byte `off` of a file in place (its size stays). */
static int se_flip(const char *path, long off) {
    int fd = open(path, O_RDWR);
    if (fd < 0) return -1;
    unsigned char c;
    int ok = pread(fd, &c, 1, off) == 1;
    c ^= 0x5a;
    ok = ok && pwrite(fd, &c, 1, off) == 1;
    close(fd);
    return ok ? 0 : -1;
}

/* --- the disk tier: modes ------------------------------------------------------- */

/* Created 0700 and 0600 whatever the umask: checked under umask 0, where a
 * mode asked for at creation is the mode the file gets. */
static void se_kv_modes(const char *root) {
    char dir[512], sub[600], page[700], mid[512];
    snprintf(mid, sizeof mid, "%s/modes/cache", root);
    snprintf(dir, sizeof dir, "%s/kv", mid);
    uint64_t fp = 0x5eed;
    se_key k[SE_CHAIN];
    se_chain(k, fp);
    mode_t old = umask(0);
    eng_kvdisk *d = se_open(dir, fp);
    unsigned char buf[SE_PAGE];
    se_fill(buf, 0);
    if (d) {
        eng_kvdisk_put(d, k[0].hash, k[0].parent, k[0].tok, 16, buf);
        eng_kvdisk_flush(d);
        CHECK(eng_kvdisk_path(d, k[0].hash, page, sizeof page) == 0);
        snprintf(sub, sizeof sub, "%s/%02x", dir, (unsigned)(k[0].hash >> 56));
        CHECK_EQ_INT(se_mode(mid), 0700); /* the directories it had to make */
        CHECK_EQ_INT(se_mode(dir), 0700);
        CHECK_EQ_INT(se_mode(sub), 0700);
        CHECK_EQ_INT(se_mode(page), 0600);
        eng_kvdisk_close(d);
    }
    umask(old);
}

/* A directory wider than 0700 that already exists: one warning (not one per
 * page, not twice), pages inside still 0600, nothing chmod'ed behind the
 * user's back. Through bin/cachet on the real model. */
static void se_kv_wide_dir(const char *root) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/wide", root);
    CHECK(mkdir(dir, 0755) == 0 && chmod(dir, 0755) == 0);
    proc_result r = proc_runf(
        "umask 0; %s/cachet generate --kv-dir '%s' --threads 2 --max-tokens 2 --temp 0 "
        "--prompt 'one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty'",
        proc_bin_dir(), dir);
    CHECK_EQ_INT(r.status, 0);
    int n = 0;
    for (const char *p = r.err; p && (p = strstr(p, "readable by other users")); p++) n++;
    CHECK_MSG(n == 1, "warnings about the wide directory: %d; stderr: %s", n, r.err);
    CHECK_MSG(r.err && strstr(r.err, dir), "the warning names the directory: %s", r.err);
    CHECK_EQ_INT(se_mode(dir), 0755);
    proc_result_free(&r);
    int pages = 0, wrong = 0;
    proc_result f = proc_runf(
        "find '%s' -name '*.kvp' -perm 600 | wc -l; find '%s' -name '*.kvp' ! -perm 600 | wc -l; "
        "find '%s' -mindepth 1 -type d ! -perm 700 | wc -l",
        dir, dir, dir);
    int wdirs = -1;
    CHECK(sscanf(f.out ? f.out : "", "%d %d %d", &pages, &wrong, &wdirs) == 3);
    CHECK_MSG(pages > 0 && wrong == 0 && wdirs == 0,
              "pages 0600: %d, others: %d, subdirectories not 0700: %d", pages, wrong, wdirs);
    proc_result_free(&f);
}

/* --- the disk tier: repair -------------------------------------------------------- */

/* Every page of a chain corrupt (same size, a flipped payload byte): the first
 * lookup deletes the first page; the pages then recomputed are written again
 * even where a bad file of the right size holds the name, so the next lookups
 * find all of them good. Before: only the first was rewritten per run. */
static void se_kv_repair(const char *root) {
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/repair", root);
    uint64_t fp = 0xfeed;
    se_key k[SE_CHAIN];
    se_chain(k, fp);
    unsigned char in[SE_PAGE], out[SE_PAGE];
    eng_kvdisk *d = se_open(dir, fp);
    if (!d) return;
    for (int i = 0; i < SE_CHAIN; i++) {
        se_fill(in, i);
        eng_kvdisk_put(d, k[i].hash, k[i].parent, k[i].tok, 16, in);
    }
    eng_kvdisk_flush(d);
    for (int i = 0; i < SE_CHAIN; i++) {
        CHECK(eng_kvdisk_path(d, k[i].hash, path, sizeof path) == 0);
        CHECK(se_flip(path, 44 + 64 + 1000) == 0);
    }
    CHECK_EQ_INT(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out), 0); /* met, deleted */
    for (int i = 0; i < SE_CHAIN; i++) { /* recomputed from there, as the cache does */
        se_fill(in, i);
        eng_kvdisk_put(d, k[i].hash, k[i].parent, k[i].tok, 16, in);
    }
    eng_kvdisk_flush(d);
    int good = 0;
    for (int i = 0; i < SE_CHAIN; i++) {
        se_fill(in, i);
        good += eng_kvdisk_get(d, k[i].hash, k[i].parent, k[i].tok, 16, out) == 1 &&
                memcmp(in, out, SE_PAGE) == 0;
    }
    CHECK_EQ_INT(good, SE_CHAIN);
    CHECK_EQ_INT(eng_kvdisk_get_stats(d).corrupt, 1);
    eng_kvdisk_close(d);
}

/* One generation's ids and cache figures, from `cachet generate --json`. */
typedef struct se_gen {
    int ok, prompt_tokens, cached_disk;
    char tokens[512];
    char *err;
} se_gen;

static const char se_prompt[] =
    "The disk tier keeps pages of the prefix cache between runs, one file per page of sixteen tokens, "
    "each with a header and a checksum, so that a corrupt or truncated file is found and never used. "
    "This prompt is long enough to fill several pages of that cache.";

static se_gen se_generate(const char *kvdir, const char *extra) {
    se_gen g = {0};
    proc_result r = proc_runf("umask 077; exec %s/cachet generate --json --threads 2 --max-tokens 6 --temp 0 "
                              "--kv-dir '%s' %s --prompt '%s'",
                              proc_bin_dir(), kvdir, extra, se_prompt);
    cJSON *o = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    if (o) {
        g.ok = 1;
        g.prompt_tokens = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "prompt_tokens"));
        g.cached_disk = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "cached_tokens_disk"));
        char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "tokens"));
        snprintf(g.tokens, sizeof g.tokens, "%s", t ? t : "");
        free(t);
        cJSON_Delete(o);
    } else {
        check_fail_at(__FILE__, __LINE__, "cachet generate: status %d: %s", r.status, r.err ? r.err : "");
    }
    g.err = r.err;
    r.err = NULL;
    proc_result_free(&r);
    return g;
}

/* The pages under dir (find's output), each on a line, into out. */
static int se_pages(const char *dir, char out[][700], int cap) {
    proc_result f = proc_runf("find '%s' -name '*.kvp' | sort", dir);
    int n = 0;
    for (char *s = f.out, *nl; s && *s && n < cap; s = nl + 1) {
        if (!(nl = strchr(s, '\n'))) break;
        snprintf(out[n++], 700, "%.*s", (int)(nl - s), s);
    }
    proc_result_free(&f);
    return n;
}

/* Corrupt every page of a prompt, one run: tokens as --no-cache, and the next
 * run reads every full page back from disk (nothing left to repair). */
static void se_kv_repair_generate(const char *root) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/gen-repair", root);
    se_gen cold = se_generate(dir, "--no-cache --no-disk-cache");
    se_gen first = se_generate(dir, "");
    se_gen warm = se_generate(dir, ""); /* what a run reads from intact pages */
    static char pages[64][700];
    int n = se_pages(dir, pages, 64);
    CHECK_MSG(n >= 4 && warm.cached_disk > 0, "pages written: %d, read back: %d tokens", n, warm.cached_disk);
    for (int i = 0; i < n; i++) CHECK(se_flip(pages[i], 44 + 4 * 16 + 100 + i) == 0);
    se_gen fix = se_generate(dir, "--debug");
    se_gen after = se_generate(dir, "--debug");
    CHECK_EQ_STR(first.tokens, cold.tokens);
    CHECK_EQ_STR(fix.tokens, cold.tokens);
    CHECK_EQ_STR(after.tokens, cold.tokens);
    CHECK_MSG(after.cached_disk == warm.cached_disk,
              "the run after the repair read %d tokens from disk, want %d (%d pages)", after.cached_disk,
              warm.cached_disk, n);
    CHECK_MSG(after.err && !strstr(after.err, "deleted"), "nothing left to repair: %s", after.err);
    /* the repairing run reports each bad file it met once */
    int lines = 0;
    for (const char *p = fix.err; p && (p = strstr(p, "deleted")); p++) lines++;
    CHECK_MSG(lines == 1, "corrupt-file reports in the repairing run: %d: %s", lines, fix.err);
    free(cold.err), free(first.err), free(warm.err), free(fix.err), free(after.err);
}

/* --- the disk tier: special files ------------------------------------------------- */

/* A FIFO named like a page: a lookup in a child process must return within
 * 10 s (it blocked in open(2) forever), count a miss, and remove the FIFO so
 * the page can be written. */
static void se_kv_fifo(const char *root) {
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/fifo", root);
    uint64_t fp = 0xf1f0;
    se_key k[SE_CHAIN];
    se_chain(k, fp);
    eng_kvdisk *d = se_open(dir, fp);
    if (!d) return;
    unsigned char in[SE_PAGE], out[SE_PAGE];
    se_fill(in, 0);
    eng_kvdisk_put(d, k[1].hash, k[1].parent, k[1].tok, 16, in); /* makes the fan-out directories */
    eng_kvdisk_flush(d);
    CHECK(eng_kvdisk_path(d, k[0].hash, path, sizeof path) == 0);
    char sub[700];
    snprintf(sub, sizeof sub, "%.*s", (int)(strrchr(path, '/') - path), path);
    mkdir(sub, 0700);
    CHECK(mkfifo(path, 0600) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        _exit(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out) == 0 ? 0 : 1);
    }
    int st = -1, waited = 0;
    for (; waited < 100 && waitpid(pid, &st, WNOHANG) == 0; waited++) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (waited == 100) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        CHECK_MSG(0, "a lookup of a FIFO named like a page blocked for 10 s");
    } else {
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the lookup of a FIFO: status %d", st);
        CHECK_MSG(se_mode(path) == -1, "the FIFO was removed");
    }
    unlink(path);
    CHECK(mkfifo(path, 0600) == 0); /* the writer replaces one in place */
    eng_kvdisk_put(d, k[0].hash, k[0].parent, k[0].tok, 16, in);
    eng_kvdisk_flush(d);
    struct stat sb;
    CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK_EQ_INT(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out), 1);
    eng_kvdisk_close(d);
}

/* A symbolic link named like a page (to /dev/zero, to a good page elsewhere):
 * a miss without following it, the link removed, the page then written as a
 * regular file in its place. */
static void se_kv_link(const char *root) {
    char dir[512], path[700], other[700];
    snprintf(dir, sizeof dir, "%s/link", root);
    uint64_t fp = 0x11c;
    se_key k[SE_CHAIN];
    se_chain(k, fp);
    eng_kvdisk *d = se_open(dir, fp);
    if (!d) return;
    unsigned char in[SE_PAGE], out[SE_PAGE];
    se_fill(in, 0);
    eng_kvdisk_put(d, k[0].hash, k[0].parent, k[0].tok, 16, in);
    eng_kvdisk_flush(d);
    CHECK(eng_kvdisk_path(d, k[0].hash, path, sizeof path) == 0);
    snprintf(other, sizeof other, "%s/elsewhere.kvp", root);
    CHECK(rename(path, other) == 0 && symlink(other, path) == 0);
    CHECK_EQ_INT(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out), 0);
    CHECK_MSG(se_mode(path) == -1, "the link was removed");
    CHECK(symlink("/dev/zero", path) == 0);
    CHECK_EQ_INT(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out), 0);
    CHECK(symlink("/dev/zero", path) == 0);
    eng_kvdisk_put(d, k[0].hash, k[0].parent, k[0].tok, 16, in); /* replaces the link */
    eng_kvdisk_flush(d);
    struct stat sb;
    CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0600);
    CHECK_EQ_INT(eng_kvdisk_get(d, k[0].hash, k[0].parent, k[0].tok, 16, out), 1);
    CHECK(memcmp(in, out, SE_PAGE) == 0);
    eng_kvdisk_close(d);
}

/* Every page of a prompt replaced by a FIFO: `cachet generate` finishes under
 * a 120 s guard with tokens as --no-cache. */
static void se_kv_fifo_generate(const char *root) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/gen-fifo", root);
    se_gen cold = se_generate(dir, "--no-cache --no-disk-cache");
    se_gen first = se_generate(dir, "");
    static char pages[64][700];
    int n = se_pages(dir, pages, 64);
    CHECK_MSG(n >= 4, "pages written: %d", n);
    for (int i = 0; i < n; i++) CHECK(unlink(pages[i]) == 0 && mkfifo(pages[i], 0600) == 0);
    proc_result r = proc_runf(
        "exec timeout -s KILL 120 %s/cachet generate --json --threads 2 --max-tokens 6 --temp 0 "
        "--kv-dir '%s' --prompt '%s'",
        proc_bin_dir(), dir, se_prompt);
    CHECK_MSG(r.status == 0, "generate with FIFO pages: status %d (137: it hung): %s", r.status, r.err);
    cJSON *o = cJSON_Parse(r.out ? r.out : "");
    char *t = o ? cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "tokens")) : NULL;
    CHECK_EQ_STR(t ? t : "", cold.tokens);
    free(t);
    cJSON_Delete(o);
    proc_result_free(&r);
    free(cold.err), free(first.err);
}

/* Inputs the fuzzers found (tests/fuzz/regress/model/): each is refused by
 * eng_model_open with a message, within the runner's memory (the first one's
 * block_count of 8,388,609 once sized a 3.9 GB layer table). */
static void se_fuzz_regressions(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regress/model", check_root());
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return;
    int seen = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* in a child whose address space may grow by 1 GiB at most: a
         * table sized from a corrupt count is ENOMEM there, not EFORMAT */
        int pfd[2];
        if (pipe(pfd) != 0) continue;
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            long pages = 0;
            FILE *f = fopen("/proc/self/statm", "r");
            if (f && fscanf(f, "%ld", &pages) != 1) pages = 0;
            if (f) fclose(f);
            struct rlimit rl;
            rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)1 << 30);
            setrlimit(RLIMIT_AS, &rl);
            eng_model_params mp = {
                .n_threads = 1, .kv_budget = 4u << 20, .no_disk_cache = 1, .device = "cpu"};
            eng_model *m = NULL;
            util_err err = {0};
            int rc = eng_model_open(&m, path, &mp, &err);
            dprintf(pfd[1], "%d %s", rc, err.msg);
            _exit(0);
        }
        close(pfd[1]);
        char out[1100] = {0};
        ssize_t k = pid > 0 ? read(pfd[0], out, sizeof out - 1) : -1;
        close(pfd[0]);
        int st = 0;
        if (pid > 0) waitpid(pid, &st, 0);
        int rc = k > 0 ? (int)strtol(out, NULL, 10) : -1;
        CHECK_MSG(WIFEXITED(st) && rc == UTIL_EFORMAT && strchr(out, ' ') && strchr(out, ' ')[1],
                  "%s: '%s' (want UTIL_EFORMAT %d with a message)", e->d_name, out, UTIL_EFORMAT);
        seen++;
    }
    closedir(d);
    CHECK(seen > 0);
}

void test_security_engine(void) {
    char root[] = "/tmp/cachet-sec-engine-XXXXXX";
    if (!mkdtemp(root)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    CHECK_CASE(kv_modes) se_kv_modes(root);
    CHECK_CASE(kv_wide_dir) se_kv_wide_dir(root);
    CHECK_CASE(kv_repair) se_kv_repair(root);
    CHECK_CASE(kv_repair_generate) se_kv_repair_generate(root);
    CHECK_CASE(kv_fifo) se_kv_fifo(root);
    CHECK_CASE(kv_link) se_kv_link(root);
    CHECK_CASE(kv_fifo_generate) se_kv_fifo_generate(root);
    CHECK_CASE(fuzz_regressions) se_fuzz_regressions();
    se_rm_rf(root);
}
