/* agent/main.c: the cachet command line: dispatches subcommands. The agent
 * itself (interactive chat, -p) lands with the agent issue; today cachet runs
 * the embedded engine directly (generate, tokenize, kv, bench cache). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
    fputs("usage: cachet <command> [options]\n"
          "\n"
          "commands:\n"
          "  generate   generate text with the embedded engine (see cachet generate --help)\n"
          "  tokenize   print the token ids of a text\n"
          "  kv         KV-cache bytes per token and tokens that fit in a memory size\n"
          "  serve      OpenAI-compatible HTTP server on 127.0.0.1 (see cachet serve --help)\n"
          "  bench      benchmarks: 'cachet bench cache' (prefix cache TTFT cold/warm)\n"
          "\n"
          "cachet <command> --help shows the options of a command.\n",
          f);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "generate") == 0) return agent_cmd_generate(argc - 1, argv + 1);
    if (strcmp(cmd, "tokenize") == 0) return agent_cmd_tokenize(argc - 1, argv + 1);
    if (strcmp(cmd, "kv") == 0) return agent_cmd_kv(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0) return agent_cmd_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0 && argc > 2 && strcmp(argv[2], "cache") == 0)
        return agent_bench_cache(argc - 2, argv + 2);
    fprintf(stderr, "cachet: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
