/* tests/fuzz/fuzz_lint.c: libFuzzer target for promptlint's input path. The
 * first byte picks what the rest is: a prompt file under one of several names
 * (roles, templates, SKILL.md), a .promptlint.json, or two prompts for `diff`
 * (split at the first NUL). Build: make fuzz; run: sh scripts/fuzz-all.sh SECONDS lint
 * (seeds: tests/fuzz/corpus/lint).
 * Not part of the test runner. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../linter/lint.h"
#include "../../linter/lint_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const k_names[] = {
    "prompts/system.md", "AGENTS.md", "USER.md",      "skills/demo/SKILL.md",
    "prompts/turn.j2",   "x.prompt",  "tpl.mustache", "notes.txt",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned mode = data[0] % 10;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    /* libFuzzer's entry point carries no user context, so the compiled
     * patterns live in this one function-local static (harness only; the
     * library itself has no mutable globals). Compiling them per input would
     * cut the fuzzing rate by ~50x. */
    static lint_ctx *c;
    util_err err = {0};
    if (!c) {
        lint_options o = {0};
        o.no_model = 1;
        o.no_config = 1;
        if (lint_ctx_new(&c, &o, &err)) abort();
    }
    if (mode < 8) {
        lint_report r;
        lint_report_init(&r);
        lint_check_buffer(c, &r, k_names[mode], k_names[mode], text, len, &err);
        lint_report_sort(&r);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            lint_output_opts oo = {(lint_format)(data[0] % 3), data[0] & 1, 0, NULL, "fuzz"};
            lint_output(devnull, &r, &oo, &err);
            fclose(devnull);
        }
        lint_report_release(&r);
    } else if (mode == 8) {
        lint_config *cfg = NULL;
        if (lint_config_parse(&cfg, text, len, "fuzz.json", "/tmp", &err) == 0) {
            lint_config_role(cfg, "prompts/a/SKILL.md");
            lint_config_is_prompt(cfg, "x/prompts/y.md");
            lint_config_free(cfg);
        }
    } else {
        const char *nul = memchr(text, '\0', len);
        size_t al = nul ? (size_t)(nul - text) : len / 2;
        const char *b = nul ? nul + 1 : text + al;
        size_t bl = len - (size_t)(b - text);
        lint_diff d;
        lint_diff_texts(c, &d, text, al, b, bl, &err);
    }
    return 0;
}
