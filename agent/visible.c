/* agent/visible.c: tool-call blocks withheld from a streamed reply (see
 * visible.h). A small scanner over the held text; no allocation beyond the
 * held buffer, which is at most a tag's length outside a call. */
#include "visible.h"

#include <string.h>

#define OPEN_TAG  "<tool_call>"
#define CLOSE_TAG "</tool_call>"

void agent_visible_init(agent_visible *v, agent_visible_sink sink, void *user) {
    memset(v, 0, sizeof *v);
    util_buf_init(&v->held);
    v->sink = sink;
    v->user = user;
}

void agent_visible_release(agent_visible *v) { util_buf_release(&v->held); }

static void emit(agent_visible *v, const char *s, size_t n) {
    if (!n) return;
    v->shown += n;
    if (v->sink && !v->stop && v->sink(v->user, s, n)) v->stop = 1;
}

/* Length of the longest suffix of s[0..n) that is a proper prefix of tag. */
static size_t partial_tag(const char *s, size_t n, const char *tag) {
    size_t t = strlen(tag);
    for (size_t k = t - 1 < n ? t - 1 : n; k > 0; k--)
        if (memcmp(s + n - k, tag, k) == 0) return k;
    return 0;
}

static void drop_front(util_buf *b, size_t k) {
    memmove(b->data, b->data + k, b->len - k);
    b->len -= k;
}

int agent_visible_feed(agent_visible *v, const char *text, size_t len) {
    if (len && util_buf_append(&v->held, text, len)) return v->stop;
    for (;;) {
        util_buf *h = &v->held;
        if (!h->len) break;
        const char *tag = v->in_call ? CLOSE_TAG : OPEN_TAG;
        char *hit = memmem(h->data, h->len, tag, strlen(tag));
        if (hit) {
            size_t at = (size_t)(hit - h->data);
            if (!v->in_call) emit(v, h->data, at);
            drop_front(h, at + strlen(tag));
            v->in_call = !v->in_call;
            continue;
        }
        size_t keep = partial_tag(h->data, h->len, tag);
        if (!v->in_call) emit(v, h->data, h->len - keep);
        drop_front(h, h->len - keep);
        break;
    }
    return v->stop;
}

int agent_visible_flush(agent_visible *v) {
    if (!v->in_call) emit(v, v->held.data, v->held.len);
    v->held.len = 0;
    v->in_call = 0;
    return v->stop;
}
