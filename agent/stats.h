/* agent/stats.h: the figures `cachet stats` and `cachet sessions` show,
 * computed from a session's events (agent_session_load): cache hit rates
 * (token-weighted), per-turn sums, TTFT cold vs warm, cost with and without
 * caching. Reads only; prints nothing (cli/cmd_stats.c does). */
#ifndef AGENT_STATS_H
#define AGENT_STATS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/err.h"

/* Prices in dollars per million input tokens. */
typedef struct agent_prices {
    double input, cached;
} agent_prices;

typedef struct agent_session_stats {
    char id[64];
    int turns, requests, breaks;
    long prompt_tokens, cached_tokens, computed_tokens, generated_tokens;
    long prompt_after1, cached_after1; /* requests after the first turn */
    double ttft_cold_ms, ttft_warm_ms; /* first request; mean of the others */
    int n_warm;
    long engine_queries, engine_hits;
    /* requests whose endpoint did not report cached tokens (a remote server
     * that leaves the field out): left out of the token sums above */
    int unreported;
    long unreported_prompt_tokens;
    /* speculative decoding (--spec), over the requests that used it */
    long spec_forwards, spec_drafted, spec_accepted;
} agent_session_stats;

/* Summarizes a session's events (an array as agent_session_load gives). */
void agent_stats_compute(const cJSON *events, agent_session_stats *out);

/* cached / prompt, or 0 when prompt is 0. */
double agent_stats_rate(long cached, long prompt);

/* The price table: $2.50 input and $0.25 cached per million tokens, unless
 * $XDG_CONFIG_HOME/cachet/config.json (else ~/.config/...) has
 * "prices": {"input": X, "cached": Y}. */
void agent_prices_load(agent_prices *pr);
/* Dollars for prompt tokens of which cached were reused: all at the input
 * price without the cache (with_cache 0), the cached ones at theirs with it. */
double agent_stats_cost(long prompt, long cached, const agent_prices *pr, int with_cache);

/* One turn's sums over its requests that reported cached tokens. */
typedef struct agent_turn_row {
    int turn;
    long prompt, cached;
} agent_turn_row;

/* Fills rows (at most cap, in event order) and returns how many. */
size_t agent_stats_per_turn(const cJSON *events, agent_turn_row *rows, size_t cap);

#endif
