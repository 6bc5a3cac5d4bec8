/* linter/lint_detect_values.c: the filters lint_detect.c applies to a
 * literal its patterns found, each on the text alone: whether it has a digit
 * or a hex letter, is a fixed IP, follows a version word, is a section
 * number, is a placeholder word, stands in a URL, quotes or a string
 * literal, is a word that is not a name; and how a date-like value is
 * classed. Runs no pattern and calls nothing back in lint_detect.c. */
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
