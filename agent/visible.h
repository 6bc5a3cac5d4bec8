/* agent/visible.h: the part of a reply the user reads while it streams: the
 * text with every <tool_call>...</tool_call> block left out (the calls are
 * shown as [tool] notes once they ran). Fed in pieces of any size; a piece
 * that may be the start of a tag is held until the next one says. Does not
 * parse calls (toolcall.h) or print. */
#ifndef AGENT_VISIBLE_H
#define AGENT_VISIBLE_H

#include <stddef.h>

#include "../util/buf.h"

typedef int (*agent_visible_sink)(void *user, const char *text, size_t len); /* nonzero: stop */

typedef struct agent_visible {
    util_buf held; /* text that may be a tag's beginning, or is inside a call */
    int in_call;   /* between <tool_call> and </tool_call> */
    agent_visible_sink sink;
    void *user;
    int stop;     /* the sink asked to stop (kept: later pieces return it too) */
    size_t shown; /* bytes passed to the sink */
} agent_visible;

void agent_visible_init(agent_visible *v, agent_visible_sink sink, void *user);
/* Passes what of text[0..len) is outside tool calls to the sink. Returns
 * nonzero once the sink asked to stop. */
int agent_visible_feed(agent_visible *v, const char *text, size_t len);
/* The reply ended: held text that did not become a tag goes to the sink; an
 * unterminated call is dropped. Returns as agent_visible_feed. */
int agent_visible_flush(agent_visible *v);
void agent_visible_release(agent_visible *v);

#endif
