/* cli/status.h: what the command line tells the user on stderr while and
 * after the engine works: the prefill progress line (a terminal only: it is
 * redrawn with \r and cleared with ESC[K, so it is never written anywhere
 * else) and the one-line summary of an agent turn. Does not print replies. */
#ifndef CLI_STATUS_H
#define CLI_STATUS_H

#include <stdio.h>

#include "../agent/loop.h"

/* A prefill shorter than this shows no progress line. */
#define CLI_PROGRESS_AFTER_MS 1000.0

typedef struct cli_progress {
    int tty;   /* stderr is a terminal and progress is wanted */
    int shown; /* a line is on the screen now */
} cli_progress;

/* enabled = 0 (--quiet) or stderr not a terminal: nothing is ever printed. */
void cli_progress_init(cli_progress *p, int enabled);
/* "[prefill] 1,024/2,000 tokens, 180 tok/s" once the prefill has run for
 * CLI_PROGRESS_AFTER_MS; cleared when done reaches total. */
void cli_progress_update(cli_progress *p, int done, int total, double elapsed_ms);
/* Removes the line if one is shown (before other output). */
void cli_progress_clear(cli_progress *p);

/* "[cache] 790 of 812 prompt tokens cached (97.3%), TTFT 120 ms, 45 tokens
 * generated, no tool called" (the turn's totals over its requests; TTFT of
 * its first request), without a newline, into out (cap bytes). */
void cli_turn_summary(char *out, size_t cap, const agent_turn_result *r);

#endif
