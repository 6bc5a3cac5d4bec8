/* linter/lint_diff.c: `promptlint diff A B`: the first divergent byte and
 * token of two rendered prompts, the volatile field that most likely caused
 * it, and how many tokens of B cannot come from A's cache. JSON chat request
 * bodies are rendered ChatML-style first. Does not diff beyond the first
 * divergence (the cache cannot use anything after it). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "lint_ctx.h"
#include "lint_tmpl.h"
#include "lint_registry.h"

/* --- rendering JSON request bodies ------------------------------------------------ */

typedef struct rendered {
    util_buf text;
    size_t seg_start[256];
    char seg_name[256][64];
    size_t nseg;
} rendered;

static void seg(rendered *r, int i, const char *role) {
    if (r->nseg >= 256) return;
    r->seg_start[r->nseg] = r->text.len;
    if (i < 0)
        snprintf(r->seg_name[r->nseg], sizeof r->seg_name[0], "tools");
    else
        snprintf(r->seg_name[r->nseg], sizeof r->seg_name[0], "messages[%d].content (%.24s)", i, role);
    r->nseg++;
}

static int put_content(util_buf *b, const cJSON *c) {
    if (cJSON_IsString(c)) return util_buf_puts(b, c->valuestring);
    if (!cJSON_IsArray(c)) return UTIL_OK;
    const cJSON *part;
    int rc = UTIL_OK;
    cJSON_ArrayForEach(part, c) {
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(tx))
            rc = util_buf_puts(b, tx->valuestring);
        else if (cJSON_IsString(ty))
            rc = util_buf_printf(b, "[%s]", ty->valuestring);
        if (rc) return rc;
    }
    return rc;
}

static int put_json(util_buf *b, const cJSON *v) {
    char *s = cJSON_PrintUnformatted(v);
    if (!s) return UTIL_ENOMEM;
    int rc = util_buf_puts(b, s);
    free(s);
    return rc;
}

/* Returns 1 when s is a chat request body and was rendered into r. */
static int render_chat(rendered *r, const char *s, size_t n) {
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) i++;
    if (i >= n || s[i] != '{') return 0;
    cJSON *root = cJSON_ParseWithLength(s, n);
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!cJSON_IsArray(msgs)) {
        cJSON_Delete(root);
        return 0;
    }
    int rc = UTIL_OK;
    const cJSON *tools = cJSON_GetObjectItemCaseSensitive(root, "tools");
    if (cJSON_IsArray(tools)) {
        seg(r, -1, "");
        rc = util_buf_puts(&r->text, "<|im_start|>tools\n");
        if (!rc) rc = put_json(&r->text, tools);
        if (!rc) rc = util_buf_puts(&r->text, "<|im_end|>\n");
    }
    int k = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        if (rc) break;
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const char *rs = cJSON_IsString(role) ? role->valuestring : "?";
        seg(r, k++, rs);
        rc = util_buf_printf(&r->text, "<|im_start|>%s\n", rs);
        if (!rc) rc = put_content(&r->text, cJSON_GetObjectItemCaseSensitive(m, "content"));
        const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
        if (!rc && tc) rc = put_json(&r->text, tc);
        if (!rc) rc = util_buf_puts(&r->text, "<|im_end|>\n");
    }
    cJSON_Delete(root);
    if (!rc && r->text.len == 0) rc = util_buf_puts(&r->text, ""); /* keep data non-NULL */
    return rc ? -1 : 1;
}

/* --- locating and explaining the divergence ----------------------------------------- */

static void escape_ctx(char *out, size_t cap, const char *s, size_t a, size_t p, size_t b) {
    size_t n = 0;
    for (size_t i = a; i < b && n + 8 < cap; i++) {
        if (i == p) n += (size_t)snprintf(out + n, cap - n, "\xC2\xBB"); /* » */
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            n += (size_t)snprintf(out + n, cap - n, "\\n");
        else if (c == '\t')
            n += (size_t)snprintf(out + n, cap - n, "\\t");
        else if (c < 0x20)
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    if (p >= b && n + 3 < cap) n += (size_t)snprintf(out + n, cap - n, "\xC2\xBB");
    out[n < cap ? n : cap - 1] = '\0';
}

static void context_of(char *out, size_t cap, const char *s, size_t len, size_t p) {
    size_t a = p > 40 ? p - 40 : 0, b = p + 40 < len ? p + 40 : len;
    /* stay on the divergent line, and start on a UTF-8 boundary */
    for (size_t i = p; i > a; i--)
        if (s[i - 1] == '\n') {
            a = i;
            break;
        }
    for (size_t i = p; i < b; i++)
        if (s[i] == '\n') {
            b = i;
            break;
        }
    while (a < p && ((unsigned char)s[a] & 0xC0) == 0x80) a++;
    while (b < len && b > p && ((unsigned char)s[b] & 0xC0) == 0x80) b--;
    escape_ctx(out, cap, s, a, p, b);
}

static void line_col(const char *s, size_t p, int *line, int *col) {
    int l = 1, c = 1;
    for (size_t i = 0; i < p; i++) {
        if (s[i] == '\n')
            l++, c = 1;
        else if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    }
    *line = l;
    *col = c;
}

/* The volatile span of t that covers p (or starts just after it on its line). */
static const lint_span *span_at(lint_ctx *ctx, lint_spanv *sv, lint_text *t, const char *s, size_t len,
                                size_t p) {
    if (lint_text_init(t, s, len, NULL, 0, 0)) return NULL;
    util_err e = {0};
    lint_spanv unk = {0};
    int rc = lint_tmpl_scan(ctx->det, ctx->defaults, t, "rendered.txt", sv, &unk, &e);
    if (!rc) rc = lint_detect_spans(ctx->det, ctx->defaults, t, sv, &unk, &e);
    lint_spanv_release(&unk);
    if (rc) return NULL;
    for (size_t i = 0; i < sv->n; i++)
        if (sv->v[i].start <= p && p < sv->v[i].end) return &sv->v[i];
    for (size_t i = 0; i < sv->n; i++)
        if (sv->v[i].start <= p && p == sv->v[i].end) return &sv->v[i];
    return NULL;
}

static void explain(lint_ctx *ctx, lint_diff *d, const char *a, size_t al, const char *b, size_t bl) {
    lint_text ta, tb;
    lint_spanv sa = {0}, sb = {0};
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    const lint_span *x = span_at(ctx, &sb, &tb, b, bl, d->byte);
    const lint_span *y = span_at(ctx, &sa, &ta, a, al, d->byte);
    const lint_span *use = x ? x : y;
    if (use) {
        const char *src = x ? b : a;
        size_t n = use->end - use->start;
        if (n > 60) n = 60;
        int k = snprintf(d->cause, sizeof d->cause, "%s '%.*s' (%s)", lint_kind_name(use->kind), (int)n,
                         src + use->start, lint_vclass_name(use->vclass));
        if (x && y && k > 0 && (size_t)k < sizeof d->cause) {
            size_t m = y->end - y->start;
            snprintf(d->cause + k, sizeof d->cause - (size_t)k, "; A had '%.*s'", (int)(m > 60 ? 60 : m),
                     a + y->start);
        }
    }
    lint_spanv_release(&sa);
    lint_spanv_release(&sb);
    lint_text_release(&ta);
    lint_text_release(&tb);
}

/* Token position of the divergence: exact with a model, else estimated from
 * the text up to the last space before it. */
static void tokens(lint_ctx *ctx, lint_diff *d, const char *a, size_t al, const char *b, size_t bl) {
    int32_t *ia = NULL, *ib = NULL;
    size_t na = 0, nb = 0;
    if (lint_tok_ids(ctx->tok, a, al, &ia, &na) == UTIL_OK &&
        lint_tok_ids(ctx->tok, b, bl, &ib, &nb) == UTIL_OK) {
        size_t k = 0;
        while (k < na && k < nb && ia[k] == ib[k]) k++;
        d->token = (long)k;
        d->tokens_a = (long)na;
        d->tokens_b = (long)nb;
        d->tokens_uncached = (long)(nb - k);
        d->tokens_estimated = 0;
    } else {
        size_t q = d->byte;
        while (q > 0 && b[q - 1] != ' ' && b[q - 1] != '\n') q--;
        d->token = lint_tok_estimate(b, q);
        d->tokens_a = lint_tok_estimate(a, al);
        d->tokens_b = lint_tok_estimate(b, bl);
        d->tokens_uncached = d->identical ? 0 : d->tokens_b - d->token;
        d->tokens_estimated = 1;
    }
    free(ia);
    free(ib);
}

int lint_diff_texts(lint_ctx *ctx, lint_diff *d, const char *a, size_t al, const char *b, size_t bl,
                    util_err *err) {
    memset(d, 0, sizeof *d);
    rendered *ra = calloc(1, sizeof *ra), *rb = calloc(1, sizeof *rb);
    if (!ra || !rb) {
        free(ra);
        free(rb);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    util_buf_init(&ra->text);
    util_buf_init(&rb->text);
    int ja = render_chat(ra, a, al), jb = render_chat(rb, b, bl);
    int rc = UTIL_OK;
    if (ja < 0 || jb < 0) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
    if (!rc && ja == 1 && jb == 1) {
        d->rendered_json = 1;
        a = ra->text.data ? ra->text.data : "";
        al = ra->text.len;
        b = rb->text.data ? rb->text.data : "";
        bl = rb->text.len;
    }
    if (!rc) {
        size_t p = 0, m = al < bl ? al : bl;
        while (p < m && a[p] == b[p]) p++;
        /* report the divergence at the start of the differing character */
        while (p > 0 && ((unsigned char)b[p < bl ? p : bl - 1] & 0xC0) == 0x80 && p < bl) p--;
        d->byte = p;
        d->identical = al == bl && p == al;
        d->extends = !d->identical && p == al;
        line_col(a, p, &d->line_a, &d->col_a);
        line_col(b, p, &d->line_b, &d->col_b);
        context_of(d->context_a, sizeof d->context_a, a, al, p);
        context_of(d->context_b, sizeof d->context_b, b, bl, p);
        if (d->rendered_json)
            for (size_t i = 0; i < rb->nseg; i++)
                if (rb->seg_start[i] <= p) snprintf(d->where, sizeof d->where, "%s", rb->seg_name[i]);
        if (!d->identical && !d->extends) explain(ctx, d, a, al, b, bl);
        tokens(ctx, d, a, al, b, bl);
    }
    util_buf_release(&ra->text);
    util_buf_release(&rb->text);
    free(ra);
    free(rb);
    return rc;
}

int lint_diff_print(FILE *f, const lint_diff *d, const char *na, const char *nb, int json, util_err *err) {
    if (json) {
        cJSON *o = cJSON_CreateObject();
        if (!o) return util_err_set(err, UTIL_ENOMEM, "out of memory");
        cJSON_AddBoolToObject(o, "identical", d->identical);
        cJSON_AddBoolToObject(o, "extends", d->extends);
        cJSON_AddNumberToObject(o, "byte", (double)d->byte);
        cJSON_AddNumberToObject(o, "token", (double)d->token);
        cJSON_AddNumberToObject(o, "tokens_uncached", (double)d->tokens_uncached);
        cJSON_AddBoolToObject(o, "tokens_estimated", d->tokens_estimated);
        cJSON_AddBoolToObject(o, "rendered_json", d->rendered_json);
        if (d->where[0]) cJSON_AddStringToObject(o, "where", d->where);
        if (d->cause[0])
            cJSON_AddStringToObject(o, "cause", d->cause);
        else
            cJSON_AddNullToObject(o, "cause");
        const char *names[2] = {na, nb};
        const int lines[2] = {d->line_a, d->line_b}, cols[2] = {d->col_a, d->col_b};
        const long toks[2] = {d->tokens_a, d->tokens_b};
        const char *ctxs[2] = {d->context_a, d->context_b};
        for (int i = 0; i < 2; i++) {
            cJSON *s = cJSON_AddObjectToObject(o, i ? "b" : "a");
            cJSON_AddStringToObject(s, "file", names[i]);
            cJSON_AddNumberToObject(s, "line", lines[i]);
            cJSON_AddNumberToObject(s, "column", cols[i]);
            cJSON_AddNumberToObject(s, "tokens", (double)toks[i]);
            cJSON_AddStringToObject(s, "context", ctxs[i]);
        }
        char *s = cJSON_Print(o);
        cJSON_Delete(o);
        if (!s) return util_err_set(err, UTIL_ENOMEM, "out of memory");
        fprintf(f, "%s\n", s);
        free(s);
        return UTIL_OK;
    }
    const char *est = d->tokens_estimated ? "~" : "";
    if (d->identical) {
        fprintf(f, "identical: %s%ld tokens, all reusable from the cache\n", est, d->tokens_b);
        return UTIL_OK;
    }
    if (d->extends) {
        fprintf(f, "'%s' extends '%s': all %s%ld tokens of A are reusable; %s%ld new tokens\n", nb, na, est,
                d->tokens_a, est, d->tokens_uncached);
        return UTIL_OK;
    }
    fprintf(f, "prompts diverge at byte %zu (line %d, column %d)%s%s\n", d->byte, d->line_b, d->col_b,
            d->where[0] ? " in " : "", d->where);
    fprintf(f, "  A %s:%d:%d: %s\n", na, d->line_a, d->col_a, d->context_a);
    fprintf(f, "  B %s:%d:%d: %s\n", nb, d->line_b, d->col_b, d->context_b);
    fprintf(f, "  first divergent token: #%s%ld (A has %s%ld tokens, B has %s%ld)\n", est, d->token, est,
            d->tokens_a, est, d->tokens_b);
    fprintf(f, "  likely cause: %s\n",
            d->cause[0] ? d->cause : "no volatile pattern at the divergence (plain edit)");
    fprintf(f, "  %s%ld tokens of B cannot be served from A's cache%s\n", est, d->tokens_uncached,
            d->tokens_estimated ? " (estimated: no model)" : "");
    return ferror(f) ? util_err_set(err, UTIL_EIO, "writing the diff: output error") : UTIL_OK;
}
