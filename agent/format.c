/* agent/format.c: the chat-template families' table (see format.h). */
#include "format.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const agent_format k_formats[] = {
    {ENG_CHAT_CHATML, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool", 0},
    /* Gemma's template has user and model turns only after the first message */
    {ENG_CHAT_GEMMA, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
    /* Llama 3.x: a tool role (3.1's template calls it ipython) and later system turns */
    {ENG_CHAT_LLAMA3, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool", 0},
    {ENG_CHAT_LLAMA31, "tool-use-chatml.md", AGENT_TIER2_SYSTEM, "tool", 0},
    /* Mistral: user/assistant alternate after one system message; Phi-3 drops
     * the roles it does not know; DeepSeek R1 prints only the last system
     * message: results as user turns, tier 2 in the first user turn. Mistral
     * v0 has no system role and v3/tekken print it in the last user turn;
     * Phi-3 mini/medium drop it (their real templates): there the system
     * prompt opens the first user turn (system_in_user) */
    {ENG_CHAT_MISTRAL_V0, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 1},
    {ENG_CHAT_MISTRAL_V1, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
    {ENG_CHAT_MISTRAL_V3, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 1},
    {ENG_CHAT_MISTRAL_TEKKEN, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 1},
    {ENG_CHAT_PHI3, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
    {ENG_CHAT_PHI3_MINI, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 1},
    {ENG_CHAT_PHI3_SMALL, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
    {ENG_CHAT_PHI3_VISION, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
    {ENG_CHAT_DEEPSEEK_R1, "tool-use-gemma.md", AGENT_TIER2_USER, "user", 0},
};

const agent_format *agent_format_of(eng_chat_format f) {
    for (size_t i = 0; i < sizeof k_formats / sizeof k_formats[0]; i++)
        if (k_formats[i].chat == f) return &k_formats[i];
    return &k_formats[0];
}

int agent_format_kept_messages(const agent_format *f) { return f->tier2 == AGENT_TIER2_SYSTEM ? 2 : 1; }

int agent_format_render(const agent_format *f, const eng_chat *c, const eng_chat_msg *msgs, size_t n,
                        util_buf *out, eng_tok_span **plain, size_t *nplain, util_err *err) {
    size_t u = 1;
    while (u < n && strcmp(msgs[u].role, "user") != 0) u++;
    if (!f->system_in_user || n == 0 || strcmp(msgs[0].role, "system") != 0 || u == n)
        return eng_chat_render_spans(c, msgs, n, 1, out, plain, nplain, err);
    eng_chat_msg *m = malloc(n * sizeof *m);
    util_buf first;
    util_buf_init(&first);
    if (!m || util_buf_printf(&first, "%s\n\n%s", msgs[0].content, msgs[u].content)) {
        free(m);
        util_buf_release(&first);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    memcpy(m, msgs + 1, (n - 1) * sizeof *m);
    m[u - 1].content = first.data;
    int rc = eng_chat_render_spans(c, m, n - 1, 1, out, plain, nplain, err);
    free(m);
    util_buf_release(&first);
    return rc;
}
