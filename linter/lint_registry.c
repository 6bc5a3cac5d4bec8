/* linter/lint_registry.c: the rule table (codes, names, severities, one-line
 * summaries), lookups by code or name, rule lists, the names of the change
 * classes and kinds that findings speak of, and the rule documentation
 * (linter/rules/PLxxx.md) behind --explain and SARIF help. The lowest layer
 * of linter/: calls nothing else in it. Does not run rules or hold findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "lint_registry.h"

/* --- rules ------------------------------------------------------------------ */

static const lint_rule_info k_rules[LINT_R_COUNT] = {
    {"PL001", "volatile-before-stable", LINT_ERROR,
     "volatile content placed before stable content makes everything after it uncacheable"},
    {"PL002", "volatile-in-stable-file", LINT_WARNING,
     "volatile content in a file that is stable by role (AGENTS.md, SOUL.md, IDENTITY.md, "
     "SKILL.md)"},
    {"PL003", "sub-day-time", LINT_WARNING, "time precision finer than a day changes on every call"},
    {"PL004", "unstable-order", LINT_WARNING,
     "construct whose output order can change between renders (unsorted maps, glob includes, "
     "unsorted tool lists)"},
    {"PL005", "skill-frontmatter", LINT_ERROR, "SKILL.md frontmatter breaks the Agent Skills specification"},
    {"PL006", "invalid-utf8", LINT_ERROR, "the file is not valid UTF-8"},
    {"PL007", "unused-suppression", LINT_INFO,
     "a suppression comment that suppresses nothing or names an unknown rule"},
    {"PL008", "unknown-placeholder", LINT_WARNING,
     "a placeholder whose name and surrounding words do not say how often it changes, placed "
     "before stable content"},
};

const lint_rule_info *lint_rule_get(int id) { return id >= 0 && id < LINT_R_COUNT ? &k_rules[id] : NULL; }

int lint_rule_find(const char *s, size_t len) {
    for (int i = 0; i < LINT_R_COUNT; i++) {
        if (strlen(k_rules[i].code) == len && strncasecmp(k_rules[i].code, s, len) == 0) return i;
        if (strlen(k_rules[i].name) == len && strncasecmp(k_rules[i].name, s, len) == 0) return i;
    }
    return UTIL_ENOTFOUND;
}

int lint_rule_parse_list(unsigned *out, const char *list, util_err *err) {
    *out = 0;
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        const char *s = p;
        while (*p && *p != ',' && *p != ' ' && *p != '\t') p++;
        if (p == s) break;
        size_t n = (size_t)(p - s);
        if (n == 3 && strncasecmp(s, "ALL", 3) == 0) {
            *out = (1u << LINT_R_COUNT) - 1;
            continue;
        }
        /* a prefix such as "PL00" selects every code it starts */
        int id = lint_rule_find(s, n), any = 0;
        if (id >= 0) {
            *out |= 1u << id;
            continue;
        }
        for (int i = 0; i < LINT_R_COUNT; i++)
            if (n < 5 && strncasecmp(k_rules[i].code, s, n) == 0) *out |= 1u << i, any = 1;
        if (!any) return util_err_set(err, UTIL_EINVAL, "unknown rule code '%.*s'", (int)n, s);
    }
    return UTIL_OK;
}

const char *lint_severity_name(lint_severity s) {
    return s == LINT_ERROR ? "error" : s == LINT_WARNING ? "warning" : "info";
}

/* --- what findings speak of -------------------------------------------------- */

const char *lint_vclass_name(int vc) {
    static const char *const k[LINT_VC_COUNT] = {"stable",      "per-user", "per-day",
                                                 "per-session", "per-turn", "per-call"};
    return vc >= 0 && vc < LINT_VC_COUNT ? k[vc] : "?";
}

const char *lint_kind_name(int kind) {
    static const char *const k[LINT_K_COUNT] = {"placeholder",
                                                "date",
                                                "date and time",
                                                "time of day",
                                                "weekday",
                                                "timestamp",
                                                "relative time",
                                                "UUID",
                                                "id",
                                                "nonce",
                                                "hash",
                                                "name",
                                                "home path",
                                                "host name",
                                                "IP address",
                                                "counter",
                                                "time-of-day greeting",
                                                "pattern",
                                                "environment fact",
                                                "command output",
                                                "location",
                                                "profile field",
                                                "request content"};
    return kind >= 0 && kind < LINT_K_COUNT ? k[kind] : "?";
}

/* --- rule documentation ----------------------------------------------------------- */

int lint_rule_doc(char **out, const char *exe_path, int id, util_err *err) {
    const lint_rule_info *r = lint_rule_get(id);
    *out = NULL;
    if (!r) return util_err_set(err, UTIL_ENOTFOUND, "unknown rule %d", id);
    char dirs[2][4096];
    size_t nd = 0;
    const char *env = getenv("PROMPTLINT_RULES_DIR");
    if (env && *env) snprintf(dirs[nd++], sizeof dirs[0], "%s", env);
    /* the one data-directory search order (util/path.h) */
    char data[4096];
    util_err derr;
    if (util_data_dir_find(data, sizeof data, NULL, &derr) == UTIL_OK)
        snprintf(dirs[nd++], sizeof dirs[0], "%s/linter/rules", data);
    else if (nd == 0)
        return util_err_set(err, UTIL_ENOTFOUND, "rule documentation '%s.md': %s", r->code, derr.msg);
    for (size_t i = 0; i < nd; i++) {
        char p[8192];
        snprintf(p, sizeof p, "%s/%s.md", dirs[i], r->code);
        if (access(p, R_OK) != 0) continue;
        size_t len;
        return util_read_file(out, &len, p, err);
    }
    return util_err_set(err, UTIL_ENOTFOUND,
                        "rule documentation '%s.md' not found (looked in "
                        "'%s' and %zu more)",
                        r->code, dirs[0], nd - 1);
}
