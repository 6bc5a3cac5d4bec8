/* tests/test_lint_real.c: promptlint scored on prompts nobody here wrote
 * (tests/realprompts, labelled by hand before any run) and on the fixture
 * corpus (tests/lint), with one per-file definition for all three sets.
 * Checks precision and recall >= 0.95 on the fixtures. The held-out part is
 * printed whole, per batch (v1: the first 214 files; v2 to v56: files added
 * later, LABELS.tsv column 7) and per kind (column 5) but not yet checked:
 * promptlint does not reach 0.95 on it yet, and the check
 * (LINT_REAL_HELD_GATE below) is turned on once it does. The development
 * part is printed so the gap is visible. Does not check exact findings
 * (test_lint.c does that for the fixtures).
 *
 * Scoring, per file, error-level findings only, estimated token counts (no
 * model), no config (the defaults), each file linted under its path in its
 * own repository (SOURCES.tsv), so its name, extension and folder decide its
 * role and template semantics as directory mode would see them there (the
 * corpus renames files and their folders, e.g. skill-md/SOURCE-NAME/):
 *   - positive file (labelled line L): TP when an error lies on L-1..L+1, else
 *     FN; and an FP too when an error lies on a line before L-1;
 *   - negative file: FP when it has any error.
 *   Errors after L+1 in a positive file are not judged: the label gives only
 *   the first volatile-before-stable line, and later volatile fields are often
 *   real findings too (the fixtures expect them, e.g. realistic/support).
 *   precision = TP / (TP + FP), recall = TP / (TP + FN), counted in files.
 * For the fixtures, a file is positive when it expects an error-level finding
 * (L = the first such line) and negative otherwise.
 * CACHET_LINT_REAL_DETAILS=1 prints each dev and fixture miss; held files are
 * only ever counted, never printed. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../linter/lint.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"

/* 1 once promptlint reaches 0.95 on the held-out part: from then on a drop
 * below it fails the suite. Never tuned on: held files are only counted. */
#define LINT_REAL_HELD_GATE 0

typedef struct score {
    int files, tp, fp, fn;
} score;

static void score_add(score *to, const score *s) {
    to->files += s->files;
    to->tp += s->tp;
    to->fp += s->fp;
    to->fn += s->fn;
}

static double prec(const score *s) { return s->tp + s->fp ? (double)s->tp / (s->tp + s->fp) : 1.0; }
static double rec(const score *s) { return s->tp + s->fn ? (double)s->tp / (s->tp + s->fn) : 1.0; }

static int details(void) {
    const char *v = getenv("CACHET_LINT_REAL_DETAILS");
    return v && *v && strcmp(v, "0") != 0;
}

/* Lints one file and scores it against label line (0: negative). show: print
 * what went wrong (never for held files). */
static void score_file(lint_ctx *c, const char *path, const char *as, int label, int show, score *s) {
    char *data;
    size_t len;
    util_err err = {0};
    if (util_read_file(&data, &len, path, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    lint_report rep;
    lint_report_init(&rep);
    int rc = lint_check_buffer(c, &rep, path, as ? as : path, data, len, &err);
    CHECK_MSG(rc == 0, "lint '%s': %s", path, err.msg);
    int hit = 0, early = 0, first_err = 0;
    for (size_t i = 0; i < rep.n; i++) {
        const lint_finding *f = &rep.items[i];
        if (f->severity != LINT_ERROR) continue;
        if (!first_err) first_err = f->line;
        if (label && f->line >= label - 1 && f->line <= label + 1)
            hit = 1;
        else if (!label || f->line < label - 1)
            early = 1;
    }
    s->files++;
    if (label) hit ? s->tp++ : s->fn++;
    if (early) s->fp++;
    if (show && (early || (label && !hit))) {
        fprintf(stderr, "  %s %s (label %d)\n", early ? "FP" : "FN", path, label);
        for (size_t i = 0; i < rep.n; i++)
            if (rep.items[i].severity == LINT_ERROR)
                fprintf(stderr, "     %d: %s %s\n", rep.items[i].line, lint_rule_get(rep.items[i].rule)->code,
                        rep.items[i].message);
    }
    lint_report_release(&rep);
    free(data);
}

/* --- the real-world corpus --------------------------------------------------- */

/* Splits a TSV line in place into up to n fields; returns how many. */
static int tsv_fields(char *line, char **f, int n) {
    int k = 0;
    f[k++] = line;
    while (k < n) {
        char *tab = strchr(f[k - 1], '\t');
        if (!tab) break;
        *tab = '\0';
        f[k++] = tab + 1;
    }
    return k;
}

/* The path of file in its own repository (SOURCES.tsv column 3) into out, or
 * NULL when SOURCES.tsv has no line for it. */
static const char *upstream_path(char *out, size_t cap, const char *sources, size_t len, const char *file) {
    size_t fl = strlen(file);
    for (const char *p = sources; p < sources + len;) {
        const char *nl = memchr(p, '\n', (size_t)(sources + len - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(sources + len - p);
        if (ll > fl && strncmp(p, file, fl) == 0 && p[fl] == '\t') {
            const char *a = p + fl + 1, *e = p + ll;
            const char *t1 = memchr(a, '\t', (size_t)(e - a));
            const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(e - t1 - 1)) : NULL;
            if (!t1 || !t2) return NULL;
            snprintf(out, cap, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
            return out;
        }
        p = nl ? nl + 1 : sources + len;
    }
    return NULL;
}

#define N_BATCHES 56

/* Scores the real corpus: dev, held, and each per batch (index 0: the
 * first batch, v1, no batch column; index k: batch v(k+1)). */
static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The corpus folders (LABELS.tsv column 5), scored apart as well. */
static const char *const k_kinds[] = {"chat-template", "rendered-system", "framework-template",
                                      "agents-md",     "skill-md",        "other"};
#define N_KINDS (sizeof k_kinds / sizeof k_kinds[0])

static size_t kind_of(const char *k) {
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(k, k_kinds[i]) == 0) return i;
    return N_KINDS;
}

static void score_real(score *dev, score *held, score dev_b[N_BATCHES], score held_b[N_BATCHES],
                       score dev_k[N_KINDS], score held_k[N_KINDS]) {
    lint_options o = {0};
    o.no_model = 1;
    o.no_config = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    if (lint_ctx_new(&c, &o, &err)) {
        CHECK_MSG(0, "lint_ctx_new: %s", err.msg);
        return;
    }
    char dir[4096], labels[4200], sources[4200];
    snprintf(dir, sizeof dir, "%s/tests/realprompts", check_root());
    snprintf(labels, sizeof labels, "%s/LABELS.tsv", dir);
    snprintf(sources, sizeof sources, "%s/SOURCES.tsv", dir);
    char *tsv, *src;
    size_t len, slen;
    if (util_read_file(&tsv, &len, labels, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        lint_ctx_free(c);
        return;
    }
    if (util_read_file(&src, &slen, sources, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        free(tsv);
        lint_ctx_free(c);
        return;
    }
    int show = details();
    const char **names = calloc(len / 8 + 1, sizeof *names); /* a line is longer than 8 bytes */
    size_t n_names = 0;
    for (char *line = tsv, *next; line < tsv + len; line = next) {
        char *nl = memchr(line, '\n', (size_t)(tsv + len - line));
        next = nl ? nl + 1 : tsv + len;
        if (nl) *nl = '\0';
        /* file, split, label, line, kind, why[, batch] */
        char *f[7];
        int nf = tsv_fields(line, f, 7);
        if (nf < 5) continue;
        if (names) names[n_names++] = f[0];
        int is_held = strcmp(f[1], "held") == 0;
        int batch = nf >= 7 && f[6][0] == 'v' ? (int)strtol(f[6] + 1, NULL, 10) - 1 : 0;
        CHECK_MSG(batch >= 0 && batch < N_BATCHES, "LABELS.tsv: '%s' has an unknown batch", f[0]);
        if (batch < 0 || batch >= N_BATCHES) batch = 0;
        int positive = strcmp(f[2], "positive") == 0;
        int at = positive ? (int)strtol(f[3], NULL, 10) : 0;
        CHECK_MSG(!positive || at > 0, "LABELS.tsv: '%s' is positive without a line", f[0]);
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, f[0]);
        char up[1024];
        const char *as = upstream_path(up, sizeof up, src, slen, f[0]);
        CHECK_MSG(as != NULL, "SOURCES.tsv has no line for '%s'", f[0]);
        score one = {0};
        score_file(c, path, as, at, show && !is_held, &one);
        score_add(is_held ? held : dev, &one);
        score_add(is_held ? &held_b[batch] : &dev_b[batch], &one);
        size_t kind = kind_of(f[4]);
        CHECK_MSG(kind < N_KINDS, "LABELS.tsv: '%s' has an unknown kind '%s'", f[0], f[4]);
        if (kind < N_KINDS) score_add(is_held ? &held_k[kind] : &dev_k[kind], &one);
    }
    /* one line per file: a name used twice would score one file under two labels */
    CHECK(names != NULL);
    if (names && n_names > 1) qsort(names, n_names, sizeof *names, cmp_name);
    for (size_t i = 1; names && i < n_names; i++)
        CHECK_MSG(strcmp(names[i - 1], names[i]) != 0, "LABELS.tsv lists '%s' twice", names[i]);
    free(names);
    free(src);
    free(tsv);
    lint_ctx_free(c);
}

/* --- the fixture corpus ------------------------------------------------------ */

/* First line expecting an error-level finding ("expect: CODE" on the line,
 * "expect@N: CODE" for line N), or 0. */
static int first_expected_error(const char *data, size_t len) {
    int best = 0, line = 1;
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            line++;
            continue;
        }
        if (len - i < 7 || strncmp(data + i, "expect", 6) != 0) continue;
        size_t k = i + 6;
        int at = line;
        if (data[k] == '@') {
            at = (int)strtol(data + k + 1, NULL, 10);
            while (k < len && data[k] != ':' && data[k] != '\n') k++;
        }
        if (k >= len || data[k] != ':') continue;
        for (k++;;) {
            while (k < len && (data[k] == ' ' || data[k] == ',')) k++;
            size_t s = k;
            while (k < len && data[k] != ' ' && data[k] != ',' && data[k] != '\n') k++;
            int id = lint_rule_find(data + s, k - s);
            if (id < 0) break;
            if (lint_rule_get(id)->severity == LINT_ERROR && (!best || at < best)) best = at;
        }
        i = k - 1;
    }
    return best;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void score_fixture_dir(lint_ctx *c, const char *dir, score *s) {
    DIR *d = opendir(dir);
    if (!d) return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".promptlint.json") ||
            !strcmp(e->d_name, "README.md"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) break;
            names = p;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            score_fixture_dir(c, p, s);
        } else {
            char *data;
            size_t len;
            util_err err = {0};
            if (util_read_file(&data, &len, p, &err) == 0) {
                int at = first_expected_error(data, len);
                free(data);
                score_file(c, p, NULL, at, details(), s);
            }
        }
        free(names[i]);
    }
    free(names);
}

static void score_fixtures(score *s) {
    lint_options o = {0};
    o.no_model = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    if (lint_ctx_new(&c, &o, &err)) {
        CHECK_MSG(0, "lint_ctx_new: %s", err.msg);
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/lint", check_root());
    score_fixture_dir(c, dir, s);
    lint_ctx_free(c);
}

static void print_score(const char *name, const score *s) {
    fprintf(stderr, "lint real %-23s %3d files: tp %3d fp %3d fn %3d  precision %.3f recall %.3f\n", name,
            s->files, s->tp, s->fp, s->fn, prec(s), rec(s));
}

void test_lint_real(void) {
    score dev = {0}, held = {0}, fix = {0}, dev_b[N_BATCHES] = {{0}}, held_b[N_BATCHES] = {{0}};
    score dev_k[N_KINDS] = {{0}}, held_k[N_KINDS] = {{0}};
    score_real(&dev, &held, dev_b, held_b, dev_k, held_k);
    score_fixtures(&fix);
    print_score("dev", &dev);
    for (int b = 0; b < N_BATCHES; b++) {
        char name[16];
        snprintf(name, sizeof name, "dev v%d", b + 1);
        print_score(name, &dev_b[b]);
    }
    for (size_t k = 0; k < N_KINDS; k++) {
        char name[32];
        snprintf(name, sizeof name, "dev %s", k_kinds[k]);
        print_score(name, &dev_k[k]);
    }
    print_score("held", &held);
    for (int b = 0; b < N_BATCHES; b++) {
        char name[16];
        snprintf(name, sizeof name, "held v%d", b + 1);
        print_score(name, &held_b[b]);
    }
    for (size_t k = 0; k < N_KINDS; k++) {
        char name[32];
        snprintf(name, sizeof name, "held %s", k_kinds[k]);
        print_score(name, &held_k[k]);
    }
    print_score("fixtures", &fix);
    CHECK_MSG(dev.files + held.files >= 150, "real corpus has %d files, want >= 150", dev.files + held.files);
    CHECK_MSG(held.files * 4 >= dev.files, "held part too small (%d vs %d dev)", held.files, dev.files);
    if (LINT_REAL_HELD_GATE) {
        CHECK_MSG(prec(&held) >= 0.95, "held precision %.3f < 0.95", prec(&held));
        CHECK_MSG(rec(&held) >= 0.95, "held recall %.3f < 0.95", rec(&held));
    } else {
        fprintf(stderr, "lint real: held printed only, not checked yet (LINT_REAL_HELD_GATE)\n");
    }
    CHECK_MSG(prec(&fix) >= 0.95, "fixture precision %.3f < 0.95", prec(&fix));
    CHECK_MSG(rec(&fix) >= 0.95, "fixture recall %.3f < 0.95", rec(&fix));
}
