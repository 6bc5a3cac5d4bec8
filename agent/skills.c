/* agent/skills.c: skills in the Agent Skills format: <dir>/<name>/SKILL.md
 * with YAML frontmatter (name, description, optional license, metadata,
 * allowed-tools), parsed with libyaml. Builds the sorted index the prompt
 * shows; the body is read on demand by the read_skill tool, not here. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "../util/buf.h"
#include "skills.h"

void agent_warnings_release(agent_warnings *w) {
    for (size_t i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
    w->v = NULL;
    w->n = w->cap = 0;
}

int agent_warn(agent_warnings *w, const char *fmt, ...) {
    if (!w) return UTIL_OK;
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 8;
        char **p = realloc(w->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        w->v = p;
        w->cap = nc;
    }
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

static int name_ok(const char *s, const char *folder, util_err *err) {
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return util_err_set(err, UTIL_EFORMAT, "name must be 1-64 characters");
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return util_err_set(err, UTIL_EFORMAT,
                                "name '%s' may hold only lowercase letters, digits and hyphens", s);
        if (c == '-' && (i == 0 || i == n - 1 || s[i + 1] == '-'))
            return util_err_set(err, UTIL_EFORMAT,
                                "name '%s' has a leading, trailing or doubled hyphen", s);
    }
    if (folder && strcmp(s, folder) != 0)
        return util_err_set(err, UTIL_EFORMAT, "name '%s' differs from its folder '%s'", s, folder);
    return UTIL_OK;
}

static size_t codepoints(const char *s) {
    size_t c = 0;
    for (; *s; s++) c += ((unsigned char)*s & 0xC0) != 0x80;
    return c;
}

/* Walks the top-level mapping of the frontmatter document. */
static int parse_yaml(const char *y, size_t n, char **name, char **desc, util_err *err) {
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p)) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)y, n);
    if (!yaml_parser_load(&p, &doc)) {
        int rc = util_err_set(err, UTIL_EFORMAT, "frontmatter is not valid YAML: %s (line %zu)",
                              p.problem ? p.problem : "parse error", p.problem_mark.line + 1);
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_parser_delete(&p);
    int rc = UTIL_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = util_err_set(err, UTIL_EFORMAT, "frontmatter must be a YAML mapping");
        goto done;
    }
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) continue;
        const char *key = (const char *)k->data.scalar.value;
        char **dst = strcmp(key, "name") == 0 ? name : strcmp(key, "description") == 0 ? desc : NULL;
        if (strcmp(key, "metadata") == 0 && v->type != YAML_MAPPING_NODE) {
            rc = util_err_set(err, UTIL_EFORMAT, "metadata must be a mapping");
            goto done;
        }
        if (!dst) continue;
        if (v->type != YAML_SCALAR_NODE) {
            rc = util_err_set(err, UTIL_EFORMAT, "%s must be a string", key);
            goto done;
        }
        free(*dst);
        *dst = strdup((const char *)v->data.scalar.value);
        if (!*dst) {
            rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
            goto done;
        }
    }
done:
    yaml_document_delete(&doc);
    return rc;
}

int agent_skill_parse(const char *text, size_t len, const char *folder, char **name, char **desc,
                      util_err *err) {
    *name = *desc = NULL;
    if (len < 4 || memcmp(text, "---", 3) != 0 || (text[3] != '\n' && text[3] != '\r'))
        return util_err_set(err, UTIL_EFORMAT, "missing YAML frontmatter (a first line '---')");
    const char *body = text + 3;
    const char *end = NULL;
    for (size_t i = 3; i + 4 <= len; i++)
        if (text[i] == '\n' && memcmp(text + i + 1, "---", 3) == 0 &&
            (i + 4 == len || text[i + 4] == '\n' || text[i + 4] == '\r')) {
            end = text + i;
            break;
        }
    if (!end) return util_err_set(err, UTIL_EFORMAT, "frontmatter is not closed by a line '---'");
    int rc = parse_yaml(body, (size_t)(end - body), name, desc, err);
    if (!rc && !*name) rc = util_err_set(err, UTIL_EFORMAT, "frontmatter lacks 'name'");
    if (!rc && (!*desc || !**desc))
        rc = util_err_set(err, UTIL_EFORMAT, "frontmatter lacks a non-empty 'description'");
    if (!rc) rc = name_ok(*name, folder, err);
    if (!rc && codepoints(*desc) > 1024)
        rc = util_err_set(err, UTIL_EFORMAT, "description is longer than 1024 characters");
    if (!rc)
        for (char *c = *desc; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' '; /* one index line per skill */
    if (rc) {
        free(*name);
        free(*desc);
        *name = *desc = NULL;
    }
    return rc;
}

/* --- scanning ------------------------------------------------------------------ */

static void skill_free(agent_skill *k) {
    free(k->name);
    free(k->description);
    free(k->path);
    free(k->display);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_skill(agent_skills *s, agent_skill k) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, k.name) == 0) { /* later directories override */
            skill_free(&s->v[i]);
            s->v[i] = k;
            return UTIL_OK;
        }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 8;
        agent_skill *p = realloc(s->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        s->v = p;
        s->cap = nc;
    }
    s->v[s->n++] = k;
    return UTIL_OK;
}

int agent_skills_scan(agent_skills *s, const char *dir, const char *display_prefix,
                      agent_warnings *w, util_err *err) {
    DIR *d = opendir(dir);
    if (!d) return UTIL_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = UTIL_OK;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) { rc = UTIL_ENOMEM; break; }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) { rc = UTIL_ENOMEM; break; }
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str); /* warnings in a stable order */
    for (size_t i = 0; i < n && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/SKILL.md", dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        char *text = NULL;
        size_t len = 0;
        util_err e2;
        if (util_read_file(&text, &len, path, &e2)) {
            agent_warn(w, "skill '%s' skipped: %s", path, e2.msg);
            continue;
        }
        agent_skill k = {0};
        if (agent_skill_parse(text, len, names[i], &k.name, &k.description, &e2)) {
            agent_warn(w, "skill '%s' skipped: %s", path, e2.msg);
            free(text);
            continue;
        }
        free(text);
        char disp[4096];
        snprintf(disp, sizeof disp, "%s/%s/SKILL.md", display_prefix, names[i]);
        k.path = strdup(path);
        k.display = strdup(disp);
        if (!k.path || !k.display || add_skill(s, k)) {
            skill_free(&k);
            rc = UTIL_ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc) return util_err_set(err, rc, "skills: out of memory");
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
