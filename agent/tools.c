/* agent/tools.c: the tool registry: which tools exist, running one by name
 * (its output made valid UTF-8 and cut at the output limit) and read_skill.
 * The workspace rules (confinement, allow list, confirmation) live in
 * tools_ws.c, the other tools in tools_fs.c, tools_git.c and tools_shell.c. */
#include <stdlib.h>
#include <string.h>

#include "../util/text.h"
#include "tools.h"
#include "tools_impl.h"

typedef int (*tool_fn)(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);

static int tool_read_skill(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);

static const struct {
    const char *name;
    tool_fn fn;
} k_tools[] = {
    {"edit_file", agent_tool_edit_file}, {"git_diff", agent_tool_git_diff},
    {"git_log", agent_tool_git_log},     {"git_status", agent_tool_git_status},
    {"grep", agent_tool_grep},           {"list_dir", agent_tool_list_dir},
    {"read_file", agent_tool_read_file}, {"read_skill", tool_read_skill},
    {"run_shell", agent_tool_run_shell}, {"write_file", agent_tool_write_file},
};

int agent_tool_exists(const char *name) {
    for (size_t i = 0; i < sizeof k_tools / sizeof k_tools[0]; i++)
        if (strcmp(k_tools[i].name, name) == 0) return 1;
    return 0;
}

/* --- running ---------------------------------------------------------------------------- */

static int tool_read_skill(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *name;
    int rc = agent_tool_arg_str(a, "read_skill", "name", 1, &name, err);
    if (rc) return rc;
    const agent_skill *k = t->skills ? agent_skills_find(t->skills, name) : NULL;
    if (!k) return util_err_set(err, UTIL_ENOTFOUND, "read_skill: no skill named '%s'", name);
    char *text = NULL;
    size_t n = 0;
    if ((rc = agent_skill_read(k, &text, &n, err))) return rc;
    util_buf_append(out, text, n);
    free(text);
    return UTIL_OK;
}

int agent_tool_run(agent_tools *t, const char *name, const cJSON *args, util_buf *out, util_err *err) {
    for (size_t i = 0; i < sizeof k_tools / sizeof k_tools[0]; i++) {
        if (strcmp(k_tools[i].name, name) != 0) continue;
        if (args && !cJSON_IsObject(args))
            return util_err_set(err, UTIL_EINVAL, "%s: arguments must be a JSON object", name);
        util_buf raw;
        util_buf_init(&raw);
        cJSON *empty = NULL;
        if (!args) args = empty = cJSON_CreateObject();
        int rc = k_tools[i].fn(t, args, &raw, err);
        cJSON_Delete(empty);
        if (!rc) {
            char *clean = NULL, *cut = NULL;
            size_t cn = 0, kn = 0;
            util_utf8_sanitize(raw.data ? raw.data : "", raw.len, &clean, &cn);
            if (!clean || util_text_truncate(clean, cn, t->max_output, &cut, &kn) < 0 ||
                util_buf_append(out, cut, kn))
                rc = util_err_set(err, UTIL_ENOMEM, "%s: out of memory", name);
            free(clean);
            free(cut);
        }
        util_buf_release(&raw);
        return rc;
    }
    return util_err_set(err, UTIL_ENOTFOUND, "unknown tool '%s'", name);
}
