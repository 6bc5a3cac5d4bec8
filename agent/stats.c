/* agent/stats.c: what `cachet stats` and `cachet sessions` show, computed
 * from a session's events: token-weighted hit rates (overall and after turn
 * 1), per-turn sums, TTFT cold vs warm, and cost with and without caching
 * under a price table (defaults $2.50 / $0.25 per million, or
 * ~/.config/cachet/config.json "prices"). Reads only; prints nothing (the
 * command line's cli/cmd_stats.c does). */
#include "stats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/fs.h"

/* A number of an event, 0 when absent or absurd (agent_session_load skips
 * such lines; events from elsewhere get the same guard), so every
 * conversion below to long or int is defined. */
static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
    return isfinite(d) && fabs(d) <= 9007199254740992.0 ? d : 0;
}

static int turn_of(const cJSON *o) {
    double d = num(o, "turn");
    return d >= 0 && d <= INT_MAX ? (int)d : 0;
}

static const char *str(const cJSON *o, const char *k) {
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

void agent_stats_compute(const cJSON *events, agent_session_stats *s) {
    memset(s, 0, sizeof *s);
    const cJSON *e;
    double warm_sum = 0;
    int first_turn = -1;
    cJSON_ArrayForEach(e, events) {
        const char *t = str(e, "type");
        if (!t) continue;
        int turn = turn_of(e);
        if (strcmp(t, "session") == 0 && str(e, "id"))
            snprintf(s->id, sizeof s->id, "%s", str(e, "id"));
        else if (strcmp(t, "turn_end") == 0)
            s->turns++;
        else if (strcmp(t, "break") == 0)
            s->breaks++;
        else if (strcmp(t, "request") == 0) {
            long p = (long)num(e, "prompt_tokens"), c = (long)num(e, "cached_tokens");
            if (first_turn < 0) first_turn = turn;
            s->generated_tokens += (long)num(e, "generated_tokens");
            if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "spec_drafted"))) {
                s->spec_forwards += (long)num(e, "decode_forwards");
                s->spec_drafted += (long)num(e, "spec_drafted");
                s->spec_accepted += (long)num(e, "spec_accepted");
            }
            if (s->requests == 0)
                s->ttft_cold_ms = num(e, "ttft_ms");
            else {
                warm_sum += num(e, "ttft_ms");
                s->n_warm++;
            }
            s->requests++;
            if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "cached_tokens"))) {
                s->unreported++; /* not a miss: unknown, so outside the hit rate and the cost */
                s->unreported_prompt_tokens += p;
                continue;
            }
            s->prompt_tokens += p;
            s->cached_tokens += c;
            s->computed_tokens += (long)num(e, "computed_tokens");
            s->engine_queries += (long)num(e, "engine_queries");
            s->engine_hits += (long)num(e, "engine_hits");
            if (turn > first_turn) {
                s->prompt_after1 += p;
                s->cached_after1 += c;
            }
        }
    }
    s->ttft_warm_ms = s->n_warm ? warm_sum / s->n_warm : 0;
}

double agent_stats_rate(long cached, long prompt) { return prompt > 0 ? (double)cached / (double)prompt : 0; }

/* --- prices ---------------------------------------------------------------------- */

void agent_prices_load(agent_prices *pr) {
    pr->input = 2.50;
    pr->cached = 0.25;
    const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char p[4096];
    if (x && *x)
        snprintf(p, sizeof p, "%s/cachet/config.json", x);
    else if (home)
        snprintf(p, sizeof p, "%s/.config/cachet/config.json", home);
    else
        return;
    char *text = NULL;
    util_err e;
    if (util_read_file(&text, NULL, p, &e)) return;
    cJSON *c = cJSON_Parse(text);
    free(text);
    const cJSON *prices = cJSON_GetObjectItemCaseSensitive(c, "prices");
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(prices, "input");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(prices, "cached");
    if (cJSON_IsNumber(i)) pr->input = i->valuedouble;
    if (cJSON_IsNumber(k)) pr->cached = k->valuedouble;
    cJSON_Delete(c);
}

double agent_stats_cost(long prompt, long cached, const agent_prices *pr, int with_cache) {
    if (!with_cache) return (double)prompt * pr->input / 1e6;
    return ((double)(prompt - cached) * pr->input + (double)cached * pr->cached) / 1e6;
}

/* --- one session ------------------------------------------------------------------- */

size_t agent_stats_per_turn(const cJSON *events, agent_turn_row *rows, size_t cap) {
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const char *t = str(e, "type");
        if (!t || strcmp(t, "request") != 0 ||
            !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "cached_tokens")))
            continue;
        int turn = turn_of(e);
        if (n == 0 || rows[n - 1].turn != turn) {
            if (n == cap) break;
            rows[n++] = (agent_turn_row){turn, 0, 0};
        }
        rows[n - 1].prompt += (long)num(e, "prompt_tokens");
        rows[n - 1].cached += (long)num(e, "cached_tokens");
    }
    return n;
}
