/* linter/lint_detect_fixed.c: fields that are filled once, not per request,
 * told apart from the rest by their own text or the file's: a member of the
 * deployment's own object (site.url, organization.timezone), a member of the
 * agent's own account or definition (bot.user_id, agent.role), and the
 * upper-case fill-ins of a prompt its author completes by hand (STEP_1_GOAL).
 * Calls nothing in lint_detect.c (which calls it); does not read the words
 * around a field. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lint_detect_impl.h"
#include "lint_registry.h"

/* --- object.member ----------------------------------------------------------- */

/* Splits name as object.member, one dot, the member letters, digits and
 * underscores only; 0 when it is not of that shape. */
static int object_member(const char *name, size_t len, size_t *olen, const char **mem, size_t *mlen) {
    const char *dot = memchr(name, '.', len);
    if (!dot || dot == name || dot + 1 == name + len) return 0;
    for (const char *q = dot + 1; q < name + len; q++)
        if (!isalnum((unsigned char)*q) && *q != '_') return 0;
    *olen = (size_t)(dot - name);
    *mem = dot + 1;
    *mlen = (size_t)(name + len - *mem);
    return 1;
}

int lint_detect_deployment_member(const char *name, size_t len) {
    static const char *const k[] = {"site",    "app",          "application",  "config", "configuration",
                                    "company", "brand",        "blog",         "store",  "shop",
                                    "org",     "organization", "organisation", NULL};
    size_t ol, ml;
    const char *m;
    return object_member(name, len, &ol, &m, &ml) && lint_detect_word_in_ci(name, ol, k);
}

int lint_detect_self_member(const char *name, size_t len) {
    static const char *const k_obj[] = {"bot", "chatbot", "agent", "assistant", NULL};
    /* the account a chat platform returns for the bot (Slack's auth.test),
     * then what an agent is defined with (CrewAI's role, goal, backstory) */
    static const char *const k_id[] = {
        "id",          "userid",    "user",        "botid", "appid",       "team",      "teamid",
        "teamname",    "url",       "profileurl",  "name",  "displayname", "realname",  "username",
        "handle",      "mention",   "avatar",      "icon",  "email",       "role",      "persona",
        "personality", "backstory", "description", "bio",   "goal",        "goals",     "instructions",
        "purpose",     "title",     "tone",        "style", "expertise",   "specialty", "occupation",
        "profession",  NULL};
    size_t ol, ml, n = 0;
    const char *m;
    char low[24];
    if (!object_member(name, len, &ol, &m, &ml) || !lint_detect_word_in_ci(name, ol, k_obj)) return 0;
    for (size_t i = 0; i < ml; i++) {
        if (m[i] == '_') continue;
        if (n + 1 >= sizeof low) return 0;
        low[n++] = m[i];
    }
    return n && lint_detect_word_in_ci(low, n, k_id);
}

/* --- a template's own text ---------------------------------------------------- */

/* The name of the field {{ name }} (letters, digits, '_' and '.', not
 * starting with a digit) at d[i, len), in [*a, *b); 0 when the text there is
 * not of that shape. */
static int curly_field(const char *d, size_t i, size_t len, size_t *a, size_t *b) {
    if (len - i < 5 || d[i] != '{' || d[i + 1] != '{') return 0;
    size_t k = i + 2;
    while (k < len && d[k] == ' ') k++;
    *a = k;
    if (k >= len || !(isalpha((unsigned char)d[k]) || d[k] == '_')) return 0;
    while (k < len && (isalnum((unsigned char)d[k]) || d[k] == '_' || d[k] == '.')) k++;
    *b = k;
    while (k < len && d[k] == ' ') k++;
    return len - k >= 2 && d[k] == '}' && d[k + 1] == '}';
}

int lint_detect_template_text(const lint_text *t) {
    if (t->is_template) return 1;
    if (t->verbatim || t->memory_file) return 0;
    const char *d = t->data;
    for (const char *p = memchr(d, '{', t->len); p; p = memchr(p + 1, '{', (size_t)(d + t->len - p - 1))) {
        size_t a, b, i = (size_t)(p - d);
        if (curly_field(d, i, t->len, &a, &b) && !lint_text_in_code(t, i)) return 1;
    }
    return 0;
}

/* --- an author's fill-ins ---------------------------------------------------- */

/* Whether the upper-case name s[0, n) numbers a part of the prompt itself:
 * a word for a step, rule or goal next to a number (STEP_1_GOAL,
 * SPECIAL_TOPIC_RULE_2, GUIDELINE3). A program's per-request slot is named for
 * what it holds (DOCUMENT_1, SEARCH_RESULT_2), a few-shot slot for its
 * example (EXAMPLE_1): neither is here. */
static int numbered_part(const char *s, size_t n) {
    static const char *const k_part[] = {
        "step",     "rule",       "goal",      "hint",  "tip",   "guideline",   "principle",   "criterion",
        "criteria", "constraint", "objective", "stage", "phase", "instruction", "requirement", NULL};
    int prev_digits = 0, prev_part = 0; /* what the segment before was */
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && s[b] != '_') b++;
        size_t l = a, e;
        while (l < b && isalpha((unsigned char)s[l])) l++;
        for (e = l; e < b && isdigit((unsigned char)s[e]);) e++;
        int digits = l == a && e == b && b > a; /* a segment of digits: _1_ */
        int part = l > a && lint_detect_word_in_ci(s + a, l - a, k_part) && e == b;
        if (part && l < b) return 1; /* STEP1 */
        part = part && l == b;
        if ((digits && prev_part) || (part && prev_digits)) return 1;
        prev_digits = digits, prev_part = part;
        a = b + 1;
    }
    return 0;
}

/* The upper-case name of the field {{ NAME }} at d[i, len), in [*a, *b);
 * 0 when the text there is not of that shape. */
static int upper_field(const char *d, size_t i, size_t len, size_t *a, size_t *b) {
    if (!curly_field(d, i, len, a, b) || !isupper((unsigned char)d[*a])) return 0;
    for (size_t k = *a; k < *b; k++)
        if (!isupper((unsigned char)d[k]) && !isdigit((unsigned char)d[k]) && d[k] != '_') return 0;
    return 1;
}

int lint_detect_author_fill_ins(const lint_text *t) {
    const char *d = t->data;
    size_t seen[3][2], n_seen = 0;
    for (const char *p = memchr(d, '{', t->len); p; p = memchr(p + 1, '{', (size_t)(d + t->len - p - 1))) {
        size_t a, b, i = (size_t)(p - d);
        if (!upper_field(d, i, t->len, &a, &b) || !numbered_part(d + a, b - a)) continue;
        int dup = 0;
        for (size_t k = 0; k < n_seen; k++)
            dup |= seen[k][1] - seen[k][0] == b - a && !memcmp(d + seen[k][0], d + a, b - a);
        if (dup) continue;
        seen[n_seen][0] = a, seen[n_seen][1] = b;
        if (++n_seen == 3) return 1;
    }
    return 0;
}

void lint_detect_drop_fill_ins(const lint_text *t, lint_spanv *sv) {
    size_t w = 0;
    for (size_t r = 0; r < sv->n; r++) {
        const lint_span *s = &sv->v[r];
        size_t a, b;
        int fill_in = s->kind == LINT_K_PLACEHOLDER &&
                      (s->vclass == LINT_VC_TURN || s->vclass == LINT_VC_NONE) &&
                      upper_field(t->data, s->start, s->end, &a, &b);
        if (!fill_in) sv->v[w++] = sv->v[r];
    }
    sv->n = w;
}
