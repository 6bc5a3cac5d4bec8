/* tests/lint_expect.h: the severity of one fixture annotation token, shared by
 * the two suites that read "expect: CODE" (test_lint.c matches findings,
 * test_lint_real.c scores files). Header-only, test-only. */
#ifndef LINT_EXPECT_H
#define LINT_EXPECT_H

#include <string.h>

#include "../linter/lint.h"

/* The severity the token [tok, tok + n) of rule expects: "CODE/warning" (or
 * /info, /error) names one, a bare "CODE" the rule's own; -1 for an unknown
 * suffix. A Claude Code skill's PL005 problem that only the Agent Skills
 * specification forbids is a warning, for one. */
static inline int lint_expect_severity(int rule, const char *tok, size_t n) {
    const char *sl = memchr(tok, '/', n);
    if (!sl) return (int)lint_rule_get(rule)->severity;
    size_t m = n - (size_t)(sl + 1 - tok);
    static const char *const k[] = {"info", "warning", "error"};
    for (int i = 0; i < 3; i++)
        if (m == strlen(k[i]) && !strncmp(sl + 1, k[i], m)) return i;
    return -1;
}

/* The length of the rule code in the token: up to its '/', if any. */
static inline size_t lint_expect_code_len(const char *tok, size_t n) {
    const char *sl = memchr(tok, '/', n);
    return sl ? (size_t)(sl - tok) : n;
}

#endif
