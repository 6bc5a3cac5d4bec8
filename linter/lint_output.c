/* linter/lint_output.c: prints a report as gcc-style text (source line and
 * caret, optional colour), as one JSON object, or as SARIF 2.1.0 for GitHub
 * code scanning (cJSON). Does not decide colour or exit status (main.c). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/version.h"
#include "lint.h"

#define LINT_URI "https://github.com/cachet/cachet/blob/main/docs/promptlint.md"

/* --- text -------------------------------------------------------------------------- */

static const char *sev_color(lint_severity s) {
    return s == LINT_ERROR ? "\033[1;31m" : s == LINT_WARNING ? "\033[1;33m" : "\033[1;36m";
}

/* Source line with the caret under [col, end_col). Tabs are copied so the caret
 * lines up; the line is cut at 200 code points. */
static void print_source(FILE *f, const lint_finding *x, int color) {
    if (!x->source) return;
    char num[16];
    int w = snprintf(num, sizeof num, "%d", x->line);
    const char *s = x->source;
    size_t len = strlen(s), cut = len;
    int cps = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && ++cps > 200) {
            cut = i;
            break;
        }
    fprintf(f, " %*s |\n", w, "");
    fprintf(f, " %s | %.*s%s\n", num, (int)cut, s, cut < len ? " ..." : "");
    fprintf(f, " %*s | ", w, "");
    int col = 1;
    size_t i = 0;
    for (; i < cut && col < x->column; i++) {
        if (((unsigned char)s[i] & 0xC0) == 0x80) continue;
        fputc(s[i] == '\t' ? '\t' : ' ', f);
        col++;
    }
    int n = x->end_line == x->line ? x->end_column - x->column : cps - x->column + 1;
    if (n < 1) n = 1;
    if (n > 200) n = 200;
    if (color) fputs(sev_color(x->severity), f);
    for (int k = 0; k < n; k++) fputc('^', f);
    if (color) fputs("\033[0m", f);
    fputc('\n', f);
}

static int out_text(FILE *f, const lint_report *r, const lint_output_opts *o) {
    for (size_t i = 0; i < r->n; i++) {
        const lint_finding *x = &r->items[i];
        const lint_rule_info *ri = lint_rule_get(x->rule);
        if (o->color)
            fprintf(f, "\033[1m%s:%d:%d:\033[0m %s%s\033[0m \033[2m%s\033[0m %s\n", x->file, x->line,
                    x->column, sev_color(x->severity), lint_severity_name(x->severity), ri->code, x->message);
        else
            fprintf(f, "%s:%d:%d: %s %s %s\n", x->file, x->line, x->column, lint_severity_name(x->severity),
                    ri->code, x->message);
        print_source(f, x, o->color);
    }
    if (!o->quiet) {
        size_t e = lint_report_count(r, LINT_ERROR), w = lint_report_count(r, LINT_WARNING),
               in = lint_report_count(r, LINT_INFO);
        char skipped[512] = "";
        size_t sl = 0;
        if (r->files_skipped) {
            sl = (size_t)snprintf(skipped, sizeof skipped, "; skipped %zu:", r->files_skipped);
            for (int k = 0; k < LINT_SKIP_COUNT && sl < sizeof skipped; k++)
                if (r->skipped[k])
                    sl += (size_t)snprintf(skipped + sl, sizeof skipped - sl, "%s %zu %s",
                                           sl > 14 && skipped[sl - 1] != ':' ? "," : "", r->skipped[k],
                                           lint_skip_name(k));
        }
        if (r->files_checked == 0 && r->walked)
            fprintf(f, "No prompt files found (0 files checked%s)\n", skipped);
        else if (r->n == 0)
            fprintf(f, "All checks passed (%zu file%s checked%s)\n", r->files_checked,
                    r->files_checked == 1 ? "" : "s", skipped);
        else
            fprintf(f, "Found %zu error%s, %zu warning%s, %zu info in %zu file%s checked%s%s\n", e,
                    e == 1 ? "" : "s", w, w == 1 ? "" : "s", in, r->files_checked,
                    r->files_checked == 1 ? "" : "s", skipped,
                    r->tokens_estimated ? " (~ token counts are estimates: no model)" : "");
    }
    return ferror(f) ? UTIL_EIO : UTIL_OK;
}

/* --- json -------------------------------------------------------------------------- */

/* Prints root, indented, and a newline to f, and frees root (the JSON and
 * the SARIF output alike). UTIL_ENOMEM, UTIL_EIO. */
static int print_json(FILE *f, cJSON *root) {
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return UTIL_ENOMEM;
    fputs(s, f);
    fputc('\n', f);
    free(s);
    return ferror(f) ? UTIL_EIO : UTIL_OK;
}

static cJSON *finding_json(const lint_finding *x) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "file", x->file);
    cJSON_AddNumberToObject(o, "line", x->line);
    cJSON_AddNumberToObject(o, "column", x->column);
    cJSON_AddNumberToObject(o, "end_line", x->end_line);
    cJSON_AddNumberToObject(o, "end_column", x->end_column);
    cJSON_AddStringToObject(o, "rule", lint_rule_get(x->rule)->code);
    cJSON_AddStringToObject(o, "name", lint_rule_get(x->rule)->name);
    cJSON_AddStringToObject(o, "severity", lint_severity_name(x->severity));
    cJSON_AddStringToObject(o, "message", x->message);
    if (x->tokens_lost >= 0)
        cJSON_AddNumberToObject(o, "tokens_lost", (double)x->tokens_lost);
    else
        cJSON_AddNullToObject(o, "tokens_lost");
    cJSON_AddBoolToObject(o, "tokens_estimated", x->tokens_lost >= 0 && x->tokens_estimated);
    return o;
}

static int out_json(FILE *f, const lint_report *r, const lint_output_opts *o) {
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "findings") : NULL;
    if (!arr) {
        cJSON_Delete(root);
        return UTIL_ENOMEM;
    }
    for (size_t i = 0; i < r->n; i++) {
        cJSON *x = finding_json(&r->items[i]);
        if (!x) {
            cJSON_Delete(root);
            return UTIL_ENOMEM;
        }
        cJSON_AddItemToArray(arr, x);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "files_checked", (double)r->files_checked);
    cJSON_AddNumberToObject(sum, "files_skipped", (double)r->files_skipped);
    static const char *const k_skip_keys[LINT_SKIP_COUNT] = {
        "not_prompt", "excluded", "ignored", "binary", "too_large", "not_regular", "symlink", "document"};
    cJSON *sk = cJSON_AddObjectToObject(sum, "skipped");
    for (int k = 0; sk && k < LINT_SKIP_COUNT; k++)
        cJSON_AddNumberToObject(sk, k_skip_keys[k], (double)r->skipped[k]);
    cJSON_AddNumberToObject(sum, "errors", (double)lint_report_count(r, LINT_ERROR));
    cJSON_AddNumberToObject(sum, "warnings", (double)lint_report_count(r, LINT_WARNING));
    cJSON_AddNumberToObject(sum, "infos", (double)lint_report_count(r, LINT_INFO));
    cJSON_AddStringToObject(root, "token_source", o->token_source ? o->token_source : "");
    cJSON_AddStringToObject(root, "version", UTIL_VERSION);
    return print_json(f, root);
}

/* --- sarif ------------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static cJSON *sarif_rules(const lint_output_opts *o) {
    cJSON *rules = cJSON_CreateArray();
    for (int i = 0; rules && i < LINT_R_COUNT; i++) {
        const lint_rule_info *ri = lint_rule_get(i);
        cJSON *r = cJSON_CreateObject();
        if (!r) break;
        cJSON_AddItemToArray(rules, r);
        cJSON_AddStringToObject(r, "id", ri->code);
        cJSON_AddStringToObject(r, "name", ri->name);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "shortDescription"), "text", ri->summary);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "fullDescription"), "text", ri->summary);
        char *doc = NULL;
        util_err e = {0};
        lint_rule_doc(&doc, o->exe_path, i, &e);
        cJSON *help = cJSON_AddObjectToObject(r, "help");
        cJSON_AddStringToObject(help, "text", doc ? doc : ri->summary);
        cJSON_AddStringToObject(help, "markdown", doc ? doc : ri->summary);
        free(doc);
        char uri[256];
        snprintf(uri, sizeof uri, "%s#%s", LINT_URI, ri->code);
        cJSON_AddStringToObject(r, "helpUri", uri);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "defaultConfiguration"), "level",
                                ri->severity == LINT_ERROR     ? "error"
                                : ri->severity == LINT_WARNING ? "warning"
                                                               : "note");
        cJSON *props = cJSON_AddObjectToObject(r, "properties");
        cJSON *tags = cJSON_AddArrayToObject(props, "tags");
        cJSON_AddItemToArray(tags, cJSON_CreateString("prompt-caching"));
    }
    return rules;
}

static cJSON *sarif_result(const lint_finding *x) {
    cJSON *res = cJSON_CreateObject();
    if (!res) return NULL;
    cJSON_AddStringToObject(res, "ruleId", lint_rule_get(x->rule)->code);
    cJSON_AddNumberToObject(res, "ruleIndex", x->rule);
    cJSON_AddStringToObject(res, "level",
                            x->severity == LINT_ERROR     ? "error"
                            : x->severity == LINT_WARNING ? "warning"
                                                          : "note");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "message"), "text", x->message);
    cJSON *locs = cJSON_AddArrayToObject(res, "locations");
    cJSON *loc = cJSON_CreateObject();
    cJSON_AddItemToArray(locs, loc);
    cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
    cJSON *art = cJSON_AddObjectToObject(phys, "artifactLocation");
    const char *file = x->file;
    while (file[0] == '.' && file[1] == '/') file += 2;
    if (file[0] == '/') {
        char uri[8192];
        snprintf(uri, sizeof uri, "file://%s", file);
        cJSON_AddStringToObject(art, "uri", uri);
    } else {
        cJSON_AddStringToObject(art, "uri", file);
        cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
    }
    cJSON *reg = cJSON_AddObjectToObject(phys, "region");
    cJSON_AddNumberToObject(reg, "startLine", x->line);
    cJSON_AddNumberToObject(reg, "startColumn", x->column);
    cJSON_AddNumberToObject(reg, "endLine", x->end_line);
    cJSON_AddNumberToObject(
        reg, "endColumn", x->end_column > x->column || x->end_line > x->line ? x->end_column : x->column + 1);
    if (x->source) cJSON_AddStringToObject(cJSON_AddObjectToObject(reg, "snippet"), "text", x->source);
    /* stable across line moves: rule, file and the trimmed line text */
    const char *src = x->source ? x->source : "";
    while (*src == ' ' || *src == '\t') src++;
    uint64_t h = fnv1a(fnv1a(fnv1a(1469598103934665603ull, lint_rule_get(x->rule)->code), file), src);
    char fp[40];
    snprintf(fp, sizeof fp, "%016llx:1", (unsigned long long)h);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "partialFingerprints"), "primaryLocationLineHash",
                            fp);
    if (x->tokens_lost >= 0) {
        cJSON *p = cJSON_AddObjectToObject(res, "properties");
        cJSON_AddNumberToObject(p, "tokens_lost", (double)x->tokens_lost);
        cJSON_AddBoolToObject(p, "tokens_estimated", x->tokens_estimated);
    }
    return res;
}

static int out_sarif(FILE *f, const lint_report *r, const lint_output_opts *o) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return UTIL_ENOMEM;
    cJSON_AddStringToObject(root, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    cJSON_AddStringToObject(root, "version", "2.1.0");
    cJSON *runs = cJSON_AddArrayToObject(root, "runs");
    cJSON *run = cJSON_CreateObject();
    cJSON_AddItemToArray(runs, run);
    cJSON *driver = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
    cJSON_AddStringToObject(driver, "name", "promptlint");
    cJSON_AddStringToObject(driver, "version", UTIL_VERSION);
    cJSON_AddStringToObject(driver, "semanticVersion", UTIL_VERSION);
    cJSON_AddStringToObject(driver, "informationUri", LINT_URI);
    cJSON_AddItemToObject(driver, "rules", sarif_rules(o));
    cJSON_AddStringToObject(run, "columnKind", "unicodeCodePoints");
    cJSON *results = cJSON_AddArrayToObject(run, "results");
    for (size_t i = 0; i < r->n; i++) cJSON_AddItemToArray(results, sarif_result(&r->items[i]));
    return print_json(f, root);
}

int lint_output(FILE *f, const lint_report *r, const lint_output_opts *o, util_err *err) {
    int rc = o->format == LINT_FMT_JSON    ? out_json(f, r, o)
             : o->format == LINT_FMT_SARIF ? out_sarif(f, r, o)
                                           : out_text(f, r, o);
    if (rc == UTIL_ENOMEM) return util_err_set(err, rc, "out of memory");
    if (rc) return util_err_set(err, rc, "writing the report: output error");
    return UTIL_OK;
}
