/* tests/fuzz/fuzz_config.c: libFuzzer target for `.cachet/config.json` (the
 * agent tools' allow list and secret_env, agent_tools_config_parse), then the
 * allow rules asked about a few tool calls. Seeds: tests/fuzz/corpus/config.
 * Build: make fuzz. Not part of the test runner. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../agent/tools_ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile int sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    agent_tools t;
    memset(&t, 0, sizeof t);
    t.rootfd = -1;
    if (agent_tools_config_parse(&t, (const char *)data, size, "fuzz.json", NULL) == 0) {
        sink += agent_tools_allowed(&t, "run_shell", "ls -la docs");
        sink += agent_tools_allowed(&t, "run_shell", "make test; rm -rf x");
        sink += agent_tools_allowed(&t, "write_file", "docs/a.md");
        sink += agent_tools_allowed(&t, "read_file", NULL);
    }
    agent_tools_release(&t);
    return 0;
}
