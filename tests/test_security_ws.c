/* tests/test_security_ws.c: the workspace as an attacker shapes it (a
 * malicious repository) and a hostile backend drives it. Here: the resolver
 * beneath a directory (util/fs.h), forced each way (openat2, the walk). */
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

/* Both resolvers: the kernel's openat2 (where it exists) and the walk. */
static const char *const k_modes[] = {"openat2", "walk"};

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
    CHECK_CASE(beneath) test_beneath(dir);
    proc_result r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}
