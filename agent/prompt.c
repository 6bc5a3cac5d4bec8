/* agent/prompt.c: assembles tiers 0-3 from the built-in prompt text (data
 * dir prompts/), the tool definitions (prompts/tools.json, sorted by name),
 * the workspace files and the skills index. Workspace files are read beneath
 * the workspace on descriptors (a link out of it is left out with a warning),
 * regular files only, with a size cap. Tiers 0-1 depend on file bytes only
 * (no clock, cwd or env), so any process renders them identically. Does not
 * tokenize or keep history (loop.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../util/text.h"
#include "../util/fs.h"
#include "prompt.h"
#include "tools.h"
#include "tools_git.h"

static void chomp(char *s) {
    size_t l = strlen(s);
    while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' ')) s[--l] = '\0';
}

int agent_read_prompt(char **out, const char *data_dir, const char *name, util_err *err) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/prompts/%s", data_dir, name);
    int rc = util_read_file(out, NULL, p, err);
    if (rc) return rc;
    /* whole-line HTML comments are notes for maintainers and promptlint
     * (cache-boundary markers): they are not sent to the model */
    char *w = *out;
    for (char *s = *out; *s;) {
        char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s + 1) : strlen(s);
        int comment = strncmp(s, "<!--", 4) == 0 && strstr(s, "-->") && strstr(s, "-->") < s + l;
        if (!comment) {
            memmove(w, s, l);
            w += l;
        }
        s += l;
    }
    *w = '\0';
    chomp(*out);
    return UTIL_OK;
}

/* --- tiers 0 and 1 --------------------------------------------------------------- */

/* Reads one workspace file (if present) into dst as a "## NAME" section,
 * sanitized and truncated; *budget is the total left. The file is resolved
 * beneath the workspace (wsfd): one that leads outside, is not a regular file
 * or is over AGENT_FILE_READ_MAX is left out with a warning naming it. */
static int add_file(util_buf *dst, int wsfd, const char *name, size_t *budget, agent_warnings *w,
                    util_err *err) {
    char *raw = NULL, *clean = NULL, *cut = NULL;
    size_t n = 0, cn = 0, kn = 0;
    util_err e;
    int rc = util_fs_read(&raw, &n, wsfd, name, AGENT_FILE_READ_MAX, UTIL_FS_BENEATH, NULL, &e);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc == UTIL_EINVAL) {
        agent_warn(w, "'%s' left out: it leads outside the workspace (a symbolic link)", name);
        return UTIL_OK;
    }
    if (rc == UTIL_EFORMAT) {
        agent_warn(w, "'%s' left out: %s", name, e.msg);
        return UTIL_OK;
    }
    if (rc == UTIL_ERANGE) {
        agent_warn(w, "'%s' left out: larger than the limit of %zu bytes for a workspace prompt file", name,
                   AGENT_FILE_READ_MAX);
        util_buf_printf(dst, "\n\n## %s\n[left out by cachet: the file is larger than %zu bytes]", name,
                        AGENT_FILE_READ_MAX);
        return UTIL_OK;
    }
    if (rc) return util_err_set(err, rc, "workspace file %s", e.msg);
    size_t bad = util_utf8_sanitize(raw, n, &clean, &cn);
    if (!clean) {
        free(raw);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    if (bad) agent_warn(w, "'%s': %zu invalid UTF-8 sequences replaced", name, bad);
    chomp(clean);
    cn = strlen(clean);
    size_t limit = AGENT_FILE_LIMIT < *budget ? AGENT_FILE_LIMIT : *budget;
    if (limit == 0) {
        agent_warn(w, "'%s' left out: the workspace files exceed %d bytes in total", name, AGENT_TOTAL_LIMIT);
        util_buf_printf(dst, "\n\n## %s\n[left out by cachet: the total size limit is reached]", name);
    } else {
        int t = util_text_truncate(clean, cn, limit, &cut, &kn);
        if (t < 0) {
            free(raw);
            free(clean);
            return util_err_set(err, UTIL_ENOMEM, "out of memory");
        }
        if (t) agent_warn(w, "'%s' truncated from %zu to about %zu bytes", name, cn, limit);
        *budget -= kn < *budget ? kn : *budget;
        if (kn) util_buf_printf(dst, "\n\n## %s\n%s", name, cut);
    }
    free(raw);
    free(clean);
    free(cut);
    return UTIL_OK;
}

static int cmp_json_name(const void *a, const void *b) {
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(cJSON_GetObjectItemCaseSensitive(x, "name")->valuestring,
                  cJSON_GetObjectItemCaseSensitive(y, "name")->valuestring);
}

/* prompts/tools.json -> one JSON object per line, sorted by name, only the
 * tools this build implements. */
static int render_tools(util_buf *dst, char **tools_json, const char *data_dir, agent_warnings *w,
                        util_err *err) {
    char *text = NULL;
    int rc = agent_read_prompt(&text, data_dir, "tools.json", err);
    if (rc) return rc;
    cJSON *arr = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(arr);
        return util_err_set(err, UTIL_EFORMAT, "'%s/prompts/tools.json' is not a JSON array", data_dir);
    }
    int n = cJSON_GetArraySize(arr);
    cJSON **v = calloc((size_t)n + 1, sizeof *v);
    int k = 0;
    for (int i = 0; v && i < n; i++) {
        cJSON *t = cJSON_GetArrayItem(arr, i);
        cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
        if (!cJSON_IsString(nm)) continue;
        if (!agent_tool_exists(nm->valuestring)) {
            agent_warn(w, "tools.json: tool '%s' is not built in; left out", nm->valuestring);
            continue;
        }
        v[k++] = t;
    }
    if (!v) {
        cJSON_Delete(arr);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    qsort(v, (size_t)k, sizeof *v, cmp_json_name);
    cJSON *sorted = cJSON_CreateArray();
    for (int i = 0; i < k; i++) {
        char *s = cJSON_PrintUnformatted(v[i]);
        util_buf_printf(dst, "%s\n", s ? s : "");
        cJSON_AddItemReferenceToArray(sorted, v[i]);
        free(s);
    }
    *tools_json = cJSON_PrintUnformatted(sorted);
    cJSON_Delete(sorted);
    cJSON_Delete(arr);
    free(v);
    return UTIL_OK;
}

static int add_prompt(util_buf *dst, const char *data_dir, const char *name, util_err *err) {
    char *t = NULL;
    int rc = agent_read_prompt(&t, data_dir, name, err);
    if (rc) return rc;
    util_buf_puts(dst, t);
    free(t);
    return UTIL_OK;
}

static int build_tier0(agent_prompt *p, const agent_prompt_opts *o, int wsfd, util_buf *b, util_err *err) {
    size_t budget = AGENT_TOTAL_LIMIT;
    const char *tu = (o->format ? o->format : agent_format_of(ENG_CHAT_CHATML))->tool_use_prompt;
    int rc = add_prompt(b, o->data_dir, "system.md", err);
    if (!rc) rc = util_buf_puts(b, "\n\n");
    if (!rc) rc = add_prompt(b, o->data_dir, tu, err);
    if (!rc) rc = util_buf_puts(b, "\n<tools>\n");
    if (!rc) rc = render_tools(b, &p->tools_json, o->data_dir, &p->warnings, err);
    if (!rc) rc = util_buf_puts(b, "</tools>");
    static const char *const files0[] = {"AGENTS.md", "SOUL.md", "IDENTITY.md", "TOOLS.md"};
    for (size_t i = 0; !rc && i < 4; i++) rc = add_file(b, wsfd, files0[i], &budget, &p->warnings, err);
    if (rc) return rc;
    /* skills: built-in < user < workspace (later overrides), index sorted */
    /* each folder is confined to its own directory; the workspace's to the workspace */
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/skills", o->data_dir);
    rc = agent_skills_scan(&p->skills, dir, ".", "builtin:skills", &p->warnings, err);
    if (!rc) {
        const char *home = getenv("HOME");
        if (o->user_skills)
            snprintf(dir, sizeof dir, "%s", o->user_skills);
        else
            snprintf(dir, sizeof dir, "%s/.config/cachet/skills", home ? home : "/nonexistent");
        rc = agent_skills_scan(&p->skills, dir, ".", "~/.config/cachet/skills", &p->warnings, err);
    }
    if (!rc)
        rc = agent_skills_scan(&p->skills, o->workspace, ".cachet/skills", ".cachet/skills", &p->warnings,
                               err);
    if (rc) return rc;
    agent_skills_sort(&p->skills);
    if (p->skills.n) {
        util_buf_puts(b, "\n\n");
        if ((rc = add_prompt(b, o->data_dir, "skills.md", err))) return rc;
        for (size_t i = 0; i < p->skills.n; i++)
            util_buf_printf(b, "\n- %s: %s (%s)", p->skills.v[i].name, p->skills.v[i].description,
                            p->skills.v[i].display);
    }
    return UTIL_OK;
}

int agent_prompt_build(agent_prompt *p, const agent_prompt_opts *o, util_err *err) {
    memset(p, 0, sizeof *p);
    util_buf b0, b1;
    util_buf_init(&b0);
    util_buf_init(&b1);
    int wsfd = open(o->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int rc = wsfd < 0 ? util_err_set(err, UTIL_ENOTFOUND, "workspace '%s': %s", o->workspace, strerror(errno))
                      : build_tier0(p, o, wsfd, &b0, err);
    size_t budget = AGENT_TOTAL_LIMIT;
    if (!rc) rc = add_file(&b1, wsfd, "USER.md", &budget, &p->warnings, err);
    if (!rc) rc = add_file(&b1, wsfd, "MEMORY.md", &budget, &p->warnings, err);
    if (wsfd >= 0) close(wsfd);
    util_buf_append(&b0, "", 0);
    util_buf_append(&b1, "", 0);
    if (rc) {
        util_buf_release(&b0);
        util_buf_release(&b1);
        agent_prompt_release(p);
        return rc;
    }
    p->tier0 = util_buf_detach(&b0, NULL);
    p->tier1 = util_buf_detach(&b1, NULL);
    size_t l0 = strlen(p->tier0), l1 = strlen(p->tier1);
    p->system = malloc(l0 + l1 + 1);
    if (!p->system || !p->tools_json) {
        agent_prompt_release(p);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    memcpy(p->system, p->tier0, l0);
    memcpy(p->system + l0, p->tier1, l1 + 1);
    return UTIL_OK;
}

void agent_prompt_release(agent_prompt *p) {
    free(p->tier0);
    free(p->tier1);
    free(p->system);
    free(p->tools_json);
    agent_skills_release(&p->skills);
    agent_warnings_release(&p->warnings);
    memset(p, 0, sizeof *p);
}

/* --- tiers 2 and 3 ------------------------------------------------------------------ */

/* Fills {{key}} placeholders of a prompt template. */
static int fill(util_buf *out, const char *tpl, const char *const *kv, size_t nkv) {
    for (const char *s = tpl; *s;) {
        const char *o = strstr(s, "{{");
        if (!o) return util_buf_puts(out, s);
        util_buf_append(out, s, (size_t)(o - s));
        const char *c = strstr(o, "}}");
        if (!c) return util_buf_puts(out, o);
        size_t kl = (size_t)(c - o - 2);
        const char *val = NULL;
        for (size_t i = 0; i + 1 < nkv * 2; i += 2)
            if (strlen(kv[i]) == kl && memcmp(kv[i], o + 2, kl) == 0) val = kv[i + 1];
        if (val)
            util_buf_puts(out, val);
        else
            util_buf_append(out, o, (size_t)(c + 2 - o));
        s = c + 2;
    }
    return UTIL_OK;
}

int agent_tier2(util_buf *out, const char *data_dir, const char *workspace, const char *model, long long now,
                util_err *err) {
    char *tpl = NULL;
    int rc = agent_read_prompt(&tpl, data_dir, "session-context.md", err);
    if (rc) return rc;
    time_t t = (time_t)now;
    struct tm tm;
    localtime_r(&t, &tm);
    char date[64], os[256];
    strftime(date, sizeof date, "%Y-%m-%d (%A)", &tm);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s", u.sysname, u.machine);
    else
        snprintf(os, sizeof os, "unknown");
    const char *kv[] = {"date", date, "os", os, "workspace", workspace, "model", model};
    rc = fill(out, tpl, kv, 4);
    free(tpl);
    return rc;
}

int agent_tier3(util_buf *out, const char *data_dir, const char *workspace, long long now, util_err *err) {
    char *tpl = NULL;
    int rc = agent_read_prompt(&tpl, data_dir, "turn-context.md", err);
    if (rc) return rc;
    time_t t = (time_t)now;
    struct tm tm;
    localtime_r(&t, &tm);
    char tod[32];
    strftime(tod, sizeof tod, "%H:%M", &tm);
    util_buf git;
    util_buf_init(&git);
    agent_git_summary(workspace, &git);
    util_buf_append(&git, "", 0);
    /* the git lines end in a newline; the template decides the layout */
    if (git.len && git.data[git.len - 1] == '\n') git.data[--git.len] = '\0';
    const char *kv[] = {"time", tod, "git", git.data};
    util_buf_puts(out, "\n\n");
    rc = fill(out, tpl, kv, 2);
    util_buf_release(&git);
    free(tpl);
    return rc;
}
