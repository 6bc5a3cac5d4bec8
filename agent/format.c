/* agent/format.c: the chat-template families' table (see format.h). */
#include "format.h"

#include <stddef.h>

static const agent_format k_formats[] = {
    {ENG_CHAT_CHATML, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool"},
    /* Gemma's template has user and model turns only after the first message */
    {ENG_CHAT_GEMMA, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
};

const agent_format *agent_format_of(eng_chat_format f) {
    for (size_t i = 0; i < sizeof k_formats / sizeof k_formats[0]; i++)
        if (k_formats[i].chat == f) return &k_formats[i];
    return &k_formats[0];
}

int agent_format_kept_messages(const agent_format *f) { return f->tier2 == AGENT_TIER2_SYSTEM ? 2 : 1; }
