/* cli/status.c: the prefill progress line and the turn summary (see
 * status.h). Escape codes only on a terminal; never prints a reply. */
#include "status.h"

#include <unistd.h>

void cli_progress_init(cli_progress *p, int enabled) {
    p->tty = enabled && isatty(STDERR_FILENO);
    p->shown = 0;
}

/* n with thousands separators ("12,345"), into out. */
static const char *grouped(char *out, size_t cap, long n) {
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%ld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < cap) out[o++] = '-';
    for (int i = 0; i < len && o + 1 < cap; i++) {
        if (i && (len - i) % 3 == 0 && o + 1 < cap) out[o++] = ',';
        if (o + 1 < cap) out[o++] = raw[i];
    }
    out[o] = '\0';
    return out;
}

void cli_progress_update(cli_progress *p, int done, int total, double elapsed_ms) {
    if (!p->tty || (!p->shown && elapsed_ms < CLI_PROGRESS_AFTER_MS)) return;
    if (done >= total) {
        cli_progress_clear(p);
        return;
    }
    char a[32], b[32];
    double tps = elapsed_ms > 0 ? done / (elapsed_ms / 1e3) : 0;
    fprintf(stderr, "\r[prefill] %s/%s tokens, %.0f tok/s\033[K", grouped(a, sizeof a, done),
            grouped(b, sizeof b, total), tps);
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_clear(cli_progress *p) {
    if (!p->shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = 0;
}

void cli_turn_summary(char *out, size_t cap, const agent_turn_result *r) {
    char a[32], b[32], tools[48];
    if (r->tool_calls == 0)
        snprintf(tools, sizeof tools, "no tool called");
    else
        snprintf(tools, sizeof tools, "%d tool call%s", r->tool_calls, r->tool_calls == 1 ? "" : "s");
    const char *end = r->canceled                               ? ", reply stopped"
                      : r->stop_reason == ENG_STOP_MAX_TOKENS   ? ", reply cut at the token limit"
                      : r->stop_reason == ENG_STOP_CONTEXT_FULL ? ", reply cut: the context is full"
                                                                : "";
    if (r->cached_reported)
        snprintf(out, cap,
                 "[cache] %s of %s prompt tokens cached (%.1f%%), TTFT %.0f ms, %ld tokens generated, %s%s",
                 grouped(a, sizeof a, r->cached_tokens), grouped(b, sizeof b, r->prompt_tokens),
                 r->prompt_tokens ? 100.0 * (double)r->cached_tokens / (double)r->prompt_tokens : 0.0,
                 r->ttft_ms, r->generated_tokens, tools, end);
    else
        snprintf(out, cap,
                 "[cache] %s prompt tokens (cached tokens not reported by the server), TTFT %.0f ms, "
                 "%ld tokens generated, %s%s",
                 grouped(b, sizeof b, r->prompt_tokens), r->ttft_ms, r->generated_tokens, tools, end);
}
