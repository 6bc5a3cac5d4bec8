/* tests/fuzz/fuzz_session.c: libFuzzer target for session files: the lines
 * read into events (agent_session_parse: NUL bytes, garbage, numbers out of
 * range), then the statistics `cachet stats` computes from them.
 * Seeds: tests/fuzz/corpus/session. Build: make fuzz. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "../../agent/session.h"
#include "../../agent/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cJSON *evs = NULL;
    agent_session_info info;
    if (agent_session_parse((const char *)data, size, "fuzz.jsonl", &evs, &info, NULL) != 0) return 0;
    agent_session_stats st;
    agent_stats_compute(evs, &st);
    agent_turn_row rows[32];
    (void)agent_stats_per_turn(evs, rows, 32);
    cJSON_Delete(evs);
    return 0;
}
