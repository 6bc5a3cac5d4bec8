/* tests/fuzz/fuzz_toolcall.c: libFuzzer target for tool-call parsing
 * (agent/toolcall.c): a model reply with <tool_call> blocks, then the result
 * text fed back for each parsed call. Seeds: tests/fuzz/corpus/toolcall.
 * Build: make fuzz. Not part of the test runner. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/toolcall.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    agent_toolcalls c;
    memset(&c, 0, sizeof c);
    if (agent_toolcalls_parse(&c, text, NULL) == 0) {
        util_buf out;
        util_buf_init(&out);
        for (size_t i = 0; i < c.n; i++)
            agent_toolresult_format(&out, c.v[i].name ? c.v[i].name : "?", !c.v[i].error,
                                    c.v[i].error ? c.v[i].error : text);
        util_buf_release(&out);
    }
    agent_toolcalls_release(&c);
    free(text);
    return 0;
}
