/* tests/test_skillmd.c: the shared SKILL.md validator (util/skillmd.c): each
 * rule of the Agent Skills frontmatter on its own (code and line), valid
 * files with every optional field, several problems in one file, and the
 * agent and the linter agreeing with it. More of each side in
 * test_agent_prompt.c (skipped skills) and test_lint.c (PL005). */
#include <stdlib.h>
#include <string.h>

#include "../agent/skills.h"
#include "../linter/lint.h"
#include "../util/skillmd.h"
#include "check.h"

/* Checks text (folder "demo") and returns the result; the caller releases it. */
static util_skillmd check_text(const char *text, const char *folder) {
    util_skillmd s;
    util_err err = {0};
    int rc = util_skillmd_check(&s, text, strlen(text), folder, &err);
    CHECK_MSG(rc == UTIL_OK, "util_skillmd_check: %d %s", rc, err.msg);
    return s;
}

static void test_valid(void) {
    static const char *const ok[] = {
        "---\nname: demo\ndescription: Does things.\n---\nBody.\n",
        /* every optional field, and a key the spec does not name */
        "---\nname: demo\ndescription: Extract text from PDF files.\nlicense: Apache-2.0\n"
        "compatibility: Needs poppler-utils.\nmetadata:\n  author: acme\n  version: 1.0\n"
        "allowed-tools: Bash(git:*) Read\nuser-invocable: true\n---\n",
        /* CRLF lines, blanks after the markers, '...' closing */
        "---  \r\nname: demo\r\ndescription: d\r\n... \r\nBody\r\n",
        /* the closing line is the last line, without a newline */
        "---\nname: demo\ndescription: d\n---",
        /* quoted and folded values */
        "---\nname: \"demo\"\ndescription: >\n  Two\n  lines.\n---\n",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        util_skillmd s = check_text(ok[i], "demo");
        CHECK_MSG(s.n_problems == 0, "valid %zu: %zu problems, first '%s'", i, s.n_problems,
                  s.n_problems ? s.problems[0].msg : "");
        CHECK_EQ_STR(s.name, "demo");
        CHECK(s.description && s.description[0]);
        util_skillmd_release(&s);
    }
    util_skillmd s = check_text(ok[4], "demo");
    CHECK_EQ_STR(s.description, "Two lines.\n");
    util_skillmd_release(&s);
    /* no folder to compare with */
    s = check_text("---\nname: any-name\ndescription: d\n---\n", NULL);
    CHECK_EQ_INT(s.n_problems, 0);
    util_skillmd_release(&s);
    s = check_text("---\nname: any-name\ndescription: d\n---\n", "");
    CHECK_EQ_INT(s.n_problems, 0);
    util_skillmd_release(&s);
    /* the limits themselves are allowed: 64-character name, 1024 and 500 code points */
    char buf[8192];
    char name[65];
    memset(name, 'a', 64);
    name[64] = '\0';
    snprintf(buf, sizeof buf, "---\nname: %s\ndescription: d\ncompatibility: ", name);
    size_t l = strlen(buf);
    memset(buf + l, 'c', 500);
    l += 500;
    memcpy(buf + l, "\n---\n", 6);
    s = check_text(buf, name);
    CHECK_MSG(s.n_problems == 0, "limits: %s", s.n_problems ? s.problems[0].msg : "");
    util_skillmd_release(&s);
    snprintf(buf, sizeof buf, "---\nname: demo\ndescription: ");
    l = strlen(buf);
    for (int i = 0; i < 1024; i++, l += 2) memcpy(buf + l, "\xc3\xa9", 2); /* é: 2 bytes */
    memcpy(buf + l, "\n---\n", 6);
    s = check_text(buf, "demo");
    CHECK_MSG(s.n_problems == 0, "1024 code points: %s", s.n_problems ? s.problems[0].msg : "");
    util_skillmd_release(&s);
}

/* Each rule alone: the text, the one problem expected and its line. */
static void test_rules(void) {
    char long_name[128], long_desc[1200], long_compat[600];
    snprintf(long_name, sizeof long_name, "---\nname: %065d\ndescription: d\n---\n", 0);
    snprintf(long_desc, sizeof long_desc, "---\nname: demo\ndescription: %01025d\n---\n", 0);
    snprintf(long_compat, sizeof long_compat, "---\nname: demo\ndescription: d\ncompatibility: %0501d\n---\n",
             0);
    const struct {
        const char *text;
        int code;
        size_t line;
        const char *words; /* in the message */
    } k[] = {
        {"# Demo\n\nNo frontmatter.\n", UTIL_SKILLMD_NO_FRONTMATTER, 1, "no YAML frontmatter"},
        {"", UTIL_SKILLMD_NO_FRONTMATTER, 1, "frontmatter"},
        {"---", UTIL_SKILLMD_NO_FRONTMATTER, 1, "frontmatter"},
        {"--- name: demo\n---\n", UTIL_SKILLMD_NO_FRONTMATTER, 1, "frontmatter"},
        {"---\nname: demo\ndescription: d\n", UTIL_SKILLMD_UNCLOSED, 1, "not closed"},
        {"---\nname: demo\ndescription: d\n----\n", UTIL_SKILLMD_UNCLOSED, 1, "not closed"},
        {"---\nname: demo\ndescription: [unclosed\n---\n", UTIL_SKILLMD_YAML, 3, "not valid YAML"},
        /* a tab continuing the plain scalar 'demo': the scalar's line */
        {"---\nname: demo\n\tdescription: d\n---\n", UTIL_SKILLMD_YAML, 2, "tab"},
        {"---\n---\n", UTIL_SKILLMD_NOT_MAPPING, 1, "empty"},
        {"---\n# only a comment\n---\n", UTIL_SKILLMD_NOT_MAPPING, 1, "empty"},
        {"---\n- name\n- description\n---\n", UTIL_SKILLMD_NOT_MAPPING, 2, "mapping"},
        {"---\njust text\n---\n", UTIL_SKILLMD_NOT_MAPPING, 2, "mapping"},
        {"---\nname: demo\ndescription: d\nname: demo\n---\n", UTIL_SKILLMD_DUPLICATE_KEY, 4,
         "'name' appears twice"},
        {"---\nname: [demo]\ndescription: d\n---\n", UTIL_SKILLMD_NOT_STRING, 2, "'name'"},
        {"---\nname: demo\ndescription:\n  a: b\n---\n", UTIL_SKILLMD_NOT_STRING, 3,
         "'description' must be a string"},
        {"---\nname: demo\ndescription: d\nlicense: [MIT]\n---\n", UTIL_SKILLMD_NOT_STRING, 4, "'license'"},
        {"---\nname: demo\ndescription: d\ncompatibility: [linux]\n---\n", UTIL_SKILLMD_NOT_STRING, 4,
         "'compatibility'"},
        {"---\nname: demo\ndescription: d\nallowed-tools:\n  - Read\n---\n", UTIL_SKILLMD_NOT_STRING, 4,
         "'allowed-tools'"},
        {"---\ndescription: d\n---\n", UTIL_SKILLMD_NO_NAME, 1, "lacks 'name'"},
        {"---\nname: \"\"\ndescription: d\n---\n", UTIL_SKILLMD_NAME_LENGTH, 2, "1-64"},
        {long_name, UTIL_SKILLMD_NAME_LENGTH, 2, "(it is 65)"},
        {"---\nname: Demo\ndescription: d\n---\n", UTIL_SKILLMD_NAME_CHARS, 2, "lowercase"},
        {"---\nname: de_mo\ndescription: d\n---\n", UTIL_SKILLMD_NAME_CHARS, 2, "lowercase"},
        {"---\nname: d\xc3\xa9mo\ndescription: d\n---\n", UTIL_SKILLMD_NAME_CHARS, 2, "digits"},
        {"---\nname: -demo\ndescription: d\n---\n", UTIL_SKILLMD_NAME_HYPHEN, 2, "hyphen"},
        {"---\nname: demo-\ndescription: d\n---\n", UTIL_SKILLMD_NAME_HYPHEN, 2, "hyphen"},
        {"---\nname: de--mo\ndescription: d\n---\n", UTIL_SKILLMD_NAME_HYPHEN, 2, "'--'"},
        {"---\nname: other\ndescription: d\n---\n", UTIL_SKILLMD_NAME_FOLDER, 2,
         "differs from its folder name 'demo'"},
        {"---\nname: demo\n---\n", UTIL_SKILLMD_NO_DESCRIPTION, 1, "lacks 'description'"},
        {"---\nname: demo\ndescription: \"\"\n---\n", UTIL_SKILLMD_DESCRIPTION_LENGTH, 3, "(it is 0)"},
        {"---\nname: demo\ndescription:\n---\n", UTIL_SKILLMD_DESCRIPTION_LENGTH, 3, "1-1024"},
        {long_desc, UTIL_SKILLMD_DESCRIPTION_LENGTH, 3, "(it is 1025)"},
        {long_compat, UTIL_SKILLMD_COMPATIBILITY_LENGTH, 4, "(it is 501)"},
        {"---\nname: demo\ndescription: d\ncompatibility: ''\n---\n", UTIL_SKILLMD_COMPATIBILITY_LENGTH, 4,
         "1-500"},
        {"---\nname: demo\ndescription: d\nmetadata: 3\n---\n", UTIL_SKILLMD_METADATA, 4,
         "mapping of strings to strings"},
        {"---\nname: demo\ndescription: d\nmetadata: [a, b]\n---\n", UTIL_SKILLMD_METADATA, 4, "metadata"},
        {"---\nname: demo\ndescription: d\nmetadata:\n  tags: [a, b]\n---\n", UTIL_SKILLMD_METADATA, 4,
         "metadata"},
        {"---\nname: demo\ndescription: d\nmetadata:\n  owner:\n    team: x\n---\n", UTIL_SKILLMD_METADATA, 4,
         "metadata"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        util_skillmd s = check_text(k[i].text, "demo");
        const util_skillmd_problem *p = s.n_problems ? &s.problems[0] : NULL;
        CHECK_MSG(s.n_problems == 1 && p->code == k[i].code && p->line == k[i].line &&
                      strstr(p->msg, k[i].words),
                  "rule case %zu: %zu problems, first code %d line %zu '%s'; want code %d "
                  "line %zu '%s'",
                  i, s.n_problems, p ? p->code : 0, p ? p->line : 0, p ? p->msg : "", k[i].code, k[i].line,
                  k[i].words);
        util_skillmd_release(&s);
    }
}

static void test_several(void) {
    /* every problem is reported, in the order of the text, missing fields last */
    util_skillmd s = check_text("---\nname: Bad_Name\nmetadata: x\ncompatibility: ''\n---\n", "bad-name");
    CHECK_EQ_INT(s.n_problems, 4);
    if (s.n_problems == 4) {
        CHECK(s.problems[0].code == UTIL_SKILLMD_NAME_CHARS && s.problems[0].line == 2);
        CHECK(s.problems[1].code == UTIL_SKILLMD_METADATA && s.problems[1].line == 3);
        CHECK(s.problems[2].code == UTIL_SKILLMD_COMPATIBILITY_LENGTH && s.problems[2].line == 4);
        CHECK(s.problems[3].code == UTIL_SKILLMD_NO_DESCRIPTION && s.problems[3].line == 1);
    }
    /* the values are kept even when they break a rule */
    CHECK_EQ_STR(s.name, "Bad_Name");
    CHECK(s.description == NULL);
    util_skillmd_release(&s);
    /* a YAML error ends the check: one problem, no values */
    s = check_text("---\nname: demo\ndescription: 'open\n---\n", "demo");
    CHECK(s.n_problems == 1 && s.problems[0].code == UTIL_SKILLMD_YAML && s.name == NULL);
    CHECK_MSG(s.n_problems == 1 && s.problems[0].line <= 4, "yaml error line %zu",
              s.n_problems ? s.problems[0].line : 0);
    util_skillmd_release(&s);
    /* release is idempotent and takes NULL */
    util_skillmd_release(&s);
    util_skillmd_release(NULL);
}

/* claude_ok marks what Claude Code's own rules accept (code.claude.com/docs/en/skills):
 * a missing name or description, a name that is not the folder's, an
 * allowed-tools list, and fields it does not read; not a name's characters. */
static void test_claude_ok(void) {
    util_skillmd s = check_text("---\nallowed-tools:\n  - Read\n  - Grep\ncompatibility:\n  cli: gh\n"
                                "metadata: [a]\nlicense: [MIT]\n---\n",
                                "demo");
    CHECK_EQ_INT(s.n_problems, 6);
    for (size_t i = 0; i < s.n_problems; i++)
        CHECK_MSG(s.problems[i].claude_ok, "problem %zu '%s' not claude_ok", i, s.problems[i].msg);
    util_skillmd_release(&s);
    s = check_text("---\nname: other\ndescription: d\n---\n", "demo");
    CHECK(s.n_problems == 1 && s.problems[0].code == UTIL_SKILLMD_NAME_FOLDER && s.problems[0].claude_ok);
    util_skillmd_release(&s);
    /* both require these */
    static const char *const both[] = {
        "---\nname: Demo Skill\ndescription: d\n---\n",
        "---\nname: demo\ndescription: [d]\n---\n",
        "---\nname: demo\ndescription: d\nallowed-tools:\n  a: b\n---\n",
        "---\nname: demo\ndescription: 'open\n---\n",
    };
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        s = check_text(both[i], "demo");
        CHECK_MSG(s.n_problems == 1 && !s.problems[0].claude_ok, "both %zu: %zu problems", i, s.n_problems);
        util_skillmd_release(&s);
    }
}

/* The agent skips exactly the skills the linter flags, quoting the first
 * problem and its line; the linter makes one PL005 finding per problem. */
static void test_agree(void) {
    char long_compat[600];
    snprintf(long_compat, sizeof long_compat, "---\nname: demo\ndescription: d\ncompatibility: %0501d\n---\n",
             0);
    const char *const texts[] = {
        "---\nname: demo\ndescription: Does things.\n---\n",
        "---\r\nname: demo\r\ndescription: d\r\n...\r\n",
        "---\nname: demo\ndescription: d\nmetadata:\n  version: 1.0\n---\n",
        "no frontmatter\n",
        "---\nname: demo\ndescription: d\n",
        "---\nname: demo\nname: demo\ndescription: d\n---\n",
        "---\nname: demo\ndescription: d\nallowed-tools: [Read, Write]\n---\n",
        "---\nname: demo\ndescription: d\nmetadata:\n  tags: [a]\n---\n",
        "---\nname: Demo\n---\n",
        long_compat,
    };
    lint_options o = {0};
    o.no_model = o.no_config = 1;
    lint_ctx *ctx = NULL;
    util_err err = {0};
    CHECK(lint_ctx_new(&ctx, &o, &err) == 0);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *t = texts[i];
        util_skillmd s = check_text(t, "demo");
        char *name = NULL, *desc = NULL;
        int rc = agent_skill_parse(t, strlen(t), "demo", &name, &desc, &err);
        if (s.n_problems == 0) {
            CHECK_MSG(rc == 0 && name && desc, "agent rejects valid case %zu: %s", i, err.msg);
        } else {
            char want[300];
            snprintf(want, sizeof want, "line %zu: %s", s.problems[0].line, s.problems[0].msg);
            CHECK_MSG(rc == UTIL_EFORMAT && strstr(err.msg, want) == err.msg,
                      "agent on case %zu: rc %d '%s', want '%s'", i, rc, rc ? err.msg : "", want);
        }
        free(name);
        free(desc);
        lint_report r;
        lint_report_init(&r);
        CHECK(lint_check_buffer(ctx, &r, "skills/demo/SKILL.md", "skills/demo/SKILL.md", t, strlen(t),
                                &err) == 0);
        size_t n = 0, same = 0;
        for (size_t k = 0; k < r.n; k++) {
            if (r.items[k].rule != LINT_R_SKILL_FRONTMATTER) continue;
            same += n < s.n_problems && (size_t)r.items[k].line == s.problems[n].line &&
                    strcmp(r.items[k].message, s.problems[n].msg) == 0;
            n++;
        }
        CHECK_MSG(n == s.n_problems && same == n,
                  "linter on case %zu: %zu PL005 (%zu same), "
                  "validator %zu problems",
                  i, n, same, s.n_problems);
        lint_report_release(&r);
        util_skillmd_release(&s);
    }
    lint_ctx_free(ctx);
}

void test_skillmd(void) {
    CHECK_CASE(valid) test_valid();
    CHECK_CASE(rules) test_rules();
    CHECK_CASE(several) test_several();
    CHECK_CASE(agree) test_agree();
    CHECK_CASE(claude_ok) test_claude_ok();
}
