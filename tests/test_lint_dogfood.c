/* tests/test_lint_dogfood.c: the project's own prompt text (prompts/, skills/,
 * examples/workspace/) must lint clean: no finding of any severity. Missing or
 * empty directories pass. Uses the repository's .promptlint.json if any. */
#include <sys/stat.h>

#include "../linter/lint.h"
#include "check.h"

static void test_prompts(void) {
    lint_options o = {0};
    o.no_model = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    if (lint_ctx_new(&c, &o, &err)) {
        CHECK_MSG(0, "lint_ctx_new: %s", err.msg);
        return;
    }
    static const char *const k_dirs[] = {"prompts", "skills", "examples/workspace"};
    size_t checked = 0;
    for (size_t i = 0; i < sizeof k_dirs / sizeof k_dirs[0]; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", check_root(), k_dirs[i]);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        lint_report r;
        lint_report_init(&r);
        const char *paths[1] = {p};
        int rc = lint_check_paths(c, &r, paths, 1, &err);
        CHECK_MSG(rc == 0, "lint '%s': %s", p, err.msg);
        for (size_t k = 0; k < r.n; k++)
            CHECK_MSG(0, "%s:%d:%d: %s %s %s", r.items[k].file, r.items[k].line, r.items[k].column,
                      lint_severity_name(r.items[k].severity), lint_rule_get(r.items[k].rule)->code,
                      r.items[k].message);
        checked += r.files_checked;
        lint_report_release(&r);
    }
    fprintf(stderr, "lint dogfood: %zu prompt files checked\n", checked);
    CHECK(1);
    lint_ctx_free(c);
}

void test_lint_dogfood(void) { CHECK_CASE(prompts) test_prompts(); }
