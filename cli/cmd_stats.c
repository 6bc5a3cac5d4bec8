/* cli/cmd_stats.c: `cachet stats [ID | --all] [--json]` and `cachet
 * sessions`: options, the table and the bars, the JSON. The figures come
 * from agent/stats.h (computed from session files), the sessions from
 * agent/session.h. Only reads session files. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/session.h"
#include "../agent/stats.h"
#include "../util/text.h"
#include "cli.h"

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *k) {
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* --- one session ------------------------------------------------------------------- */

static void bar(char *out, size_t cap, double r, int width) {
    size_t o = 0;
    int full = (int)(r * width + 0.5);
    for (int i = 0; i < width && o + 4 < cap; i++) {
        const char *b = i < full ? "\xe2\x96\x88" : "\xe2\x96\x91"; /* █ ░ */
        memcpy(out + o, b, 3);
        o += 3;
    }
    out[o] = '\0';
}

static cJSON *session_json(const cJSON *events, const agent_session_stats *s, const agent_prices *pr) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    const cJSON *first = cJSON_GetArrayItem(events, 0);
    if (str(first, "workspace")) cJSON_AddStringToObject(o, "workspace", str(first, "workspace"));
    if (str(first, "model")) cJSON_AddStringToObject(o, "model", str(first, "model"));
    cJSON_AddNumberToObject(o, "turns", s->turns);
    cJSON_AddNumberToObject(o, "requests", s->requests);
    cJSON_AddNumberToObject(o, "prompt_tokens", (double)s->prompt_tokens);
    cJSON_AddNumberToObject(o, "cached_tokens", (double)s->cached_tokens);
    cJSON_AddNumberToObject(o, "computed_tokens", (double)s->computed_tokens);
    cJSON_AddNumberToObject(o, "generated_tokens", (double)s->generated_tokens);
    cJSON_AddNumberToObject(o, "hit_rate", agent_stats_rate(s->cached_tokens, s->prompt_tokens));
    cJSON_AddNumberToObject(o, "hit_rate_after_turn1", agent_stats_rate(s->cached_after1, s->prompt_after1));
    cJSON_AddNumberToObject(o, "ttft_cold_ms", s->ttft_cold_ms);
    cJSON_AddNumberToObject(o, "ttft_warm_ms", s->ttft_warm_ms);
    cJSON_AddNumberToObject(o, "engine_queries", (double)s->engine_queries);
    cJSON_AddNumberToObject(o, "engine_hits", (double)s->engine_hits);
    cJSON_AddNumberToObject(o, "requests_cached_unreported", s->unreported);
    cJSON_AddNumberToObject(o, "spec_drafted", (double)s->spec_drafted);
    cJSON_AddNumberToObject(o, "spec_accepted", (double)s->spec_accepted);
    cJSON_AddNumberToObject(o, "spec_accept_rate", agent_stats_rate(s->spec_accepted, s->spec_drafted));
    cJSON_AddNumberToObject(
        o, "tokens_per_forward",
        s->spec_forwards > 0 ? (double)(s->spec_forwards + s->spec_accepted) / (double)s->spec_forwards : 0);
    cJSON_AddNumberToObject(o, "prompt_tokens_cached_unreported", (double)s->unreported_prompt_tokens);
    cJSON_AddNumberToObject(o, "cost_without_cache",
                            agent_stats_cost(s->prompt_tokens, s->cached_tokens, pr, 0));
    cJSON_AddNumberToObject(o, "cost_with_cache",
                            agent_stats_cost(s->prompt_tokens, s->cached_tokens, pr, 1));
    agent_turn_row rows[1024];
    size_t n = agent_stats_per_turn(events, rows, 1024);
    cJSON *arr = cJSON_AddArrayToObject(o, "per_turn");
    for (size_t i = 0; i < n; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "turn", rows[i].turn);
        cJSON_AddNumberToObject(t, "prompt_tokens", (double)rows[i].prompt);
        cJSON_AddNumberToObject(t, "cached_tokens", (double)rows[i].cached);
        cJSON_AddNumberToObject(t, "hit_rate", agent_stats_rate(rows[i].cached, rows[i].prompt));
        cJSON_AddItemToArray(arr, t);
    }
    cJSON *br = cJSON_AddArrayToObject(o, "breaks");
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const char *t = str(e, "type");
        if (!t || strcmp(t, "break") != 0) continue;
        cJSON *b = cJSON_CreateObject();
        cJSON_AddNumberToObject(b, "turn", num(e, "turn"));
        cJSON_AddStringToObject(b, "cause", str(e, "cause") ? str(e, "cause") : "");
        if (cJSON_GetObjectItemCaseSensitive(e, "at_token")) {
            cJSON_AddNumberToObject(b, "at_token", num(e, "at_token"));
            cJSON_AddNumberToObject(b, "lost_tokens", num(e, "lost_tokens"));
        }
        cJSON_AddItemToArray(br, b);
    }
    return o;
}

static void print_session(const cJSON *events, const agent_session_stats *s, const agent_prices *pr) {
    const cJSON *first = cJSON_GetArrayItem(events, 0);
    printf("session %s", s->id);
    if (str(first, "workspace")) printf("  workspace %s", str(first, "workspace"));
    if (str(first, "model")) printf("  model %s", str(first, "model"));
    printf(
        "\n  turns %d, requests %d, prompt tokens %ld, cached %ld: hit rate %.1f%% (after turn 1: %.1f%%)\n",
        s->turns, s->requests, s->prompt_tokens, s->cached_tokens,
        100 * agent_stats_rate(s->cached_tokens, s->prompt_tokens),
        100 * agent_stats_rate(s->cached_after1, s->prompt_after1));
    if (s->requests)
        printf("  TTFT cold %.0f ms (first request), warm %.0f ms (mean of %d)\n", s->ttft_cold_ms,
               s->ttft_warm_ms, s->n_warm);
    if (s->spec_drafted)
        printf(
            "  speculative decoding: %ld of %ld drafted tokens accepted (%.0f%%), %.2f tokens per forward\n",
            s->spec_accepted, s->spec_drafted, 100 * agent_stats_rate(s->spec_accepted, s->spec_drafted),
            s->spec_forwards > 0 ? (double)(s->spec_forwards + s->spec_accepted) / (double)s->spec_forwards
                                 : 0.0);
    if (s->unreported)
        printf("  %d requests (%ld prompt tokens) whose server did not report cached tokens are left out\n",
               s->unreported, s->unreported_prompt_tokens);
    double c0 = agent_stats_cost(s->prompt_tokens, s->cached_tokens, pr, 0),
           c1 = agent_stats_cost(s->prompt_tokens, s->cached_tokens, pr, 1);
    printf("  cost $%.4f without cache, $%.4f with cache (%.0f%% saved) at $%.2f/M input, $%.2f/M cached\n",
           c0, c1, c0 > 0 ? 100 * (c0 - c1) / c0 : 0.0, pr->input, pr->cached);
    agent_turn_row rows[1024];
    size_t n = agent_stats_per_turn(events, rows, 1024);
    for (size_t i = 0; i < n; i++) {
        char b[128];
        double r = agent_stats_rate(rows[i].cached, rows[i].prompt);
        bar(b, sizeof b, r, 30);
        printf("  turn %3d %s %5.1f%%  %ld/%ld tokens\n", rows[i].turn, b, 100 * r, rows[i].cached,
               rows[i].prompt);
    }
    const cJSON *e;
    int nb = 0;
    cJSON_ArrayForEach(e, events) {
        const char *t = str(e, "type");
        if (!t || strcmp(t, "break") != 0) continue;
        if (cJSON_GetObjectItemCaseSensitive(e, "at_byte")) /* a remote session: checked on message text */
            printf("  break in turn %d at byte %.0f of the messages: %s\n", (int)num(e, "turn"),
                   num(e, "at_byte"), str(e, "cause") ? str(e, "cause") : "?");
        else if (cJSON_GetObjectItemCaseSensitive(e, "at_token"))
            printf("  break in turn %d at token %.0f: %s (%.0f cached tokens lost)\n", (int)num(e, "turn"),
                   num(e, "at_token"), str(e, "cause") ? str(e, "cause") : "?", num(e, "lost_tokens"));
        else
            printf("  break in turn %d: %s\n", (int)num(e, "turn"), str(e, "cause") ? str(e, "cause") : "?");
        nb++;
    }
    if (!nb) printf("  cache breaks: none\n");
}

/* --- commands ----------------------------------------------------------------------- */

static const char stats_usage[] =
    "usage: cachet stats [ID | --all] [--json] [--price-input USD] [--price-cached USD]\n"
    "\n"
    "Cache hit rate (token-weighted), per-turn bars, TTFT cold vs warm, cost with and without\n"
    "caching and cache breaks of a session (default: the latest) or of all sessions.\n"
    "Prices are dollars per million input tokens (default 2.50 and 0.25; also\n"
    "\"prices\": {\"input\": X, \"cached\": Y} in ~/.config/cachet/config.json).\n";

int cli_cmd_stats(int argc, char **argv) {
    static const struct option opts[] = {{"all", no_argument, 0, 'a'},
                                         {"json", no_argument, 0, 'j'},
                                         {"price-input", required_argument, 0, 'i'},
                                         {"price-cached", required_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int all = 0, json = 0, o;
    agent_prices pr;
    agent_prices_load(&pr);
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) { /* options may follow the id */
        switch (o) {
        case 'a': all = 1; break;
        case 'j': json = 1; break;
        case 'i':
            if (cli_parse_float("--price-input", optarg, 0, 1e6, &pr.input)) return CLI_EXIT_USAGE;
            break;
        case 'c':
            if (cli_parse_float("--price-cached", optarg, 0, 1e6, &pr.cached)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(stats_usage, stdout); return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet stats: unknown option '%s'\n%s", argv[optind - 1], stats_usage);
            return CLI_EXIT_USAGE;
        }
    }
    const char *id = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc || (id && all)) {
        fprintf(stderr, "cachet stats: give one session ID or --all\n");
        return CLI_EXIT_USAGE;
    }
    util_err err;
    char **ids = NULL;
    size_t n = 0;
    int rc = 0;
    if (all) {
        if (agent_sessions_list(&ids, &n, &err)) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            return CLI_EXIT_FAIL;
        }
    } else {
        char path[4096], sid[64];
        if (agent_session_find(id, path, sizeof path, sid, sizeof sid, &err)) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            return CLI_EXIT_FAIL;
        }
        ids = malloc(sizeof *ids);
        if (!ids || !(ids[0] = strdup(sid))) return CLI_EXIT_FAIL;
        n = 1;
    }
    cJSON *out = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(out, "sessions");
    agent_session_stats tot = {.id = "all"};
    for (size_t i = 0; i < n; i++) {
        char path[4096], sid[64];
        cJSON *evs = NULL;
        agent_session_info info;
        if (agent_session_find(ids[i], path, sizeof path, sid, sizeof sid, &err) ||
            agent_session_load(path, &evs, &info, &err)) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        if (info.warning[0]) fprintf(stderr, "cachet: warning: %s\n", info.warning);
        agent_session_stats s;
        agent_stats_compute(evs, &s);
        if (!s.id[0]) snprintf(s.id, sizeof s.id, "%s", sid);
        if (json)
            cJSON_AddItemToArray(arr, session_json(evs, &s, &pr));
        else if (!all)
            print_session(evs, &s, &pr);
        tot.turns += s.turns;
        tot.requests += s.requests;
        tot.breaks += s.breaks;
        tot.prompt_tokens += s.prompt_tokens;
        tot.cached_tokens += s.cached_tokens;
        tot.prompt_after1 += s.prompt_after1;
        tot.cached_after1 += s.cached_after1;
        if (all && !json)
            printf("%-22s %4d turns %9ld prompt tokens  hit rate %5.1f%%  after turn 1 %5.1f%%  %d breaks\n",
                   s.id, s.turns, s.prompt_tokens, 100 * agent_stats_rate(s.cached_tokens, s.prompt_tokens),
                   100 * agent_stats_rate(s.cached_after1, s.prompt_after1), s.breaks);
        cJSON_Delete(evs);
    }
    double c0 = agent_stats_cost(tot.prompt_tokens, tot.cached_tokens, &pr, 0),
           c1 = agent_stats_cost(tot.prompt_tokens, tot.cached_tokens, &pr, 1);
    if (json) {
        cJSON *t = cJSON_AddObjectToObject(out, "total");
        cJSON_AddNumberToObject(t, "sessions", (double)n);
        cJSON_AddNumberToObject(t, "turns", tot.turns);
        cJSON_AddNumberToObject(t, "requests", tot.requests);
        cJSON_AddNumberToObject(t, "prompt_tokens", (double)tot.prompt_tokens);
        cJSON_AddNumberToObject(t, "cached_tokens", (double)tot.cached_tokens);
        cJSON_AddNumberToObject(t, "hit_rate", agent_stats_rate(tot.cached_tokens, tot.prompt_tokens));
        cJSON_AddNumberToObject(t, "hit_rate_after_turn1",
                                agent_stats_rate(tot.cached_after1, tot.prompt_after1));
        cJSON_AddNumberToObject(t, "breaks", tot.breaks);
        cJSON_AddNumberToObject(t, "cost_without_cache", c0);
        cJSON_AddNumberToObject(t, "cost_with_cache", c1);
        cJSON *p = cJSON_AddObjectToObject(out, "prices");
        cJSON_AddNumberToObject(p, "input", pr.input);
        cJSON_AddNumberToObject(p, "cached", pr.cached);
        cli_json_puts(out);
    } else if (all) {
        printf(
            "all: %zu sessions, %d turns, %ld prompt tokens, hit rate %.1f%%; cost $%.4f without cache, $%.4f with\n",
            n, tot.turns, tot.prompt_tokens, 100 * agent_stats_rate(tot.cached_tokens, tot.prompt_tokens), c0,
            c1);
    }
    cJSON_Delete(out);
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    return rc;
}

int cli_cmd_sessions(int argc, char **argv) {
    int json = argc > 1 && strcmp(argv[1], "--json") == 0;
    if (argc > 1 && !json) {
        fputs(strcmp(argv[1], "--help") == 0 ? "usage: cachet sessions [--json]\n" : "", stdout);
        if (strcmp(argv[1], "--help") == 0) return CLI_EXIT_OK;
        fprintf(stderr, "usage: cachet sessions [--json]\n");
        return CLI_EXIT_USAGE;
    }
    util_err err;
    char **ids;
    size_t n;
    if (agent_sessions_list(&ids, &n, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        char path[4096], sid[64];
        cJSON *evs = NULL;
        if (agent_session_find(ids[i], path, sizeof path, sid, sizeof sid, &err) ||
            agent_session_load(path, &evs, NULL, &err))
            continue;
        agent_session_stats s;
        agent_stats_compute(evs, &s);
        const char *ws = str(cJSON_GetArrayItem(evs, 0), "workspace");
        const char *first_user = NULL;
        const cJSON *e;
        cJSON_ArrayForEach(e, evs) {
            const char *t = str(e, "type"), *role = str(e, "role");
            if (t && role && strcmp(t, "message") == 0 && strcmp(role, "user") == 0) {
                first_user = str(e, "content");
                break;
            }
        }
        char title[61] = "";
        if (first_user) {
            size_t line = strcspn(first_user, "\n");
            size_t k = util_utf8_floor(first_user, line, 60); /* whole characters */
            memcpy(title, first_user, k);
            title[k] = '\0';
        }
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", ids[i]);
            cJSON_AddStringToObject(o, "workspace", ws ? ws : "");
            cJSON_AddNumberToObject(o, "turns", s.turns);
            cJSON_AddNumberToObject(o, "hit_rate", agent_stats_rate(s.cached_tokens, s.prompt_tokens));
            cJSON_AddStringToObject(o, "title", title);
            cJSON_AddItemToArray(arr, o);
        } else {
            printf("%-22s %3d turns  hit %5.1f%%  %-30s %s\n", ids[i], s.turns,
                   100 * agent_stats_rate(s.cached_tokens, s.prompt_tokens), ws ? ws : "", title);
        }
        cJSON_Delete(evs);
    }
    if (json) {
        cli_json_puts(arr);
    } else if (n == 0) {
        printf("no sessions yet\n");
    }
    cJSON_Delete(arr);
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    return CLI_EXIT_OK;
}
