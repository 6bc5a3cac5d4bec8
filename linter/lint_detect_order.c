/* linter/lint_detect_order.c: the order-unstable constructs (unsorted map
 * loops, glob includes, unsorted tool loops and tool lists) and the
 * suppression comments, found with lint_detect.c's patterns. Does not detect
 * volatile content (lint_detect.c) or decide what is reported (lint_rules.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/vec.h"
#include "lint_detect.h"
#include "lint_detect_impl.h"
#include "lint_registry.h"

/* --- order-unstable constructs -------------------------------------------------- */

typedef struct order_arg {
    lint_order_hit **v;
    size_t *n, cap;
    int why;
} order_arg;

static int push_order(order_arg *a, size_t s, size_t e, const char *detail, size_t dl) {
    if (util_grow(a->v, &a->cap, *a->n + 1, sizeof **a->v)) return UTIL_ENOMEM;
    lint_order_hit *h = &(*a->v)[(*a->n)++];
    h->start = s;
    h->end = e;
    h->why = a->why;
    snprintf(h->detail, sizeof h->detail, "%.*s", (int)(dl < 90 ? dl : 90), detail);
    return UTIL_OK;
}

static int on_order(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups, void *argp) {
    order_arg *a = argp;
    (void)d;
    if (lint_text_in_code(t, ov[0]) && !t->is_template) return UTIL_OK;
    if (a->why == LINT_ORDER_TOOLS_LOOP && ngroups > 1)
        return push_order(a, ov[0], ov[1], t->data + ov[2], ov[3] - ov[2]);
    return push_order(a, ov[0], ov[1], t->data + ov[0], ov[1] - ov[0]);
}

/* Bullet lists under a heading that names tools ("## Tools", "## Available
 * functions") must be sorted by name: a run of items, each a name followed by
 * ':', a dash or '(' (a tool list, not prose bullets), ended by prose. */
static int tool_lists(const lint_detect *d, const lint_text *t, order_arg *a) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(lint_detect_rx(d, RX_TOOL_ITEM), NULL);
    if (!md) return UTIL_ENOMEM;
    int in_tools = 0;
    char prev[64] = "";
    size_t indent = (size_t)-1, items = 0, bad_s = 0, bad_e = 0;
    int not_tools = 0;
    char det[96] = "";
    int rc = UTIL_OK;
    for (size_t i = 0; i <= t->n_lines && !rc; i++) {
        int end_run = i == t->n_lines;
        size_t s = 0, e = 0;
        if (!end_run) {
            s = t->line_start[i], e = lint_text_line_end(t, i);
            if (t->flags[i] & LINT_LF_FENCE) continue;
            if (s < e && t->data[s] == '#') end_run = 1;
        }
        int m = -1;
        PCRE2_SIZE *ov = NULL;
        if (!end_run && in_tools) {
            m = pcre2_match(lint_detect_rx(d, RX_TOOL_ITEM), (PCRE2_SPTR)(t->data + s), e - s, 0, 0, md,
                            lint_detect_mctx(d));
            ov = pcre2_get_ovector_pointer(md);
            int blank = 1;
            for (size_t k = s; k < e; k++)
                if (!isspace((unsigned char)t->data[k])) blank = 0;
            /* a line of prose (not an item, not a continuation) ends the list */
            if (m < 3 && !blank && !isspace((unsigned char)t->data[s])) end_run = 1;
        }
        if (end_run) {
            if (in_tools && items >= 2 && bad_e > bad_s && !not_tools) {
                a->why = LINT_ORDER_TOOL_LIST;
                rc = push_order(a, bad_s, bad_e, det, strlen(det));
            }
            in_tools = i < t->n_lines && s < e && t->data[s] == '#' &&
                       lint_detect_match_in(d, lint_detect_rx(d, RX_TOOL_HEADING), t->data, s, e);
            prev[0] = '\0';
            indent = (size_t)-1;
            items = bad_s = bad_e = 0;
            not_tools = 0;
            continue;
        }
        if (!in_tools || m < 3) continue;
        size_t ind = ov[3] - ov[2];
        if (indent == (size_t)-1) indent = ind;
        if (ind != indent) continue;
        items++;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(ov[5] - ov[4]), t->data + s + ov[4]);
        /* tool names are identifiers (read_file, Bash, web-search); a list of
         * products or topics ("Multi-cloud") is not a tool list */
        int upper = 0, hyphen = 0;
        for (const char *q = name; *q; q++) upper |= isupper((unsigned char)*q), hyphen |= *q == '-';
        if (upper && hyphen) not_tools = 1;
        if (prev[0] && strcasecmp(name, prev) < 0 && bad_e == bad_s) {
            snprintf(det, sizeof det, "'%s' comes after '%s'", name, prev);
            bad_s = s + ov[4], bad_e = s + ov[5];
        }
        snprintf(prev, sizeof prev, "%s", name);
    }
    pcre2_match_data_free(md);
    return rc;
}

int lint_detect_order(const lint_detect *d, const lint_text *t, lint_order_hit **out, size_t *n,
                      util_err *err) {
    *out = NULL;
    *n = 0;
    order_arg a = {out, n, 0, 0};
    static const int k_which[][2] = {{RX_ORDER_MAP, LINT_ORDER_MAP_LOOP},
                                     {RX_ORDER_GLOB, LINT_ORDER_GLOB},
                                     {RX_ORDER_TOOLS, LINT_ORDER_TOOLS_LOOP}};
    int rc = UTIL_OK;
    for (size_t i = 0; i < 3 && !rc; i++) {
        a.why = k_which[i][1];
        rc = lint_detect_scan(d, lint_detect_rx(d, k_which[i][0]), t, on_order, &a);
    }
    if (!rc) rc = tool_lists(d, t, &a);
    if (rc) return util_err_set(err, rc, "out of memory");
    return UTIL_OK;
}

/* --- suppression comments ---------------------------------------------------------- */

typedef struct dir_arg {
    lint_directive **v;
    size_t *n, cap;
} dir_arg;

static int on_directive(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups,
                        void *argp) {
    dir_arg *a = argp;
    (void)d;
    if (ngroups < 2 || (lint_text_in_code(t, ov[0]) && !t->is_template)) return UTIL_OK;
    if (util_grow(a->v, &a->cap, *a->n + 1, sizeof **a->v)) return UTIL_ENOMEM;
    lint_directive *dv = &(*a->v)[(*a->n)++];
    memset(dv, 0, sizeof *dv);
    dv->line = lint_text_line_of(t, ov[0]);
    const char *k = t->data + ov[2];
    size_t kl = ov[3] - ov[2];
    dv->kind = kl == 17   ? LINT_DIR_NEXT_LINE
               : kl == 12 ? (k[8] == 'f' ? LINT_DIR_FILE : LINT_DIR_LINE)
               : kl == 7  ? LINT_DIR_DISABLE
                          : LINT_DIR_ENABLE;
    dv->codes = 0;
    const char *c = ngroups > 2 && ov[4] != PCRE2_UNSET ? t->data + ov[4] : "";
    size_t cl = ngroups > 2 && ov[4] != PCRE2_UNSET ? ov[5] - ov[4] : 0;
    size_t i = 0;
    while (i < cl) {
        while (i < cl && (c[i] == ',' || c[i] == ' ' || c[i] == '\t' || c[i] == '=')) i++;
        size_t s = i;
        while (i < cl && c[i] != ',' && c[i] != ' ' && c[i] != '\t') i++;
        if (i == s) break;
        int id = lint_rule_find(c + s, i - s);
        if (id < 0) {
            if (!dv->bad[0]) snprintf(dv->bad, sizeof dv->bad, "%.*s", (int)(i - s), c + s);
        } else {
            dv->codes |= 1u << id;
        }
    }
    if (!dv->codes && !dv->bad[0]) dv->codes = ~0u;
    size_t ls = t->line_start[dv->line], le = lint_text_line_end(t, dv->line);
    const char *p = t->data + ls, *e = t->data + le;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    dv->alone = (size_t)(p - t->data) == ov[0] && (size_t)(e - t->data) == ov[1];
    return UTIL_OK;
}

int lint_detect_directives(const lint_detect *d, const lint_text *t, lint_directive **out, size_t *n,
                           util_err *err) {
    *out = NULL;
    *n = 0;
    dir_arg a = {out, n, 0};
    int rc = lint_detect_scan(d, lint_detect_rx(d, RX_DIR_HTML), t, on_directive, &a);
    if (!rc) rc = lint_detect_scan(d, lint_detect_rx(d, RX_DIR_JINJA), t, on_directive, &a);
    if (rc) return util_err_set(err, rc, "out of memory");
    /* both scans append in order; merge them by line */
    for (size_t i = 1; i < *n; i++) {
        lint_directive x = (*out)[i];
        size_t j = i;
        while (j > 0 && (*out)[j - 1].line > x.line) {
            (*out)[j] = (*out)[j - 1];
            j--;
        }
        (*out)[j] = x;
    }
    return UTIL_OK;
}
