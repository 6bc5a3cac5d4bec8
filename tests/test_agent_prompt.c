/* tests/test_agent_prompt.c: prompt assembly (agent/prompt.c, skills.c):
 * tier order, tools and skills sorted, invalid skills skipped with a warning
 * naming file and rule, head/tail truncation, invalid UTF-8 replaced, and
 * byte-identical tiers 0-1 from two processes with different clocks, time
 * zones, working directories and environments (cachet prompt --json). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agent/prompt.h"
#include "check.h"
#include "proc.h"

static void write_file(const char *dir, const char *name, const char *text) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        CHECK_MSG(0, "cannot write %s", p);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static void run_ok(const char *cmd) {
    proc_result r = proc_run(cmd);
    CHECK_MSG(r.status == 0, "'%s': %s", cmd, r.err);
    proc_result_free(&r);
}

static void test_units(void) {
    char *name, *desc;
    util_err err;
    const char *ok = "---\nname: my-skill\ndescription: Does things.\nmetadata:\n  a: b\n---\nbody\n";
    CHECK(agent_skill_parse(ok, strlen(ok), "my-skill", &name, &desc, &err) == 0);
    CHECK_EQ_STR(name, "my-skill");
    free(name);
    free(desc);
    static const char *const bad[][2] = {
        {"no frontmatter\n", "frontmatter"},
        {"---\nname: x\n", "not closed"},
        {"---\ndescription: d\n---\n", "lacks 'name'"},
        {"---\nname: my-skill\n---\n", "description"},
        {"---\nname: My_Skill\ndescription: d\n---\n", "lowercase"},
        {"---\nname: -bad\ndescription: d\n---\n", "hyphen"},
        {"---\nname: other\ndescription: d\n---\n", "differs from its folder"},
        {"---\nname: [a\n---\n", "YAML"},
        {"---\nname: my-skill\ndescription: d\nmetadata: 3\n---\n", "metadata"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = agent_skill_parse(bad[i][0], strlen(bad[i][0]), "my-skill", &name, &desc, &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, bad[i][1]), "bad skill %zu: rc %d '%s'", i, rc,
                  rc ? err.msg : "");
    }
}

static void test_assembly(const char *dir) {
    char cmd[8192], ws[4200], data[4200], user[4200];
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(user, sizeof user, "%s/userskills", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/ws/.cachet/skills/zeta %s/ws/.cachet/skills/alpha %s/ws/.cachet/skills/Bad_Name "
             "%s/data/skills/mid %s/userskills && cp %s/prompts/* %s/data/prompts/ 2>/dev/null || "
             "(mkdir -p %s/data/prompts && cp %s/prompts/* %s/data/prompts/)",
             dir, dir, dir, dir, dir, check_root(), dir, dir, check_root(), dir);
    run_ok(cmd);
    write_file(ws, "AGENTS.md", "AGENTS-TEXT\n");
    write_file(ws, "SOUL.md", "SOUL-TEXT\n");
    write_file(ws, "IDENTITY.md", "IDENTITY-TEXT \xff\n");
    write_file(ws, "USER.md", "USER-TEXT\n");
    write_file(ws, ".cachet/skills/zeta/SKILL.md", "---\nname: zeta\ndescription: Last one.\n---\n");
    write_file(ws, ".cachet/skills/alpha/SKILL.md", "---\nname: alpha\ndescription: First one.\n---\n");
    write_file(ws, ".cachet/skills/Bad_Name/SKILL.md", "---\nname: Bad_Name\ndescription: x\n---\n");
    write_file(data, "skills/mid/SKILL.md", "---\nname: mid\ndescription: Built in.\n---\n");
    char *big = malloc(AGENT_FILE_LIMIT * 2 + 16);
    memset(big, 'm', AGENT_FILE_LIMIT * 2);
    memcpy(big + AGENT_FILE_LIMIT * 2 - 6, "\nTAIL\n", 7);
    write_file(ws, "MEMORY.md", big);
    free(big);

    agent_prompt p;
    agent_prompt_opts o = {ws, data, agent_format_of(ENG_CHAT_CHATML), user};
    util_err err;
    CHECK(agent_prompt_build(&p, &o, &err) == 0);
    const char *s = p.system;
    const char *i_sys = strstr(s, "You are cachet"), *i_tools = strstr(s, "<tools>");
    const char *i_ag = strstr(s, "AGENTS-TEXT"), *i_soul = strstr(s, "SOUL-TEXT");
    const char *i_id = strstr(s, "IDENTITY-TEXT"), *i_sk = strstr(s, "- alpha: First one.");
    const char *i_mid = strstr(s, "- mid: Built in. (builtin:skills/mid/SKILL.md)"),
               *i_z = strstr(s, "- zeta:");
    const char *i_user = strstr(s, "USER-TEXT");
    CHECK(i_sys && i_tools && i_ag && i_soul && i_id && i_sk && i_mid && i_z && i_user);
    CHECK(i_sys < i_tools && i_tools < i_ag && i_ag < i_soul && i_soul < i_id && i_id < i_sk &&
          i_sk < i_mid && i_mid < i_z && i_z < i_user);
    CHECK(strstr(p.tier0, "USER-TEXT") == NULL && strstr(p.tier1, "USER-TEXT") != NULL);
    CHECK(strstr(s, "IDENTITY-TEXT \xEF\xBF\xBD") != NULL);
    CHECK(strstr(p.tier1, "bytes cut by cachet") && strstr(p.tier1, "TAIL"));
    CHECK(strstr(s, "Bad_Name") == NULL);
    int warned_bad = 0, warned_utf8 = 0, warned_cut = 0;
    for (size_t k = 0; k < p.warnings.n; k++) {
        warned_bad |= strstr(p.warnings.v[k], "Bad_Name/SKILL.md") && strstr(p.warnings.v[k], "lowercase");
        warned_utf8 |= strstr(p.warnings.v[k], "IDENTITY.md") && strstr(p.warnings.v[k], "UTF-8");
        warned_cut |= strstr(p.warnings.v[k], "MEMORY.md") && strstr(p.warnings.v[k], "truncated");
    }
    CHECK(warned_bad && warned_utf8 && warned_cut);
    /* tools sorted by name */
    const char *prev = "";
    int nt = 0;
    for (const char *t = strstr(s, "{\"name\":\""); t && t < strstr(s, "</tools>");
         t = strstr(t + 1, "{\"name\":\"")) {
        char name[64];
        sscanf(t + 9, "%63[^\"]", name);
        CHECK_MSG(strcmp(prev, name) < 0, "tools not sorted: '%s' after '%s'", name, prev);
        prev = t + 9;
        nt++;
        (void)prev;
    }
    CHECK_EQ_INT(nt, 10);
    CHECK(strstr(s, "\"name\":\"edit_file\"") < strstr(s, "\"name\":\"write_file\""));
    agent_prompt_release(&p);

    /* tier 2 and 3 come from the templates, with no {{ left */
    util_buf b;
    util_buf_init(&b);
    CHECK(agent_tier2(&b, data, ws, "m", 86400LL * 365, &err) == 0);
    CHECK(b.data && strstr(b.data, "date: 1971-01-01") && !strstr(b.data, "{{"));
    util_buf_release(&b);
    util_buf_init(&b);
    CHECK(agent_tier3(&b, data, ws, 0, &err) == 0);
    CHECK(b.data && strstr(b.data, "<turn-context>") && strstr(b.data, "git: not a repository") &&
          !strstr(b.data, "{{"));
    util_buf_release(&b);
}

/* Two processes, different clock, time zone, cwd and environment. */
static void test_two_processes(const char *dir) {
    if (!check_model_path()) {
        CHECK_MSG(0, "model missing");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd / && env -i PATH=/usr/bin:/bin HOME=%s TZ=UTC %s/cachet prompt --json --workspace %s/ws "
             "--data-dir %s/data --model %s --now 100000",
             dir, proc_bin_dir(), dir, dir, check_model_path());
    proc_result a = proc_run(cmd);
    snprintf(
        cmd, sizeof cmd,
        "cd %s && HOME=/nonexistent TZ=Asia/Tokyo LANG=C.UTF-8 CACHET_DATA=%s/data FOO=bar %s/cachet prompt "
        "--json --workspace ws --model %s --now 1900000000",
        dir, dir, proc_bin_dir(), check_model_path());
    proc_result b = proc_run(cmd);
    CHECK_MSG(a.status == 0 && b.status == 0, "cachet prompt: %s %s", a.err, b.err);
    cJSON *ja = cJSON_Parse(a.out), *jb = cJSON_Parse(b.out);
    CHECK(ja && jb);
    cJSON *ta = cJSON_GetObjectItem(ja, "tiers"), *tb = cJSON_GetObjectItem(jb, "tiers");
    for (int i = 0; i < 4 && ta && tb; i++) {
        const char *x = cJSON_GetObjectItem(cJSON_GetArrayItem(ta, i), "text")->valuestring;
        const char *y = cJSON_GetObjectItem(cJSON_GetArrayItem(tb, i), "text")->valuestring;
        if (i < 2)
            CHECK_MSG(strcmp(x, y) == 0, "tier %d differs between processes", i);
        else
            CHECK_MSG(strcmp(x, y) != 0, "tier %d should show the clock", i);
        CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(ta, i), "tokens")->valueint > 0);
    }
    CHECK_EQ_STR(cJSON_GetObjectItem(ja, "system")->valuestring,
                 cJSON_GetObjectItem(jb, "system")->valuestring);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    proc_result_free(&a);
    proc_result_free(&b);
    /* the text form marks the tiers */
    snprintf(cmd, sizeof cmd, "%s/cachet prompt --workspace %s/ws --data-dir %s/data --model %s",
             proc_bin_dir(), dir, dir, check_model_path());
    a = proc_run(cmd);
    CHECK(a.status == 0 && strstr(a.out, "===== tier 0:") && strstr(a.out, "===== tier 3:"));
    CHECK(strstr(a.err, "Bad_Name") != NULL);
    proc_result_free(&a);
}

/* The chat families' table (agent/format.h): ChatML keeps tier 2 and tool
 * results in their own roles, Gemma (no system or tool role after the first
 * message) puts both in user turns; each names a tool-use prompt that exists. */
static void test_formats(void) {
    const agent_format *c = agent_format_of(ENG_CHAT_CHATML), *g = agent_format_of(ENG_CHAT_GEMMA);
    CHECK(c->chat == ENG_CHAT_CHATML && c->tier2 == AGENT_TIER2_SYSTEM &&
          strcmp(c->tool_result_role, "tool") == 0);
    CHECK(g->chat == ENG_CHAT_GEMMA && g->tier2 == AGENT_TIER2_USER &&
          strcmp(g->tool_result_role, "user") == 0);
    CHECK_EQ_INT(agent_format_kept_messages(c), 2);
    CHECK_EQ_INT(agent_format_kept_messages(g), 1);
    CHECK(agent_format_of((eng_chat_format)99) == c);
    const agent_format *all[] = {c, g};
    for (int i = 0; i < 2; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/prompts/%s", check_root(), all[i]->tool_use_prompt);
        CHECK_MSG(access(p, R_OK) == 0, "missing %s", p);
    }
}

/* `cachet prompt` under every template family: where the family has no
 * system turn (Mistral v0 refuses one, Phi-3 mini drops it, Mistral v3 moves it
 * to the last user turn) the system prompt is counted as the agent sends it,
 * opening the first user turn, so it is never refused nor counted as 0. */
static void test_families(void) {
    static const char *const fams[] = {"chatml",     "gemma",      "llama3", "llama3.1",  "mistral-v0",
                                       "mistral-v1", "mistral-v3", "phi3",   "phi3-mini", "deepseek-r1"};
    if (!check_model_path()) {
        CHECK_MSG(0, "model missing");
        return;
    }
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        proc_result r = proc_runf(
            "%s/cachet prompt --json --chat-template %s --workspace %s/examples/workspace "
            "--model %s --now 100000",
            proc_bin_dir(), fams[i], check_root(), check_model_path());
        cJSON *o = r.status == 0 ? cJSON_Parse(r.out) : NULL;
        CHECK_MSG(o != NULL, "cachet prompt --chat-template %s: %d %s", fams[i], r.status, r.err);
        if (o) {
            cJSON *t = cJSON_GetObjectItem(o, "tiers");
            double t01 = cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "tokens")->valuedouble +
                         cJSON_GetObjectItem(cJSON_GetArrayItem(t, 1), "tokens")->valuedouble;
            double sys = cJSON_GetObjectItem(o, "system_message_tokens")->valuedouble;
            CHECK_EQ_STR(cJSON_GetObjectItem(o, "chat_format")->valuestring, fams[i]);
            CHECK_MSG(sys >= t01 && sys < t01 + 160, "%s: system message %.0f tokens, tiers 0-1 %.0f",
                      fams[i], sys, t01);
        }
        cJSON_Delete(o);
        proc_result_free(&r);
    }
}

void test_agent_prompt(void) {
    CHECK_CASE(units) test_units();
    CHECK_CASE(formats) test_formats();
    CHECK_CASE(families) test_families();
    char dir[] = "/tmp/cachet-prompt-XXXXXX";
    if (!mkdtemp(dir)) return;
    CHECK_CASE(assembly) { /* the second process reads the tree the assembly writes */
        test_assembly(dir);
        test_two_processes(dir);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_ok(cmd);
}
