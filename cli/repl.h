/* cli/repl.h: the interactive chat (repl.c) and the agent command's state it
 * runs on: the options shared by the agent's commands (cachet, -p, --resume,
 * prompt; parsed in cmd_agent.c). */
#ifndef CLI_REPL_H
#define CLI_REPL_H

#include "../agent/loop.h"
#include "opts.h"

typedef struct cli_agent {
    agent_opts ao;
    cli_engine e;      /* the engine options; e.path is the model file */
    const char *print; /* -p TASK */
    const char *data_dir_opt;
    int json;
    int quiet;     /* --quiet: no progress line, [tool] lines or turn summary */
    long long now; /* --now EPOCH (0: the clock) for tiers 2-3 */
    char data[4096];
} cli_agent;

/* The interactive chat (repl.c): returns the exit status. */
int cli_repl(cli_agent *cli);

#endif
