/* linter/lint_detect_values.c: the filters lint_detect.c applies to a
 * literal its patterns found, each on the text alone: whether it has a digit
 * or a hex letter, is a fixed IP, follows a version word, is a section
 * number, is a placeholder word, stands in a URL, quotes or a string
 * literal, is a word that is not a name, is a commit hash cited as history
 * (the words of its clause); where a sentence ends; and how a date-like
 * value is classed. Runs no pattern and calls nothing back in lint_detect.c. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lint_detect_impl.h"
#include "lint_registry.h"

int lint_detect_has_digit(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isdigit((unsigned char)s[i])) return 1;
    return 0;
}

int lint_detect_has_hex_letter(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strchr("abcdefABCDEF", s[i])) return 1;
    return 0;
}

int lint_detect_word_in(const char *w, size_t n, const char *const *list) {
    for (; *list; list++)
        if (strlen(*list) == n && strncmp(*list, w, n) == 0) return 1;
    return 0;
}

int lint_detect_word_in_ci(const char *w, size_t n, const char *const *list) {
    for (; *list; list++)
        if (strlen(*list) == n && strncasecmp(*list, w, n) == 0) return 1;
    return 0;
}

static const char *const k_not_names[] = {
    "World",     "There",     "All",   "Everyone", "Everybody", "User",   "Users",  "Customer", "Assistant",
    "Friend",    "Friends",   "Team",  "Folks",    "Human",     "Sir",    "Madam",  "You",      "Me",
    "The",       "A",         "An",    "Please",   "Thanks",    "Thank",  "What",   "How",      "Why",
    "When",      "Where",     "Who",   "Which",    "Can",       "Could",  "Would",  "Should",   "Is",
    "Are",       "Do",        "Does",  "Did",      "Tell",      "Give",   "Write",  "Help",     "Hello",
    "Hi",        "Hey",       "My",    "Your",     "This",      "That",   "It",     "I",        "Explain",
    "Summarize", "Translate", "List",  "Show",     "Find",      "Make",   "Create", "Yes",      "No",
    "Ok",        "Okay",      "None",  "Unknown",  "Anonymous", "Guest",  "Admin",  "Name",     "Example",
    "Again",     "Back",      "Agent", "Bot",      "Model",     "Claude", "Name",   "Today",    "Morning",
    "Afternoon", "Evening",   "Good",  "Welcome",  NULL};

/* IPs that are the same everywhere: loopback, unspecified, broadcast, docs. */
int lint_detect_fixed_ip(const char *s, size_t n) {
    static const char *const k_fixed[] = {
        "127.",    "0.0.0.0", "255.",    "192.0.2.", "198.51.100.", "203.0.113.", "169.254.169.254",
        "1.1.1.1", "8.8.8.8", "8.8.4.4", NULL};
    if (memchr(s, ':', n)) return 0;
    for (const char *const *p = k_fixed; *p; p++)
        if (n >= strlen(*p) && strncmp(s, *p, strlen(*p)) == 0) return 1;
    return 0;
}

int lint_detect_version_before(const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    if (off > ls && (t->data[off - 1] == 'v' || t->data[off - 1] == 'V')) return 1;
    size_t a = off - ls > 12 ? off - 12 : ls;
    for (size_t i = a; i + 7 <= off; i++)
        if (strncasecmp(t->data + i, "version", 7) == 0) return 1;
    return 0;
}

/* --- sentences ------------------------------------------------------------------ */

/* Whether a sentence ends at the punctuation at i ('.', '!', '?', ';'
 * followed by a space): not after "e.g", "i.e", "etc", "vs", "approx" or an
 * initial. */
int lint_detect_sentence_end(const char *d, size_t ls, size_t i) {
    char c = d[i];
    if (c == '|') return i > ls && (d[i - 1] == ' ' || d[i - 1] == '\t'); /* a table cell */
    if (c != '.' && c != '!' && c != '?' && c != ';') return 0;
    if (c == '.') {
        size_t w = i;
        while (w > ls && isalpha((unsigned char)d[w - 1])) w--;
        size_t wl = i - w;
        if (wl == 1 && isupper((unsigned char)d[w]) && (w == ls || d[w - 1] == ' '))
            return 0; /* an initial: "J. Smith" */
        int abbrev = wl == 1 && w >= ls + 2 && d[w - 1] == '.' && isalpha((unsigned char)d[w - 2]) &&
                     (w == ls + 2 || !isalpha((unsigned char)d[w - 3])); /* "e.g." "i.e." */
        if (abbrev || (wl == 3 && !strncasecmp(d + w, "etc", 3)) ||
            (wl == 2 && (!strncasecmp(d + w, "vs", 2) || !strncasecmp(d + w, "ie", 2) ||
                         !strncasecmp(d + w, "eg", 2))) ||
            (wl == 6 && !strncasecmp(d + w, "approx", 6)))
            return 0;
    }
    return 1;
}

/* --- a commit cited as history ----------------------------------------------- */

/* The words of d[a, b) one by one (ASCII letters and apostrophes): *w, *n;
 * 0 when none is left. */
static int next_word(const char *d, size_t *a, size_t b, const char **w, size_t *n) {
    while (*a < b && !isalpha((unsigned char)d[*a])) ++*a;
    if (*a >= b) return 0;
    size_t k = *a;
    while (k < b && (isalpha((unsigned char)d[k]) || d[k] == '\'')) k++;
    *w = d + *a, *n = k - *a, *a = k;
    return 1;
}

/* Whether w[0, n) is a verb in the past tense ("restored", "added", "was",
 * "broke"): what a note on the history of a repository says about a commit.
 * Not "based" (based on the commit under review) nor "checked" (out). */
static int past_word(const char *w, size_t n) {
    static const char *const k_past[] = {"was",     "were",       "had",      "did",     "broke",
                                         "made",    "took",       "ago",      "since",   "until",
                                         "till",    "went",       "came",     "brought", "previously",
                                         "earlier", "originally", "formerly", "history", NULL};
    static const char *const k_not[] = {"based", "checked", "need", "feed", "seed", "speed", "indeed", NULL};
    if (lint_detect_word_in_ci(w, n, k_past)) return 1;
    return n >= 5 && tolower((unsigned char)w[n - 2]) == 'e' && tolower((unsigned char)w[n - 1]) == 'd' &&
           !lint_detect_word_in_ci(w, n, k_not);
}

/* Whether w[0, n) says the commit is the one at hand now: the current,
 * latest or checked-out state, HEAD, a base to work from, or the reader's
 * own ("you are on commit", "your commit"). */
static int now_word(const char *w, size_t n) {
    static const char *const k_now[] = {"current", "currently", "now",      "head",     "checked", "checkout",
                                        "latest",  "base",      "working",  "detached", "you",     "your",
                                        "you're",  "today",     "deployed", "running",  NULL};
    return lint_detect_word_in_ci(w, n, k_now);
}

/* Whether the hash at [s, e), named by a commit word right before it in
 * running text ("commit 85d8e06", "commit `85d8e06`"; not a caption such as
 * "Commit: x", "HEAD is x", "at commit x"), is cited as history: its clause
 * (to the line's end or a sentence's, lint_detect_sentence_end, 200 bytes
 * at most each way) has a verb in the past tense ("restored in commit x",
 * "commit x added ...", "(commit x) was overwritten") or cites it as a
 * reference ("matches commit x", "see commit x", "reverts commit x"), and
 * no word that makes it the current state (current, HEAD, checked out,
 * latest, base, you ...). A note about a repository's past is the same on
 * every request; a checked-out or current commit is not. */
int lint_detect_history_commit(const lint_text *t, size_t s, size_t e) {
    const char *d = t->data;
    size_t k = s;
    if (k > 0 && (d[k - 1] == '`' || d[k - 1] == '\'' || d[k - 1] == '"')) k--;
    size_t sp = k;
    while (k > 0 && (d[k - 1] == ' ' || d[k - 1] == '\t')) k--;
    if (k == sp || k == 0 || !isalpha((unsigned char)d[k - 1])) return 0;
    size_t kw = k;
    while (kw > 0 && (isalnum((unsigned char)d[kw - 1]) || d[kw - 1] == '-')) kw--;
    static const char *const k_commit[] = {"commit", "commits",  "sha", "sha1",
                                           "sha-1",  "revision", "rev", NULL};
    if (!lint_detect_word_in_ci(d + kw, k - kw, k_commit)) return 0;
    /* the clause around it */
    size_t ls = t->line_start[lint_text_line_of(t, kw)];
    size_t a = kw, lim = kw - ls > 200 ? kw - 200 : ls;
    while (a > lim && !(a < kw && (d[a] == ' ' || d[a] == '\t') && lint_detect_sentence_end(d, ls, a - 1)))
        a--;
    size_t b = e, blim = t->len - e > 200 ? e + 200 : t->len;
    while (b < blim && d[b] != '\n' &&
           !((b + 1 >= t->len || isspace((unsigned char)d[b + 1])) && lint_detect_sentence_end(d, ls, b)))
        b++;
    static const char *const k_cite[] = {"matches", "match",  "matching",  "see",      "cf",   "per",
                                         "reverts", "revert", "reverting", "restores", "like", NULL};
    static const char *const k_pointer[] = {"at", "on", "is", NULL};
    static const char *const k_article[] = {"the", "a", "an", "git", NULL};
    int history = 0;
    const char *w, *last = NULL;
    size_t n, ln = 0, i = a;
    while (next_word(d, &i, kw, &w, &n)) {
        if (now_word(w, n)) return 0;
        history |= past_word(w, n) || lint_detect_word_in_ci(w, n, k_cite);
        if (!lint_detect_word_in_ci(w, n, k_article)) last = w, ln = n;
    }
    if (last && lint_detect_word_in_ci(last, ln, k_pointer)) return 0; /* "HEAD is at commit x" */
    for (i = e; next_word(d, &i, b, &w, &n);) {
        if (now_word(w, n)) return 0;
        history |= past_word(w, n);
    }
    return history;
}

/* A dotted number that is a section or a range of them ("Sections 2.1.1.1-2.1.1.5",
 * "§ 1.2.3.4"), not an address. */
int lint_detect_section_number(const lint_text *t, size_t s, size_t e) {
    const char *d = t->data;
    size_t ls = t->line_start[lint_text_line_of(t, s)];
    size_t a = s - ls > 12 ? s - 12 : ls;
    for (size_t i = a; i + 7 <= s; i++)
        if (strncasecmp(d + i, "section", 7) == 0) return 1;
    if (s >= ls + 2 && (unsigned char)d[s - 2] == 0xC2 && (unsigned char)d[s - 1] == 0xA7) return 1;
    /* the end of a range: "2.1.1.1-2.1.1.5" */
    if (s >= ls + 2 && d[s - 1] == '-' && isdigit((unsigned char)d[s - 2])) return 1;
    if (s >= ls + 4 && (unsigned char)d[s - 3] == 0xE2 && (unsigned char)d[s - 2] == 0x80 &&
        ((unsigned char)d[s - 1] == 0x93 || (unsigned char)d[s - 1] == 0x94) &&
        isdigit((unsigned char)d[s - 4]))
        return 1;
    size_t k = e;
    if (k < t->len && d[k] == '-')
        k++;
    else if (k + 3 <= t->len && (unsigned char)d[k] == 0xE2 && (unsigned char)d[k + 1] == 0x80 &&
             ((unsigned char)d[k + 2] == 0x93 || (unsigned char)d[k + 2] == 0x94))
        k += 3;
    else
        return 0;
    return k < t->len && isdigit((unsigned char)d[k]);
}

/* Kind and change class of a labelled value from its text. */
void lint_detect_classify_value(const char *s, size_t n, lint_span *sp) {
    int digits = 1, colon_time = 0, ampm = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) digits = 0;
        if (s[i] == ':' && i > 0 && i + 1 < n && isdigit((unsigned char)s[i - 1]) &&
            isdigit((unsigned char)s[i + 1]))
            colon_time = 1;
        if ((s[i] == 'a' || s[i] == 'p' || s[i] == 'A' || s[i] == 'P') && i + 1 < n &&
            (s[i + 1] == 'm' || s[i + 1] == 'M' || s[i + 1] == '.') && i > 0 &&
            (isdigit((unsigned char)s[i - 1]) || s[i - 1] == ' '))
            ampm = 1;
    }
    if (digits) {
        sp->kind = LINT_K_TIMESTAMP, sp->vclass = LINT_VC_CALL, sp->subday = 1;
        return;
    }
    int has_date = 0, alpha = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (isalpha((unsigned char)s[i])) alpha = 1;
        if (isdigit((unsigned char)s[i]) && (s[i + 1] == '-' || s[i + 1] == '/')) has_date = 1;
    }
    if (colon_time || ampm) {
        int datey = has_date || (alpha && lint_detect_has_digit(s, n) && n > 12);
        sp->kind = datey ? LINT_K_DATETIME : LINT_K_TIME;
        sp->vclass = LINT_VC_CALL;
        sp->subday = 1;
        return;
    }
    sp->kind = lint_detect_has_digit(s, n) ? LINT_K_DATE : LINT_K_WEEKDAY;
    sp->vclass = LINT_VC_DAY;
    sp->subday = 0;
}

/* Values written to look like a value: 0x12345678, abc123, xxxx-xxxx. */
int lint_detect_placeholder_value(const char *v, size_t n) {
    static const char *const k[] = {"1234", "abcd", "xxxx", "XXXX", "0000", "9999", NULL};
    for (const char *const *p = k; *p; p++)
        for (size_t i = 0; i + 4 <= n; i++)
            if (!strncasecmp(v + i, *p, 4)) return 1;
    return 0;
}

/* Whether [s, e) sits in a URL (a token holding "://") or is quoted on both
 * sides like a literal in code ('2024-01-15 10:00:00', "C03E...-AA"). */
int lint_detect_in_url_or_quoted(const lint_text *t, size_t s, size_t e) {
    size_t ls = t->line_start[lint_text_line_of(t, s)];
    size_t a = s;
    while (a > ls && s - a < 300 && !isspace((unsigned char)t->data[a - 1]) && t->data[a - 1] != '(' &&
           t->data[a - 1] != '<' && t->data[a - 1] != '"')
        a--;
    for (size_t k = a; k + 3 <= s; k++)
        if (t->data[k] == ':' && t->data[k + 1] == '/' && t->data[k + 2] == '/') return 1;
    if (s > ls && e < t->len) {
        char q = t->data[s - 1];
        if ((q == '\'' || q == '"' || q == '`') && t->data[e] == q) return 1;
    }
    return 0;
}

/* Whether off lies inside a '...' or "..." string that opened earlier on its
 * line after code punctuation ("console.log('Hello, Bolt!')", "= \"Hi Ann\""):
 * a string in code, not words to the model. */
int lint_detect_in_string_literal(const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    size_t a = off - ls > 200 ? off - 200 : ls;
    char open = 0;
    size_t at = 0;
    for (size_t i = a; i < off; i++) {
        char c = t->data[i];
        if (open) {
            if (c == open) open = 0;
        } else if ((c == '\'' || c == '"') && i > ls &&
                   (t->data[i - 1] == '(' || t->data[i - 1] == '=' || t->data[i - 1] == ',' ||
                    t->data[i - 1] == '[')) {
            open = c;
            at = i;
        }
    }
    return open && at >= ls;
}

/* Whether v[0, n) is a capitalised word that is not a person's name
 * (k_not_names). */
int lint_detect_not_name(const char *v, size_t n) { return lint_detect_word_in(v, n, k_not_names); }
