/* tests/test_security_ws.c: the workspace as an attacker shapes it (a
 * malicious repository) and a hostile backend drives it (tests/fakesrv.h
 * scripting tool calls over loopback, `cachet -p` as a real process): symlinks
 * out of the workspace in tool paths, prompt files and skills; a concurrent
 * renamer swapping a directory with a link to outside while read_file and
 * write_file run thousands of times (beside a check-then-open canary that
 * shows the race is hit); git tools in a subdirectory of a larger repository;
 * writes to .git/ and .cachet/; write_file on a directory; huge files, FIFOs
 * and oversized prompt files. Most run with the kernel's openat2 and with the
 * portable walk (CACHET_FS_RESOLVE=walk). docs/security.md lists them. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../agent/prompt.h"
#include "../agent/tools.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "fakesrv.h"
#include "proc.h"

/* --- helpers ------------------------------------------------------------------------------ */

static void shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void shf(const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    proc_result r = proc_run(cmd);
    CHECK_MSG(r.status == 0, "'%s': %s", cmd, r.err);
    proc_result_free(&r);
}

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The file's text (malloc'd), or NULL when it cannot be read. */
static char *get(const char *path) {
    char *t = NULL;
    util_err e;
    if (util_read_file(&t, NULL, path, &e)) return NULL;
    return t;
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_tool(agent_tools *t, const char *name, const char *args, util_buf *out, util_err *err) {
    cJSON *a = cJSON_Parse(args);
    util_buf_release(out);
    util_buf_init(out);
    util_err_clear(err);
    int rc = agent_tool_run(t, name, a, out, err);
    util_buf_append(out, "", 0);
    cJSON_Delete(a);
    return rc;
}

/* Both resolvers: the kernel's openat2 (where it exists) and the walk. */
static const char *const k_modes[] = {"openat2", "walk"};
static void set_mode(int walk) {
    if (walk)
        setenv("CACHET_FS_RESOLVE", "walk", 1);
    else
        unsetenv("CACHET_FS_RESOLVE");
}

/* --- the agent against a scripted backend -------------------------------------------------- */

typedef struct agent_run {
    proc_result r;
    long maxrss_kb; /* the cachet process's peak RSS */
    double secs;
} agent_run;

/* Starts f answering each (name, args) pair of calls in turn, then "done.". */
static int fake_script(fake *f, int n, const char *const *calls) {
    char *own[FAKE_MAX];
    int k = 0;
    for (; k < n && k + 1 < FAKE_MAX; k++) own[k] = fake_sse_tool(calls[2 * k], calls[2 * k + 1]);
    own[k++] = fake_sse_text("done.");
    int rc = fake_start_v(f, k, (const char *const *)own);
    for (int i = 0; i < k; i++) free(own[i]);
    return rc;
}

/* Runs `ENV WRAP cachet -p go --workspace WS EXTRA` in dir against f (WRAP:
 * e.g. "timeout 60"), measuring the cachet process's peak RSS and the wall
 * time. The RSS comes from GNU time where it is installed (its child starts
 * small); else from wait4, which is only an upper bound: a child forked from
 * this runner starts with the runner's pages, and Linux keeps that peak
 * across exec. */
static agent_run agent_go(const char *dir, const char *ws, const fake *f, const char *env, const char *wrap,
                          const char *extra) {
    agent_run a = {{-1, NULL, NULL}, 0, 0};
    char o[] = "/tmp/cachet-sec-outXXXXXX", e[] = "/tmp/cachet-sec-errXXXXXX",
         m[] = "/tmp/cachet-sec-rssXXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e), fm = mkstemp(m);
    if (fo >= 0) close(fo);
    if (fe >= 0) close(fe);
    if (fm >= 0) close(fm);
    char timer[256] = "";
    if (access("/usr/bin/time", X_OK) == 0) snprintf(timer, sizeof timer, "/usr/bin/time -q -f %%M -o %s", m);
    char cmd[8192];
    snprintf(
        cmd, sizeof cmd,
        "cd %s && %s XDG_STATE_HOME=%s/state exec %s %s %s/cachet -p go --backend http://127.0.0.1:%d/v1 "
        "--backend-model fake --workspace %s --max-rounds 30 --retries 0 %s >%s 2>%s </dev/null",
        dir, env ? env : "", dir, wrap ? wrap : "", timer, proc_bin_dir(), f->port, ws, extra ? extra : "", o,
        e);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (pid > 0)
        while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {}
    a.secs = now_s() - t0;
    a.maxrss_kb = ru.ru_maxrss;
    char *rss = get(m);
    if (timer[0] && rss && strtol(rss, NULL, 10) > 0) a.maxrss_kb = strtol(rss, NULL, 10);
    free(rss);
    a.r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    a.r.out = get(o);
    a.r.err = get(e);
    if (!a.r.out) a.r.out = calloc(1, 1);
    if (!a.r.err) a.r.err = calloc(1, 1);
    unlink(o);
    unlink(e);
    unlink(m);
    return a;
}

/* Everything the backend was sent, one request after another (malloc'd). */
static char *all_requests(fake *f) {
    util_buf b;
    util_buf_init(&b);
    for (int i = 0; i < FAKE_MAX; i++)
        if (f->req[i]) util_buf_printf(&b, "%s\n=====\n", f->req[i]);
    util_buf_append(&b, "", 0);
    return util_buf_detach(&b, NULL);
}

static const char *req(const fake *f, int i) { return f->req[i] ? f->req[i] : ""; }

/* --- 1. one resolver: symlinks inside are fine, out is refused, both ways -------------------- */

static void test_resolver(const char *dir, int walk) {
    set_mode(walk);
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/r-ws", dir);
    agent_tools t;
    util_err err;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    util_buf out;
    util_buf_init(&out);
    /* in-tree links: to a file, through '..' that stays inside, chains */
    CHECK_MSG(run_tool(&t, "read_file", "{\"path\": \"in/up\"}", &out, &err) == 0, "%s: %s", k_modes[walk],
              err.msg);
    CHECK(strstr(out.data, "ALPHA") != NULL);
    CHECK_MSG(run_tool(&t, "read_file", "{\"path\": \"chain\"}", &out, &err) == 0, "%s: %s", k_modes[walk],
              err.msg);
    CHECK(strstr(out.data, "ALPHA") != NULL);
    CHECK_MSG(run_tool(&t, "read_file", "{\"path\": \"docs/hooks/h.txt\"}", &out, &err) == 0, "%s: %s",
              k_modes[walk], err.msg);
    CHECK(strstr(out.data, "HOOKTEXT") != NULL);
    CHECK(run_tool(&t, "list_dir", "{\"path\": \"docs/hooks\"}", &out, &err) == 0 &&
          strstr(out.data, "h.txt"));
    /* out: an absolute link, a relative one, a directory link, a loop */
    const char *bad[] = {"abs/secret.txt", "rel", "escape/secret.txt", "outdir/x/secret.txt", "loop"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char a[256];
        snprintf(a, sizeof a, "{\"path\": \"%s\"}", bad[i]);
        CHECK_MSG(run_tool(&t, "read_file", a, &out, &err) != 0, "%s: read_file %s: %s", k_modes[walk],
                  bad[i], out.data);
        CHECK_MSG(strstr(out.data ? out.data : "", "TOPSECRET") == NULL, "%s: %s leaked", k_modes[walk],
                  bad[i]);
        CHECK_MSG(strstr(err.msg, bad[i]) != NULL, "%s: the message names '%s': %s", k_modes[walk], bad[i],
                  err.msg);
        if (i < 4)
            CHECK_MSG(strstr(err.msg, "outside the workspace") != NULL, "%s: %s: %s", k_modes[walk], bad[i],
                      err.msg);
    }
    CHECK(run_tool(&t, "list_dir", "{\"path\": \"escape\"}", &out, &err) != 0);
    CHECK(run_tool(&t, "grep", "{\"pattern\": \"TOPSECRET\", \"path\": \"escape\"}", &out, &err) != 0);
    CHECK(run_tool(&t, "grep", "{\"pattern\": \"TOPSECRET\"}", &out, &err) == 0 &&
          !strstr(out.data, "TOPSECRET:"));
    /* writes: through an in-tree link to its target; out is refused */
    t.yes = 1;
    CHECK_MSG(
        run_tool(&t, "write_file", "{\"path\": \"docs/hooks/new.txt\", \"content\": \"N\"}", &out, &err) == 0,
        "%s: %s", k_modes[walk], err.msg);
    char p[4400];
    snprintf(p, sizeof p, "%s/hk/new.txt", ws);
    CHECK_MSG(exists(p), "%s: written through the in-tree link", k_modes[walk]);
    unlink(p);
    CHECK(run_tool(&t, "edit_file", "{\"path\": \"chain\", \"old\": \"ALPHA\", \"new\": \"ALPHA\"}", &out,
                   &err) == 0);
    CHECK(run_tool(&t, "write_file", "{\"path\": \"escape/new.txt\", \"content\": \"x\"}", &out, &err) != 0);
    CHECK(run_tool(&t, "write_file", "{\"path\": \"rel\", \"content\": \"x\"}", &out, &err) != 0);
    CHECK(run_tool(&t, "edit_file", "{\"path\": \"rel\", \"old\": \"TOPSECRET\", \"new\": \"x\"}", &out,
                   &err) != 0);
    snprintf(p, sizeof p, "%s/outside/new.txt", dir);
    CHECK(!exists(p));
    snprintf(p, sizeof p, "%s/outside/secret.txt", dir);
    char *s = get(p);
    CHECK(s && strcmp(s, "TOPSECRET\n") == 0);
    free(s);
    t.yes = 0;
    util_buf_release(&out);
    agent_tools_release(&t);
    /* .cachet/config.json is read beneath the workspace too */
    char cws[4200];
    snprintf(cws, sizeof cws, "%s/r-cfg-%s", dir, k_modes[walk]);
    shf("rm -rf %s && mkdir -p %s/.cachet && printf '{\"allow\": [\"run_shell\"]}' > %s/outside/config.json && "
        "ln -s ../../outside/config.json %s/.cachet/config.json",
        cws, cws, dir, cws);
    CHECK(agent_tools_init(&t, cws, &err) == UTIL_EINVAL);
    CHECK_MSG(strstr(err.msg, "outside the workspace") != NULL, "%s: %s", k_modes[walk], err.msg);
    set_mode(0);
}

/* The primitive itself (util/fs.h), forced each way: the same answers. */
static void test_beneath(const char *dir) {
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/r-ws", dir);
    int root = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
    CHECK(root >= 0);
    const int hows[] = {UTIL_FS_RESOLVE_KERNEL, UTIL_FS_RESOLVE_WALK};
    for (int h = 0; h < 2; h++) {
        int fd = -1;
        util_err err;
        int rc = util_fs_open_beneath(&fd, root, "in/up", O_RDONLY, hows[h], &err);
        if (h == 0 && rc == UTIL_EUNSUPPORTED) {
            CHECK_SKIP("openat2 is not available on this kernel: %s", err.msg);
            continue;
        }
        CHECK_MSG(rc == 0 && fd >= 0, "%s: in/up: %s", k_modes[h], err.msg);
        if (fd >= 0) close(fd);
        CHECK(util_fs_open_beneath(&fd, root, "docs/hooks", O_RDONLY | O_DIRECTORY, hows[h], &err) == 0);
        if (fd >= 0) {
            char rel[4096];
            CHECK(util_fs_relpath(rel, sizeof rel, root, fd, &err) == 0);
            CHECK_EQ_STR(rel, "hk");
            close(fd);
        }
        CHECK(util_fs_open_beneath(&fd, root, "", O_PATH | O_DIRECTORY, hows[h], &err) == 0);
        if (fd >= 0) {
            char rel[4096];
            CHECK(util_fs_relpath(rel, sizeof rel, root, fd, &err) == 0 && rel[0] == '\0');
            close(fd);
        }
        CHECK(util_fs_open_beneath(&fd, root, "escape/secret.txt", O_RDONLY, hows[h], &err) == UTIL_EINVAL);
        CHECK(util_fs_open_beneath(&fd, root, "rel", O_RDONLY, hows[h], &err) == UTIL_EINVAL);
        CHECK(util_fs_open_beneath(&fd, root, "../r-ws/a.txt", O_RDONLY, hows[h], &err) == UTIL_EINVAL);
        CHECK(util_fs_open_beneath(&fd, root, "/etc/passwd", O_RDONLY, hows[h], &err) == UTIL_EINVAL);
        CHECK(util_fs_open_beneath(&fd, root, "loop", O_RDONLY, hows[h], &err) != 0);
        CHECK(util_fs_open_beneath(&fd, root, "missing", O_RDONLY, hows[h], &err) == UTIL_ENOTFOUND);
        CHECK(util_fs_open_beneath(&fd, root, "a.txt/x", O_RDONLY, hows[h], &err) != 0);
        CHECK(fd < 0);
    }
    /* a descriptor outside the root has no path beneath it */
    int out = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    char rel[4096];
    util_err err;
    CHECK(util_fs_relpath(rel, sizeof rel, root, out, &err) == UTIL_EINVAL);
    close(out);
    close(root);
}

/* --- 2. the check-then-open race ------------------------------------------------------------ */

typedef struct swapper {
    char a[4400], b[4400];
    atomic_int stop;
    long swaps;
} swapper;

static void *swap_main(void *p) {
    swapper *s = p;
    /* a short sleep after each swap: every wake-up may preempt the tools at
     * any point, so the swaps land inside their windows even when the two
     * threads share one CPU */
    struct timespec nap = {0, 20000};
    while (!atomic_load(&s->stop)) {
        if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE) == 0) s->swaps++;
        nanosleep(&nap, NULL);
    }
    return NULL;
}

/* The check-then-open the tools did before: realpath, a prefix check, then
 * open by name. 1 when it read the outside file: it shows the renamer really
 * interleaves with the calls on this machine. */
static int canary_read(const char *ws, const char *rel) {
    char p[8192], real[PATH_MAX], buf[64];
    snprintf(p, sizeof p, "%s/%s", ws, rel);
    size_t n = strlen(ws);
    if (!realpath(p, real) || strncmp(real, ws, n) != 0 || real[n] != '/') return 0;
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    return strstr(buf, "OUTSIDE") != NULL;
}

static void test_race(const char *dir, int walk) {
    set_mode(walk);
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/race-%s", dir, k_modes[walk]);
    shf("rm -rf %s %s-out && mkdir -p %s/d %s-out && echo INSIDE > %s/d/f.txt && echo OUTSIDE > %s-out/f.txt && "
        "ln -s %s-out %s/x",
        ws, ws, ws, ws, ws, ws, ws, ws);
    agent_tools t;
    util_err err;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    char *allow[] = {"write_file:d/*"};
    t.allow = allow; /* released below before agent_tools_release sees it */
    t.n_allow = 1;
    swapper s;
    memset(&s, 0, sizeof s);
    snprintf(s.a, sizeof s.a, "%s/d", ws);
    snprintf(s.b, sizeof s.b, "%s/x", ws);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, swap_main, &s) == 0);
    util_buf out;
    util_buf_init(&out);
    /* reads and writes interleaved, each read beside the check-then-open
     * canary; a rare yield lets the renamer progress on a loaded machine
     * with few cores, while most swaps land wherever the scheduler preempts.
     * At least 3,000 reads; on until the canary has leaked 20 times (the race
     * is being hit) or 20,000 reads. */
    int n_read = 0, n_write = 0, leaks_r = 0, ok_r = 0, ok_w = 0, canary = 0;
    for (int i = 0; n_read < 3000 || (canary < 20 && n_read < 20000); i++) {
        if (i % 256 == 0) sched_yield();
        if (i % 3 == 2) {
            char a[128];
            snprintf(a, sizeof a, "{\"path\": \"d/w%d.txt\", \"content\": \"W\"}", n_write++);
            if (run_tool(&t, "write_file", a, &out, &err) == 0) ok_w++;
            continue;
        }
        n_read++;
        if (run_tool(&t, "read_file", "{\"path\": \"d/f.txt\"}", &out, &err) == 0) {
            ok_r++;
            if (strstr(out.data, "OUTSIDE")) leaks_r++;
        }
        canary += canary_read(ws, "d/f.txt");
    }
    atomic_store(&s.stop, 1);
    pthread_join(th, NULL);
    t.allow = NULL;
    t.n_allow = 0;
    /* what reached the outside directory */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls %s-out | grep -c '^w' || true", ws);
    proc_result r = proc_run(cmd);
    int leaks_w = (int)strtol(r.out ? r.out : "0", NULL, 10);
    proc_result_free(&r);
    snprintf(cmd, sizeof cmd, "%s-out/f.txt", ws);
    char *o = get(cmd);
    fprintf(
        stderr,
        "security_ws: race (%s): %ld swaps; read_file %d calls, %d answered, %d outside; write_file %d calls, "
        "%d written, %d outside; the check-then-open canary beside them: %d of %d reads outside\n",
        k_modes[walk], s.swaps, n_read, ok_r, leaks_r, n_write, ok_w, leaks_w, canary, n_read);
    CHECK_MSG(s.swaps > 100, "the renamer swapped only %ld times", s.swaps);
    CHECK_MSG(ok_r > 0 && ok_w > 0, "%s: nothing succeeded (%d reads, %d writes): the test proves nothing",
              k_modes[walk], ok_r, ok_w);
    CHECK_EQ_INT(leaks_r, 0);
    CHECK_EQ_INT(leaks_w, 0);
    if (canary == 0)
        CHECK_SKIP("%s: the renamer never won the check-then-open race on this machine this time",
                   k_modes[walk]);
    CHECK(o && strcmp(o, "OUTSIDE\n") == 0);
    free(o);
    util_buf_release(&out);
    agent_tools_release(&t);
    set_mode(0);
}

/* --- 3. prompt files and skills ------------------------------------------------------------- */

static const char k_skill_fmt[] = "---\nname: %s\ndescription: A skill for the tests.\n---\n%s\n";

static void skill_at(const char *folder, const char *name, const char *body) {
    char p[4400], text[1024];
    shf("mkdir -p %s", folder);
    snprintf(p, sizeof p, "%s/SKILL.md", folder);
    snprintf(text, sizeof text, k_skill_fmt, name, body);
    put(p, text);
}

static void test_prompt_links(const char *dir, int walk) {
    char ws[4200], p[4400];
    snprintf(ws, sizeof ws, "%s/p-ws", dir);
    shf("rm -rf %s %s/p-out && mkdir -p %s/docs %s/.cachet/skills %s/p-out", ws, dir, ws, ws, dir);
    snprintf(p, sizeof p, "%s/p-out/id_ed25519", dir);
    put(p, "-----BEGIN OPENSSH PRIVATE KEY-----\nKEYSECRET\n-----END OPENSSH PRIVATE KEY-----\n");
    snprintf(p, sizeof p, "%s/p-out/hostname", dir);
    put(p, "HOSTSECRET\n");
    snprintf(p, sizeof p, "%s/p-out/evil", dir);
    skill_at(p, "evil", "SKILLSECRET");
    snprintf(p, sizeof p, "%s/.cachet/skills/good", ws);
    skill_at(p, "good", "GOODSKILL");
    snprintf(p, sizeof p, "%s/docs/soul.md", ws);
    put(p, "SOULINSIDE\n");
    shf("cd %s && ln -s %s/p-out/id_ed25519 AGENTS.md && ln -s ../p-out/hostname USER.md && ln -s docs/soul.md SOUL.md "
        "&& ln -s %s/p-out/evil .cachet/skills/evil",
        ws, dir, dir);
    fake f;
    const char *calls[] = {"read_skill", "{\"name\": \"evil\"}", "read_skill", "{\"name\": \"good\"}"};
    CHECK(fake_script(&f, 2, calls) == 0);
    agent_run a = agent_go(dir, "p-ws", &f, walk ? "CACHET_FS_RESOLVE=walk" : "", "", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "%s: status %d: %s", k_modes[walk], a.r.status, a.r.err);
    char *all = all_requests(&f);
    CHECK_MSG(!strstr(all, "KEYSECRET") && !strstr(all, "HOSTSECRET") && !strstr(all, "SKILLSECRET"),
              "%s: a file outside the workspace reached the backend", k_modes[walk]);
    CHECK_MSG(strstr(req(&f, 0), "SOULINSIDE") != NULL, "%s: an in-tree link is read", k_modes[walk]);
    CHECK_MSG(strstr(req(&f, 0), "good: A skill") != NULL && strstr(req(&f, 0), "evil: A skill") == NULL,
              "%s: the skills index", k_modes[walk]);
    CHECK_MSG(strstr(req(&f, 2), "GOODSKILL") != NULL, "%s: read_skill good", k_modes[walk]);
    CHECK_MSG(strstr(a.r.err, "'AGENTS.md'") && strstr(a.r.err, "'USER.md'") && strstr(a.r.err, "evil"),
              "%s: warnings name the refused files: %s", k_modes[walk], a.r.err);
    free(all);
    proc_result_free(&a.r);
    fake_release(&f);
}

/* A skill validated when the index is built, then swapped for a link to
 * outside before read_skill: the read goes through the resolver again. */
static void test_skill_swap(const char *dir, int walk) {
    set_mode(walk);
    char ws[4200], p[4400], q[4400];
    snprintf(ws, sizeof ws, "%s/s-ws", dir);
    shf("rm -rf %s %s/s-out && mkdir -p %s/.cachet/skills %s/s-out", ws, dir, ws, dir);
    snprintf(p, sizeof p, "%s/.cachet/skills/swap", ws);
    skill_at(p, "swap", "SWAPINSIDE");
    snprintf(p, sizeof p, "%s/s-out/swap", dir);
    skill_at(p, "swap", "SWAPSECRET");
    agent_prompt pr;
    agent_prompt_opts po = {ws, check_root(), NULL, "/nonexistent"};
    util_err err;
    CHECK_MSG(agent_prompt_build(&pr, &po, &err) == 0, "%s", err.msg);
    agent_tools t;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    t.skills = &pr.skills;
    util_buf out;
    util_buf_init(&out);
    CHECK(run_tool(&t, "read_skill", "{\"name\": \"swap\"}", &out, &err) == 0 &&
          strstr(out.data, "SWAPINSIDE"));
    snprintf(p, sizeof p, "%s/.cachet/skills/swap", ws);
    snprintf(q, sizeof q, "%s/swap-old", ws);
    CHECK(rename(p, q) == 0);
    snprintf(q, sizeof q, "%s/s-out/swap", dir);
    CHECK(symlink(q, p) == 0);
    int rc = run_tool(&t, "read_skill", "{\"name\": \"swap\"}", &out, &err);
    CHECK_MSG(rc != 0 && !strstr(out.data, "SWAPSECRET"), "%s: read_skill followed the swapped link: %s",
              k_modes[walk], out.data);
    CHECK_MSG(strstr(err.msg, "outside") != NULL, "%s: %s", k_modes[walk], err.msg);
    util_buf_release(&out);
    agent_tools_release(&t);
    agent_prompt_release(&pr);
    set_mode(0);
}

/* --- 4. git tools in a subdirectory of a larger repository ---------------------------------- */

#define GIT "git -c user.name=T -c user.email=t@e -c init.defaultBranch=main"

static void test_git(const char *dir) {
    shf("rm -rf %s/g && mkdir -p %s/g/repo/sub && cd %s/g/repo && " GIT
        " init -q . && echo SECRETV1 > secret.txt && "
        "echo alpha > sub/a.txt && " GIT " add . && " GIT
        " commit -q -m 'base commit' && echo SECRETV2 > secret.txt && " GIT
        " commit -q -am 'SECRETCOMMIT changes it' && echo SECRETV3 > secret.txt && echo alpha2 > sub/a.txt && "
        "echo x > untracked-secret.txt && echo n > sub/new.txt",
        dir, dir, dir);
    fake f;
    const char *calls[] = {"git_status", "{}",
                           "git_diff",   "{}",
                           "git_log",    "{\"count\": 20}",
                           "git_diff",   "{\"path\": \"../secret.txt\"}",
                           "git_diff",   "{\"path\": \"*\"}",
                           "git_diff",   "{\"staged\": true}"};
    CHECK(fake_script(&f, 6, calls) == 0);
    agent_run a = agent_go(dir, "g/repo/sub", &f, "", "", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    char *all = all_requests(&f);
    for (char *m = all; (m = strstr(m, "../secret.txt")) != NULL;)
        memcpy(m, "../xxxxxx", 9); /* the call itself */
    CHECK_MSG(!strstr(all, "secret.txt") && !strstr(all, "SECRETV") && !strstr(all, "SECRETCOMMIT") &&
                  !strstr(all, "untracked-secret"),
              "the repository outside the workspace reached the backend");
    CHECK_MSG(strstr(req(&f, 1), "new.txt") != NULL, "git_status shows the workspace: %.2000s", req(&f, 1));
    CHECK_MSG(strstr(req(&f, 2), "+alpha2") != NULL, "git_diff shows the workspace");
    CHECK_MSG(strstr(req(&f, 3), "base commit") != NULL, "git_log shows the workspace's commits");
    CHECK_MSG(strstr(req(&f, 5), "+alpha2") != NULL, "a glob stays in the workspace");
    CHECK_MSG(strstr(a.r.err, "'..'") != NULL, "git_diff ../secret.txt refused: %s", a.r.err);
    free(all);
    proc_result_free(&a.r);
    fake_release(&f);

    /* a .git file that points at another repository: refused */
    shf("mkdir -p %s/g/other %s/g/ws2 && cd %s/g/other && " GIT " init -q . && echo o > o.txt && " GIT
        " add . && " GIT
        " commit -q -m OTHERREPO && printf 'gitdir: %s/g/other/.git\\n' > %s/g/ws2/.git && echo y > %s/g/ws2/y.txt",
        dir, dir, dir, dir, dir, dir);
    const char *calls2[] = {"git_log", "{}", "git_status", "{}"};
    CHECK(fake_script(&f, 2, calls2) == 0);
    a = agent_go(dir, "g/ws2", &f, "", "", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    all = all_requests(&f);
    CHECK_MSG(!strstr(all, "OTHERREPO") && !strstr(all, "o.txt"),
              "a repository elsewhere reached the backend");
    CHECK_MSG(strstr(a.r.err, "outside the workspace") != NULL, "the refusal says why: %s", a.r.err);
    free(all);
    proc_result_free(&a.r);
    fake_release(&f);

    /* what keeps working: a linked worktree and a submodule as the workspace */
    shf("cd %s/g/other && " GIT
        " worktree add -q ../wt -b wtbranch && echo w > ../wt/wt.txt && mkdir -p %s/g/super && "
        "cd %s/g/super && " GIT " init -q . && " GIT
        " -c protocol.file.allow=always submodule add -q %s/g/other mod "
        "2>/dev/null && " GIT " commit -q -m sup && echo m >> mod/o.txt",
        dir, dir, dir, dir);
    const char *calls3[] = {"git_status", "{}"};
    const char *wss[] = {"g/wt", "g/super/mod"}, *want[] = {"wt.txt", "M o.txt"};
    for (int i = 0; i < 2; i++) {
        CHECK(fake_script(&f, 1, calls3) == 0);
        a = agent_go(dir, wss[i], &f, "", "", "");
        fake_stop(&f);
        CHECK_MSG(a.r.status == 0 && strstr(req(&f, 1), want[i]) && !strstr(a.r.err, "refused"),
                  "%s: git_status works: %s %.1500s", wss[i], a.r.err, req(&f, 1));
        proc_result_free(&a.r);
        fake_release(&f);
    }
}

/* --- 5. writes to .git/ and .cachet/ ---------------------------------------------------------- */

typedef struct asked {
    int n;
    char what[2048];
    int answer;
} asked;

static int ask(void *u, const char *tool, const char *what) {
    asked *a = u;
    a->n++;
    snprintf(a->what, sizeof a->what, "%s: %s", tool, what ? what : "");
    return a->answer;
}

static void test_protected(const char *dir) {
    char ws[4200], p[4400];
    snprintf(ws, sizeof ws, "%s/w-ws", dir);
    shf("rm -rf %s && mkdir -p %s/docs %s/.cachet && cd %s && " GIT
        " init -q . && ln -s ../.git/hooks docs/hooks && "
        "echo NOTES > notes.txt && ln -s ../notes.txt docs/link.txt && "
        "printf '{\"allow\": [\"write_file\", \"edit_file\"]}' > .cachet/config.json",
        ws, ws, ws, ws);
    snprintf(p, sizeof p, "%s/.git/config", ws);
    char *cfg0 = get(p);
    fake f;
    char fsmon[1024];
    snprintf(fsmon, sizeof fsmon,
             "{\"path\": \".git/config\", \"content\": \"[core]\\n\\tfsmonitor = touch %s/PWNED\\n\"}", dir);
    const char *calls[] = {
        "write_file",
        fsmon,
        "edit_file",
        "{\"path\": \".git/config\", \"old\": \"[core]\", \"new\": \"[core]\\n\\tfsmonitor = touch PWNED\"}",
        "write_file",
        "{\"path\": \".cachet/config.json\", \"content\": \"{\\\"allow\\\": [\\\"run_shell\\\"]}\"}",
        "write_file",
        "{\"path\": \"docs/hooks/pre-commit\", \"content\": \"#!/bin/sh\\ntouch PWNED\\n\"}",
        "write_file",
        "{\"path\": \".GIT/config\", \"content\": \"x\"}",
        "write_file",
        "{\"path\": \"ok.txt\", \"content\": \"fine\"}"};
    CHECK(fake_script(&f, 6, calls) == 0);
    agent_run a = agent_go(dir, "w-ws", &f, "", "", "--yes");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    char *cfg1 = get(p);
    CHECK_MSG(cfg0 && cfg1 && strcmp(cfg0, cfg1) == 0, ".git/config was changed: %s", cfg1 ? cfg1 : "(gone)");
    free(cfg1);
    snprintf(p, sizeof p, "%s/.cachet/config.json", ws);
    cfg1 = get(p);
    CHECK_MSG(cfg1 && strstr(cfg1, "run_shell") == NULL, ".cachet/config.json was changed: %s",
              cfg1 ? cfg1 : "");
    free(cfg1);
    snprintf(p, sizeof p, "%s/.git/hooks/pre-commit", ws);
    CHECK_MSG(!exists(p), "a hook was written through docs/hooks");
    snprintf(p, sizeof p, "%s/ok.txt", ws);
    CHECK_MSG(exists(p), "an ordinary write went through");
    CHECK_MSG(strstr(a.r.err, "protected") && strstr(a.r.err, "git runs"),
              "the refusal says what the file does: %s", a.r.err);
    proc_result_free(&a.r);
    fake_release(&f);
    proc_result r = proc_runf("cd %s && git status >/dev/null 2>&1; ls %s/PWNED %s/PWNED 2>/dev/null", ws,
                              dir, ws);
    CHECK_MSG(r.out && r.out[0] == '\0', "git ran a command: %s", r.out);
    proc_result_free(&r);

    /* allow globs match the resolved path: docs/ globs do not reach .git/hooks or notes.txt */
    snprintf(p, sizeof p, "%s/.cachet/config.json", ws);
    put(p, "{\"allow\": [\"write_file:docs/*\"]}");
    const char *calls2[] = {"write_file", "{\"path\": \"docs/hooks/post-checkout\", \"content\": \"x\"}",
                            "write_file", "{\"path\": \"docs/link.txt\", \"content\": \"CHANGED\"}",
                            "write_file", "{\"path\": \"docs/ok.txt\", \"content\": \"fine\"}"};
    CHECK(fake_script(&f, 3, calls2) == 0);
    a = agent_go(dir, "w-ws", &f, "", "", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    snprintf(p, sizeof p, "%s/.git/hooks/post-checkout", ws);
    CHECK(!exists(p));
    snprintf(p, sizeof p, "%s/notes.txt", ws);
    char *n = get(p);
    CHECK_MSG(n && strcmp(n, "NOTES\n") == 0, "docs/link.txt -> ../notes.txt was written under docs/*");
    free(n);
    snprintf(p, sizeof p, "%s/docs/ok.txt", ws);
    CHECK_MSG(exists(p), "docs/ok.txt is allowed");
    proc_result_free(&a.r);
    fake_release(&f);

    /* on a terminal: asked every time, even with --yes, saying what the file does */
    agent_tools t;
    util_err err;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    asked q = {0, "", 0};
    t.yes = 1;
    t.confirm = ask;
    t.confirm_user = &q;
    util_buf out;
    util_buf_init(&out);
    CHECK(run_tool(&t, "write_file", "{\"path\": \".git/config\", \"content\": \"[core]\\n\"}", &out, &err) ==
          UTIL_ECANCELED);
    CHECK_EQ_INT(q.n, 1);
    CHECK_MSG(strstr(q.what, ".git/config") && strstr(q.what, "core.fsmonitor"), "the question: %s", q.what);
    CHECK(run_tool(&t, "write_file", "{\"path\": \"docs/hooks/x\", \"content\": \"#!/bin/sh\\n\"}", &out,
                   &err) != 0);
    CHECK_EQ_INT(q.n, 2);
    CHECK_MSG(strstr(q.what, ".git/hooks/x") && strstr(q.what, "hook"),
              "the question names the real file: %s", q.what);
    CHECK(run_tool(&t, "write_file", "{\"path\": \".cachet/config.json\", \"content\": \"{}\"}", &out,
                   &err) != 0);
    CHECK_MSG(q.n == 3 && strstr(q.what, "allow"), "the question: %s", q.what);
    q.answer = 1;
    CHECK(run_tool(&t, "write_file", "{\"path\": \".cachet/notes.md\", \"content\": \"ok\"}", &out, &err) ==
          0);
    CHECK_EQ_INT(q.n, 4);
    CHECK(run_tool(&t, "write_file", "{\"path\": \"plain.txt\", \"content\": \"ok\"}", &out, &err) == 0);
    CHECK_EQ_INT(q.n, 4); /* --yes: not asked */
    util_buf_release(&out);
    agent_tools_release(&t);
    free(cfg0);
}

/* --- 6. write_file on a directory ------------------------------------------------------------ */

static void test_write_dir(const char *dir, int walk) {
    char ws[4200], p[4400];
    snprintf(ws, sizeof ws, "%s/d-ws", dir);
    shf("rm -rf %s %s.cachet-tmp %s/sub.cachet-tmp && mkdir -p %s/sub && echo KEEP > %s.cachet-tmp && echo KEEP > "
        "%s/sub.cachet-tmp",
        ws, ws, ws, ws, ws, ws);
    fake f;
    const char *calls[] = {"write_file", "{\"path\": \".\", \"content\": \"X\"}",
                           "write_file", "{\"path\": \"./\", \"content\": \"X\"}",
                           "write_file", "{\"path\": \"sub\", \"content\": \"X\"}",
                           "write_file", "{\"path\": \"sub/\", \"content\": \"X\"}",
                           "edit_file",  "{\"path\": \"sub\", \"old\": \"a\", \"new\": \"b\"}"};
    CHECK(fake_script(&f, 5, calls) == 0);
    agent_run a = agent_go(dir, "d-ws", &f, walk ? "CACHET_FS_RESOLVE=walk" : "", "", "--yes");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    snprintf(p, sizeof p, "%s.cachet-tmp", ws);
    char *k = get(p);
    CHECK_MSG(k && strcmp(k, "KEEP\n") == 0, "%s: '%s' beside the workspace was touched", k_modes[walk], p);
    free(k);
    snprintf(p, sizeof p, "%s/sub.cachet-tmp", ws);
    k = get(p);
    CHECK_MSG(k && strcmp(k, "KEEP\n") == 0, "%s: '%s' was touched", k_modes[walk], p);
    free(k);
    CHECK_MSG(strstr(a.r.err, "is a directory") != NULL, "%s: the refusal says why: %s", k_modes[walk],
              a.r.err);
    proc_result r = proc_runf("cd %s && find . -mindepth 1 | sort | tr '\\n' ' '", ws);
    CHECK_MSG(r.out && strcmp(r.out, "./sub ./sub.cachet-tmp ") == 0, "%s: the workspace now holds: %s",
              k_modes[walk], r.out);
    proc_result_free(&r);
    proc_result_free(&a.r);
    fake_release(&f);
}

/* --- 7. bounded, typed reads ------------------------------------------------------------------ */

static void test_big_file(const char *dir) {
    char ws[4200], p[4400];
    snprintf(ws, sizeof ws, "%s/b-ws", dir);
    shf("rm -rf %s && mkdir -p %s", ws, ws);
    snprintf(p, sizeof p, "%s/big.log", ws);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    const off_t size = (off_t)256 << 20;
    CHECK(write(fd, "HEADMARK\n", 9) == 9);
    CHECK(ftruncate(fd, size) == 0);
    CHECK(pwrite(fd, "TAILMARK\n", 9, size - 9) == 9);
    close(fd);
    fake f;
    char tail[128];
    snprintf(tail, sizeof tail, "{\"path\": \"big.log\", \"offset\": %lld}", (long long)size - 100);
    const char *calls[] = {"read_file", "{\"path\": \"big.log\"}", "read_file", tail};
    CHECK(fake_script(&f, 2, calls) == 0);
    agent_run a = agent_go(dir, "b-ws", &f, "", "", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d: %s", a.r.status, a.r.err);
    fprintf(stderr, "security_ws: read_file of a 256 MiB file: peak RSS %.1f MiB, %.2f s\n",
            a.maxrss_kb / 1024.0, a.secs);
    CHECK_MSG(a.maxrss_kb > 0 && a.maxrss_kb < 64 * 1024, "peak RSS %ld KiB", a.maxrss_kb);
    CHECK_MSG(strstr(req(&f, 1), "HEADMARK") && strstr(req(&f, 1), "268435456 bytes") &&
                  strstr(req(&f, 1), "offset"),
              "the first part and how to read on: %.3000s", req(&f, 1));
    CHECK_MSG(strstr(req(&f, 2), "TAILMARK") != NULL, "a range from the end");
    proc_result_free(&a.r);
    fake_release(&f);
}

static void test_special_files(const char *dir) {
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/f-ws", dir);
    shf("rm -rf %s && mkdir -p %s && cd %s && mkfifo fifo && echo NEEDLE > small.txt && "
        "head -c 9000000 /dev/zero | tr '\\0' 'a' > huge.txt && echo NEEDLE >> huge.txt && ln -s /dev/zero zero",
        ws, ws, ws);
    fake f;
    const char *calls[] = {"grep",       "{\"pattern\": \"x\", \"path\": \"fifo\"}",
                           "edit_file",  "{\"path\": \"fifo\", \"old\": \"a\", \"new\": \"b\"}",
                           "read_file",  "{\"path\": \"fifo\"}",
                           "grep",       "{\"pattern\": \"NEEDLE\"}",
                           "read_file",  "{\"path\": \"zero\"}",
                           "grep",       "{\"pattern\": \"x\", \"path\": \"zero\"}",
                           "write_file", "{\"path\": \"fifo\", \"content\": \"x\"}"};
    CHECK(fake_script(&f, 7, calls) == 0);
    agent_run a = agent_go(dir, "f-ws", &f, "", "timeout 60", "--yes");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d after %.1f s: %s", a.r.status, a.secs, a.r.err);
    CHECK_MSG(a.secs < 30, "took %.1f s", a.secs);
    CHECK_MSG(strstr(req(&f, 1), "FIFO") != NULL, "grep on a FIFO says what it is: %.2000s", req(&f, 1));
    CHECK_MSG(strstr(req(&f, 2), "FIFO") != NULL, "edit_file on a FIFO");
    CHECK_MSG(strstr(req(&f, 3), "FIFO") != NULL, "read_file on a FIFO");
    const char *g = req(&f, 4);
    CHECK_MSG(strstr(g, "small.txt:1: NEEDLE") != NULL, "grep finds the small file: %.3000s", g);
    CHECK_MSG(strstr(g, "huge.txt") && strstr(g, "skipped") && strstr(g, "fifo"),
              "grep notes what it skipped: %.3000s", g);
    /* a device cannot be made in the workspace without privileges; a link to one leads outside */
    CHECK_MSG(strstr(req(&f, 5), "outside the workspace") != NULL, "read_file on a link to /dev/zero");
    CHECK_MSG(strstr(req(&f, 6), "outside the workspace") != NULL, "grep on a link to /dev/zero");
    CHECK_MSG(strstr(req(&f, 7), "FIFO") != NULL, "write_file over a FIFO");
    fprintf(stderr, "security_ws: fifo/device/oversized: %.2f s, peak RSS %.1f MiB\n", a.secs,
            a.maxrss_kb / 1024.0);
    proc_result_free(&a.r);
    fake_release(&f);
}

/* Prompt files and SKILL.md over their caps, and a FIFO as a prompt file:
 * left out with a warning naming them, without blocking. */
static void test_prompt_caps(const char *dir) {
    char ws[4200], p[4400];
    snprintf(ws, sizeof ws, "%s/c-ws", dir);
    shf("rm -rf %s && mkdir -p %s/.cachet/skills/huge && cd %s && mkfifo SOUL.md && printf -- '---\\nname: huge\\n"
        "description: A big one.\\n---\\n' > .cachet/skills/huge/SKILL.md && head -c 3000000 /dev/zero | tr '\\0' 'b' "
        ">> .cachet/skills/huge/SKILL.md",
        ws, ws, ws);
    snprintf(p, sizeof p, "%s/AGENTS.md", ws);
    FILE *fa = fopen(p, "wb");
    for (int i = 0; fa && i < 200000; i++) fputs("AGENTSLINE padding padding\n", fa);
    if (fa) fclose(fa);
    fake f;
    CHECK(fake_script(&f, 0, NULL) == 0);
    agent_run a = agent_go(dir, "c-ws", &f, "", "timeout 60", "");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "status %d after %.1f s: %s", a.r.status, a.secs, a.r.err);
    CHECK_MSG(strstr(a.r.err, "'AGENTS.md'") && strstr(a.r.err, "limit"), "AGENTS.md over the cap: %s",
              a.r.err);
    CHECK_MSG(strstr(a.r.err, "'SOUL.md'") && strstr(a.r.err, "FIFO"), "SOUL.md is a FIFO: %s", a.r.err);
    CHECK_MSG(strstr(a.r.err, "huge") && strstr(a.r.err, "limit"), "SKILL.md over the cap: %s", a.r.err);
    CHECK_MSG(strstr(req(&f, 0), "AGENTSLINE") == NULL && strstr(req(&f, 0), "huge: A big") == NULL,
              "capped files are left out");
    CHECK_MSG(strstr(req(&f, 0), "## AGENTS.md") != NULL, "a marker says AGENTS.md was left out");
    CHECK_MSG(a.maxrss_kb < 64 * 1024, "peak RSS %ld KiB", a.maxrss_kb);
    proc_result_free(&a.r);
    fake_release(&f);
}

/* --resume without --workspace runs in the workspace the session recorded:
 * when that path now leads elsewhere (the directory moved, a link to outside
 * in its place) the resume is refused before anything is sent; with
 * --workspace the session resumes there, and says it was recorded elsewhere. */
static void test_resume_ws(const char *dir) {
    shf("rm -rf %s/s-ws %s/s-ws-moved && mkdir -p %s/s-ws && echo NOTES > %s/s-ws/notes.txt", dir, dir, dir,
        dir);
    fake f;
    CHECK(fake_script(&f, 0, NULL) == 0);
    agent_run a = agent_go(dir, "s-ws", &f, "", "timeout 60", "--json");
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0, "first run: %d %s", a.r.status, a.r.err);
    cJSON *o = cJSON_Parse(a.r.out);
    char id[128] = "";
    const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(o, "session"));
    if (sid) snprintf(id, sizeof id, "%s", sid);
    CHECK_MSG(id[0], "a session id: %s", a.r.out);
    cJSON_Delete(o);
    proc_result_free(&a.r);
    fake_release(&f);
    shf("cd %s && mv s-ws s-ws-moved && ln -s outside s-ws", dir);

    CHECK(fake_script(&f, 0, NULL) == 0);
    proc_result r = proc_runf(
        "cd %s && XDG_STATE_HOME=%s/state timeout 60 %s/cachet -p again --backend "
        "http://127.0.0.1:%d/v1 --backend-model fake --retries 0 --resume %s </dev/null",
        dir, dir, proc_bin_dir(), f.port, id);
    fake_stop(&f);
    CHECK_MSG(r.status != 0 && r.err && strstr(r.err, "now leads to") && strstr(r.err, "--workspace"),
              "resume through a link: status %d: %s", r.status, r.err);
    CHECK_EQ_INT(fake_served(&f), 0);
    proc_result_free(&r);
    fake_release(&f);

    CHECK(fake_script(&f, 0, NULL) == 0);
    char extra[200];
    snprintf(extra, sizeof extra, "--resume %s", id);
    a = agent_go(dir, "s-ws-moved", &f, "", "timeout 60", extra);
    fake_stop(&f);
    CHECK_MSG(a.r.status == 0 && strstr(a.r.err, "recorded in workspace"), "resume with --workspace: %d %s",
              a.r.status, a.r.err);
    CHECK_MSG(fake_served(&f) >= 1 && strstr(req(&f, 0), "TOPSECRET") == NULL,
              "resumed in the moved workspace");
    proc_result_free(&a.r);
    fake_release(&f);
    shf("rm -f %s/s-ws", dir);
}

/* --- the suite ---------------------------------------------------------------------------------- */

static void make_resolver_tree(const char *dir) {
    shf("mkdir -p %s/r-ws/in %s/r-ws/hk %s/r-ws/docs %s/outside/x && echo ALPHA > %s/r-ws/a.txt && "
        "echo TOPSECRET > %s/outside/secret.txt && echo TOPSECRET > %s/outside/x/secret.txt && "
        "echo HOOKTEXT > %s/r-ws/hk/h.txt",
        dir, dir, dir, dir, dir, dir, dir, dir);
    shf("cd %s/r-ws && ln -s ../a.txt in/up && ln -s in/up chain && ln -s ../hk docs/hooks && ln -s %s/outside abs && "
        "ln -s ../outside/secret.txt rel && ln -s ../outside escape && ln -s ../r-ws/../outside outdir && ln -s loop loop",
        dir, dir);
}

void test_security_ws(void) {
    char dir[] = "/tmp/cachet-secws-XXXXXX";
    if (!mkdtemp(dir)) return;
    make_resolver_tree(dir);
    CHECK_CASE(resolver) {
        test_resolver(dir, 0);
        test_resolver(dir, 1);
    }
    CHECK_CASE(beneath) test_beneath(dir);
    CHECK_CASE(race) {
        test_race(dir, 0);
        test_race(dir, 1);
    }
    CHECK_CASE(prompt_links) {
        test_prompt_links(dir, 0);
        test_prompt_links(dir, 1);
    }
    CHECK_CASE(skill_swap) {
        test_skill_swap(dir, 0);
        test_skill_swap(dir, 1);
    }
    CHECK_CASE(git_confined) test_git(dir);
    CHECK_CASE(protected_writes) test_protected(dir);
    CHECK_CASE(write_dir) {
        test_write_dir(dir, 0);
        test_write_dir(dir, 1);
    }
    CHECK_CASE(big_file) test_big_file(dir);
    CHECK_CASE(special_files) test_special_files(dir);
    CHECK_CASE(prompt_caps) test_prompt_caps(dir);
    CHECK_CASE(resume_workspace) test_resume_ws(dir);
    proc_result r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}
