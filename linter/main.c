/* linter/main.c: the promptlint command line: lint paths or the git index,
 * install the pre-commit hook, diff two rendered prompts, explain a rule.
 * Exit 0 clean, 1 findings (errors; warnings too with --strict), 2 usage,
 * config or internal error. All linting lives in the library (linter/lint*.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/version.h"
#include "lint.h"

static const char k_usage[] =
    "usage: promptlint [options] [PATH...]       lint files and directories (default: .)\n"
    "       promptlint --staged [PATH...]        lint the staged content of changed files\n"
    "       promptlint install-hook [--force]    install the git pre-commit hook\n"
    "       promptlint diff [--json] A B         first divergent byte/token of two prompts\n"
    "       promptlint --explain CODE            the rule, its rationale, an example, the fix\n"
    "       promptlint --list-rules\n"
    "\n"
    "options:\n"
    "  --format text|json|sarif  output format (--json, --sarif for short)\n"
    "  --strict                  exit 1 on warnings too\n"
    "  --select CODES            only these rules (comma separated; prefixes like PL00)\n"
    "  --ignore CODES            skip these rules\n"
    "  --config FILE             use this config for every file (no upward search)\n"
    "  --isolated                ignore .promptlint.json files\n"
    "  --model PATH              tokenizer model for exact token counts\n"
    "  --no-model                estimate token counts\n"
    "  --color auto|always|never (NO_COLOR is respected)\n"
    "  --stdin-filename NAME     name for input read from '-'\n"
    "  --max-file-size SIZE      skip (walking) or refuse (named) files larger than SIZE\n"
    "                            (bytes, or with K, M, G; default 16M; max_file_size in config)\n"
    "  --prompts-only            lint only the named files that are prompts by name,\n"
    "                            extension or content, as directory mode would\n"
    "  --exit-zero               exit 0 even with findings\n"
    "  -q, --quiet               no summary line\n"
    "  -h, --help, --version\n";

typedef struct cli {
    lint_options lo;
    lint_output_opts oo;
    int strict, staged, exit_zero, force, json, color_mode; /* color: 0 auto 1 always 2 never */
    const char *stdin_name;
    const char **paths;
    size_t n_paths;
} cli;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "promptlint: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(run 'promptlint --help' for usage)\n");
    va_end(ap);
    return 2;
}

/* Value of "--name=value" or "--name value"; advances *i. NULL if absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}

static int parse_args(cli *c, int argc, char **argv, int start) {
    util_err err = {0};
    for (int i = start; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) c->paths[c->n_paths++] = argv[i];
            break;
        }
        if (a[0] != '-' || !strcmp(a, "-")) {
            c->paths[c->n_paths++] = a;
        } else if (!strcmp(a, "--staged")) {
            c->staged = 1;
        } else if (!strcmp(a, "--strict")) {
            c->strict = 1;
        } else if (!strcmp(a, "--json")) {
            c->oo.format = LINT_FMT_JSON, c->json = 1;
        } else if (!strcmp(a, "--sarif")) {
            c->oo.format = LINT_FMT_SARIF;
        } else if (!strcmp(a, "--isolated") || !strcmp(a, "--no-config")) {
            c->lo.no_config = 1;
        } else if (!strcmp(a, "--no-model")) {
            c->lo.no_model = 1;
        } else if (!strcmp(a, "--no-color")) {
            c->color_mode = 2;
        } else if (!strcmp(a, "--exit-zero")) {
            c->exit_zero = 1;
        } else if (!strcmp(a, "--force")) {
            c->force = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c->oo.quiet = 1;
        } else if ((v = opt_value(argc, argv, &i, "--format"))) {
            if (!strcmp(v, "text"))
                c->oo.format = LINT_FMT_TEXT;
            else if (!strcmp(v, "json"))
                c->oo.format = LINT_FMT_JSON, c->json = 1;
            else if (!strcmp(v, "sarif"))
                c->oo.format = LINT_FMT_SARIF;
            else
                return usage_error("unknown format '%s' (text, json or sarif)", v);
        } else if ((v = opt_value(argc, argv, &i, "--select"))) {
            if (lint_rule_parse_list(&c->lo.select_override, v, &err) || !c->lo.select_override)
                return usage_error("--select: %s", err.msg[0] ? err.msg : "no rule given");
        } else if ((v = opt_value(argc, argv, &i, "--ignore"))) {
            unsigned m;
            if (lint_rule_parse_list(&m, v, &err)) return usage_error("--ignore: %s", err.msg);
            c->lo.ignore_extra |= m;
        } else if ((v = opt_value(argc, argv, &i, "--config"))) {
            if (!*v) return usage_error("%s needs a file", "--config");
            c->lo.config_path = v;
        } else if ((v = opt_value(argc, argv, &i, "--model"))) {
            if (!*v) return usage_error("%s needs a file", "--model");
            c->lo.model_path = v;
        } else if ((v = opt_value(argc, argv, &i, "--color"))) {
            if (!strcmp(v, "auto"))
                c->color_mode = 0;
            else if (!strcmp(v, "always"))
                c->color_mode = 1;
            else if (!strcmp(v, "never"))
                c->color_mode = 2;
            else
                return usage_error("unknown colour mode '%s' (auto, always or never)", v);
        } else if ((v = opt_value(argc, argv, &i, "--stdin-filename"))) {
            c->stdin_name = v;
        } else if (!strcmp(a, "--prompts-only")) {
            c->lo.prompts_only = 1;
        } else if ((v = opt_value(argc, argv, &i, "--max-file-size"))) {
            if (lint_parse_size(&c->lo.max_file_size, v))
                return usage_error("--max-file-size: '%s' is not a size (bytes, or 64K, 16M, 1G)", v);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    return 0;
}

static int want_color(int mode) {
    if (mode) return mode == 1;
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    if (nc && *nc) return 0;
    if (term && !strcmp(term, "dumb")) return 0;
    return isatty(STDOUT_FILENO);
}

static int explain(const char *exe, const char *code) {
    int id = lint_rule_find(code, strlen(code));
    if (id < 0) return usage_error("unknown rule code '%s' (see --list-rules)", code);
    const lint_rule_info *r = lint_rule_get(id);
    char *doc = NULL;
    util_err err = {0};
    if (lint_rule_doc(&doc, exe, id, &err) == UTIL_OK) {
        fputs(doc, stdout);
        free(doc);
        return 0;
    }
    printf("%s (%s, %s)\n\n%s\n", r->code, r->name, lint_severity_name(r->severity), r->summary);
    fprintf(stderr, "promptlint: %s\n", err.msg);
    return 0;
}

static int list_rules(void) {
    for (int i = 0; i < LINT_R_COUNT; i++) {
        const lint_rule_info *r = lint_rule_get(i);
        printf("%s  %-24s %-8s %s\n", r->code, r->name, lint_severity_name(r->severity), r->summary);
    }
    return 0;
}

/* Reads standard input, at most limit bytes: UTIL_ERANGE past it. */
static int read_stdin(char **out, size_t *len, size_t limit) {
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) return UTIL_ENOMEM;
    for (;;) {
        if (n > limit) {
            free(b);
            return UTIL_ERANGE;
        }
        if (n == cap) {
            char *p = realloc(b, cap *= 2);
            if (!p) {
                free(b);
                return UTIL_ENOMEM;
            }
            b = p;
        }
        size_t k = fread(b + n, 1, cap - n, stdin);
        if (k == 0) break;
        n += k;
    }
    if (n > limit) {
        free(b);
        return UTIL_ERANGE;
    }
    if (ferror(stdin)) {
        free(b);
        return UTIL_EIO;
    }
    *out = b;
    *len = n;
    return UTIL_OK;
}

static int run_lint(cli *c, lint_ctx *ctx, lint_report *rep, util_err *err) {
    if (c->staged) return lint_check_staged(ctx, rep, ".", c->paths, c->n_paths, err);
    static const char *const k_dot[] = {"."};
    if (c->n_paths == 0) return lint_check_paths(ctx, rep, k_dot, 1, err);
    int rc = UTIL_OK;
    for (size_t i = 0; i < c->n_paths && !rc; i++) {
        if (strcmp(c->paths[i], "-") != 0) {
            rc = lint_check_paths(ctx, rep, &c->paths[i], 1, err);
            continue;
        }
        char *data;
        size_t len;
        size_t limit = c->lo.max_file_size ? c->lo.max_file_size : LINT_DEFAULT_MAX_FILE_SIZE;
        int rs = read_stdin(&data, &len, limit);
        if (rs == UTIL_ERANGE)
            return util_err_set(err, UTIL_EINVAL,
                                "standard input is over the limit of %zu bytes "
                                "(%s)",
                                limit,
                                c->lo.max_file_size ? "--max-file-size"
                                                    : "the default; raise it with --max-file-size");
        if (rs) return util_err_set(err, rs, "reading standard input: %s", util_strerror(rs));
        const char *name = c->stdin_name ? c->stdin_name : "-";
        rc = lint_check_buffer(ctx, rep, name, c->stdin_name ? name : "stdin.md", data, len, err);
        free(data);
    }
    return rc;
}

static int cmd_hook(cli *c) {
    int result;
    char path[4200];
    util_err err = {0};
    if (lint_hook_install(&result, path, sizeof path, ".", c->lo.exe_path, c->force, &err)) {
        fprintf(stderr, "promptlint: %s\n", err.msg);
        return 2;
    }
    static const char *const k_what[] = {"installed", "updated", "already installed",
                                         "installed (the old hook is pre-commit.orig)"};
    printf("pre-commit hook %s: %s\n", k_what[result], path);
    return 0;
}

static int cmd_diff(cli *c, lint_ctx *ctx) {
    if (c->n_paths != 2) return usage_error("%s needs two files: promptlint diff A B", "diff");
    char *a = NULL, *b = NULL;
    size_t al, bl;
    util_err err = {0};
    lint_diff d;
    int rc = util_read_file(&a, &al, c->paths[0], &err);
    if (!rc) rc = util_read_file(&b, &bl, c->paths[1], &err);
    if (!rc) rc = lint_diff_texts(ctx, &d, a, al, b, bl, &err);
    if (!rc) rc = lint_diff_print(stdout, &d, c->paths[0], c->paths[1], c->json, &err);
    free(a);
    free(b);
    if (rc) {
        fprintf(stderr, "promptlint: %s\n", err.msg);
        return 2;
    }
    return d.identical || d.extends ? 0 : 1;
}

int main(int argc, char **argv) {
    cli c;
    memset(&c, 0, sizeof c);
    char exe[4096];
    if (util_exe_path(exe, sizeof exe, NULL)) snprintf(exe, sizeof exe, "%s", argv[0]);
    c.lo.exe_path = exe;
    c.oo.exe_path = exe;
    c.paths = calloc((size_t)argc + 1, sizeof *c.paths);
    if (!c.paths) return 2;
    int start = 1, cmd = 0; /* 1 install-hook, 2 diff */
    if (argc > 1 && !strcmp(argv[1], "install-hook"))
        cmd = 1, start = 2;
    else if (argc > 1 && !strcmp(argv[1], "diff"))
        cmd = 2, start = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(k_usage, stdout);
            free(c.paths);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            UTIL_PRINT_VERSION(stdout, "promptlint");
            free(c.paths);
            return 0;
        }
        if (!strcmp(argv[i], "--list-rules")) {
            free(c.paths);
            return list_rules();
        }
        if (!strcmp(argv[i], "--explain")) {
            free(c.paths);
            if (i + 1 >= argc) return usage_error("%s needs a rule code", "--explain");
            return explain(exe, argv[i + 1]);
        }
    }
    int rc = parse_args(&c, argc, argv, start);
    if (rc) {
        free(c.paths);
        return rc;
    }
    if (cmd == 1) {
        rc = cmd_hook(&c);
        free(c.paths);
        return rc;
    }
    util_err err = {0};
    lint_ctx *ctx = NULL;
    if (lint_ctx_new(&ctx, &c.lo, &err)) {
        fprintf(stderr, "promptlint: %s\n", err.msg);
        free(c.paths);
        return 2;
    }
    if (cmd == 2) {
        rc = cmd_diff(&c, ctx);
        lint_ctx_free(ctx);
        free(c.paths);
        return rc;
    }
    lint_report rep;
    lint_report_init(&rep);
    rc = run_lint(&c, ctx, &rep, &err);
    if (!rc) {
        lint_report_sort(&rep);
        c.oo.color = c.oo.format == LINT_FMT_TEXT && want_color(c.color_mode);
        c.oo.token_source = lint_token_source(ctx);
        rc = lint_output(stdout, &rep, &c.oo, &err);
    }
    int status;
    for (size_t i = 0; i < rep.n_notes; i++) fprintf(stderr, "promptlint: warning: %s\n", rep.notes[i]);
    int none = !rc && rep.walked && rep.files_checked == 0 && !c.staged;
    if (none) /* a directory without prompts is never a silent pass */
        fprintf(stderr,
                "promptlint: warning: no prompt files found (%zu looked at); promptlint lints "
                "files named like prompts (AGENTS.md, *.prompt, *.prompty, prompts/**, "
                "*.j2, ...) and .md/.txt files that read like one; name files on the command "
                "line or add \"prompt_globs\" to .promptlint.json\n",
                rep.files_skipped);
    if (rc) {
        fprintf(stderr, "promptlint: %s\n", err.msg);
        status = 2;
    } else {
        size_t e = lint_report_count(&rep, LINT_ERROR), w = lint_report_count(&rep, LINT_WARNING);
        if (none) w++;
        status = c.exit_zero ? 0 : (e > 0 || (c.strict && w > 0)) ? 1 : 0;
    }
    lint_report_release(&rep);
    lint_ctx_free(ctx);
    free(c.paths);
    return status;
}
