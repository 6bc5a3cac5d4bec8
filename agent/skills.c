/* agent/skills.c: skills in the Agent Skills format: <dir>/<name>/SKILL.md
 * with YAML frontmatter (name, description, optional license, compatibility,
 * metadata, allowed-tools), checked by util/skillmd (the linter's PL005 uses
 * the same checks). Builds the sorted index the prompt shows and reads a
 * skill's file again for read_skill, both beneath the skill's root directory
 * on descriptors with a size cap. Does not decide the roots (prompt.c). */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/skillmd.h"
#include "../util/vec.h"
#include "skills.h"

void agent_warnings_release(agent_warnings *w) {
    for (size_t i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
    w->v = NULL;
    w->n = w->cap = 0;
}

int agent_warn(agent_warnings *w, const char *fmt, ...) {
    if (!w) return UTIL_OK;
    if (util_grow(&w->v, &w->cap, w->n + 1, sizeof *w->v)) return UTIL_ENOMEM;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->v[w->n] = strdup(msg);
    if (!w->v[w->n]) return UTIL_ENOMEM;
    w->n++;
    return UTIL_OK;
}

/* --- frontmatter ------------------------------------------------------------ */

/* The checks are util/skillmd's, shared with promptlint (PL005); the first
 * problem becomes the error that the skill's warning quotes. */
int agent_skill_parse(const char *text, size_t len, const char *folder, char **name, char **desc,
                      util_err *err) {
    *name = *desc = NULL;
    util_skillmd sk;
    int rc = util_skillmd_check(&sk, text, len, folder, err);
    if (rc) return rc;
    if (sk.n_problems) {
        const util_skillmd_problem *p = &sk.problems[0];
        size_t more = sk.n_problems - 1;
        if (more)
            rc = util_err_set(err, UTIL_EFORMAT, "line %zu: %s (and %zu more problem%s)", p->line, p->msg,
                              more, more > 1 ? "s" : "");
        else
            rc = util_err_set(err, UTIL_EFORMAT, "line %zu: %s", p->line, p->msg);
        util_skillmd_release(&sk);
        return rc;
    }
    for (char *c = sk.description; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' '; /* one index line per skill */
    *name = sk.name;
    *desc = sk.description;
    sk.name = sk.description = NULL;
    util_skillmd_release(&sk);
    return UTIL_OK;
}

/* --- scanning ------------------------------------------------------------------ */

static void skill_free(agent_skill *k) {
    free(k->name);
    free(k->description);
    free(k->root);
    free(k->rel);
    free(k->path);
    free(k->display);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_skill(agent_skills *s, agent_skill k) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, k.name) == 0) { /* later directories override */
            skill_free(&s->v[i]);
            s->v[i] = k;
            return UTIL_OK;
        }
    if (util_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v)) return UTIL_ENOMEM;
    s->v[s->n++] = k;
    return UTIL_OK;
}

/* The sorted entry names of directory fd (not starting with '.'), or NULL. */
static char **entry_names(int fd, size_t *n_out, int *rc) {
    *n_out = 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return NULL;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        if (util_grow(&names, &cap, n + 1, sizeof *names) || !(names[n] = strdup(de->d_name))) {
            *rc = UTIL_ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str); /* warnings in a stable order */
    *n_out = n;
    return names;
}

/* Reads and checks root/sub/name/SKILL.md into k; 1 if skipped (warned). */
static int load_one(agent_skill *k, int rootfd, const char *root, const char *sub, const char *name,
                    const char *display_prefix, agent_warnings *w) {
    char rel[4096], disp[4096];
    if (strcmp(sub, ".") == 0)
        snprintf(rel, sizeof rel, "%s/SKILL.md", name);
    else
        snprintf(rel, sizeof rel, "%s/%s/SKILL.md", sub, name);
    snprintf(disp, sizeof disp, "%s/%s/SKILL.md", display_prefix, name);
    char *text = NULL;
    size_t len = 0;
    util_err e2;
    int rc = util_fs_read(&text, &len, rootfd, rel, AGENT_SKILL_MAX, UTIL_FS_BENEATH, NULL, &e2);
    if (rc == UTIL_ENOTFOUND) return 1; /* a folder without SKILL.md, or a plain file */
    if (rc == UTIL_EINVAL) {
        agent_warn(w, "skill '%s' skipped: it leads outside '%s' (a symbolic link)", disp, root);
        return 1;
    }
    if (rc == UTIL_ERANGE) {
        agent_warn(w, "skill '%s' skipped: larger than the limit of %zu bytes", disp, AGENT_SKILL_MAX);
        return 1;
    }
    if (rc) {
        agent_warn(w, "skill '%s' skipped: %s", disp, e2.msg);
        return 1;
    }
    if (agent_skill_parse(text, len, name, &k->name, &k->description, &e2)) {
        agent_warn(w, "skill '%s/%s' skipped: %s", root, rel, e2.msg);
        free(text);
        return 1;
    }
    free(text);
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    k->root = strdup(root);
    k->rel = strdup(rel);
    k->path = strdup(path);
    k->display = strdup(disp);
    return 0;
}

int agent_skills_scan(agent_skills *s, const char *root, const char *sub, const char *display_prefix,
                      agent_warnings *w, util_err *err) {
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return UTIL_OK;
    int dfd;
    util_err e;
    int rc = util_fs_open_beneath(&dfd, rootfd, sub, O_RDONLY | O_DIRECTORY, UTIL_FS_RESOLVE_AUTO, &e);
    if (rc) {
        if (rc == UTIL_EINVAL)
            agent_warn(w, "skills in '%s' skipped: the folder leads outside '%s'", display_prefix, root);
        close(rootfd);
        return UTIL_OK;
    }
    size_t n = 0;
    rc = UTIL_OK;
    char **names = entry_names(dfd, &n, &rc);
    for (size_t i = 0; i < n && !rc; i++) {
        agent_skill k = {0};
        if (load_one(&k, rootfd, root, sub, names[i], display_prefix, w)) continue;
        if (!k.root || !k.rel || !k.path || !k.display || add_skill(s, k)) {
            skill_free(&k);
            rc = UTIL_ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    close(rootfd);
    if (rc) return util_err_set(err, rc, "skills: out of memory");
    return UTIL_OK;
}

int agent_skill_read(const agent_skill *k, char **text, size_t *len, util_err *err) {
    *text = NULL;
    int rootfd = open(k->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return util_err_set(err, UTIL_ENOTFOUND, "skill '%s': '%s' is gone", k->name, k->root);
    util_err e;
    int rc = util_fs_read(text, len, rootfd, k->rel, AGENT_SKILL_MAX, UTIL_FS_BENEATH, NULL, &e);
    close(rootfd);
    if (rc == UTIL_EINVAL)
        return util_err_set(err, rc, "skill '%s': '%s' now leads outside '%s' (a symbolic link); refused",
                            k->name, k->display, k->root);
    if (rc) return util_err_set(err, rc, "skill '%s': %s", k->name, e.msg);
    return UTIL_OK;
}

static int cmp_skill(const void *a, const void *b) {
    return strcmp(((const agent_skill *)a)->name, ((const agent_skill *)b)->name);
}

void agent_skills_sort(agent_skills *s) {
    if (s->n > 1) qsort(s->v, s->n, sizeof *s->v, cmp_skill);
}

const agent_skill *agent_skills_find(const agent_skills *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0) return &s->v[i];
    return NULL;
}

void agent_skills_release(agent_skills *s) {
    for (size_t i = 0; i < s->n; i++) skill_free(&s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}
