/* agent/format.c: the chat-template families' table (see format.h). */
#include "format.h"

#include <stddef.h>

static const agent_format k_formats[] = {
    {ENG_CHAT_CHATML, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool"},
    /* Gemma's template has user and model turns only after the first message */
    {ENG_CHAT_GEMMA, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    /* Llama 3.x: a tool role (3.1's template calls it ipython) and later system turns */
    {ENG_CHAT_LLAMA3, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool"},
    {ENG_CHAT_LLAMA31, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool"},
    /* Mistral: user/assistant alternate after one system message; Phi-3 drops
     * the roles it does not know; DeepSeek R1 prints only the last system
     * message: results as user turns, tier 2 in the first user turn */
    {ENG_CHAT_MISTRAL_V0, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_MISTRAL_V1, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_MISTRAL_V3, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_MISTRAL_TEKKEN, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_PHI3, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_PHI3_MINI, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_PHI3_SMALL, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_PHI3_VISION, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
    {ENG_CHAT_DEEPSEEK_R1, "tool-use-gemma.md", AGENT_TIER2_USER, "user"},
};

const agent_format *agent_format_of(eng_chat_format f) {
    for (size_t i = 0; i < sizeof k_formats / sizeof k_formats[0]; i++)
        if (k_formats[i].chat == f) return &k_formats[i];
    return &k_formats[0];
}

int agent_format_kept_messages(const agent_format *f) { return f->tier2 == AGENT_TIER2_SYSTEM ? 2 : 1; }
