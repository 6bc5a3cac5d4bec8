/* agent/stats.h: `cachet stats` and `cachet sessions`: read session JSONL
 * files and report cache hit rates (token-weighted), per-turn bars, TTFT cold
 * vs warm, cost with and without caching, and cache breaks. Reads only. */
#ifndef AGENT_STATS_H
#define AGENT_STATS_H

#include <cjson/cJSON.h>

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
} agent_session_stats;

/* Summarizes a session's events (an array as agent_session_load gives). */
void agent_stats_compute(const cJSON *events, agent_session_stats *out);


#endif
