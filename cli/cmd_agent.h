/* cli/cmd_agent.h: options shared by the agent's commands (cachet, -p,
 * --resume, prompt) and the interactive loop's entry point. */
#ifndef CLI_CMD_AGENT_H
#define CLI_CMD_AGENT_H

#include "../agent/loop.h"
#include "opts.h"

typedef struct cli_agent {
    agent_opts ao;
    cli_engine e;          /* the engine options; e.path is the model file */
    const char *print;     /* -p TASK */
    const char *data_dir_opt;
    int json;
    long long now;         /* --now EPOCH (0: the clock) for tiers 2-3 */
    char data[4096];
} cli_agent;

/* The interactive chat (repl.c): returns the exit status. */
int cli_repl(cli_agent *cli);

#endif
