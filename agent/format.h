/* agent/format.h: how each chat-template family takes the agent's
 * conversation: where tier 2 (the session context) goes, which role tool
 * results are sent as, and which prompts/ file holds its tool-use
 * instructions. One table entry per family (format.c): the loop and the
 * prompt read the entry and never test for a family by name, so adding a
 * family is one entry (and its prompts/tool-use-*.md). Does not render
 * templates (engine/chat.c). */
#ifndef AGENT_FORMAT_H
#define AGENT_FORMAT_H

#include "../engine/chat.h"

/* Where tier 2 goes. */
typedef enum agent_tier2_place {
    AGENT_TIER2_SYSTEM = 0, /* its own system message, right after the system prompt */
    AGENT_TIER2_USER = 1,   /* no system role after the first message: it opens the first user
                             * message of the conversation (again after a reset) */
} agent_tier2_place;

typedef struct agent_format {
    eng_chat_format chat;        /* the engine's template family */
    const char *tool_use_prompt; /* prompts/ file with the tool-use instructions */
    agent_tier2_place tier2;
    const char *tool_result_role; /* "tool", or "user" where the template has no tool role */
    int system_in_user;           /* 1: the template drops the system message (Phi-3 mini/medium),
                                   * rejects it (Mistral v0) or moves it to the last user turn
                                   * (Mistral v3/tekken: tiers 0-1 would move every turn), so
                                   * agent_format_render opens the first user turn with it */
} agent_format;

/* The entry of family f; ChatML's for a family without one. Never NULL. */
const agent_format *agent_format_of(eng_chat_format f);

/* Messages the conversation keeps across a reset: the system prompt, and
 * tier 2's message when it has one. */
int agent_format_kept_messages(const agent_format *f);

/* The agent's conversation (msgs[0] its system prompt) through the chat
 * template with the generation prompt, as eng_chat_render_spans; with
 * system_in_user the system prompt and a blank line open the first user
 * message instead (a plain span like the rest of it), so tiers 0-1 stay
 * the same bytes at the same place on every turn. */
int agent_format_render(const agent_format *f, const eng_chat *c, const eng_chat_msg *msgs, size_t n,
                        util_buf *out, eng_tok_span **plain, size_t *nplain, util_err *err);

#endif
